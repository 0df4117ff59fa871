//! The header every stored checkpoint starts with (version 1), little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ANESCKPT` |
//! | 8 | 2 | format version (1) |
//! | 10 | 2 | pipeline id length L (1-64) |
//! | 12 | 8 | store epoch of the writer (the fencing token) |
//! | 20 | 8 | frame: sequence number of the next input record |
//! | 28 | 8 | CPU cycle at that frame boundary |
//! | 36 | 32 | state hash (blake3, the core's) |
//! | 68 | 8 | payload length P |
//! | 76 | 32 | payload checksum (blake3 of the payload) |
//! | 108 | L | pipeline id (ASCII) |
//! | 108+L | 32 | header checksum (blake3 of every preceding header byte) |
//!
//! The payload (a core snapshot) follows. A store reads and checks the header first: the fencing check
//! needs nothing else, so a refused write never has its payload read.

use thiserror::Error;

/// First bytes of every stored checkpoint.
pub const CHECKPOINT_MAGIC: [u8; 8] = *b"ANESCKPT";
/// The header version this build writes and reads.
pub const CHECKPOINT_VERSION: u16 = 1;
/// Largest payload a store accepts or loads (a core snapshot is tens of KiB).
pub const MAX_PAYLOAD_LEN: u64 = 64 << 20;
/// Longest pipeline id (the configuration's limit).
pub const MAX_PIPELINE_ID_LEN: usize = 64;

const FIXED_LEN: usize = 108;
const CHECKSUM_LEN: usize = 32;

/// The header of a stored checkpoint.
///
/// ```
/// use anes_ops::store::CheckpointHeader;
/// let payload = b"snapshot bytes";
/// let header = CheckpointHeader::for_payload("p1", 3, 600, 17_870_000, [7; 32], payload);
/// let bytes = header.encode();
/// let (parsed, len) = CheckpointHeader::decode(&bytes).unwrap();
/// assert_eq!((parsed, len), (header.clone(), bytes.len()));
/// assert!(header.check_payload(payload).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointHeader {
    /// The pipeline the checkpoint belongs to; a store refuses another pipeline's.
    pub pipeline_id: String,
    /// The writer's store epoch (its fencing token).
    pub epoch: u64,
    /// Sequence number of the next input record (the frame the checkpoint stands before).
    pub frame: u64,
    /// CPU cycle at that frame boundary.
    pub cpu_cycle: u64,
    /// State hash both workers reported.
    pub state_hash: [u8; 32],
    /// Payload length in bytes.
    pub payload_len: u64,
    /// blake3 of the payload.
    pub payload_checksum: [u8; 32],
}

/// Why bytes are not a valid checkpoint header or payload.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HeaderError {
    /// Fewer bytes than a header needs.
    #[error("checkpoint header truncated: {len} bytes, at least {needed} needed")]
    Truncated {
        /// Bytes the header had.
        len: usize,
        /// The smallest header length the format allows.
        needed: usize,
    },
    /// Not a checkpoint.
    #[error("bad magic at offset 0: expected \"ANESCKPT\", found {found:02X?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// A version this build cannot read.
    #[error(
        "checkpoint format version {found} at offset 8 is not supported (this build reads {CHECKPOINT_VERSION})"
    )]
    UnsupportedVersion {
        /// The format version the header declares.
        found: u16,
    },
    /// The pipeline id's length or characters are not allowed.
    #[error(
        "pipeline id at offset 108 is invalid (length {len}; 1-64 letters, digits, '-', '_', '.', starting with a letter or digit)"
    )]
    BadPipelineId {
        /// The pipeline id's length the header declares.
        len: usize,
    },
    /// The payload length is beyond what a store accepts.
    #[error("payload length {len} at offset 68 exceeds the {MAX_PAYLOAD_LEN}-byte limit")]
    PayloadTooLong {
        /// The payload length the header declares.
        len: u64,
    },
    /// The header's own checksum does not match: it is damaged.
    #[error("checkpoint header checksum mismatch at offset {offset}: the header is damaged")]
    HeaderChecksum {
        /// Offset of the stored checksum.
        offset: usize,
    },
    /// The payload is shorter or longer than the header says (a torn write).
    #[error("payload is {found} bytes but the header declares {declared}: the file is torn")]
    PayloadLength {
        /// Payload bytes present after the header.
        found: u64,
        /// Payload bytes the header declares.
        declared: u64,
    },
    /// The payload's checksum does not match the header's.
    #[error("payload checksum mismatch: the payload is damaged")]
    PayloadChecksum,
}

