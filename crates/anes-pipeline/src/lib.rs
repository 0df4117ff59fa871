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
//! - the rollback procedure, every step reported for the log and counted, idempotent (a second trigger during a
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
//! What the pipeline has to tell an operator it reports as values: [`Notice`]s for the log
//! ([`Pipeline::take_notices`]) and [`Counters`] for the metrics. The service writes both, each in one
//! place (`anes_ops::pipeline::PipelineObserver`); the rules call no logger and hold no metric.
//!
//! The events and actions issue 31 names, and what they are here:
//! - `Event::RecordsOffered`: the methods [`Pipeline::offer_input`] (one record),
//!   [`Pipeline::push_batch`] (a producer's batch) and [`Pipeline::offer_from`] (a replay source, with
//!   its flow control). Methods, not an event: a record is taken or refused ([`Refusal`]) at once,
//!   and the caller needs that answer before it offers the next.
//! - `Event::WorkerRecord`: [`Event::Worker`], which carries anything a worker sent (records,
//!   snapshots, its hello, a refusal, its exit), tagged with the incarnation that sent it.
//! - `Event::StoreWritten`: [`Event::Store`] with [`StoreEvent::Persisted`]; the store's other
//!   reports (its epoch, a fence) come the same way.
//! - `Event::Tick(now)`: [`Event::Tick`]. The time comes with every call (`handle(now, event)`,
//!   `poll_action(now)`), not with the tick alone.
//! - `Event::Committed`, `Event::AlertFiring`, `Action::AppendJournal`, `Action::Commit`,
//!   `Action::SendToWorker`, `Action::PersistCheckpoint`: the same names. `Action::EnqueueDlq` is
//!   [`Action::AppendJournal`] too: a record set aside in the dead-letter queue is journaled before
//!   it is acknowledged, so the journal is its durable copy.
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
mod drain;
pub mod engine;
mod events;
mod intake;
mod log;
mod notice;
pub mod protocol;
pub mod referee;
mod rollback;
mod settings;
mod source;
mod status;
pub mod storage;
mod tick;
pub mod worker;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_core::state::FrameRecord;
use anes_machine::DivergenceKind;
use serde::Serialize;

pub use counters::Counters;
pub use events::{
    Action, Checkpoint, Drill, Event, Investigation, PushOutcome, Refusal, SequenceGap, StoreEvent,
};
pub use intake::{MAX_AHEAD_WINDOWS, MAX_OFFER};
pub use log::Accounting;
use log::{InputLog, LogRecord};
pub use notice::Notice;
use notice::Notices;
pub use rollback::PROBE_INTERVAL;
pub use settings::{Fence, Mode, PipelineSettings, RollbackPolicy, STALL_AFTER, Step, Trigger};
pub use source::{NTSC_FRAMES_PER_SECOND, Pace, ReplaySource, stream_frames};
pub use status::{CheckpointStatus, Incident, PipelineStatus, StoreStatus, WorkerStatus};

use crate::backoff::Backoff;
use crate::protocol::{BuildInfo, Reply, WireInput, WorkerCommand};
use crate::storage::MemoryDlq;
use crate::worker::{WorkerId, WorkerMessage, WorkerOutput};

/// The drift the design's alert tolerates (`worker_drift_offset_records > 50` fires).
pub const ALERT_DRIFT_THRESHOLD: u64 = 50;

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
    /// Fault injections sent and not answered by a `FaultFired` yet: a `FaultFired` beyond them
    /// answers nothing this pipeline asked for.
    injects_outstanding: u32,
    build: Option<BuildInfo>,
    restarts: u64,
    last_exit: Option<String>,
    drain_snapshot: Option<([u8; 32], Arc<Vec<u8>>)>,
    /// When this incarnation last sent anything, or when the pipeline began waiting on it (records
    /// sent to a worker that owed none): a worker that owes records and stays silent for the step
    /// timeout is isolated, since a partition can keep TCP quiet for many minutes.
    heard_at: Duration,
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
            injects_outstanding: 0,
            build: None,
            restarts: 0,
            last_exit: None,
            drain_snapshot: None,
            heard_at: Duration::ZERO,
        }
    }

    fn reset_to(&mut self, seq: u64) {
        self.next_to_send = seq;
        self.processed = seq;
        self.queue.clear();
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

/// What a commit in flight covers: records offered since the last commit, `journal` of them in the
/// log and `dlq` in the dead-letter queue (all of them journaled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Commit {
    journal: u64,
    dlq: u64,
}

