//! A pipeline as a state machine with no I/O: events in ([`Event`], [`Pipeline::offer_input`]), actions
//! out ([`Pipeline::poll_action`]). Time is whatever the caller says it is, so tests drive it with a
//! seeded clock and random event orders; the runtime drives it with the real clock, threads and
//! processes.
//!
//! What it does:
//! - feeds both workers the same records, each at its own pace but never more than the drift window
//!   ahead of its twin, and compares their records frame by frame with the lockstep runner's rule
//!   (equal records verify the frame; different CPU cycles are a cycle misalignment, otherwise a state
//!   divergence);
//! - keeps verified checkpoints (a worker's snapshot whose hash both workers reported at that frame);
//! - on a divergence turns read-only (new records go to the dead-letter queue), asks for the evidence
//!   and, by policy, rolls back at once or waits for the alert;
//! - the rollback procedure, every step logged and counted, idempotent (a second trigger during a
//!   rollback is absorbed):
//!
//! ```text
//!   detect ──► 1 cut intake ──► 2 isolate suspect ──► 3 restore both ──► 4 verify hashes ──► 5 replay DLQ ──► 6 normal
//!   (flag=1)   (read-only,       (stop the worker:     (restart the       (recovery mode:     (in order,      (intake
//!              records → DLQ)     thread or process)    isolated one,      both == checkpoint)  verified)       resumes)
//!                                                       load checkpoint)         │ no
//!                                                                                ▼
//!                                                                   older checkpoint, or retry with
//!                                                                   backoff (full jitter), then give up
//! ```
//!
//! ```
//! use std::time::Duration;
//! use anes_ops::pipeline::{Action, Pipeline, PipelineSettings};
//! use anes_ops::metrics::PipelineMetrics;
//! let mut pipeline = Pipeline::new(PipelineSettings::new("p1"), PipelineMetrics::detached());
//! // A new pipeline starts its two workers first.
//! assert!(matches!(pipeline.poll_action(Duration::ZERO), Some(Action::Start { .. })));
//! assert!(matches!(pipeline.poll_action(Duration::ZERO), Some(Action::Start { .. })));
//! ```

mod log;
mod source;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_core::state::FrameRecord;
use anes_lockstep::DivergenceKind;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use log::Accounting;
use log::{InputLog, LogRecord};
pub use source::{NTSC_FRAMES_PER_SECOND, Pace, ReplaySource};

use crate::backoff::Backoff;
use crate::dlq::{DeadLetterQueue, MemoryDlq};
use crate::metrics::PipelineMetrics;
use crate::worker::protocol::{BuildInfo, Command, Reply, WireInput};
use crate::worker::{WorkerId, WorkerMessage, WorkerOutput};

/// The drift the design's alert tolerates (`worker_drift_offset_records > 50` fires).
pub const ALERT_DRIFT_THRESHOLD: u64 = 50;

/// Most records in one feed to a worker.
const MAX_FEED: u64 = 256;

/// Incidents kept for the status API.
const INCIDENTS_KEPT: usize = 16;

/// When a pipeline rolls back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollbackPolicy {
    /// When the alert fires (Alertmanager calls the webhook): the design's procedure.
    #[default]
    Alert,
    /// As soon as the pipeline itself sees a divergence or a dead worker.
    Immediate,
}

/// What a pipeline lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Records go to the workers.
    Normal,
    /// Records go to the dead-letter queue; nothing unverified runs.
    ReadOnly,
    /// Restored workers are verified and replay the dead-letter queue; new records still wait in it.
    Recovery,
}

impl Mode {
    /// Every mode, in the order of the metric's series.
    pub const ALL: [Mode; 3] = [Mode::Normal, Mode::ReadOnly, Mode::Recovery];

    /// `normal`, `read_only` or `recovery`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::ReadOnly => "read_only",
            Mode::Recovery => "recovery",
        }
    }
}

/// A step of the rollback procedure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// 1: new records go to the dead-letter queue.
    CutIntake,
    /// 2: the suspect worker is stopped.
    Isolate,
    /// 3: both workers load the last verified checkpoint.
    Restore,
    /// 4: both state hashes must equal the checkpoint's.
    Verify,
    /// 5: the dead-letter queue runs, in order.
    ReplayDlq,
    /// 6: normal intake resumes.
    Resume,
}

impl Step {
    /// Every step, in order.
    pub const ALL: [Step; 6] =
        [Step::CutIntake, Step::Isolate, Step::Restore, Step::Verify, Step::ReplayDlq, Step::Resume];

    /// The metric label.
    pub const fn name(self) -> &'static str {
        match self {
            Step::CutIntake => "cut_intake",
            Step::Isolate => "isolate",
            Step::Restore => "restore",
            Step::Verify => "verify",
            Step::ReplayDlq => "replay_dlq",
            Step::Resume => "resume",
        }
    }

    /// 1 to 6.
    pub const fn number(self) -> usize {
        self as usize + 1
    }
}

/// How a pipeline is set up.
#[derive(Debug, Clone)]
pub struct PipelineSettings {
    /// The `pipeline_id`.
    pub id: String,
    /// A checkpoint every this many frames.
    pub checkpoint_every: u64,
    /// Verified checkpoints kept.
    pub checkpoints_kept: usize,
    /// Most records a worker may be ahead of its twin.
    pub drift_window: u64,
    /// When to roll back.
    pub policy: RollbackPolicy,
    /// Most records waiting for verification before intake is refused.
    pub backlog_capacity: u64,
    /// Most records in the dead-letter queue.
    pub dlq_capacity: usize,
    /// A rollback step that makes no progress for this long fails the attempt.
    pub step_timeout: Duration,
    /// Attempts per incident before the pipeline gives up (stays read-only, the alert keeps firing).
    pub max_attempts: u32,
    /// With the immediate policy: how long to wait for the referee's verdict on who diverged before
    /// isolating both workers.
    pub verdict_timeout: Duration,
    /// Retry delays between attempts: base, cap, jitter seed.
    pub retry: (Duration, Duration, u64),
}

impl PipelineSettings {
    /// Defaults: a checkpoint every 60 frames, 4 kept, a drift window of 120 records, the alert
    /// policy, a backlog of 65,536 records and a dead-letter queue of 262,144 (over an hour at 60 per
    /// second), 20 s per step, 3 attempts.
    pub fn new(id: &str) -> PipelineSettings {
        PipelineSettings {
            id: id.to_string(),
            checkpoint_every: 60,
            checkpoints_kept: 4,
            drift_window: 120,
            policy: RollbackPolicy::Alert,
            backlog_capacity: 1 << 16,
            dlq_capacity: 1 << 18,
            step_timeout: Duration::from_secs(20),
            max_attempts: 3,
            verdict_timeout: Duration::from_secs(2),
            retry: (Duration::from_millis(500), Duration::from_secs(30), 0x5eed),
        }
    }
}

