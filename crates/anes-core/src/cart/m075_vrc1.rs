//! Mapper 75: Konami VRC1 (nesdev "VRC1").
//!
//! - $8000, $A000, $C000: 8 KiB PRG banks at $8000, $A000, $C000 (4 bits); $E000 holds the last;
//! - $9000: bit 0 mirroring (0 vertical, 1 horizontal; ignored on four-screen boards), bit 1 bit 4 of
//!   the CHR bank at $0000, bit 2 bit 4 of the CHR bank at $1000;
//! - $E000, $F000: the low 4 bits of the 4 KiB CHR banks at $0000 and $1000.
//!
//! The chip decodes A12-A15 only: every address of a register's $1000 page writes it.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// VRC1 registers.
    pub struct Vrc1State {
        /// PRG bank registers for $8000, $A000, $C000.
        pub prg: [u8; 3],
        /// $9000: mirroring and the CHR banks' high bits.
        pub control: u8,
        /// Low 4 bits of the CHR banks at $0000 and $1000.
        pub chr_low: [u8; 2],
    }
}

const _: () = assert!(core::mem::size_of::<Vrc1State>() == 6);

/// VRC1 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vrc1 {
    state: Vrc1State,
}

impl Mapper for Vrc1 {
    state_in!(state: Vrc1State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Vrc1 { state: Vrc1State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    fn write_register(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        let s = &mut self.state;
        match addr & 0xF000 {
            0x8000 => s.prg[0] = value & 0x0F,
            0x9000 => s.control = value & 0x07,
            0xA000 => s.prg[1] = value & 0x0F,
            0xC000 => s.prg[2] = value & 0x0F,
            0xE000 => s.chr_low[0] = value & 0x0F,
            0xF000 => s.chr_low[1] = value & 0x0F,
            _ => return false,
        }
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        let s = &self.state;
        for (slot, bank) in s.prg.iter().enumerate() {
            map.set_prg_8k(slot, usize::from(*bank));
        }
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        for half in 0..2 {
            let high = (s.control >> (1 + half)) & 1;
            map.set_chr_4k(half, usize::from(high << 4 | s.chr_low[half]));
        }
        map.set_mirroring(if s.control & 1 == 0 { Mirroring::Vertical } else { Mirroring::Horizontal });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banks_mirroring_and_chr_high_bits() {
        let mut vrc1 =
            Vrc1::new(BoardConfig { mapper: 75, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Vertical);
        vrc1.write_register(0x8FFF, 3, 0);
        vrc1.write_register(0xA000, 4, 0);
        vrc1.write_register(0xC123, 0x15, 0);
        vrc1.write_register(0xE000, 0x0A, 0);
        vrc1.write_register(0xF000, 0x05, 0);
        vrc1.write_register(0x9000, 0x05, 0);
        vrc1.update_map(&mut map);
        assert_eq!(map.prg, [3 * 0x2000, 4 * 0x2000, 5 * 0x2000, 15 * 0x2000]);
        assert_eq!(map.chr[0], 0x0A * 0x1000, "bit 1 clear: bank $0A");
        assert_eq!(map.chr[4], 0x15 * 0x1000, "bit 2 set: bank $15");
        assert_eq!(map.nametables, [0, 0, 1, 1], "horizontal");
        vrc1.write_register(0x9000, 0x02, 0);
        vrc1.update_map(&mut map);
        assert_eq!(map.chr[0], 0x1A * 0x1000);
        assert_eq!(map.nametables, [0, 1, 0, 1], "vertical");
    }
}
