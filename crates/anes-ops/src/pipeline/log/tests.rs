//! Each notice's log line as `anes serve --log-format json` writes it: the messages and field names
//! below are those the pipeline logged before it reported notices (operators and
//! `anes-cli/tests/serve_logs.rs` read them), written out here, not taken from the code under test.

use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anes_lockstep::DivergenceKind;
use anes_pipeline::protocol::BuildInfo;
use anes_pipeline::worker::WorkerId;
use anes_pipeline::{Drill, Event, Fence, Mode, Notice, Pipeline, PipelineSettings, Step, Trigger};
use serde_json::{Value, json};

use super::log_notice;
use crate::metrics::Metrics;
use crate::pipeline::PipelineObserver;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The JSON lines `write` logs, formatted like the CLI's `--log-format json` (no timestamp).
fn json_lines(write: impl FnOnce()) -> Vec<Value> {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .flatten_event(true)
        .without_time()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, write);
    let bytes = captured.0.lock().unwrap().clone();
    String::from_utf8(bytes).unwrap().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

fn line(level: &str, message: &str, fields: Value) -> Value {
    let mut line = json!({ "level": level, "message": message, "target": "anes_ops::pipeline::log" });
    line.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
    line
}

fn build() -> BuildInfo {
    BuildInfo { version: "0.1.0".into(), git_commit: Some("0123abc".into()), emulation_epoch: 3 }
}

