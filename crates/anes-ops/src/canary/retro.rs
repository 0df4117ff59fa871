//! A libretro core in a worker child process (`anes worker --libretro CORE --content FILE`), as a
//! lockstep [`Machine`] that runs whole frames: the lockstep runner, the canary, the shrinker and the
//! savestate audit drive it as they drive an in-process machine, one process per instance (a core
//! keeps its state in globals), so a core that crashes or hangs takes only its process.
//!
//! As with [`super::RemoteMachine`], a failed request cannot be returned through the trait: the
//! machine turns broken, answers with placeholders, and [`RetroWorkerMachine::failure`] says why,
//! where and how ([`RetroFailure`]). A broken machine's records are unequal to every other
//! machine's, two broken ones included, so a lockstep run over it stops at the first sync point
//! after the failure and never counts that frame as verified; a caller tells that stop from a
//! divergence by asking [`RetroWorkerMachine::failure`] (or a [`FailureWatch`], which outlives the
//! machine) before reading the outcome.

use std::cell::{Cell, OnceCell, RefCell};
use std::ffi::OsString;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, StateHash};
use anes_lockstep::{Machine, MachineError, Probe};
use anes_retro_host::snapshot;

use super::client::{WorkerEnd, WorkerError, WorkerProcess};
use crate::worker::protocol::{MAX_FRAME_LEN, Reply, WireInput, WorkerCommand};

/// What a libretro worker runs.
#[derive(Debug, Clone)]
pub struct RetroWorkerSpec {
    /// The `anes` executable that serves as the worker.
    pub program: PathBuf,
    /// The core's shared object.
    pub core: PathBuf,
    /// The content file.
    pub content: PathBuf,
    /// Core options (`--option KEY=VALUE` of the worker).
    pub options: Vec<(String, String)>,
    /// How long one reply may take.
    pub reply_timeout: Duration,
    /// Leave the audio out of each frame's hash (`--ignore-audio` of the worker).
    pub ignore_audio: bool,
    /// Run the core under the NES view (`--nes-view` of the worker): the machine then shows only
    /// the view's sections (`system_ram`, `picture_classes`), the rest of its snapshots being
    /// another emulator's layout that nothing compares with.
    pub nes_view: bool,
}

impl RetroWorkerSpec {
    /// The worker's arguments after `worker --protocol binary`.
    pub fn worker_args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--libretro".into(),
            self.core.clone().into(),
            "--content".into(),
            self.content.clone().into(),
        ];
        for (key, value) in &self.options {
            args.push("--option".into());
            args.push(format!("{key}={value}").into());
        }
        if self.ignore_audio {
            args.push("--ignore-audio".into());
        }
        if self.nes_view {
            args.push("--nes-view".into());
        }
        args
    }
}