/// A verified checkpoint: both workers had this state hash before frame `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Sequence number of the next frame.
    pub seq: u64,
    /// The state hash both workers reported.
    pub state_hash: [u8; 32],
    /// A snapshot with that hash.
    pub snapshot: Arc<Vec<u8>>,
    /// When it was verified.
    pub taken_at: Duration,
}

/// What to find out about a divergence: who diverged (the referee replays the checkpoint on a third
/// console) and the lockstep runner's evidence bundle.
#[derive(Debug, Clone)]
pub struct Investigation {
    /// The incident.
    pub incident: u64,
    /// Sequence number of the frame whose records differ.
    pub seq: u64,
    /// Both workers' records of it.
    pub records: [FrameRecord; 2],
    /// The last verified checkpoint, if any.
    pub checkpoint: Option<Checkpoint>,
    /// Inputs from the checkpoint through frame `seq`.
    pub inputs: Vec<FrameInput>,
    /// Faults that fired in each worker since the checkpoint (lockstep fault specs).
    pub faults: [Vec<String>; 2],
}

/// What the pipeline asks its runtime to do.
#[derive(Debug, Clone)]
pub enum Action {
    /// Start a worker (it loads the ROM and answers `loaded`).
    Start {
        /// Which.
        worker: WorkerId,
        /// Its new incarnation.
        incarnation: u64,
    },
    /// Send a command to a worker.
    Send {
        /// Which.
        worker: WorkerId,
        /// What.
        command: Command,
    },
    /// Stop a worker for good (isolation), then report [`Event::WorkerStopped`].
    Stop {
        /// Which.
        worker: WorkerId,
        /// The incarnation to stop.
        incarnation: u64,
    },
    /// Make a worker die abruptly (a drill).
    Crash {
        /// Which.
        worker: WorkerId,
    },
    /// Find out who diverged and keep the evidence; answer with [`Event::Verdict`].
    Investigate(Box<Investigation>),
    /// Shutdown: intake is stopped and this is the final verified checkpoint (`None` when none could
    /// be verified).
    Drained(Option<Checkpoint>),
}

/// A drill: a fault put into one worker on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drill {
    /// A lockstep fault spec (`flip:ram:0x0010:3`, `stall:5`, `input:0:7`), optionally `@CYCLE`.
    Fault(String),
    /// The worker answers nothing for this long.
    Stall(Duration),
    /// The worker dies.
    Crash,
}

/// Something that happened.
#[derive(Debug, Clone)]
pub enum Event {
    /// Time passed.
    Tick,
    /// A worker said something.
    Worker(WorkerMessage),
    /// A worker asked to stop has stopped.
    WorkerStopped {
        /// Which.
        worker: WorkerId,
        /// The incarnation that stopped.
        incarnation: u64,
    },
    /// The referee's finding on an incident.
    Verdict {
        /// The incident.
        incident: u64,
        /// Workers whose record differs from the referee's (empty: it did not reproduce).
        suspects: Vec<WorkerId>,
    },
    /// The evidence of an incident is written.
    EvidenceWritten {
        /// The incident.
        incident: u64,
        /// Where (relative to the evidence directory).
        path: String,
    },
    /// The alert fired for this pipeline.
    AlertFiring,
    /// The alert resolved for this pipeline (information only).
    AlertResolved,
    /// A drill.
    Drill {
        /// Target.
        worker: WorkerId,
        /// What.
        drill: Drill,
    },
    /// Stop intake, take a final verified checkpoint.
    Drain,
}

/// Why a record was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Refusal {
    /// The service is stopping.
    #[error("the pipeline is stopping and takes no more records")]
    Stopping,
    /// Too many records wait for verification.
    #[error("the pipeline's backlog is full ({capacity} records wait for verification); retry later")]
    BacklogFull {
        /// Capacity.
        capacity: u64,
    },
    /// The dead-letter queue is full.
    #[error("the pipeline is read-only and its dead-letter queue is full ({capacity} records); retry later")]
    DlqFull {
        /// Capacity.
        capacity: usize,
    },
}

/// The answer to a pushed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PushOutcome {
    /// Records taken.
    pub accepted: u64,
    /// Records already received before (the batch overlapped what was sent earlier).
    pub duplicates: u64,
    /// The sequence number the pipeline expects next.
    pub next_seq: u64,
    /// Why the rest of the batch was not taken, if it was not.
    pub refused: Option<Refusal>,
}

/// A pushed batch that does not continue the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("sequence gap: the batch starts at {first_seq} but the pipeline expects {expected} next")]
pub struct SequenceGap {
    /// Where the batch starts.
    pub first_seq: u64,
    /// What the pipeline expects.
    pub expected: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum WorkerPhase {
    Starting,
    Restoring,
    Running,
    Stopping,
    Stopped,
    Exited,
}

#[derive(Debug)]
struct WorkerSlot {
    id: WorkerId,
    phase: WorkerPhase,
    incarnation: u64,
    /// Next sequence number to send.
    next_to_send: u64,
    /// Records reported so far (the next sequence number expected back).
    processed: u64,
    /// Records reported and not compared yet, with their arrival time.
    queue: VecDeque<(u64, FrameRecord, Duration)>,
    /// The record a restore produced.
    restored: Option<FrameRecord>,
    /// The power-on record.
    loaded: Option<FrameRecord>,
    /// Faults fired, with the frame they fired in.
    faults: Vec<(u64, String)>,
    build: Option<BuildInfo>,
    restarts: u64,
    last_exit: Option<String>,
    drain_snapshot: Option<([u8; 32], Arc<Vec<u8>>)>,
}

impl WorkerSlot {
    fn new(id: WorkerId) -> WorkerSlot {
        WorkerSlot {
            id,
            phase: WorkerPhase::Starting,
            incarnation: 1,
            next_to_send: 0,
            processed: 0,
            queue: VecDeque::new(),
            restored: None,
            loaded: None,
            faults: Vec::new(),
            build: None,
            restarts: 0,
            last_exit: None,
            drain_snapshot: None,
        }
    }