/// Every notice with the line it becomes.
fn every_notice() -> Vec<(Notice, Value)> {
    use WorkerId::{A, B};
    let hash = [0xab; 32];
    let hex = "ab".repeat(32);
    vec![
        (
            Notice::Recovering { checkpoint_seq: 120, journaled: 7 },
            line(
                "WARN",
                "recovering: both workers load the checkpoint and re-run the journaled records after it",
                json!({ "pipeline": "p1", "checkpoint_seq": 120, "journaled": 7 }),
            ),
        ),
        (
            Notice::AlertResolved { mode: Mode::ReadOnly },
            line(
                "INFO",
                "alert resolved: noted; a resolved alert never re-admits a worker by itself",
                json!({ "pipeline": "p1", "mode": "read_only" }),
            ),
        ),
        (
            Notice::Draining,
            line(
                "INFO",
                "draining: intake stopped, taking a final verified checkpoint",
                json!({ "pipeline": "p1" }),
            ),
        ),
        (
            Notice::Fenced(Fence::TakenOver { ours: 4, current: 5 }),
            line(
                "ERROR",
                "fenced: another service took this pipeline over; intake is refused from now on and no checkpoint is written",
                json!({ "pipeline": "p1", "writer": 4, "current": 5 }),
            ),
        ),
        (
            Notice::Fenced(Fence::StoreLost { ours: 4, current: 0 }),
            line(
                "ERROR",
                "fenced: the checkpoint store lost this pipeline's data (its epoch is below ours; emptied or restarted without persistence), which is not a takeover; intake is refused from now on and no checkpoint is written",
                json!({ "pipeline": "p1", "writer": 4, "current": 0 }),
            ),
        ),
        (
            Notice::Fenced(Fence::StoreDamaged { ours: 4 }),
            line(
                "ERROR",
                "fenced: the store's record of this pipeline is damaged (its epoch or the journal's end is not a number, the epoch is at its maximum, or the journal lost records this service journaled), which is not a takeover; intake is refused from now on and no checkpoint is written",
                json!({ "pipeline": "p1", "writer": 4 }),
            ),
        ),
        (
            Notice::StorageFailed {
                records: 9,
                error: "disk full".into(),
                failed_commits: 2,
                retry_in: Duration::from_millis(1500),
            },
            line(
                "ERROR",
                "records could not be stored durably: refused",
                json!({ "pipeline": "p1", "records": 9, "error": "disk full", "failed_commits": 2, "retry_in_seconds": 1.5 }),
            ),
        ),
        (
            Notice::StorageRecovered { failed_commits: 3 },
            line("INFO", "records stored durably again", json!({ "pipeline": "p1", "failed_commits": 3 })),
        ),
        (
            Notice::Divergence {
                seq: 41,
                kind: DivergenceKind::CycleMisalignment,
                detail: "worker A and worker B differ".into(),
            },
            line(
                "ERROR",
                "divergence: the pipeline is read-only",
                json!({ "pipeline": "p1", "seq": 41, "kind": "cycle_misalignment", "detail": "worker A and worker B differ" }),
            ),
        ),
        (
            Notice::Verdict { incident: 2, suspects: vec![A, B] },
            line("INFO", "referee's verdict", json!({ "pipeline": "p1", "incident": 2, "suspects": "a,b" })),
        ),
        (
            Notice::AlertDuringRollback { step: Step::Restore },
            line(
                "INFO",
                "alert firing: a rollback is already in progress",
                json!({ "pipeline": "p1", "step": "restore" }),
            ),
        ),
        (
            Notice::AlertWhileRunning { suspects: vec![B], kind: "drift" },
            line(
                "WARN",
                "alert firing while the pipeline runs: rolling back",
                json!({ "pipeline": "p1", "suspects": "b", "kind": "drift" }),
            ),
        ),
        (
            Notice::RollbackInProgress { step: Step::ReplayDlq },
            line("INFO", "rollback already in progress", json!({ "pipeline": "p1", "step": "replay_dlq" })),
        ),
        (
            Notice::RollbackStarted { trigger: Trigger::Retry, attempt: 2, suspects: vec![A] },
            line(
                "WARN",
                "rollback started",
                json!({ "pipeline": "p1", "trigger": "retry", "attempt": 2, "suspects": "a" }),
            ),
        ),
        (
            Notice::StepDone { step: Step::Isolate, what: "suspect workers are being stopped".into() },
            line(
                "WARN",
                "rollback step 2/6 isolate: suspect workers are being stopped",
                json!({ "pipeline": "p1", "step": "isolate" }),
            ),
        ),
        (
            Notice::CheckpointDiscarded { seq: Some(96), reason: "hashes differ".into() },
            line(
                "ERROR",
                "checkpoint failed verification: discarded",
                json!({ "pipeline": "p1", "seq": 96, "reason": "hashes differ" }),
            ),
        ),
        (
            Notice::CheckpointDiscarded { seq: None, reason: "hashes differ".into() },
            line(
                "ERROR",
                "checkpoint failed verification: discarded",
                json!({ "pipeline": "p1", "reason": "hashes differ" }),
            ),
        ),
        (
            Notice::ReplayingDlq { records: 12 },
            line(
                "INFO",
                "replaying records from the dead-letter queue",
                json!({ "pipeline": "p1", "records": 12 }),
            ),
        ),
        (
            Notice::RecoveredFromPreviousRun,
            line("INFO", "recovered from the previous run: normal mode", json!({ "pipeline": "p1" })),
        ),
        (
            Notice::RollbackGaveUp { attempt: 3, reason: "no checkpoint".into() },
            line(
                "ERROR",
                "rollback failed; out of attempts: the pipeline stays read-only until an operator acts or the alert fires again",
                json!({ "pipeline": "p1", "attempt": 3, "reason": "no checkpoint" }),
            ),
        ),
        (
            Notice::RollbackRetrying {
                attempt: 1,
                reason: "no checkpoint".into(),
                retry_in: Duration::from_millis(1500),
            },
            line(
                "ERROR",
                "rollback attempt failed; retrying",
                json!({ "pipeline": "p1", "attempt": 1, "reason": "no checkpoint", "retry_in_seconds": 1.5 }),
            ),
        ),
        (
            Notice::WorkerUnreachable {
                probes: 4,
                reason: "worker a exited during the rollback: could not connect".into(),
                retry_in: Duration::from_millis(375),
            },
            line(
                "WARN",
                "a worker cannot be reached; probing again (logged at the first probe and every power of two)",
                json!({ "pipeline": "p1", "probes": 4, "reason": "worker a exited during the rollback: could not connect", "retry_in_seconds": 0.375 }),
            ),
        ),
        (
            Notice::FinalCheckpoint { seq: 300, state_hash: hash },
            line(
                "INFO",
                "final verified checkpoint",
                json!({ "pipeline": "p1", "seq": 300, "state_hash": hex }),
            ),
        ),
        (
            Notice::FinalCheckpointNotStored {
                seq: 300,
                state_hash: hash,
                fence: Fence::TakenOver { ours: 4, current: 5 },
            },
            line(
                "WARN",
                "final checkpoint verified by both workers but not stored: fenced: another service took the pipeline over (store epoch 5, ours 4); stop this one",
                json!({ "pipeline": "p1", "seq": 300, "state_hash": hex, "store_epoch": 5 }),
            ),
        ),
        (
            Notice::FinalSnapshotsDiffer { seq: 300 },
            line(
                "ERROR",
                "the workers' final snapshots differ: no final checkpoint",
                json!({ "pipeline": "p1", "seq": 300 }),
            ),
        ),
        (
            Notice::Stalled {
                mode: Mode::Recovery,
                unverified: 5,
                in_dlq: 2,
                input_expected: true,
                idle: Duration::from_millis(10_250),
            },
            line(
                "ERROR",
                "stalled: no frame verified while work waits",
                json!({ "pipeline": "p1", "mode": "recovery", "unverified": 5, "in_dlq": 2,
                        "input_expected": true, "idle_seconds": 10.25 }),
            ),
        ),
        (
            Notice::NoLongerStalled,
            line("INFO", "progress again: no longer stalled", json!({ "pipeline": "p1" })),
        ),
        (
            Notice::StaleMessage { worker: A, incarnation: 1 },
            line(
                "DEBUG",
                "dropped a message of a replaced incarnation",
                json!({ "pipeline": "p1", "worker": "a", "incarnation": 1 }),
            ),
        ),
        (
            Notice::WorkerStarted { worker: B, incarnation: 2, build: build() },
            line(
                "INFO",
                "worker started",
                json!({ "pipeline": "p1", "worker": "b", "incarnation": 2, "version": "0.1.0",
                        "git_commit": "0123abc", "emulation_epoch": 3 }),
            ),
        ),
        (
            Notice::RecordOutOfOrder { worker: A, seq: 9, expected: 7 },
            line(
                "ERROR",
                "worker reported a record out of order; ignored",
                json!({ "pipeline": "p1", "worker": "a", "seq": 9, "expected": 7 }),
            ),
        ),
        (
            Notice::FaultFired { worker: B, seq: 33, spec: "flip:ram:0x07f0:3".into(), refused: None },
            line(
                "WARN",
                "injected fault fired",
                json!({ "pipeline": "p1", "worker": "b", "seq": 33, "spec": "flip:ram:0x07f0:3" }),
            ),
        ),
        (
            Notice::FaultFired {
                worker: B,
                seq: 33,
                spec: "flip:ram:0x9000:3".into(),
                refused: Some("not RAM".into()),
            },
            line(
                "WARN",
                "injected fault fired",
                json!({ "pipeline": "p1", "worker": "b", "seq": 33, "spec": "flip:ram:0x9000:3", "refused": "not RAM" }),
            ),
        ),
        (
            Notice::WorkerRefused { worker: A, reason: "bad snapshot".into() },
            line(
                "ERROR",
                "worker refused a command",
                json!({ "pipeline": "p1", "worker": "a", "reason": "bad snapshot" }),
            ),
        ),
        (
            Notice::UnaskedInspectionReply { worker: B },
            line(
                "ERROR",
                "worker sent an inspection reply nobody asked for",
                json!({ "pipeline": "p1", "worker": "b" }),
            ),
        ),
        (
            Notice::PowerOnMismatch,
            line(
                "ERROR",
                "the workers disagree at power-on: different builds or ROMs",
                json!({ "pipeline": "p1" }),
            ),
        ),
        (
            Notice::WorkerExited { worker: A, reason: "crashed".into() },
            line(
                "ERROR",
                "worker exited unexpectedly",
                json!({ "pipeline": "p1", "worker": "a", "reason": "crashed" }),
            ),
        ),
        (
            Notice::Drill { worker: B, drill: Drill::Fault("flip:ram:0x07f0:3".into()) },
            line(
                "WARN",
                "drill",
                json!({ "pipeline": "p1", "worker": "b", "drill": "fault flip:ram:0x07f0:3" }),
            ),
        ),
        (
            Notice::CheckpointVerified { seq: 64 },
            line("DEBUG", "verified checkpoint", json!({ "pipeline": "p1", "seq": 64 })),
        ),
    ]
}