/// A snapshot as the worker sent it, with each section located.
#[derive(Debug)]
struct Held {
    bytes: Vec<u8>,
    sections: Vec<(&'static str, Range<usize>)>,
}

impl Held {
    /// The snapshot's sections; only `shown` ones (all when `None`), in the snapshot's order.
    fn parse(bytes: Vec<u8>, shown: Option<&[&str]>) -> Held {
        let sections = match snapshot::parse(&bytes) {
            Ok(s) => {
                let base = bytes.as_ptr() as usize;
                s.sections
                    .iter()
                    .filter(|(name, _)| shown.is_none_or(|shown| shown.contains(name)))
                    .map(|(name, body)| {
                        let start = body.as_ptr() as usize - base;
                        (anes_retro_host::intern(name), start..start + body.len())
                    })
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        Held { bytes, sections }
    }
}

/// Why a libretro worker stopped answering, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct RetroFailure {
    /// The frame the machine was at (input-stream index): the frame it was running when `command`
    /// is `frames`.
    pub frame: u64,
    /// The request that failed, by its name on the wire (`frames`, `snapshot`, `restore`...).
    pub command: &'static str,
    /// How the worker ended, when the parent can tell.
    pub end: Option<WorkerEnd>,
    /// What the client saw.
    pub error: WorkerError,
}

impl RetroFailure {
    fn describe(&self) -> String {
        let at = match self.command {
            "frames" => format!("at frame {}", self.frame),
            command => format!("at frame {} (answering {command})", self.frame),
        };
        match (self.end, &self.error) {
            (Some(WorkerEnd::Signal(signal)), _) => match signal_name(signal) {
                Some(name) => format!("core crashed (signal {signal}, {name}) {at}"),
                None => format!("core crashed (signal {signal}) {at}"),
            },
            (Some(WorkerEnd::Exited(code)), _) => format!("worker exited with status {code} {at}"),
            (Some(WorkerEnd::Hung(after)), _) => format!(
                "core hung {at}: no reply to {} within {} s (the worker is killed)",
                self.command,
                after.as_secs_f64()
            ),
            (Some(WorkerEnd::Protocol), WorkerError::Gone { reason, .. }) => {
                format!("worker broke the protocol {at}: {reason}")
            }
            (_, error) => format!("worker failed {at}: {error}"),
        }
    }
}

/// The usual name of a signal that ends a crashing process.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        4 => "SIGILL",
        5 => "SIGTRAP",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// A machine's failure, readable after the machine is gone (the shrinker takes its machines and
/// may drop them): cloned from [`RetroWorkerMachine::failure_watch`].
#[derive(Debug, Clone)]
pub struct FailureWatch(Arc<Mutex<Option<RetroFailure>>>);

impl FailureWatch {
    /// The machine's first failed request, if one failed.
    pub fn failure(&self) -> Option<RetroFailure> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Numbers the machines of this process: a broken machine's placeholder hash is its own.
static MACHINES: AtomicU64 = AtomicU64::new(0);

/// A libretro core in a worker process.
#[derive(Debug)]
pub struct RetroWorkerMachine {
    worker: RefCell<Option<WorkerProcess>>,
    program: PathBuf,
    next_seq: u64,
    record: Cell<Option<FrameRecord>>,
    held: OnceCell<Held>,
    picture: OnceCell<(u32, u32, Vec<u8>)>,
    failure: FailureWatch,
    /// This machine's number in the process ([`MACHINES`]).
    number: u64,
    core_name_hint: String,
    /// The sections shown, when not all ([`RetroWorkerSpec::nes_view`]).
    shown: Option<&'static [&'static str]>,
}

impl RetroWorkerMachine {
    /// Starts a worker for `spec` and loads its content.
    pub fn spawn(spec: &RetroWorkerSpec) -> Result<RetroWorkerMachine, WorkerError> {
        let mut worker =
            WorkerProcess::spawn_with_args(&spec.program, &spec.worker_args(), spec.reply_timeout)?;
        // The worker checks the parent's bytes against its own file; content too large for one
        // message is sent empty (the worker then uses its file unchecked).
        // A content the parent cannot read is the worker's to refuse, with its own message.
        let rom =
            anes_fs::read_capped(&spec.content, MAX_FRAME_LEN as u64 / 2, "content").unwrap_or_default();
        let load = WorkerCommand::Load { rom, checkpoint_every: u64::MAX, region: None, power_on: None };
        let record = match worker.request(&load, "load")? {
            Reply::Loaded { record, .. } => FrameRecord::from(record),
            other => return Err(worker.unexpected("load", &other)),
        };
        match worker.recv()? {
            Reply::Snapshot { .. } => {}
            // The worker says why it sent no snapshot (one too large for a message).
            Reply::Error { message } => {
                return Err(WorkerError::Refused { program: spec.program.clone(), command: "load", message });
            }
            other => return Err(worker.unexpected("load", &other)),
        }
        Ok(RetroWorkerMachine {
            program: spec.program.clone(),
            worker: RefCell::new(Some(worker)),
            next_seq: 0,
            record: Cell::new(Some(record)),
            held: OnceCell::new(),
            picture: OnceCell::new(),
            failure: FailureWatch(Arc::new(Mutex::new(None))),
            number: MACHINES.fetch_add(1, Ordering::Relaxed),
            core_name_hint: spec.core.display().to_string(),
            shown: spec.nes_view.then_some(anes_retro_host::nes_view::SECTIONS.as_slice()),
        })
    }

    /// The first request that failed, if one did: every answer after it is a placeholder.
    pub fn failure(&self) -> Option<RetroFailure> {
        self.failure.failure()
    }

    /// A handle on [`RetroWorkerMachine::failure`] that outlives the machine.
    pub fn failure_watch(&self) -> FailureWatch {
        self.failure.clone()
    }

