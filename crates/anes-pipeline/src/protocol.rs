//! The worker protocol: what a pipeline and an `anes worker` child say to each other over the child's
//! stdin and stdout. Versioned, so a later build (or a canary of another build) can be driven by it.
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

use anes_core::movie::{ConsoleCommand, FrameInput};
use anes_core::state::{FrameRecord, StateHash};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of this protocol. A child that speaks another version is refused at the handshake.
/// Version 2 added the binary frame's checksum; its hello is laid out as version 1's up to the version
/// field, so either version names the other's ([`read_hello_frame`]).
pub const PROTOCOL_VERSION: u16 = 2;

/// The core's emulation epoch ([`anes_core::EMULATION_EPOCH`]), which a child names in its hello:
/// two builds of one epoch must agree frame by frame.
pub const EMULATION_EPOCH: u32 = anes_core::EMULATION_EPOCH;

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

/// What the child says about the build it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Crate version of the child.
    pub version: String,
    /// Git commit of the child's source tree, when its build saw one.
    pub git_commit: Option<String>,
    /// [`EMULATION_EPOCH`] of the child.
    pub emulation_epoch: u32,
}

impl BuildInfo {
    /// This build.
    pub fn current() -> BuildInfo {
        BuildInfo {
            version: anes_lockstep::BUILD.crate_version.to_string(),
            git_commit: anes_lockstep::BUILD.git_commit.map(str::to_string),
            emulation_epoch: EMULATION_EPOCH,
        }
    }
}

/// A frame record on the wire (the core's [`FrameRecord`], hash in hex in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireRecord {
    /// Frames completed since power-on.
    pub frame: u64,
    /// CPU cycles since power-on.
    pub cpu_cycle: u64,
    /// PPU scanline.
    pub scanline: u16,
    /// PPU dot.
    pub dot: u16,
    /// State hash.
    #[serde(with = "hex32")]
    pub state_hash: [u8; 32],
}

impl From<FrameRecord> for WireRecord {
    fn from(r: FrameRecord) -> WireRecord {
        WireRecord {
            frame: r.frame,
            cpu_cycle: r.cpu_cycle,
            scanline: r.ppu_scanline,
            dot: r.ppu_dot,
            state_hash: r.state_hash.0,
        }
    }
}

impl From<WireRecord> for FrameRecord {
    fn from(r: WireRecord) -> FrameRecord {
        FrameRecord {
            frame: r.frame,
            cpu_cycle: r.cpu_cycle,
            ppu_scanline: r.scanline,
            ppu_dot: r.dot,
            state_hash: StateHash(r.state_hash),
        }
    }
}

/// One frame of input on the wire: `[port1, port2, command]` (command 0 none, 1 soft reset, 2 power
/// cycle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireInput(pub [u8; 3]);

impl From<FrameInput> for WireInput {
    fn from(f: FrameInput) -> WireInput {
        WireInput([f.pads[0], f.pads[1], f.command as u8])
    }
}

impl WireInput {
    /// The frame input, or `None` for a command byte no version defines.
    pub fn to_input(self) -> Option<FrameInput> {
        Some(FrameInput { pads: [self.0[0], self.0[1]], command: ConsoleCommand::from_u8(self.0[2])? })
    }
}

/// The cheap part of a machine's position, after an instruction (the lockstep runner's `Probe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WireProbe {
    /// CPU cycles since power-on.
    pub cpu_cycle: u64,
    /// PPU scanline.
    pub scanline: u16,
    /// PPU dot.
    pub dot: u16,
    /// Program counter of the next instruction.
    pub pc: u16,
    /// A, X, Y, SP and P packed as the lockstep runner packs them.
    pub registers: u64,
}

/// Workers run the anes core, whose scanline, dot and program counter fit the wire's 16 bits; the
/// lockstep `Probe` is wider for other cores. A value that does not fit (never from the anes core)
/// is sent as `u16::MAX`.
impl From<anes_lockstep::Probe> for WireProbe {
    fn from(p: anes_lockstep::Probe) -> WireProbe {
        let narrow = |value: u64| u16::try_from(value).unwrap_or(u16::MAX);
        WireProbe {
            cpu_cycle: p.cpu_cycle,
            scanline: narrow(u64::from(p.scanline)),
            dot: narrow(u64::from(p.dot)),
            pc: narrow(p.pc),
            registers: p.registers,
        }
    }
}

impl From<WireProbe> for anes_lockstep::Probe {
    fn from(p: WireProbe) -> anes_lockstep::Probe {
        anes_lockstep::Probe {
            cpu_cycle: p.cpu_cycle,
            scanline: u32::from(p.scanline),
            dot: u32::from(p.dot),
            pc: u64::from(p.pc),
            registers: p.registers,
        }
    }
}