    fn reset_to(&mut self, seq: u64) {
        self.next_to_send = seq;
        self.processed = seq;
        self.queue.clear();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Trigger {
    Alert,
    Detection,
    Retry,
}

#[derive(Debug, Clone)]
struct Rollback {
    incident: Option<u64>,
    attempt: u32,
    step: Step,
    /// The step fails when nothing moves until then.
    deadline: Duration,
    started_at: Duration,
    suspects: Vec<WorkerId>,
}

#[derive(Debug, Clone)]
enum Phase {
    /// Running (a dead worker still counts as normal: nothing is corrupted, verification waits).
    Normal,
    /// Diverged; read-only, waiting for the verdict (immediate policy) or the alert.
    Halted {
        incident: u64,
        since: Duration,
    },
    RollingBack(Rollback),
    RetryWait {
        until: Duration,
        incident: Option<u64>,
        attempt: u32,
    },
    /// Out of attempts: read-only until an alert starts a new incident.
    GaveUp {
        incident: Option<u64>,
    },
}

/// One divergence or worker failure, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    /// Number, from 1.
    pub id: u64,
    /// `state`, `cycle_misalignment` or `worker_exited`.
    pub kind: String,
    /// What happened.
    pub message: String,
    /// Sequence number of the frame (divergences).
    pub seq: Option<u64>,
    /// Seconds since the service started, when detected.
    pub detected_at_seconds: f64,
    /// Workers the referee found at fault (`None` until it answered).
    pub suspects: Option<Vec<WorkerId>>,
    /// The evidence bundle (relative to the evidence directory).
    pub evidence: Option<String>,
    /// `success` or `failed`, once a rollback ended.
    pub rollback: Option<String>,
    /// Seconds from detection to the end of the successful rollback.
    pub healed_after_seconds: Option<f64>,
}

/// A worker, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerStatus {
    /// `a` or `b`.
    pub id: WorkerId,
    /// `starting`, `restoring`, `running`, `stopping`, `stopped` or `exited`.
    pub phase: String,
    /// Incarnation (the fencing token).
    pub incarnation: u64,
    /// Records reported.
    pub processed: u64,
    /// Times started again.
    pub restarts: u64,
    /// What the worker said about its build.
    pub build: Option<BuildInfo>,
    /// How its last incarnation ended.
    pub last_exit: Option<String>,
}

/// The newest verified checkpoint, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointStatus {
    /// Next frame's sequence number.
    pub seq: u64,
    /// State hash (hex).
    pub state_hash: String,
    /// Seconds since it was verified.
    pub age_seconds: f64,
}

/// A pipeline, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineStatus {
    /// `pipeline_id`.
    pub id: String,
    /// Normal, read-only or recovery.
    pub mode: Mode,
    /// `normal`, `halted`, `rolling_back`, `retry_wait` or `gave_up`.
    pub phase: String,
    /// The rollback step in progress.
    pub rollback_step: Option<Step>,
    /// The rollback policy.
    pub policy: RollbackPolicy,
    /// |records processed by A − by B|.
    pub drift_records: u64,
    /// True while the workers disagree.
    pub diverged: bool,
    /// Distinct frames verified.
    pub frames_verified: u64,
    /// Next frame to verify.
    pub next_seq: u64,
    /// Where every record is.
    pub accounting: Accounting,
    /// The newest verified checkpoint.
    pub checkpoint: Option<CheckpointStatus>,
    /// Both workers.
    pub workers: Vec<WorkerStatus>,
    /// Recent incidents, newest first.
    pub incidents: Vec<Incident>,
    /// Rollbacks that succeeded.
    pub rollbacks_succeeded: u64,
    /// Rollback attempts that failed.
    pub rollbacks_failed: u64,
    /// True once shutdown began.
    pub draining: bool,
    /// Seconds since the service started, when this status was taken.
    pub now_seconds: f64,
    /// When the last firing notification for this pipeline arrived (seconds since the service started).
    pub last_alert_firing_seconds: Option<f64>,
    /// When the last resolved notification arrived.
    pub last_alert_resolved_seconds: Option<f64>,
}

/// The pipeline state machine.
#[derive(Debug)]
pub struct Pipeline {
    settings: PipelineSettings,
    metrics: PipelineMetrics,
    log: InputLog,
    dlq: Box<dyn DeadLetterQueue>,
    workers: [WorkerSlot; 2],
    checkpoints: VecDeque<Checkpoint>,
    /// Snapshots reported and not matched with a verified frame yet.
    snapshots: VecDeque<(u64, [u8; 32], Arc<Vec<u8>>)>,
    /// Verified checkpoint boundaries (sequence number, hash), newest last.
    boundaries: VecDeque<(u64, [u8; 32])>,
    verified_until: u64,
    diverged: bool,
    phase: Phase,
    received: u64,
    dead_lettered: u64,
    replayed_from_dlq: u64,
    incidents: VecDeque<Incident>,
    next_incident: u64,
    rollbacks: (u64, u64),
    backoff: Backoff,
    draining: bool,
    drain_requested: bool,
    drained: bool,
    feed_due: bool,
    actions: VecDeque<Action>,
    now: Duration,
    last_alert: (Option<Duration>, Option<Duration>),
}

impl Pipeline {
    /// A pipeline with an in-memory dead-letter queue; its first actions start both workers.
    pub fn new(settings: PipelineSettings, metrics: PipelineMetrics) -> Pipeline {
        let dlq = Box::new(MemoryDlq::new(settings.dlq_capacity));
        Pipeline::with_dlq(settings, metrics, dlq)
    }

    /// A pipeline with the given dead-letter queue.
    pub fn with_dlq(
        settings: PipelineSettings,
        metrics: PipelineMetrics,
        dlq: Box<dyn DeadLetterQueue>,
    ) -> Pipeline {
        let (base, cap, seed) = settings.retry;
        let mut pipeline = Pipeline {
            backoff: Backoff::new(base, cap, seed),
            settings,
            metrics,
            log: InputLog::default(),
            dlq,
            workers: [WorkerSlot::new(WorkerId::A), WorkerSlot::new(WorkerId::B)],
            checkpoints: VecDeque::new(),
            snapshots: VecDeque::new(),
            boundaries: VecDeque::new(),
            verified_until: 0,
            diverged: false,
            phase: Phase::Normal,
            received: 0,
            dead_lettered: 0,
            replayed_from_dlq: 0,
            incidents: VecDeque::new(),
            next_incident: 1,
            rollbacks: (0, 0),
            draining: false,
            drain_requested: false,
            drained: false,
            feed_due: false,
            actions: VecDeque::new(),
            now: Duration::ZERO,
            last_alert: (None, None),
        };
        for w in WorkerId::BOTH {
            pipeline.actions.push_back(Action::Start { worker: w, incarnation: 1 });
        }
        pipeline
    }

    /// The pipeline's id.
    pub fn id(&self) -> &str {
        &self.settings.id
    }

    /// The next action, if any. Call until `None` after every event and input.
    pub fn poll_action(&mut self, now: Duration) -> Option<Action> {
        self.now = self.now.max(now);
        if self.feed_due {
            self.feed_due = false;
            self.feed();
        }
        self.actions.pop_front()
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        match &self.phase {
            Phase::Normal => Mode::Normal,
            Phase::RollingBack(r) if matches!(r.step, Step::Verify | Step::ReplayDlq | Step::Resume) => {
                Mode::Recovery
            }
            _ => Mode::ReadOnly,
        }
    }

    /// True once a drain has produced its [`Action::Drained`].
    pub fn is_drained(&self) -> bool {
        self.drained
    }

    /// Records in the log not verified yet.
    pub fn unverified(&self) -> u64 {
        self.log.unverified()
    }

