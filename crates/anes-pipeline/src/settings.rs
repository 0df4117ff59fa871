//! How a pipeline is set up, and the names of what it can be in: its policy, modes, fences and the
//! rollback procedure's steps.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The default [`PipelineSettings::stall_after`]: a real-time pipeline verifies 60 frames a second and
/// a rollback step makes progress at least every few seconds, so 10 s without a frame verified while
/// work waits is not a hiccup.
pub const STALL_AFTER: Duration = Duration::from_secs(10);

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
    /// The store's record of the pipeline (its epoch, the journal's end) is damaged: not a number, or
    /// an epoch at its maximum, which cannot grow without wrapping.
    StoreDamaged {
        /// The epoch this service wrote with.
        ours: u64,
    },
}

impl Fence {
    /// The fencing rule's two refusals told apart: a store epoch above ours was issued to another
    /// writer; one below ours means the store forgot the epochs it issued.
    pub fn classify(ours: u64, current: u64) -> Fence {
        if current > ours { Fence::TakenOver { ours, current } } else { Fence::StoreLost { ours, current } }
    }

    /// The store's epoch (0 where it cannot be read).
    pub fn current(self) -> u64 {
        match self {
            Fence::TakenOver { current, .. } | Fence::StoreLost { current, .. } => current,
            Fence::StoreDamaged { .. } => 0,
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
            Fence::StoreDamaged { ours } => format!(
                "fenced: the store's record of the pipeline is damaged (its epoch or the journal's end is not a number, the epoch is at its maximum, or the journal lost records this service journaled; ours {ours}): not a takeover (docs/OPERATIONS.md, the store epoch)"
            ),
        }
    }
}

/// What started a rollback attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The alert fired (Alertmanager called the webhook).
    Alert,
    /// The pipeline saw it itself: a divergence under the immediate policy, or a worker that died.
    Detection,
    /// The backoff after a failed attempt ran out.
    Retry,
}

impl Trigger {
    /// `alert`, `detection` or `retry`.
    pub const fn name(self) -> &'static str {
        match self {
            Trigger::Alert => "alert",
            Trigger::Detection => "detection",
            Trigger::Retry => "retry",
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
    /// Delays after a journal commit failed (a store that is down, a full disk): base, cap, jitter
    /// seed, the service's store retry policy. Until the delay passes intake refuses every record
    /// without trying the journal, so a replay offering again at once cannot hammer the store.
    pub journal_retry: (Duration, Duration, u64),
    /// The pipeline counts as stalled when work waits (records unverified or dead-lettered, or an
    /// input source that should be producing) and no frame was verified for this long.
    pub stall_after: Duration,
    /// The consoles' region. A worker whose `Loaded` names another region (or none: a build older
    /// than regions) is refused as if it had exited; `None` checks nothing.
    pub region: Option<anes_core::Region>,
}

impl PipelineSettings {
    /// Defaults: a checkpoint every 60 frames, 4 kept, one stored durably every 300 frames (5 s of
    /// play), a drift window of 120 records, the alert
    /// policy, a backlog of 65,536 records and a dead-letter queue of 262,144 (over an hour at 60 per
    /// second), 20 s per step, 3 attempts, a failed journal commit tried again after up to 2 s,
    /// doubling to 30 s (the service's store retry defaults).
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
            journal_retry: (Duration::from_secs(2), Duration::from_secs(30), 0x5707e),
            stall_after: STALL_AFTER,
            region: None,
        }
    }
}
