//! Mapper 140: Jaleco JF-11 and JF-14 (nesdev "INES Mapper 140"). One register at $6000-$7FFF:
//! bits 4-5 select the 32 KiB PRG bank, bits 0-3 the 8 KiB CHR bank. No PRG RAM (reads of
//! $6000-$7FFF are open bus); wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// JF-11/JF-14 register.
    pub struct Jf11State {
        /// The last value written at $6000-$7FFF.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Jf11State>() == 1);

/// JF-11/JF-14 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Jf11 {
    state: Jf11State,
}

impl Mapper for Jf11 {
    state_in!(state: Jf11State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Jf11 { state: Jf11State::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr < 0x6000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        map.set_prg_32k((r >> 4) & 3);
        map.set_chr_8k(r & 0x0F);
        // The register decodes $6000-$7FFF: no RAM answers there, whatever an iNES 1.0 header implies.
        map.set_prg_ram(0, false, false);
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn the_register_at_6000_selects_prg_and_chr() {
        let mut board =
            Jf11::new(BoardConfig { mapper: 140, submapper: 0, chr_rom_size: 0x20000, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x20000, 0, Mirroring::Vertical);
        assert!(!board.write_low(0x5FFF, 0xFF, 0));
        assert!(board.write_low(0x7ABC, 0x2B, 0));
        board.update_map(&mut map);
        assert_eq!((map.prg[0], map.chr[0]), (2 * 0x8000, 11 * 0x2000));
    }
}