    /// Records the pipeline can take now without refusing.
    pub fn room(&self) -> u64 {
        if self.draining {
            return 0;
        }
        match self.mode() {
            Mode::Normal => self.settings.backlog_capacity.saturating_sub(self.log.unverified()),
            _ => (self.settings.dlq_capacity - self.dlq.len().min(self.settings.dlq_capacity)) as u64,
        }
    }

    /// Takes one input record (from a replay, or one of a pushed batch).
    pub fn offer_input(&mut self, now: Duration, input: FrameInput) -> Result<(), Refusal> {
        self.now = self.now.max(now);
        if self.draining {
            self.metrics.refused_stopping.inc();
            return Err(Refusal::Stopping);
        }
        if self.mode() == Mode::Normal {
            if self.log.unverified() >= self.settings.backlog_capacity {
                self.metrics.refused_backlog.inc();
                return Err(Refusal::BacklogFull { capacity: self.settings.backlog_capacity });
            }
            self.log.push(LogRecord { input, via_dlq: false });
            self.feed_due = true;
        } else {
            if self.dlq.push(input).is_err() {
                self.metrics.refused_dlq.inc();
                return Err(Refusal::DlqFull { capacity: self.settings.dlq_capacity });
            }
            self.dead_lettered += 1;
            self.metrics.dlq_enqueued.inc();
            self.metrics.dlq_records.set(self.dlq.len() as i64);
        }
        self.received += 1;
        self.metrics.records_received.inc();
        Ok(())
    }

    /// Takes a pushed batch whose first record has sequence number `first_seq` (the number of records
    /// the pipeline received before it). Records it already has are skipped, so a producer may resend.
    pub fn push_batch(
        &mut self,
        now: Duration,
        first_seq: u64,
        inputs: &[FrameInput],
    ) -> Result<PushOutcome, SequenceGap> {
        if first_seq > self.received {
            return Err(SequenceGap { first_seq, expected: self.received });
        }
        let duplicates = (self.received - first_seq).min(inputs.len() as u64);
        let mut outcome = PushOutcome { accepted: 0, duplicates, next_seq: self.received, refused: None };
        for &input in &inputs[duplicates as usize..] {
            if let Err(refusal) = self.offer_input(now, input) {
                outcome.refused = Some(refusal);
                break;
            }
            outcome.accepted += 1;
        }
        outcome.next_seq = self.received;
        Ok(outcome)
    }

    /// Handles one event.
    pub fn handle(&mut self, now: Duration, event: Event) {
        self.now = self.now.max(now);
        match event {
            Event::Tick => self.tick(),
            Event::Worker(message) => self.worker_message(message),
            Event::WorkerStopped { worker, incarnation } => self.worker_stopped(worker, incarnation),
            Event::Verdict { incident, suspects } => self.verdict(incident, suspects),
            Event::EvidenceWritten { incident, path } => {
                if let Some(i) = self.incident_mut(incident) {
                    i.evidence = Some(path);
                }
            }
            Event::AlertFiring => {
                self.metrics.alerts_firing.inc();
                self.last_alert.0 = Some(self.now);
                self.alert_firing();
            }
            Event::AlertResolved => {
                self.metrics.alerts_resolved.inc();
                self.last_alert.1 = Some(self.now);
                tracing::info!(
                    pipeline = %self.settings.id, mode = self.mode().name(),
                    "alert resolved: noted; a resolved alert never re-admits a worker by itself"
                );
            }
            Event::Drill { worker, drill } => self.drill(worker, drill),
            Event::Drain => {
                if !self.draining {
                    self.draining = true;
                    tracing::info!(pipeline = %self.settings.id, "draining: intake stopped, taking a final verified checkpoint");
                }
                self.check_drain();
            }
        }
    }

    // ---- Workers ---------------------------------------------------------------------------------

    fn worker_message(&mut self, message: WorkerMessage) {
        let w = message.worker.index();
        // The fencing token: anything from an incarnation that was replaced is dropped unread.
        if message.incarnation != self.workers[w].incarnation {
            tracing::debug!(pipeline = %self.settings.id, worker = %message.worker, incarnation = message.incarnation, "dropped a message of a replaced incarnation");
            return;
        }
        match message.body {
            WorkerOutput::Replies(replies) => {
                for reply in replies {
                    self.reply(message.worker, reply);
                }
                self.compare();
            }
            WorkerOutput::Exited { reason } => self.worker_exited(message.worker, reason),
        }
    }

    fn reply(&mut self, worker: WorkerId, reply: Reply) {
        let now = self.now;
        let slot = &mut self.workers[worker.index()];
        match reply {
            Reply::Hello { build, .. } => {
                tracing::info!(pipeline = %self.settings.id, %worker, incarnation = slot.incarnation, version = %build.version, git_commit = ?build.git_commit, emulation_epoch = build.emulation_epoch, "worker started");
                slot.build = Some(build);
            }
            Reply::Loaded { record, .. } => {
                if slot.phase != WorkerPhase::Starting {
                    return;
                }
                self.metrics.worker_up[worker.index()].set(1);
                let record: FrameRecord = record.into();
                slot.loaded = Some(record);
                match &self.phase {
                    Phase::RollingBack(r) if r.step == Step::Restore => {
                        let checkpoint = self.checkpoints.back().cloned();
                        if let Some(cp) = checkpoint {
                            self.send_restore(worker, &cp);
                        }
                    }
                    Phase::RollingBack(_) | Phase::RetryWait { .. } | Phase::GaveUp { .. } => {
                        // Started during an attempt that has since failed: it waits for the next one.
                        self.workers[worker.index()].phase = WorkerPhase::Stopped;
                    }
                    Phase::Normal | Phase::Halted { .. } => {
                        slot.phase = WorkerPhase::Running;
                        slot.reset_to(0);
                        self.check_power_on();
                    }
                }
            }
            Reply::Record { seq, record } => {
                if slot.phase != WorkerPhase::Running {
                    return;
                }
                if seq != slot.processed {
                    tracing::error!(pipeline = %self.settings.id, %worker, seq, expected = slot.processed, "worker reported a record out of order; ignored");
                    return;
                }
                slot.processed += 1;
                slot.queue.push_back((seq, record.into(), now));
            }
            Reply::Snapshot { seq, state_hash, bytes } => {
                if slot.phase != WorkerPhase::Running {
                    return;
                }
                let bytes = Arc::new(bytes);
                if self.draining && self.drain_requested && seq == self.log.end() {
                    slot.drain_snapshot = Some((state_hash, Arc::clone(&bytes)));
                    self.check_drain();
                }
                self.offer_snapshot(seq, state_hash, bytes);
            }
            Reply::Restored { seq, record } => {
                if slot.phase != WorkerPhase::Restoring {
                    return;
                }
                slot.phase = WorkerPhase::Running;
                slot.restored = Some(record.into());
                slot.reset_to(seq);
                self.check_restored();
            }
            Reply::FaultFired { seq, spec, refused } => {
                tracing::warn!(pipeline = %self.settings.id, %worker, seq, %spec, refused = ?refused, "injected fault fired");
                if refused.is_none() {
                    slot.faults.push((seq, spec));
                }
            }
            Reply::Error { message } => {
                tracing::error!(pipeline = %self.settings.id, %worker, %message, "worker refused a command");
                if slot.phase == WorkerPhase::Restoring {
                    let reason = format!("worker {worker} could not restore the checkpoint: {message}");
                    self.verification_failed(&reason);
                }
            }
        }
    }

