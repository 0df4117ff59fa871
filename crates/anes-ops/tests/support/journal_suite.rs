//! The shared journal suite every shared backend passes (Redis, PostgreSQL, S3): batches appended
//! under the epoch fence and read back from any sequence number, a takeover's new owner reading every
//! record the old one had acknowledged while the old one's next append is refused and stores nothing,
//! no gap after the end, an unacknowledged tail replaced, retention, the end moved by an operator, a
//! damaged batch reported as missing records, and records the store lost under the journal reported as
//! the store's damage.

#![allow(dead_code)]

use anes_core::movie::{FrameInput, InputStream};
use anes_ops::journal::{Journal, JournalError, SharedJournal, encode_batch, read_shared};
use anes_ops::store::{CheckpointStore, HeldEpoch, JournalStore, StoreError};

/// Opens a pipeline's store twice: its checkpoint side and its journal side (two connections).
pub type OpenBoth<'a> = &'a dyn Fn(&str) -> (Box<dyn CheckpointStore>, Box<dyn JournalStore>);
/// Damages the stored batch that starts at the given sequence number.
pub type DamageBatch<'a> = &'a dyn Fn(&str, u64);

pub fn input(seq: u64) -> FrameInput {
    FrameInput::buttons((seq * 13 % 241) as u8, (seq % 5) as u8)
}

pub fn append(journal: &mut dyn JournalStore, epoch: u64, from: u64, to: u64) -> Result<(), StoreError> {
    let records: InputStream = (from..to).map(input).collect();
    journal.append_batch(epoch, from, to, &encode_batch(from, &records))
}

fn records(journal: &mut dyn JournalStore, from: u64) -> (InputStream, Option<u64>) {
    let contents = read_shared(journal, from).unwrap();
    contents.require_acknowledged_from(from).unwrap();
    (contents.records_from(from).unwrap(), contents.acknowledged_end)
}

fn expected(from: u64, to: u64) -> InputStream {
    (from..to).map(input).collect()
}

/// Appends, reads back from the start and the middle, and a takeover: the new owner reads every
/// record acknowledged before it; the old owner is refused and stores nothing.
pub fn appends_read_back_and_a_takeover_fences_the_old_owner(open: OpenBoth, prefix: &str) {
    let p = format!("{prefix}-jt");
    let (mut store_a, mut journal_a) = open(&p);
    let e1 = store_a.bump_epoch().unwrap();
    for (from, to) in [(0, 7), (7, 30), (30, 31), (31, 100)] {
        append(journal_a.as_mut(), e1, from, to).unwrap();
    }
    assert_eq!(records(journal_a.as_mut(), 0), (expected(0, 100), Some(100)));
    assert_eq!(records(journal_a.as_mut(), 50), (expected(50, 100), Some(100)), "from inside a batch");
    // A gap after the end is refused, and stores nothing.
    let gap = append(journal_a.as_mut(), e1, 105, 110).unwrap_err();
    assert!(
        matches!(gap, StoreError::JournalGap { first_seq: 105, .. })
            && gap.to_string().contains("leave a gap"),
        "{gap}"
    );
    // Another coordinator takes over: it reads all 100, appends on.
    let (mut store_b, mut journal_b) = open(&p);
    let e2 = store_b.bump_epoch().unwrap();
    assert_eq!(records(journal_b.as_mut(), 0), (expected(0, 100), Some(100)));
    let refused = append(journal_a.as_mut(), e1, 100, 120).unwrap_err();
    assert!(
        matches!(refused, StoreError::Fenced { writer, current, .. } if writer == e1 && current == e2),
        "{refused}"
    );
    append(journal_b.as_mut(), e2, 100, 150).unwrap();
    assert_eq!(
        records(journal_a.as_mut(), 0),
        (expected(0, 150), Some(150)),
        "nothing of the refused append"
    );
    // A writer ahead of the store (it lost its epoch) is refused as well.
    assert!(append(journal_b.as_mut(), e2 + 3, 150, 160).unwrap_err().is_fenced());
    // A rollback's next epoch appends on.
    let e3 = store_b.advance_epoch(e2).unwrap();
    append(journal_b.as_mut(), e3, 150, 170).unwrap();
    assert_eq!(records(journal_a.as_mut(), 120), (expected(120, 170), Some(170)));
}

/// A commit whose answer was lost is offered again from its first record: the append replaces this
/// epoch's tail from there.
pub fn an_unacknowledged_tail_is_replaced(open: OpenBoth, prefix: &str) {
    let p = format!("{prefix}-jr");
    let (mut store, mut journal) = open(&p);
    let e = store.bump_epoch().unwrap();
    append(journal.as_mut(), e, 0, 40).unwrap();
    append(journal.as_mut(), e, 40, 60).unwrap();
    let other: InputStream = (40..45).map(|_| FrameInput::buttons(0xff, 0xff)).collect();
    journal.append_batch(e, 40, 45, &encode_batch(40, &other)).unwrap();
    append(journal.as_mut(), e, 45, 50).unwrap();
    let mut want = expected(0, 40);
    want.append(&other);
    want.append(&expected(45, 50));
    assert_eq!(records(journal.as_mut(), 0), (want, Some(50)));
}