/// Parent to child.
///
/// ```
/// use anes_pipeline::protocol::{WorkerCommand, WireInput, decode_command, encode_command, read_frame};
/// let command = WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0x08, 0, 0])] };
/// let mut bytes = Vec::new();
/// encode_command(&command, &mut bytes);
/// let mut frame = Vec::new();
/// assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
/// assert_eq!(decode_command(&frame).unwrap(), command);
/// assert_eq!(serde_json::to_string(&command).unwrap(), r#"{"type":"frames","first_seq":0,"inputs":[[8,0,0]]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkerCommand {
    /// Power a console on with this iNES ROM; send a snapshot after every frame whose sequence number
    /// plus one is a multiple of `checkpoint_every` (and one of the power-on state).
    Load {
        /// The iNES file.
        #[serde(with = "hex_bytes")]
        rom: Vec<u8>,
        /// Checkpoint interval in frames (at least 1).
        checkpoint_every: u64,
    },
    /// Run these frames; the first has sequence number `first_seq`, which must be the next one the
    /// child expects.
    Frames {
        /// Sequence number of the first frame.
        first_seq: u64,
        /// The inputs, at most [`MAX_BATCH_FRAMES`].
        inputs: Vec<WireInput>,
    },
    /// Restore this snapshot; the next frame expected is `seq`.
    Restore {
        /// Sequence number of the next frame after the snapshot.
        seq: u64,
        /// The snapshot.
        #[serde(with = "hex_bytes")]
        snapshot: Vec<u8>,
    },
    /// Send a snapshot of the state now.
    Snapshot,
    /// Inject a fault (the lockstep runner's spec: `flip:ram:0x0010:3`, `stall:5`, `input:0:7`), at the
    /// CPU cycle after `@` or, without one, at the start of the next frame.
    Inject {
        /// The fault spec.
        spec: String,
    },
    /// Stop answering for this many milliseconds (a drill: the worker falls behind its twin). `anes
    /// worker` ends the stall, and itself, when its stdin closes meanwhile.
    Stall {
        /// Milliseconds, at most [`MAX_STALL_MILLIS`].
        millis: u32,
    },
    /// End the session: the worker sends nothing more and exits.
    Shutdown,
    /// Inspection: apply one frame's input (console command, then buttons) before the frame's first
    /// instruction. Answered by [`Reply::Probe`].
    BeginFrame {
        /// The input.
        input: WireInput,
    },
    /// Inspection: run one instruction. Answered by [`Reply::Stepped`]; an instruction that completes
    /// the frame advances the sequence number a later [`WorkerCommand::Frames`] must start from.
    StepInstruction,
    /// Inspection: where the machine is. Answered by [`Reply::Probe`].
    Probe,
    /// Inspection: the machine's record now (frame counter, position, state hash). Answered by
    /// [`Reply::Record`] with the next sequence number.
    Record,
    /// Inspection: the instruction at the program counter. Answered by [`Reply::Disassembly`].
    Disassemble,
    /// Inspection: the last completed picture. Answered by [`Reply::Picture`].
    Picture,
}

/// Child to parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// The handshake: always the first message.
    Hello {
        /// [`PROTOCOL_VERSION`] of the child.
        protocol_version: u16,
        /// The child's build.
        build: BuildInfo,
    },
    /// The ROM is loaded.
    Loaded {
        /// blake3 of the ROM's PRG and CHR data (the core's ROM identity).
        #[serde(with = "hex32")]
        rom_identity: [u8; 32],
        /// The power-on record.
        record: WireRecord,
    },
    /// The record at the end of frame `seq`.
    Record {
        /// Sequence number of the frame.
        seq: u64,
        /// Its record.
        record: WireRecord,
    },
    /// A snapshot of the state before frame `seq`.
    Snapshot {
        /// Sequence number of the next frame.
        seq: u64,
        /// The state hash of the snapshot.
        #[serde(with = "hex32")]
        state_hash: [u8; 32],
        /// The snapshot.
        #[serde(with = "hex_bytes")]
        bytes: Vec<u8>,
    },
    /// A snapshot was restored; this is the record of the restored state.
    Restored {
        /// Sequence number of the next frame.
        seq: u64,
        /// The restored machine's record (its hash is what recovery verifies).
        record: WireRecord,
    },
    /// An injected fault fired.
    FaultFired {
        /// Sequence number of the frame during which it fired.
        seq: u64,
        /// The fault with the CPU cycle it fired at (`flip:ram:0x0010:3@123456`).
        spec: String,
        /// Why the machine refused it, if it did.
        refused: Option<String>,
    },
    /// A command was refused; the child carries on with the next one.
    Error {
        /// What was wrong.
        message: String,
    },
    /// Answer to [`WorkerCommand::Probe`] and [`WorkerCommand::BeginFrame`].
    Probe {
        /// Where the machine is.
        probe: WireProbe,
    },
    /// Answer to [`WorkerCommand::StepInstruction`].
    Stepped {
        /// True when the instruction completed the frame.
        done: bool,
        /// Where the machine is after it.
        probe: WireProbe,
    },
    /// Answer to [`WorkerCommand::Disassemble`].
    Disassembly {
        /// The opcode byte at the program counter.
        opcode: u8,
        /// The instruction in the trace's notation (`LDA $0342 = 17`).
        text: String,
    },
    /// Answer to [`WorkerCommand::Picture`].
    Picture {
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
        /// 8-bit RGB triples, row by row.
        #[serde(with = "hex_bytes")]
        rgb: Vec<u8>,
    },
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

