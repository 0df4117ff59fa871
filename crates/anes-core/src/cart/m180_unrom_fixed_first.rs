//! Mapper 180: UNROM with the first bank fixed (nesdev "INES Mapper 180"; Crazy Climber, whose board
//! puts a 74HC08 where UNROM has a 74HC32). The first 16 KiB of PRG is fixed at $8000 and bits 0-2 of
//! a write to $8000-$FFFF select the 16 KiB bank at $C000. 8 KiB CHR RAM, wired mirroring, bus
//! conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Mapper 180 register.
    pub struct Unrom180State {
        /// 16 KiB PRG bank at $C000.
        pub prg_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Unrom180State>() == 1);

/// Mapper 180 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrom180 {
    state: Unrom180State,
}

impl Mapper for Unrom180 {
    state_in!(state: Unrom180State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Unrom180 { state: Unrom180State::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.prg_bank = value & 7;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, 0);
        map.set_prg_16k(1, usize::from(self.state.prg_bank));
        map.set_chr_8k(0);
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn the_first_bank_stays_and_the_write_selects_c000() {
        let mut board =
            Unrom180::new(BoardConfig { mapper: 180, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x2000, 0, Mirroring::Vertical);
        board.update_map(&mut map);
        assert_eq!(map.prg, [0, 0x2000, 0, 0x2000], "power-on: bank 0 at both halves");
        for (value, bank) in [(5u8, 5usize), (0xFF, 7), (0x08, 0)] {
            board.write_register(0x8000, value, 0);
            board.update_map(&mut map);
            assert_eq!(map.prg, [0, 0x2000, bank * 0x4000, bank * 0x4000 + 0x2000], "{value:#X}");
        }
    }
}
