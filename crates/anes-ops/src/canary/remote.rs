//! A [`Machine`] whose console runs in a worker child process: every call is a protocol request, so the
//! lockstep runner (its checkpoints, its comparison and its localization, unchanged) can compare two
//! builds that each run in their own executable.
//!
//! The trait's queries take `&self` and return borrowed data (a section's bytes), so what the child
//! answers is cached until the next call that changes the machine. A failed request (the child died or
//! broke the protocol) cannot be returned through the trait: the machine turns *broken*, answers with
//! placeholders from then on (every step completes its frame, so no loop of the runner spins), and
//! [`RemoteMachine::failure`] says what happened; the canary checks it before trusting a result.

use std::cell::{Cell, OnceCell, RefCell};
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use anes_core::Region;

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, SNAPSHOT_HEADER_LEN, Section, StateHash};
use anes_lockstep::{Machine, MachineError, NesMachine, Probe};

use super::client::{WorkerError, WorkerProcess};
use crate::worker::protocol::{Reply, WireInput, WorkerCommand};

/// Bytes of a section header in a snapshot: tag, version, reserved, length, checksum.
const SECTION_HEADER_LEN: usize = 20;

/// A snapshot as the child sent it, with each section's payload located.
#[derive(Debug)]
struct RemoteSnapshot {
    bytes: Vec<u8>,
    sections: Vec<(&'static str, Range<usize>)>,
}

impl RemoteSnapshot {
    /// Locates the sections; a malformed snapshot has none (the child's own format: it is trusted to be
    /// well formed, and a damaged one only loses the field names).
    fn parse(bytes: Vec<u8>) -> RemoteSnapshot {
        let mut sections = Vec::new();
        let count = bytes.get(10..12).map_or(0, |b| u16::from_le_bytes([b[0], b[1]]));
        let mut at = SNAPSHOT_HEADER_LEN;
        for _ in 0..count {
            let Some(header) = bytes.get(at..at + SECTION_HEADER_LEN) else { break };
            let len = u32::from_le_bytes([header[8], header[9], header[10], header[11]]) as usize;
            let start = at + SECTION_HEADER_LEN;
            if bytes.len() < start + len {
                break;
            }
            let name = Section::ALL.iter().find(|s| s.tag() == header[0..4]).map_or("unknown", |s| s.name());
            sections.push((name, start..start + len));
            at = start + len;
        }
        RemoteSnapshot { bytes, sections }
    }
}

/// A console in a worker child process, as a [`Machine`] (borrowing the worker for as long as it is
/// one).
#[derive(Debug)]
pub struct RemoteMachine<'w> {
    worker: RefCell<&'w mut WorkerProcess>,
    /// The sequence number of the next frame, as the child counts it.
    next_seq: u64,
    /// The child sends a snapshot after every frame whose sequence number plus one is a multiple of this.
    checkpoint_every: u64,
    /// A console of this build with the same ROM: names fields (the layouts are this build's, right
    /// when both builds share an emulation epoch).
    namer: NesMachine,
    probe: Cell<Option<Probe>>,
    record: Cell<Option<FrameRecord>>,
    snapshot: OnceCell<RemoteSnapshot>,
    disassembly: OnceCell<(u8, String)>,
    picture: OnceCell<(u32, u32, Vec<u8>)>,
    failure: RefCell<Option<WorkerError>>,
}

