//! Mapper 66: GxROM (nesdev "GxROM"). Any write to $8000-$FFFF selects a 32 KiB PRG bank (bits 4-5)
//! and an 8 KiB CHR bank (bits 0-1). The board has bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// GxROM registers.
    pub struct GxromState {
        /// The last value written: bits 4-5 PRG bank, bits 0-1 CHR bank.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<GxromState>() == 1);

/// GxROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Gxrom {
    state: GxromState,
}

impl Mapper for Gxrom {
    state_in!(state: GxromState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Gxrom { state: GxromState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from((self.state.register >> 4) & 0x03));
        map.set_chr_8k(usize::from(self.state.register & 0x03));
        // nesdev "GxROM": the discrete-logic board has bus conflicts.
        map.bus_conflicts = true;
    }
}
