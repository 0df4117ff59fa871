//! The incremental part of the memory digest, as plain data.

/// The incremental part of the digest kept by the console: work RAM's sum, and whether the memory sums
/// (this one and the cartridge's) must be recomputed before they can be trusted. Not state.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MemoryDigest {
    pub ram: u64,
    pub stale: bool,
}