    fn check_power_on(&mut self) {
        let [a, b] = &self.workers;
        let (Some(ra), Some(rb)) = (a.loaded, b.loaded) else { return };
        if a.phase != WorkerPhase::Running || b.phase != WorkerPhase::Running {
            return;
        }
        if ra == rb {
            // The power-on state is the first checkpoint, once a snapshot of it arrives.
            self.boundaries.push_back((0, ra.state_hash.0));
            self.match_snapshots();
        } else {
            tracing::error!(pipeline = %self.settings.id, "the workers disagree at power-on: different builds or ROMs");
            self.divergence(0, ra, rb);
        }
        self.feed_due = true;
    }

    fn worker_exited(&mut self, worker: WorkerId, reason: String) {
        let slot = &mut self.workers[worker.index()];
        let expected = matches!(slot.phase, WorkerPhase::Stopping | WorkerPhase::Stopped);
        slot.last_exit = Some(reason.clone());
        self.metrics.worker_up[worker.index()].set(0);
        if expected {
            return;
        }
        slot.phase = WorkerPhase::Exited;
        slot.queue.clear();
        tracing::error!(pipeline = %self.settings.id, %worker, %reason, "worker exited unexpectedly");
        let id = self.open_incident("worker_exited", format!("worker {worker} exited: {reason}"), None);
        if let Some(i) = self.incident_mut(id) {
            i.suspects = Some(vec![worker]);
        }
        match self.phase.clone() {
            Phase::Normal => {
                if self.settings.policy == RollbackPolicy::Immediate {
                    self.start_rollback(Trigger::Detection, Some(id), vec![worker]);
                }
                // Under the alert policy the twin runs on to the drift window and the alert fires.
                self.feed_due = true;
            }
            Phase::RollingBack(_) => {
                self.attempt_failed(&format!("worker {worker} exited during the rollback: {reason}"))
            }
            Phase::Halted { .. } | Phase::RetryWait { .. } | Phase::GaveUp { .. } => {}
        }
    }

    fn worker_stopped(&mut self, worker: WorkerId, incarnation: u64) {
        let slot = &mut self.workers[worker.index()];
        if slot.incarnation != incarnation {
            return;
        }
        slot.phase = WorkerPhase::Stopped;
        slot.queue.clear();
        self.metrics.worker_up[worker.index()].set(0);
        if let Phase::RollingBack(r) = &self.phase
            && r.step == Step::Isolate
            && r.suspects.iter().all(|s| self.workers[s.index()].phase == WorkerPhase::Stopped)
        {
            self.restore_step();
        }
    }

    fn drill(&mut self, worker: WorkerId, drill: Drill) {
        tracing::warn!(pipeline = %self.settings.id, %worker, ?drill, "drill");
        match drill {
            Drill::Fault(spec) => {
                self.actions.push_back(Action::Send { worker, command: Command::Inject { spec } })
            }
            Drill::Stall(d) => self.actions.push_back(Action::Send {
                worker,
                command: Command::Stall { millis: d.as_millis().min(u128::from(u32::MAX)) as u32 },
            }),
            Drill::Crash => self.actions.push_back(Action::Crash { worker }),
        }
    }

    // ---- Feeding and comparing -------------------------------------------------------------------

    fn feeding(&self) -> bool {
        match &self.phase {
            Phase::Normal => true,
            Phase::RollingBack(r) => r.step == Step::ReplayDlq,
            _ => false,
        }
    }

    fn feed(&mut self) {
        if !self.feeding() {
            return;
        }
        let end = self.log.end();
        for w in WorkerId::BOTH {
            let other_processed = self.workers[w.other().index()].processed;
            let slot = &self.workers[w.index()];
            if slot.phase != WorkerPhase::Running {
                continue;
            }
            let limit = end.min(other_processed.saturating_add(self.settings.drift_window));
            let mut next = slot.next_to_send;
            while next < limit {
                let to = limit.min(next + MAX_FEED);
                let mut inputs = Vec::with_capacity((to - next) as usize);
                for seq in next..to {
                    if let Some(r) = self.log.get(seq) {
                        inputs.push(WireInput::from(r.input));
                    }
                }
                self.actions.push_back(Action::Send {
                    worker: w,
                    command: Command::Frames { first_seq: next, inputs },
                });
                next = to;
            }
            self.workers[w.index()].next_to_send = next;
        }
    }

    fn compare(&mut self) {
        while self.feeding() {
            let (Some(&(sa, ra, ta)), Some(&(sb, rb, tb))) =
                (self.workers[0].queue.front(), self.workers[1].queue.front())
            else {
                break;
            };
            self.workers[0].queue.pop_front();
            self.workers[1].queue.pop_front();
            self.metrics.compare_latency.observe(self.now.saturating_sub(ta.min(tb)).as_secs_f64());
            if sa != sb || ra != rb {
                self.divergence(sa.min(sb), ra, rb);
                break;
            }
            self.verified(sa, ra);
        }
        self.update_drift();
        self.feed_due = true;
    }

    fn update_drift(&self) {
        let drift = self.workers[0].processed.abs_diff(self.workers[1].processed);
        self.metrics.drift.set(drift.min(i64::MAX as u64) as i64);
    }

    fn verified(&mut self, seq: u64, record: FrameRecord) {
        self.verified_until = seq + 1;
        if self.log.mark_verified(seq) {
            self.metrics.frames_verified.inc();
        }
        if self.verified_until % self.settings.checkpoint_every == 0 {
            if self.boundaries.len() == 8 {
                self.boundaries.pop_front();
            }
            self.boundaries.push_back((self.verified_until, record.state_hash.0));
            self.match_snapshots();
        }
        if let Phase::RollingBack(r) = &mut self.phase {
            r.deadline = self.now + self.settings.step_timeout;
            if r.step == Step::ReplayDlq {
                self.replay_progress();
            }
        }
        if self.draining {
            self.check_drain();
        }
    }

    fn offer_snapshot(&mut self, seq: u64, hash: [u8; 32], bytes: Arc<Vec<u8>>) {
        if self.checkpoints.back().is_some_and(|c| c.seq >= seq) || self.snapshots.iter().any(|s| s.0 == seq)
        {
            return;
        }
        let limit = (self.settings.drift_window / self.settings.checkpoint_every + 4) as usize;
        while self.snapshots.len() >= limit {
            self.snapshots.pop_front();
        }
        self.snapshots.push_back((seq, hash, bytes));
        self.match_snapshots();
    }

