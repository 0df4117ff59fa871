//! Machine state you can trust: the canonical blake3 state hash, per-section digests, and snapshots.
//!
//! All mutable state lives in plain-old-data blocks ([`Section`]s) with explicit layouts and no padding.
//! The state hash is blake3 over a fixed domain string, the ROM's identity and, for every section in
//! canonical order, its tag, version, length and digest (blake3 of its bytes). It never allocates. Layouts and the snapshot
//! format are documented in `docs/state-format.md`.

pub(crate) mod digest;
pub(crate) mod digest_keys;
mod fault;
mod fields;
pub(crate) mod machine;
pub(crate) mod memory_digest;
pub(crate) mod record;
pub(crate) mod section;
mod sections;
mod snapshot;

pub use crate::layout::{FieldLayout, StateField, StateLayout, assert_covers};
pub use fault::FaultError;
pub use fields::{field_name, mapper_layout, section_layout};
pub use machine::{ALIGNMENT_FROM_SEED, MachineState};
pub use record::{FrameRecord, StateHash};
pub use section::Section;
pub use snapshot::{
    SNAPSHOT_HEADER_LEN, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, SnapshotBufferError, SnapshotError,
};

use crate::nes::Nes;

/// Domain separation for the state hash; changes whenever the hashed layout changes.
const STATE_HASH_DOMAIN: &[u8] = b"anes state hash v2\0";

impl Nes {
    /// blake3 of all mutable state: the domain string, the ROM identity, and for every [`Section`] in
    /// canonical order its tag, version, length and digest (blake3 of its bytes, as returned by
    /// [`Nes::section_digests`]). Hashing sections separately lets blake3 use its wide SIMD path on the
    /// large memories and makes the section digests free once the hash is known. Allocation-free.
    pub fn state_hash(&self) -> StateHash {
        self.combine_digests(&self.section_digests())
    }

    /// One blake3 digest per section, in canonical order, so a mismatch names its section at once.
    pub fn section_digests(&self) -> [(Section, StateHash); Section::ALL.len()] {
        Section::ALL.map(|section| {
            let digest = match (section, self.cart.flash_digest()) {
                // A flash board's PRG RAM section is its flash, hashed when it changes.
                (Section::PrgRam, Some(flash)) => flash,
                _ => *blake3::hash(self.section_bytes(section)).as_bytes(),
            };
            (section, StateHash(digest))
        })
    }

    /// Both at once: the state hash and the section digests it was computed from.
    pub fn state_hash_and_digests(&self) -> (StateHash, [(Section, StateHash); Section::ALL.len()]) {
        let digests = self.section_digests();
        (self.combine_digests(&digests), digests)
    }

    fn combine_digests(&self, digests: &[(Section, StateHash); Section::ALL.len()]) -> StateHash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(STATE_HASH_DOMAIN);
        hasher.update(&self.rom_identity);
        for (section, digest) in digests {
            hasher.update(&section.tag());
            hasher.update(&section.version().to_le_bytes());
            hasher.update(&(self.section_bytes(*section).len() as u64).to_le_bytes());
            hasher.update(&digest.0);
        }
        StateHash(*hasher.finalize().as_bytes())
    }

    /// The ROM's identity: blake3 of its PRG and CHR ROM, of how its header wires the board
    /// (mapper, submapper, mirroring, battery, RAM sizes, a trainer), and of the Game Genie codes
    /// when any are plugged in ([`Nes::set_game_genie_codes`]). Snapshots of another identity are
    /// refused.
    pub fn rom_identity(&self) -> &[u8; 32] {
        &self.rom_identity
    }

    /// The record of the machine as it is now.
    pub fn frame_record(&self) -> FrameRecord {
        let (ppu_scanline, ppu_dot) = self.ppu_position();
        FrameRecord {
            frame: self.machine.frame,
            cpu_cycle: self.bus.cpu_cycle,
            ppu_scanline,
            ppu_dot,
            state_hash: self.state_hash(),
        }
    }
}
