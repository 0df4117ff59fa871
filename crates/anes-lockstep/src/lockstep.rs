//! The runner: two machines, one input stream, a comparison at every sync point.

use crossbeam_channel::TryRecvError;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anes_core::movie::InputStream;
use anes_core::state::{FrameRecord, StateHash};
use serde::Serialize;
use thiserror::Error;

use crate::config::{Granularity, LockstepConfig, Threading};
use crate::evidence::Evidence;
use crate::localize::{self, ReplayStart};
use crate::machine::{Machine, MachineError};
use crate::schedule::{FaultPlanError, FaultSchedule, FiredFault};
use crate::side::{Side, SyncRecord};
use crate::status::LockstepStatus;

/// Checkpoint buffers per machine at most (each holds one snapshot).
const MAX_CHECKPOINT_SLOTS: usize = 4096;

/// What kind of difference was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The machines are at the same CPU cycle but their states differ.
    State,
    /// The machines are at different CPU cycles: one runs behind the other.
    CycleMisalignment,
}

impl DivergenceKind {
    /// `state` or `cycle_misalignment`.
    pub const fn name(self) -> &'static str {
        match self {
            DivergenceKind::State => "state",
            DivergenceKind::CycleMisalignment => "cycle_misalignment",
        }
    }
}

/// A difference seen at a sync point: the run stops there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// State or cycle misalignment.
    pub kind: DivergenceKind,
    /// Input-stream index of the frame the sync point belongs to (frames count from 0; the record at
    /// the end of frame `n` has `frame == n + 1` frames completed).
    pub frame: u64,
    /// True when the sync point was the end of the frame.
    pub at_frame_end: bool,
    /// Ordinal of the sync point since the Lockstep was created (1-based).
    pub sync_point: u64,
    /// Machine A's record there.
    pub a: FrameRecord,
    /// Machine B's record there.
    pub b: FrameRecord,
}

impl core::fmt::Display for Divergence {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let place = if self.at_frame_end { "at the end of frame" } else { "during frame" };
        match self.kind {
            DivergenceKind::CycleMisalignment => {
                let (behind, ahead, cycles) = if self.b.cpu_cycle < self.a.cpu_cycle {
                    ("B", "A", self.a.cpu_cycle - self.b.cpu_cycle)
                } else {
                    ("A", "B", self.b.cpu_cycle - self.a.cpu_cycle)
                };
                let unit = if cycles == 1 { "cycle" } else { "cycles" };
                write!(f, "{behind} is {cycles} CPU {unit} behind {ahead} {place} {}", self.frame)
            }
            DivergenceKind::State => write!(
                f,
                "state hashes differ {place} {} (CPU cycle {}): A {} vs B {}",
                self.frame, self.a.cpu_cycle, self.a.state_hash, self.b.state_hash
            ),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Every frame asked for was verified.
    Agreed {
        /// Frames verified by this call.
        frames: u64,
    },
    /// The machines diverged (or already had, before this call): nothing after the last verified frame
    /// counts as verified. The evidence is in [`Lockstep::evidence`].
    Diverged(Box<Divergence>),
}

/// Progress of a run, reported once per verified frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Frames verified since the Lockstep was created.
    pub frames_verified: u64,
    /// Sync points compared.
    pub sync_points: u64,
    /// Lead of the leading machine over the comparator, in frames.
    pub drift_frames: u64,
}

/// Why a Lockstep could not be created.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LockstepError {
    /// The fault plan does not fit machine B.
    #[error(transparent)]
    FaultPlan(#[from] FaultPlanError),
    /// A configuration value is out of range.
    #[error("invalid lockstep configuration: {0}")]
    Config(&'static str),
}

/// Why a rollback failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RollbackError {
    /// No verified checkpoint is left (all failed verification, or none was ever taken).
    #[error("no verified checkpoint to roll back to ({discarded} failed verification and were discarded)")]
    NoVerifiedCheckpoint {
        /// Checkpoints discarded during this attempt.
        discarded: usize,
    },
}

