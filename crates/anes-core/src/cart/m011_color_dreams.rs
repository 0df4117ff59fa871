//! Mapper 11: Color Dreams (nesdev "Color Dreams"). Any write to $8000-$FFFF selects a 32 KiB PRG bank
//! (bits 0-1) and an 8 KiB CHR bank (bits 4-7). The board has bus conflicts.

use super::board::{BoardConfig, MemoryMap};

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

impl ColorDreams {
    /// The board in its power-on state.
    pub fn new(_config: BoardConfig) -> Self {
        ColorDreams { state: ColorDreamsState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, value: u8) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from(self.state.register & 0x03));
        map.set_chr_8k(usize::from(self.state.register >> 4));
        // nesdev "Color Dreams": every known board has bus conflicts; games write matching ROM bytes.
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
