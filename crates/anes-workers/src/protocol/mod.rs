//! The worker protocol: what a pipeline and an `anes worker` say to each other over the child's stdin
//! and stdout or a TCP connection. Versioned, so a later build (or a canary of another build) can be
//! driven by it. The messages are `anes_pipeline::protocol`'s (re-exported here: the pipeline's rules
//! speak them); this module is their codec.
//!
//! The child speaks first: [`Reply::Hello`] names the protocol version and the build (crate version,
//! git commit if the build saw one, [`EMULATION_EPOCH`]). The parent then sends [`WorkerCommand::Load`] with
//! the ROM; the child answers [`Reply::Loaded`] with the ROM identity and its power-on record. After
//! that, every [`WorkerCommand::Frames`] batch is answered by one [`Reply::Record`] per frame (frame, CPU
//! cycle, PPU scanline/dot, state hash), in order, and a [`Reply::Snapshot`] after every frame that
//! completes a checkpoint interval. Commands are handled strictly in order, so every reply to a command
//! comes after every reply to the commands before it.
//!
//! Inspection (what `anes canary` uses to localize a difference between two builds, instruction by
//! instruction, through the lockstep runner): [`WorkerCommand::BeginFrame`], [`WorkerCommand::StepInstruction`],
//! [`WorkerCommand::Probe`], [`WorkerCommand::Record`], [`WorkerCommand::Disassemble`] and [`WorkerCommand::Picture`] each get
//! exactly one reply, so a parent can drive a child as if it were a machine of its own
//! (`anes_ops::canary::RemoteMachine`).
//!
//! Two encodings of the same messages:
//! - **binary** (the default): frames of `u32` little-endian length, then a tag byte and the payload
//!   (layouts in [`encode_command`] / [`encode_reply`]), then a checksum of the length and the contents
//!   ([`FRAME_CHECKSUM_LEN`] bytes: blake3, first 8), so a byte damaged anywhere in a message is detected
//!   rather than read as another value; at most [`MAX_FRAME_LEN`] bytes of contents;
//! - **JSON lines**: one JSON object per line, `{"type": "record", ...}`, byte strings in hex, unknown
//!   fields refused; for people and for tools in other languages; at most [`MAX_JSON_LINE_LEN`] bytes.
//!
//! Both encodings have the same limits, checked when a command is decoded: frames per batch
//! ([`MAX_BATCH_FRAMES`]), stall duration ([`MAX_STALL_MILLIS`]) and message size (one MAX_FRAME_LEN
//! binary frame; the JSON line limit is that message with its byte strings in hex).
//!
//! Decoding never panics: a truncated, oversized, damaged or malformed frame is a [`ProtocolError`].
//!
//! ```
//! use anes_workers::protocol::{WorkerCommand, WireInput, decode_command, encode_command, read_frame};
//! let command = WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0x08, 0, 0])] };
//! let mut bytes = Vec::new();
//! encode_command(&command, &mut bytes);
//! let mut frame = Vec::new();
//! assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
//! assert_eq!(decode_command(&frame).unwrap(), command);
//! assert_eq!(serde_json::to_string(&command).unwrap(), r#"{"type":"frames","first_seq":0,"inputs":[[8,0,0]]}"#);
//! ```

mod binary;
pub(crate) mod frame;
mod json;
#[cfg(test)]
mod tests;

pub use anes_pipeline::protocol::{
    BuildInfo, EMULATION_EPOCH, PROTOCOL_VERSION, Reply, WireInput, WireProbe, WireRecord, WorkerCommand,
};
pub use binary::{decode_command, decode_reply, encode_command, encode_reply};
pub use frame::{read_frame, read_hello_frame};
pub use json::{command_from_json, read_line, reply_from_json};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// First bytes of the [`Reply::Hello`] payload in the binary encoding.
pub const HELLO_MAGIC: [u8; 4] = *b"ANWP";

/// Largest binary frame accepted (tag and payload), so a garbage length cannot allocate gigabytes.
pub const MAX_FRAME_LEN: usize = 16 << 20;

/// Longest JSON line accepted (without its newline): the largest binary message with its byte strings
/// in hex (twice as long), plus room for the field names. A longer line is read to its end without
/// being kept.
pub const MAX_JSON_LINE_LEN: usize = 2 * MAX_FRAME_LEN + (64 << 10);

/// Most frames in one [`WorkerCommand::Frames`] batch.
pub const MAX_BATCH_FRAMES: usize = 1 << 16;

/// Longest [`WorkerCommand::Stall`]: one hour, as the service's drill endpoint allows.
pub const MAX_STALL_MILLIS: u32 = 3_600_000;

/// Bytes of the checksum after each binary frame.
pub const FRAME_CHECKSUM_LEN: usize = 8;

/// The contents of a heartbeat frame: a remote coordinator sends one when it had nothing else to send
/// for a while, so its worker tells a quiet coordinator from one that vanished behind a partition. A
/// worker skips it without a reply (binary encoding only); no command's tag is `A`.
pub const HEARTBEAT_FRAME: [u8; 4] = *b"ANHB";

/// Appends a heartbeat frame ([`HEARTBEAT_FRAME`], framed and checksummed) to `out`.
pub fn encode_heartbeat(out: &mut Vec<u8>) {
    let start = frame::begin_frame(out);
    out.extend_from_slice(&HEARTBEAT_FRAME);
    frame::end_frame(out, start);
}

