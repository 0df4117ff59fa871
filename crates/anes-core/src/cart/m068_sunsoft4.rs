//! Mapper 68: Sunsoft-4 (nesdev "INES Mapper 068"). Registers by address bits 12-15:
//! - $8000, $9000, $A000, $B000: 2 KiB CHR banks at $0000, $0800, $1000, $1800;
//! - $C000, $D000: nametable registers 0 and 1, each a 1 KiB CHR ROM bank; D7 is treated as 1, so
//!   they select banks $80-$FF (the last 128 KiB of a 256 KiB CHR ROM);
//! - $E000 `...R ..MM`: MM the arrangement (0 vertical, 1 horizontal, 2 single-screen of page 0,
//!   3 of page 1); R the nametables' chip: 0 CIRAM, 1 CHR ROM, nametable register 0 in place of
//!   page 0 and register 1 of page 1, in the same arrangement. Writes to ROM nametables go nowhere;
//! - $F000 `...E PPPP`: the 16 KiB PRG bank at $8000; $C000-$FFFF holds the last bank. E enables
//!   PRG RAM at $6000-$7FFF; while it is clear, reads there are open bus.
//!
//! Not modelled: Nantettatte!! Baseball's external option ROM and the licensing IC whose timer
//! ($6000-$7FFF writes with E clear; 107520 M2 cycles) gates it: the wiki leaves how the external
//! ROM is banked in and where it sits in the image open.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Sunsoft-4 registers.
    pub struct Sunsoft4State {
        /// 2 KiB CHR banks at $0000, $0800, $1000, $1800.
        pub chr: [u8; 4],
        /// $C000, $D000: the CHR ROM banks of nametable pages 0 and 1 (bit 7 forced on use).
        pub nametable: [u8; 2],
        /// $E000: mirroring (bits 0-1) and ROM nametables (bit 4).
        pub control: u8,
        /// $F000: PRG bank (bits 0-3) and PRG RAM enable (bit 4).
        pub prg: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft4State>() == 8);

const ROM_NAMETABLES: u8 = 0x10;
const PRG_RAM_ENABLE: u8 = 0x10;
/// Nametable registers select from the upper half of the 256 banks.
const NAMETABLE_BANK_HIGH: u8 = 0x80;

/// Sunsoft-4 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sunsoft4 {
    state: Sunsoft4State,
}

impl Mapper for Sunsoft4 {
    state_in!(state: Sunsoft4State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Sunsoft4 { state: Sunsoft4State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true (every register changes the map).
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr & 0xF000 {
            0x8000..=0xB000 => s.chr[usize::from((addr >> 12) - 8)] = value,
            0xC000 => s.nametable[0] = value,
            0xD000 => s.nametable[1] = value,
            0xE000 => s.control = value,
            _ => s.prg = value,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        map.set_prg_16k(0, usize::from(s.prg & 0x0F));
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        for (region, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(region * 2, usize::from(bank) * 2);
            map.set_chr_1k(region * 2 + 1, usize::from(bank) * 2 + 1);
        }
        let mirroring = Mirroring::from_two_bits(s.control);
        map.set_mirroring(mirroring);
        if s.control & ROM_NAMETABLES != 0 {
            let pages = map.nametables;
            for (quadrant, page) in pages.into_iter().enumerate() {
                let bank = s.nametable[usize::from(page & 1)] | NAMETABLE_BANK_HIGH;
                map.set_nametable_chr(quadrant, usize::from(bank));
            }
        }
        let ram = s.prg & PRG_RAM_ENABLE != 0;
        map.set_prg_ram(0, ram, ram);
    }
}

#[cfg(test)]
mod tests {
    use super::super::map::PAGE_CHR;
    use super::*;

    fn board() -> Sunsoft4 {
        Sunsoft4::new(BoardConfig { mapper: 68, submapper: 0, chr_rom_size: 0x40000, battery: false })
    }

    #[test]
    fn rom_nametables_take_the_place_of_the_ciram_pages() {
        let mut map = MemoryMap::new(0x20000, 0x40000, 0x2000, Mirroring::Vertical);
        let mut m = board();
        m.write_register(0xC000, 0x05, 0);
        m.write_register(0xD000, 0x8A, 0); // D7 is 1 either way
        for (control, banks) in [
            (0x10, [0x85, 0x8A, 0x85, 0x8A]),
            (0x11, [0x85, 0x85, 0x8A, 0x8A]),
            (0x12, [0x85; 4]),
            (0x13, [0x8A; 4]),
        ] {
            m.write_register(0xE000, control, 0);
            m.update_map(&mut map);
            assert_eq!(map.nametables, [PAGE_CHR; 4], "$E000 = {control:#04X}");
            assert_eq!(map.nametable_chr.map(|offset| offset / 0x400), banks, "$E000 = {control:#04X}");
        }
        m.write_register(0xE000, 0x01, 0);
        m.update_map(&mut map);
        assert_eq!(map.nametables, [0, 0, 1, 1], "CIRAM, horizontal");
    }

    #[test]
    fn f000_selects_prg_and_enables_ram() {
        let mut map = MemoryMap::new(0x20000, 0x40000, 0x2000, Mirroring::Vertical);
        let mut m = board();
        m.write_register(0xF000, 0x13, 0);
        m.update_map(&mut map);
        assert_eq!(map.prg, [6 * 0x2000, 7 * 0x2000, 14 * 0x2000, 15 * 0x2000]);
        assert!(map.prg_ram_window(0x6000).writable);
        m.write_register(0xF000, 0x03, 0);
        m.update_map(&mut map);
        assert!(!map.prg_ram_window(0x7FFF).writable);
    }
}