    fn match_snapshots(&mut self) {
        while let Some(&(seq, hash)) = self.boundaries.front() {
            if let Some(i) = self.snapshots.iter().position(|s| s.0 == seq && s.1 == hash) {
                let (seq, state_hash, snapshot) = self.snapshots.remove(i).expect("found");
                self.snapshots.retain(|s| s.0 > seq);
                self.push_checkpoint(Checkpoint { seq, state_hash, snapshot, taken_at: self.now });
                self.boundaries.pop_front();
            } else if self.snapshots.iter().any(|s| s.0 > seq) || self.snapshots.iter().any(|s| s.0 == seq) {
                // Its snapshot was lost or does not match: it cannot become a checkpoint.
                self.boundaries.pop_front();
            } else {
                break;
            }
        }
    }

    fn push_checkpoint(&mut self, checkpoint: Checkpoint) {
        tracing::debug!(pipeline = %self.settings.id, seq = checkpoint.seq, "verified checkpoint");
        if self.checkpoints.len() >= self.settings.checkpoints_kept {
            self.checkpoints.pop_front();
        }
        self.checkpoints.push_back(checkpoint);
        self.metrics.checkpoint_age.set(0.0);
        let oldest = self.checkpoints.front().map_or(0, |c| c.seq);
        self.log.trim_before(oldest);
        for slot in &mut self.workers {
            slot.faults.retain(|(seq, _)| *seq >= oldest);
        }
    }

    // ---- Divergence and alerts -------------------------------------------------------------------

    fn divergence(&mut self, seq: u64, a: FrameRecord, b: FrameRecord) {
        let kind = if a.cpu_cycle != b.cpu_cycle {
            DivergenceKind::CycleMisalignment
        } else {
            DivergenceKind::State
        };
        match kind {
            DivergenceKind::State => self.metrics.divergences_state.inc(),
            DivergenceKind::CycleMisalignment => self.metrics.divergences_cycle.inc(),
        };
        self.diverged = true;
        self.metrics.divergence_flag.set(1);
        for slot in &mut self.workers {
            slot.queue.clear();
        }
        let message =
            anes_lockstep::Divergence { kind, frame: seq, at_frame_end: true, sync_point: seq + 1, a, b }
                .to_string()
                .replace(" A ", " worker A ")
                .replace(" B ", " worker B ");
        tracing::error!(pipeline = %self.settings.id, seq, kind = kind.name(), %message, "divergence: the pipeline is read-only");
        let id = self.open_incident(kind.name(), message, Some(seq));
        let checkpoint = self.checkpoints.back().cloned();
        let from = checkpoint.as_ref().map_or(0, |c| c.seq);
        let mut inputs = Vec::new();
        self.log.inputs(from, seq + 1, &mut inputs);
        let faults = [0, 1].map(|w| {
            self.workers[w].faults.iter().filter(|(s, _)| *s >= from).map(|(_, spec)| spec.clone()).collect()
        });
        self.actions.push_back(Action::Investigate(Box::new(Investigation {
            incident: id,
            seq,
            records: [a, b],
            checkpoint,
            inputs,
            faults,
        })));
        match self.phase.clone() {
            Phase::Normal => self.phase = Phase::Halted { incident: id, since: self.now },
            Phase::RollingBack(_) => self.attempt_failed("the workers diverged again during recovery"),
            _ => {}
        }
        self.publish_mode();
    }

    fn verdict(&mut self, incident: u64, suspects: Vec<WorkerId>) {
        tracing::info!(pipeline = %self.settings.id, incident, ?suspects, "referee's verdict");
        if let Some(i) = self.incident_mut(incident) {
            i.suspects = Some(suspects.clone());
        }
        if let Phase::Halted { incident: halted, .. } = self.phase
            && halted == incident
            && self.settings.policy == RollbackPolicy::Immediate
        {
            self.start_rollback(Trigger::Detection, Some(incident), suspects);
        }
    }

    fn alert_firing(&mut self) {
        match self.phase.clone() {
            Phase::RollingBack(r) => {
                tracing::info!(pipeline = %self.settings.id, step = r.step.name(), "alert firing: a rollback is already in progress");
            }
            Phase::Halted { incident, .. } => {
                let suspects = self.incident_suspects(incident);
                self.start_rollback(Trigger::Alert, Some(incident), suspects);
            }
            Phase::RetryWait { incident, attempt, .. } => {
                let suspects = incident.map(|i| self.incident_suspects(i)).unwrap_or_default();
                self.start_attempt(Trigger::Alert, incident, attempt + 1, suspects);
            }
            Phase::GaveUp { incident } => {
                let suspects = incident.map(|i| self.incident_suspects(i)).unwrap_or_default();
                self.start_rollback(Trigger::Alert, incident, suspects);
            }
            Phase::Normal => {
                // The pipeline has not seen a divergence: the alert saw drift, or a dead worker.
                let [a, b] = &self.workers;
                let dead: Vec<WorkerId> =
                    self.workers.iter().filter(|s| s.phase == WorkerPhase::Exited).map(|s| s.id).collect();
                let suspects = if !dead.is_empty() {
                    dead
                } else if a.processed.abs_diff(b.processed) > ALERT_DRIFT_THRESHOLD {
                    vec![if a.processed < b.processed { WorkerId::A } else { WorkerId::B }]
                } else {
                    Vec::new()
                };
                tracing::warn!(pipeline = %self.settings.id, ?suspects, "alert firing while the pipeline runs: rolling back");
                self.start_rollback(Trigger::Alert, None, suspects);
            }
        }
    }

    fn incident_suspects(&self, incident: u64) -> Vec<WorkerId> {
        self.incidents.iter().find(|i| i.id == incident).and_then(|i| i.suspects.clone()).unwrap_or_default()
    }

    // ---- The rollback procedure ------------------------------------------------------------------

    fn start_rollback(&mut self, trigger: Trigger, incident: Option<u64>, suspects: Vec<WorkerId>) {
        if let Phase::RollingBack(r) = &self.phase {
            tracing::info!(pipeline = %self.settings.id, step = r.step.name(), "rollback already in progress");
            return;
        }
        self.start_attempt(trigger, incident, 1, suspects);
    }

