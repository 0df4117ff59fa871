//! Mapper 13: CPROM (nesdev "CPROM"). 32 KiB PRG fixed, 16 KiB of CHR RAM: $0000-$0FFF always its
//! first 4 KiB, $1000-$1FFF the 4 KiB bank that bits 0-1 of a write to $8000-$FFFF select. Bus
//! conflicts; wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// CPROM registers.
    pub struct CpromState {
        /// 4 KiB CHR RAM bank at $1000 (bits 0-1).
        pub chr_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<CpromState>() == 1);

/// The CHR RAM on a CPROM board: 16 KiB, whatever an iNES 1.0 header's default says.
pub(super) const CPROM_CHR_RAM_LEN: usize = 0x4000;

/// CPROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cprom {
    state: CpromState,
}

impl Mapper for Cprom {
    state_in!(state: CpromState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Cprom { state: CpromState::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true when the map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.chr_bank = value & 3;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(0);
        map.set_chr_4k(0, 0);
        map.set_chr_4k(1, usize::from(self.state.chr_bank & 3));
        map.bus_conflicts = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cart::rom_info::Mirroring;

    #[test]
    fn the_upper_pattern_table_follows_bits_0_1() {
        let mut board = Cprom::new(BoardConfig { mapper: 13, submapper: 0, chr_rom_size: 0, battery: false });
        let mut map = MemoryMap::new(0x8000, CPROM_CHR_RAM_LEN, 0, Mirroring::Vertical);
        for (value, bank) in [(0u8, 0usize), (1, 1), (2, 2), (3, 3), (0xFE, 2)] {
            board.write_register(0x8000, value, 0);
            board.update_map(&mut map);
            assert_eq!(map.chr[..4], [0, 0x400, 0x800, 0xC00], "$0000 stays on the first 4 KiB");
            assert_eq!(map.chr[4], bank * 0x1000, "value {value:#X}");
        }
    }
}
