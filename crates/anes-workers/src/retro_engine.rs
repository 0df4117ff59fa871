//! A libretro core driven by the worker protocol (`anes worker --libretro CORE --content FILE`): the
//! same commands as the anes console's [`crate::engine::Engine`], for a machine that runs whole
//! frames. The core is loaded at `Load`, whose `rom` must be the content file's bytes (or empty:
//! the worker's own file is used), so a refusal reaches the parent as the answer to `Load`.
//!
//! Differences from the anes console: a record's CPU cycle is the frame count (a libretro core
//! shows no cycle counter), the raster position is 0, snapshots are
//! [`anes_retro_host::snapshot`]s, fault sections are the machine's (`state`, `system_ram`,
//! `map:...`, `picture`, `audio`), a state fault fires at the end of the frame during which its
//! cycle (frame) is reached, and one without `@` fires at once. Instruction stepping and
//! disassembly are refused. A snapshot too large for one protocol message is answered with an error
//! naming the core and the snapshot's parts, instead of a message the parent would refuse.

use std::fs::OpenOptions;
use std::io::{self, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anes_fs::FileKind;
use anes_lockstep::{Fault, Machine};
use anes_retro_host::{HostConfig, RetroCore, RetroMachine, snapshot};
use rustix::fs::OFlags;

use crate::engine::{Flow, Handler};
use crate::protocol::{FRAME_CHECKSUM_LEN, MAX_FRAME_LEN, Reply, WireInput, WorkerCommand, encode_reply};

/// What the worker loads when the parent says `Load`.
#[derive(Debug, Clone)]
pub struct RetroSetup {
    /// The core's shared object.
    pub core: PathBuf,
    /// The content file.
    pub content: PathBuf,
    /// Options and folders.
    pub config: HostConfig,
    /// Whether a frame's hash covers its audio ([`RetroMachine::with_audio_hashed`]).
    pub hash_audio: bool,
    /// Run the core under the NES view ([`RetroMachine::nes_view`]): frames compared by system RAM
    /// and colour classes, against another NES emulator.
    pub nes_view: bool,
}

/// A libretro core driven by protocol commands.
#[derive(Debug)]
pub struct RetroEngine {
    setup: RetroSetup,
    machine: Option<RetroMachine>,
    checkpoint_every: u64,
    next_seq: u64,
    faults: Vec<(Fault, usize)>,
    snapshot: Vec<u8>,
}

impl RetroEngine {
    /// An engine that loads `setup` at the first `Load`.
    pub fn new(setup: RetroSetup) -> RetroEngine {
        RetroEngine {
            setup,
            machine: None,
            checkpoint_every: 1,
            next_seq: 0,
            faults: Vec::new(),
            snapshot: Vec::new(),
        }
    }

    fn load(&mut self, rom: &[u8], checkpoint_every: u64, reply: &mut dyn FnMut(Reply)) {
        if checkpoint_every == 0 {
            return reply(error("load: checkpoint_every must be at least 1"));
        }
        // A core keeps its state in globals: the one this process holds is dropped first.
        self.machine = None;
        let core = match RetroCore::load(&self.setup.core, &self.setup.content, &self.setup.config) {
            Ok(core) => core,
            Err(e) => return reply(error(&format!("load: {e}"))),
        };
        let content_identity = match content_identity(&self.setup.content) {
            Ok(identity) => identity,
            Err(problem) => {
                return reply(error(&format!("load: content {}: {problem}", self.setup.content.display())));
            }
        };
        if !rom.is_empty() && *blake3::hash(rom).as_bytes() != content_identity {
            return reply(error(&format!(
                "load: the parent's content ({} bytes) is not this worker's {}",
                rom.len(),
                self.setup.content.display()
            )));
        }
        let machine = if self.setup.nes_view {
            RetroMachine::nes_view(core)
        } else {
            RetroMachine::with_audio_hashed(core, self.setup.hash_audio)
        };
        // A core whose snapshot cannot travel is refused at load, before a parent waits on it.
        machine.save_state(&mut self.snapshot);
        if let Err(e) = fits_in_a_message(&self.setup.core, &self.snapshot) {
            return reply(error(&format!("load: {e}")));
        }
        let record = machine.record().into();
        self.machine = Some(machine);
        self.checkpoint_every = checkpoint_every;
        self.next_seq = 0;
        self.faults.clear();
        reply(Reply::Loaded { rom_identity: content_identity, record, region: None });
        self.send_snapshot("load", reply);
    }

    fn frames(&mut self, first_seq: u64, inputs: &[WireInput], reply: &mut dyn FnMut(Reply)) {
        if self.machine.is_none() {
            return reply(not_loaded());
        }
        if first_seq != self.next_seq {
            return reply(error(&format!(
                "frames: expected sequence number {}, got {first_seq}",
                self.next_seq
            )));
        }
        for (i, wire) in inputs.iter().enumerate() {
            let Some(mut input) = wire.to_input() else {
                return reply(error(&format!(
                    "frames: input {i} (seq {}) has unknown command byte {:#04x}; the rest of the batch is dropped",
                    first_seq + i as u64,
                    wire.0[2]
                )));
            };
            let seq = self.next_seq;
            let machine = self.machine.as_mut().expect("checked above");
            let frame = machine.frame();
            let mut j = 0;
            while j < self.faults.len() {
                match self.faults[j].0 {
                    Fault::CorruptInput { port, bit, frame: at } if at == frame => {
                        input.pads[usize::from(port)] ^= 1 << bit;
                        let (fault, _) = self.faults.remove(j);
                        reply(Reply::FaultFired { seq, spec: fault.to_string(), refused: None });
                    }
                    _ => j += 1,
                }
            }
            machine.run_frame(input);
            self.fire_due(seq, reply);
            self.next_seq += 1;
            let record = self.machine.as_ref().expect("checked above").record();
            reply(Reply::Record { seq, record: record.into() });
            if self.next_seq % self.checkpoint_every == 0 {
                self.send_snapshot("frames", reply);
            }
        }
    }

    /// Fires the state faults whose frame has come.
    fn fire_due(&mut self, seq: u64, reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_mut() else { return };
        let now = machine.frame();
        let mut j = 0;
        while j < self.faults.len() {
            let due = self.faults[j].0.cpu_cycle().is_some_and(|at| at <= now);
            if !due {
                j += 1;
                continue;
            }
            let (fault, section) = self.faults.remove(j);
            let result = match fault {
                Fault::FlipBit { offset, bit, .. } => machine.flip_state_bit(section, offset, bit),
                Fault::Stall { .. } => machine.stall_cycles(0),
                Fault::CorruptInput { .. } => Ok(()),
            };
            reply(Reply::FaultFired {
                seq,
                spec: fault.to_string(),
                refused: result.err().map(|e| e.to_string()),
            });
        }
    }

    fn inject(&mut self, spec: &str, reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_ref() else { return reply(not_loaded()) };
        let now = machine.frame();
        // Without `@`: a state fault at once (the end of the last frame), an input fault in the next
        // frame.
        let full = if spec.contains('@') { spec.to_owned() } else { format!("{spec}@{now}") };
        let fault: Fault = match full.parse() {
            Ok(fault) => fault,
            Err(e) => return reply(error(&format!("inject: {e}"))),
        };
        let mut section = 0;
        if let Fault::FlipBit { section: name, offset, .. } = &fault {
            let Some(index) = machine.section_index(name) else {
                let names: Vec<_> = (0..machine.section_count()).map(|i| machine.section_name(i)).collect();
                return reply(error(&format!(
                    "inject {full}: no section {name:?} (sections: {})",
                    names.join(", ")
                )));
            };
            let len = machine.section_bytes(index).len();
            if *offset >= len {
                return reply(error(&format!(
                    "inject {full}: offset {offset:#x} is outside section {name} ({len} bytes)"
                )));
            }
            section = index;
        }
        self.faults.push((fault, section));
        if !spec.contains('@') && !spec.trim_start().starts_with("input") {
            self.fire_due(self.next_seq, reply);
        }
    }

    /// Sends the machine's snapshot, or (`command` naming what asked) why it does not fit in a
    /// message: a snapshot grows with what the core shows (memory regions, picture, audio).
    fn send_snapshot(&mut self, command: &str, reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_ref() else { return };
        machine.save_state(&mut self.snapshot);
        if let Err(e) = fits_in_a_message(&self.setup.core, &self.snapshot) {
            return reply(error(&format!("{command}: {e}")));
        }
        reply(Reply::Snapshot {
            seq: self.next_seq,
            state_hash: machine.state_hash().0,
            bytes: self.snapshot.clone(),
        });
    }
}

impl Handler for RetroEngine {
    fn handle(&mut self, command: WorkerCommand, reply: &mut dyn FnMut(Reply)) -> Flow {
        match command {
            WorkerCommand::Load { rom, checkpoint_every, region, power_on } => {
                if region.is_some() || power_on.is_some() {
                    reply(error(
                        "load: a region or power-on profile is the anes console's; a libretro core takes its own from its content and options",
                    ));
                } else {
                    self.load(&rom, checkpoint_every, reply);
                }
            }
            WorkerCommand::Frames { first_seq, inputs } => self.frames(first_seq, &inputs, reply),
            WorkerCommand::Restore { seq, snapshot } => match self.machine.as_mut() {
                None => reply(not_loaded()),
                Some(machine) => match machine.load_state(&snapshot) {
                    Ok(()) => {
                        self.next_seq = seq;
                        reply(Reply::Restored { seq, record: machine.record().into() });
                    }
                    Err(e) => reply(error(&format!("restore: {e}"))),
                },
            },
            WorkerCommand::Snapshot => match self.machine {
                Some(_) => self.send_snapshot("snapshot", reply),
                None => reply(not_loaded()),
            },
            WorkerCommand::Inject { spec } => self.inject(&spec, reply),
            WorkerCommand::Stall { millis } => return Flow::Stall(Duration::from_millis(u64::from(millis))),
            WorkerCommand::Shutdown => return Flow::Shutdown,
            WorkerCommand::BeginFrame { .. }
            | WorkerCommand::StepInstruction
            | WorkerCommand::Disassemble => {
                reply(error("a libretro core runs whole frames only: no instruction steps or disassembly"))
            }
            WorkerCommand::Probe => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => reply(Reply::Probe { probe: machine.probe().into() }),
            },
            WorkerCommand::Record => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => reply(Reply::Record { seq: self.next_seq, record: machine.record().into() }),
            },
            WorkerCommand::Picture => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => {
                    let mut rgb = Vec::new();
                    machine.picture_rgb(&mut rgb);
                    let (width, height) = machine.picture_size().unwrap_or((0, 0));
                    reply(Reply::Picture { width, height, rgb });
                }
            },
        }
        Flow::Continue
    }
}

