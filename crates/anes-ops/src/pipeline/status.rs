//! What the status API shows of a pipeline.

use serde::Serialize;

use super::{Accounting, Mode, Phase, Pipeline, RollbackPolicy, Step, WorkerPhase};
use crate::worker::WorkerId;
use crate::worker::protocol::BuildInfo;

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

impl Pipeline {
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
