//! The worker protocol's messages: what a pipeline and a worker say to each other, whichever
//! transport carries them (a thread's channel, an `anes worker` child's pipes, a TCP connection).
//! Versioned, so a later build (or a canary of another build) can be driven by them. The encodings
//! (binary frames with checksums, JSON lines) and their limits are the `anes-workers` crate's codec;
//! the types live here because the pipeline's rules speak them.
//!
//! The worker speaks first: [`Reply::Hello`] names the protocol version and the build (crate
//! version, git commit if the build saw one, [`EMULATION_EPOCH`]). The parent then sends
//! [`WorkerCommand::Load`] with the ROM; the worker answers [`Reply::Loaded`] with the ROM identity and
//! its power-on record. After that, every [`WorkerCommand::Frames`] batch is answered by one
//! [`Reply::Record`] per frame (frame, CPU cycle, PPU scanline/dot, state hash), in order, and a
//! [`Reply::Snapshot`] after every frame that completes a checkpoint interval. Commands are handled
//! strictly in order, so every reply to a command comes after every reply to the commands before it.
//!
//! Inspection (what `anes canary` uses to localize a difference between two builds, instruction by
//! instruction, through the lockstep runner): [`WorkerCommand::BeginFrame`],
//! [`WorkerCommand::StepInstruction`], [`WorkerCommand::Probe`], [`WorkerCommand::Record`],
//! [`WorkerCommand::Disassemble`] and [`WorkerCommand::Picture`] each get exactly one reply, so a parent
//! can drive a child as if it were a machine of its own (`anes_ops::canary::RemoteMachine`).

use anes_core::movie::{ConsoleCommand, FrameInput};
use anes_core::state::{FrameRecord, StateHash};
use serde::{Deserialize, Serialize};

/// Version of this protocol. A child that speaks another version is refused at the handshake.
/// Version 2 added the binary frame's checksum; its hello is laid out as version 1's up to the version
/// field, so either version names the other's (`anes_workers::protocol::read_hello_frame`).
pub const PROTOCOL_VERSION: u16 = 2;

/// The core's emulation epoch ([`anes_core::EMULATION_EPOCH`]), which a child names in its hello:
/// two builds of one epoch must agree frame by frame.
pub const EMULATION_EPOCH: u32 = anes_core::EMULATION_EPOCH;

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
            version: anes_machine::BUILD.crate_version.to_string(),
            git_commit: anes_machine::BUILD.git_commit.map(str::to_string),
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
impl From<anes_machine::Probe> for WireProbe {
    fn from(p: anes_machine::Probe) -> WireProbe {
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

impl From<WireProbe> for anes_machine::Probe {
    fn from(p: WireProbe) -> anes_machine::Probe {
        anes_machine::Probe {
            cpu_cycle: p.cpu_cycle,
            scanline: u32::from(p.scanline),
            dot: u32::from(p.dot),
            pc: u64::from(p.pc),
            registers: p.registers,
        }
    }
}

/// Parent to child.
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
        /// The console's region; `None`: the ROM header's (NTSC for iNES 1.0). Left out of the
        /// message when `None`, so a parent that does not choose speaks to workers of older builds.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "region_name")]
        region: Option<anes_core::Region>,
        /// The console's power-on profile; `None`: the default. Left out when `None`, as `region`.
        #[serde(default, skip_serializing_if = "Option::is_none", with = "power_on_name")]
        power_on: Option<anes_core::PowerOnProfile>,
    },
    /// Run these frames; the first has sequence number `first_seq`, which must be the next one the
    /// child expects.
    Frames {
        /// Sequence number of the first frame.
        first_seq: u64,
        /// The inputs (the codec limits a batch's length).
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
        /// Milliseconds (the codec limits how long).
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
        /// The console's region; `None` from a build that does not say (older than regions).
        #[serde(default, skip_serializing_if = "Option::is_none", with = "region_name")]
        region: Option<anes_core::Region>,
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

/// A region as its name (`ntsc`, `pal`, `dendy`).
mod region_name {
    use anes_core::Region;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(region: &Option<Region>, s: S) -> Result<S::Ok, S::Error> {
        match region {
            Some(region) => s.serialize_str(region.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Region>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Region::from_name(&text)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("region {text:?} is not ntsc, pal or dendy")))
    }
}

mod power_on_name {
    use anes_core::PowerOnProfile;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(profile: &Option<PowerOnProfile>, s: S) -> Result<S::Ok, S::Error> {
        match profile {
            Some(profile) => s.collect_str(profile),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PowerOnProfile>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        text.parse().map(Some).map_err(serde::de::Error::custom)
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
