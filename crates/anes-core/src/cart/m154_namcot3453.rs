//! Mapper 154: NAMCOT-3453 (nesdev "INES Mapper 154"): mapper 88 ([`Namcot3443`]) plus one-screen
//! mirroring from bit 6 of every write to $8000-$FFFF, even or odd address (0: page 0, 1: page 1).

use super::m088_namcot3443::Namcot3443;
use super::m206_namco108::Namco108State;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// Mapper 88 with a single-screen latch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namcot3453 {
    pub board: Namcot3443,
}

impl Mapper for Namcot3453 {
    state_in!(board.chip.state: Namco108State);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Namcot3453 { board: Namcot3443::new(config) }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.board.chip.state.one_screen = (value >> 6) & 1;
        self.board.chip.write_register(addr, value);
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        self.board.update_map(map);
        let page_1 = self.board.chip.state.one_screen & 1 != 0;
        map.set_mirroring(if page_1 { Mirroring::SingleScreenB } else { Mirroring::SingleScreenA });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_6_of_any_write_selects_the_page() {
        let mut board =
            Namcot3453::new(BoardConfig { mapper: 154, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Vertical);
        for (addr, value, page) in
            [(0xE000u16, 0x40u8, 1u8), (0x8000, 0x02, 0), (0xC001, 0x7F, 1), (0x8001, 0x05, 0)]
        {
            board.write_register(addr, value, 0);
            board.update_map(&mut map);
            assert_eq!(map.nametables, [page; 4], "${addr:04X} = ${value:02X}");
        }
        // The even and odd writes at $8000-$9FFF reached the chip too: R2 = 5.
        assert_eq!(board.board.chip.registers()[2], 5);
    }
}