/// What a successful rollback did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rollback {
    /// Input-stream index of the frame the machines resume at.
    pub frame: u64,
    /// The state hash both machines were verified to have.
    pub state_hash: StateHash,
    /// Newer checkpoints that failed verification and were discarded.
    pub discarded: usize,
}

/// A verified checkpoint: both machines' snapshots (in the sides' slots) had this hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CheckpointMeta {
    pub seq: u64,
    /// Input-stream index of the next frame to run from it.
    pub frame: u64,
    pub state_hash: StateHash,
}

/// Everything the comparator owns (kept apart from the sides so worker threads can borrow those).
#[derive(Debug)]
struct Comparator {
    checkpoints: VecDeque<CheckpointMeta>,
    checkpoints_kept: usize,
    checkpoint_seq: u64,
    start_frame: u64,
    /// Frames before this input index are verified.
    verified_until: u64,
    sync_points: u64,
    /// Machine A's record at the last verified sync point that ended a frame (or at the start).
    last_verified: FrameRecord,
    divergence: Option<Divergence>,
    status: Arc<LockstepStatus>,
}

impl Comparator {
    /// Compares one pair of sync records; on agreement at a frame end, counts the frame and records
    /// the checkpoint the sides saved there.
    #[inline]
    fn compare(&mut self, a: &SyncRecord, b: &SyncRecord, checkpoint_every: u64) -> bool {
        self.sync_points += 1;
        self.status.set_sync_points(self.sync_points);
        if a != b {
            let kind = if a.record.cpu_cycle != b.record.cpu_cycle {
                DivergenceKind::CycleMisalignment
            } else {
                DivergenceKind::State
            };
            self.divergence = Some(Divergence {
                kind,
                frame: a.frame.min(b.frame),
                at_frame_end: a.frame_end || b.frame_end,
                sync_point: self.sync_points,
                a: a.record,
                b: b.record,
            });
            self.status.set_diverged(true);
            return false;
        }
        if a.frame_end {
            self.last_verified = a.record;
            self.verified_until = a.frame + 1;
            self.status.set_frames_verified(self.verified_until - self.start_frame);
            if self.verified_until % checkpoint_every == 0 {
                self.checkpoint_seq += 1;
                self.push_checkpoint(CheckpointMeta {
                    seq: self.checkpoint_seq,
                    frame: self.verified_until,
                    state_hash: a.record.state_hash,
                });
            }
        }
        true
    }