/// The pipeline state machine.
#[derive(Debug)]
pub struct Pipeline {
    settings: PipelineSettings,
    counters: Counters,
    notices: Notices,
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
    /// Journal commits that failed in a row: the backoff's retry number (0 after a success).
    journal_failures: u32,
    /// While the backoff after a failed commit runs: when intake may try the journal again.
    journal_retry_at: Option<Duration>,
    journal_backoff: Backoff,
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
    /// Attempts of the current incident that failed because a worker could not be reached: they
    /// do not count toward `max_attempts` (retrying is how a worker behind a partition comes back).
    attempts_unreachable: u32,
    /// The last failed attempt could not reach a worker (the retry is a reconnection).
    retry_unreachable: bool,
    /// The end of the records a rollback or a start replays (the log's backlog and the dead-letter
    /// queue's records after a verified restore): until they are verified a worker may lead its twin
    /// only by the alert's threshold.
    replay_until: u64,
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
        let (journal_base, journal_cap, journal_seed) = settings.journal_retry;
        let dlq_capacity = settings.dlq_capacity;
        let mut pipeline = Pipeline {
            backoff: Backoff::new(base, cap, seed),
            journal_backoff: Backoff::new(journal_base, journal_cap, journal_seed),
            journal_failures: 0,
            journal_retry_at: None,
            settings,
            counters: Counters::default(),
            notices: Notices::default(),
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
            attempts_unreachable: 0,
            retry_unreachable: false,
            replay_until: 0,
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

    /// A pipeline that continues what a previous run of the service (or another coordinator) left:
    /// the newest durable checkpoint (`None`: power-on) and the journaled records from it on (`log`,
    /// starting at the checkpoint's frame): every record acknowledged, those that waited in the
    /// dead-letter queue included. Both workers start, load the checkpoint, are verified against its
    /// hash and re-run the records before normal intake resumes (the rollback procedure's steps 3 to
    /// 6). Meanwhile pushed records wait in the queue.
    pub fn recover(
        settings: PipelineSettings,
        checkpoint: Option<Checkpoint>,
        log: Vec<FrameInput>,
    ) -> Pipeline {
        let start = checkpoint.as_ref().map_or(0, |c| c.seq);
        let mut pipeline = Pipeline::new(settings);
        if checkpoint.is_none() && log.is_empty() {
            return pipeline;
        }
        pipeline.log = InputLog::starting_at(start);
        for input in log {
            pipeline.log.push(LogRecord { input, via_dlq: false });
        }
        pipeline.log.commit();
        pipeline.verified_before_start = start;
        pipeline.verified_until = start;
        pipeline.received = pipeline.log.end();
        pipeline.refused_from = pipeline.received;
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
        pipeline.notice(Notice::Recovering { checkpoint_seq: start, journaled: pipeline.log.end() - start });
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

    /// What happened since the last call, oldest first, for the service's log.
    pub fn take_notices(&mut self) -> std::collections::vec_deque::Drain<'_, Notice> {
        self.notices.take()
    }

    /// Notices dropped since the last call because more than the pipeline keeps (1024) were not taken.
    pub fn take_dropped_notices(&mut self) -> u64 {
        self.notices.take_dropped()
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

    /// Records the pipeline can take now without refusing (none while fenced, draining or backing
    /// off after a failed journal commit: a source that offers only what fits never spins on
    /// refusals).
    pub fn room(&self) -> u64 {
        if self.draining || self.journal_backing_off() {
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
        self.follow_stall_clock();
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
        self.follow_stall_clock();
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
                self.notice(Notice::AlertResolved { mode: self.mode() });
            }
            Event::Drill { worker, drill } => self.drill(worker, drill),
            Event::Committed { journal_error } => self.committed(journal_error),
            Event::Store(event) => self.store_event(event),
            Event::Drain => {
                if !self.draining {
                    self.draining = true;
                    self.notice(Notice::Draining);
                }
                self.check_drain();
            }
        }
    }
}

impl Pipeline {
    pub(crate) fn notice(&mut self, notice: Notice) {
        self.notices.push(notice);
    }

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
            StoreEvent::Fenced { .. } | StoreEvent::Damaged => {
                let fence = match event {
                    StoreEvent::Fenced { writer, current } => Fence::classify(writer, current),
                    _ => Fence::StoreDamaged { ours: self.store.epoch.unwrap_or(0) },
                };
                if self.fence.is_none() {
                    self.notice(Notice::Fenced(fence));
                }
                self.fence = Some(fence);
                match fence {
                    Fence::TakenOver { current, .. } => self.store.fenced_by_epoch = Some(current),
                    Fence::StoreLost { current, .. } => self.store.lost_at_epoch = Some(current),
                    Fence::StoreDamaged { .. } => self.store.damaged = true,
                }
                self.stalled = false;
                self.counters.stalled = 0;
                self.publish_mode();
            }
        }
    }
}
