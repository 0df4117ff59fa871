//! Mapper 94: UN1ROM (nesdev "INES Mapper 094"; Senjou no Ookami). UNROM with the bank select
//! shifted: bits 2-4 of a write to $8000-$FFFF select the 16 KiB PRG bank at $8000, the last 16 KiB
//! is fixed at $C000. 8 KiB CHR RAM, wired mirroring, bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// UN1ROM register.
    pub struct Un1romState {
        /// 16 KiB PRG bank at $8000 (bits 2-4 of the write).
        pub prg_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Un1romState>() == 1);

/// UN1ROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Un1rom {
    state: Un1romState,
}

impl Mapper for Un1rom {
    state_in!(state: Un1romState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Un1rom { state: Un1romState::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.prg_bank = (value >> 2) & 7;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.prg_bank));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        map.set_chr_8k(0);
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn bits_2_to_4_select_the_bank_at_8000() {
        let mut board =
            Un1rom::new(BoardConfig { mapper: 94, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x20000, 0x2000, 0, Mirroring::Vertical);
        for (value, bank) in [(0x00u8, 0usize), (0x04, 1), (0x03, 0), (0x1C, 7), (0xFF, 7), (0x08, 2)] {
            board.write_register(0x8000, value, 0);
            board.update_map(&mut map);
            assert_eq!(map.prg, [bank * 0x4000, bank * 0x4000 + 0x2000, 0x1C000, 0x1E000], "{value:#X}");
        }
    }
}
