//! Mapper 95: NAMCOT-3425 (nesdev "INES Mapper 095"): a Namco 108 ([`Namco108`]) whose CHR A15,
//! bit 5 of R0 and R1, also drives CIRAM A10: R0 picks the page of $2000-$27FF, R1 of $2800-$2FFF
//! (the chip bank nametable fetches like pattern fetches of $0000-$0FFF, as the MMC3 does on
//! TxSROM). CHR and PRG as on mapper 206.

use super::m206_namco108::{Dxrom, Namco108State};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

/// Namco 108 with CHR A15 driving CIRAM A10.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namcot3425 {
    pub board: Dxrom,
}

impl Mapper for Namcot3425 {
    state_in!(board.chip.state: Namco108State);

    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.board.chip.write_register(addr, value)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Namcot3425 { board: Dxrom::new(config) }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        self.board.update_map(map);
        let r = self.board.chip.registers();
        let (top, bottom) = ((r[0] >> 5) & 1, (r[1] >> 5) & 1);
        map.nametables = [top, top, bottom, bottom];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn r0_and_r1_bit_5_pick_the_top_and_bottom_pages() {
        let mut board =
            Namcot3425::new(BoardConfig { mapper: 95, submapper: 0, chr_rom_size: 0x8000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x8000, 0, Mirroring::Vertical);
        for (r0, r1, pages) in [(0x20, 0x00, [1, 1, 0, 0]), (0x02, 0x22, [0, 0, 1, 1]), (0x3E, 0x3F, [1; 4])]
        {
            for (register, value) in [(0, r0), (1, r1)] {
                board.board.chip.write_register(0x8000, register);
                board.board.chip.write_register(0x8001, value);
            }
            board.update_map(&mut map);
            assert_eq!(map.nametables, pages, "R0 ${r0:02X}, R1 ${r1:02X}");
        }
    }
}
