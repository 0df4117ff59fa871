//! The checkpoint store suite every backend passes (filesystem, Redis, PostgreSQL, S3): round trip and
//! retention, damaged checkpoints reported and skipped (where the test can damage a stored blob), a
//! stale writer refused after a takeover without a byte of its payload read, and the fencing rule as a
//! model over random schedules of 2-4 writers (`anes_ops::store::model`). Each check uses its own
//! pipeline ids, so the checks of one backend can share one server.

#![allow(dead_code)]

use std::io::Read;
use std::sync::Mutex;

use anes_ops::store::model::{Op, run_schedule};
use anes_ops::store::{CheckpointHeader, CheckpointStore, Persisted, StoreError};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Opens a handle on a pipeline (`pipeline`, `kept`): a new connection each time.
pub type Open<'a> = &'a dyn Fn(&str, usize) -> Box<dyn CheckpointStore>;
/// Damages the stored checkpoint `name` of pipeline `pipeline` (flips its last byte).
pub type Damage<'a> = &'a dyn Fn(&str, &str);

fn payload(frame: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u64).wrapping_mul(31).wrapping_add(frame) as u8).collect()
}

fn put(
    store: &mut dyn CheckpointStore,
    pipeline: &str,
    epoch: u64,
    frame: u64,
) -> Result<Persisted, StoreError> {
    let bytes = payload(frame, 3000);
    let header =
        CheckpointHeader::for_payload(pipeline, epoch, frame, frame * 29_781, [frame as u8; 32], &bytes);
    store.put(&header, &mut bytes.as_slice())
}

fn frames(store: &mut dyn CheckpointStore) -> Vec<(u64, u64)> {
    store.load().unwrap().verified.iter().map(|c| (c.header.frame, c.header.epoch)).collect()
}

/// A reader that counts the bytes taken from it.
pub struct Counting<'a> {
    pub inner: &'a [u8],
    pub read: usize,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n;
        Ok(n)
    }
}

/// Writes, reads back, keeps the newest 3, isolates pipelines, refuses payloads that do not match.
pub fn round_trip_and_retention(open: Open, prefix: &str) {
    let p = format!("{prefix}-rt");
    let mut store = open(&p, 3);
    assert_eq!(store.current_epoch().unwrap(), 0, "a new pipeline starts at epoch 0");
    let e1 = store.bump_epoch().unwrap();
    assert_eq!(e1, 1);
    let e2 = open(&p, 3).bump_epoch().unwrap();
    assert_eq!(e2, 2, "a second takeover bumps again");
    assert_eq!(store.current_epoch().unwrap(), 2);
    // Kept 3: the oldest kept frame after each write of 60, 120, ..., 300.
    let oldest: Vec<u64> =
        (1..=5).map(|k| put(store.as_mut(), &p, e2, k * 60).unwrap().oldest_kept_frame).collect();
    assert_eq!(oldest, [60, 60, 60, 120, 180]);
    let mut other = open(&p, 3);
    let loaded = other.load().unwrap();
    assert!(loaded.damaged.is_empty(), "{:?}", loaded.damaged);
    assert_eq!(loaded.verified.iter().map(|c| c.header.frame).collect::<Vec<_>>(), [300, 240, 180]);
    for c in &loaded.verified {
        let f = c.header.frame;
        assert_eq!(c.payload, payload(f, 3000), "frame {f}'s payload");
        assert_eq!(
            (c.header.epoch, c.header.cpu_cycle, c.header.state_hash),
            (e2, f * 29_781, [f as u8; 32])
        );
        assert_eq!(c.header.pipeline_id, p);
    }
    // A rollback's next epoch; the same frame written again with it is the newer one.
    let e3 = other.advance_epoch(e2).unwrap();
    assert_eq!(e3, 3);
    put(other.as_mut(), &p, e3, 300).unwrap();
    assert_eq!(frames(store.as_mut())[0], (300, 3));
    // Another pipeline sees nothing of this one.
    let mut stranger = open(&format!("{prefix}-rt-other"), 3);
    assert_eq!(stranger.current_epoch().unwrap(), 0);
    assert!(stranger.load().unwrap().verified.is_empty());
    // A payload that does not match its header, or another pipeline's header: refused, nothing stored.
    let header = CheckpointHeader::for_payload(&p, e3, 360, 0, [0; 32], b"abcdef");
    assert!(matches!(store.put(&header, &mut &b"abcdeX"[..]), Err(StoreError::Invalid(_))));
    assert!(matches!(store.put(&header, &mut &b"abc"[..]), Err(StoreError::Invalid(_))));
    let foreign = CheckpointHeader::for_payload("someone-else", e3, 360, 0, [0; 32], b"abcdef");
    assert!(matches!(store.put(&foreign, &mut &b"abcdef"[..]), Err(StoreError::Invalid(_))));
    // A payload no store could load again (over MAX_PAYLOAD_LEN) is refused before a byte is read.
    let mut oversized = CheckpointHeader::for_payload(&p, e3, 360, 0, [0; 32], b"abcdef");
    oversized.payload_len = anes_ops::store::MAX_PAYLOAD_LEN + 1;
    let mut never_read = Counting { inner: &[0u8; 16], read: 0 };
    assert!(matches!(store.put(&oversized, &mut never_read), Err(StoreError::Invalid(_))));
    assert_eq!(never_read.read, 0, "the oversized payload was read");
    assert_eq!(frames(store.as_mut())[0], (300, 3), "no refused write landed");
}