impl<'w> RemoteMachine<'w> {
    /// Wraps a worker that has loaded `rom` (with `checkpoint_every` as its snapshot interval) and whose
    /// next frame has sequence number `next_seq`.
    pub fn new(
        worker: &'w mut WorkerProcess,
        rom: &[u8],
        checkpoint_every: u64,
        next_seq: u64,
        region: Option<anes_core::Region>,
    ) -> Result<RemoteMachine<'w>, anes_core::RomError> {
        Ok(RemoteMachine {
            worker: RefCell::new(worker),
            next_seq,
            checkpoint_every: checkpoint_every.max(1),
            namer: NesMachine::from_ines_with_region(rom, anes_core::NesConfig::default(), region)?,
            probe: Cell::new(None),
            record: Cell::new(None),
            snapshot: OnceCell::new(),
            disassembly: OnceCell::new(),
            picture: OnceCell::new(),
            failure: RefCell::new(None),
        })
    }

    /// The first request that failed, if one did: every answer after it is a placeholder.
    pub fn failure(&self) -> Option<WorkerError> {
        self.failure.borrow().clone()
    }

    fn broken(&self) -> bool {
        self.failure.borrow().is_some()
    }

    fn fail(&self, error: WorkerError) {
        let mut failure = self.failure.borrow_mut();
        if failure.is_none() {
            *failure = Some(error);
        }
    }

    /// Sends `command` and returns its reply, or records the failure.
    fn request(&self, command: &WorkerCommand, name: &'static str) -> Option<Reply> {
        if self.broken() {
            return None;
        }
        match self.worker.borrow_mut().request(command, name) {
            Ok(reply) => Some(reply),
            Err(e) => {
                self.fail(e);
                None
            }
        }
    }

    fn unexpected(&self, command: &'static str, reply: &Reply) {
        let error = self.worker.borrow().unexpected(command, reply);
        self.fail(error);
    }

    /// Forgets every cached answer: the machine changed.
    fn changed(&mut self) {
        self.probe.set(None);
        self.record.set(None);
        self.snapshot = OnceCell::new();
        self.disassembly = OnceCell::new();
        self.picture = OnceCell::new();
    }

    /// After the record of frame `seq`, a snapshot follows when a checkpoint interval completes.
    fn skip_checkpoint_snapshot(&self, seq: u64) {
        if (seq + 1) % self.checkpoint_every != 0 || self.broken() {
            return;
        }
        let reply = self.worker.borrow_mut().recv();
        match reply {
            Ok(Reply::Snapshot { .. }) => {}
            Ok(other) => self.unexpected("frames", &other),
            Err(e) => self.fail(e),
        }
    }

    fn snapshot(&self) -> Option<&RemoteSnapshot> {
        if let Some(snapshot) = self.snapshot.get() {
            return Some(snapshot);
        }
        match self.request(&WorkerCommand::Snapshot, "snapshot")? {
            Reply::Snapshot { bytes, .. } => Some(self.snapshot.get_or_init(|| RemoteSnapshot::parse(bytes))),
            other => {
                self.unexpected("snapshot", &other);
                None
            }
        }
    }
}