    fn push_checkpoint(&mut self, meta: CheckpointMeta) {
        if self.checkpoints.len() == self.checkpoints_kept {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(meta);
    }

    fn progress(&self) -> Progress {
        Progress {
            frames_verified: self.verified_until - self.start_frame,
            sync_points: self.sync_points,
            drift_frames: self.status.drift_frames(),
        }
    }
}

/// Two deterministic machines run over one input stream and compared at every sync point.
///
/// Any difference is fatal for the run: intake of input stops, the first divergent instruction is
/// localized from the last verified checkpoint (when [`LockstepConfig::localize`] is on) and the
/// evidence is kept until dropped; [`Lockstep::rollback`] returns both machines to the last verified
/// checkpoint so the run can resume.
///
/// ```
/// use anes_lockstep::{FaultPlan, Lockstep, LockstepConfig, NesMachine, RunOutcome};
/// use anes_core::{movie::InputStream, NesConfig};
/// # let rom = anes_lockstep::testing::tiny_rom();
/// let a = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
/// let b = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
/// let inputs = InputStream::new();
///
/// // Two identical machines agree.
/// let mut lockstep = Lockstep::new(a.clone(), b.clone(), LockstepConfig::default()).unwrap();
/// assert_eq!(lockstep.run(&inputs, 20), RunOutcome::Agreed { frames: 20 });
///
/// // A bit flipped in B's RAM is caught at the next sync point and localized to the instruction.
/// let faults = FaultPlan::parse(["flip:ram:0x0010:3@50000"]).unwrap();
/// let config = LockstepConfig { checkpoint_every: 5, faults, ..LockstepConfig::default() };
/// let mut lockstep = Lockstep::new(a, b, config).unwrap();
/// assert!(matches!(lockstep.run(&inputs, 20), RunOutcome::Diverged(_)));
/// let found = lockstep.evidence().unwrap().localization.as_ref().unwrap();
/// assert!(found.cpu_cycle < 50000 && 50000 <= found.end_cpu_cycle);
/// assert!(found.fields.iter().any(|f| f.name == "ram[$0010]"));
///
/// // Rollback restores agreement, and the transient fault does not recur.
/// lockstep.rollback().unwrap();
/// assert_eq!(lockstep.run(&inputs, 10), RunOutcome::Agreed { frames: 10 });
/// ```
#[derive(Debug)]
pub struct Lockstep<A, B> {
    a: Side<A>,
    b: Side<B>,
    config: LockstepConfig,
    cmp: Comparator,
    evidence: Vec<Evidence>,
    /// The machines differed when paired; the evidence is collected by the first run.
    evidence_pending: bool,
}

impl<A: Machine, B: Machine> Lockstep<A, B> {
    /// Pairs two machines that are at the same point (typically both just powered on with the same
    /// ROM and config) and takes the first checkpoint. Input-stream frame `n` is fed to the frame that
    /// starts with `n` frames completed, so machines that already ran some frames continue the stream
    /// where they are.
    pub fn new(a: A, b: B, config: LockstepConfig) -> Result<Lockstep<A, B>, LockstepError> {
        if config.checkpoint_every == 0 {
            return Err(LockstepError::Config("checkpoint_every must be at least 1"));
        }
        if config.checkpoints_kept == 0 {
            return Err(LockstepError::Config("checkpoints_kept must be at least 1"));
        }
        if config.hash_every_instructions == 0 {
            return Err(LockstepError::Config("hash_every_instructions must be at least 1"));
        }
        if config.threading == (Threading::Threaded { window: 0 }) {
            return Err(LockstepError::Config("the threaded window must be at least 1 sync record"));
        }
        let faults = FaultSchedule::new(&config.faults, &b)?;
        let start_frame = a.record().frame;
        // Slots beyond the kept ones hold checkpoints saved but not yet verified: one on the same
        // thread; in threaded mode as many as a worker can save while up to `window` records ahead.
        let in_flight = match config.threading {
            Threading::SameThread => 1,
            Threading::Threaded { window } => window as u64 / config.checkpoint_every + 2,
        };
        let slot_count = config.checkpoints_kept.saturating_add(in_flight as usize);
        if slot_count > MAX_CHECKPOINT_SLOTS {
            return Err(LockstepError::Config(
                "too many checkpoint buffers: lower checkpoints_kept or the threaded window, or raise checkpoint_every",
            ));
        }
        let mut a = Side::new(a, FaultSchedule::default(), slot_count, start_frame);
        let mut b = Side::new(b, faults, slot_count, start_frame);
        a.save_checkpoint(0);
        b.save_checkpoint(0);
        let status = Arc::new(LockstepStatus::default());
        let mut cmp = Comparator {
            checkpoints: VecDeque::with_capacity(config.checkpoints_kept),
            checkpoints_kept: config.checkpoints_kept,
            checkpoint_seq: 0,
            start_frame,
            verified_until: start_frame,
            sync_points: 0,
            last_verified: a.machine.record(),
            divergence: None,
            status,
        };
        let first = (
            SyncRecord { frame: start_frame, record: a.machine.record(), frame_end: false },
            SyncRecord { frame: start_frame, record: b.machine.record(), frame_end: false },
        );
        let agree = cmp.compare(&first.0, &first.1, config.checkpoint_every);
        if agree {
            cmp.push_checkpoint(CheckpointMeta {
                seq: 0,
                frame: start_frame,
                state_hash: first.0.record.state_hash,
            });
        }
        Ok(Lockstep { a, b, config, cmp, evidence: Vec::new(), evidence_pending: !agree })
    }

