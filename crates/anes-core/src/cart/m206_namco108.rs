//! Mapper 206: the Namco 108 (Namcot 118/119/129/163 and Tengen MIMIC-1) on DxROM boards (nesdev
//! "INES Mapper 206", "Namco 108 family").
//!
//! The MMC3's ancestor: $8000-$9FFF only, even addresses select a register (bits 0-2), odd ones write
//! it; writes to $A000-$FFFF do nothing. R0-R1 are 2 KiB CHR banks at $0000 and $0800 (bits 1-5),
//! R2-R5 1 KiB CHR banks at $1000-$1FFF (bits 0-5), R6-R7 8 KiB PRG banks at $8000 and $A000 (bits
//! 0-3); $C000-$FFFF holds the last two banks. No PRG or CHR mode bits, no mirroring control (the
//! header's), no IRQ, no PRG RAM. The other boards with this chip (76, 88, 95, 154) compose
//! [`Namco108`] and wire its CHR outputs differently.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Namco 108 registers, and mapper 154's mirroring latch.
    pub struct Namco108State {
        /// The last bank select ($8000, even): bits 0-2 the register the next data write updates.
        pub bank_select: u8,
        /// R0-R7 as written.
        pub registers: [u8; 8],
        /// Mapper 154 only: bit 6 of the last write to $8000-$FFFF (1: single-screen page 1).
        pub one_screen: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 6],
    }
}

const _: () = assert!(core::mem::size_of::<Namco108State>() == 16);

/// The Namco 108 chip: its registers and the banks it outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namco108 {
    pub(super) state: Namco108State,
}

impl Namco108 {
    /// The chip in its power-on state (unspecified on hardware; distinct banks here).
    pub fn new(_config: BoardConfig) -> Self {
        Namco108 { state: Namco108State { registers: [0, 2, 4, 5, 6, 7, 0, 1], ..Namco108State::default() } }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8) -> bool {
        let s = &mut self.state;
        match addr & 0xE001 {
            0x8000 => s.bank_select = value & 7,
            0x8001 => s.registers[usize::from(s.bank_select & 7)] = value,
            _ => return false,
        }
        true
    }

    /// R0-R7 with the bits the chip has: R0-R1 bits 1-5, R2-R5 bits 0-5, R6-R7 bits 0-3.
    pub fn registers(&self) -> [u8; 8] {
        let r = self.state.registers;
        [
            r[0] & 0x3E,
            r[1] & 0x3E,
            r[2] & 0x3F,
            r[3] & 0x3F,
            r[4] & 0x3F,
            r[5] & 0x3F,
            r[6] & 0x0F,
            r[7] & 0x0F,
        ]
    }

    /// Maps $8000-$FFFF: R6, R7, then the last two banks.
    pub fn map_prg(&self, map: &mut MemoryMap) {
        let r = self.registers();
        map.set_prg_8k(0, usize::from(r[6]));
        map.set_prg_8k(1, usize::from(r[7]));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
    }

    /// The 1 KiB CHR bank the chip outputs for each window of $0000-$1FFF.
    pub fn chr_banks(&self) -> [u8; 8] {
        let r = self.registers();
        [r[0], r[0] | 1, r[1], r[1] | 1, r[2], r[3], r[4], r[5]]
    }
}

/// Mapper 206: the chip's outputs wired straight to the ROMs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dxrom {
    pub chip: Namco108,
}

impl Mapper for Dxrom {
    state_in!(chip.state: Namco108State);

    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.chip.write_register(addr, value)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Dxrom { chip: Namco108::new(config) }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        self.chip.map_prg(map);
        for (window, bank) in self.chip.chr_banks().into_iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        // No RAM at $6000-$7FFF: open bus.
        map.set_prg_ram(0, false, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::{CHR_SLOT, PRG_SLOT};
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn registers_bank_as_the_wiki_says_and_only_at_8000_to_9fff() {
        // 128 KiB PRG (banks 0-15), 64 KiB CHR (banks 0-63).
        let mut board =
            Dxrom::new(BoardConfig { mapper: 206, submapper: 0, chr_rom_size: 0x10000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x10000, 0, Mirroring::Vertical);
        for (register, value) in
            [(0, 0xFF), (1, 0x0B), (2, 0x7F), (3, 0x21), (4, 3), (5, 4), (6, 0xF9), (7, 0x0A)]
        {
            // Bits 3-7 of the select are ignored; $9FFE/$9FFF decode like $8000/$8001.
            assert!(board.chip.write_register(0x9FFE, register | 0xF8));
            assert!(board.chip.write_register(0x9FFF, value));
        }
        assert!(!board.chip.write_register(0xA001, 5), "no register at $A000-$FFFF");
        assert!(!board.chip.write_register(0xE000, 5));
        board.update_map(&mut map);
        let prg: Vec<usize> = map.prg.iter().map(|offset| offset / PRG_SLOT).collect();
        assert_eq!(prg, [9, 10, 14, 15]);
        let chr: Vec<usize> = map.chr.iter().map(|offset| offset / CHR_SLOT).collect();
        // R0 $FF: 6 bits, low bit ignored: 62-63; R1 $0B: 10-11; R2 $7F: 63; R3 $21: 33.
        assert_eq!(chr, [62, 63, 10, 11, 63, 33, 3, 4]);
        assert_eq!(map.nametables, [0, 1, 0, 1], "the header's mirroring");
    }
}
