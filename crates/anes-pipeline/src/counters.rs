//! What the pipeline counts, as plain numbers: the service copies them into its Prometheus series
//! (`anes_ops::metrics`, one place), so no metric handle lives in the rules.

use crate::Mode;

/// Compare latencies kept until the service takes them; beyond this the oldest are dropped (a shell
/// that never drains them, like a test, must not grow without bound).
const LATENCIES_KEPT: usize = 4096;

/// The pipeline's counters and gauges. Counters only grow; the service turns their growth into
/// increments of the Prometheus counters of the same meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct Counters {
    /// `worker_drift_offset_records`.
    pub drift: i64,
    /// `worker_state_divergence_flag`.
    pub divergence_flag: i64,
    /// `anes_frames_verified_total`.
    pub frames_verified: u64,
    /// `anes_records_received_total`: accepted and durable.
    pub records_received: u64,
    /// `anes_records_refused_total{reason="backlog_full"}`.
    pub refused_backlog: u64,
    /// `anes_records_refused_total{reason="dlq_full"}`.
    pub refused_dlq: u64,
    /// `anes_records_refused_total{reason="stopping"}`.
    pub refused_stopping: u64,
    /// `anes_records_refused_total{reason="storage"}`.
    pub refused_storage: u64,
    /// `anes_records_refused_total{reason="fenced"}`.
    pub refused_fenced: u64,
    /// `anes_records_refused_total{reason="store_lost"}`.
    pub refused_store_lost: u64,
    /// `anes_retries_total{operation="rollback"}`.
    pub rollback_retries: u64,
    /// `anes_retries_total{operation="store"}`: journal commits tried after the backoff that
    /// followed a failed one (the checkpoint writer's retries count in the same series).
    pub journal_retries: u64,
    /// `anes_retry_give_ups_total{operation="rollback"}`.
    pub rollback_give_ups: u64,
    /// `anes_retries_total{operation="reconnect"}`: attempts that could not reach a worker, probed
    /// again.
    pub reconnect_probes: u64,
    /// `anes_divergences_total{kind="state"}`.
    pub divergences_state: u64,
    /// `anes_divergences_total{kind="cycle_misalignment"}`.
    pub divergences_cycle: u64,
    /// `anes_rollbacks_total{result="success"}`.
    pub rollbacks_success: u64,
    /// `anes_rollbacks_total{result="failed"}`.
    pub rollbacks_failed: u64,
    /// `anes_rollback_steps_total`, indexed like [`crate::Step::ALL`].
    pub steps: [u64; 6],
    /// `anes_dlq_records`.
    pub dlq_records: i64,
    /// `anes_dlq_enqueued_total`.
    pub dlq_enqueued: u64,
    /// `anes_dlq_replayed_total`.
    pub dlq_replayed: u64,
    /// `anes_checkpoint_age_seconds`.
    pub checkpoint_age: f64,
    /// `anes_pipeline_mode` (1 for this mode, 0 for the others).
    pub mode: Mode,
    /// `anes_pipeline_stalled`.
    pub stalled: i64,
    /// `anes_worker_restarts_total`, by worker index.
    pub restarts: [u64; 2],
    /// `anes_worker_up`, by worker index.
    pub worker_up: [i64; 2],
    /// `anes_alert_notifications_total{status="firing"}`.
    pub alerts_firing: u64,
    /// `anes_alert_notifications_total{status="resolved"}`.
    pub alerts_resolved: u64,
    /// Seconds from a record's arrival to its frame's comparison, not yet taken by the service
    /// (`anes_compare_latency_seconds`).
    compare_latencies: Vec<f64>,
}

impl Default for Counters {
    fn default() -> Counters {
        Counters {
            drift: 0,
            divergence_flag: 0,
            frames_verified: 0,
            records_received: 0,
            refused_backlog: 0,
            refused_dlq: 0,
            refused_stopping: 0,
            refused_storage: 0,
            refused_fenced: 0,
            refused_store_lost: 0,
            rollback_retries: 0,
            journal_retries: 0,
            reconnect_probes: 0,
            rollback_give_ups: 0,
            divergences_state: 0,
            divergences_cycle: 0,
            rollbacks_success: 0,
            rollbacks_failed: 0,
            steps: [0; 6],
            dlq_records: 0,
            dlq_enqueued: 0,
            dlq_replayed: 0,
            checkpoint_age: 0.0,
            mode: Mode::Normal,
            stalled: 0,
            restarts: [0; 2],
            worker_up: [0; 2],
            alerts_firing: 0,
            alerts_resolved: 0,
            compare_latencies: Vec::new(),
        }
    }
}

impl Counters {
    pub(crate) fn record_compare_latency(&mut self, seconds: f64) {
        if self.compare_latencies.len() >= LATENCIES_KEPT {
            self.compare_latencies.remove(0);
        }
        self.compare_latencies.push(seconds);
    }

    /// The compare latencies recorded since the last call, oldest first.
    pub fn take_compare_latencies(&mut self) -> std::vec::Drain<'_, f64> {
        self.compare_latencies.drain(..)
    }
}
