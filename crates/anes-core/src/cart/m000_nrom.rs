//! Mapper 0: NROM (nesdev "NROM"). 16 or 32 KiB of PRG ROM (16 KiB is mirrored at $C000), 8 KiB of
//! CHR, wired mirroring, no registers.

use super::map::{BoardConfig, MemoryMap};
use super::mapper::Mapper;

/// NROM has no registers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Nrom;

impl Mapper for Nrom {
    type State = [u8; 0];

    fn state(&self) -> &[u8; 0] {
        &[]
    }

    fn state_mut(&mut self) -> &mut [u8; 0] {
        &mut []
    }

    /// The board in its power-on state.
    fn new(_config: BoardConfig) -> Self {
        Nrom
    }

    /// Points every window of `map` at the banks the registers select.
    fn update_map(&self, map: &mut MemoryMap) {
        // A 16 KiB ROM appears twice: the bank number wraps modulo the ROM size.
        map.set_prg_32k(0);
        map.set_chr_8k(0);
    }
}
