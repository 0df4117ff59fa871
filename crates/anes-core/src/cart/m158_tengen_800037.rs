//! Mapper 158: Tengen 800037, Alien Syndrome's board (nesdev "INES Mapper 158"): the RAMBO-1
//! (`m064_rambo1.rs`) with CHR A17 wired to CIRAM A10 instead of its mirroring output, as TxSROM does
//! with the MMC3 (`m118_txsrom.rs`). The chip ignores PPU A13, so during a nametable fetch it drives
//! the CHR bank of the pattern window the low address bits name ($2000-$2FFF banks like
//! $0000-$0FFF, after the C inversion): bit 7 of that bank picks each nametable's CIRAM page. With
//! $8000's C and K clear those are R0 (nametables 0 and 1) and R1 (2 and 3); with C set, R2-R5, one
//! each; with K set and C clear, R0, R8, R1, R9. $A000 is still latched by the chip and reaches
//! nothing. Registers, PRG banking and the IRQ are the RAMBO-1's.

use super::m064_rambo1::{Rambo1, Rambo1State};
use super::map::{BoardConfig, MemoryMap};
use super::mapper::Mapper;

/// The RAMBO-1 on the Tengen 800037 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tengen800037 {
    chip: Rambo1,
}

impl Mapper for Tengen800037 {
    type State = Rambo1State;
    const FIELDS: &'static [crate::layout::FieldLayout] = Rambo1::FIELDS;

    fn new(config: BoardConfig) -> Self {
        Tengen800037 { chip: Rambo1::new(config) }
    }

    fn state(&self) -> &Rambo1State {
        self.chip.state()
    }

    fn state_mut(&mut self) -> &mut Rambo1State {
        self.chip.state_mut()
    }

    fn observe_ppu(&mut self, addr: u16, read: bool) -> bool {
        self.chip.observe_ppu(addr, read)
    }

    fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        self.chip.write_register(addr, value, cpu_cycle)
    }

    fn cpu_cycles(&mut self, edges: u64) {
        self.chip.cpu_cycles(edges);
    }

    fn irq_line(&self) -> bool {
        self.chip.irq_line()
    }

    fn a12_clocks_before_irq(&self) -> u32 {
        self.chip.a12_clocks_before_irq()
    }

    fn a12_low_m2_edges(&self) -> Option<u8> {
        self.chip.a12_low_m2_edges()
    }

    fn m2_edges_before_irq(&self) -> u32 {
        self.chip.m2_edges_before_irq()
    }

    /// The RAMBO-1's map, the nametables from CHR A17 (bank bit 7, which the pattern windows drop
    /// on the board's at most 128 KiB of CHR).
    fn update_map(&self, map: &mut MemoryMap) {
        self.chip.update_map(map);
        let banks = self.chip.chr_banks();
        map.nametables = [banks[0] >> 7, banks[1] >> 7, banks[2] >> 7, banks[3] >> 7];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    fn board() -> (Tengen800037, MemoryMap) {
        // Alien Syndrome: 128 KiB of PRG and of CHR (1 KiB banks 0-127).
        let board = Tengen800037::new(BoardConfig {
            mapper: 158,
            submapper: 0,
            chr_rom_size: 0x20000,
            battery: false,
        });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Horizontal);
        board.update_map(&mut map);
        (board, map)
    }

    fn write(board: &mut Tengen800037, map: &mut MemoryMap, addr: u16, value: u8) {
        if board.write_register(addr, value, 0) {
            board.update_map(map);
        }
    }

    fn bank(board: &mut Tengen800037, map: &mut MemoryMap, select: u8, register: u8, value: u8) {
        write(board, map, 0x8000, select | register);
        write(board, map, 0x8001, value);
    }

    #[test]
    fn power_on_shows_ciram_page_0_everywhere_whatever_the_header_says() {
        let (_, map) = board();
        assert_eq!(map.nametables, [0; 4]);
    }

    #[test]
    fn r0_and_r1_bit_7_pick_the_pages_of_the_halves_and_a000_reaches_nothing() {
        let (mut board, mut map) = board();
        bank(&mut board, &mut map, 0, 0, 0x80 | 4);
        bank(&mut board, &mut map, 0, 1, 6);
        assert_eq!(map.nametables, [1, 1, 0, 0]);
        write(&mut board, &mut map, 0xA000, 0);
        write(&mut board, &mut map, 0xA000, 1);
        assert_eq!(map.nametables, [1, 1, 0, 0], "$A000 is latched, not wired");
        assert_eq!(board.state().mirroring, 1);
        // Bit 7 is not a CHR bank bit on 128 KiB: 2 KiB bank 2 at $0000, 3 at $0800.
        assert_eq!(map.chr[..4], [4 * 0x400, 5 * 0x400, 6 * 0x400, 7 * 0x400]);
    }

    #[test]
    fn with_the_inversion_r2_to_r5_pick_one_page_each() {
        let (mut board, mut map) = board();
        for (register, value) in [(2, 0x80 | 9), (3, 10), (4, 0x80 | 11), (5, 12)] {
            bank(&mut board, &mut map, 0x80, register, value);
        }
        assert_eq!(map.nametables, [1, 0, 1, 0]);
        assert_eq!(map.chr[..4], [9 * 0x400, 10 * 0x400, 11 * 0x400, 12 * 0x400]);
        // The inversion off again: R0 and R1 (bit 7 clear since power-on) decide.
        write(&mut board, &mut map, 0x8000, 0);
        assert_eq!(map.nametables, [0; 4]);
    }

    #[test]
    fn in_1_kib_mode_r8_and_r9_pick_the_second_and_fourth() {
        let (mut board, mut map) = board();
        // K set: R0, R8, R1, R9 are the windows at $0000, $0400, $0800, $0C00.
        bank(&mut board, &mut map, 0x20, 0, 0x80 | 1);
        bank(&mut board, &mut map, 0x20, 8, 2);
        bank(&mut board, &mut map, 0x20, 1, 3);
        bank(&mut board, &mut map, 0x20, 9, 0x80 | 4);
        assert_eq!(map.nametables, [1, 0, 0, 1]);
    }

    #[test]
    fn the_irq_is_the_rambo1s() {
        let (mut board, _) = board();
        board.write_register(0xC000, 0, 0);
        board.write_register(0xE001, 0, 0);
        board.write_register(0xC001, 1, 0); // cycle mode: a clock every fourth M2 edge
        board.cpu_cycles(4);
        assert!(!board.irq_line(), "one M2 edge after the clock");
        board.cpu_cycles(1);
        assert!(board.irq_line());
    }
}
