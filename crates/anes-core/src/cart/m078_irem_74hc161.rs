//! Mapper 78: Irem's 74HC161 boards (nesdev "INES Mapper 078"; Holy Diver, Uchuusen: Cosmo
//! Carrier). One latch at $8000-$FFFF, `CCCC MPPP`, with bus conflicts: bits 0-2 the 16 KiB PRG
//! bank at $8000 ($C000 holds the last), bits 4-7 the 8 KiB CHR bank, bit 3 the nametables, which
//! the two boards wire differently:
//! - submapper 1, Cosmo Carrier: bit 3 drives CIRAM A10, one-screen page 0 or 1 (as AxROM);
//! - submapper 3, Holy Diver: bit 3 picks PPU A11 (0, horizontal) or PPU A10 (1, vertical).
//!
//! Without a submapper, the board goes by the iNES 1.0 header's four-screen flag, which dumps
//! set for Holy Diver and clear for Cosmo Carrier (the wiki's note); Holy Diver then ignores it.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Mapper 78 latch.
    pub struct Mapper78State {
        /// The last value written at $8000-$FFFF (after the bus conflict).
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Mapper78State>() == 1);

/// Holy Diver or Cosmo Carrier board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapper78 {
    state: Mapper78State,
    /// The NES 2.0 submapper (0: decided by the header's four-screen flag in `update_map`).
    submapper: u8,
}

impl Mapper for Mapper78 {
    state_in!(state: Mapper78State);

    /// The board in its power-on state (the latch's is unspecified; 0 here).
    fn new(config: BoardConfig) -> Self {
        Mapper78 { state: Mapper78State::default(), submapper: config.submapper }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be
    /// recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the latch selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = self.state.register;
        map.set_prg_16k(0, usize::from(r & 7));
        map.set_prg_16k(1, map.prg_bank_from_end(2) / 2);
        map.set_chr_8k(usize::from(r >> 4));
        let holy_diver = match self.submapper {
            3 => true,
            1 => false,
            _ => map.wired_mirroring == Mirroring::FourScreen,
        };
        let high = r & 0x08 != 0;
        // Set directly: the four-screen flag names the board here, it wires no extra VRAM.
        map.nametables = match (holy_diver, high) {
            (true, false) => [0, 0, 1, 1],
            (true, true) => [0, 1, 0, 1],
            (false, false) => [0; 4],
            (false, true) => [1; 4],
        };
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nametables(submapper: u8, wired: Mirroring, value: u8) -> [u8; 4] {
        let mut board =
            Mapper78::new(BoardConfig { mapper: 78, submapper, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, wired);
        board.write_register(0x8000, value, 0);
        board.update_map(&mut map);
        map.nametables
    }

    #[test]
    fn bit_3_is_one_screen_on_cosmo_carrier_and_h_v_on_holy_diver() {
        assert_eq!(nametables(1, Mirroring::Vertical, 0x00), [0; 4]);
        assert_eq!(nametables(1, Mirroring::Vertical, 0x08), [1; 4]);
        assert_eq!(nametables(3, Mirroring::Vertical, 0x00), [0, 0, 1, 1]);
        assert_eq!(nametables(3, Mirroring::Vertical, 0x08), [0, 1, 0, 1]);
        // iNES 1.0: the four-screen flag names Holy Diver.
        assert_eq!(nametables(0, Mirroring::FourScreen, 0x08), [0, 1, 0, 1]);
        assert_eq!(nametables(0, Mirroring::Horizontal, 0x08), [1; 4]);
    }
}
