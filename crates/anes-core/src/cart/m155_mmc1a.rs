//! Mapper 155: the MMC1A (nesdev "INES Mapper 155", "MMC1").
//!
//! The MMC1 ([`Sxrom`]) without the PRG RAM disable bit: PRG bank bit 4 leaves $6000-$7FFF enabled.
//! Instead, while bit 4 is set, bit 3 bypasses the fixed-bank logic and drives PRG A17 directly, for
//! the fixed 16 KiB bank as well as the switched one (in 32 KiB mode bit 3 reaches A17 anyway).

use super::m001_sxrom::{Sxrom, SxromState};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

/// MMC1A board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mmc1a {
    pub mmc1: Sxrom,
}

impl Mapper for Mmc1a {
    state_in!(mmc1.state: SxromState);

    #[inline]
    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.mmc1.write_register(addr, value, cpu_cycle)
    }

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        Mmc1a { mmc1: Sxrom::new(config) }
    }

    /// The MMC1's map with the MMC1A's PRG bank bits 3 and 4.
    fn update_map(&self, map: &mut MemoryMap) {
        self.mmc1.update_map(map);
        let prg_bank = self.mmc1.prg_bank();
        if prg_bank & 0x10 != 0 {
            let a17 = usize::from(prg_bank & 0x08);
            let (low, high) = self.mmc1.prg_16k_banks(map);
            map.set_prg_16k(0, (low & !0x08) | a17);
            map.set_prg_16k(1, (high & !0x08) | a17);
        }
        let ram_bank = self.mmc1.prg_ram_bank(map);
        map.set_prg_ram(ram_bank, true, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::map::PRG_SLOT;
    use crate::cart::rom_info::Mirroring;

    /// Writes `value` to the MMC1 register at `addr` through the serial port.
    fn write(board: &mut Mmc1a, map: &mut MemoryMap, cycle: &mut u64, addr: u16, value: u8) {
        for bit in 0..5 {
            *cycle += 2;
            board.mmc1.write_register(addr, value >> bit, *cycle);
        }
        board.update_map(map);
    }

    /// The 16 KiB banks at $8000 and $C000.
    fn prg(map: &MemoryMap) -> (usize, usize) {
        (map.prg[0] / (2 * PRG_SLOT), map.prg[2] / (2 * PRG_SLOT))
    }

    #[test]
    fn bit_4_keeps_ram_enabled_and_lets_bit_3_reach_a17() {
        // 256 KiB of PRG (16 KiB banks 0-15), 8 KiB of PRG RAM.
        let mut board =
            Mmc1a::new(BoardConfig { mapper: 155, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x40000, 0x2000, 0x2000, Mirroring::Vertical);
        let mut cycle = 0;
        // PRG mode 3 (fixed last bank at $C000).
        write(&mut board, &mut map, &mut cycle, 0x8000, 0x0C);
        write(&mut board, &mut map, &mut cycle, 0xE000, 0x02);
        assert_eq!(prg(&map), (2, 15));
        write(&mut board, &mut map, &mut cycle, 0xE000, 0x12);
        assert!(map.prg_ram.iter().all(|w| w.writable), "bit 4 does not disable the RAM");
        assert_eq!(prg(&map), (2, 7), "bit 3 clear drives A17 low for the fixed bank too");
        write(&mut board, &mut map, &mut cycle, 0xE000, 0x1A);
        assert_eq!(prg(&map), (10, 15));
        // PRG mode 2 (first bank fixed at $8000): bit 3 set lifts it to bank 8.
        write(&mut board, &mut map, &mut cycle, 0x8000, 0x08);
        assert_eq!(prg(&map), (8, 10));
        write(&mut board, &mut map, &mut cycle, 0xE000, 0x0A);
        assert_eq!(prg(&map), (0, 10), "bit 4 clear: the fixed-bank logic as on the MMC1B");
    }
}
