//! Mapper 7: AxROM (nesdev "AxROM"). A 32 KiB PRG bank (bits 0-2) and the single-screen nametable
//! page (bit 4) selected by any write to $8000-$FFFF; 8 KiB of CHR RAM.

use super::board::{BoardConfig, MemoryMap};
use super::header::Mirroring;

crate::layout::state_struct! {
    /// AxROM registers.
    pub struct AxromState {
        /// The last value written: bits 0-2 PRG bank, bit 4 CIRAM page.
        pub register: u8,
    }
}

const _: () = assert!(core::mem::size_of::<AxromState>() == 1);

/// AxROM board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Axrom {
    state: AxromState,
    bus_conflicts: bool,
}

impl Axrom {
    /// The board in its power-on state.
    pub fn new(config: BoardConfig) -> Self {
        // NES 2.0 submapper 2 (AOROM) has bus conflicts; 0 (unspecified) and 1 (ANROM) have none.
        Axrom { state: AxromState::default(), bus_conflicts: config.submapper == 2 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, value: u8) -> bool {
        self.state.register = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(usize::from(self.state.register & 0x07));
        map.set_chr_8k(0);
        map.set_mirroring(if self.state.register & 0x10 != 0 {
            Mirroring::SingleScreenB
        } else {
            Mirroring::SingleScreenA
        });
        map.bus_conflicts = self.bus_conflicts;
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
