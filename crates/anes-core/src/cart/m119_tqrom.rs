//! Mapper 119: the MMC3 on TQROM (nesdev "INES Mapper 119"), with CHR ROM and 8 KiB of CHR RAM side
//! by side.
//!
//! Bit 6 of a CHR bank (CHR A16) selects the chip: clear, CHR ROM (bits 0-5: up to 64 KiB); set, the
//! CHR RAM (bits 0-2). The cartridge's CHR holds the ROM followed by the RAM, so a RAM bank is the
//! ROM's bank count plus its number. Everything else, IRQ included, is the MMC3's (`Txrom`).

/// CHR RAM on TQROM: one 6264, 8 KiB.
pub(super) const TQROM_CHR_RAM_LEN: usize = 0x2000;

/// The 1 KiB bank of the cartridge's CHR that MMC3 bank number `bank` selects on TQROM, whose CHR
/// ROM has `rom_banks` 1 KiB banks (the RAM's start in the cartridge's CHR) and its RAM `ram_banks`.
/// (The board is a `Txrom` with this wiring, like TxSROM.)
pub(super) fn chr_bank(bank: u8, rom_banks: usize, ram_banks: usize) -> usize {
    // A header without CHR ROM leaves only the RAM.
    if bank & 0x40 == 0 && rom_banks != 0 {
        usize::from(bank & 0x3F) % rom_banks
    } else {
        rom_banks + usize::from(bank & 7) % ram_banks
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::m004_txrom::Txrom;
    use crate::cart::map::MemoryMap;
    use crate::cart::map::{BoardConfig, CHR_SLOT};
    use crate::cart::mapper::Mapper;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn bit_6_selects_the_chr_ram_after_the_rom() {
        // 64 KiB of CHR ROM (banks 0-63) and the 8 KiB of RAM (banks 64-71).
        let mut board =
            Txrom::new(BoardConfig { mapper: 119, submapper: 0, chr_rom_size: 0x10000, battery: false });
        let mut map = MemoryMap::new(0x8000, 0x10000 + TQROM_CHR_RAM_LEN, 0x2000, Mirroring::Vertical);
        for (register, value) in
            [(0, 0x40 | 2), (1, 0x3E), (2, 0x40 | 7), (3, 0x40 | 0x0F), (4, 63), (5, 0x41)]
        {
            board.write_register(0x8000, register, 0);
            board.write_register(0x8001, value, 0);
        }
        board.update_map(&mut map);
        let banks: Vec<usize> = map.chr.iter().map(|offset| offset / CHR_SLOT).collect();
        // R0: RAM 2-3; R1: ROM 62-63; R2: RAM 7; R3: bits 3-5 are not RAM address lines: RAM 7;
        // R4: ROM 63; R5: RAM 1.
        assert_eq!(banks, [66, 67, 62, 63, 71, 71, 63, 65]);
    }
}