    /// Runs `frames` more frames (or until a divergence) on the calling thread, whatever
    /// [`LockstepConfig::threading`] says. Works for machines that cannot be sent between threads.
    pub fn run_interleaved(&mut self, inputs: &InputStream, frames: u64) -> RunOutcome {
        self.run_interleaved_with(inputs, frames, &mut |_| {})
    }

    /// [`Lockstep::run_interleaved`], calling `progress` after every verified frame.
    pub fn run_interleaved_with(
        &mut self,
        inputs: &InputStream,
        frames: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        if let Some(outcome) = self.already_diverged(inputs) {
            return outcome;
        }
        let target = self.cmp.verified_until.saturating_add(frames);
        let (granularity, every) = (self.config.granularity, self.config.checkpoint_every);
        while self.cmp.verified_until < target {
            let a = self.a.next_sync(inputs, granularity, every);
            let b = self.b.next_sync(inputs, granularity, every);
            if !self.cmp.compare(&a, &b, every) {
                return self.diverged(inputs);
            }
            if a.frame_end {
                progress(self.cmp.progress());
            }
        }
        RunOutcome::Agreed { frames }
    }

    /// While diverged, runs do nothing. A divergence found when the machines were paired (they differ
    /// from the start) gets its evidence on the first run, which has the inputs.
    fn already_diverged(&mut self, inputs: &InputStream) -> Option<RunOutcome> {
        let divergence = self.cmp.divergence.as_ref()?;
        if self.evidence_pending {
            self.evidence_pending = false;
            return Some(self.diverged(inputs));
        }
        Some(RunOutcome::Diverged(Box::new(divergence.clone())))
    }

    fn diverged(&mut self, inputs: &InputStream) -> RunOutcome {
        let divergence = self.cmp.divergence.clone().expect("called on a divergence");
        let evidence = self.collect_evidence(inputs, &divergence);
        self.evidence.push(evidence);
        RunOutcome::Diverged(Box::new(divergence))
    }

    fn collect_evidence(&mut self, inputs: &InputStream, divergence: &Divergence) -> Evidence {
        // On one thread the machines are still at the sync point: their section digests name the
        // sections that differ there. Worker threads may have run on, so they are not asked.
        let differing_sections = (self.config.threading == Threading::SameThread).then(|| {
            let (a, b) = (&self.a.machine, &self.b.machine);
            (0..a.section_count())
                .filter(|&i| a.section_digest(i) != b.section_digest(i))
                .map(|i| a.section_name(i))
                .collect()
        });
        let checkpoint = self.cmp.checkpoints.back().copied();
        let checkpoint_a = checkpoint.map(|c| self.a.checkpoint(c.seq).to_vec()).unwrap_or_default();
        let checkpoint_b = checkpoint.map(|c| self.b.checkpoint(c.seq).to_vec()).unwrap_or_default();
        // From frame 0, so the stream is indexed by frame number like the snapshots' frame counters.
        let input_slice =
            (0..=divergence.frame).map(|n| inputs.frame(usize::try_from(n).unwrap_or(usize::MAX))).collect();
        let mut localization = None;
        let mut localization_error = None;
        let mut snapshots = (Vec::new(), Vec::new());
        let mut pictures = (Vec::new(), Vec::new());
        let mut picture_size = None;
        match checkpoint {
            Some(c) if self.config.localize => {
                let start = ReplayStart {
                    frame: c.frame,
                    state_hash: c.state_hash,
                    snapshot_a: &checkpoint_a,
                    snapshot_b: &checkpoint_b,
                };
                let result = localize::localize(
                    &mut self.a.machine,
                    &mut self.b.machine,
                    &mut self.b.faults,
                    inputs,
                    start,
                    divergence,
                    &self.config,
                );
                match result {
                    Ok(found) => {
                        snapshots = (found.snapshot_a.clone(), found.snapshot_b.clone());
                        pictures = (found.picture_a.clone(), found.picture_b.clone());
                        picture_size = found.picture_size;
                        localization = Some(found.localization);
                    }
                    Err(e) => localization_error = Some(e.to_string()),
                }
            }
            Some(_) => {}
            None => localization_error = Some("no verified checkpoint to replay from".to_string()),
        }
        if localization.is_none() {
            // Without a replay, the machines' current state is the best picture of the divergence
            // (exact on the same thread; in threaded mode the workers may have run a little further).
            self.a.machine.save_state(&mut snapshots.0);
            self.b.machine.save_state(&mut snapshots.1);
            if self.config.pictures {
                picture_size = self.a.machine.picture_size();
                self.a.machine.picture_rgb(&mut pictures.0);
                self.b.machine.picture_rgb(&mut pictures.1);
            }
        }
        Evidence {
            divergence: divergence.clone(),
            differing_sections,
            localization,
            localization_error,
            checkpoint_frame: checkpoint.map(|c| c.frame),
            checkpoint_a,
            checkpoint_b,
            divergence_a: snapshots.0,
            divergence_b: snapshots.1,
            inputs: input_slice,
            picture_size,
            picture_a: pictures.0,
            picture_b: pictures.1,
            faults: self.b.faults.fired().cloned().collect(),
            granularity: self.config.granularity,
        }
    }

