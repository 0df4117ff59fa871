//! Mapper 87: the Jaleco/Konami/Taito CHR latch at $6000-$7FFF (nesdev "INES Mapper 087"; JF-05 to
//! JF-10, Argus, City Connection): `.... ..LH`, the 8 KiB CHR bank with its two bits swapped (bit 0
//! is the bank's high bit, bit 1 its low bit). PRG is fixed (NROM); no PRG RAM (the register sits
//! where it would); wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Mapper 87 latch.
    pub struct Mapper87State {
        /// The last value written at $6000-$7FFF.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Mapper87State>() == 1);

/// Mapper 87 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mapper87 {
    state: Mapper87State,
}

impl Mapper for Mapper87 {
    state_in!(state: Mapper87State);

    /// The board in its power-on state (the latch's is unspecified; 0 here).
    fn new(_config: BoardConfig) -> Self {
        Mapper87 { state: Mapper87State::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr < 0x6000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the latch selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        map.set_prg_32k(0);
        map.set_chr_8k(((r & 1) << 1) | ((r >> 1) & 1));
        map.set_prg_ram(0, false, false);
        map.low_registers = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn the_two_bank_bits_are_swapped() {
        let mut board =
            Mapper87::new(BoardConfig { mapper: 87, submapper: 0, chr_rom_size: 0x8000, battery: false });
        let mut map = MemoryMap::new(0x8000, 0x8000, 0, Mirroring::Vertical);
        for (value, bank) in [(0u8, 0usize), (1, 2), (2, 1), (3, 3)] {
            board.write_low(0x7FFF, value, 0);
            board.update_map(&mut map);
            assert_eq!(map.chr[0], bank * 0x2000, "{value}");
        }
    }
}
