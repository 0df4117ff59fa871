//! The binary input-stream format (version 1), little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | magic `ANESINPT` |
//! | 8 | 2 | format version (1) |
//! | 10 | 2 | reserved, 0 (checked) |
//! | 12 | 4 | frame count F |
//! | 16 | 4 | run count R |
//! | 20 | 5·R | runs: `u16` length (1-65535), port 1, port 2, command |
//! | 20+5R | 32 | blake3 of every preceding byte |
//!
//! Consecutive identical frames are stored as one run; the run lengths must add up to F, so F lies
//! between R and 65535·R, which is checked before any run is read.

use thiserror::Error;

use super::{ConsoleCommand, FrameInput, InputStream};

/// First bytes of every input-stream file.
pub const INPUT_STREAM_MAGIC: [u8; 8] = *b"ANESINPT";
/// The version this build writes and reads.
pub const INPUT_STREAM_VERSION: u16 = 1;

/// The largest input-stream file this build reads (64 MiB: over 13 million runs; a two-hour movie
/// that changes its input every frame needs 2 MiB). Readers cap their reads here.
pub const MAX_INPUT_STREAM_LEN: usize = 64 << 20;

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
    /// Longer than any input stream this build reads.
    #[error("input stream is {len} bytes, longer than the {max}-byte limit")]
    TooLong {
        /// Length found.
        len: usize,
        /// [`MAX_INPUT_STREAM_LEN`].
        max: usize,
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
    /// Bytes the format reserves (written as zero) are not zero.
    #[error(
        "reserved bytes at offset {offset} are {found:02X?}, expected zero; \
         the file is damaged or was written by another tool"
    )]
    ReservedNotZero {
        /// Offset of the first reserved byte.
        offset: usize,
        /// The bytes found.
        found: [u8; 2],
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
    /// The header's frame count is more or fewer frames than its runs can hold (each holds 1-65535).
    #[error(
        "frame count {declared} at offset 12 is impossible for the {runs} runs declared at offset 16 \
         (they hold {least} to {most} frames)"
    )]
    FrameCountOutOfRange {
        /// Frames declared.
        declared: u32,
        /// Runs declared.
        runs: u32,
        /// The fewest frames the runs hold (one each).
        least: u32,
        /// The most frames the runs hold (65,535 each).
        most: u64,
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
    /// Encodes the stream in the binary format (a run longer than 65,535 frames is stored as several).
    pub fn to_bytes(&self) -> Vec<u8> {
        let chunks = |len: usize| len.div_ceil(usize::from(u16::MAX));
        let stored_runs: usize = self.runs().map(|run| chunks(run.len)).sum();
        let mut out = Vec::with_capacity(HEADER_LEN + stored_runs * RUN_LEN + CHECKSUM_LEN);
        out.extend_from_slice(&INPUT_STREAM_MAGIC);
        out.extend_from_slice(&INPUT_STREAM_VERSION.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        // A stream never holds more than MAX_FRAMES (u32::MAX) frames; runs fewer still.
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        out.extend_from_slice(&(stored_runs as u32).to_le_bytes());
        for run in self.runs() {
            let mut left = run.len;
            while left > 0 {
                let len = left.min(usize::from(u16::MAX));
                left -= len;
                out.extend_from_slice(&(len as u16).to_le_bytes());
                out.extend_from_slice(&[run.input.pads[0], run.input.pads[1], run.input.command as u8]);
            }
        }
        let checksum = blake3::hash(&out);
        out.extend_from_slice(checksum.as_bytes());
        out
    }

    /// Decodes the binary format, verifying magic, version, reserved bytes, lengths, checksum and every
    /// run. Memory follows the file's size (its runs), never the frame count it declares.
    pub fn from_bytes(bytes: &[u8]) -> Result<InputStream, InputStreamError> {
        let min = HEADER_LEN + CHECKSUM_LEN;
        if bytes.len() < min {
            return Err(InputStreamError::TooShort { len: bytes.len(), min });
        }
        if bytes.len() > MAX_INPUT_STREAM_LEN {
            return Err(InputStreamError::TooLong { len: bytes.len(), max: MAX_INPUT_STREAM_LEN });
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
        if bytes[10..12] != [0, 0] {
            return Err(InputStreamError::ReservedNotZero { offset: 10, found: [bytes[10], bytes[11]] });
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
        // Every run holds 1 to 65,535 frames: refuse a frame count the runs cannot add up to before
        // reading them.
        let most = u64::from(runs) * u64::from(u16::MAX);
        if u64::from(declared) < u64::from(runs) || u64::from(declared) > most {
            return Err(InputStreamError::FrameCountOutOfRange { declared, runs, least: runs, most });
        }
        if blake3::hash(&bytes[..body_end]).as_bytes() != &bytes[body_end..] {
            return Err(InputStreamError::ChecksumMismatch { offset: body_end });
        }
        let mut stream = InputStream::with_run_capacity(runs as usize);
        let mut total: u64 = 0;
        for (run, chunk) in bytes[HEADER_LEN..body_end].chunks_exact(RUN_LEN).enumerate() {
            let offset = HEADER_LEN + run * RUN_LEN;
            let len = u16::from_le_bytes([chunk[0], chunk[1]]);
            if len == 0 {
                return Err(InputStreamError::EmptyRun { run, offset });
            }
            let command = ConsoleCommand::from_u8(chunk[4]).ok_or(InputStreamError::UnknownCommand {
                run,
                offset: offset + 4,
                value: chunk[4],
            })?;
            total += u64::from(len);
            if total > u64::from(declared) {
                return Err(InputStreamError::FrameCountMismatch { declared, actual: total });
            }
            stream.push_repeated(FrameInput { pads: [chunk[2], chunk[3]], command }, usize::from(len));
        }
        if total != u64::from(declared) {
            return Err(InputStreamError::FrameCountMismatch { declared, actual: total });
        }
        Ok(stream)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Overwrites the checksum so a hand-made change is judged on its own, not as damage.
    fn reseal(bytes: &mut [u8]) {
        let body_end = bytes.len() - CHECKSUM_LEN;
        let checksum = blake3::hash(&bytes[..body_end]);
        bytes[body_end..].copy_from_slice(checksum.as_bytes());
    }

    #[test]
    fn runs_compress_and_round_trip() {
        let mut frames = vec![FrameInput::default(); 70_000];
        frames[5] = FrameInput { pads: [0x81, 0x02], command: ConsoleCommand::SoftReset };
        let stream = InputStream::from_frames(frames);
        let bytes = stream.to_bytes();
        // 70,000 frames: runs 5, 1, 65535, 64459 (a run holds at most 65,535 frames).
        assert_eq!(bytes.len(), HEADER_LEN + 4 * RUN_LEN + CHECKSUM_LEN);
        assert_eq!(u32::from_le_bytes(bytes[16..20].try_into().unwrap()), 4);
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

    /// The largest stream the format holds: 65,537 runs of 65,535 frames are 2^32 - 1 frames in a
    /// 320 KiB file. It loads as runs, in memory the size of the file.
    #[test]
    fn four_billion_frames_load_from_their_runs() {
        let runs = 65_537usize;
        let mut bytes = Vec::with_capacity(HEADER_LEN + runs * RUN_LEN + CHECKSUM_LEN);
        bytes.extend_from_slice(b"ANESINPT\x01\x00\x00\x00");
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        bytes.extend_from_slice(&(runs as u32).to_le_bytes());
        for run in 0..runs {
            bytes.extend_from_slice(&[0xFF, 0xFF, run as u8, 0, 0]);
        }
        bytes.extend_from_slice(&[0; CHECKSUM_LEN]);
        reseal(&mut bytes);
        let stream = InputStream::from_bytes(&bytes).unwrap();
        assert_eq!(stream.len(), u32::MAX as usize);
        assert_eq!(stream.runs().len(), runs);
        assert_eq!(stream.frame(65_534), FrameInput::buttons(0, 0));
        assert_eq!(stream.frame(65_535), FrameInput::buttons(1, 0));
        assert_eq!(stream.frame(u32::MAX as usize - 1), FrameInput::buttons(0, 0));
        assert_eq!(stream.frame(u32::MAX as usize), FrameInput::default());
        assert_eq!(stream.to_bytes(), bytes);
    }

    #[test]
    fn a_frame_count_the_runs_cannot_hold_is_refused_by_name() {
        let mut bytes = InputStream::from_frames(vec![FrameInput::buttons(1, 2); 3]).to_bytes();
        for declared in [u32::MAX, 65_536, 0] {
            bytes[12..16].copy_from_slice(&declared.to_le_bytes());
            reseal(&mut bytes);
            let err = InputStream::from_bytes(&bytes).unwrap_err();
            assert_eq!(
                err,
                InputStreamError::FrameCountOutOfRange { declared, runs: 1, least: 1, most: 65_535 }
            );
            assert!(err.to_string().contains("offset 12"), "{err}");
        }
        // Within the range but not what the runs add up to.
        bytes[12..16].copy_from_slice(&4u32.to_le_bytes());
        reseal(&mut bytes);
        assert_eq!(
            InputStream::from_bytes(&bytes),
            Err(InputStreamError::FrameCountMismatch { declared: 4, actual: 3 })
        );
    }

    #[test]
    fn reserved_bytes_must_be_zero() {
        let good = InputStream::from_frames(vec![FrameInput::buttons(1, 2); 3]).to_bytes();
        for (index, value) in [(10, 1u8), (11, 0x80)] {
            let mut bytes = good.clone();
            bytes[index] = value;
            reseal(&mut bytes);
            let err = InputStream::from_bytes(&bytes).unwrap_err();
            assert!(matches!(err, InputStreamError::ReservedNotZero { offset: 10, .. }), "{err:?}");
            assert!(err.to_string().contains("offset 10"), "{err}");
        }
    }

    #[test]
    fn non_canonical_runs_load_as_the_same_stream() {
        // Another writer may split a run; the stream is the same and re-encodes canonically.
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"ANESINPT\x01\x00\x00\x00");
        bytes.extend_from_slice(&5u32.to_le_bytes());
        bytes.extend_from_slice(&2u32.to_le_bytes());
        bytes.extend_from_slice(&[2, 0, 7, 0, 0, 3, 0, 7, 0, 0]);
        bytes.extend_from_slice(&[0; CHECKSUM_LEN]);
        reseal(&mut bytes);
        let stream = InputStream::from_bytes(&bytes).unwrap();
        assert_eq!(stream, InputStream::from_frames(vec![FrameInput::buttons(7, 0); 5]));
        assert_eq!(stream.runs().len(), 1);
    }
}
