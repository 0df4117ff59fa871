//! The binary input-stream format (version 1), little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ANESINPT` |
//! | 8 | 2 | format version (1) |
//! | 10 | 2 | reserved, 0 |
//! | 12 | 4 | frame count F |
//! | 16 | 4 | run count R |
//! | 20 | 5·R | runs: `u16` length (1-65535), port 1, port 2, command |
//! | 20+5R | 32 | blake3 of every preceding byte |
//!
//! Consecutive identical frames are stored as one run; the run lengths must add up to F.

use thiserror::Error;

use super::{Command, FrameInput, InputStream};

/// First bytes of every input-stream file.
pub const INPUT_STREAM_MAGIC: [u8; 8] = *b"ANESINPT";
/// The version this build writes and reads.
pub const INPUT_STREAM_VERSION: u16 = 1;

const HEADER_LEN: usize = 20;
const RUN_LEN: usize = 5;
const CHECKSUM_LEN: usize = 32;

/// Why bytes are not a valid input stream.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputStreamError {
    /// Shorter than header and checksum.
    #[error("input stream is {len} bytes, shorter than the {min}-byte minimum (header and checksum)")]
    TooShort {
        /// Length found.
        len: usize,
        /// Minimum length.
        min: usize,
    },
    /// Not an anes input stream.
    #[error("bad magic at offset 0: expected \"ANESINPT\", found {found:02X?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// A version this build cannot read.
    #[error(
        "input stream format version {found} at offset 8 is not supported (this build reads version {supported})"
    )]
    UnsupportedVersion {
        /// Version found.
        found: u16,
        /// Version supported.
        supported: u16,
    },
    /// The length does not match the run count in the header.
    #[error("input stream is {len} bytes but its header (run count {runs} at offset 16) requires {expected}")]
    LengthMismatch {
        /// Length found.
        len: usize,
        /// Runs declared.
        runs: u32,
        /// Length required.
        expected: usize,
    },
    /// The checksum does not match: the file is damaged.
    #[error("input stream checksum mismatch (offset {offset}): the file is damaged")]
    ChecksumMismatch {
        /// Offset of the stored checksum.
        offset: usize,
    },
    /// A run of length zero.
    #[error("run {run} at offset {offset} has length 0")]
    EmptyRun {
        /// Index of the run.
        run: usize,
        /// Offset of the run.
        offset: usize,
    },
    /// A command byte no version defines.
    #[error(
        "run {run} at offset {offset} has unknown command byte {value:#04x} (0 none, 1 soft reset, 2 power cycle)"
    )]
    UnknownCommand {
        /// Index of the run.
        run: usize,
        /// Offset of the command byte.
        offset: usize,
        /// The byte.
        value: u8,
    },
    /// The runs add up to another frame count than the header's.
    #[error("runs add up to {actual} frames but the header (offset 12) declares {declared}")]
    FrameCountMismatch {
        /// Frames declared.
        declared: u32,
        /// Frames in the runs.
        actual: u64,
    },
}

