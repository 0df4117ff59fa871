//! The intake's commits, driven by hand: what each commit covers, that nothing is acknowledged
//! before the journal took it, and the backoff after a commit that failed.

use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_pipeline::{
    Action, Event, Mode, Notice, Pace, Pipeline, PipelineSettings, PushOutcome, Refusal, ReplaySource,
};

fn actions(p: &mut Pipeline) -> Vec<Action> {
    std::iter::from_fn(|| p.poll_action(Duration::ZERO)).collect()
}

fn appended(actions: &[Action]) -> Vec<(u64, usize)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::AppendJournal { first_seq, inputs } => Some((*first_seq, inputs.len())),
            _ => None,
        })
        .collect()
}

/// Records set aside in the dead-letter queue while a commit is in flight are not covered by it: the
/// next commit journals them. (Its answer once marked every queued record committed, so records queued
/// during a commit were acknowledged and never journaled.)
#[test]
fn records_queued_during_a_commit_go_into_the_next_one() {
    let now = Duration::ZERO;
    let mut p = Pipeline::new(PipelineSettings::new("p"));
    actions(&mut p);
    for i in 0..5 {
        p.offer_input(now, FrameInput::buttons(i, 0)).unwrap();
    }
    p.commit_input();
    assert_eq!(appended(&actions(&mut p)), [(0, 5)]);
    // Read-only while that commit is in flight: the next records wait in the queue.
    p.handle(now, Event::AlertFiring);
    assert_ne!(p.mode(), Mode::Normal);
    for i in 5..8 {
        p.offer_input(now, FrameInput::buttons(i, 0)).unwrap();
    }
    p.commit_input();
    assert!(appended(&actions(&mut p)).is_empty(), "one commit in flight at a time");
    p.handle(now, Event::Committed { journal_error: None });
    assert_eq!(appended(&actions(&mut p)), [(5, 3)], "the queued records are journaled by the next commit");
    // That commit fails: the queued records are refused, not kept as if journaled.
    p.handle(now, Event::Committed { journal_error: Some("disk full".into()) });
    assert_eq!(p.accounting().received, 5);
    assert_eq!(p.accounting().in_dlq, 0);
}

fn answers(actions: &[Action]) -> Vec<(u64, u64, u64)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Acknowledge(o) => Some((o.accepted, o.duplicates, o.next_seq)),
            _ => None,
        })
        .collect()
}

/// A resent batch the pipeline already holds, pushed while a commit is in flight, is answered when
/// that commit is: nothing else has to come along to start another.
#[test]
fn a_push_of_only_duplicates_during_a_commit_is_answered_when_it_ends() {
    let now = Duration::ZERO;
    let mut p = Pipeline::new(PipelineSettings::new("p"));
    actions(&mut p);
    let inputs: Vec<FrameInput> = (0..4).map(|i| FrameInput::buttons(i, 0)).collect();
    p.push_batch(now, 0, &inputs).unwrap();
    let first = actions(&mut p);
    assert_eq!(appended(&first), [(0, 4)]);
    assert!(answers(&first).is_empty(), "answered before the journal took it");
    // The producer timed out and resends the same batch while the commit is in flight.
    p.push_batch(now, 0, &inputs).unwrap();
    assert!(answers(&actions(&mut p)).is_empty());
    p.handle(now, Event::Committed { journal_error: None });
    let after = actions(&mut p);
    assert!(appended(&after).is_empty(), "nothing new to journal");
    assert_eq!(answers(&after), [(4, 0, 4), (0, 4, 4)]);
}

/// Pipeline `p` with a journal backoff of 0.5 s doubling to 4 s, and a stall deadline (an hour) well
/// after the backoff's in `poll_timeout`.
fn backing_off(seed: u64) -> Pipeline {
    let mut p = Pipeline::new(PipelineSettings {
        journal_retry: (Duration::from_millis(500), Duration::from_secs(4), seed),
        stall_after: Duration::from_secs(3600),
        ..PipelineSettings::new("p")
    });
    actions(&mut p);
    p
}