/// The content's identity: blake3 of the whole file, streamed, so a CD image a core takes by path
/// (`need_fullpath`) is hashed whatever its size. Opened as `anes_fs::read_capped` opens a file:
/// without blocking on a FIFO, and refused unless the opened descriptor is a regular file.
fn content_identity(path: &Path) -> Result<[u8; 32], String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| format!("cannot read the content: {e}"))?;
    let metadata = file.metadata().map_err(|e| format!("cannot read the content: {e}"))?;
    match FileKind::of(metadata.file_type()) {
        FileKind::Regular => {}
        kind => return Err(format!("the content is {kind}, not a regular file")),
    }
    let mut hasher = blake3::Hasher::new();
    io::copy(&mut BufReader::with_capacity(1 << 20, file), &mut hasher)
        .map_err(|e| format!("cannot read the content: {e}"))?;
    Ok(*hasher.finalize().as_bytes())
}

/// Bytes of a [`Reply::Snapshot`] message besides the snapshot (tag, sequence number, state hash,
/// length), measured on the encoder so it follows the layout.
fn snapshot_reply_overhead() -> usize {
    let mut frame = Vec::new();
    encode_reply(&Reply::Snapshot { seq: 0, state_hash: [0; 32], bytes: Vec::new() }, &mut frame);
    frame.len() - 4 - FRAME_CHECKSUM_LEN
}