impl Machine for RemoteMachine<'_> {
    type Input = FrameInput;

    fn begin_frame(&mut self, input: FrameInput) {
        self.changed();
        match self.request(&WorkerCommand::BeginFrame { input: WireInput::from(input) }, "begin_frame") {
            Some(Reply::Probe { probe }) => self.probe.set(Some(probe.into())),
            Some(other) => self.unexpected("begin_frame", &other),
            None => {}
        }
    }

    fn step_instruction(&mut self) -> bool {
        self.changed();
        match self.request(&WorkerCommand::StepInstruction, "step_instruction") {
            Some(Reply::Stepped { done, probe }) => {
                self.probe.set(Some(probe.into()));
                if done {
                    self.next_seq += 1;
                }
                done
            }
            Some(other) => {
                self.unexpected("step_instruction", &other);
                true
            }
            // Broken: end the frame, so no caller loops for ever.
            None => true,
        }
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
                self.skip_checkpoint_snapshot(seq);
                record
            }
            Some(other) => {
                self.unexpected("frames", &other);
                self.record()
            }
            None => self.record(),
        }
    }

    fn record(&self) -> FrameRecord {
        if let Some(record) = self.record.get() {
            return record;
        }
        let placeholder = FrameRecord {
            frame: u64::MAX,
            cpu_cycle: u64::MAX,
            ppu_scanline: 0,
            ppu_dot: 0,
            state_hash: StateHash::default(),
        };
        match self.request(&WorkerCommand::Record, "record") {
            Some(Reply::Record { record, .. }) => {
                let record = FrameRecord::from(record);
                self.record.set(Some(record));
                record
            }
            Some(other) => {
                self.unexpected("record", &other);
                placeholder
            }
            None => placeholder,
        }
    }

    fn probe(&self) -> Probe {
        if let Some(probe) = self.probe.get() {
            return probe;
        }
        match self.request(&WorkerCommand::Probe, "probe") {
            Some(Reply::Probe { probe }) => {
                let probe = probe.into();
                self.probe.set(Some(probe));
                probe
            }
            Some(other) => {
                self.unexpected("probe", &other);
                Probe { cpu_cycle: u64::MAX, ..Probe::default() }
            }
            None => Probe { cpu_cycle: u64::MAX, ..Probe::default() },
        }
    }

    fn state_hash(&self) -> StateHash {
        self.record().state_hash
    }

    fn section_count(&self) -> usize {
        self.snapshot().map_or(0, |s| s.sections.len())
    }

    fn section_name(&self, index: usize) -> &'static str {
        self.snapshot().and_then(|s| s.sections.get(index)).map_or("none", |(name, _)| name)
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        self.snapshot()
            .and_then(|s| s.sections.get(index).map(|(_, range)| &s.bytes[range.clone()]))
            .unwrap_or(&[])
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        // This build's layouts name the child's bytes when the section is where this build has it.
        let ours = Section::ALL.get(index).map(|s| s.name());
        if ours.is_some() && ours == Some(self.section_name(index)) {
            self.namer.field_name(index, offset, out);
        } else {
            use core::fmt::Write;
            let _ = write!(out, "{}[{offset:#06x}]", self.section_name(index));
        }
    }

    fn snapshot_len(&self) -> usize {
        self.snapshot().map_or(0, |s| s.bytes.len())
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        if let Some(snapshot) = self.snapshot() {
            out.extend_from_slice(&snapshot.bytes);
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        self.changed();
        // A restore would not clear the failure: every answer after it would still be a
        // placeholder. Refusing here ends a run that restores (the shrinker's trials) with the cause.
        if let Some(failure) = self.failure() {
            return Err(MachineError::Snapshot(format!("the worker failed earlier: {failure}")));
        }
        let seq = frame_in(bytes)
            .ok_or_else(|| MachineError::Snapshot("too short to hold a frame counter".into()))?;
        let command = WorkerCommand::Restore { seq, snapshot: bytes.to_vec() };
        let reply = self.worker.borrow_mut().request(&command, "restore");
        match reply {
            Ok(Reply::Restored { record, .. }) => {
                self.next_seq = seq;
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
                self.fail(e);
                Err(MachineError::Snapshot(message))
            }
        }
    }

    fn disassemble(&self, out: &mut String) {
        if let Some((_, text)) = self.disassembly() {
            out.push_str(text);
        }
    }

    fn opcode(&self) -> u8 {
        self.disassembly().map_or(0, |(opcode, _)| *opcode)
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
}

impl RemoteMachine<'_> {
    fn disassembly(&self) -> Option<&(u8, String)> {
        if let Some(found) = self.disassembly.get() {
            return Some(found);
        }
        match self.request(&WorkerCommand::Disassemble, "disassemble")? {
            Reply::Disassembly { opcode, text } => Some(self.disassembly.get_or_init(|| (opcode, text))),
            other => {
                self.unexpected("disassemble", &other);
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

/// Starts `program` as a worker and loads `rom` (in `region`, or the header's) for a
/// [`RemoteMachine`] driven only through the trait, e.g. by the shrinker, whose trials restore it
/// from snapshots: the worker sends no periodic snapshot (its interval is `u64::MAX` frames; give
/// the same to [`RemoteMachine::new`]). Returns the worker and the region it loaded; a build that
/// loads another region than the one asked for is refused, as in the canary.
pub fn spawn_loaded(
    program: &Path,
    rom: &[u8],
    region: Option<Region>,
    reply_timeout: Duration,
) -> Result<(WorkerProcess, Option<Region>), WorkerError> {
    let mut worker = WorkerProcess::spawn(program, reply_timeout)?;
    let load = WorkerCommand::Load { rom: rom.to_vec(), checkpoint_every: u64::MAX, region, power_on: None };
    let loaded = match worker.request(&load, "load")? {
        Reply::Loaded { region: loaded, .. } => loaded,
        other => return Err(worker.unexpected("load", &other)),
    };
    if let Some(asked) = region.filter(|&asked| loaded != Some(asked)) {
        return Err(WorkerError::Refused {
            program: program.into(),
            command: "load",
            message: match loaded {
                Some(got) => format!("asked for a {asked} console, it loaded a {got} one"),
                None => format!(
                    "asked for a {asked} console, it does not say a region (a build older than regions)"
                ),
            },
        });
    }
    // The snapshot every load is followed by.
    match worker.recv()? {
        Reply::Snapshot { .. } => Ok((worker, loaded)),
        other => Err(worker.unexpected("load", &other)),
    }
}

/// The machine's frame counter stored in a snapshot (the first field of its machine section).
fn frame_in(snapshot: &[u8]) -> Option<u64> {
    let payload = SNAPSHOT_HEADER_LEN + SECTION_HEADER_LEN;
    Some(u64::from_le_bytes(snapshot.get(payload..payload + 8)?.try_into().ok()?))
}
