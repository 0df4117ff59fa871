//! Mapper 3: CNROM (nesdev "CNROM"). Fixed 16/32 KiB PRG, an 8 KiB CHR bank selected by any write to
//! $8000-$FFFF, wired mirroring. The security-diode variants are not modelled.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// CNROM registers.
    pub struct CnromState {
        /// 8 KiB CHR bank (wraps modulo the CHR size).
        pub chr_bank: u8,
    }
}

const _: () = assert!(core::mem::size_of::<CnromState>() == 1);

/// CNROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cnrom {
    state: CnromState,
    bus_conflicts: bool,
}

impl Mapper for Cnrom {
    state_in!(state: CnromState);

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self {
        // NES 2.0 submapper 2 declares bus conflicts (AND); 0 (unspecified) and 1 are modelled without.
        Cnrom { state: CnromState::default(), bus_conflicts: config.submapper == 2 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.chr_bank = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(0);
        map.set_chr_8k(usize::from(self.state.chr_bank));
        map.bus_conflicts = self.bus_conflicts;
    }
}