fn journaled(actions: &[Action]) -> Vec<FrameInput> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::AppendJournal { inputs, .. } => Some(inputs.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn storage_failures(p: &mut Pipeline) -> Vec<(u32, Duration)> {
    p.take_notices()
        .filter_map(|n| match n {
            Notice::StorageFailed { failed_commits, retry_in, .. } => Some((failed_commits, retry_in)),
            _ => None,
        })
        .collect()
}

fn recorded(n: usize) -> Arc<[FrameInput]> {
    (0..n).map(|i| FrameInput::buttons((i % 251) as u8, (i / 251) as u8)).collect()
}

/// Audit against PostgreSQL: with the store stopped for 45 s a replay pipeline re-offered its
/// refused records at once, 8,000 failed commits (a new connection and an error line each) a
/// second. A failed commit now backs off: no record is taken and the journal is not tried until
/// the delay passes, the delays' ceilings double from the base to the cap, one line per failure,
/// and once the store is back the same records are journaled, in order, once.
#[test]
fn a_replay_whose_journal_fails_waits_out_a_doubling_backoff_then_continues_in_order() {
    let mut p = backing_off(7);
    let stream = recorded(1000);
    let mut source = ReplaySource::new(Arc::clone(&stream), false, Pace::Max);
    let mut now = Duration::from_secs(1);
    p.offer_from(now, &mut source);
    let first = actions(&mut p);
    assert_eq!(appended(&first), [(0, 480)], "four drift windows at max pace");
    let ceilings = [500, 1000, 2000, 4000, 4000, 4000].map(Duration::from_millis);
    for (failure, ceiling) in ceilings.into_iter().enumerate() {
        p.handle(now, Event::Committed { journal_error: Some("journal: postgres store unavailable".into()) });
        let reported = storage_failures(&mut p);
        assert_eq!(reported.len(), 1, "one line per failed commit: {reported:?}");
        let (failed_commits, retry_in) = reported[0];
        assert_eq!(failed_commits, failure as u32 + 1);
        assert!(retry_in <= ceiling, "failure {failure}: {retry_in:?} above {ceiling:?}");
        let retry_at = now + retry_in;
        assert_eq!(p.poll_timeout(), Some(retry_at), "the shell wakes when the backoff ends");
        // The driver's loop offers on every wake: none of these reaches the journal.
        for t in [now, now + retry_in / 2, retry_at.saturating_sub(Duration::from_nanos(1))] {
            for _ in 0..100 {
                p.offer_from(t, &mut source);
                assert_eq!(p.room(), 0);
                let spun = actions(&mut p);
                assert!(appended(&spun).is_empty(), "offered again {:?} after the failure", t - now);
            }
        }
        assert_eq!(source.produced(), 0, "the refused records went back to the source");
        now = retry_at;
        p.handle(now, Event::Tick);
        assert!(p.poll_timeout().is_none_or(|at| at > now), "the backoff's end is no deadline any more");
        p.offer_from(now, &mut source);
        let retried = actions(&mut p);
        assert_eq!(appended(&retried), [(0, 480)], "the same records, from the same sequence number");
        assert_eq!(journaled(&retried), stream[..480]);
        assert_eq!(
            p.counters().journal_retries,
            failure as u64 + 1,
            "anes_retries_total{{operation=\"store\"}}"
        );
    }
    assert_eq!(p.counters().refused_storage, 480, "each record refused once, however often offered");
    p.handle(now, Event::Committed { journal_error: None });
    let notices: Vec<Notice> = p.take_notices().collect();
    assert!(notices.contains(&Notice::StorageRecovered { failed_commits: 6 }), "{notices:?}");
    assert_eq!(p.counters().records_received, 480);
    assert_eq!(p.accounting().received, 480);
    assert_eq!(source.produced(), 480);
    assert!(p.room() > 0, "no backoff after a commit that succeeded");
}

/// The service's loop over a 45 s outage at 1 ms per turn, with the store's default policy (2 s base,
/// 30 s cap): a handful of commits instead of tens of thousands, then every record stored once.
#[test]
fn a_45_s_store_outage_costs_a_few_commits_not_one_per_turn_of_the_loop() {
    let mut p = Pipeline::new(PipelineSettings {
        stall_after: Duration::from_secs(3600),
        ..PipelineSettings::new("p")
    });
    actions(&mut p);
    let stream = recorded(480);
    let mut source = ReplaySource::new(Arc::clone(&stream), false, Pace::Max);
    let mut stored = Vec::new();
    let mut commits = 0u32;
    let outage_ends = Duration::from_secs(45);
    let mut now = Duration::ZERO;
    while now < Duration::from_secs(120) && stored.len() < stream.len() {
        if p.poll_timeout().is_some_and(|at| now >= at) {
            p.handle(now, Event::Tick);
        }
        p.offer_from(now, &mut source);
        let done = actions(&mut p);
        if done.iter().any(|a| matches!(a, Action::Commit)) {
            commits += 1;
            let journal_error =
                (now < outage_ends).then(|| "journal: postgres store unavailable".to_string());
            if journal_error.is_none() {
                stored.extend(journaled(&done));
            }
            p.handle(now, Event::Committed { journal_error });
        }
        now += Duration::from_millis(1);
    }
    println!("{commits} commits for a 45 s outage");
    assert!(commits < 30, "{commits} commits in 45 s");
    assert_eq!(stored, stream[..], "every record stored once, in order");
    assert_eq!(p.counters().journal_retries, u64::from(commits - 1));
    assert_eq!(p.counters().records_received, 480);
}

/// A push while the backoff runs is answered at once with `storage`, without trying the journal; the
/// first push after it is journaled.
#[test]
fn a_push_during_the_backoff_is_refused_without_trying_the_journal() {
    let mut p = backing_off(9);
    let batch: Vec<FrameInput> = (0..4).map(|i| FrameInput::buttons(i, 0)).collect();
    let now = Duration::from_secs(1);
    p.push_batch(now, 0, &batch).unwrap();
    assert_eq!(appended(&actions(&mut p)), [(0, 4)]);
    p.handle(now, Event::Committed { journal_error: Some("disk full".into()) });
    let (_, retry_in) = storage_failures(&mut p)[0];
    let answered: Vec<PushOutcome> = std::iter::from_fn(|| p.poll_action(now))
        .filter_map(|a| match a {
            Action::Acknowledge(o) => Some(o),
            _ => None,
        })
        .collect();
    assert_eq!(answered.len(), 1);
    assert_eq!((answered[0].accepted, answered[0].refused), (0, Some(Refusal::Storage)));
    p.push_batch(now + retry_in / 2, 0, &batch).unwrap();
    let during = actions(&mut p);
    assert!(appended(&during).is_empty(), "the journal is not tried during the backoff");
    assert_eq!(answers(&during), [(0, 0, 0)]);
    p.push_batch(now + retry_in, 0, &batch).unwrap();
    assert_eq!(appended(&actions(&mut p)), [(0, 4)], "tried again once the backoff passed");
}
