//! The intake's commits, driven by hand: what each commit covers, and that nothing is acknowledged
//! before the journal took it.

use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_pipeline::{Action, Event, Mode, Pipeline, PipelineSettings};

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
