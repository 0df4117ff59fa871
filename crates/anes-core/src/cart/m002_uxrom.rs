//! Mapper 2: UxROM (nesdev "UxROM"). A 16 KiB PRG bank at $8000 selected by any write to
//! $8000-$FFFF, the last 16 KiB fixed at $C000, 8 KiB of CHR RAM, wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// UxROM registers.
    pub struct UxromState {
        /// 16 KiB PRG bank at $8000 (all bits kept; the bank wraps modulo the ROM size).
        pub prg_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<UxromState>() == 1);

/// UxROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uxrom {
    state: UxromState,
    bus_conflicts: bool,
}

impl Mapper for Uxrom {
    state_in!(state: UxromState);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        // NES 2.0 submapper 2 declares bus conflicts (AND); 0 (unspecified) and 1 are modelled without.
        Uxrom { state: UxromState::default(), bus_conflicts: config.submapper == 2 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.prg_bank = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.prg_bank));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        map.set_chr_8k(0);
        map.bus_conflicts = self.bus_conflicts;
    }
}
