//! Mapper 93: Sunsoft-2 on the Sunsoft-3R board (nesdev "INES Mapper 093"). One register at
//! $8000-$FFFF, `.PPP ...E`: P selects the 16 KiB PRG bank at $8000, $C000-$FFFF holds the last
//! bank; E enables the 8 KiB of CHR RAM (clear: pattern writes are lost and reads are open bus,
//! the address's low byte, as on mapper 185: [`MemoryMap::chr_open_bus`]); wired mirroring; bus
//! conflicts.

use super::board::{BoardConfig, MemoryMap};

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

impl Sunsoft2_3r {
    /// The board in its power-on state.
    pub fn new(_config: BoardConfig) -> Self {
        Sunsoft2_3r { state: Sunsoft2_3rState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true (the map must be recomputed).
    pub fn write_register(&mut self, value: u8) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.register >> 4) & 7);
        let last_16k = map.prg_bank_from_end(2) / 2;
        map.set_prg_16k(1, last_16k);
        map.set_chr_8k(0);
        if self.state.register & 1 == 0 {
            map.set_chr_open_bus();
        }
        map.bus_conflicts = true;
    }

    /// The register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(&self.state)
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::bytes_of_mut(&mut self.state)
    }
}