impl InputStream {
    /// Encodes the stream in the binary format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut runs: Vec<(u16, FrameInput)> = Vec::new();
        for &frame in &self.frames {
            match runs.last_mut() {
                Some((len, last)) if *last == frame && *len < u16::MAX => *len += 1,
                _ => runs.push((1, frame)),
            }
        }
        let mut out = Vec::with_capacity(HEADER_LEN + runs.len() * RUN_LEN + CHECKSUM_LEN);
        out.extend_from_slice(&INPUT_STREAM_MAGIC);
        out.extend_from_slice(&INPUT_STREAM_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        let frame_count =
            u32::try_from(self.frames.len()).expect("input streams hold fewer than 2^32 frames");
        out.extend_from_slice(&frame_count.to_le_bytes());
        out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
        for (len, frame) in runs {
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&[frame.pads[0], frame.pads[1], frame.command as u8]);
        }
        let checksum = blake3::hash(&out);
        out.extend_from_slice(checksum.as_bytes());
        out
    }

    /// Decodes the binary format, verifying magic, version, lengths, checksum and every run.
    pub fn from_bytes(bytes: &[u8]) -> Result<InputStream, InputStreamError> {
        let min = HEADER_LEN + CHECKSUM_LEN;
        if bytes.len() < min {
            return Err(InputStreamError::TooShort { len: bytes.len(), min });
        }
        let magic: [u8; 8] = bytes[0..8].try_into().expect("8 bytes");
        if magic != INPUT_STREAM_MAGIC {
            return Err(InputStreamError::BadMagic { found: magic });
        }
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != INPUT_STREAM_VERSION {
            return Err(InputStreamError::UnsupportedVersion {
                found: version,
                supported: INPUT_STREAM_VERSION,
            });
        }
        let declared = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
        let runs = u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes"));
        let expected = usize::try_from(runs)
            .ok()
            .and_then(|r| r.checked_mul(RUN_LEN))
            .and_then(|r| r.checked_add(HEADER_LEN + CHECKSUM_LEN));
        let body_end = bytes.len() - CHECKSUM_LEN;
        if expected != Some(bytes.len()) {
            return Err(InputStreamError::LengthMismatch {
                len: bytes.len(),
                runs,
                expected: expected.unwrap_or(usize::MAX),
            });
        }
        if blake3::hash(&bytes[..body_end]).as_bytes() != &bytes[body_end..] {
            return Err(InputStreamError::ChecksumMismatch { offset: body_end });
        }
        let mut frames = Vec::with_capacity(declared.min(1 << 20) as usize);
        let mut total: u64 = 0;
        for (run, chunk) in bytes[HEADER_LEN..body_end].chunks_exact(RUN_LEN).enumerate() {
            let offset = HEADER_LEN + run * RUN_LEN;
            let len = u16::from_le_bytes([chunk[0], chunk[1]]);
            if len == 0 {
                return Err(InputStreamError::EmptyRun { run, offset });
            }
            let command = Command::from_u8(chunk[4]).ok_or(InputStreamError::UnknownCommand {
                run,
                offset: offset + 4,
                value: chunk[4],
            })?;
            total += u64::from(len);
            if total > u64::from(declared) {
                return Err(InputStreamError::FrameCountMismatch { declared, actual: total });
            }
            let frame = FrameInput { pads: [chunk[2], chunk[3]], command };
            frames.extend(std::iter::repeat_n(frame, usize::from(len)));
        }
        if total != u64::from(declared) {
            return Err(InputStreamError::FrameCountMismatch { declared, actual: total });
        }
        Ok(InputStream { frames })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_compress_and_round_trip() {
        let mut frames = vec![FrameInput::default(); 70_000];
        frames[5] = FrameInput { pads: [0x81, 0x02], command: Command::SoftReset };
        let stream = InputStream::from_frames(frames);
        let bytes = stream.to_bytes();
        // 70,000 frames: runs 5, 1, 65535, 64459 (a run holds at most 65,535 frames).
        assert_eq!(bytes.len(), HEADER_LEN + 4 * RUN_LEN + CHECKSUM_LEN);
        assert_eq!(InputStream::from_bytes(&bytes).unwrap(), stream);
    }

    #[test]
    fn damage_is_refused() {
        let stream = InputStream::from_frames(vec![FrameInput::buttons(1, 2); 3]);
        let mut bytes = stream.to_bytes();
        bytes[22] ^= 1;
        assert!(matches!(InputStream::from_bytes(&bytes), Err(InputStreamError::ChecksumMismatch { .. })));
        let bytes = stream.to_bytes();
        assert!(matches!(
            InputStream::from_bytes(&bytes[..bytes.len() - 1]),
            Err(InputStreamError::LengthMismatch { .. })
        ));
    }
}