    /// The core this machine runs, as given.
    pub fn core(&self) -> &str {
        &self.core_name_hint
    }

    /// Asks the worker to exit (dropping the machine does the same).
    pub fn shutdown(self) {
        drop(self);
    }

    /// Keeps the first failure: `command` at `frame` failed with `error`.
    fn fail(&self, error: WorkerError, command: &'static str, frame: u64) {
        let mut failure = self.failure.0.lock().unwrap_or_else(|p| p.into_inner());
        if failure.is_none() {
            *failure = Some(RetroFailure { frame, command, end: error.end(), error });
        }
    }

    fn is_broken(&self) -> bool {
        self.failure.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }

    fn request(&self, command: &WorkerCommand, name: &'static str) -> Option<Reply> {
        if self.is_broken() {
            return None;
        }
        let mut worker = self.worker.borrow_mut();
        let worker = worker.as_mut()?;
        // The frame the machine is at: a reply that never comes is named by it.
        match worker.request_at(command, name, Some(self.next_seq)) {
            Ok(reply) => Some(reply),
            Err(e) => {
                self.fail(e, name, self.next_seq);
                None
            }
        }
    }

    fn unexpected(&self, command: &'static str, reply: &Reply) {
        let error = match self.worker.borrow().as_ref() {
            Some(worker) => worker.unexpected(command, reply),
            None => {
                WorkerError::Gone { program: self.program.clone(), reason: "no worker".into(), end: None }
            }
        };
        self.fail(error, command, self.next_seq);
    }

    /// What a broken machine answers for a record: frame and cycle `u64::MAX` and a hash of its
    /// own, so it agrees with no other machine's record, another broken machine's included.
    fn placeholder(&self) -> FrameRecord {
        let hash = blake3::Hasher::new()
            .update(b"anes: the placeholder record of a failed libretro worker")
            .update(&u64::from(std::process::id()).to_le_bytes())
            .update(&self.number.to_le_bytes())
            .finalize();
        FrameRecord {
            frame: u64::MAX,
            cpu_cycle: u64::MAX,
            ppu_scanline: 0,
            ppu_dot: 0,
            state_hash: StateHash(*hash.as_bytes()),
        }
    }

    fn changed(&mut self) {
        self.record.set(None);
        self.held = OnceCell::new();
        self.picture = OnceCell::new();
    }

    fn held(&self) -> Option<&Held> {
        if let Some(held) = self.held.get() {
            return Some(held);
        }
        match self.request(&WorkerCommand::Snapshot, "snapshot")? {
            Reply::Snapshot { bytes, .. } => Some(self.held.get_or_init(|| Held::parse(bytes, self.shown))),
            other => {
                self.unexpected("snapshot", &other);
                None
            }
        }
    }

    fn picture(&self) -> Option<&(u32, u32, Vec<u8>)> {
        if let Some(found) = self.picture.get() {
            return Some(found);
        }
        match self.request(&WorkerCommand::Picture, "picture")? {
            Reply::Picture { width, height, rgb } => Some(self.picture.get_or_init(|| (width, height, rgb))),
            other => {
                self.unexpected("picture", &other);
                None
            }
        }
    }
}

impl Drop for RetroWorkerMachine {
    /// A worker that is told to exit unloads its core and removes the empty system folder it made;
    /// one that is killed leaves the folder behind.
    fn drop(&mut self) {
        if let Some(worker) = self.worker.get_mut().take() {
            worker.shutdown();
        }
    }
}

/// What the savestate audit asks after every call: a worker that crashed or hung answers with
/// placeholders, which are no measurement of the core.
impl anes_retro_host::audit::Audited for RetroWorkerMachine {
    fn core_name(&self) -> String {
        self.core_name_hint.clone()
    }

    /// What happened and the client's own words (which name the worker executable).
    fn failed(&self) -> Option<String> {
        self.failure().map(|f| format!("{f} ({})", f.error))
    }
}

impl Machine for RetroWorkerMachine {
    type Input = FrameInput;

