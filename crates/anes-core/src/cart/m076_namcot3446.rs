//! Mapper 76: NAMCOT-3446 (nesdev "INES Mapper 076"): a Namco 108 ([`Namco108`]) whose R2-R5 select
//! 2 KiB CHR banks at $0000, $0800, $1000 and $1800 (the board shifts the chip's CHR outputs up one
//! line, for 128 KiB); R0 and R1 have no effect. PRG as on mapper 206.

use super::m206_namco108::{Namco108, Namco108State};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

/// Namco 108 with 2 KiB CHR banks from R2-R5.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namcot3446 {
    pub chip: Namco108,
}

impl Mapper for Namcot3446 {
    state_in!(chip.state: Namco108State);

    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.chip.write_register(addr, value)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Namcot3446 { chip: Namco108::new(config) }
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        self.chip.map_prg(map);
        let r = self.chip.registers();
        for pair in 0..4 {
            let bank = usize::from(r[2 + pair]);
            map.set_chr_1k(pair * 2, bank * 2);
            map.set_chr_1k(pair * 2 + 1, bank * 2 + 1);
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
    fn r2_to_r5_are_2_kib_banks_and_r0_r1_do_nothing() {
        let mut board =
            Namcot3446::new(BoardConfig { mapper: 76, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Vertical);
        for (register, value) in [(0, 9), (1, 9), (2, 0x3F), (3, 1), (4, 0x20), (5, 0x45)] {
            board.chip.write_register(0x8000, register);
            board.chip.write_register(0x8001, value);
        }
        board.update_map(&mut map);
        let chr: Vec<usize> = map.chr.iter().map(|offset| offset / CHR_SLOT).collect();
        // 2 KiB banks 63, 1, 32, 5 ($45: 6 bits).
        assert_eq!(chr, [126, 127, 2, 3, 64, 65, 10, 11]);
    }
}
