//! `Pipeline::poll_timeout`: when time alone next changes something, so a shell can sleep until
//! then instead of ticking on a fixed period. Each deadline it names is the one a tick acts on.

use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_pipeline::worker::{WorkerId, WorkerMessage, WorkerOutput};
use anes_pipeline::{Action, Event, Mode, Pipeline, PipelineSettings};

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

fn drain(p: &mut Pipeline, now: Duration) -> Vec<Action> {
    std::iter::from_fn(|| p.poll_action(now)).collect()
}

#[test]
fn an_idle_pipeline_waits_for_events_only() {
    let mut p = Pipeline::new(PipelineSettings::new("p"));
    drain(&mut p, Duration::ZERO);
    p.handle(secs(1.0), Event::Tick);
    assert_eq!(p.poll_timeout(), None);
}

/// Work that waits starts the stall clock when it arrives, not at the last tick: a shell that slept
/// for minutes still declares the stall exactly `stall_after` after the record came.
#[test]
fn the_stall_deadline_counts_from_when_work_started_waiting() {
    let settings = PipelineSettings::new("p");
    let stall_after = settings.stall_after;
    let mut p = Pipeline::new(settings);
    drain(&mut p, Duration::ZERO);
    p.handle(secs(1.0), Event::Tick);
    // Nothing for 100 s, then a record: the workers never started (no hello), so it waits.
    let arrived = secs(101.0);
    p.offer_input(arrived, FrameInput::buttons(1, 0)).unwrap();
    p.commit_input();
    drain(&mut p, arrived);
    p.handle(arrived, Event::Committed { journal_error: None });
    assert_eq!(p.poll_timeout(), Some(arrived + stall_after));
    p.handle(arrived + stall_after - secs(0.001), Event::Tick);
    assert!(!p.is_stalled(), "a tick before the deadline declares nothing");
    p.handle(arrived + stall_after, Event::Tick);
    assert!(p.is_stalled());
    assert_eq!(p.poll_timeout(), None, "a stall declared has no further deadline");
}

/// A worker that exits starts a rollback: the step's deadline, then the retry's end, are the next
/// deadlines; ticking at each moves the pipeline on.
#[test]
fn a_rollback_s_step_deadline_and_retry_wait_are_deadlines() {
    let settings = PipelineSettings::new("p");
    let step_timeout = settings.step_timeout;
    let mut p = Pipeline::new(settings);
    drain(&mut p, Duration::ZERO);
    let died = secs(2.0);
    p.handle(
        died,
        Event::Worker(WorkerMessage {
            worker: WorkerId::A,
            incarnation: 1,
            body: WorkerOutput::Exited { reason: "killed".into() },
        }),
    );
    drain(&mut p, died);
    assert_ne!(p.mode(), Mode::Normal);
    let deadline = p.poll_timeout().expect("a rollback step has a deadline");
    assert!(deadline <= died + step_timeout, "{deadline:?}");
    // Nobody answers: at the deadline the attempt fails and a retry waits.
    p.handle(deadline, Event::Tick);
    let retry = p.poll_timeout().expect("the retry's wait ends");
    assert!(retry > deadline, "{retry:?} after {deadline:?}");
    assert_eq!(p.status().phase, "retry_wait");
    p.handle(retry, Event::Tick);
    assert_eq!(p.status().phase, "rolling_back");
}
