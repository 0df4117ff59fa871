//! Mapper 9: MMC2 on PxROM boards (nesdev "MMC2"), and the CHR latch logic it shares with the MMC4.
//!
//! $A000 selects the 8 KiB PRG bank at $8000 (the last three 8 KiB banks are fixed). Each 4 KiB CHR
//! half has two bank registers ($B000/$C000 for $0000, $D000/$E000 for $1000) and a latch choosing
//! between them. The latch flips when the PPU reads the last row of tile $FD or $FE: $0FD8 / $0FE8
//! for the lower half ($0FD8-$0FDF / $0FE8-$0FEF on the MMC4), $1FD8-$1FDF / $1FE8-$1FEF for the upper
//! half. The read that triggers the latch still sees the old bank; the switch takes effect for the
//! next fetch. $F000 bit 0 selects mirroring (0 vertical, 1 horizontal).

use super::board::{BoardConfig, MemoryMap};
use super::header::Mirroring;

crate::state::state_struct! {
    /// MMC2/MMC4 registers and latches.
    pub struct LatchChrState {
        /// $A000: PRG bank (8 KiB on the MMC2, 16 KiB on the MMC4).
        pub prg_bank: u8,
        /// $B000: 4 KiB CHR bank at $0000 while latch 0 is $FD.
        pub chr_fd0: u8,
        /// $C000: 4 KiB CHR bank at $0000 while latch 0 is $FE.
        pub chr_fe0: u8,
        /// $D000: 4 KiB CHR bank at $1000 while latch 1 is $FD.
        pub chr_fd1: u8,
        /// $E000: 4 KiB CHR bank at $1000 while latch 1 is $FE.
        pub chr_fe1: u8,
        /// $F000 bit 0: 0 vertical, 1 horizontal.
        pub mirroring: u8,
        /// Latch 0: 0 = $FD, 1 = $FE.
        pub latch0: u8,
        /// Latch 1: 0 = $FD, 1 = $FE.
        pub latch1: u8,
    }
}

const _: () = assert!(core::mem::size_of::<LatchChrState>() == 8);

impl LatchChrState {
    /// A write to $A000-$FFFF; returns true when a register changed. `prg_mask` keeps the PRG bits the
    /// chip has.
    #[inline]
    pub(super) fn write_register(&mut self, addr: u16, value: u8, prg_mask: u8) -> bool {
        match addr & 0xF000 {
            0xA000 => self.prg_bank = value & prg_mask,
            0xB000 => self.chr_fd0 = value & 0x1F,
            0xC000 => self.chr_fe0 = value & 0x1F,
            0xD000 => self.chr_fd1 = value & 0x1F,
            0xE000 => self.chr_fe1 = value & 0x1F,
            0xF000 => self.mirroring = value & 1,
            _ => return false,
        }
        true
    }

    /// A PPU read of `addr`; `wide_low_latch` selects the MMC4's 8-byte trigger ranges for latch 0.
    /// Returns true when a latch changed.
    #[inline]
    pub(super) fn observe_ppu_read(&mut self, addr: u16, wide_low_latch: bool) -> bool {
        let addr = addr & 0x3FFF;
        // Cheap filter: only the rows of tiles $FD and $FE in either pattern table matter.
        if addr >= 0x2000 || !matches!(addr & 0x0FF0, 0x0FD0 | 0x0FE0) || addr & 0x0F < 8 {
            return false;
        }
        let value = u8::from(addr & 0x0FF0 == 0x0FE0);
        let latch = if addr & 0x1000 != 0 {
            &mut self.latch1
        } else if wide_low_latch || addr & 0x0F == 8 {
            &mut self.latch0
        } else {
            return false;
        };
        let changed = *latch != value;
        *latch = value;
        changed
    }

    /// Maps CHR and mirroring (PRG is board-specific).
    pub(super) fn update_chr_map(&self, map: &mut MemoryMap) {
        let low = if self.latch0 == 0 { self.chr_fd0 } else { self.chr_fe0 };
        let high = if self.latch1 == 0 { self.chr_fd1 } else { self.chr_fe1 };
        map.set_chr_4k(0, usize::from(low));
        map.set_chr_4k(1, usize::from(high));
        map.set_mirroring(if self.mirroring & 1 == 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        map.watches_ppu = true;
    }
}

/// MMC2 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pxrom {
    state: LatchChrState,
}

impl Pxrom {
    /// The board in its power-on state.
    pub fn new(_config: BoardConfig) -> Self {
        Pxrom { state: LatchChrState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8) -> bool {
        self.state.write_register(addr, value, 0x0F)
    }

    /// A PPU read of `addr`; returns true when a latch flipped.
    #[inline]
    pub fn observe_ppu_read(&mut self, addr: u16) -> bool {
        self.state.observe_ppu_read(addr, false)
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_8k(0, usize::from(self.state.prg_bank));
        map.set_prg_8k(1, map.prg_bank_from_end(3));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        self.state.update_chr_map(map);
    }

    /// The register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(&self.state)
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::bytes_of_mut(&mut self.state)
    }
}
