//! Mapper 82: Taito X1-017 (nesdev "Taito X1-017"; the RAM enables from the nesdev forum thread
//! "Taito X1-005 and X1-017"). Registers at $7EF0-$7EFF:
//! - $7EF0 / $7EF1: 2 KiB CHR banks (`CCCC CCC.`), at $0000 / $0800, or at $1000 / $1800 in CHR mode 1;
//! - $7EF2-$7EF5: 1 KiB CHR banks at $1000-$1C00, or at $0000-$0C00 in CHR mode 1;
//! - $7EF6: `.... ..CM`: M mirroring (0 horizontal, 1 vertical), C the CHR mode;
//! - $7EF7, $7EF8, $7EF9: the enables of the three RAM regions: $CA enables $6000-$67FF, $69
//!   $6800-$6FFF, $84 $7000-$73FF; any other value disables the region;
//! - $7EFA, $7EFB, $7EFC: `..PP PP..`, the 8 KiB PRG banks at $8000, $A000, $C000; $E000 holds the
//!   last bank.
//!
//! The 5 KiB of RAM are the first 5 KiB of the cartridge's PRG RAM (the header's, battery-backed on
//! the games). The chip's pull-downs make every undriven read of $6000-$7FFF return 0 (disabled
//! regions, $7400-$7FFF), not open bus.
//!
//! Not modelled: the IRQ counter at $7EFD-$7EFF (no game uses it), and the pull-downs' effect on
//! reads outside $6000-$7FFF (the wiki: 2A03 registers read 0 too).

use super::map::{BoardConfig, MemoryMap, PRG_RAM_WINDOW, PRG_RAM_WINDOWS, PrgRamRead};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

/// The RAM regions: first 512-byte window, windows, and the value that enables the region.
const RAM_REGIONS: [(usize, usize, u8); 3] = [(0, 4, 0xCA), (4, 4, 0x69), (8, 2, 0x84)];

crate::layout::state_struct! {
    /// X1-017 registers.
    pub struct X1017State {
        /// $7EF0, $7EF1 (2 KiB banks), $7EF2-$7EF5 (1 KiB banks).
        pub chr: [u8; 6],
        /// $7EF6: CHR mode (bit 1) and mirroring (bit 0).
        pub control: u8,
        /// $7EF7-$7EF9: the RAM regions' enables.
        pub ram_enable: [u8; 3],
        /// $7EFA-$7EFC: the PRG banks at $8000, $A000, $C000 (bits 2-5).
        pub prg: [u8; 3],
    }
}

const _: () = assert!(core::mem::size_of::<X1017State>() == 13);

/// X1-017 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct X1017 {
    state: X1017State,
}

impl Mapper for X1017 {
    state_in!(state: X1017State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        X1017 { state: X1017State::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr {
            0x7EF0..=0x7EF5 => s.chr[usize::from(addr - 0x7EF0)] = value,
            0x7EF6 => s.control = value,
            0x7EF7..=0x7EF9 => s.ram_enable[usize::from(addr - 0x7EF7)] = value,
            0x7EFA..=0x7EFC => s.prg[usize::from(addr - 0x7EFA)] = value,
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank >> 2) & 0x0F);
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        // CHR mode 1 swaps the 2 KiB half and the 1 KiB half.
        let (two_k, one_k) = if s.control & 2 != 0 { (4, 0) } else { (0, 4) };
        for (i, &bank) in s.chr[..2].iter().enumerate() {
            let bank = usize::from(bank & 0xFE);
            map.set_chr_1k(two_k + i * 2, bank);
            map.set_chr_1k(two_k + i * 2 + 1, bank + 1);
        }
        for (i, &bank) in s.chr[2..].iter().enumerate() {
            map.set_chr_1k(one_k + i, usize::from(bank));
        }
        map.set_mirroring(if s.control & 1 != 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
        for window in 0..PRG_RAM_WINDOWS {
            map.set_prg_ram_window(window, 0, PrgRamRead::Zero, false);
        }
        for ((first, windows, key), &enable) in RAM_REGIONS.into_iter().zip(&s.ram_enable) {
            if enable == key {
                for window in first..first + windows {
                    map.set_prg_ram_window(window, window * PRG_RAM_WINDOW, PrgRamRead::Ram, true);
                }
            }
        }
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chr_mode_swaps_halves_and_ram_regions_need_their_keys() {
        let mut x =
            X1017::new(BoardConfig { mapper: 82, submapper: 0, chr_rom_size: 0x40000, battery: true });
        let mut map = MemoryMap::new(0x20000, 0x40000, 0x2000, Mirroring::Vertical);
        x.write_low(0x7EFA, 5 << 2, 0);
        x.write_low(0x7EF0, 0x21, 0);
        x.write_low(0x7EF2, 0x33, 0);
        x.write_low(0x7EF6, 2, 0);
        x.write_low(0x7EF8, 0x69, 0);
        x.write_low(0x7EF9, 0x69, 0);
        x.update_map(&mut map);
        assert_eq!(map.prg[0], 5 * 0x2000);
        assert_eq!(map.chr[4..6], [0x20 * 0x400, 0x21 * 0x400]);
        assert_eq!(map.chr[0], 0x33 * 0x400);
        assert_eq!(map.nametables, [0, 0, 1, 1]);
        let reads: Vec<_> = map.prg_ram.iter().map(|w| (w.read, w.writable)).collect();
        assert_eq!(reads[0..4], [(PrgRamRead::Zero, false); 4]);
        assert_eq!(reads[4..8], [(PrgRamRead::Ram, true); 4]);
        assert_eq!(map.prg_ram[4].offset, 0x800);
        assert_eq!(reads[8..], [(PrgRamRead::Zero, false); 8], "$7EF9 takes $84, not $69");
    }
}
