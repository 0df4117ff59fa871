//! Mapper 70: Bandai's discrete board (nesdev "INES Mapper 070"). Any write to $8000-$FFFF,
//! `PPPP CCCC`, selects the 16 KiB PRG bank at $8000 (P) and the 8 KiB CHR bank (C); the last 16 KiB
//! is fixed at $C000; mirroring is wired. The ROM drives the data bus too: bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Mapper 70 register.
    pub struct Bandai70State {
        /// The last value written (after the bus conflict): bits 4-7 PRG bank, bits 0-3 CHR bank.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Bandai70State>() == 1);

/// Mapper 70 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Bandai70 {
    state: Bandai70State,
}

impl Mapper for Bandai70 {
    state_in!(state: Bandai70State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Bandai70 { state: Bandai70State::default() }
    }

    /// A CPU write to $8000-$FFFF (after the bus conflict); returns true: the map changes.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.register >> 4));
        map.set_prg_16k(1, map.prg_bank_from_end(2) / 2);
        map.set_chr_8k(usize::from(self.state.register & 0x0F));
        map.bus_conflicts = true;
    }
}
