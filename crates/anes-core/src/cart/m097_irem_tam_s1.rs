//! Mapper 97: Irem TAM-S1 (nesdev "INES Mapper 097"; Kaiketsu Yanchamaru). One register at
//! $8000-$BFFF, `MM.. PPPP`: bits 0-3 the 16 KiB PRG bank at $C000 ($8000 holds the last bank),
//! bits 6-7 the nametables: 0 one-screen page 0, 1 horizontal (CIRAM A10 = PPU A11), 2 vertical
//! (PPU A10), 3 one-screen page 1. CHR is fixed; the chip drives the data bus, so no bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// TAM-S1 register.
    pub struct TamS1State {
        /// The last value written at $8000-$BFFF.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<TamS1State>() == 1);

/// Irem TAM-S1 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TamS1 {
    state: TamS1State,
}

impl Mapper for TamS1 {
    state_in!(state: TamS1State);

    /// The board in its power-on state (the register's is unspecified; 0 here).
    fn new(_config: BoardConfig) -> Self {
        TamS1 { state: TamS1State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr >= 0xC000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = self.state.register;
        map.set_prg_16k(0, map.prg_bank_from_end(2) / 2);
        map.set_prg_16k(1, usize::from(r & 0x0F));
        map.set_chr_8k(0);
        map.set_mirroring(match r >> 6 {
            0 => Mirroring::SingleScreenA,
            1 => Mirroring::Horizontal,
            2 => Mirroring::Vertical,
            _ => Mirroring::SingleScreenB,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;

    #[test]
    fn the_last_bank_sits_at_8000_and_the_register_picks_c000() {
        let mut board =
            TamS1::new(BoardConfig { mapper: 97, submapper: 0, chr_rom_size: 0x2000, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x2000, 0, Mirroring::Vertical);
        assert!(!board.write_register(0xC000, 0x45, 0), "$C000-$FFFF is not the register");
        assert!(board.write_register(0xBFFF, 0x85, 0));
        board.update_map(&mut map);
        assert_eq!(map.prg.map(|o| o / PRG_SLOT), [30, 31, 10, 11]);
        assert_eq!(map.nametables, [0, 1, 0, 1], "mode 2: vertical");
    }
}
