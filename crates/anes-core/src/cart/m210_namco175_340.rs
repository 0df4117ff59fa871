//! Mapper 210: Namco 175 (submapper 1) and Namco 340 (submapper 2), the Namco 163 without sound, IRQ,
//! internal RAM or nametable selection (nesdev "INES Mapper 210").
//!
//! Each register answers through $800 bytes:
//! - $8000-$B800: the eight 1 KiB pattern table windows;
//! - $C000: Namco 175 only: bit 0 enables PRG RAM at $6000-$7FFF (reads and writes; a smaller RAM
//!   repeats through the window);
//! - $E000: PRG bank at $8000 (6 bits); Namco 340 only, bits 6-7 the mirroring: 0 single-screen page
//!   0, 1 vertical, 2 single-screen page 1, 3 horizontal; $E800, $F000: PRG banks at $A000, $C000;
//!   $E000-$FFFF holds the last bank.
//!
//! The 175's mirroring is wired (the header's); the 340 has no PRG RAM. Without a submapper the
//! board follows the wiki's run-time rule: $C000 enables RAM as on the 175, and once a write to
//! $E000 sets bit 6 or 7 the board is taken for a 340 and those bits select the mirroring (the
//! choice is part of the state).

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Namco 175/340 registers.
    pub struct Namco175State {
        /// $8000-$B800: pattern table windows.
        pub chr: [u8; 8],
        /// $E000, $E800, $F000 as written.
        pub prg: [u8; 3],
        /// $C000: bit 0 PRG RAM enable (175).
        pub ram_enable: u8,
        /// 1 once $E000's mirroring bits were written set on a board without a submapper.
        pub seen_340: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 3],
    }
}

const _: () = assert!(core::mem::size_of::<Namco175State>() == 16);

/// Which chip the header names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chip {
    /// Submapper 0: decided at run time.
    Unknown,
    Namco175,
    Namco340,
}

/// Namco 175 or 340 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Namco175 {
    state: Namco175State,
    chip: Chip,
}

impl Mapper for Namco175 {
    state_in!(state: Namco175State);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        let chip = match config.submapper {
            1 => Chip::Namco175,
            2 => Chip::Namco340,
            _ => Chip::Unknown,
        };
        Namco175 { state: Namco175State::default(), chip }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        let register = usize::from((addr >> 11) & 3);
        match addr & 0xE000 {
            0x8000 | 0xA000 => s.chr[usize::from((addr - 0x8000) >> 11)] = value,
            0xC000 if register == 0 => s.ram_enable = value & 1,
            0xE000 if register < 3 => {
                s.prg[register] = value;
                if register == 0 && self.chip == Chip::Unknown && value & 0xC0 != 0 {
                    s.seen_340 = 1;
                }
            }
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, &bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(bank & 0x3F));
        }
        let last = map.prg_bank_from_end(1);
        map.set_prg_8k(3, last);
        for (window, &bank) in s.chr.iter().enumerate() {
            map.set_chr_1k(window, usize::from(bank));
        }
        let ram = self.chip != Chip::Namco340 && s.ram_enable != 0;
        map.set_prg_ram(0, ram, ram);
        let mirroring_340 = match self.chip {
            Chip::Namco340 => true,
            Chip::Namco175 => false,
            Chip::Unknown => s.seen_340 != 0,
        };
        let mirroring = if mirroring_340 {
            match s.prg[0] >> 6 {
                0 => Mirroring::SingleScreenA,
                1 => Mirroring::Vertical,
                2 => Mirroring::SingleScreenB,
                _ => Mirroring::Horizontal,
            }
        } else {
            map.wired_mirroring
        };
        map.set_mirroring(mirroring);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_after(submapper: u8, writes: &[(u16, u8)]) -> MemoryMap {
        let mut m =
            Namco175::new(BoardConfig { mapper: 210, submapper, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0x2000, Mirroring::Horizontal);
        for &(addr, value) in writes {
            m.write_register(addr, value, 0);
        }
        m.update_map(&mut map);
        map
    }

    #[test]
    fn the_340_selects_mirroring_and_the_175_keeps_the_wired_one() {
        assert_eq!(map_after(2, &[(0xE000, 0x40)]).nametables, [0, 1, 0, 1]);
        assert_eq!(map_after(2, &[(0xE000, 0x00)]).nametables, [0; 4]);
        assert_eq!(map_after(2, &[(0xE000, 0x80)]).nametables, [1; 4]);
        assert_eq!(map_after(2, &[(0xE000, 0xC0)]).nametables, [0, 0, 1, 1]);
        assert_eq!(map_after(1, &[(0xE000, 0x40)]).nametables, [0, 0, 1, 1], "wired horizontal");
        assert_eq!(map_after(0, &[]).nametables, [0, 0, 1, 1], "wired until $E000 bits 6-7 are set");
        assert_eq!(map_after(0, &[(0xE000, 0x40), (0xE000, 0x00)]).nametables, [0; 4], "then the 340's");
    }

    #[test]
    fn prg_ram_answers_only_when_the_175_enables_it() {
        use super::super::map::PrgRamRead;
        assert_eq!(map_after(1, &[]).prg_ram[0].read, PrgRamRead::OpenBus);
        assert_eq!(map_after(1, &[(0xC000, 1)]).prg_ram[15].read, PrgRamRead::Ram);
        assert_eq!(map_after(2, &[(0xC000, 1)]).prg_ram[0].read, PrgRamRead::OpenBus, "the 340 has none");
    }
}