/// The rule [`valid_pipeline_id`] applies, as a refusal states it.
pub const PIPELINE_ID_RULE: &str = "use 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit (the id names the pipeline's folder in the data directory, its keys and objects in a store: \".\" or \"..\" would name another folder)";

/// True for an id the configuration accepts: 1-64 ASCII letters, digits, `-`, `_`, `.`, starting with
/// a letter or digit.
///
/// ```
/// use anes_ops::store::valid_pipeline_id;
/// assert!(valid_pipeline_id("replay-1.eu"));
/// assert!(!valid_pipeline_id(".."));
/// assert!(!valid_pipeline_id("."));
/// assert!(!valid_pipeline_id(".hidden"));
/// assert!(!valid_pipeline_id("a/b"));
/// ```
pub fn valid_pipeline_id(id: &str) -> bool {
    id.len() <= MAX_PIPELINE_ID_LEN
        && id.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

impl CheckpointHeader {
    /// The header of `payload` written by `pipeline_id` at `epoch`.
    pub fn for_payload(
        pipeline_id: &str,
        epoch: u64,
        frame: u64,
        cpu_cycle: u64,
        state_hash: [u8; 32],
        payload: &[u8],
    ) -> CheckpointHeader {
        CheckpointHeader {
            pipeline_id: pipeline_id.to_string(),
            epoch,
            frame,
            cpu_cycle,
            state_hash,
            payload_len: payload.len() as u64,
            payload_checksum: *blake3::hash(payload).as_bytes(),
        }
    }

    /// Length of the encoded header.
    pub fn encoded_len(&self) -> usize {
        FIXED_LEN + self.pipeline_id.len() + CHECKSUM_LEN
    }

    /// The header's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len());
        out.extend_from_slice(&CHECKPOINT_MAGIC);
        out.extend_from_slice(&CHECKPOINT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.pipeline_id.len() as u16).to_le_bytes());
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.frame.to_le_bytes());
        out.extend_from_slice(&self.cpu_cycle.to_le_bytes());
        out.extend_from_slice(&self.state_hash);
        out.extend_from_slice(&self.payload_len.to_le_bytes());
        out.extend_from_slice(&self.payload_checksum);
        out.extend_from_slice(self.pipeline_id.as_bytes());
        let checksum = blake3::hash(&out);
        out.extend_from_slice(checksum.as_bytes());
        out
    }

    /// Parses a header at the start of `bytes`; returns it and its length. Reads nothing past it.
    pub fn decode(bytes: &[u8]) -> Result<(CheckpointHeader, usize), HeaderError> {
        if bytes.len() < FIXED_LEN {
            return Err(HeaderError::Truncated { len: bytes.len(), needed: FIXED_LEN + CHECKSUM_LEN });
        }
        let magic: [u8; 8] = bytes[0..8].try_into().expect("8 bytes");
        if magic != CHECKPOINT_MAGIC {
            return Err(HeaderError::BadMagic { found: magic });
        }
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != CHECKPOINT_VERSION {
            return Err(HeaderError::UnsupportedVersion { found: version });
        }
        let id_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
        if id_len == 0 || id_len > MAX_PIPELINE_ID_LEN {
            return Err(HeaderError::BadPipelineId { len: id_len });
        }
        let total = FIXED_LEN + id_len + CHECKSUM_LEN;
        if bytes.len() < total {
            return Err(HeaderError::Truncated { len: bytes.len(), needed: total });
        }
        let body_end = FIXED_LEN + id_len;
        if blake3::hash(&bytes[..body_end]).as_bytes() != &bytes[body_end..total] {
            return Err(HeaderError::HeaderChecksum { offset: body_end });
        }
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let pipeline_id = std::str::from_utf8(&bytes[FIXED_LEN..body_end])
            .ok()
            .filter(|id| valid_pipeline_id(id))
            .ok_or(HeaderError::BadPipelineId { len: id_len })?
            .to_string();
        let payload_len = u64_at(68);
        if payload_len > MAX_PAYLOAD_LEN {
            return Err(HeaderError::PayloadTooLong { len: payload_len });
        }
        let header = CheckpointHeader {
            pipeline_id,
            epoch: u64_at(12),
            frame: u64_at(20),
            cpu_cycle: u64_at(28),
            state_hash: bytes[36..68].try_into().expect("32 bytes"),
            payload_len,
            payload_checksum: bytes[76..108].try_into().expect("32 bytes"),
        };
        Ok((header, total))
    }

    /// Checks a payload against the header's length and checksum.
    pub fn check_payload(&self, payload: &[u8]) -> Result<(), HeaderError> {
        if payload.len() as u64 != self.payload_len {
            return Err(HeaderError::PayloadLength {
                found: payload.len() as u64,
                declared: self.payload_len,
            });
        }
        if blake3::hash(payload).as_bytes() != &self.payload_checksum {
            return Err(HeaderError::PayloadChecksum);
        }
        Ok(())
    }

    /// Parses a whole stored checkpoint (header and payload, nothing after it).
    pub fn decode_blob(bytes: &[u8]) -> Result<(CheckpointHeader, &[u8]), HeaderError> {
        let (header, len) = CheckpointHeader::decode(bytes)?;
        let payload = &bytes[len..];
        header.check_payload(payload)?;
        Ok((header, payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> (CheckpointHeader, Vec<u8>) {
        let payload = (0..1000u32).map(|i| (i * 7) as u8).collect::<Vec<_>>();
        (CheckpointHeader::for_payload("pipe-1", 9, 600, 12_345, [3; 32], &payload), payload)
    }

    #[test]
    fn every_damaged_byte_is_detected() {
        let (header, payload) = sample();
        let mut blob = header.encode();
        blob.extend_from_slice(&payload);
        assert!(CheckpointHeader::decode_blob(&blob).is_ok());
        for i in (0..blob.len()).step_by(7) {
            let mut damaged = blob.clone();
            damaged[i] ^= 0x10;
            assert!(CheckpointHeader::decode_blob(&damaged).is_err(), "byte {i} flipped went unnoticed");
        }
        for len in 0..blob.len() {
            assert!(CheckpointHeader::decode_blob(&blob[..len]).is_err(), "torn at {len} went unnoticed");
        }
    }

    #[test]
    fn known_layout() {
        let (header, _) = sample();
        let bytes = header.encode();
        assert_eq!(&bytes[0..8], b"ANESCKPT");
        assert_eq!(u64::from_le_bytes(bytes[12..20].try_into().unwrap()), 9);
        assert_eq!(u64::from_le_bytes(bytes[20..28].try_into().unwrap()), 600);
        assert_eq!(&bytes[108..114], b"pipe-1");
        assert_eq!(bytes.len(), header.encoded_len());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = CheckpointHeader::decode_blob(&bytes);
        }

        #[test]
        fn arbitrary_bytes_after_a_valid_magic_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut bytes = b"ANESCKPT\x01\x00".to_vec();
            bytes.extend_from_slice(&tail);
            let _ = CheckpointHeader::decode_blob(&bytes);
        }
    }
}
