//! Mapper 1: MMC1 on SxROM boards (nesdev "MMC1", "SxROM").
//!
//! Writes to $8000-$FFFF feed a 5-bit serial shift register, LSB first; the fifth write copies it to
//! the register chosen by address bits 13-14 (control, CHR bank 0, CHR bank 1, PRG bank). A write with
//! bit 7 set clears the shift register and sets PRG mode 3. The MMC1 ignores a write on the CPU cycle
//! right after another write (nesdev "MMC1", "Consecutive-cycle writes"): read-modify-write
//! instructions write twice on back-to-back cycles and only the first counts.
//!
//! Modelled as MMC1B: PRG bank bit 4 set disables PRG RAM. Large boards: with 512 KiB of PRG ROM
//! (SUROM, SXROM) CHR bank 0 bit 4 selects the 256 KiB half; with 16 KiB of PRG RAM (SOROM) CHR bank 0
//! bit 3, with 32 KiB (SXROM) bits 2-3 select the 8 KiB RAM bank. On hardware these CHR-register bits
//! follow whichever CHR register PPU A12 selects in 4 KiB mode; like other emulators this model always
//! uses CHR bank 0, which is what games write to both registers.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// MMC1 registers, shift register and write-timing memory.
    pub struct SxromState {
        /// Bits shifted in so far (LSB first).
        pub shift: u8,
        /// Number of bits in `shift` (0-4).
        pub shift_count: u8,
        /// Control: bits 0-1 mirroring, bits 2-3 PRG mode, bit 4 CHR mode.
        pub control: u8,
        /// CHR bank 0 (also PRG/RAM bank bits on large boards).
        pub chr_bank0: u8,
        /// CHR bank 1 (4 KiB mode only).
        pub chr_bank1: u8,
        /// PRG bank: bits 0-3 16 KiB bank, bit 4 PRG RAM disable.
        pub prg_bank: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
        /// CPU cycle of the last write to $8000-$FFFF (0: none yet; cycles are numbered from 1).
        pub last_write_cycle: u64,
    }
}

const _: () = assert!(core::mem::size_of::<SxromState>() == 16);

/// MMC1 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sxrom {
    pub(super) state: SxromState,
}

impl Sxrom {
    /// An MMC1 with registers `state` (a board keeping them inside its own state: NES-EVENT).
    pub(super) fn from_state(state: SxromState) -> Self {
        Sxrom { state }
    }

    /// The 16 KiB PRG banks at $8000 and $C000 the registers select.
    pub(super) fn prg_16k_banks(&self, map: &MemoryMap) -> (usize, usize) {
        let s = &self.state;
        // The 256 KiB outer bank applies to the fixed banks too.
        let outer = if map.prg_banks > 32 { usize::from(s.chr_bank0 & 0x10) } else { 0 };
        let bank = usize::from(s.prg_bank & 0x0F);
        let (low, high) = match (s.control >> 2) & 3 {
            0 | 1 => (bank & !1, bank | 1),
            2 => (0, bank),
            _ => (bank, 0x0F),
        };
        (outer | low, outer | high)
    }

    /// The 8 KiB PRG RAM bank at $6000 (SOROM, SXROM: from CHR bank 0).
    pub(super) fn prg_ram_bank(&self, map: &MemoryMap) -> usize {
        let chr_bank0 = self.state.chr_bank0;
        match map.prg_ram_len {
            0x8000 => usize::from((chr_bank0 >> 2) & 3),
            0x4000 => usize::from((chr_bank0 >> 3) & 1),
            _ => 0,
        }
    }

    /// The PRG bank register: bits 0-3 the 16 KiB bank, bit 4 PRG RAM disable (MMC1B).
    pub(super) fn prg_bank(&self) -> u8 {
        self.state.prg_bank
    }
}

impl Mapper for Sxrom {
    state_in!(state: SxromState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        // Power-on: PRG mode 3 (last bank fixed at $C000), so the reset vector is in the last bank.
        Sxrom { state: SxromState { control: 0x0C, ..SxromState::default() } }
    }

    /// A write to $8000-$FFFF on CPU cycle `cpu_cycle`.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        let back_to_back = s.last_write_cycle != 0 && cpu_cycle == s.last_write_cycle.wrapping_add(1);
        s.last_write_cycle = cpu_cycle;
        if back_to_back {
            return false;
        }
        if value & 0x80 != 0 {
            s.shift = 0;
            s.shift_count = 0;
            s.control |= 0x0C;
            return true;
        }
        s.shift |= (value & 1) << (s.shift_count & 7);
        s.shift_count = s.shift_count.wrapping_add(1);
        if s.shift_count < 5 {
            return false;
        }
        let data = s.shift & 0x1F;
        s.shift = 0;
        s.shift_count = 0;
        match (addr >> 13) & 3 {
            0 => s.control = data,
            1 => s.chr_bank0 = data,
            2 => s.chr_bank1 = data,
            _ => s.prg_bank = data,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_mirroring(match s.control & 3 {
            0 => Mirroring::SingleScreenA,
            1 => Mirroring::SingleScreenB,
            2 => Mirroring::Vertical,
            _ => Mirroring::Horizontal,
        });

        let (low, high) = self.prg_16k_banks(map);
        map.set_prg_16k(0, low);
        map.set_prg_16k(1, high);

        if s.control & 0x10 == 0 {
            let bank = usize::from(s.chr_bank0 & 0x1E);
            map.set_chr_4k(0, bank);
            map.set_chr_4k(1, bank | 1);
        } else {
            map.set_chr_4k(0, usize::from(s.chr_bank0 & 0x1F));
            map.set_chr_4k(1, usize::from(s.chr_bank1 & 0x1F));
        }

        let enabled = s.prg_bank & 0x10 == 0;
        map.set_prg_ram(self.prg_ram_bank(map), enabled, enabled);
    }
}