/// Checkpoints above the one written (what recovery skipped as damaged or not of this ROM, then
/// resumed below) are neither counted by retention nor removed: the new ones stay, and the oldest kept
/// frame, where the journal may be released, is theirs.
pub fn checkpoints_above_the_written_one_are_not_counted(open: Open, prefix: &str) {
    let p = format!("{prefix}-above");
    let mut old = open(&p, 2);
    let e1 = old.bump_epoch().unwrap();
    for frame in [300, 360, 420] {
        put(old.as_mut(), &p, e1, frame).unwrap();
    }
    let mut new = open(&p, 2);
    let e2 = new.bump_epoch().unwrap();
    let oldest: Vec<u64> =
        [60, 120, 180].into_iter().map(|f| put(new.as_mut(), &p, e2, f).unwrap().oldest_kept_frame).collect();
    assert_eq!(oldest, [60, 60, 120], "the oldest kept frame counts only the new writer's checkpoints");
    assert_eq!(frames(new.as_mut()), [(420, e1), (360, e1), (180, e2), (120, e2)]);
}

/// A damaged checkpoint is reported in `damaged` and the next older one is used.
pub fn damaged_checkpoints_are_skipped(open: Open, damage: Damage, prefix: &str) {
    let p = format!("{prefix}-dmg");
    let mut store = open(&p, 8);
    let e = store.bump_epoch().unwrap();
    for frame in [60, 120, 180] {
        put(store.as_mut(), &p, e, frame).unwrap();
    }
    let newest = store.load().unwrap().verified[0].name.clone();
    damage(&p, &newest);
    let loaded = open(&p, 8).load().unwrap();
    assert_eq!(loaded.verified.iter().map(|c| c.header.frame).collect::<Vec<_>>(), [120, 60]);
    assert_eq!(loaded.damaged.len(), 1, "{:?}", loaded.damaged);
    assert_eq!(loaded.damaged[0].name, newest);
    assert!(loaded.damaged[0].reason.contains("checksum"), "{:?}", loaded.damaged);
}

/// After a takeover the old writer's put is refused as fenced (naming both epochs) before a byte of its
/// payload is read, and nothing of it is stored; a writer ahead of the store is refused the same way.
pub fn a_stale_writer_is_refused_without_reading_its_payload(open: Open, prefix: &str) {
    let p = format!("{prefix}-stale");
    let mut old = open(&p, 4);
    let mut new = open(&p, 4);
    let e1 = old.bump_epoch().unwrap();
    put(old.as_mut(), &p, e1, 60).unwrap();
    let e2 = new.bump_epoch().unwrap();
    let bytes = payload(120, 50_000);
    for (writer, wanted) in [(e1, "older"), (e2 + 5, "newer")] {
        let header = CheckpointHeader::for_payload(&p, writer, 120, 0, [0; 32], &bytes);
        let mut counting = Counting { inner: &bytes, read: 0 };
        let err = old.put(&header, &mut counting).unwrap_err();
        assert!(err.is_fenced(), "{err}");
        match err {
            StoreError::Fenced { writer: w, current, .. } => {
                assert_eq!((w, current, wanted), (e1, e2, "older"))
            }
            StoreError::EpochAhead { writer: w, current, .. } => {
                assert_eq!((w, current, wanted), (e2 + 5, e2, "newer"))
            }
            other => panic!("{other}"),
        }
        assert_eq!(counting.read, 0, "the refusal of epoch {writer} read payload bytes");
    }
    assert!(old.advance_epoch(e1).unwrap_err().is_fenced(), "a stale writer cannot take the pipeline back");
    assert_eq!(frames(new.as_mut()), [(60, e1)], "nothing of the refused writes is stored");
    let header = CheckpointHeader::for_payload(&p, e2, 120, 0, [0; 32], &bytes);
    let mut counting = Counting { inner: &bytes, read: 0 };
    new.put(&header, &mut counting).unwrap();
    assert_eq!(counting.read, bytes.len(), "the current writer's payload is read whole");
    assert_eq!(frames(old.as_mut()), [(120, e2), (60, e1)]);
}

/// Random schedules: 2-4 writers, 1-40 steps (takeovers, rollbacks, writes).
pub fn schedules() -> impl Strategy<Value = (usize, Vec<Op>)> {
    (2usize..=4).prop_flat_map(|writers| {
        let op = prop_oneof![
            1 => (0..writers).prop_map(Op::Bump),
            1 => (0..writers).prop_map(Op::Advance),
            3 => ((0..writers), 0u64..50).prop_map(|(w, f)| Op::Write(w, f * 60)),
        ];
        (Just(writers), proptest::collection::vec(op, 1..40))
    })
}

/// The fencing model over `cases` random schedules (`ANES_FENCING_CASES` overrides), each on a new
/// pipeline; prints and returns (schedules, writes accepted, stale writes and rollbacks refused).
pub fn fencing_model(open: Open, prefix: &str, backend: &str, cases: u32) -> (u32, u32, u32) {
    let cases = std::env::var("ANES_FENCING_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let totals = Mutex::new((0u32, 0u32, 0u32));
    runner
        .run(&schedules(), |(writers, ops)| {
            let mut t = totals.lock().unwrap();
            let pipeline = format!("{prefix}-m{}", t.0);
            let mut stores: Vec<Box<dyn CheckpointStore>> =
                (0..writers).map(|_| open(&pipeline, 1000)).collect();
            let (accepted, refused) = run_schedule(&pipeline, &mut stores, &ops);
            *t = (t.0 + 1, t.1 + accepted, t.2 + refused);
            Ok(())
        })
        .unwrap();
    let (schedules, accepted, refused) = *totals.lock().unwrap();
    println!(
        "{backend} fencing model: {schedules} schedules of 2-4 writers, {accepted} writes accepted, {refused} stale writes and rollbacks refused, 0 stale writes accepted"
    );
    (schedules, accepted, refused)
}
