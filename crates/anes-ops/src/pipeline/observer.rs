//! The one place where what a pipeline counted and reported becomes metrics and log lines.

use prometheus_client::metrics::counter::Counter;

use super::log::{log_dropped, log_notice};
use crate::metrics::PipelineMetrics;
use crate::pipeline::{Counters, Notice, Pipeline};

/// The one place where a pipeline's [`Counters`] become its Prometheus series and its notices
/// ([`crate::pipeline::Notice`]) its log lines: a counter grows by what the pipeline's grew since
/// the last copy, a gauge takes the pipeline's value, each notice is written once. The driver copies
/// after every round of events and before it answers a push, and writes the notices before each
/// action it executes, so its own lines about an action follow the pipeline's about what led to it.
#[derive(Debug)]
pub struct PipelineObserver {
    metrics: PipelineMetrics,
    seen: Counters,
}

impl PipelineObserver {
    /// An observer that writes to `metrics`, having seen nothing yet.
    pub fn new(metrics: PipelineMetrics) -> PipelineObserver {
        PipelineObserver { metrics, seen: Counters::default() }
    }

    /// Writes what `pipeline` reported since the last call, then copies what it counted.
    pub fn observe(&mut self, pipeline: &mut Pipeline) {
        self.log_notices(pipeline);
        let m = &self.metrics;
        for seconds in pipeline.take_compare_latencies() {
            m.compare_latency.observe(seconds);
        }
        let now = pipeline.counters();
        let was = &self.seen;
        let grow = |counter: &Counter, now: u64, was: u64| {
            if now > was {
                counter.inc_by(now - was);
            }
        };
        grow(&m.frames_verified, now.frames_verified, was.frames_verified);
        grow(&m.records_received, now.records_received, was.records_received);
        grow(&m.refused_backlog, now.refused_backlog, was.refused_backlog);
        grow(&m.refused_dlq, now.refused_dlq, was.refused_dlq);
        grow(&m.refused_stopping, now.refused_stopping, was.refused_stopping);
        grow(&m.refused_storage, now.refused_storage, was.refused_storage);
        grow(&m.refused_fenced, now.refused_fenced, was.refused_fenced);
        grow(&m.refused_store_lost, now.refused_store_lost, was.refused_store_lost);
        grow(&m.rollback_retries, now.rollback_retries, was.rollback_retries);
        grow(&m.reconnect_probes, now.reconnect_probes, was.reconnect_probes);
        grow(&m.journal_retries, now.journal_retries, was.journal_retries);
        grow(&m.rollback_give_ups, now.rollback_give_ups, was.rollback_give_ups);
        grow(&m.divergences_state, now.divergences_state, was.divergences_state);
        grow(&m.divergences_cycle, now.divergences_cycle, was.divergences_cycle);
        grow(&m.rollbacks_success, now.rollbacks_success, was.rollbacks_success);
        grow(&m.rollbacks_failed, now.rollbacks_failed, was.rollbacks_failed);
        grow(&m.dlq_enqueued, now.dlq_enqueued, was.dlq_enqueued);
        grow(&m.dlq_replayed, now.dlq_replayed, was.dlq_replayed);
        grow(&m.alerts_firing, now.alerts_firing, was.alerts_firing);
        grow(&m.alerts_resolved, now.alerts_resolved, was.alerts_resolved);
        for (i, counter) in m.steps.iter().enumerate() {
            grow(counter, now.steps[i], was.steps[i]);
        }
        for w in 0..2 {
            grow(&m.restarts[w], now.restarts[w], was.restarts[w]);
            m.worker_up[w].set(now.worker_up[w]);
        }
        m.drift.set(now.drift);
        m.divergence_flag.set(now.divergence_flag);
        m.dlq_records.set(now.dlq_records);
        m.checkpoint_age.set(now.checkpoint_age);
        m.stalled.set(now.stalled);
        m.set_mode(now.mode);
        self.seen.clone_from(now);
    }

    /// Writes what `pipeline` reported since the last call as log lines, oldest first.
    pub fn log_notices(&self, pipeline: &mut Pipeline) {
        let dropped = pipeline.take_dropped_notices();
        // Collecting nothing allocates nothing: this runs before every action the driver executes.
        let notices: Vec<Notice> = pipeline.take_notices().collect();
        if dropped > 0 {
            log_dropped(pipeline.id(), dropped);
        }
        for notice in &notices {
            log_notice(pipeline.id(), notice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    /// The observer copies what a pipeline counted, growth for counters and values for gauges, and a
    /// second copy of unchanged counters adds nothing.
    #[test]
    fn the_observer_copies_a_pipelines_counters_once() {
        use crate::pipeline::{Event, PipelineSettings};
        use anes_core::movie::FrameInput;
        use std::time::Duration;

        let metrics = Metrics::new();
        let mut observer = PipelineObserver::new(metrics.pipeline("p1"));
        let mut pipeline = Pipeline::new(PipelineSettings::new("p1"));
        pipeline.handle(Duration::ZERO, Event::Drain);
        for seq in 0..3 {
            assert!(pipeline.offer_input(Duration::ZERO, FrameInput::buttons(seq, 0)).is_err());
        }
        pipeline.handle(Duration::ZERO, Event::AlertFiring);
        for _ in 0..2 {
            observer.observe(&mut pipeline);
            let mut text = String::new();
            metrics.encode(&mut text).unwrap();
            assert!(
                text.contains("anes_records_refused_total{pipeline_id=\"p1\",reason=\"stopping\"} 1\n"),
                "the same record offered three times is refused once: {text}"
            );
            assert!(
                text.contains("anes_alert_notifications_total{pipeline_id=\"p1\",status=\"firing\"} 1\n"),
                "{text}"
            );
        }
    }

    /// A journal commit tried again after a failed one's backoff is a store request retried: it
    /// counts in `anes_retries_total{operation="store"}`, the series the checkpoint writer's retries
    /// count in (an audit saw it stay at 1 through a 45 s journal outage).
    #[test]
    fn a_journal_retry_counts_as_a_store_retry() {
        use crate::pipeline::{Event, PipelineSettings};
        use anes_core::movie::FrameInput;
        use std::time::Duration;

        let metrics = Metrics::new();
        let mut observer = PipelineObserver::new(metrics.pipeline("p1"));
        let store = metrics.store("p1", "postgres");
        store.retries.inc();
        let mut pipeline = Pipeline::new(PipelineSettings::new("p1"));
        let mut now = Duration::ZERO;
        for _ in 0..3 {
            pipeline.offer_input(now, FrameInput::buttons(1, 0)).unwrap();
            pipeline.commit_input();
            while pipeline.poll_action(now).is_some() {}
            pipeline.handle(now, Event::Committed { journal_error: Some("store unavailable".into()) });
            now = pipeline.poll_timeout().expect("the backoff's end");
            pipeline.handle(now, Event::Tick);
        }
        observer.observe(&mut pipeline);
        let mut text = String::new();
        metrics.encode(&mut text).unwrap();
        // The writer's one and the journal's two (the first commit was no retry).
        assert!(text.contains("anes_retries_total{pipeline_id=\"p1\",operation=\"store\"} 3\n"), "{text}");
    }
}