    /// Restores both machines to the last verified checkpoint and verifies that both state hashes
    /// equal the hash recorded for it before resuming (recovery mode). A checkpoint that fails
    /// verification is discarded and the previous one tried. The evidence is kept.
    pub fn rollback(&mut self) -> Result<Rollback, RollbackError> {
        let mut discarded = 0;
        while let Some(checkpoint) = self.cmp.checkpoints.back().copied() {
            if self.restore(checkpoint).is_ok() {
                self.cmp.divergence = None;
                self.cmp.status.set_diverged(false);
                self.cmp.status.count_rollback();
                return Ok(Rollback {
                    frame: checkpoint.frame,
                    state_hash: checkpoint.state_hash,
                    discarded,
                });
            }
            self.cmp.checkpoints.pop_back();
            discarded += 1;
        }
        Err(RollbackError::NoVerifiedCheckpoint { discarded })
    }

    fn restore(&mut self, checkpoint: CheckpointMeta) -> Result<(), MachineError> {
        let seq = checkpoint.seq;
        let (a, b) = (&mut self.a, &mut self.b);
        a.machine.load_state(&a.slots[(seq % a.slots.len() as u64) as usize])?;
        b.machine.load_state(&b.slots[(seq % b.slots.len() as u64) as usize])?;
        if a.machine.state_hash() != checkpoint.state_hash || b.machine.state_hash() != checkpoint.state_hash
        {
            return Err(MachineError::Snapshot("restored state does not have the recorded hash".into()));
        }
        for side_seq in [&mut a.checkpoint_seq, &mut b.checkpoint_seq] {
            *side_seq = seq;
        }
        a.frame = checkpoint.frame;
        b.frame = checkpoint.frame;
        a.in_frame = false;
        b.in_frame = false;
        self.cmp.checkpoint_seq = seq;
        self.cmp.verified_until = checkpoint.frame;
        self.cmp.last_verified = a.machine.record();
        self.cmp.status.set_frames_verified(checkpoint.frame - self.cmp.start_frame);
        self.cmp.status.set_drift_frames(0);
        Ok(())
    }

    /// Frames both machines agreed on since the Lockstep was created. Nothing after the last verified
    /// frame counts; after a rollback this falls back to the checkpoint.
    pub fn frames_verified(&self) -> u64 {
        self.cmp.verified_until - self.cmp.start_frame
    }

