//! The incremental part of the memory digest, as plain data.

/// The incremental part of the digest kept by the console: work RAM's sum, and whether the memory sums
/// (this one and the cartridge's) must be recomputed before they can be trusted. Not state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MemoryDigest {
    pub ram: u64,
    pub stale: bool,
    /// The sum of the PPU's registers and secondary OAM as it was when the PPU last marked its
    /// digest fresh (`Ppu::digest_stale` says whether it still is).
    pub ppu: u64,
    /// The sum of primary OAM and palette RAM, kept the same way (`Ppu::tables_digest_stale`).
    pub ppu_tables: u64,
    /// The APU section's sum, kept the same way (`Apu::digest_stale`).
    pub apu: u64,
    /// The board registers' sum (the mapper section), kept the same way
    /// (`Cartridge::mapper_digest_stale`).
    pub mapper: u64,
    /// [`Cartridge::ticked`](crate::Cartridge::ticked) as it was when `mapper` was kept.
    pub board_ticked: u64,
    /// `ppu + ppu_tables + apu + mapper`, what a digest takes while none of the four is stale.
    pub chips: u64,
    /// The ROM identity's sum, kept from power-on and every change of the identity (Game Genie
    /// codes).
    pub rom_identity: u64,
}