    fn start_attempt(
        &mut self,
        trigger: Trigger,
        incident: Option<u64>,
        attempt: u32,
        suspects: Vec<WorkerId>,
    ) {
        // Who to isolate: the referee's suspects, the dead, or (not knowing) both.
        let mut suspects = suspects;
        for slot in &self.workers {
            if matches!(slot.phase, WorkerPhase::Exited | WorkerPhase::Stopped)
                && !suspects.contains(&slot.id)
            {
                suspects.push(slot.id);
            }
        }
        if suspects.is_empty() {
            suspects = WorkerId::BOTH.to_vec();
        }
        suspects.sort();
        tracing::warn!(pipeline = %self.settings.id, trigger = ?trigger, attempt, ?suspects, "rollback started");
        let rollback = Rollback {
            incident,
            attempt,
            step: Step::CutIntake,
            deadline: self.now + self.settings.step_timeout,
            started_at: self.now,
            suspects: suspects.clone(),
        };
        self.phase = Phase::RollingBack(rollback);
        self.step_done(Step::CutIntake, "new records go to the dead-letter queue; the pipeline is read-only");
        self.publish_mode();
        self.set_step(Step::Isolate);
        for w in suspects {
            let slot = &mut self.workers[w.index()];
            match slot.phase {
                WorkerPhase::Stopped => {}
                WorkerPhase::Exited => slot.phase = WorkerPhase::Stopped,
                _ => {
                    slot.phase = WorkerPhase::Stopping;
                    self.actions.push_back(Action::Stop { worker: w, incarnation: slot.incarnation });
                }
            }
        }
        self.step_done(Step::Isolate, "suspect workers are being stopped");
        let all_stopped = match &self.phase {
            Phase::RollingBack(r) => {
                r.suspects.iter().all(|s| self.workers[s.index()].phase == WorkerPhase::Stopped)
            }
            _ => false,
        };
        if all_stopped {
            self.restore_step();
        }
    }

    fn set_step(&mut self, step: Step) {
        if let Phase::RollingBack(r) = &mut self.phase {
            r.step = step;
            r.deadline = self.now + self.settings.step_timeout;
        }
        self.publish_mode();
    }

    fn step_done(&self, step: Step, what: &str) {
        self.metrics.steps[step as usize].inc();
        tracing::warn!(pipeline = %self.settings.id, step = step.name(), "rollback step {}/6 {}: {what}", step.number(), step.name());
    }

    fn restore_step(&mut self) {
        let Some(checkpoint) = self.checkpoints.back().cloned() else {
            return self.attempt_failed("no verified checkpoint to restore");
        };
        self.set_step(Step::Restore);
        for w in WorkerId::BOTH {
            let slot = &mut self.workers[w.index()];
            slot.restored = None;
            if slot.phase == WorkerPhase::Stopped {
                slot.incarnation += 1;
                slot.restarts += 1;
                slot.phase = WorkerPhase::Starting;
                slot.reset_to(checkpoint.seq);
                self.metrics.restarts[w.index()].inc();
                self.actions.push_back(Action::Start { worker: w, incarnation: slot.incarnation });
            } else {
                self.send_restore(w, &checkpoint);
            }
        }
        self.step_done(
            Step::Restore,
            &format!(
                "both workers load the checkpoint before frame {} (state hash {})",
                checkpoint.seq,
                crate::worker::protocol::to_hex(&checkpoint.state_hash)
            ),
        );
    }

    fn send_restore(&mut self, worker: WorkerId, checkpoint: &Checkpoint) {
        let slot = &mut self.workers[worker.index()];
        slot.phase = WorkerPhase::Restoring;
        slot.restored = None;
        slot.reset_to(checkpoint.seq);
        self.actions.push_back(Action::Send {
            worker,
            command: Command::Restore { seq: checkpoint.seq, snapshot: checkpoint.snapshot.to_vec() },
        });
    }

    fn check_restored(&mut self) {
        let Phase::RollingBack(r) = &self.phase else { return };
        if r.step != Step::Restore {
            return;
        }
        let (Some(ra), Some(rb)) = (self.workers[0].restored, self.workers[1].restored) else { return };
        let Some(checkpoint) = self.checkpoints.back().cloned() else { return };
        self.set_step(Step::Verify);
        if ra.state_hash.0 == checkpoint.state_hash && rb.state_hash.0 == checkpoint.state_hash && ra == rb {
            self.step_done(Step::Verify, "recovery mode: both state hashes equal the checkpoint's");
            self.diverged = false;
            self.metrics.divergence_flag.set(0);
            self.verified_until = checkpoint.seq;
            self.snapshots.clear();
            self.boundaries.clear();
            for slot in &mut self.workers {
                slot.reset_to(checkpoint.seq);
            }
            self.update_drift();
            self.set_step(Step::ReplayDlq);
            let waiting = self.dlq.len();
            self.step_done(
                Step::ReplayDlq,
                &format!("{waiting} records from the dead-letter queue run in order"),
            );
            self.replay_progress();
            self.feed_due = true;
        } else {
            self.verification_failed(&format!(
                "restored hashes {} / {} differ from the checkpoint's {}",
                ra.state_hash,
                rb.state_hash,
                crate::worker::protocol::to_hex(&checkpoint.state_hash)
            ));
        }
    }

    fn verification_failed(&mut self, reason: &str) {
        let discarded = self.checkpoints.pop_back();
        tracing::error!(pipeline = %self.settings.id, seq = discarded.as_ref().map(|c| c.seq), %reason, "checkpoint failed verification: discarded");
        if self.checkpoints.is_empty() {
            return self.attempt_failed(&format!("no verified checkpoint is left ({reason})"));
        }
        // Workers that failed to restore get a fresh start; the others just load the older one.
        self.restore_step();
    }

    /// Replays the dead-letter queue into the log once the workers caught up with it, and resumes
    /// normal mode when both are done.
    fn replay_progress(&mut self) {
        if self.verified_until < self.log.end() {
            return;
        }
        if self.dlq.is_empty() {
            return self.resume();
        }
        let mut batch = Vec::new();
        self.dlq.take_front(usize::MAX, &mut batch);
        for input in &batch {
            self.log.push(LogRecord { input: *input, via_dlq: true });
        }
        self.replayed_from_dlq += batch.len() as u64;
        self.metrics.dlq_replayed.inc_by(batch.len() as u64);
        self.metrics.dlq_records.set(self.dlq.len() as i64);
        tracing::info!(pipeline = %self.settings.id, records = batch.len(), "replaying records from the dead-letter queue");
        self.feed_due = true;
    }

    fn resume(&mut self) {
        let Phase::RollingBack(r) = self.phase.clone() else { return };
        self.phase = Phase::Normal;
        self.rollbacks.0 += 1;
        self.metrics.rollbacks_success.inc();
        let took = self.now.saturating_sub(r.started_at).as_secs_f64();
        self.step_done(Step::Resume, &format!("normal mode after {took:.2} s (attempt {})", r.attempt));
        if let Some(id) = r.incident {
            let now = self.now;
            if let Some(i) = self.incident_mut(id) {
                i.rollback = Some("success".into());
                i.healed_after_seconds = Some(now.as_secs_f64() - i.detected_at_seconds);
            }
        }
        self.publish_mode();
        self.feed_due = true;
        if self.draining {
            self.check_drain();
        }
    }