    /// Machine A's record at the end of the last verified frame (at creation: where it started). Its
    /// state hash is the run's final state hash.
    pub fn last_verified_record(&self) -> FrameRecord {
        self.cmp.last_verified
    }

    /// Input-stream index of the next frame to verify.
    pub fn next_frame(&self) -> u64 {
        self.cmp.verified_until
    }

    /// Sync points compared since the Lockstep was created.
    pub fn sync_points(&self) -> u64 {
        self.cmp.sync_points
    }

    /// Lead of the leading machine over the comparator, in frames, as last measured (0 on one thread).
    pub fn drift_frames(&self) -> u64 {
        self.cmp.status.drift_frames()
    }

    /// True from a divergence until a successful [`Lockstep::rollback`].
    pub fn is_diverged(&self) -> bool {
        self.cmp.divergence.is_some()
    }

    /// The divergence that stopped the run, until a rollback.
    pub fn divergence(&self) -> Option<&Divergence> {
        self.cmp.divergence.as_ref()
    }

    /// The evidence of the latest divergence (kept across rollbacks).
    pub fn evidence(&self) -> Option<&Evidence> {
        self.evidence.last()
    }

    /// The evidence of every divergence since the Lockstep was created, oldest first.
    pub fn evidence_history(&self) -> &[Evidence] {
        &self.evidence
    }

    /// Input-stream frame indexes of the verified checkpoints kept, oldest first.
    pub fn checkpoint_frames(&self) -> impl Iterator<Item = u64> + '_ {
        self.cmp.checkpoints.iter().map(|c| c.frame)
    }

    /// The state hash both machines had at the last verified frame end (or checkpoint).
    pub fn last_verified_checkpoint(&self) -> Option<(u64, StateHash)> {
        self.cmp.checkpoints.back().map(|c| (c.frame, c.state_hash))
    }

    /// Faults that fired in machine B so far.
    pub fn fired_faults(&self) -> Vec<FiredFault> {
        self.b.faults.fired().cloned().collect()
    }

    /// Live status, shareable with other threads (metrics exporters, watchdogs).
    pub fn status(&self) -> Arc<LockstepStatus> {
        Arc::clone(&self.cmp.status)
    }

    /// The configuration.
    pub fn config(&self) -> &LockstepConfig {
        &self.config
    }

    /// Machine A.
    pub fn machine_a(&self) -> &A {
        &self.a.machine
    }

    /// Machine B.
    pub fn machine_b(&self) -> &B {
        &self.b.machine
    }

    /// Takes both machines back.
    pub fn into_machines(self) -> (A, B) {
        (self.a.machine, self.b.machine)
    }

    #[cfg(test)]
    pub(crate) fn corrupt_checkpoint_for_test(&mut self, which: usize) {
        let seq = self.cmp.checkpoints[which].seq;
        let len = self.b.slots.len() as u64;
        let slot = &mut self.b.slots[(seq % len) as usize];
        let last = slot.len() - 1;
        slot[last] ^= 1;
    }
}

impl<A: Machine + Send, B: Machine + Send> Lockstep<A, B> {
    /// Runs `frames` more frames, or until a divergence, as [`LockstepConfig::threading`] says.
    pub fn run(&mut self, inputs: &InputStream, frames: u64) -> RunOutcome {
        self.run_with(inputs, frames, &mut |_| {})
    }

    /// [`Lockstep::run`], calling `progress` (on the calling thread) after every verified frame.
    pub fn run_with(
        &mut self,
        inputs: &InputStream,
        frames: u64,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        match self.config.threading {
            Threading::SameThread => self.run_interleaved_with(inputs, frames, progress),
            Threading::Threaded { window } => self.run_threaded(inputs, frames, window, progress),
        }
    }

