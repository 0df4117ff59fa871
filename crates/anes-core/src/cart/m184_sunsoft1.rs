//! Mapper 184: Sunsoft-1 (nesdev "INES Mapper 184"). One register at $6000-$7FFF, `.HHH .LLL`: L
//! selects the 4 KiB CHR bank at $0000, H the one at $1000. PRG is 32 KiB, unbanked; no PRG RAM
//! (reads of $6000-$7FFF are open bus); wired mirroring.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Sunsoft-1 register.
    pub struct Sunsoft1State {
        /// The last value written at $6000-$7FFF.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Sunsoft1State>() == 1);

/// Sunsoft-1 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sunsoft1 {
    state: Sunsoft1State,
}

impl Mapper for Sunsoft1 {
    state_in!(state: Sunsoft1State);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Sunsoft1 { state: Sunsoft1State::default() }
    }

    /// A CPU write to $4020-$7FFF; returns true when the map must be recomputed.
    fn write_low(&mut self, addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        if addr < 0x6000 {
            return false;
        }
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the register selects.
    fn update_map(&self, map: &mut MemoryMap) {
        let r = usize::from(self.state.register);
        map.set_prg_32k(0);
        map.set_chr_4k(0, r & 7);
        map.set_chr_4k(1, (r >> 4) & 7);
        // The register decodes $6000-$7FFF: no RAM answers there, whatever an iNES 1.0 header implies.
        map.set_prg_ram(0, false, false);
        map.low_registers = true;
    }
}
