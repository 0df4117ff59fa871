//! Mapper 93: Sunsoft-2 on the Sunsoft-3R board (nesdev "INES Mapper 093"). One register at
//! $8000-$FFFF, `.PPP ...E`: P selects the 16 KiB PRG bank at $8000, $C000-$FFFF holds the last
//! bank; E enables the 8 KiB of CHR RAM (clear: pattern writes are lost and reads are open bus,
//! the address's low byte, as on mapper 185: [`MemoryMap::chr_open_bus`]); wired mirroring; bus
//! conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Sunsoft-2 (3R board) register.
    pub struct Sunsoft2_3rState {
        /// The last value written at $8000-$FFFF (after the bus conflict).
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft2_3rState>() == 1);

/// Sunsoft-2 on the Sunsoft-3R board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sunsoft2_3r {
    state: Sunsoft2_3rState,
}

impl Mapper for Sunsoft2_3r {
    state_in!(state: Sunsoft2_3rState);

    /// Its CHR RAM can be disabled: reads then see open bus.
    fn chr_open_bus_page(&self, _chr_is_ram: bool) -> bool {
        true
    }

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Sunsoft2_3r { state: Sunsoft2_3rState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true (the map must be recomputed).
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.register >> 4) & 7);
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        map.set_chr_8k(0);
        if self.state.register & 1 == 0 {
            map.set_chr_open_bus();
        }
        map.bus_conflicts = true;
    }
}