mod tag {
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

/// Appends one binary frame holding `command`: `len u32`, the contents (tag and payload), then the
/// frame's checksum (blake3 of `len` and the contents, first 8 bytes).
///
/// Layouts (little-endian; `bytes` is a `u32` length and the bytes, `str` the same in UTF-8):
/// `Load` 0x01: `checkpoint_every u64, rom bytes`; `Frames` 0x02: `first_seq u64, count u32,
/// count × [port1, port2, command]`; `Restore` 0x03: `seq u64, snapshot bytes`; `Snapshot` 0x04;
/// `Inject` 0x05: `spec str`; `Stall` 0x06: `millis u32`; `Shutdown` 0x07; `BeginFrame` 0x08:
/// `[port1, port2, command]`; `StepInstruction` 0x09; `Probe` 0x0A; `Record` 0x0B; `Disassemble` 0x0C;
/// `Picture` 0x0D.
pub fn encode_command(command: &WorkerCommand, out: &mut Vec<u8>) {
    let start = begin_frame(out);
    match command {
        WorkerCommand::Load { rom, checkpoint_every } => {
            out.push(tag::LOAD);
            out.extend_from_slice(&checkpoint_every.to_le_bytes());
            put_bytes(out, rom);
        }
        WorkerCommand::Frames { first_seq, inputs } => {
            out.push(tag::FRAMES);
            out.extend_from_slice(&first_seq.to_le_bytes());
            out.extend_from_slice(&(inputs.len() as u32).to_le_bytes());
            for input in inputs {
                out.extend_from_slice(&input.0);
            }
        }
        WorkerCommand::Restore { seq, snapshot } => {
            out.push(tag::RESTORE);
            out.extend_from_slice(&seq.to_le_bytes());
            put_bytes(out, snapshot);
        }
        WorkerCommand::Snapshot => out.push(tag::SNAPSHOT_REQUEST),
        WorkerCommand::Inject { spec } => {
            out.push(tag::INJECT);
            put_bytes(out, spec.as_bytes());
        }
        WorkerCommand::Stall { millis } => {
            out.push(tag::STALL);
            out.extend_from_slice(&millis.to_le_bytes());
        }
        WorkerCommand::Shutdown => out.push(tag::SHUTDOWN),
        WorkerCommand::BeginFrame { input } => {
            out.push(tag::BEGIN_FRAME);
            out.extend_from_slice(&input.0);
        }
        WorkerCommand::StepInstruction => out.push(tag::STEP_INSTRUCTION),
        WorkerCommand::Probe => out.push(tag::PROBE_REQUEST),
        WorkerCommand::Record => out.push(tag::RECORD_REQUEST),
        WorkerCommand::Disassemble => out.push(tag::DISASSEMBLE),
        WorkerCommand::Picture => out.push(tag::PICTURE_REQUEST),
    }
    end_frame(out, start);
}

/// Appends one binary frame holding `reply`, framed as [`encode_command`] frames a command.
///
/// Layouts: `Hello` 0x81: `magic "ANWP", protocol_version u16, emulation_epoch u32, version str,
/// git_commit str (empty: none)`; `Loaded` 0x82: `rom_identity [32], record`; `Record` 0x83: `seq u64,
/// record`; `Snapshot` 0x84: `seq u64, state_hash [32], bytes`; `Restored` 0x85: `seq u64, record`;
/// `FaultFired` 0x86: `seq u64, spec str, refused str (empty: none)`; `Error` 0x87: `message str`;
/// `Probe` 0x88: `probe`; `Stepped` 0x89: `done u8 (0 or 1), probe`; `Disassembly` 0x8A: `opcode u8,
/// text str`; `Picture` 0x8B: `width u32, height u32, rgb bytes`.
/// A record is `frame u64, cpu_cycle u64, scanline u16, dot u16, state_hash [32]` (52 bytes); a probe
/// `cpu_cycle u64, scanline u16, dot u16, pc u16, registers u64` (22 bytes).
pub fn encode_reply(reply: &Reply, out: &mut Vec<u8>) {
    let start = begin_frame(out);
    match reply {
        Reply::Hello { protocol_version, build } => {
            out.push(tag::HELLO);
            out.extend_from_slice(&HELLO_MAGIC);
            out.extend_from_slice(&protocol_version.to_le_bytes());
            out.extend_from_slice(&build.emulation_epoch.to_le_bytes());
            put_bytes(out, build.version.as_bytes());
            put_bytes(out, build.git_commit.as_deref().unwrap_or("").as_bytes());
        }
        Reply::Loaded { rom_identity, record } => {
            out.push(tag::LOADED);
            out.extend_from_slice(rom_identity);
            put_record(out, record);
        }
        Reply::Record { seq, record } => {
            out.push(tag::RECORD);
            out.extend_from_slice(&seq.to_le_bytes());
            put_record(out, record);
        }
        Reply::Snapshot { seq, state_hash, bytes } => {
            out.push(tag::SNAPSHOT);
            out.extend_from_slice(&seq.to_le_bytes());
            out.extend_from_slice(state_hash);
            put_bytes(out, bytes);
        }
        Reply::Restored { seq, record } => {
            out.push(tag::RESTORED);
            out.extend_from_slice(&seq.to_le_bytes());
            put_record(out, record);
        }
        Reply::FaultFired { seq, spec, refused } => {
            out.push(tag::FAULT_FIRED);
            out.extend_from_slice(&seq.to_le_bytes());
            put_bytes(out, spec.as_bytes());
            put_bytes(out, refused.as_deref().unwrap_or("").as_bytes());
        }
        Reply::Error { message } => {
            out.push(tag::ERROR);
            put_bytes(out, message.as_bytes());
        }
        Reply::Probe { probe } => {
            out.push(tag::PROBE);
            put_probe(out, probe);
        }
        Reply::Stepped { done, probe } => {
            out.push(tag::STEPPED);
            out.push(u8::from(*done));
            put_probe(out, probe);
        }
        Reply::Disassembly { opcode, text } => {
            out.push(tag::DISASSEMBLY);
            out.push(*opcode);
            put_bytes(out, text.as_bytes());
        }
        Reply::Picture { width, height, rgb } => {
            out.push(tag::PICTURE);
            out.extend_from_slice(&width.to_le_bytes());
            out.extend_from_slice(&height.to_le_bytes());
            put_bytes(out, rgb);
        }
    }
    end_frame(out, start);
}

fn put_probe(out: &mut Vec<u8>, p: &WireProbe) {
    out.extend_from_slice(&p.cpu_cycle.to_le_bytes());
    out.extend_from_slice(&p.scanline.to_le_bytes());
    out.extend_from_slice(&p.dot.to_le_bytes());
    out.extend_from_slice(&p.pc.to_le_bytes());
    out.extend_from_slice(&p.registers.to_le_bytes());
}

fn begin_frame(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    start
}

fn end_frame(out: &mut Vec<u8>, start: usize) {
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    let checksum = frame_checksum(&out[start..start + 4], &out[start + 4..]);
    out.extend_from_slice(&checksum);
}

/// blake3 of a frame's length bytes and contents, first [`FRAME_CHECKSUM_LEN`] bytes: the length is
/// covered too, so a damaged length reads other bytes as the frame and fails the check.
fn frame_checksum(len: &[u8], contents: &[u8]) -> [u8; FRAME_CHECKSUM_LEN] {
    let mut hasher = blake3::Hasher::new();
    hasher.update(len);
    hasher.update(contents);
    let mut out = [0; FRAME_CHECKSUM_LEN];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..FRAME_CHECKSUM_LEN]);
    out
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_record(out: &mut Vec<u8>, r: &WireRecord) {
    out.extend_from_slice(&r.frame.to_le_bytes());
    out.extend_from_slice(&r.cpu_cycle.to_le_bytes());
    out.extend_from_slice(&r.scanline.to_le_bytes());
    out.extend_from_slice(&r.dot.to_le_bytes());
    out.extend_from_slice(&r.state_hash);
}

