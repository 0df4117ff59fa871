//! What a frame leaves: the state hash and the frame's record.

/// A 32-byte blake3 digest of machine state.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StateHash(pub [u8; 32]);

impl StateHash {
    /// The digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Lowercase hex, 64 characters, without allocating (for logs and `--json`).
    pub fn to_hex(&self) -> [u8; 64] {
        let mut out = [0u8; 64];
        crate::hex::encode_into(&self.0, &mut out);
        out
    }
}

impl core::fmt::Display for StateHash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let hex = self.to_hex();
        f.write_str(core::str::from_utf8(&hex).expect("hex is ASCII"))
    }
}

impl core::fmt::Debug for StateHash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "StateHash({self})")
    }
}

/// One frame's outcome: where the machine stopped and the hash of its whole state there. Plain data,
/// cheap to copy and compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameRecord {
    /// Frames completed since power-on.
    pub frame: u64,
    /// CPU cycles since power-on.
    pub cpu_cycle: u64,
    /// PPU scanline where the frame ended.
    pub ppu_scanline: u16,
    /// PPU dot where the frame ended.
    pub ppu_dot: u16,
    /// [`Nes::state_hash`](crate::Nes::state_hash) at the end of the frame.
    pub state_hash: StateHash,
}
