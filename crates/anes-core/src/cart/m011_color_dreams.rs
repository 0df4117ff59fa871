//! Mapper 11: Color Dreams (nesdev "Color Dreams"). Any write to $8000-$FFFF selects a 32 KiB PRG bank
//! (bits 0-1) and an 8 KiB CHR bank (bits 4-7). The board has bus conflicts.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Mapper, state_in};

crate::layout::state_struct! {
    /// Color Dreams registers.
    pub struct ColorDreamsState {
        /// The last value written: bits 0-1 PRG bank, bits 4-7 CHR bank.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<ColorDreamsState>() == 1);

/// Color Dreams board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ColorDreams {
    state: ColorDreamsState,
}

impl Mapper for ColorDreams {
    state_in!(state: ColorDreamsState);

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        ColorDreams { state: ColorDreamsState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    fn write_register(&mut self, _addr: u16, value: u8, _cpu_cycle: u64) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from(self.state.register & 0x03));
        map.set_chr_8k(usize::from(self.state.register >> 4));
        // nesdev "Color Dreams": every known board has bus conflicts; games write matching ROM bytes.
        map.bus_conflicts = true;
    }
}
