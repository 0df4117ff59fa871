//! Mapper 119: the MMC3 on TQROM (nesdev "INES Mapper 119"), with CHR ROM and 8 KiB of CHR RAM side
//! by side.
//!
//! Bit 6 of a CHR bank (CHR A16) selects the chip: clear, CHR ROM (bits 0-5: up to 64 KiB); set, the
//! CHR RAM (bits 0-2). The cartridge's CHR holds the ROM followed by the RAM, so a RAM bank is the
//! ROM's bank count plus its number. Everything else, IRQ included, is the MMC3's ([`Txrom`]).

use super::board::{BoardConfig, CHR_SLOT, MemoryMap};
use super::m004_txrom::Txrom;

/// CHR RAM on TQROM: one 6264, 8 KiB.
pub(super) const TQROM_CHR_RAM_LEN: usize = 0x2000;

/// MMC3 with CHR ROM and CHR RAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tqrom {
    pub mmc3: Txrom,
    /// 1 KiB banks of CHR ROM (where the RAM starts in the cartridge's CHR): from the header, not
    /// state.
    rom_banks: usize,
}

impl Tqrom {
    /// The board in its power-on state.
    pub fn new(config: BoardConfig) -> Self {
        Tqrom { mmc3: Txrom::new(config), rom_banks: config.chr_rom_size.div_ceil(CHR_SLOT) }
    }

    /// The MMC3's map with CHR A16 choosing ROM or RAM.
    pub fn update_map(&self, map: &mut MemoryMap) {
        self.mmc3.update_map(map);
        let rom_banks = self.rom_banks;
        let ram_banks = map.chr_banks.saturating_sub(rom_banks).max(1);
        self.mmc3.map_chr(map, |bank| {
            // A header without CHR ROM leaves only the RAM.
            if bank & 0x40 == 0 && rom_banks != 0 {
                usize::from(bank & 0x3F) % rom_banks
            } else {
                rom_banks + usize::from(bank & 7) % ram_banks
            }
        });
    }

    /// The register state as bytes: the MMC3's.
    pub fn state_bytes(&self) -> &[u8] {
        self.mmc3.state_bytes()
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        self.mmc3.state_bytes_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::header::Mirroring;

    #[test]
    fn bit_6_selects_the_chr_ram_after_the_rom() {
        // 64 KiB of CHR ROM (banks 0-63) and the 8 KiB of RAM (banks 64-71).
        let mut board = Tqrom::new(BoardConfig { mapper: 119, submapper: 0, chr_rom_size: 0x10000 });
        let mut map = MemoryMap::new(0x8000, 0x10000 + TQROM_CHR_RAM_LEN, 0x2000, Mirroring::Vertical);
        for (register, value) in
            [(0, 0x40 | 2), (1, 0x3E), (2, 0x40 | 7), (3, 0x40 | 0x0F), (4, 63), (5, 0x41)]
        {
            board.mmc3.write_register(0x8000, register);
            board.mmc3.write_register(0x8001, value);
        }
        board.update_map(&mut map);
        let banks: Vec<usize> = map.chr.iter().map(|offset| offset / CHR_SLOT).collect();
        // R0: RAM 2-3; R1: ROM 62-63; R2: RAM 7; R3: bits 3-5 are not RAM address lines: RAM 7;
        // R4: ROM 63; R5: RAM 1.
        assert_eq!(banks, [66, 67, 62, 63, 71, 71, 63, 65]);
    }
}