    fn run_threaded(
        &mut self,
        inputs: &InputStream,
        frames: u64,
        window: usize,
        progress: &mut dyn FnMut(Progress),
    ) -> RunOutcome {
        if let Some(outcome) = self.already_diverged(inputs) {
            return outcome;
        }
        let target = self.cmp.verified_until.saturating_add(frames);
        let (granularity, every) = (self.config.granularity, self.config.checkpoint_every);
        let stop = AtomicBool::new(false);
        let worker_frames = [AtomicU64::new(self.a.frame), AtomicU64::new(self.b.frame)];
        let (tx_a, rx_a) = crossbeam_channel::bounded::<SyncRecord>(window);
        let (tx_b, rx_b) = crossbeam_channel::bounded::<SyncRecord>(window);
        // The comparator sleeps on a doorbell that a worker rings only when its queue holds half a
        // window (or it stops), so it wakes every few records instead of on every one: on two cores
        // a wake-up per frame costs more than the comparison.
        let (bell_tx, bell_rx) = crossbeam_channel::bounded::<()>(1);
        let ring_at = (window / 2).max(1);
        let (side_a, side_b, cmp) = (&mut self.a, &mut self.b, &mut self.cmp);
        let agreed = std::thread::scope(|scope| {
            let (stop, worker_frames) = (&stop, &worker_frames);
            let bell_a = Doorbell { tx: bell_tx.clone(), ring_at };
            let bell_b = Doorbell { tx: bell_tx, ring_at };
            scope.spawn(move || {
                worker(side_a, inputs, granularity, every, target, &tx_a, &bell_a, stop, &worker_frames[0])
            });
            scope.spawn(move || {
                worker(side_b, inputs, granularity, every, target, &tx_b, &bell_b, stop, &worker_frames[1])
            });
            let mut agreed = true;
            let mut waiting_a: Option<SyncRecord> = None;
            let mut workers_gone = false;
            'run: while cmp.verified_until < target {
                // Compare every pair both workers have published.
                loop {
                    let a = match waiting_a.take().map_or_else(|| rx_a.try_recv(), Ok) {
                        Ok(a) => a,
                        Err(TryRecvError::Empty) => break,
                        Err(TryRecvError::Disconnected) => break 'run,
                    };
                    let b = match rx_b.try_recv() {
                        Ok(b) => b,
                        Err(TryRecvError::Empty) => {
                            waiting_a = Some(a);
                            break;
                        }
                        Err(TryRecvError::Disconnected) => break 'run,
                    };
                    if !cmp.compare(&a, &b, every) {
                        agreed = false;
                        break 'run;
                    }
                    if a.frame_end {
                        let lead = worker_frames[0]
                            .load(Ordering::Relaxed)
                            .max(worker_frames[1].load(Ordering::Relaxed));
                        cmp.status.set_drift_frames(lead.saturating_sub(cmp.verified_until));
                        progress(cmp.progress());
                    }
                    if cmp.verified_until >= target {
                        break 'run;
                    }
                }
                if workers_gone {
                    break;
                }
                // Both workers gone: one last pass over what they left.
                workers_gone = bell_rx.recv().is_err();
            }
            stop.store(true, Ordering::Relaxed);
            // Dropping the receivers releases a worker blocked on a full channel.
            drop((rx_a, rx_b));
            agreed
        });
        self.cmp.status.set_drift_frames(0);
        if agreed { RunOutcome::Agreed { frames } } else { self.diverged(inputs) }
    }
}

/// A worker's side of the comparator's doorbell. Dropping it (the worker returning or unwinding)
/// rings, so the comparator never sleeps through a worker's end.
struct Doorbell {
    tx: crossbeam_channel::Sender<()>,
    ring_at: usize,
}

impl Doorbell {
    /// Rings if `queue` holds at least half a window. A bell already ringing stays as it is.
    fn ring_if_due(&self, queue: &crossbeam_channel::Sender<SyncRecord>) {
        if queue.len() >= self.ring_at {
            let _ = self.tx.try_send(());
        }
    }
}

