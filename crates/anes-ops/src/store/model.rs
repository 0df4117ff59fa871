//! The fencing rule as a model, for tests of any backend: random schedules of several writers taking
//! over and writing, replayed against real stores and checked against the model (the highest epoch
//! issued so far). The shared store suite (`tests/support/store_suite.rs`) runs it on every backend,
//! the filesystem and real servers.

use super::{CheckpointHeader, CheckpointStore, StoreError};

/// One step of a schedule: writer `w` takes over, moves to its next epoch (a rollback), or writes the
/// checkpoint of `frame`.
#[derive(Debug, Clone)]
pub enum Op {
    /// Takeover by writer `0` (a service's start).
    Bump(usize),
    /// Writer `0` asks for its next epoch (a rollback): granted only while it holds the current one.
    Advance(usize),
    /// Writer `0` writes.
    Write(usize, u64),
}

/// Runs a schedule against stores (one handle per writer, all on `pipeline`) and the model;
/// returns (writes accepted, writes refused). Panics on a stale write accepted, a current one refused,
/// a stale writer's rollback that took the pipeline back (or a current one's refused), or a load that
/// disagrees with the model.
pub fn run_schedule(pipeline: &str, stores: &mut [Box<dyn CheckpointStore>], ops: &[Op]) -> (u32, u32) {
    let writers = stores.len();
    let mut held = vec![0u64; writers];
    let mut highest_issued = stores[0].current_epoch().unwrap();
    let mut newest_accepted: Option<(u64, u64)> = None;
    let (mut accepted, mut refused) = (0, 0);
    for op in ops {
        match *op {
            Op::Bump(w) => {
                let e = stores[w % writers].bump_epoch().unwrap();
                assert!(e > highest_issued, "epochs are monotonic: {e} after {highest_issued}");
                highest_issued = e;
                held[w % writers] = e;
            }
            Op::Advance(w) => {
                let w = w % writers;
                match stores[w].advance_epoch(held[w]) {
                    Ok(e) => {
                        assert_eq!(
                            held[w], highest_issued,
                            "a stale writer (epoch {}) moved the epoch to {e} past {highest_issued}",
                            held[w]
                        );
                        assert_eq!(e, highest_issued + 1);
                        highest_issued = e;
                        held[w] = e;
                    }
                    Err(e) => {
                        assert!(e.is_fenced(), "unexpected error {e}");
                        assert_ne!(held[w], highest_issued, "the current writer's rollback was refused: {e}");
                        refused += 1;
                    }
                }
            }
            Op::Write(w, frame) => {
                let w = w % writers;
                let payload = frame.to_le_bytes().repeat(16);
                let header = CheckpointHeader::for_payload(pipeline, held[w], frame, 0, [0; 32], &payload);
                match stores[w].put(&header, &mut payload.as_slice()) {
                    Ok(_) => {
                        assert_eq!(
                            held[w], highest_issued,
                            "a stale write (epoch {} < {highest_issued}) was accepted",
                            held[w]
                        );
                        accepted += 1;
                        let key = (frame, held[w]);
                        newest_accepted = Some(newest_accepted.map_or(key, |n: (u64, u64)| n.max(key)));
                    }
                    Err(e) => {
                        assert!(e.is_fenced(), "unexpected error {e}");
                        assert_ne!(held[w], highest_issued, "a current write was refused: {e}");
                        if let StoreError::Fenced { writer, current, .. } = e {
                            assert_eq!((writer, current), (held[w], highest_issued));
                        }
                        refused += 1;
                    }
                }
            }
        }
    }
    let loaded = stores[0].load().unwrap();
    assert!(loaded.damaged.is_empty());
    assert_eq!(
        loaded.verified.first().map(|c| (c.header.frame, c.header.epoch)),
        newest_accepted,
        "the newest accepted write is what loads"
    );
    (accepted, refused)
}