/// Reads fields from a payload, naming the message and field in every error.
struct Fields<'a> {
    message: &'static str,
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], ProtocolError> {
        if self.rest.len() < n {
            return Err(ProtocolError::Truncated { message: self.message, field });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], ProtocolError> {
        let bytes = self.take(N, field)?;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn u16(&mut self, field: &'static str) -> Result<u16, ProtocolError> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, ProtocolError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, ProtocolError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], ProtocolError> {
        let len = self.u32(field)? as usize;
        self.take(len, field)
    }

    fn string(&mut self, field: &'static str) -> Result<String, ProtocolError> {
        let bytes = self.bytes(field)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::BadField {
            message: self.message,
            field,
            problem: "not UTF-8".to_string(),
        })
    }

    fn record(&mut self) -> Result<WireRecord, ProtocolError> {
        Ok(WireRecord {
            frame: self.u64("record.frame")?,
            cpu_cycle: self.u64("record.cpu_cycle")?,
            scanline: self.u16("record.scanline")?,
            dot: self.u16("record.dot")?,
            state_hash: self.array("record.state_hash")?,
        })
    }

    fn probe(&mut self) -> Result<WireProbe, ProtocolError> {
        Ok(WireProbe {
            cpu_cycle: self.u64("probe.cpu_cycle")?,
            scanline: self.u16("probe.scanline")?,
            dot: self.u16("probe.dot")?,
            pc: self.u16("probe.pc")?,
            registers: self.u64("probe.registers")?,
        })
    }

    fn finish<T>(self, value: T) -> Result<T, ProtocolError> {
        if self.rest.is_empty() {
            Ok(value)
        } else {
            Err(ProtocolError::TrailingBytes { message: self.message, extra: self.rest.len() })
        }
    }
}

fn split_tag(frame: &[u8]) -> Result<(u8, &[u8]), ProtocolError> {
    frame.split_first().map(|(t, rest)| (*t, rest)).ok_or(ProtocolError::EmptyFrame)
}