    fn attempt_failed(&mut self, reason: &str) {
        let Phase::RollingBack(r) = self.phase.clone() else { return };
        self.rollbacks.1 += 1;
        self.metrics.rollbacks_failed.inc();
        if let Some(id) = r.incident
            && let Some(i) = self.incident_mut(id)
        {
            i.rollback = Some("failed".into());
        }
        if r.attempt >= self.settings.max_attempts {
            tracing::error!(pipeline = %self.settings.id, attempt = r.attempt, %reason, "rollback failed; out of attempts: the pipeline stays read-only until an operator acts or the alert fires again");
            self.phase = Phase::GaveUp { incident: r.incident };
        } else {
            let delay = self.backoff.delay(r.attempt);
            tracing::error!(pipeline = %self.settings.id, attempt = r.attempt, %reason, retry_in_seconds = delay.as_secs_f64(), "rollback attempt failed; retrying");
            self.phase =
                Phase::RetryWait { until: self.now + delay, incident: r.incident, attempt: r.attempt };
        }
        self.publish_mode();
    }

    // ---- Time, drain, status ---------------------------------------------------------------------

    fn tick(&mut self) {
        if let Some(c) = self.checkpoints.back() {
            self.metrics.checkpoint_age.set(self.now.saturating_sub(c.taken_at).as_secs_f64());
        }
        match self.phase.clone() {
            Phase::RollingBack(r) if self.now >= r.deadline => {
                self.attempt_failed(&format!(
                    "step {} made no progress for {:?}",
                    r.step.name(),
                    self.settings.step_timeout
                ));
            }
            Phase::RetryWait { until, incident, attempt } if self.now >= until => {
                self.start_attempt(Trigger::Retry, incident, attempt + 1, Vec::new());
            }
            Phase::Halted { incident, since }
                if self.settings.policy == RollbackPolicy::Immediate
                    && self.now.saturating_sub(since) >= self.settings.verdict_timeout =>
            {
                self.start_rollback(Trigger::Detection, Some(incident), Vec::new());
            }
            _ => {}
        }
        if self.draining {
            self.check_drain();
        }
    }

    fn check_drain(&mut self) {
        if !self.draining || self.drained || !matches!(self.phase, Phase::Normal) {
            return;
        }
        let end = self.log.end();
        let settled = self.workers.iter().all(|s| s.phase == WorkerPhase::Running && s.processed == end);
        if self.verified_until != end || !settled {
            return;
        }
        if !self.drain_requested {
            self.drain_requested = true;
            for w in WorkerId::BOTH {
                self.workers[w.index()].drain_snapshot = None;
                self.actions.push_back(Action::Send { worker: w, command: Command::Snapshot });
            }
            return;
        }
        let (Some((ha, bytes)), Some((hb, _))) =
            (self.workers[0].drain_snapshot.clone(), self.workers[1].drain_snapshot.clone())
        else {
            return;
        };
        self.drained = true;
        if ha == hb {
            let checkpoint = Checkpoint { seq: end, state_hash: ha, snapshot: bytes, taken_at: self.now };
            tracing::info!(pipeline = %self.settings.id, seq = end, state_hash = %crate::worker::protocol::to_hex(&ha), "final verified checkpoint");
            self.push_checkpoint(checkpoint.clone());
            self.actions.push_back(Action::Drained(Some(checkpoint)));
        } else {
            tracing::error!(pipeline = %self.settings.id, seq = end, "the workers' final snapshots differ: no final checkpoint");
            self.actions.push_back(Action::Drained(None));
        }
    }

    /// Gives up draining: reports the newest checkpoint verified so far.
    pub fn abandon_drain(&mut self) -> Option<Checkpoint> {
        self.drained = true;
        self.checkpoints.back().cloned()
    }

    fn publish_mode(&self) {
        self.metrics.set_mode(self.mode());
    }

    fn open_incident(&mut self, kind: &str, message: String, seq: Option<u64>) -> u64 {
        let id = self.next_incident;
        self.next_incident += 1;
        if self.incidents.len() == INCIDENTS_KEPT {
            self.incidents.pop_back();
        }
        self.incidents.push_front(Incident {
            id,
            kind: kind.to_string(),
            message,
            seq,
            detected_at_seconds: self.now.as_secs_f64(),
            suspects: None,
            evidence: None,
            rollback: None,
            healed_after_seconds: None,
        });
        id
    }

    fn incident_mut(&mut self, id: u64) -> Option<&mut Incident> {
        self.incidents.iter_mut().find(|i| i.id == id)
    }

    /// Where every accepted record is.
    pub fn accounting(&self) -> Accounting {
        let (verified_direct, verified_after_dlq) = self.log.verified_counts();
        Accounting {
            received: self.received,
            verified_direct,
            verified_after_dlq,
            dead_lettered: self.dead_lettered,
            replayed_from_dlq: self.replayed_from_dlq,
            in_dlq: self.dlq.len() as u64,
            unverified: self.log.unverified(),
        }
    }

    /// The status API's view.
    pub fn status(&self) -> PipelineStatus {
        let phase = match &self.phase {
            Phase::Normal => "normal",
            Phase::Halted { .. } => "halted",
            Phase::RollingBack(_) => "rolling_back",
            Phase::RetryWait { .. } => "retry_wait",
            Phase::GaveUp { .. } => "gave_up",
        };
        let name = |p: WorkerPhase| {
            serde_json::to_value(p).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
        };
        PipelineStatus {
            id: self.settings.id.clone(),
            mode: self.mode(),
            phase: phase.to_string(),
            rollback_step: match &self.phase {
                Phase::RollingBack(r) => Some(r.step),
                _ => None,
            },
            policy: self.settings.policy,
            drift_records: self.workers[0].processed.abs_diff(self.workers[1].processed),
            diverged: self.diverged,
            frames_verified: self.log.verified_high(),
            next_seq: self.verified_until,
            accounting: self.accounting(),
            checkpoint: self.checkpoints.back().map(|c| CheckpointStatus {
                seq: c.seq,
                state_hash: crate::worker::protocol::to_hex(&c.state_hash),
                age_seconds: self.now.saturating_sub(c.taken_at).as_secs_f64(),
            }),
            workers: self
                .workers
                .iter()
                .map(|s| WorkerStatus {
                    id: s.id,
                    phase: name(s.phase),
                    incarnation: s.incarnation,
                    processed: s.processed,
                    restarts: s.restarts,
                    build: s.build.clone(),
                    last_exit: s.last_exit.clone(),
                })
                .collect(),
            incidents: self.incidents.iter().cloned().collect(),
            rollbacks_succeeded: self.rollbacks.0,
            rollbacks_failed: self.rollbacks.1,
            draining: self.draining,
            now_seconds: self.now.as_secs_f64(),
            last_alert_firing_seconds: self.last_alert.0.map(|t| t.as_secs_f64()),
            last_alert_resolved_seconds: self.last_alert.1.map(|t| t.as_secs_f64()),
        }
    }
}

#[cfg(test)]
mod tests;