/// Why bytes are not a protocol message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    /// A frame longer than [`MAX_FRAME_LEN`].
    #[error("frame of {len} bytes is longer than the {max}-byte limit")]
    FrameTooLong {
        /// Declared length.
        len: u64,
        /// The largest length this build accepts, in bytes.
        max: usize,
    },
    /// An empty frame (no tag byte).
    #[error("empty frame: no tag byte")]
    EmptyFrame,
    /// A tag no version of the protocol defines.
    #[error("unknown message tag {0:#04x}")]
    UnknownTag(u8),
    /// The payload ended before a field.
    #[error("message {message}: payload ends before field {field}")]
    Truncated {
        /// Message name.
        message: &'static str,
        /// Field name.
        field: &'static str,
    },
    /// Bytes left after the last field.
    #[error("message {message}: {extra} bytes after the last field")]
    TrailingBytes {
        /// Message name.
        message: &'static str,
        /// Bytes left.
        extra: usize,
    },
    /// A field with an impossible value.
    #[error("message {message}: field {field}: {problem}")]
    BadField {
        /// Message name.
        message: &'static str,
        /// Field name.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// A JSON line that is not a message.
    #[error("JSON line: {0}")]
    Json(String),
    /// The stream ended in the middle of a frame.
    #[error("stream ended {missing} bytes before the end of a frame")]
    UnexpectedEof {
        /// Bytes missing.
        missing: usize,
    },
    /// A binary frame whose checksum does not match its length and contents: damaged on the way.
    #[error("frame of {len} bytes (tag {tag:#04x}): checksum mismatch, the frame is damaged")]
    ChecksumMismatch {
        /// Declared length of the contents.
        len: usize,
        /// The first byte of the contents (0 for an empty frame).
        tag: u8,
    },
    /// A JSON line longer than [`MAX_JSON_LINE_LEN`] (read to its end and dropped).
    #[error("JSON line of more than {max} bytes")]
    LineTooLong {
        /// The largest length this build accepts, in bytes.
        max: usize,
    },
    /// Reading or writing the stream failed.
    #[error("{0}")]
    Io(String),
}

impl From<std::io::Error> for ProtocolError {
    fn from(e: std::io::Error) -> ProtocolError {
        ProtocolError::Io(e.to_string())
    }
}

/// Which encoding a stream uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// Length-prefixed binary frames.
    #[default]
    Binary,
    /// One JSON object per line.
    JsonLines,
}

/// Checks the limits every encoding shares that a message's layout does not bound already.
pub(crate) fn check_limits(command: WorkerCommand) -> Result<WorkerCommand, ProtocolError> {
    match &command {
        WorkerCommand::Frames { inputs, .. } => check_batch_len(inputs.len())?,
        // The binary decoder caps it as it reads; a JSON line is parsed whole first.
        WorkerCommand::Inject { spec } if spec.len() > binary::MAX_NAME_LEN => {
            return Err(ProtocolError::BadField {
                message: "inject",
                field: "spec",
                problem: format!(
                    "{} bytes is longer than the {}-byte limit",
                    spec.len(),
                    binary::MAX_NAME_LEN
                ),
            });
        }
        WorkerCommand::Stall { millis } if *millis > MAX_STALL_MILLIS => {
            return Err(ProtocolError::BadField {
                message: "stall",
                field: "millis",
                problem: format!("{millis} ms is longer than the {MAX_STALL_MILLIS} ms limit"),
            });
        }
        _ => {}
    }
    Ok(command)
}

pub(crate) fn check_batch_len(count: usize) -> Result<(), ProtocolError> {
    if count > MAX_BATCH_FRAMES {
        return Err(ProtocolError::BadField {
            message: "frames",
            field: "count",
            problem: format!("{count} frames in one batch (at most {MAX_BATCH_FRAMES})"),
        });
    }
    Ok(())
}

/// The binary encoding's message tags: commands below 0x80, replies above.
pub(crate) mod tag {
    pub const LOAD: u8 = 0x01;
    pub const FRAMES: u8 = 0x02;
    pub const RESTORE: u8 = 0x03;
    pub const SNAPSHOT_REQUEST: u8 = 0x04;
    pub const INJECT: u8 = 0x05;
    pub const STALL: u8 = 0x06;
    pub const SHUTDOWN: u8 = 0x07;
    pub const BEGIN_FRAME: u8 = 0x08;
    pub const STEP_INSTRUCTION: u8 = 0x09;
    pub const PROBE_REQUEST: u8 = 0x0A;
    pub const RECORD_REQUEST: u8 = 0x0B;
    pub const DISASSEMBLE: u8 = 0x0C;
    pub const PICTURE_REQUEST: u8 = 0x0D;
    pub const HELLO: u8 = 0x81;
    pub const LOADED: u8 = 0x82;
    pub const RECORD: u8 = 0x83;
    pub const SNAPSHOT: u8 = 0x84;
    pub const RESTORED: u8 = 0x85;
    pub const FAULT_FIRED: u8 = 0x86;
    pub const ERROR: u8 = 0x87;
    pub const PROBE: u8 = 0x88;
    pub const STEPPED: u8 = 0x89;
    pub const DISASSEMBLY: u8 = 0x8A;
    pub const PICTURE: u8 = 0x8B;
}
