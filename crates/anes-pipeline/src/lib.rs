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
//! use anes_pipeline::{Action, Pipeline, PipelineSettings};
//! let mut pipeline = Pipeline::new(PipelineSettings::new("p1"));
//! // A new pipeline starts its two workers first.
//! assert!(matches!(pipeline.poll_action(Duration::ZERO), Some(Action::Start { .. })));
//! assert!(matches!(pipeline.poll_action(Duration::ZERO), Some(Action::Start { .. })));
//! ```

pub mod backoff;
mod compare;
mod counters;
mod intake;
mod log;
pub mod protocol;
mod rollback;
mod source;
mod status;
pub mod storage;
pub mod worker;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_core::state::FrameRecord;
use anes_lockstep::DivergenceKind;
use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use counters::Counters;
pub use intake::{MAX_AHEAD_WINDOWS, MAX_OFFER};
pub use log::Accounting;
use log::{InputLog, LogRecord};
pub use source::{NTSC_FRAMES_PER_SECOND, Pace, ReplaySource, stream_frames};
pub use status::{CheckpointStatus, Incident, PipelineStatus, StoreStatus, WorkerStatus};

use crate::backoff::Backoff;
use crate::intake::Commit;
use crate::protocol::{BuildInfo, Command, Reply, WireInput};
use crate::storage::MemoryDlq;
use crate::worker::{WorkerId, WorkerMessage, WorkerOutput};

/// The drift the design's alert tolerates (`worker_drift_offset_records > 50` fires).
pub const ALERT_DRIFT_THRESHOLD: u64 = 50;

/// The default [`PipelineSettings::stall_after`]: a real-time pipeline verifies 60 frames a second and
/// a rollback step makes progress at least every few seconds, so 10 s without a frame verified while
/// work waits is not a hiccup.
pub const STALL_AFTER: Duration = Duration::from_secs(10);

/// Most records in one feed to a worker.
const MAX_FEED: u64 = 256;

/// Whether a new verified checkpoint goes to the durable store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Durable {
    /// When `persist_every` frames have passed since the last one stored.
    Periodic,
    /// Always (the final checkpoint of a drain).
    Always,
}

/// Incidents kept for the status API.
const INCIDENTS_KEPT: usize = 16;

/// When a pipeline rolls back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RollbackPolicy {
    /// When the alert fires (Alertmanager calls the webhook): the design's procedure. (A worker that
    /// dies is replaced at once under either policy: the drift alert could wait forever on a quiet
    /// pipeline.)
    #[default]
    Alert,
    /// As soon as the pipeline itself sees a divergence.
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
    /// The store refused this service's epoch ([`Fence`]): no record is taken and no checkpoint
    /// written any more; the records already taken are still verified.
    Fenced,
}

impl Mode {
    /// Every mode, in the order of the metric's series.
    pub const ALL: [Mode; 4] = [Mode::Normal, Mode::ReadOnly, Mode::Recovery, Mode::Fenced];

    /// `normal`, `read_only`, `recovery` or `fenced`.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::ReadOnly => "read_only",
            Mode::Recovery => "recovery",
            Mode::Fenced => "fenced",
        }
    }
}

/// Why the store refused this service's epoch. Either way the pipeline stops taking records and
/// writing checkpoints: nothing vouches for this service as the pipeline's owner any more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Fence {
    /// The store's epoch is newer than ours: another service took the pipeline over.
    TakenOver {
        /// The epoch this service wrote with.
        ours: u64,
        /// The store's.
        current: u64,
    },
    /// The store's epoch is older than ours (0: it holds nothing about the pipeline): the store lost
    /// its data, emptied or restarted without persistence. Not a takeover; but an older epoch may also
    /// be a service that took over the emptied store, which this service cannot tell apart.
    StoreLost {
        /// The epoch this service wrote with.
        ours: u64,
        /// The store's.
        current: u64,
    },
}

impl Fence {
    /// The fencing rule's two refusals told apart: a store epoch above ours was issued to another
    /// writer; one below ours means the store forgot the epochs it issued.
    pub fn classify(ours: u64, current: u64) -> Fence {
        if current > ours { Fence::TakenOver { ours, current } } else { Fence::StoreLost { ours, current } }
    }

