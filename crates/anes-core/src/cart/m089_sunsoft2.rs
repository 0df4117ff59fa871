//! Mapper 89: Sunsoft-2 on the Sunsoft-3 board (nesdev "INES Mapper 089"). One register at
//! $8000-$FFFF, `CPPP MCCC`: P selects the 16 KiB PRG bank at $8000 ($C000-$FFFF holds the last
//! bank), bit 7 and bits 0-2 the 8 KiB CHR bank (bit 7 its high bit), M the single-screen page;
//! bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};
use super::rom_info::Mirroring;

crate::layout::state_struct! {
    /// Sunsoft-2 (Sunsoft-3 board) register.
    pub struct Sunsoft2State {
        /// The last value written at $8000-$FFFF (after the bus conflict).
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft2State>() == 1);

/// Sunsoft-2 on the Sunsoft-3 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sunsoft2 {
    state: Sunsoft2State,
}

impl Mapper for Sunsoft2 {
    state_in!(state: Sunsoft2State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Sunsoft2 { state: Sunsoft2State::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true (the map must be recomputed).
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        map.set_prg_16k(0, (r >> 4) & 7);
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        map.set_chr_8k((r >> 7) << 3 | (r & 7));
        map.set_mirroring(if r & 0x08 != 0 { Mirroring::SingleScreenB } else { Mirroring::SingleScreenA });
        map.bus_conflicts = true;
    }
}
