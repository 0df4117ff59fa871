//! What the service exports on `/metrics` (OpenMetrics text, the `prometheus-client` crate).
//!
//! The design's two gauges keep its exact names and help texts (registered through a collector, since
//! the crate appends a full stop to the help of metrics registered the ordinary way):
//! `worker_drift_offset_records` and `worker_state_divergence_flag`, label `pipeline_id`. Everything
//! else is `anes_`-prefixed, in base units, counters ending in `_total`, labels of bounded cardinality
//! (pipeline, worker, result, step, mode). Updating any of them is an atomic operation on a handle
//! resolved once per pipeline, so the pipeline's hot path never looks up a label set. A pipeline itself
//! only counts (`anes_pipeline::Counters`); [`crate::pipeline::PipelineObserver`] copies its counts here.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

use crate::pipeline::Mode;
use crate::worker::WorkerId;

/// Help text of `worker_drift_offset_records`, as the design states it.
pub const DRIFT_HELP: &str = "Absolute delta of processed sequence numbers between workers";
/// Help text of `worker_state_divergence_flag`, as the design states it.
pub const DIVERGENCE_HELP: &str = "Binary flag indicating state checksum mismatch (1 = divergent)";

/// Buckets of `anes_compare_latency_seconds`: 100 µs to 10 s.
const COMPARE_LATENCY_BUCKETS: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineLabel {
    pipeline_id: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineReason {
    pipeline_id: String,
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineKind {
    pipeline_id: String,
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineResult {
    pipeline_id: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineStep {
    pipeline_id: String,
    step: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineMode {
    pipeline_id: String,
    mode: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineWorker {
    pipeline_id: String,
    worker: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineStatus {
    pipeline_id: String,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineBackend {
    pipeline_id: String,
    backend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PipelineOperation {
    pipeline_id: String,
    operation: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Reason {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: String,
    git_commit: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// The design's two gauges, encoded with its exact help texts.
#[derive(Debug, Default)]
struct DesignGauges {
    drift: Family<PipelineLabel, Gauge>,
    divergence: Family<PipelineLabel, Gauge>,
}

impl Collector for DesignGauges {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let drift =
            encoder.encode_descriptor("worker_drift_offset_records", DRIFT_HELP, None, MetricType::Gauge)?;
        self.drift.encode(drift)?;
        let flag = encoder.encode_descriptor(
            "worker_state_divergence_flag",
            DIVERGENCE_HELP,
            None,
            MetricType::Gauge,
        )?;
        self.divergence.encode(flag)
    }
}

fn compare_latency_histogram() -> Histogram {
    Histogram::new(COMPARE_LATENCY_BUCKETS)
}

fn store_write_histogram() -> Histogram {
    Histogram::new(COMPARE_LATENCY_BUCKETS)
}

/// Every metric family of the service and the registry that encodes them.
///
/// ```
/// use anes_ops::metrics::Metrics;
/// let metrics = Metrics::new();
/// let p1 = metrics.pipeline("p1");
/// p1.drift.set(51);
/// let mut text = String::new();
/// metrics.encode(&mut text).unwrap();
/// assert!(text.contains("worker_drift_offset_records{pipeline_id=\"p1\"} 51"));
/// ```
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    design: Arc<DesignGauges>,
    frames_verified: Family<PipelineLabel, Counter>,
    records_received: Family<PipelineLabel, Counter>,
    records_refused: Family<PipelineReason, Counter>,
    divergences: Family<PipelineKind, Counter>,
    rollbacks: Family<PipelineResult, Counter>,
    rollback_steps: Family<PipelineStep, Counter>,
    dlq_records: Family<PipelineLabel, Gauge>,
    dlq_enqueued: Family<PipelineLabel, Counter>,
    dlq_replayed: Family<PipelineLabel, Counter>,
    checkpoint_age: Family<PipelineLabel, FloatGauge>,
    mode: Family<PipelineMode, Gauge>,
    stalled: Family<PipelineLabel, Gauge>,
    compare_latency: Family<PipelineLabel, Histogram, fn() -> Histogram>,
    worker_restarts: Family<PipelineWorker, Counter>,
    worker_up: Family<PipelineWorker, Gauge>,
    alert_notifications: Family<PipelineStatus, Counter>,
    notifications_ignored: Family<Reason, Counter>,
    store_writes: Family<PipelineResult, Counter>,
    store_write_seconds: Family<PipelineBackend, Histogram, fn() -> Histogram>,
    store_epoch: Family<PipelineLabel, Gauge>,
    retries: Family<PipelineOperation, Counter>,
    give_ups: Family<PipelineOperation, Counter>,
    http_connections_refused: Family<Reason, Counter>,
    http_connections_dropped: Family<Reason, Counter>,
}

/// Why the webhook did not act on an alert (the labels of `anes_alert_notifications_ignored_total`).
pub const NOTIFICATION_IGNORED_REASONS: [&str; 5] =
    ["duplicate", "unknown_pipeline", "other_alert", "no_pipeline_label", "fenced"];

/// Why the HTTP server refused a connection: its address holds `connections_per_client` already
/// (`per_client`), or every slot is taken and none can be freed for it (`max_connections`).
pub const HTTP_REFUSAL_REASONS: [&str; 2] = ["per_client", "max_connections"];

/// Why the HTTP server dropped an open connection: answers waited and the client took none for the
/// write timeout (`write_timeout`), or its slot went to an address holding fewer (`evicted`).
pub const HTTP_DROP_REASONS: [&str; 2] = ["write_timeout", "evicted"];

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every family (no series exist until a pipeline is added).
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let design = Arc::new(DesignGauges::default());
        registry.register_collector(Box::new(Arc::clone(&design)));
        let m = Metrics {
            registry,
            design,
            frames_verified: Family::default(),
            records_received: Family::default(),
            records_refused: Family::default(),
            divergences: Family::default(),
            rollbacks: Family::default(),
            rollback_steps: Family::default(),
            dlq_records: Family::default(),
            dlq_enqueued: Family::default(),
            dlq_replayed: Family::default(),
            checkpoint_age: Family::default(),
            mode: Family::default(),
            stalled: Family::default(),
            compare_latency: Family::new_with_constructor(compare_latency_histogram),
            worker_restarts: Family::default(),
            worker_up: Family::default(),
            alert_notifications: Family::default(),
            notifications_ignored: Family::default(),
            store_writes: Family::default(),
            store_write_seconds: Family::new_with_constructor(store_write_histogram),
            store_epoch: Family::default(),
            retries: Family::default(),
            give_ups: Family::default(),
            http_connections_refused: Family::default(),
            http_connections_dropped: Family::default(),
        };
        let mut m = m;
        let r = &mut m.registry;
        r.register(
            "anes_frames_verified",
            "Distinct frames both workers agreed on (a frame verified again after a rollback counts once)",
            m.frames_verified.clone(),
        );
        r.register(
            "anes_records_received",
            "Input records accepted by the pipeline and stored durably (from its source or pushed over HTTP)",
            m.records_received.clone(),
        );
        r.register(
            "anes_records_refused",
            "Input records refused, by reason (backlog_full, dlq_full, stopping, storage, fenced, store_lost); a record offered again after a refusal counts once",
            m.records_refused.clone(),
        );
        r.register("anes_divergences", "Divergences detected, by kind", m.divergences.clone());
        r.register(
            "anes_rollbacks",
            "Rollback attempts that ended, by result (success, failed)",
            m.rollbacks.clone(),
        );
        r.register(
            "anes_rollback_steps",
            "Rollback procedure steps carried out, by step",
            m.rollback_steps.clone(),
        );
        r.register(
            "anes_dlq_records",
            "Input records waiting in the dead-letter queue",
            m.dlq_records.clone(),
        );
        r.register(
            "anes_dlq_records_enqueued",
            "Input records put in the dead-letter queue while the pipeline was read-only",
            m.dlq_enqueued.clone(),
        );
        r.register(
            "anes_dlq_records_replayed",
            "Input records replayed from the dead-letter queue into the pipeline",
            m.dlq_replayed.clone(),
        );
        r.register(
            "anes_checkpoint_age_seconds",
            "Seconds of activity since the newest verified checkpoint: from it to the last record taken or frame verified (it does not grow while the pipeline is idle)",
            m.checkpoint_age.clone(),
        );
        r.register(
            "anes_pipeline_mode",
            "1 for the mode the pipeline is in (normal, read_only, recovery, fenced), 0 for the others",
            m.mode.clone(),
        );
        r.register(
            "anes_pipeline_stalled",
            "1 while work waits (records unverified or dead-lettered, or a replay that should be producing) and no frame was verified for the stall timeout (10 s), else 0",
            m.stalled.clone(),
        );
        r.register(
            "anes_compare_latency_seconds",
            "Time from the first worker's record of a frame to the comparison with its twin's",
            m.compare_latency.clone(),
        );
        r.register(
            "anes_worker_restarts",
            "Workers started again after isolation or a crash",
            m.worker_restarts.clone(),
        );
        r.register("anes_worker_up", "1 while the worker is running, else 0", m.worker_up.clone());
        r.register(
            "anes_alert_notifications",
            "Alertmanager notifications for this pipeline, by alert status (firing, resolved)",
            m.alert_notifications.clone(),
        );
        r.register(
            "anes_alert_notifications_ignored",
            "Alert notifications not acted on, by reason (duplicate, unknown_pipeline, other_alert, no_pipeline_label, fenced)",
            m.notifications_ignored.clone(),
        );
        r.register(
            "anes_store_writes",
            "Checkpoint writes to the store that ended, by result (ok, fenced, gave_up, invalid)",
            m.store_writes.clone(),
        );
        r.register(
            "anes_store_write_seconds",
            "Time to write one checkpoint to the store (fsyncs or the Redis round trip included)",
            m.store_write_seconds.clone(),
        );
        r.register(
            "anes_store_epoch",
            "The pipeline's store epoch this service writes with (its fencing token)",
            m.store_epoch.clone(),
        );
        r.register(
            "anes_retries",
            "Retries after a failure, by operation (store: a store request; rollback: a rollback attempt, which restarts workers; reconnect: a probe of a worker that could not be reached)",
            m.retries.clone(),
        );
        r.register(
            "anes_retry_give_ups",
            "Operations abandoned after their last retry, by operation (store, rollback)",
            m.give_ups.clone(),
        );
        r.register(
            "anes_http_connections_refused",
            "HTTP connections refused with 503 on arrival, by reason (per_client: the address holds its limit; max_connections: every slot is taken and none could be freed)",
            m.http_connections_refused.clone(),
        );
        r.register(
            "anes_http_connections_dropped",
            "Open HTTP connections reset by the server, by reason (write_timeout: the client took none of its answers for the write timeout; evicted: its slot went to an address holding fewer)",
            m.http_connections_dropped.clone(),
        );
        // Series at 0 from the start, so a rate or an alert on them has a baseline before the first.
        for reason in NOTIFICATION_IGNORED_REASONS {
            let _ = m.notifications_ignored.get_or_create(&Reason { reason });
        }
        for reason in HTTP_REFUSAL_REASONS {
            let _ = m.http_connections_refused.get_or_create(&Reason { reason });
        }
        for reason in HTTP_DROP_REASONS {
            let _ = m.http_connections_dropped.get_or_create(&Reason { reason });
        }
        let build: Family<BuildLabels, Gauge> = Family::default();
        build
            .get_or_create(&BuildLabels {
                version: anes_lockstep::BUILD.crate_version.to_string(),
                git_commit: anes_lockstep::BUILD.git_commit.unwrap_or("unknown").to_string(),
            })
            .set(1);
        r.register("anes_build_info", "The running build (always 1)", build);
        m
    }

    /// Resolves every handle of pipeline `id` (its series appear now, at zero).
    pub fn pipeline(&self, id: &str) -> PipelineMetrics {
        let p = || PipelineLabel { pipeline_id: id.to_string() };
        let worker = |family: &Family<PipelineWorker, Counter>, w: WorkerId| {
            family.get_or_create_owned(&PipelineWorker { pipeline_id: id.to_string(), worker: w.name() })
        };
        let up = |w: WorkerId| {
            self.worker_up
                .get_or_create_owned(&PipelineWorker { pipeline_id: id.to_string(), worker: w.name() })
        };
        let metrics = PipelineMetrics {
            drift: self.design.drift.get_or_create_owned(&p()),
            divergence_flag: self.design.divergence.get_or_create_owned(&p()),
            frames_verified: self.frames_verified.get_or_create_owned(&p()),
            records_received: self.records_received.get_or_create_owned(&p()),
            refused_backlog: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "backlog_full" }),
            refused_dlq: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "dlq_full" }),
            refused_stopping: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "stopping" }),
            refused_storage: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "storage" }),
            refused_fenced: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "fenced" }),
            refused_store_lost: self
                .records_refused
                .get_or_create_owned(&PipelineReason { pipeline_id: id.to_string(), reason: "store_lost" }),
            rollback_retries: self.retries.get_or_create_owned(&PipelineOperation {
                pipeline_id: id.to_string(),
                operation: "rollback",
            }),
            reconnect_probes: self.retries.get_or_create_owned(&PipelineOperation {
                pipeline_id: id.to_string(),
                operation: "reconnect",
            }),
            journal_retries: self
                .retries
                .get_or_create_owned(&PipelineOperation { pipeline_id: id.to_string(), operation: "store" }),
            rollback_give_ups: self.give_ups.get_or_create_owned(&PipelineOperation {
                pipeline_id: id.to_string(),
                operation: "rollback",
            }),
            divergences_state: self
                .divergences
                .get_or_create_owned(&PipelineKind { pipeline_id: id.to_string(), kind: "state" }),
            divergences_cycle: self.divergences.get_or_create_owned(&PipelineKind {
                pipeline_id: id.to_string(),
                kind: "cycle_misalignment",
            }),
            rollbacks_success: self
                .rollbacks
                .get_or_create_owned(&PipelineResult { pipeline_id: id.to_string(), result: "success" }),
            rollbacks_failed: self
                .rollbacks
                .get_or_create_owned(&PipelineResult { pipeline_id: id.to_string(), result: "failed" }),
            steps: crate::pipeline::Step::ALL.map(|s| {
                self.rollback_steps
                    .get_or_create_owned(&PipelineStep { pipeline_id: id.to_string(), step: s.name() })
            }),
            dlq_records: self.dlq_records.get_or_create_owned(&p()),
            dlq_enqueued: self.dlq_enqueued.get_or_create_owned(&p()),
            dlq_replayed: self.dlq_replayed.get_or_create_owned(&p()),
            checkpoint_age: self.checkpoint_age.get_or_create_owned(&p()),
            modes: Mode::ALL.map(|m| {
                self.mode.get_or_create_owned(&PipelineMode { pipeline_id: id.to_string(), mode: m.name() })
            }),
            stalled: self.stalled.get_or_create_owned(&p()),
            compare_latency: self.compare_latency.get_or_create_owned(&p()),
            restarts: WorkerId::BOTH.map(|w| worker(&self.worker_restarts, w)),
            worker_up: WorkerId::BOTH.map(up),
            alerts_firing: self
                .alert_notifications
                .get_or_create_owned(&PipelineStatus { pipeline_id: id.to_string(), status: "firing" }),
            alerts_resolved: self
                .alert_notifications
                .get_or_create_owned(&PipelineStatus { pipeline_id: id.to_string(), status: "resolved" }),
        };
        metrics.set_mode(Mode::Normal);
        metrics
    }

    /// Handles of a pipeline's store metrics, for its checkpoint writer.
    pub fn store(&self, id: &str, backend: &'static str) -> StoreMetrics {
        let result = |result| {
            self.store_writes.get_or_create_owned(&PipelineResult { pipeline_id: id.to_string(), result })
        };
        let operation = PipelineOperation { pipeline_id: id.to_string(), operation: "store" };
        StoreMetrics {
            writes_ok: result("ok"),
            writes_fenced: result("fenced"),
            writes_gave_up: result("gave_up"),
            writes_invalid: result("invalid"),
            write_seconds: self
                .store_write_seconds
                .get_or_create_owned(&PipelineBackend { pipeline_id: id.to_string(), backend }),
            epoch: self.store_epoch.get_or_create_owned(&PipelineLabel { pipeline_id: id.to_string() }),
            retries: self.retries.get_or_create_owned(&operation),
            give_ups: self.give_ups.get_or_create_owned(&operation),
        }
    }

    /// The current value of `anes_frames_verified_total` for a pipeline (0 for one never added).
    pub fn frames_verified(&self, pipeline_id: &str) -> u64 {
        self.frames_verified
            .get(&PipelineLabel { pipeline_id: pipeline_id.to_string() })
            .map_or(0, |c| c.get())
    }

    /// Counts a notification that was not acted on (`reason`: one of [`NOTIFICATION_IGNORED_REASONS`]).
    pub fn notification_ignored(&self, reason: &'static str) {
        self.notifications_ignored.get_or_create(&Reason { reason }).inc();
    }

    /// Counts an HTTP connection refused on arrival (`reason`: one of [`HTTP_REFUSAL_REASONS`]).
    pub fn http_connection_refused(&self, reason: &'static str) {
        self.http_connections_refused.get_or_create(&Reason { reason }).inc();
    }

    /// Counts an open HTTP connection the server reset (`reason`: one of [`HTTP_DROP_REASONS`]).
    pub fn http_connection_dropped(&self, reason: &'static str) {
        self.http_connections_dropped.get_or_create(&Reason { reason }).inc();
    }

    /// Encodes everything as OpenMetrics text into `out`.
    pub fn encode(&self, out: &mut String) -> Result<(), std::fmt::Error> {
        prometheus_client::encoding::text::encode(out, &self.registry)
    }
}

