//! Mapper 32: Irem G-101 (nesdev "INES Mapper 032"; Image Fight, Major League). Registers, decoded
//! with mask $F000 ($B000-$BFFF with $F007):
//! - $8000: the 8 KiB PRG bank (5 bits) at $8000, or at $C000 in PRG mode 1;
//! - $9000: bit 0 mirroring (0 vertical, 1 horizontal), bit 1 the PRG mode (0: $C000 holds the
//!   second-last bank; 1: $8000 does, and the $8000 register's bank moves to $C000);
//! - $A000: the 8 KiB PRG bank (5 bits) at $A000;
//! - $B000-$B007: the 1 KiB CHR banks at $0000, $0400, ... $1C00.
//!
//! $E000 always holds the last bank. NES 2.0 submapper 1 (Major League): CIRAM A10 is tied high, so
//! every nametable is CIRAM page 1, and the PRG mode is fixed at 0 (nesdev "NES 2.0 submappers",
//! 032): the board has no $9000 register.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// G-101 registers.
    pub struct G101State {
        /// 8 KiB PRG banks of the $8000 and $A000 registers.
        pub prg_banks: [u8; 2],
        /// 1 KiB CHR banks of $B000-$B007.
        pub chr_banks: [u8; 8],
        /// The last value written at $9000: bit 0 mirroring, bit 1 PRG mode.
        pub control: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<G101State>() == 12);

/// Irem G-101 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct G101 {
    state: G101State,
    /// Submapper 1: one-screen page 1 and PRG mode 0, wired.
    major_league: bool,
}

impl Mapper for G101 {
    state_in!(state: G101State);

    /// The board in its power-on state (the registers' is unspecified; 0 here).
    fn new(config: BoardConfig) -> Self {
        G101 { state: G101State::default(), major_league: config.submapper == 1 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        match addr & 0xF000 {
            0x8000 => self.state.prg_banks[0] = value & 0x1F,
            0x9000 => self.state.control = value & 0x03,
            0xA000 => self.state.prg_banks[1] = value & 0x1F,
            0xB000 => self.state.chr_banks[usize::from(addr & 7)] = value,
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let control = if self.major_league { 0 } else { self.state.control };
        let [r0, r1] = self.state.prg_banks.map(usize::from);
        let second_last = map.prg_bank_from_end(2);
        let (at_8000, at_c000) = if control & 2 == 0 { (r0, second_last) } else { (second_last, r0) };
        map.set_prg_8k(0, at_8000);
        map.set_prg_8k(1, r1);
        map.set_prg_8k(2, at_c000);
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        for (window, &bank) in self.state.chr_banks.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        map.set_mirroring(if self.major_league {
            Mirroring::SingleScreenB
        } else if control & 1 == 0 {
            Mirroring::Vertical
        } else {
            Mirroring::Horizontal
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;

    #[test]
    fn prg_mode_1_swaps_8000_and_c000() {
        let mut board =
            G101::new(BoardConfig { mapper: 32, submapper: 0, chr_rom_size: 0x40000, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x40000, 0, Mirroring::Vertical);
        board.write_register(0x8FFF, 0x25, 0);
        board.write_register(0xA123, 7, 0);
        board.write_register(0xB00F, 0xC3, 0);
        board.update_map(&mut map);
        assert_eq!(map.prg.map(|o| o / PRG_SLOT), [5, 7, 30, 31]);
        assert_eq!(map.chr[7] / 0x400, 0xC3, "$B00F decodes as $B007");
        board.write_register(0x9000, 0x03, 0);
        board.update_map(&mut map);
        assert_eq!(map.prg.map(|o| o / PRG_SLOT), [30, 7, 5, 31]);
        assert_eq!(map.nametables, [0, 0, 1, 1], "horizontal");
    }

    #[test]
    fn major_league_is_one_screen_in_prg_mode_0() {
        let mut board =
            G101::new(BoardConfig { mapper: 32, submapper: 1, chr_rom_size: 0x40000, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x40000, 0, Mirroring::Vertical);
        board.write_register(0x8000, 4, 0);
        board.write_register(0x9000, 0x02, 0);
        board.update_map(&mut map);
        assert_eq!(map.prg.map(|o| o / PRG_SLOT), [4, 0, 30, 31]);
        assert_eq!(map.nametables, [1; 4]);
    }
}
