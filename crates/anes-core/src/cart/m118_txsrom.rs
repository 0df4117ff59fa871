//! Mapper 118: the MMC3 on TKSROM and TLSROM (nesdev "INES Mapper 118").
//!
//! The MMC3 ignores PPU A13, so during a nametable fetch it drives the CHR bank of the pattern window
//! the low address bits name ($2000-$2FFF banks like $0000-$0FFF). These boards wire CHR A17, bit 7
//! of that bank, to CIRAM A10 instead of the MMC3's mirroring output: each nametable slot takes the
//! CIRAM page of the bank register behind $0000, $0400, $0800 or $0C00. With $8000 bit 7 clear those
//! are R0 (slots 0 and 1) and R1 (slots 2 and 3); with it set, R2-R5 one slot each. $A000 has no
//! effect. Everything else, IRQ included, is the MMC3's (`Txrom`).

/// The CIRAM page of each nametable slot on TxSROM, from the MMC3's bank registers and its CHR A12
/// inversion: CHR A17 routed to CIRAM A10 (the pattern banks drop it: `bank & 0x7F`). (The board is
/// a `Txrom` with this wiring: one `Board` variant for the MMC3 family keeps the A12 counter's
/// paths, run at every PPU fetch, a single test.)
pub(super) fn nametables(registers: [u8; 8], chr_a12_inverted: bool) -> [u8; 4] {
    // The register behind each of $0000-$0FFF's four windows.
    let behind = if chr_a12_inverted { [2, 3, 4, 5] } else { [0, 0, 1, 1] };
    behind.map(|register| registers[register] >> 7)
}

#[cfg(test)]
mod tests {
    use crate::cart::m004_txrom::Txrom;
    use crate::cart::map::{BoardConfig, MemoryMap};
    use crate::cart::mapper::Mapper;
    use crate::cart::rom_info::Mirroring;

    fn board() -> (Txrom, MemoryMap) {
        // 128 KiB of CHR ROM (TKSROM's most): 1 KiB banks 0-127.
        let board =
            Txrom::new(BoardConfig { mapper: 118, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x8000, 0x20000, 0x2000, Mirroring::Vertical);
        board.update_map(&mut map);
        (board, map)
    }

    fn write(board: &mut Txrom, map: &mut MemoryMap, addr: u16, value: u8) {
        if board.write_register(addr, value, 0) {
            board.update_map(map);
        }
    }

    fn bank(board: &mut Txrom, map: &mut MemoryMap, select: u8, register: u8, value: u8) {
        write(board, map, 0x8000, select | register);
        write(board, map, 0x8001, value);
    }

    #[test]
    fn two_kib_mode_r0_and_r1_bit_7_pick_the_pages_of_the_halves() {
        let (mut board, mut map) = board();
        bank(&mut board, &mut map, 0, 0, 0x80 | 4);
        bank(&mut board, &mut map, 0, 1, 6);
        assert_eq!(map.nametables, [1, 1, 0, 0]);
        bank(&mut board, &mut map, 0, 1, 0x86);
        assert_eq!(map.nametables, [1, 1, 1, 1]);
        // Bit 7 is not a CHR bank bit: 2 KiB bank 2 at $0000, 3 at $0800.
        assert_eq!(map.chr[..4], [4 * 0x400, 5 * 0x400, 6 * 0x400, 7 * 0x400]);
    }

    #[test]
    fn one_kib_mode_r2_to_r5_pick_one_page_each_and_a000_does_nothing() {
        let (mut board, mut map) = board();
        for (register, value) in [(2, 0x80 | 9), (3, 10), (4, 0x80 | 11), (5, 12)] {
            bank(&mut board, &mut map, 0x80, register, value);
        }
        assert_eq!(map.nametables, [1, 0, 1, 0]);
        write(&mut board, &mut map, 0xA000, 1);
        assert_eq!(map.nametables, [1, 0, 1, 0]);
        assert_eq!(map.chr[..4], [9 * 0x400, 10 * 0x400, 11 * 0x400, 12 * 0x400]);
        // Back to 2 KiB mode: R0 and R1 (bit 7 clear since power-on) decide again.
        write(&mut board, &mut map, 0x8000, 0);
        assert_eq!(map.nametables, [0; 4]);
    }
}
