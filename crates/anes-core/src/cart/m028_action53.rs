//! Mapper 28: Action 53 (nesdev "Action 53 mapper"; InfiniteNESLives' multicart CPLD). A register
//! select at $5000-$5FFF (bit 7: supervisor, bit 0: which) and the selected register's value at
//! $8000-$FFFF, no bus conflicts:
//! - $00: bits 0-1 the 8 KiB CHR RAM bank; bit 4 the one-screen page while the mode is one-screen;
//! - $01: bits 0-3 the inner PRG bank; bit 4 as in $00;
//! - $80: the mode, `..SS PPMM`: MM nametables (0 one-screen page 0, 1 page 1, 2 vertical, 3
//!   horizontal), PP the PRG mode (0, 1: 32 KiB; 2: the outer bank's first 16 KiB fixed at $8000;
//!   3: its last 16 KiB fixed at $C000), SS the game's size (32, 64, 128, 256 KiB): how many low
//!   bits of the outer bank the inner bank replaces;
//! - $81: the outer 32 KiB PRG bank.
//!
//! Power-on: unspecified on the hardware; here the outer bank is $FF and the mode 0, so the last
//! 32 KiB are mapped (where a multicart's menu sits).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// Action 53's CHR RAM where an iNES 1.0 header cannot say: 32 KiB, as its bank bits can reach.
pub(super) const ACTION53_CHR_RAM_LEN: usize = 0x8000;

crate::layout::state_struct! {
    /// Action 53 registers.
    pub struct Action53State {
        /// The last value written at $5000-$5FFF (bits 7 and 0 select the register).
        pub select: u8,
        /// Register $00: CHR RAM bank.
        pub chr_bank: u8,
        /// Register $01: inner PRG bank.
        pub inner_bank: u8,
        /// Register $80: mode.
        pub mode: u8,
        /// Register $81: outer PRG bank.
        pub outer_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Action53State>() == 5);

/// Action 53 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Action53 {
    state: Action53State,
}

impl Action53 {
    /// The 16 KiB PRG bank at $8000 (`a14` 0) or $C000 (`a14` 1).
    fn prg_bank_16k(&self, a14: usize) -> usize {
        let s = &self.state;
        let size = usize::from(s.mode >> 4) & 3;
        let mask = (2 << size) - 1;
        let outer = usize::from(s.outer_bank) << 1;
        let inner = usize::from(s.inner_bank & 0x0F);
        let switched = |inner_bits: usize| (outer & !mask) | (inner_bits & mask);
        match (s.mode >> 2) & 3 {
            0 | 1 => switched(inner << 1) | a14,
            2 if a14 == 0 => outer,
            3 if a14 == 1 => outer | 1,
            _ => switched(inner),
        }
    }
}

impl Mapper for Action53 {
    state_in!(state: Action53State);

    /// The board in its power-on state (see the module's note).
    fn new(_config: BoardConfig) -> Self {
        Action53 { state: Action53State { outer_bank: 0xFF, ..Action53State::default() } }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr & 0xF000 == 0x5000 {
            self.state.select = value;
        }
        false
    }

    /// A CPU write to $8000-$FFFF: the selected register; returns true when the map must be
    /// recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match s.select & 0x81 {
            0x00 => s.chr_bank = value,
            0x01 => s.inner_bank = value,
            0x80 => s.mode = value,
            _ => s.outer_bank = value,
        }
        // In the one-screen modes, writes to $00 and $01 set the page from D4 (as on AxROM).
        if s.select & 0x80 == 0 && s.mode & 2 == 0 {
            s.mode = (s.mode & !1) | ((value >> 4) & 1);
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, self.prg_bank_16k(0));
        map.set_prg_16k(1, self.prg_bank_16k(1));
        map.set_chr_8k(usize::from(self.state.chr_bank & 3));
        map.set_mirroring(match self.state.mode & 3 {
            0 => Mirroring::SingleScreenA,
            1 => Mirroring::SingleScreenB,
            2 => Mirroring::Vertical,
            _ => Mirroring::Horizontal,
        });
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;

    fn banks(board: &Action53) -> [usize; 4] {
        let mut map = MemoryMap::new(0x80000, 0x8000, 0, Mirroring::Vertical);
        board.update_map(&mut map);
        map.prg.map(|o| o / PRG_SLOT)
    }

    fn write(board: &mut Action53, register: u8, value: u8) {
        board.write_low(0x5000, register, 0);
        board.write_register(0x8000, value, 0);
    }

    #[test]
    fn the_inner_bank_replaces_the_outer_banks_low_bits_by_game_size() {
        let mut board =
            Action53::new(BoardConfig { mapper: 28, submapper: 0, chr_rom_size: 0, battery: false });
        assert_eq!(banks(&board), [60, 61, 62, 63], "power-on: the last 32 KiB");
        write(&mut board, 0x81, 0x05);
        write(&mut board, 0x01, 0x03);
        // 64 KiB games, 32 KiB mode: inner bit 0 is A15, outer bits 1+ above.
        write(&mut board, 0x80, 0x10);
        assert_eq!(banks(&board), [20, 21, 22, 23]);
        // 128 KiB, UNROM (#2) mode: inner bits 0-2 pick the 16 KiB bank at $8000, the outer bank's
        // last 16 KiB at $C000.
        write(&mut board, 0x80, 0x2C);
        assert_eq!(banks(&board), [22, 23, 22, 23], "inner 3: 16 KiB bank 8 + 3");
        write(&mut board, 0x01, 0x06);
        assert_eq!(banks(&board), [28, 29, 22, 23]);
        // UNROM (#180) mode: the outer bank's first 16 KiB at $8000.
        write(&mut board, 0x80, 0x28);
        assert_eq!(banks(&board), [20, 21, 28, 29]);
    }

    #[test]
    fn writes_to_00_and_01_set_the_one_screen_page_only_in_one_screen_modes() {
        let mut board =
            Action53::new(BoardConfig { mapper: 28, submapper: 0, chr_rom_size: 0, battery: false });
        write(&mut board, 0x00, 0x13);
        assert_eq!((board.state.mode, board.state.chr_bank & 3), (1, 3));
        write(&mut board, 0x80, 0x02);
        write(&mut board, 0x01, 0x10);
        assert_eq!(board.state.mode, 2, "vertical: D4 ignored");
    }
}