impl Drop for Doorbell {
    fn drop(&mut self) {
        let _ = self.tx.try_send(());
    }
}

#[allow(clippy::too_many_arguments)]
fn worker<M: Machine>(
    side: &mut Side<M>,
    inputs: &InputStream,
    granularity: Granularity,
    checkpoint_every: u64,
    target: u64,
    tx: &crossbeam_channel::Sender<SyncRecord>,
    bell: &Doorbell,
    stop: &AtomicBool,
    frames_done: &AtomicU64,
) {
    while (side.frame < target || side.in_frame) && !stop.load(Ordering::Relaxed) {
        let record = side.next_sync(inputs, granularity, checkpoint_every);
        if record.frame_end {
            frames_done.store(side.frame, Ordering::Relaxed);
        }
        if tx.send(record).is_err() {
            break;
        }
        bell.ring_if_due(tx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{FakeMachine, tiny_rom};
    use crate::{Fault, FaultPlan, NesMachine};

    fn pair() -> (NesMachine, NesMachine) {
        let a = NesMachine::from_ines(&tiny_rom(), anes_core::NesConfig::default()).unwrap();
        (a.clone(), a)
    }

    #[test]
    fn corrupted_checkpoint_is_discarded_and_the_previous_one_used() {
        let (a, b) = pair();
        let faults = FaultPlan::new().with(Fault::FlipBit {
            section: "ram".into(),
            offset: 0x300,
            bit: 0,
            cpu_cycle: 29_781 * 25,
        });
        let config = LockstepConfig { checkpoint_every: 10, faults, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(a, b, config).unwrap();
        assert!(matches!(lockstep.run(&InputStream::new(), 40), RunOutcome::Diverged(_)));
        assert_eq!(lockstep.checkpoint_frames().collect::<Vec<_>>(), [0, 10, 20]);
        lockstep.corrupt_checkpoint_for_test(2);
        let rollback = lockstep.rollback().unwrap();
        assert_eq!((rollback.frame, rollback.discarded), (10, 1));
        assert!(lockstep.evidence().is_some(), "rollback keeps the evidence");
        assert_eq!(lockstep.run(&InputStream::new(), 30), RunOutcome::Agreed { frames: 30 });
        assert_eq!(lockstep.frames_verified(), 40);
    }

    #[test]
    fn no_checkpoint_left_is_an_error() {
        let mut lockstep =
            Lockstep::new(FakeMachine::new(1), FakeMachine::new(2), LockstepConfig::default()).unwrap();
        assert!(lockstep.is_diverged(), "different seeds differ at once");
        assert_eq!(lockstep.rollback(), Err(RollbackError::NoVerifiedCheckpoint { discarded: 0 }));
        assert!(matches!(lockstep.run(&InputStream::new(), 5), RunOutcome::Diverged(_)));
        let evidence = lockstep.evidence().expect("the first run collects the evidence");
        assert_eq!(evidence.divergence.sync_point, 1);
        assert!(evidence.localization_error.as_deref().unwrap().contains("no verified checkpoint"));
        assert_eq!(lockstep.evidence_history().len(), 1);
        let _ = lockstep.run(&InputStream::new(), 5);
        assert_eq!(lockstep.evidence_history().len(), 1, "collected once");
    }

    #[test]
    fn cycle_misalignment_message_names_the_lagging_machine() {
        let record = |cpu_cycle| FrameRecord {
            frame: 813,
            cpu_cycle,
            ppu_scanline: 241,
            ppu_dot: 0,
            state_hash: StateHash::default(),
        };
        let divergence = Divergence {
            kind: DivergenceKind::CycleMisalignment,
            frame: 812,
            at_frame_end: true,
            sync_point: 813,
            a: record(100),
            b: record(97),
        };
        assert_eq!(divergence.to_string(), "B is 3 CPU cycles behind A at the end of frame 812");
    }
}
