//! Mapper 88: NAMCOT-3443 and kin (nesdev "INES Mapper 088"): a Namco 108 ([`Namco108`]) with PPU A12
//! wired to CHR A16, so $0000-$0FFF (R0-R1) banks within the first 64 KiB of CHR and $1000-$1FFF
//! (R2-R5) within the second. PRG as on mapper 206. Mapper 154 adds a mirroring bit
//! (`m154_namcot3453.rs`).

use super::board::{BoardConfig, MemoryMap};
use super::m206_namco108::Namco108;

/// Namco 108 with CHR A16 from PPU A12.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namcot3443 {
    pub chip: Namco108,
}

impl Namcot3443 {
    /// The board in its power-on state.
    pub fn new(config: BoardConfig) -> Self {
        Namcot3443 { chip: Namco108::new(config) }
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        self.chip.map_prg(map);
        for (window, bank) in self.chip.chr_banks().into_iter().enumerate() {
            let a16 = if window >= 4 { 0x40 } else { 0 };
            map.set_chr_1k(window, usize::from(bank) | a16);
        }
        map.set_prg_ram(0, false, false);
    }

    /// The register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        self.chip.state_bytes()
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        self.chip.state_bytes_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::board::CHR_SLOT;
    use crate::cart::header::Mirroring;

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