/// Content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One pipeline's metric handles (cheap clones of atomics).
#[derive(Debug, Clone)]
pub struct PipelineMetrics {
    /// `worker_drift_offset_records`.
    pub drift: Gauge,
    /// `worker_state_divergence_flag`.
    pub divergence_flag: Gauge,
    /// `anes_frames_verified_total`.
    pub frames_verified: Counter,
    /// `anes_records_received_total`.
    pub records_received: Counter,
    /// `anes_records_refused_total{reason="backlog_full"}`.
    pub refused_backlog: Counter,
    /// `anes_records_refused_total{reason="dlq_full"}`.
    pub refused_dlq: Counter,
    /// `anes_records_refused_total{reason="stopping"}`.
    pub refused_stopping: Counter,
    /// `anes_records_refused_total{reason="storage"}`: the journal or the queue could not be written.
    pub refused_storage: Counter,
    /// `anes_records_refused_total{reason="fenced"}`: another service took the pipeline over.
    pub refused_fenced: Counter,
    /// `anes_records_refused_total{reason="store_lost"}`: the store lost the pipeline's data.
    pub refused_store_lost: Counter,
    /// `anes_retries_total{operation="rollback"}`.
    pub rollback_retries: Counter,
    /// `anes_retries_total{operation="reconnect"}`.
    pub reconnect_probes: Counter,
    /// `anes_retries_total{operation="store"}`, the journal's share (the checkpoint writer's is
    /// [`StoreMetrics::retries`], the same series).
    pub journal_retries: Counter,
    /// `anes_retry_give_ups_total{operation="rollback"}`.
    pub rollback_give_ups: Counter,
    /// `anes_divergences_total{kind="state"}`.
    pub divergences_state: Counter,
    /// `anes_divergences_total{kind="cycle_misalignment"}`.
    pub divergences_cycle: Counter,
    /// `anes_rollbacks_total{result="success"}`.
    pub rollbacks_success: Counter,
    /// `anes_rollbacks_total{result="failed"}`.
    pub rollbacks_failed: Counter,
    /// `anes_rollback_steps_total{step=...}`, indexed like [`crate::pipeline::Step::ALL`].
    pub steps: [Counter; 6],
    /// `anes_dlq_records`.
    pub dlq_records: Gauge,
    /// `anes_dlq_records_enqueued_total`.
    pub dlq_enqueued: Counter,
    /// `anes_dlq_records_replayed_total`.
    pub dlq_replayed: Counter,
    /// `anes_checkpoint_age_seconds`.
    pub checkpoint_age: Gauge<f64, AtomicU64>,
    /// `anes_pipeline_mode{mode=...}`, indexed like [`Mode::ALL`].
    pub modes: [Gauge; 4],
    /// `anes_pipeline_stalled`.
    pub stalled: Gauge,
    /// `anes_compare_latency_seconds`.
    pub compare_latency: Histogram,
    /// `anes_worker_restarts_total{worker=...}`.
    pub restarts: [Counter; 2],
    /// `anes_worker_up{worker=...}`.
    pub worker_up: [Gauge; 2],
    /// `anes_alert_notifications_total{status="firing"}`.
    pub alerts_firing: Counter,
    /// `anes_alert_notifications_total{status="resolved"}`.
    pub alerts_resolved: Counter,
}

