//! Mapper 10: MMC4 on FxROM boards (nesdev "MMC4"). Like the MMC2 (see `m009_pxrom`) but with a
//! 16 KiB PRG bank at $8000 (the last 16 KiB fixed at $C000), 8 KiB of PRG RAM, and latch 0 triggered
//! by the whole rows $0FD8-$0FDF / $0FE8-$0FEF.

use super::board::{BoardConfig, MemoryMap};
use super::m009_pxrom::LatchChrState;

/// MMC4 board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fxrom {
    state: LatchChrState,
}

impl Fxrom {
    /// The board in its power-on state.
    pub fn new(_config: BoardConfig) -> Self {
        Fxrom { state: LatchChrState::default() }
    }

    /// A CPU write to $8000-$FFFF; returns true when the bank map must be recomputed.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8) -> bool {
        self.state.write_register(addr, value, 0x0F)
    }

    /// A PPU read of `addr`; returns true when a latch flipped.
    #[inline]
    pub fn observe_ppu_read(&mut self, addr: u16) -> bool {
        self.state.observe_ppu_read(addr, true)
    }

    /// Points every window of `map` at the banks the registers select.
    pub fn update_map(&self, map: &mut MemoryMap) {
        map.set_prg_16k(0, usize::from(self.state.prg_bank));
        map.set_prg_8k(2, map.prg_bank_from_end(2));
        map.set_prg_8k(3, map.prg_bank_from_end(1));
        self.state.update_chr_map(map);
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
