//! Mapper 3: CNROM (nesdev "CNROM"). Fixed 16/32 KiB PRG, an 8 KiB CHR bank selected by any write to
//! $8000-$FFFF, wired mirroring. The security-diode variants are not modelled.

use super::board::{BoardConfig, MemoryMap};

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

impl Cnrom {
    /// The board in its power-on state.
    pub fn new(config: BoardConfig) -> Self {
        // NES 2.0 submapper 2 declares bus conflicts (AND); 0 (unspecified) and 1 are modelled without.
        Cnrom { state: CnromState::default(), bus_conflicts: config.submapper == 2 }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, value: u8) -> bool {
        self.state.chr_bank = value;
        true
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_32k(0);
        map.set_chr_8k(usize::from(self.state.chr_bank));
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