/// One pipeline's store metric handles.
#[derive(Debug, Clone)]
pub struct StoreMetrics {
    /// `anes_store_writes_total{result="ok"}`.
    pub writes_ok: Counter,
    /// `anes_store_writes_total{result="fenced"}`.
    pub writes_fenced: Counter,
    /// `anes_store_writes_total{result="gave_up"}`.
    pub writes_gave_up: Counter,
    /// `anes_store_writes_total{result="invalid"}`.
    pub writes_invalid: Counter,
    /// `anes_store_write_seconds`.
    pub write_seconds: Histogram,
    /// `anes_store_epoch`.
    pub epoch: Gauge,
    /// `anes_retries_total{operation="store"}`.
    pub retries: Counter,
    /// `anes_retry_give_ups_total{operation="store"}`.
    pub give_ups: Counter,
}

impl StoreMetrics {
    /// Handles registered nowhere (tests).
    pub fn detached() -> StoreMetrics {
        Metrics::new().store("detached", "filesystem")
    }
}

impl PipelineMetrics {
    /// Handles registered nowhere (tests of the pipeline alone).
    pub fn detached() -> PipelineMetrics {
        Metrics::new().pipeline("detached")
    }

    /// Sets the mode gauges: 1 for `mode`, 0 for the others.
    pub fn set_mode(&self, mode: Mode) {
        for (m, gauge) in Mode::ALL.iter().zip(&self.modes) {
            gauge.set(i64::from(*m == mode));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_design_gauges_keep_their_exact_names_and_help() {
        let metrics = Metrics::new();
        let p = metrics.pipeline("p1");
        p.drift.set(51);
        p.divergence_flag.set(1);
        let mut text = String::new();
        metrics.encode(&mut text).unwrap();
        assert!(text.contains(&format!("# HELP worker_drift_offset_records {DRIFT_HELP}\n")), "{text}");
        assert!(text.contains("# TYPE worker_drift_offset_records gauge\n"));
        assert!(text.contains("worker_drift_offset_records{pipeline_id=\"p1\"} 51\n"));
        assert!(text.contains(&format!("# HELP worker_state_divergence_flag {DIVERGENCE_HELP}\n")));
        assert!(text.contains("worker_state_divergence_flag{pipeline_id=\"p1\"} 1\n"));
        assert!(text.contains("anes_frames_verified_total{pipeline_id=\"p1\"} 0\n"));
        assert!(text.contains("anes_pipeline_mode{pipeline_id=\"p1\",mode=\"normal\"} 1\n"));
        assert!(text.contains("anes_checkpoint_age_seconds{pipeline_id=\"p1\"} 0.0\n"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    /// Every family of the metrics table in docs/OPERATIONS.md is exported from the start, before
    /// anything happened: `anes_alert_notifications_ignored_total` had no series (so no HELP or TYPE
    /// line either) until the first notification was ignored.
    #[test]
    fn every_family_of_the_operations_table_is_exported_at_start() {
        let metrics = Metrics::new();
        let _pipeline = metrics.pipeline("p1");
        let _store = metrics.store("p1", "filesystem");
        let mut text = String::new();
        metrics.encode(&mut text).unwrap();
        let docs = include_str!("../../../docs/OPERATIONS.md");
        let section = docs.split("\n## Metrics\n").nth(1).expect("the Metrics section");
        let table = section.trim_start().split("\n\n").next().unwrap();
        let mut families = Vec::new();
        for row in table.lines().skip(2) {
            let first_cell = row.split('|').nth(1).unwrap_or("");
            families.extend(first_cell.split('`').skip(1).step_by(2).map(str::to_string));
        }
        assert!(families.len() > 20, "the table was read: {families:?}");
        for family in &families {
            let base = family.strip_suffix("_total").unwrap_or(family);
            assert!(text.contains(&format!("# TYPE {base} ")), "{family} is not exported at start:\n{text}");
        }
        for reason in NOTIFICATION_IGNORED_REASONS {
            assert!(
                text.contains(&format!("anes_alert_notifications_ignored_total{{reason=\"{reason}\"}} 0\n")),
                "{reason}: {text}"
            );
        }
    }
}