/// Checks the limits every encoding shares that a message's layout does not bound already.
fn check_limits(command: WorkerCommand) -> Result<WorkerCommand, ProtocolError> {
    match &command {
        WorkerCommand::Frames { inputs, .. } => check_batch_len(inputs.len())?,
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

fn check_batch_len(count: usize) -> Result<(), ProtocolError> {
    if count > MAX_BATCH_FRAMES {
        return Err(ProtocolError::BadField {
            message: "frames",
            field: "count",
            problem: format!("{count} frames in one batch (at most {MAX_BATCH_FRAMES})"),
        });
    }
    Ok(())
}

/// Decodes a binary frame's contents (tag and payload, without the length prefix and checksum) as a
/// command, within the protocol's limits.
pub fn decode_command(frame: &[u8]) -> Result<WorkerCommand, ProtocolError> {
    decode_command_unchecked(frame).and_then(check_limits)
}

fn decode_command_unchecked(frame: &[u8]) -> Result<WorkerCommand, ProtocolError> {
    let (tag, payload) = split_tag(frame)?;
    let fields = |message| Fields { message, rest: payload };
    match tag {
        tag::LOAD => {
            let mut f = fields("load");
            let checkpoint_every = f.u64("checkpoint_every")?;
            let rom = f.bytes("rom")?.to_vec();
            f.finish(WorkerCommand::Load { rom, checkpoint_every })
        }
        tag::FRAMES => {
            let mut f = fields("frames");
            let first_seq = f.u64("first_seq")?;
            let count = f.u32("count")? as usize;
            // Checked before the inputs are allocated, with the limit every encoding shares.
            check_batch_len(count)?;
            let body = f.take(count.saturating_mul(3), "inputs")?;
            let inputs = body.chunks_exact(3).map(|c| WireInput([c[0], c[1], c[2]])).collect();
            f.finish(WorkerCommand::Frames { first_seq, inputs })
        }
        tag::RESTORE => {
            let mut f = fields("restore");
            let seq = f.u64("seq")?;
            let snapshot = f.bytes("snapshot")?.to_vec();
            f.finish(WorkerCommand::Restore { seq, snapshot })
        }
        tag::SNAPSHOT_REQUEST => fields("snapshot").finish(WorkerCommand::Snapshot),
        tag::INJECT => {
            let mut f = fields("inject");
            let spec = f.string("spec")?;
            f.finish(WorkerCommand::Inject { spec })
        }
        tag::STALL => {
            let mut f = fields("stall");
            let millis = f.u32("millis")?;
            f.finish(WorkerCommand::Stall { millis })
        }
        tag::SHUTDOWN => fields("shutdown").finish(WorkerCommand::Shutdown),
        tag::BEGIN_FRAME => {
            let mut f = fields("begin_frame");
            let input = WireInput(f.array("input")?);
            f.finish(WorkerCommand::BeginFrame { input })
        }
        tag::STEP_INSTRUCTION => fields("step_instruction").finish(WorkerCommand::StepInstruction),
        tag::PROBE_REQUEST => fields("probe").finish(WorkerCommand::Probe),
        tag::RECORD_REQUEST => fields("record").finish(WorkerCommand::Record),
        tag::DISASSEMBLE => fields("disassemble").finish(WorkerCommand::Disassemble),
        tag::PICTURE_REQUEST => fields("picture").finish(WorkerCommand::Picture),
        other => Err(ProtocolError::UnknownTag(other)),
    }
}

/// Decodes a binary frame's contents (tag and payload) as a reply.
pub fn decode_reply(frame: &[u8]) -> Result<Reply, ProtocolError> {
    let (tag, payload) = split_tag(frame)?;
    let fields = |message| Fields { message, rest: payload };
    match tag {
        tag::HELLO => {
            let mut f = fields("hello");
            let magic: [u8; 4] = f.array("magic")?;
            if magic != HELLO_MAGIC {
                return Err(ProtocolError::BadField {
                    message: "hello",
                    field: "magic",
                    problem: format!("expected \"ANWP\", found {magic:02X?}: not an anes worker"),
                });
            }
            let protocol_version = f.u16("protocol_version")?;
            let emulation_epoch = f.u32("emulation_epoch")?;
            let version = f.string("version")?;
            let git_commit = Some(f.string("git_commit")?).filter(|s| !s.is_empty());
            f.finish(Reply::Hello {
                protocol_version,
                build: BuildInfo { version, git_commit, emulation_epoch },
            })
        }
        tag::LOADED => {
            let mut f = fields("loaded");
            let rom_identity = f.array("rom_identity")?;
            let record = f.record()?;
            f.finish(Reply::Loaded { rom_identity, record })
        }
        tag::RECORD => {
            let mut f = fields("record");
            let seq = f.u64("seq")?;
            let record = f.record()?;
            f.finish(Reply::Record { seq, record })
        }
        tag::SNAPSHOT => {
            let mut f = fields("snapshot");
            let seq = f.u64("seq")?;
            let state_hash = f.array("state_hash")?;
            let bytes = f.bytes("bytes")?.to_vec();
            f.finish(Reply::Snapshot { seq, state_hash, bytes })
        }
        tag::RESTORED => {
            let mut f = fields("restored");
            let seq = f.u64("seq")?;
            let record = f.record()?;
            f.finish(Reply::Restored { seq, record })
        }
        tag::FAULT_FIRED => {
            let mut f = fields("fault_fired");
            let seq = f.u64("seq")?;
            let spec = f.string("spec")?;
            let refused = Some(f.string("refused")?).filter(|s| !s.is_empty());
            f.finish(Reply::FaultFired { seq, spec, refused })
        }
        tag::ERROR => {
            let mut f = fields("error");
            let message = f.string("message")?;
            f.finish(Reply::Error { message })
        }
        tag::PROBE => {
            let mut f = fields("probe");
            let probe = f.probe()?;
            f.finish(Reply::Probe { probe })
        }
        tag::STEPPED => {
            let mut f = fields("stepped");
            let done = match f.array::<1>("done")?[0] {
                0 => false,
                1 => true,
                other => {
                    return Err(ProtocolError::BadField {
                        message: "stepped",
                        field: "done",
                        problem: format!("{other} is neither 0 nor 1"),
                    });
                }
            };
            let probe = f.probe()?;
            f.finish(Reply::Stepped { done, probe })
        }
        tag::DISASSEMBLY => {
            let mut f = fields("disassembly");
            let [opcode] = f.array("opcode")?;
            let text = f.string("text")?;
            f.finish(Reply::Disassembly { opcode, text })
        }
        tag::PICTURE => {
            let mut f = fields("picture");
            let width = f.u32("width")?;
            let height = f.u32("height")?;
            let rgb = f.bytes("rgb")?.to_vec();
            f.finish(Reply::Picture { width, height, rgb })
        }
        other => Err(ProtocolError::UnknownTag(other)),
    }
}

/// Reads one binary frame's contents from `reader` into `buf` and verifies its checksum. `Ok(false)` at
/// a clean end of stream (before the first byte of a frame).
pub fn read_frame(reader: &mut impl std::io::Read, buf: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    let Some(len) = read_contents(reader, buf)? else { return Ok(false) };
    verify_checksum(reader, len, buf)?;
    Ok(true)
}

/// Reads a child's first frame, its hello, into `buf`. Every version's hello starts with its tag, the
/// magic and the protocol version, and only a hello of this version is followed by this version's
/// checksum: a child of another version is read far enough to name its version (and refused by the
/// caller on [`decode_reply`]'s `Hello`), instead of being waited on for bytes it never sends.
pub fn read_hello_frame(reader: &mut impl std::io::Read, buf: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    let Some(len) = read_contents(reader, buf)? else { return Ok(false) };
    let this_version = buf.len() >= 7
        && buf[0] == tag::HELLO
        && buf[1..5] == HELLO_MAGIC
        && u16::from_le_bytes([buf[5], buf[6]]) == PROTOCOL_VERSION;
    if this_version {
        verify_checksum(reader, len, buf)?;
    }
    Ok(true)
}

/// Reads a frame's length and contents; returns the length's bytes, or `None` at a clean end.
fn read_contents(
    reader: &mut impl std::io::Read,
    buf: &mut Vec<u8>,
) -> Result<Option<[u8; 4]>, ProtocolError> {
    let mut len_bytes = [0u8; 4];
    let got = fill(reader, &mut len_bytes)?;
    if got == 0 {
        return Ok(None);
    }
    if got < 4 {
        return Err(ProtocolError::UnexpectedEof { missing: 4 - got });
    }
    let len = u32::from_le_bytes(len_bytes) as usize;
    if len > MAX_FRAME_LEN {
        return Err(ProtocolError::FrameTooLong { len: len as u64, max: MAX_FRAME_LEN });
    }
    buf.clear();
    buf.resize(len, 0);
    let filled = fill(reader, buf)?;
    if filled < len {
        return Err(ProtocolError::UnexpectedEof { missing: len - filled + FRAME_CHECKSUM_LEN });
    }
    Ok(Some(len_bytes))
}

fn verify_checksum(reader: &mut impl std::io::Read, len: [u8; 4], buf: &[u8]) -> Result<(), ProtocolError> {
    let mut checksum = [0u8; FRAME_CHECKSUM_LEN];
    let got = fill(reader, &mut checksum)?;
    if got < FRAME_CHECKSUM_LEN {
        return Err(ProtocolError::UnexpectedEof { missing: FRAME_CHECKSUM_LEN - got });
    }
    if checksum != frame_checksum(&len, buf) {
        return Err(ProtocolError::ChecksumMismatch {
            len: buf.len(),
            tag: buf.first().copied().unwrap_or(0),
        });
    }
    Ok(())
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn fill(reader: &mut impl std::io::Read, buf: &mut [u8]) -> Result<usize, ProtocolError> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(filled)
}

/// Reads one line (without its `\n`) into `line`. `Ok(false)` at the end of the stream. A line longer
/// than [`MAX_JSON_LINE_LEN`] is read to its end without being kept (memory stays bounded) and is
/// [`ProtocolError::LineTooLong`]: the stream can go on after it.
pub fn read_line(reader: &mut impl std::io::BufRead, line: &mut Vec<u8>) -> Result<bool, ProtocolError> {
    line.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if available.is_empty() {
            break;
        }
        any = true;
        let (chunk, used, end) = match available.iter().position(|&b| b == b'\n') {
            Some(at) => (&available[..at], at + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long && line.len() + chunk.len() > MAX_JSON_LINE_LEN {
            too_long = true;
            line.clear();
            line.shrink_to(MAX_JSON_LINE_LEN.min(64 << 10));
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if end {
            break;
        }
    }
    if too_long {
        return Err(ProtocolError::LineTooLong { max: MAX_JSON_LINE_LEN });
    }
    Ok(any)
}

/// Parses one JSON line as a command, within the protocol's limits.
pub fn command_from_json(line: &str) -> Result<WorkerCommand, ProtocolError> {
    serde_json::from_str(line).map_err(|e| ProtocolError::Json(e.to_string())).and_then(check_limits)
}

/// Parses one JSON line as a reply.
pub fn reply_from_json(line: &str) -> Result<Reply, ProtocolError> {
    serde_json::from_str(line).map_err(|e| ProtocolError::Json(e.to_string()))
}

/// Serde helpers: byte strings as lowercase hex.
mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&anes_core::hex::to_hex(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        crate::protocol::from_hex(&text).map_err(serde::de::Error::custom)
    }
}

mod hex32 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8; 32], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&anes_core::hex::to_hex(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[u8; 32], D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let bytes = crate::protocol::from_hex(&text).map_err(serde::de::Error::custom)?;
        bytes.try_into().map_err(|b: Vec<u8>| {
            serde::de::Error::custom(format!("expected 32 bytes (64 hex digits), found {}", b.len()))
        })
    }
}

/// Bytes of a hex string (either case).
pub fn from_hex(text: &str) -> Result<Vec<u8>, String> {
    if text.len() % 2 != 0 {
        return Err(format!("hex string of odd length {}", text.len()));
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    text.as_bytes()
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| match (digit(pair[0]), digit(pair[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err(format!("not a hex digit at offset {}", 2 * i)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn record() -> WireRecord {
        WireRecord { frame: 7, cpu_cycle: 208_000, scanline: 241, dot: 3, state_hash: [0xAB; 32] }
    }

    fn all_commands() -> Vec<WorkerCommand> {
        vec![
            WorkerCommand::Load { rom: vec![1, 2, 3], checkpoint_every: 60 },
            WorkerCommand::Frames { first_seq: 9, inputs: vec![WireInput([1, 2, 0]), WireInput([0, 0, 1])] },
            WorkerCommand::Restore { seq: 60, snapshot: vec![9; 10] },
            WorkerCommand::Snapshot,
            WorkerCommand::Inject { spec: "flip:ram:0x0010:3".into() },
            WorkerCommand::Stall { millis: 1500 },
            WorkerCommand::Shutdown,
            WorkerCommand::BeginFrame { input: WireInput([0x80, 0x01, 2]) },
            WorkerCommand::StepInstruction,
            WorkerCommand::Probe,
            WorkerCommand::Record,
            WorkerCommand::Disassemble,
            WorkerCommand::Picture,
        ]
    }

    fn all_replies() -> Vec<Reply> {
        vec![
            Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() },
            Reply::Hello {
                protocol_version: 1,
                build: BuildInfo { version: "0.1.0".into(), git_commit: None, emulation_epoch: 1 },
            },
            Reply::Loaded { rom_identity: [3; 32], record: record() },
            Reply::Record { seq: 6, record: record() },
            Reply::Snapshot { seq: 60, state_hash: [1; 32], bytes: vec![5; 33] },
            Reply::Restored { seq: 60, record: record() },
            Reply::FaultFired { seq: 4, spec: "stall:3@99".into(), refused: None },
            Reply::FaultFired { seq: 4, spec: "flip:cpu:0x0099:1@5".into(), refused: Some("no".into()) },
            Reply::Error { message: "bad".into() },
            Reply::Probe {
                probe: WireProbe {
                    cpu_cycle: 29_781,
                    scanline: 241,
                    dot: 3,
                    pc: 0xC004,
                    registers: 0x0012_3456_789A,
                },
            },
            Reply::Stepped { done: true, probe: WireProbe::default() },
            Reply::Stepped { done: false, probe: WireProbe { pc: 0x8000, ..WireProbe::default() } },
            Reply::Disassembly { opcode: 0xAD, text: "LDA $4016 = 41".into() },
            Reply::Picture { width: 2, height: 1, rgb: vec![1, 2, 3, 4, 5, 6] },
        ]
    }

    #[test]
    fn every_message_round_trips_in_both_encodings() {
        for command in all_commands() {
            let mut bytes = Vec::new();
            encode_command(&command, &mut bytes);
            let mut buf = Vec::new();
            assert!(read_frame(&mut &bytes[..], &mut buf).unwrap());
            assert_eq!(decode_command(&buf).unwrap(), command);
            let json = serde_json::to_string(&command).unwrap();
            assert_eq!(command_from_json(&json).unwrap(), command, "{json}");
        }
        for reply in all_replies() {
            let mut bytes = Vec::new();
            encode_reply(&reply, &mut bytes);
            let mut buf = Vec::new();
            assert!(read_frame(&mut &bytes[..], &mut buf).unwrap());
            assert_eq!(decode_reply(&buf).unwrap(), reply);
            let json = serde_json::to_string(&reply).unwrap();
            assert_eq!(reply_from_json(&json).unwrap(), reply, "{json}");
        }
    }

    #[test]
    fn json_lines_are_readable() {
        let json = serde_json::to_string(&Reply::Record { seq: 6, record: record() }).unwrap();
        assert!(
            json.starts_with(r#"{"type":"record","seq":6,"record":{"frame":7,"cpu_cycle":208000"#),
            "{json}"
        );
        assert!(json.contains(&"ab".repeat(32)));
    }

    #[test]
    fn damage_is_named() {
        let mut bytes = Vec::new();
        encode_reply(&Reply::Record { seq: 1, record: record() }, &mut bytes);
        let frame = &bytes[4..bytes.len() - FRAME_CHECKSUM_LEN];
        assert_eq!(
            decode_reply(&frame[..frame.len() - 1]),
            Err(ProtocolError::Truncated { message: "record", field: "record.state_hash" })
        );
        let mut long = frame.to_vec();
        long.push(0);
        assert_eq!(decode_reply(&long), Err(ProtocolError::TrailingBytes { message: "record", extra: 1 }));
        assert_eq!(decode_reply(&[0x7f]), Err(ProtocolError::UnknownTag(0x7f)));
        let huge = (MAX_FRAME_LEN as u32 + 1).to_le_bytes();
        assert!(matches!(
            read_frame(&mut &huge[..], &mut Vec::new()),
            Err(ProtocolError::FrameTooLong { .. })
        ));
        assert_eq!(
            read_frame(&mut &bytes[..10], &mut Vec::new()),
            Err(ProtocolError::UnexpectedEof { missing: bytes.len() - 10 })
        );
        assert!(command_from_json(r#"{"type":"frames","first_seq":1}"#).is_err());
        assert!(command_from_json(r#"{"type":"stall","millis":1,"extra":1}"#).is_err());
    }

    /// Every message of a stream, a bit flipped at every offset: never read as another message.
    #[test]
    fn a_flipped_bit_anywhere_in_a_frame_is_detected() {
        let mut stream = Vec::new();
        for reply in all_replies().into_iter().skip(2) {
            encode_reply(&reply, &mut stream);
        }
        for command in all_commands() {
            encode_command(&command, &mut stream);
        }
        let read_all = |bytes: &[u8]| -> Result<Vec<Vec<u8>>, ProtocolError> {
            let mut reader = bytes;
            let mut frames = Vec::new();
            let mut frame = Vec::new();
            while read_frame(&mut reader, &mut frame)? {
                frames.push(frame.clone());
            }
            Ok(frames)
        };
        let clean = read_all(&stream).unwrap();
        assert_eq!(clean.len(), all_replies().len() - 2 + all_commands().len());
        for offset in 0..stream.len() {
            for bit in [0, 3, 7] {
                let mut damaged = stream.clone();
                damaged[offset] ^= 1 << bit;
                let result = read_all(&damaged);
                assert!(
                    result.is_err(),
                    "bit {bit} of byte {offset} flipped, yet the stream read: {result:?}"
                );
            }
        }
    }

    #[test]
    fn a_hello_of_another_version_is_read_far_enough_to_name_it() {
        // Version 1's hello: no checksum after it, and the child then waits for a command.
        let mut v1 = Vec::new();
        encode_reply(&Reply::Hello { protocol_version: 1, build: BuildInfo::current() }, &mut v1);
        v1.truncate(v1.len() - FRAME_CHECKSUM_LEN);
        let mut reader = &v1[..];
        let mut frame = Vec::new();
        assert!(read_hello_frame(&mut reader, &mut frame).unwrap());
        assert!(matches!(decode_reply(&frame), Ok(Reply::Hello { protocol_version: 1, .. })));
        // This version's hello is checked like any frame.
        let mut v2 = Vec::new();
        encode_reply(
            &Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() },
            &mut v2,
        );
        assert!(read_hello_frame(&mut &v2[..], &mut frame).unwrap());
        assert!(matches!(decode_reply(&frame), Ok(Reply::Hello { protocol_version: PROTOCOL_VERSION, .. })));
        let last = v2.len() - 1;
        v2[last] ^= 1;
        assert!(matches!(
            read_hello_frame(&mut &v2[..], &mut frame),
            Err(ProtocolError::ChecksumMismatch { .. })
        ));
    }

    /// The limits hold in both encodings, each with the same message.
    #[test]
    fn both_encodings_refuse_what_exceeds_the_limits() {
        let too_many =
            WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); MAX_BATCH_FRAMES + 1] };
        let too_long = WorkerCommand::Stall { millis: MAX_STALL_MILLIS + 1 };
        for (command, field) in [(too_many, "count"), (too_long, "millis")] {
            let mut bytes = Vec::new();
            encode_command(&command, &mut bytes);
            let mut frame = Vec::new();
            assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
            let binary = decode_command(&frame).unwrap_err();
            let json = command_from_json(&serde_json::to_string(&command).unwrap()).unwrap_err();
            assert!(matches!(&binary, ProtocolError::BadField { field: f, .. } if *f == field), "{binary}");
            assert_eq!(binary, json);
        }
        let at_limit = WorkerCommand::Stall { millis: MAX_STALL_MILLIS };
        assert_eq!(command_from_json(&serde_json::to_string(&at_limit).unwrap()).unwrap(), at_limit);
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_without_being_kept() {
        let mut stream = vec![b'x'; MAX_JSON_LINE_LEN + 1];
        stream.extend_from_slice(b"\n{\"type\":\"probe\"}\nlast");
        let mut reader = std::io::BufReader::new(&stream[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut line),
            Err(ProtocolError::LineTooLong { max: MAX_JSON_LINE_LEN })
        );
        assert!(line.capacity() <= 64 << 10, "the long line was not kept: {}", line.capacity());
        assert!(read_line(&mut reader, &mut line).unwrap());
        assert_eq!(line, br#"{"type":"probe"}"#);
        assert!(read_line(&mut reader, &mut line).unwrap());
        assert_eq!(line, b"last");
        assert!(!read_line(&mut reader, &mut line).unwrap());
        let at_limit = vec![b'y'; MAX_JSON_LINE_LEN];
        assert!(read_line(&mut std::io::BufReader::new(&at_limit[..]), &mut line).unwrap());
        assert_eq!(line.len(), MAX_JSON_LINE_LEN);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_command(&bytes);
            let _ = decode_reply(&bytes);
            let mut buf = Vec::new();
            let mut reader = &bytes[..];
            while let Ok(true) = read_frame(&mut reader, &mut buf) {
                let _ = decode_reply(&buf);
            }
            let text = String::from_utf8_lossy(&bytes);
            let _ = command_from_json(&text);
            let _ = reply_from_json(&text);
        }

        #[test]
        fn arbitrary_frames_after_a_valid_tag_never_panic(tag in 0u8..=0x90, payload in proptest::collection::vec(any::<u8>(), 0..120)) {
            let mut frame = vec![tag];
            frame.extend_from_slice(&payload);
            let _ = decode_command(&frame);
            let _ = decode_reply(&frame);
        }
    }
}