/// `Err` naming the core and the sizes of the snapshot's parts when a [`Reply::Snapshot`] of
/// `snapshot` is longer than [`MAX_FRAME_LEN`]: the parent would refuse it as a frame too long,
/// naming neither.
fn fits_in_a_message(core: &Path, snapshot: &[u8]) -> Result<(), String> {
    let len = snapshot_reply_overhead() + snapshot.len();
    if len <= MAX_FRAME_LEN {
        return Ok(());
    }
    let parts = match snapshot::parse(snapshot) {
        Ok(parsed) => {
            let parts: Vec<String> =
                parsed.sections.iter().map(|(name, bytes)| format!("{name} {} bytes", bytes.len())).collect();
            parts.join(", ")
        }
        Err(e) => format!("unreadable: {e}"),
    };
    Err(format!(
        "{}: the snapshot is {} bytes ({parts}), a {len}-byte message, longer than the worker protocol's {MAX_FRAME_LEN}-byte limit: this core cannot run in a worker",
        core.display(),
        snapshot.len()
    ))
}

fn error(message: &str) -> Reply {
    Reply::Error { message: message.to_owned() }
}

fn not_loaded() -> Reply {
    error("no content loaded: send load first")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{decode_reply, read_frame};

    /// A snapshot of `len` bytes in all, its state section filling what the header leaves.
    fn snapshot_of(len: usize) -> Vec<u8> {
        let mut probe = Vec::new();
        snapshot::write(&mut probe, 7, (0, 0, 0), &[("state", &[]), ("system_ram", &[0; 2048])]);
        let state = vec![0xA5; len - probe.len()];
        let mut out = Vec::new();
        snapshot::write(&mut out, 7, (0, 0, 0), &[("state", &state), ("system_ram", &[0; 2048])]);
        assert_eq!(out.len(), len);
        out
    }

    /// The limit is the parent's: the largest snapshot passed goes through the reader, and one byte
    /// more is refused by name instead of as a frame too long.
    #[test]
    fn a_snapshot_longer_than_a_message_is_refused_naming_the_core_and_its_parts() {
        let core = Path::new("/cores/big_libretro.so");
        let largest = snapshot_of(MAX_FRAME_LEN - snapshot_reply_overhead());
        fits_in_a_message(core, &largest).expect("fits");
        let mut wire = Vec::new();
        encode_reply(&Reply::Snapshot { seq: 7, state_hash: [1; 32], bytes: largest.clone() }, &mut wire);
        let mut frame = Vec::new();
        assert!(read_frame(&mut &wire[..], &mut frame).expect("the parent reads it"));
        assert!(matches!(decode_reply(&frame), Ok(Reply::Snapshot { bytes, .. }) if bytes == largest));

        let over = snapshot_of(MAX_FRAME_LEN - snapshot_reply_overhead() + 1);
        let err = fits_in_a_message(core, &over).unwrap_err();
        let state = over.len() - 2048 - snapshot::HEADER_LEN - 2 * 6 - "state".len() - "system_ram".len();
        assert_eq!(
            err,
            format!(
                "/cores/big_libretro.so: the snapshot is {} bytes (state {state} bytes, system_ram 2048 bytes), a {}-byte message, longer than the worker protocol's 16777216-byte limit: this core cannot run in a worker",
                over.len(),
                MAX_FRAME_LEN + 1
            )
        );
        wire.clear();
        encode_reply(&Reply::Snapshot { seq: 7, state_hash: [1; 32], bytes: over }, &mut wire);
        assert!(read_frame(&mut &wire[..], &mut frame).is_err(), "the parent would refuse it");
    }

    /// The identity is blake3 of the whole file; what is not a regular file is refused unread (a
    /// device would be streamed for ever, a FIFO would block).
    #[test]
    fn the_content_identity_streams_regular_files_only() {
        let dir = std::env::temp_dir().join(format!("anes-retro-engine-identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("content.bin");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(content_identity(&file), Ok(*blake3::hash(&bytes).as_bytes()));
        assert_eq!(content_identity(&dir), Err("the content is a directory, not a regular file".to_owned()));
        let err = content_identity(Path::new("/dev/zero")).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let fifo = dir.join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, 0o600.into(), 0).unwrap();
        let err = content_identity(&fifo).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let err = content_identity(&dir.join("missing")).unwrap_err();
        assert!(err.starts_with("cannot read the content: "), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
