//! A canary run's live figures and their export: the design's `worker_state_divergence_flag` and
//! `worker_drift_offset_records` for the run (label `pipeline_id`), so a cluster's analysis (Argo
//! Rollouts, Flagger) can gate a rollout on them, served on a `/metrics` endpoint or pushed to a
//! Pushgateway.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::metrics::{DIVERGENCE_HELP, DRIFT_HELP};

/// Live figures of one canary run, shared with an exporter thread.
#[derive(Debug)]
pub struct CanaryStatus {
    pipeline_id: String,
    baseline_records: AtomicU64,
    candidate_records: AtomicU64,
    planned: AtomicU64,
    /// 0 running, 1 same, 2 diverged.
    result: AtomicU64,
}

/// The `result` label values of `anes_canary_result`, by the value of [`CanaryStatus::result`].
const RESULTS: [&str; 3] = ["running", "same", "diverged"];

impl CanaryStatus {
    /// The status of a run exported under `pipeline_id` (e.g. `canary-demo`).
    pub fn new(pipeline_id: &str) -> Arc<CanaryStatus> {
        Arc::new(CanaryStatus {
            pipeline_id: pipeline_id.to_string(),
            baseline_records: AtomicU64::new(0),
            candidate_records: AtomicU64::new(0),
            planned: AtomicU64::new(0),
            result: AtomicU64::new(0),
        })
    }

    /// The label value the run is exported under.
    pub fn pipeline_id(&self) -> &str {
        &self.pipeline_id
    }

    pub(super) fn start(&self, frames: u64) {
        self.planned.store(frames, Ordering::Relaxed);
    }

    pub(super) fn set_records(&self, baseline: u64, candidate: u64) {
        self.baseline_records.store(baseline, Ordering::Relaxed);
        self.candidate_records.store(candidate, Ordering::Relaxed);
    }

    pub(super) fn diverged(&self) {
        self.result.store(2, Ordering::Relaxed);
    }

    /// Marks the run finished without a difference (a diverged run stays diverged).
    pub fn finished(&self) {
        let _ = self.result.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// 1 from the first difference on.
    pub fn divergence_flag(&self) -> i64 {
        i64::from(self.result.load(Ordering::Relaxed) == 2)
    }

    /// |records from the baseline − records from the candidate|.
    pub fn drift(&self) -> u64 {
        let (a, b) =
            (self.baseline_records.load(Ordering::Relaxed), self.candidate_records.load(Ordering::Relaxed));
        a.abs_diff(b)
    }

    /// The metrics in OpenMetrics text.
    pub fn encode(self: &Arc<CanaryStatus>) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Exporter(Arc::clone(self))));
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &registry).expect("writing to a String");
        out
    }
}

/// Encodes a [`CanaryStatus`] (a collector, so the design's help texts stay exactly as written).
#[derive(Debug)]
struct Exporter(Arc<CanaryStatus>);

impl Collector for Exporter {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let status = &self.0;
        let labels = [("pipeline_id", status.pipeline_id.as_str())];
        let gauge = |encoder: &mut DescriptorEncoder, name: &str, help: &str, value: i64| {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            ConstGauge::new(value).encode(family.encode_family(&labels)?)
        };
        gauge(&mut encoder, "worker_state_divergence_flag", DIVERGENCE_HELP, status.divergence_flag())?;
        gauge(&mut encoder, "worker_drift_offset_records", DRIFT_HELP, status.drift() as i64)?;
        let compared = status
            .baseline_records
            .load(Ordering::Relaxed)
            .min(status.candidate_records.load(Ordering::Relaxed));
        gauge(
            &mut encoder,
            "anes_canary_frames_compared",
            "Frames whose records both builds reported so far",
            compared as i64,
        )?;
        gauge(
            &mut encoder,
            "anes_canary_frames_planned",
            "Frames the canary run compares in all",
            status.planned.load(Ordering::Relaxed) as i64,
        )?;
        let result = status.result.load(Ordering::Relaxed) as usize;
        let mut family = encoder.encode_descriptor(
            "anes_canary_result",
            "1 for the run's state: running, same (no difference) or diverged",
            None,
            MetricType::Gauge,
        )?;
        for (i, name) in RESULTS.iter().enumerate() {
            let labels = [("pipeline_id", status.pipeline_id.as_str()), ("result", name)];
            ConstGauge::new(i64::from(i == result)).encode(family.encode_family(&labels)?)?;
        }
        Ok(())
    }
}