    fn steps_instructions(&self) -> bool {
        false
    }

    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.changed();
        let seq = self.next_seq;
        let command = WorkerCommand::Frames { first_seq: seq, inputs: vec![WireInput::from(input)] };
        match self.request(&command, "frames") {
            Some(Reply::Record { seq: got, record }) if got == seq => {
                self.next_seq += 1;
                let record = FrameRecord::from(record);
                self.record.set(Some(record));
                record
            }
            Some(other) => {
                self.unexpected("frames", &other);
                self.placeholder()
            }
            None => self.placeholder(),
        }
    }

    fn record(&self) -> FrameRecord {
        if let Some(record) = self.record.get() {
            return record;
        }
        match self.request(&WorkerCommand::Record, "record") {
            Some(Reply::Record { record, .. }) => {
                let record = FrameRecord::from(record);
                self.record.set(Some(record));
                record
            }
            Some(other) => {
                self.unexpected("record", &other);
                self.placeholder()
            }
            None => self.placeholder(),
        }
    }

    fn probe(&self) -> Probe {
        Probe { cpu_cycle: self.record().cpu_cycle, ..Probe::default() }
    }

    fn state_hash(&self) -> StateHash {
        self.record().state_hash
    }

    fn section_count(&self) -> usize {
        self.held().map_or(0, |h| h.sections.len())
    }

    fn section_name(&self, index: usize) -> &'static str {
        self.held().and_then(|h| h.sections.get(index)).map_or("none", |(name, _)| name)
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        self.held().and_then(|h| h.sections.get(index).map(|(_, r)| &h.bytes[r.clone()])).unwrap_or(&[])
    }

    fn snapshot_len(&self) -> usize {
        self.held().map_or(0, |h| h.bytes.len())
    }

    /// A fresh snapshot from the worker every time (the audit's first check compares two in a row).
    fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        match self.request(&WorkerCommand::Snapshot, "snapshot") {
            Some(Reply::Snapshot { bytes, .. }) => out.extend_from_slice(&bytes),
            Some(other) => self.unexpected("snapshot", &other),
            None => {}
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        self.changed();
        if let Some(failure) = self.failure() {
            return Err(MachineError::Snapshot(format!("the worker failed earlier: {failure}")));
        }
        let frame = snapshot::parse(bytes).map_err(|e| MachineError::Snapshot(e.to_string()))?.frame;
        let command = WorkerCommand::Restore { seq: frame, snapshot: bytes.to_vec() };
        let reply = match self.worker.borrow_mut().as_mut() {
            Some(worker) => worker.request(&command, "restore"),
            None => return Err(MachineError::Snapshot("no worker".into())),
        };
        match reply {
            Ok(Reply::Restored { record, .. }) => {
                self.next_seq = frame;
                self.record.set(Some(record.into()));
                Ok(())
            }
            Ok(other) => {
                self.unexpected("restore", &other);
                Err(MachineError::Snapshot(format!(
                    "the worker answered restore with {}",
                    super::client::kind(&other)
                )))
            }
            Err(WorkerError::Refused { message, .. }) => Err(MachineError::Snapshot(message)),
            Err(e) => {
                let message = e.to_string();
                self.fail(e, "restore", frame);
                Err(MachineError::Snapshot(message))
            }
        }
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        self.picture().filter(|(w, h, _)| *w > 0 && *h > 0).map(|(w, h, _)| (*w, *h))
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        match self.picture() {
            Some((w, h, rgb)) if *w > 0 && *h > 0 => {
                out.extend_from_slice(rgb);
                true
            }
            _ => false,
        }
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        let count = self.section_count();
        let name = self.held().and_then(|h| h.sections.get(index)).map(|(n, _)| *n);
        let Some(name) = name else { return Err(MachineError::NoSuchSection { index, count }) };
        self.changed();
        let spec = format!("flip:{name}:{offset:#x}:{bit}");
        match self.request(&WorkerCommand::Inject { spec }, "inject") {
            Some(Reply::FaultFired { refused: None, .. }) => Ok(()),
            Some(Reply::FaultFired { refused: Some(why), .. }) => Err(MachineError::Fault(why)),
            Some(other) => {
                self.unexpected("inject", &other);
                Err(MachineError::Fault("the worker did not fire the fault".into()))
            }
            None => Err(MachineError::Fault(
                self.failure().map_or_else(|| "the worker failed".to_owned(), |f| f.to_string()),
            )),
        }
    }
}
