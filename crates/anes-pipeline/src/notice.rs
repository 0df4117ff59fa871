//! What a pipeline reports having done, for the service's log. The rules say what happened as a value;
//! the service turns each value into its log line in one place (`anes_ops::pipeline::log`), as it
//! turns the [`crate::Counters`] into metrics, so no logging call lives in the rules.

use std::collections::VecDeque;
use std::time::Duration;

use anes_machine::DivergenceKind;

use crate::events::Drill;
use crate::protocol::BuildInfo;
use crate::settings::{Fence, Mode, Step, Trigger};
use crate::worker::WorkerId;

/// Notices kept until the service takes them; beyond this the oldest are dropped and counted (the
/// service takes them after every round of events; a shell that never does, like a test, must not
/// grow without bound).
const NOTICES_KEPT: usize = 1024;

/// One thing that happened in a pipeline that an operator reads in the service's log: each is one log
/// line whose level, message and fields `anes_ops::pipeline::log` chooses. A field's doc names the
/// log field it becomes where the name differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// [`crate::Pipeline::recover`] continues a previous run.
    Recovering {
        /// The frame of the checkpoint both workers load (0: power-on).
        checkpoint_seq: u64,
        /// Records journaled after the checkpoint (those that waited in the dead-letter queue too),
        /// re-run in order.
        journaled: u64,
    },
    /// The alert resolved (it never re-admits a worker by itself).
    AlertResolved {
        /// The pipeline's mode when it resolved.
        mode: Mode,
    },
    /// A drain began: intake stopped.
    Draining,
    /// The store refused this service's epoch (logged as `writer` and `current`).
    Fenced(Fence),
    /// A commit failed: the records it covered are refused, and so is every record offered until
    /// `retry_in` has passed. Reported once per failed commit, so once per backoff step.
    StorageFailed {
        /// Records dropped by the failed commit.
        records: u64,
        /// What the journal or the dead-letter queue reported.
        error: String,
        /// Commits that failed in a row, this one included.
        failed_commits: u32,
        /// The backoff before the journal is tried again (logged as `retry_in_seconds`).
        retry_in: Duration,
    },
    /// A commit succeeded after `failed_commits` failed in a row: records are stored again.
    StorageRecovered {
        /// Commits that failed in a row before this one.
        failed_commits: u32,
    },
    /// The workers' records of a frame differ: the pipeline is read-only.
    Divergence {
        /// The frame whose records differ.
        seq: u64,
        /// State, or cycle misalignment (the CPU cycles differ).
        kind: DivergenceKind,
        /// The lockstep runner's description of the difference.
        detail: String,
    },
    /// The referee's finding on an incident.
    Verdict {
        /// The incident.
        incident: u64,
        /// Workers whose record differs from the referee's (logged as `a,b`).
        suspects: Vec<WorkerId>,
    },
    /// The alert fired during a rollback, which absorbs it.
    AlertDuringRollback {
        /// The rollback's current step.
        step: Step,
    },
    /// The alert fired while the pipeline runs (drift, a dead worker, a stall): a rollback starts.
    AlertWhileRunning {
        /// Workers the pipeline suspects (logged as `a,b`).
        suspects: Vec<WorkerId>,
        /// The incident's kind: `worker_exited`, `drift`, `stall` or `alert`.
        kind: &'static str,
    },
    /// A second trigger arrived during a rollback and was absorbed.
    RollbackInProgress {
        /// The rollback's current step.
        step: Step,
    },
    /// A rollback attempt started.
    RollbackStarted {
        /// What started it.
        trigger: Trigger,
        /// 1 for the first attempt of an incident.
        attempt: u32,
        /// The workers isolated and restarted (logged as `a,b`).
        suspects: Vec<WorkerId>,
    },
    /// A step of the rollback procedure was done or begun (logged as `rollback step N/6 NAME: what`).
    StepDone {
        /// The step.
        step: Step,
        /// What it does, for a person.
        what: String,
    },
    /// The restored workers did not match the checkpoint: it is discarded.
    CheckpointDiscarded {
        /// The discarded checkpoint's frame (none: no checkpoint was left).
        seq: Option<u64>,
        /// Why it failed.
        reason: String,
    },
    /// Records of the dead-letter queue (journaled when they were taken) entered the log to run.
    ReplayingDlq {
        /// How many.
        records: u64,
    },
    /// A service's start recovered what its previous run left: normal mode.
    RecoveredFromPreviousRun,
    /// A rollback attempt failed and it was the last allowed: the pipeline stays read-only.
    RollbackGaveUp {
        /// The attempt that failed.
        attempt: u32,
        /// Why it failed.
        reason: String,
    },
    /// A worker could not be reached (not started, connection refused or timed out, gone before it
    /// loaded) for the `probes`-th time in a row; it is probed again after `retry_in`. Reported at
    /// the first probe and at every power of two, so a long outage logs a few lines, not hundreds.
    WorkerUnreachable {
        /// Probes so far in this outage.
        probes: u32,
        /// Why the last one failed.
        reason: String,
        /// When the next one comes.
        retry_in: Duration,
    },
    /// A rollback attempt failed; another follows after a backoff.
    RollbackRetrying {
        /// The attempt that failed.
        attempt: u32,
        /// Why it failed.
        reason: String,
        /// The backoff before the next attempt (logged as `retry_in_seconds`).
        retry_in: Duration,
    },
    /// A drain's final checkpoint is verified.
    FinalCheckpoint {
        /// Its frame.
        seq: u64,
        /// The state hash both workers' snapshots have (logged in hex).
        state_hash: [u8; 32],
    },
    /// A drain's final snapshots agree, but the service is fenced: the checkpoint is not stored.
    FinalCheckpointNotStored {
        /// Its frame.
        seq: u64,
        /// The state hash both workers' snapshots have (logged in hex).
        state_hash: [u8; 32],
        /// Why nothing is stored.
        fence: Fence,
    },
    /// A drain's final snapshots differ: there is no final checkpoint.
    FinalSnapshotsDiffer {
        /// The frame the snapshots were taken at.
        seq: u64,
    },
    /// No frame was verified for the stall time while work waits.
    Stalled {
        /// The pipeline's mode.
        mode: Mode,
        /// Records in the log not verified yet.
        unverified: u64,
        /// Records in the dead-letter queue.
        in_dlq: usize,
        /// Whether the input source should be producing records.
        input_expected: bool,
        /// Time since the last progress (logged as `idle_seconds`).
        idle: Duration,
    },
    /// A frame was verified again after a stall.
    NoLongerStalled,
    /// A message from a worker's replaced incarnation was dropped unread.
    StaleMessage {
        /// The worker that sent it.
        worker: WorkerId,
        /// The replaced incarnation that sent it.
        incarnation: u64,
    },
    /// A worker said hello.
    WorkerStarted {
        /// The worker.
        worker: WorkerId,
        /// Its incarnation.
        incarnation: u64,
        /// The build it runs (logged as `version`, `git_commit`, `emulation_epoch`).
        build: BuildInfo,
    },
    /// A worker reported a record other than the next one expected; it is ignored.
    RecordOutOfOrder {
        /// The worker.
        worker: WorkerId,
        /// The record's sequence number.
        seq: u64,
        /// The sequence number expected.
        expected: u64,
    },
    /// An injected fault fired in a worker.
    FaultFired {
        /// The worker.
        worker: WorkerId,
        /// The frame it fired in.
        seq: u64,
        /// The lockstep fault spec.
        spec: String,
        /// Why the worker refused to apply it, if it did.
        refused: Option<String>,
    },
    /// A worker refused a command.
    WorkerRefused {
        /// The worker.
        worker: WorkerId,
        /// What it said.
        reason: String,
    },
    /// A worker answered an inspection command that pipelines never send.
    UnaskedInspectionReply {
        /// The worker.
        worker: WorkerId,
    },
    /// The workers' power-on records differ: different builds or ROMs.
    PowerOnMismatch,
    /// A worker exited without being asked to.
    WorkerExited {
        /// The worker.
        worker: WorkerId,
        /// What its transport reported.
        reason: String,
    },
    /// A worker owed records and sent nothing for the step timeout: it is isolated as if it had
    /// exited.
    WorkerSilent {
        /// The worker.
        worker: WorkerId,
        /// Records sent to it and not reported.
        owed: u64,
        /// How long it has been silent.
        silent: Duration,
    },
    /// A drill was put into a worker.
    Drill {
        /// The worker.
        worker: WorkerId,
        /// The drill.
        drill: Drill,
    },
    /// A frame boundary became a verified checkpoint.
    CheckpointVerified {
        /// Its frame.
        seq: u64,
    },
}

/// The notices not taken yet, oldest first, and how many were dropped for want of room.
#[derive(Debug, Default)]
pub(crate) struct Notices {
    kept: VecDeque<Notice>,
    dropped: u64,
}

impl Notices {
    pub(crate) fn push(&mut self, notice: Notice) {
        if self.kept.len() >= NOTICES_KEPT {
            self.kept.pop_front();
            self.dropped += 1;
        }
        self.kept.push_back(notice);
    }

    /// The notices kept, oldest first; empties the list.
    pub(crate) fn take(&mut self) -> std::collections::vec_deque::Drain<'_, Notice> {
        self.kept.drain(..)
    }

    /// How many were dropped since the last call; resets the count.
    pub(crate) fn take_dropped(&mut self) -> u64 {
        std::mem::take(&mut self.dropped)
    }
}