#[test]
fn every_notice_becomes_the_line_the_pipeline_used_to_log() {
    for (notice, expected) in every_notice() {
        let lines = json_lines(|| log_notice("p1", &notice));
        assert_eq!(lines, [expected], "{notice:?}");
    }
}

/// A transition of a real pipeline reaches the log through the observer, once, and in order.
#[test]
fn the_observer_writes_a_pipelines_notices_once_in_order() {
    let metrics = Metrics::new();
    let mut observer = PipelineObserver::new(metrics.pipeline("p1"));
    let mut pipeline = Pipeline::new(PipelineSettings::new("p1"));
    pipeline.handle(Duration::ZERO, Event::Drill { worker: WorkerId::A, drill: Drill::Crash });
    pipeline.handle(Duration::ZERO, Event::AlertResolved);
    let lines = json_lines(|| observer.observe(&mut pipeline));
    let messages: Vec<&str> = lines.iter().map(|l| l["message"].as_str().unwrap()).collect();
    assert_eq!(
        messages,
        ["drill", "alert resolved: noted; a resolved alert never re-admits a worker by itself"]
    );
    assert_eq!(lines[0], line("WARN", "drill", json!({ "pipeline": "p1", "worker": "a", "drill": "crash" })));
    let again = json_lines(|| {
        observer.observe(&mut pipeline);
        observer.log_notices(&mut pipeline);
    });
    assert!(again.is_empty(), "written once: {again:?}");
}

/// A shell that takes notices too rarely loses the oldest, and the next take says how many.
#[test]
fn notices_not_taken_in_time_are_counted_as_dropped() {
    let observer = PipelineObserver::new(Metrics::new().pipeline("p1"));
    let mut pipeline = Pipeline::new(PipelineSettings::new("p1"));
    pipeline.handle(Duration::ZERO, Event::Drain);
    for _ in 0..1030 {
        pipeline.handle(Duration::ZERO, Event::AlertResolved);
    }
    let lines = json_lines(|| observer.log_notices(&mut pipeline));
    assert_eq!(lines.len(), 1 + 1024);
    assert_eq!(
        lines[0],
        line(
            "WARN",
            "log lines of the pipeline were dropped: too many between two rounds",
            json!({ "pipeline": "p1", "dropped": 7 })
        )
    );
    assert!(lines[1..].iter().all(|l| l["message"].as_str().unwrap().starts_with("alert resolved")));
    assert!(json_lines(|| observer.log_notices(&mut pipeline)).is_empty(), "taken once");
}
