//! Mapper 0: NROM (nesdev "NROM"). 16 or 32 KiB of PRG ROM (16 KiB is mirrored at $C000), 8 KiB of
//! CHR, wired mirroring, no registers.

use super::board::{BoardConfig, MemoryMap};

/// NROM has no registers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Nrom;

impl Nrom {
    /// The board in its power-on state.
    pub fn new(_config: BoardConfig) -> Self {
        Nrom
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        // A 16 KiB ROM appears twice: the bank number wraps modulo the ROM size.
        map.set_prg_32k(0);
        map.set_chr_8k(0);
    }

    /// The register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        &[]
    }

    /// The register state as mutable bytes (snapshot restore).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        &mut []
    }
}