/// The store loses records the journal committed (its end moved back under the journal's epoch, as
/// when two conditional writes both succeed, or the store is restored from an older copy): the next
/// commit is the store's damage naming the lost records, which fences the pipeline, not a gap refused
/// again at every push.
pub fn records_the_store_lost_are_its_damage(open: OpenBoth, prefix: &str) {
    let p = format!("{prefix}-jl");
    let (mut store, journal_side) = open(&p);
    let e = store.bump_epoch().unwrap();
    let mut journal = SharedJournal::new(journal_side, HeldEpoch::new(e), 0);
    for seq in 0..8 {
        journal.append(seq, input(seq));
        if seq == 4 || seq == 7 {
            journal.commit().unwrap();
        }
    }
    // Behind the journal's back, under its own epoch: the end back at 5.
    let (_, mut other) = open(&p);
    assert_eq!(other.move_journal_end(e, 5).unwrap(), 8);
    journal.append(8, input(8));
    let error = journal.commit().unwrap_err();
    assert!(error.store_damaged(), "{error}");
    let message = error.to_string();
    assert!(message.contains("ends at 5, before the 8") && message.contains("records 5..8"), "{message}");
    // A gap that loses nothing the journal committed stays a gap: a journal that starts past the end.
    let (_, journal_side) = open(&p);
    let mut ahead = SharedJournal::new(journal_side, HeldEpoch::new(e), 5);
    ahead.append(6, input(6));
    let gap = ahead.commit().unwrap_err();
    assert!(!gap.store_damaged() && gap.to_string().contains("leave a gap"), "{gap}");
}

/// Retention removes batches wholly before a sequence number and keeps the one holding it; an
/// operator moves the end (fenced like an append) and the batches from it on go.
pub fn retention_and_the_end_moved(open: OpenBoth, prefix: &str) {
    let p = format!("{prefix}-jm");
    let (mut store, mut journal) = open(&p);
    let e = store.bump_epoch().unwrap();
    for k in 0..10 {
        append(journal.as_mut(), e, k * 10, k * 10 + 10).unwrap();
    }
    journal.release_journal_before(55).unwrap();
    let contents = read_shared(journal.as_mut(), 0).unwrap();
    assert_eq!(contents.start(), Some(50), "the batch holding 55 stays: {:?}", contents.places);
    assert_eq!(contents.records_from(55).unwrap(), expected(55, 100));
    let (mut stale, _) = open(&p);
    let e2 = stale.bump_epoch().unwrap();
    assert!(journal.move_journal_end(e, 70).unwrap_err().is_fenced());
    assert_eq!(journal.move_journal_end(e2, 70).unwrap(), 100);
    let contents = read_shared(journal.as_mut(), 50).unwrap();
    assert_eq!((contents.end(), contents.acknowledged_end), (70, Some(70)));
    append(journal.as_mut(), e2, 70, 75).unwrap();
    assert_eq!(records(journal.as_mut(), 50), (expected(50, 75), Some(75)));
    // Raised past the end (a takeover from a checkpoint beyond it): the journal continues there.
    assert_eq!(journal.move_journal_end(e2, 200).unwrap(), 75);
    append(journal.as_mut(), e2, 200, 210).unwrap();
    assert_eq!(records(journal.as_mut(), 200), (expected(200, 210), Some(210)));
}

/// A batch damaged in the store: the records it held are missing, named by where they should be;
/// never skipped over.
pub fn a_damaged_batch_is_missing_records_named(open: OpenBoth, damage: DamageBatch, prefix: &str) {
    let p = format!("{prefix}-jd");
    let (mut store, mut journal) = open(&p);
    let e = store.bump_epoch().unwrap();
    for (from, to) in [(0, 10), (10, 25), (25, 40)] {
        append(journal.as_mut(), e, from, to).unwrap();
    }
    damage(&p, 10);
    let contents = read_shared(journal.as_mut(), 0).unwrap();
    let e = contents.require_acknowledged_from(0).unwrap_err();
    let JournalError::Missing { missing, .. } = &e else { panic!("{e}") };
    assert_eq!((missing.len(), missing[0].from, missing[0].to), (1, 10, 25), "{e}");
    assert!(contents.records_from(0).is_err());
    assert_eq!(contents.window(25, 15).unwrap(), expected(25, 40), "the batches after it read");
}
