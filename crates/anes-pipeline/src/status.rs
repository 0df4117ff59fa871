//! What the status API shows of a pipeline.

use serde::Serialize;

use super::{Accounting, Fence, Mode, Phase, Pipeline, RollbackPolicy, Step, WorkerPhase};
use crate::protocol::BuildInfo;
use crate::worker::WorkerId;

/// One divergence or worker failure, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    /// Number, from 1.
    pub id: u64,
    /// `state`, `cycle_misalignment` or `worker_exited` (divergences and failures the pipeline saw);
    /// `drift`, `stall` or `alert` (a rollback the alert started while the pipeline ran: a worker
    /// behind its twin, no progress, or nothing seen here).
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

/// The durable store, as the status API shows it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StoreStatus {
    /// The store epoch this service writes with (its fencing token).
    pub epoch: Option<u64>,
    /// The frame of the newest checkpoint stored.
    pub persisted_seq: Option<u64>,
    /// The oldest frame among the checkpoints the store keeps.
    pub oldest_kept_seq: Option<u64>,
    /// Set when another writer took the pipeline over: its epoch. Intake is refused from then on.
    pub fenced_by_epoch: Option<u64>,
    /// Set when the store's epoch fell below this service's (the store lost its data): the store's
    /// epoch then. Intake is refused from then on.
    pub lost_at_epoch: Option<u64>,
    /// Set when the store's record of the pipeline (its epoch, the journal's end) is damaged. Intake
    /// is refused from then on.
    pub damaged: bool,
    /// The checkpoint this run recovered from at start, if any.
    pub recovered_from_seq: Option<u64>,
}

/// The newest verified checkpoint, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointStatus {
    /// Next frame's sequence number.
    pub seq: u64,
    /// State hash (hex).
    pub state_hash: String,
    /// Seconds of activity since it was verified: to the last record taken or frame verified, so it
    /// does not grow while the pipeline is idle.
    pub age_seconds: f64,
}

/// A pipeline, as the status API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineStatus {
    /// `pipeline_id`.
    pub id: String,
    /// The consoles' region (`ntsc`, `pal`, `dendy`); `None` when the pipeline does not check it.
    pub region: Option<&'static str>,
    /// Normal, read-only, recovery or fenced.
    pub mode: Mode,
    /// Why the store refused this service's epoch, once it did.
    pub fence: Option<Fence>,
    /// True while work waits and no frame was verified for the stall timeout.
    pub stalled: bool,
    /// Seconds since the last frame verified while work waits (0 when nothing waits).
    pub seconds_without_progress: f64,
    /// Why the pipeline is not ready (workers starting, fenced, stalled); `None` when it is.
    pub not_ready: Option<String>,
    /// `normal`, `halted`, `rolling_back`, `retry_wait` or `gave_up`.
    pub phase: String,
    /// While a rollback waits to try again because a worker could not be reached: the seconds until
    /// the next attempt (`reconnecting, next attempt in N s` on the page).
    pub reconnect_in_seconds: Option<f64>,
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
    /// The sequence number of the next record to verify (every record before it is verified). Not
    /// what a producer sends next: that is `accounting.received`, and a push answer's `next_seq`.
    pub next_to_verify: u64,
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
    /// The durable checkpoint store, as this pipeline sees it.
    pub store: StoreStatus,
    /// Seconds since the service started, when this status was taken.
    pub now_seconds: f64,
    /// When the last firing notification for this pipeline arrived (seconds since the service started).
    pub last_alert_firing_seconds: Option<f64>,
    /// When the last resolved notification arrived.
    pub last_alert_resolved_seconds: Option<f64>,
    /// True when the last notification was a firing one.
    pub alert_firing: bool,
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
            verified_before_start: self.verified_before_start,
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
        let seconds_without_progress = self.now.saturating_sub(self.last_progress).as_secs_f64();
        let not_ready = if self.workers.iter().any(|w| w.build.is_none()) {
            Some("workers starting".to_string())
        } else if let Some(fence) = self.fence {
            Some(fence.describe())
        } else if self.stalled {
            Some(format!("stalled: no frame verified for {seconds_without_progress:.0} s while work waits"))
        } else {
            None
        };
        PipelineStatus {
            id: self.settings.id.clone(),
            region: self.settings.region.map(anes_core::Region::name),
            mode: self.mode(),
            fence: self.fence,
            stalled: self.stalled,
            seconds_without_progress,
            not_ready,
            phase: phase.to_string(),
            reconnect_in_seconds: match &self.phase {
                Phase::RetryWait { until, .. } if self.retry_unreachable => {
                    Some(until.saturating_sub(self.now).as_secs_f64())
                }
                _ => None,
            },
            rollback_step: match &self.phase {
                Phase::RollingBack(r) => Some(r.step),
                _ => None,
            },
            policy: self.settings.policy,
            drift_records: self.workers[0].processed.abs_diff(self.workers[1].processed),
            diverged: self.diverged,
            frames_verified: self.log.verified_high(),
            next_to_verify: self.verified_until,
            accounting: self.accounting(),
            checkpoint: self.checkpoints.back().map(|c| CheckpointStatus {
                seq: c.seq,
                state_hash: anes_core::hex::to_hex(&c.state_hash),
                age_seconds: self.last_activity.saturating_sub(c.taken_at).as_secs_f64(),
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
            store: self.store.clone(),
            now_seconds: self.now.as_secs_f64(),
            last_alert_firing_seconds: self.last_alert.0.map(|t| t.as_secs_f64()),
            last_alert_resolved_seconds: self.last_alert.1.map(|t| t.as_secs_f64()),
            alert_firing: match self.last_alert {
                (Some(firing), Some(resolved)) => firing > resolved,
                (firing, _) => firing.is_some(),
            },
        }
    }
}
