//! Mapper 88: NAMCOT-3443 and kin (nesdev "INES Mapper 088"): a Namco 108 ([`Namco108`]) with PPU A12
//! wired to CHR A16, so $0000-$0FFF (R0-R1) banks within the first 64 KiB of CHR and $1000-$1FFF
//! (R2-R5) within the second. PRG as on mapper 206. Mapper 154 adds a mirroring bit
//! (`m154_namcot3453.rs`).

use super::m206_namco108::{Namco108, Namco108State};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

/// Namco 108 with CHR A16 from PPU A12.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namcot3443 {
    pub chip: Namco108,
}

impl Mapper for Namcot3443 {
    state_in!(chip.state: Namco108State);

    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.chip.write_register(addr, value)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Namcot3443 { chip: Namco108::new(config) }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        self.chip.map_prg(map);
        for (window, bank) in self.chip.chr_banks().into_iter().enumerate() {
            let a16 = if window >= 4 { 0x40 } else { 0 };
            map.set_chr_1k(window, usize::from(bank) | a16);
        }
        map.set_prg_ram(0, false, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::CHR_SLOT;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn the_right_pattern_table_banks_in_the_second_64_kib() {
        let mut board =
            Namcot3443::new(BoardConfig { mapper: 88, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Vertical);
        for (register, value) in [(0, 0x3E), (1, 4), (2, 0), (3, 0x3F), (4, 7), (5, 0x48)] {
            board.chip.write_register(0x8000, register);
            board.chip.write_register(0x8001, value);
        }
        board.update_map(&mut map);
        let chr: Vec<usize> = map.chr.iter().map(|offset| offset / CHR_SLOT).collect();
        assert_eq!(chr, [62, 63, 4, 5, 64, 127, 71, 72]);
    }
}