    /// The store's epoch.
    pub fn current(self) -> u64 {
        match self {
            Fence::TakenOver { current, .. } | Fence::StoreLost { current, .. } => current,
        }
    }

    /// What an operator reads (readiness, the page).
    pub fn describe(self) -> String {
        match self {
            Fence::TakenOver { ours, current } => format!(
                "fenced: another service took the pipeline over (store epoch {current}, ours {ours}); stop this one"
            ),
            Fence::StoreLost { ours, current } => format!(
                "fenced: the store lost the pipeline's data (store epoch {current}, below ours {ours}): not a takeover (docs/OPERATIONS.md, the store lost its data)"
            ),
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
    /// A verified checkpoint goes to the durable store when at least this many frames have passed since
    /// the last one stored (every checkpoint when it is at most `checkpoint_every`). Rollbacks use the
    /// checkpoints in memory; the store is for a restart, which re-runs the journal from the stored
    /// checkpoint, so storing fewer costs a restart a few seconds of replay and saves the checkpoint
    /// writer's file writes and fsyncs on every other checkpoint.
    pub persist_every: u64,
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
    /// Retry delays between attempts: base, cap, jitter seed (the service seeds it per process and
    /// pipeline from the operating system's entropy; tests keep a fixed one).
    pub retry: (Duration, Duration, u64),
    /// The pipeline counts as stalled when work waits (records unverified or dead-lettered, or an
    /// input source that should be producing) and no frame was verified for this long.
    pub stall_after: Duration,
}

impl PipelineSettings {
    /// Defaults: a checkpoint every 60 frames, 4 kept, one stored durably every 300 frames (5 s of
    /// play), a drift window of 120 records, the alert
    /// policy, a backlog of 65,536 records and a dead-letter queue of 262,144 (over an hour at 60 per
    /// second), 20 s per step, 3 attempts.
    pub fn new(id: &str) -> PipelineSettings {
        PipelineSettings {
            id: id.to_string(),
            checkpoint_every: 60,
            checkpoints_kept: 4,
            persist_every: 300,
            drift_window: 120,
            policy: RollbackPolicy::Alert,
            backlog_capacity: 1 << 16,
            dlq_capacity: 1 << 18,
            step_timeout: Duration::from_secs(20),
            max_attempts: 3,
            verdict_timeout: Duration::from_secs(2),
            retry: (Duration::from_millis(500), Duration::from_secs(30), 0x5eed),
            stall_after: STALL_AFTER,
        }
    }
}

/// A verified checkpoint: both workers had this state hash before frame `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Sequence number of the next frame.
    pub seq: u64,
    /// CPU cycle at that frame boundary.
    pub cpu_cycle: u64,
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
    /// Write this verified checkpoint to the durable store (off the hot path; answer with
    /// [`Event::Store`]).
    Persist(Checkpoint),
    /// A recovery began: take a new store epoch, so writes of the old lineage are fenced.
    BumpStoreEpoch,
    /// Append these records, from sequence number `first_seq` on, to the journal (pending until
    /// [`Action::Commit`]).
    AppendJournal {
        /// The first record's sequence number.
        first_seq: u64,
        /// The records, in order.
        inputs: Vec<FrameInput>,
    },
    /// Append these records, from sequence number `first_seq` on, to the dead-letter queue (pending
    /// until [`Action::Commit`]).
    EnqueueDlq {
        /// The first record's sequence number.
        first_seq: u64,
        /// The records, in order.
        inputs: Vec<FrameInput>,
    },
    /// Make what was appended durable (the journal's, then the queue's; fsync by their policies) and
    /// answer with [`Event::Committed`]. Until then none of it reaches a worker or a producer.
    Commit,
    /// Remove this many records from the front of the dead-letter queue: they are journaled now.
    DiscardDlq {
        /// How many.
        n: u64,
    },
    /// The journal's records before `seq` are no longer needed for recovery (the store keeps no
    /// checkpoint older than it); old segments may go.
    ReleaseJournal {
        /// The oldest frame the store keeps.
        seq: u64,
    },
    /// Answer the producer of the oldest push not answered yet ([`Pipeline::push_batch`]): what it
    /// counts as accepted is durable.
    Acknowledge(PushOutcome),
}

/// What the checkpoint store's writer reports back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreEvent {
    /// The epoch the writer writes with.
    Epoch(u64),
    /// A checkpoint is durable; the store keeps checkpoints from `oldest_kept_seq` on.
    Persisted {
        /// Its frame.
        seq: u64,
        /// Its epoch.
        epoch: u64,
        /// The oldest frame the store keeps.
        oldest_kept_seq: u64,
    },
    /// The store refused this writer's epoch (another writer took over, or the store lost its data;
    /// [`Fence::classify`] tells which): stop taking records.
    Fenced {
        /// This service's epoch.
        writer: u64,
        /// The store's.
        current: u64,
    },
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

impl std::fmt::Display for Drill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drill::Fault(spec) => write!(f, "fault {spec}"),
            Drill::Stall(duration) => write!(f, "stall {} s", duration.as_secs_f64()),
            Drill::Crash => f.write_str("crash"),
        }
    }
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
    /// The checkpoint store's writer reported.
    Store(StoreEvent),
    /// The answer to [`Action::Commit`]: `None` where the write succeeded, else what went wrong. On
    /// an error the records of that store pending since the last commit are lost.
    Committed {
        /// The journal's write.
        journal_error: Option<String>,
        /// The dead-letter queue's write.
        dlq_error: Option<String>,
    },
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
    /// The journal or the dead-letter queue could not be written: nothing of this was kept.
    #[error(
        "the records could not be stored durably (journal or dead-letter queue: see the service's log); retry later"
    )]
    Storage,
    /// Another service took this pipeline over (a newer store epoch).
    #[error("another service took this pipeline over (store epoch {current}); send records there")]
    Fenced {
        /// The store's epoch.
        current: u64,
    },
    /// The store lost the pipeline's data (its epoch fell below this service's): nothing vouches for
    /// this service as the owner, so it takes nothing more.
    #[error(
        "the checkpoint store lost this pipeline's data (store epoch {current}, below this service's {ours}); nothing more is taken until an operator restarts the service (docs/OPERATIONS.md)"
    )]
    StoreLost {
        /// The store's epoch.
        current: u64,
        /// This service's.
        ours: u64,
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

impl Trigger {
    const fn name(self) -> &'static str {
        match self {
            Trigger::Alert => "alert",
            Trigger::Detection => "detection",
            Trigger::Retry => "retry",
        }
    }
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
    /// The recovery of a service's start from what the previous run left.
    startup: bool,
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

/// The pipeline state machine.
#[derive(Debug)]
pub struct Pipeline {
    settings: PipelineSettings,
    counters: Counters,
    log: InputLog,
    /// The dead-letter queue's records (the durable copy is the service's).
    dlq: MemoryDlq,
    /// What the commit asked for and not answered yet covers.
    commit_in_flight: Option<Commit>,
    /// Commits asked for so far.
    commits_started: u64,
    /// Pushes not answered yet, with the commit that makes them durable, oldest first.
    pushes: VecDeque<(u64, PushOutcome)>,
    /// Records the replay source must take back (their commit failed).
    rewind_source: u64,
    workers: [WorkerSlot; 2],
    checkpoints: VecDeque<Checkpoint>,
    /// Snapshots reported and not matched with a verified frame yet.
    snapshots: VecDeque<(u64, [u8; 32], Arc<Vec<u8>>)>,
    /// Verified checkpoint boundaries (sequence number, hash, CPU cycle), newest last.
    boundaries: VecDeque<(u64, [u8; 32], u64)>,
    /// The frame of the newest checkpoint handed to the store.
    last_persisted: Option<u64>,
    verified_until: u64,
    last_verified_cycle: u64,
    verified_before_start: u64,
    store: StoreStatus,
    fence: Option<Fence>,
    diverged: bool,
    phase: Phase,
    received: u64,
    /// Records from this sequence number on were never counted as refused: a record offered again
    /// after a refusal (a replay's retry, a producer's resend) is counted once.
    refused_from: u64,
    dead_lettered: u64,
    replayed_from_dlq: u64,
    /// The driver's input source should be producing records (a replay not finished).
    input_expected: bool,
    /// When the stall clock last restarted: a frame verified, or nothing waiting.
    last_progress: Duration,
    stalled: bool,
    /// When the pipeline last did something: took a record or verified a frame.
    last_activity: Duration,
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
    /// A pipeline starting from power-on; its first actions start both workers.
    pub fn new(settings: PipelineSettings) -> Pipeline {
        let (base, cap, seed) = settings.retry;
        let dlq_capacity = settings.dlq_capacity;
        let mut pipeline = Pipeline {
            backoff: Backoff::new(base, cap, seed),
            settings,
            counters: Counters::default(),
            log: InputLog::default(),
            dlq: MemoryDlq::new(dlq_capacity),
            commit_in_flight: None,
            commits_started: 0,
            pushes: VecDeque::new(),
            rewind_source: 0,
            workers: [WorkerSlot::new(WorkerId::A), WorkerSlot::new(WorkerId::B)],
            checkpoints: VecDeque::new(),
            snapshots: VecDeque::new(),
            boundaries: VecDeque::new(),
            last_persisted: None,
            verified_until: 0,
            last_verified_cycle: 0,
            verified_before_start: 0,
            store: StoreStatus::default(),
            fence: None,
            diverged: false,
            phase: Phase::Normal,
            received: 0,
            refused_from: 0,
            dead_lettered: 0,
            replayed_from_dlq: 0,
            input_expected: false,
            last_progress: Duration::ZERO,
            stalled: false,
            last_activity: Duration::ZERO,
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

    /// A pipeline that continues what a previous run of the service left: the newest durable
    /// checkpoint (`None`: power-on), the journaled records from it on (`log`, starting at the
    /// checkpoint's frame), and the dead-letter queue's records as recovered (`dlq`, continuing the
    /// log). Both workers start, load the
    /// checkpoint, are verified against its hash, re-run the journaled records, then the queue's,
    /// before normal intake resumes (the rollback procedure's steps 3 to 6). Meanwhile pushed records
    /// wait in the queue.
    pub fn recover(
        settings: PipelineSettings,
        checkpoint: Option<Checkpoint>,
        log: Vec<FrameInput>,
        dlq: Vec<(u64, FrameInput)>,
    ) -> Pipeline {
        let start = checkpoint.as_ref().map_or(0, |c| c.seq);
        let mut pipeline = Pipeline::new(settings);
        // A queue recovered longer than the capacity (a smaller capacity configured since) runs whole.
        pipeline.dlq = MemoryDlq::new(pipeline.settings.dlq_capacity.max(dlq.len()));
        for (seq, input) in dlq {
            let _ = pipeline.dlq.push(seq, input);
        }
        pipeline.dlq.commit();
        if checkpoint.is_none() && log.is_empty() && pipeline.dlq.is_empty() {
            return pipeline;
        }
        pipeline.log = InputLog::starting_at(start);
        for input in log {
            pipeline.log.push(LogRecord { input, via_dlq: false });
        }
        pipeline.log.commit();
        pipeline.verified_before_start = start;
        pipeline.verified_until = start;
        pipeline.received = pipeline.log.end() + pipeline.dlq.len() as u64;
        pipeline.refused_from = pipeline.received;
        // The queue's records were dead-lettered by the previous run; counting them here keeps
        // dead-lettered = replayed + still queued true across the restart.
        pipeline.dead_lettered = pipeline.dlq.len() as u64;
        pipeline.store.recovered_from_seq = checkpoint.as_ref().map(|c| c.seq);
        if let Some(c) = checkpoint {
            pipeline.last_verified_cycle = c.cpu_cycle;
            pipeline.checkpoints.push_back(c);
        }
        for slot in &mut pipeline.workers {
            slot.reset_to(start);
        }
        pipeline.phase = Phase::RollingBack(Rollback {
            incident: None,
            attempt: 1,
            step: Step::Restore,
            deadline: pipeline.settings.step_timeout,
            started_at: Duration::ZERO,
            suspects: WorkerId::BOTH.to_vec(),
            startup: true,
        });
        tracing::warn!(
            pipeline = %pipeline.settings.id,
            checkpoint_seq = start,
            journaled = pipeline.log.end() - start,
            in_dlq = pipeline.dlq.len(),
            "recovering from the previous run: both workers load the checkpoint, re-run the journaled records, then the dead-letter queue"
        );
        pipeline.publish_mode();
        pipeline
    }

    /// What the pipeline counted so far (the service copies it into its metrics).
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The compare latencies recorded since the last call, oldest first.
    pub fn take_compare_latencies(&mut self) -> std::vec::Drain<'_, f64> {
        self.counters.take_compare_latencies()
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
        if self.fence.is_some() {
            return Mode::Fenced;
        }
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

    /// Records the pipeline can take now without refusing (none while fenced or draining: a source
    /// that offers only what fits never spins on refusals).
    pub fn room(&self) -> u64 {
        if self.draining {
            return 0;
        }
        match self.mode() {
            Mode::Normal => self.settings.backlog_capacity.saturating_sub(self.log.unverified()),
            Mode::Fenced => 0,
            Mode::ReadOnly | Mode::Recovery => {
                (self.settings.dlq_capacity - self.dlq.len().min(self.settings.dlq_capacity)) as u64
            }
        }
    }

    /// Says whether the pipeline's input source should be producing records now (a replay that has
    /// not finished). While it should, a pipeline that verifies nothing is stalled even with nothing
    /// waiting in it: the source itself may be stuck.
    pub fn expect_input(&mut self, expected: bool) {
        self.input_expected = expected;
    }

    /// True while the pipeline makes no progress although it should
    /// ([`PipelineSettings::stall_after`]).
    pub fn is_stalled(&self) -> bool {
        self.stalled
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
                self.counters.alerts_firing += 1;
                self.last_alert.0 = Some(self.now);
                self.alert_firing();
            }
            Event::AlertResolved => {
                self.counters.alerts_resolved += 1;
                self.last_alert.1 = Some(self.now);
                tracing::info!(
                    pipeline = %self.settings.id, mode = self.mode().name(),
                    "alert resolved: noted; a resolved alert never re-admits a worker by itself"
                );
            }
            Event::Drill { worker, drill } => self.drill(worker, drill),
            Event::Committed { journal_error, dlq_error } => self.committed(journal_error, dlq_error),
            Event::Store(event) => self.store_event(event),
            Event::Drain => {
                if !self.draining {
                    self.draining = true;
                    tracing::info!(pipeline = %self.settings.id, "draining: intake stopped, taking a final verified checkpoint");
                }
                self.check_drain();
            }
        }
    }
}

impl Pipeline {
    fn store_event(&mut self, event: StoreEvent) {
        match event {
            StoreEvent::Epoch(epoch) => self.store.epoch = Some(epoch),
            StoreEvent::Persisted { seq, epoch, oldest_kept_seq } => {
                self.store.epoch = Some(epoch);
                self.store.persisted_seq = Some(self.store.persisted_seq.map_or(seq, |s| s.max(seq)));
                self.store.oldest_kept_seq = Some(oldest_kept_seq);
                // Recovery needs the records from the oldest checkpoint kept on; older ones may go.
                self.actions.push_back(Action::ReleaseJournal { seq: oldest_kept_seq });
            }
            StoreEvent::Fenced { writer, current } => {
                let fence = Fence::classify(writer, current);
                if self.fence.is_none() {
                    match fence {
                        Fence::TakenOver { .. } => {
                            tracing::error!(pipeline = %self.settings.id, writer, current, "fenced: another service took this pipeline over; intake is refused from now on and no checkpoint is written")
                        }
                        Fence::StoreLost { .. } => {
                            tracing::error!(pipeline = %self.settings.id, writer, current, "fenced: the checkpoint store lost this pipeline's data (its epoch is below ours; emptied or restarted without persistence), which is not a takeover; intake is refused from now on and no checkpoint is written")
                        }
                    }
                }
                self.fence = Some(fence);
                match fence {
                    Fence::TakenOver { current, .. } => self.store.fenced_by_epoch = Some(current),
                    Fence::StoreLost { current, .. } => self.store.lost_at_epoch = Some(current),
                }
                self.stalled = false;
                self.counters.stalled = 0;
                self.publish_mode();
            }
        }
    }
}
