//! The Redis checkpoint store against a real redis-server (started by the test, stopped by PID): the
//! shared store suite (`support/store_suite.rs`: round trip, retention, damaged blobs, a stale writer
//! refused, the fencing model over 2,000 random schedules), the live state key, the server's
//! persistence told apart, a fenced write that stores nothing, a split-brain drill
//! (an old primary keeps writing after a takeover), and the thundering herd: 50 writers lose the server
//! at once, it comes back 3 s later, all reconnect, none gives up; the spread of their first retries is
//! printed as a histogram, with full jitter and without.
//!
//! Run: `cargo test -p anes-ops --test redis_store -- --nocapture`.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_ops::metrics::StoreMetrics;
use anes_ops::store::writer::{CheckpointWriter, PendingCheckpoint, RetryPolicy, WriterEvent};
use anes_ops::store::{
    CheckpointHeader, CheckpointStore, JournalStore, RedisPersistence, RedisStore, StoreError,
};
use support::redis_server::{RedisServer, require};
use support::{journal_suite, store_suite};

fn checkpoint(frame: u64) -> PendingCheckpoint {
    PendingCheckpoint {
        frame,
        cpu_cycle: frame * 29_781,
        state_hash: [frame as u8; 32],
        snapshot: Arc::new(vec![frame as u8; 8192]),
    }
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn the_live_state_key_holds_the_newest() {
    require("the_live_state_key_holds_the_newest");
    let server = RedisServer::start("state");
    let mut store = RedisStore::new(&server.url(), "p1", 3).unwrap();
    let epoch = store.bump_epoch().unwrap();
    for frame in [300, 60, 240] {
        let payload = vec![frame as u8; 5000];
        let header = CheckpointHeader::for_payload("p1", epoch, frame, 7, [1; 32], &payload);
        store.put(&header, &mut payload.as_slice()).unwrap();
    }
    let mut c = server.connection();
    let state: Vec<u8> = redis::cmd("GET").arg(store.state_key()).query(&mut c).unwrap();
    let (header, payload) = CheckpointHeader::decode_blob(&state).unwrap();
    assert_eq!(
        (header.frame, payload.len()),
        (300, 5000),
        "pipeline:p1:state holds the newest, not the last written"
    );
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn a_server_that_would_forget_the_epoch_is_told_apart() {
    require("a_server_that_would_forget_the_epoch_is_told_apart");
    let server = RedisServer::start("persistence");
    let mut store = RedisStore::new(&server.url(), "p1", 4).unwrap();
    assert_eq!(store.persistence(), None, "read on the first connection");
    store.current_epoch().unwrap();
    assert_eq!(store.persistence(), Some(&RedisPersistence::AppendOnly { appendfsync: "everysec".into() }));
    assert!(store.persistence().unwrap().keeps_the_epoch());

    let mut admin = server.connection();
    let set = |admin: &mut redis::Connection, name: &str, value: &str| {
        redis::cmd("CONFIG").arg("SET").arg(name).arg(value).query::<()>(admin).unwrap();
    };
    set(&mut admin, "appendonly", "no");
    set(&mut admin, "save", "900 1");
    store.reconnect().unwrap();
    assert_eq!(store.persistence(), Some(&RedisPersistence::SnapshotsOnly { save: "900 1".into() }));
    assert!(!store.persistence().unwrap().keeps_the_epoch());

    set(&mut admin, "save", "");
    store.reconnect().unwrap();
    assert_eq!(store.persistence(), Some(&RedisPersistence::None));
    assert_eq!(store.persistence().unwrap().to_string(), "none (appendonly no, save \"\")");
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn a_fenced_write_stores_nothing() {
    require("fenced_write");
    let server = RedisServer::start("fenced");
    let mut old = RedisStore::new(&server.url(), "p", 4).unwrap();
    let mut new = RedisStore::new(&server.url(), "p", 4).unwrap();
    let e1 = old.bump_epoch().unwrap();
    let e2 = new.bump_epoch().unwrap();
    let payload = vec![3u8; 100_000];
    let header = CheckpointHeader::for_payload("p", e1, 60, 0, [0; 32], &payload);
    let err = old.put(&header, &mut payload.as_slice()).unwrap_err();
    assert!(
        matches!(err, StoreError::Fenced { writer, current, .. } if writer == e1 && current == e2),
        "{err}"
    );
    let mut c = server.connection();
    let blobs: u64 = redis::cmd("HLEN").arg(new.key("blobs")).query(&mut c).unwrap();
    let state: Option<Vec<u8>> = redis::cmd("GET").arg(new.state_key()).query(&mut c).unwrap();
    assert_eq!((blobs, state), (0, None), "the script refused before storing the payload");
}

fn open(server: &RedisServer) -> impl Fn(&str, usize) -> Box<dyn CheckpointStore> + '_ {
    |pipeline, kept| Box::new(RedisStore::new(&server.url(), pipeline, kept).unwrap())
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn suite_round_trip_and_retention() {
    require("suite_round_trip_and_retention");
    let server = RedisServer::start("suite-rt");
    store_suite::round_trip_and_retention(&open(&server), "redis");
    store_suite::checkpoints_above_the_written_one_are_not_counted(&open(&server), "redis");
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn suite_damaged_checkpoints_are_skipped() {
    require("suite_damaged_checkpoints_are_skipped");
    let server = RedisServer::start("suite-dmg");
    let damage = |pipeline: &str, member: &str| {
        let mut c = server.connection();
        let blobs = format!("pipeline:{pipeline}:blobs");
        let mut blob: Vec<u8> = redis::cmd("HGET").arg(&blobs).arg(member).query(&mut c).unwrap();
        let last = blob.len() - 1;
        blob[last] ^= 1;
        let _: () = redis::cmd("HSET").arg(&blobs).arg(member).arg(blob).query(&mut c).unwrap();
    };
    store_suite::damaged_checkpoints_are_skipped(&open(&server), &damage, "redis");
    // A blob longer than any writer of ours stores is reported by its length, never fetched.
    let (pipeline, member) = ("redis-huge", format!("{:020}-{:020}", 60, 1));
    let mut c = server.connection();
    let index = format!("pipeline:{pipeline}:checkpoints");
    let _: () = redis::cmd("ZADD").arg(&index).arg(60).arg(&member).query(&mut c).unwrap();
    let huge = vec![0u8; anes_ops::store::MAX_PAYLOAD_LEN as usize + 205];
    let blobs = format!("pipeline:{pipeline}:blobs");
    let _: () = redis::cmd("HSET").arg(&blobs).arg(&member).arg(huge).query(&mut c).unwrap();
    let loaded = open(&server)(pipeline, 4).load().unwrap();
    assert!(loaded.verified.is_empty());
    assert_eq!(loaded.damaged.len(), 1, "{:?}", loaded.damaged);
    assert!(loaded.damaged[0].reason.contains("-byte limit"), "{:?}", loaded.damaged[0]);
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn suite_a_stale_writer_is_refused_without_reading_its_payload() {
    require("suite_a_stale_writer_is_refused_without_reading_its_payload");
    let server = RedisServer::start("suite-stale");
    store_suite::a_stale_writer_is_refused_without_reading_its_payload(&open(&server), "redis");
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn suite_fencing_model() {
    require("suite_fencing_model");
    let server = RedisServer::start("model");
    store_suite::fencing_model(&open(&server), "redis", "redis", 2000);
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn split_brain_drill_the_old_primary_is_fenced_and_stops() {
    require("split_brain");
    let server = RedisServer::start("splitbrain");
    let events = Arc::new(Mutex::new(Vec::new()));
    let start = |name: &'static str| {
        let mut store = RedisStore::new(&server.url(), "p", 8).unwrap();
        let epoch = store.bump_epoch().unwrap();
        let seen = Arc::clone(&events);
        let writer = CheckpointWriter::start(
            "p",
            Box::new(store),
            anes_ops::store::HeldEpoch::new(epoch),
            RetryPolicy::default(),
            StoreMetrics::detached(),
            Box::new(move |e| seen.lock().unwrap().push((name, e))),
        );
        (writer, epoch)
    };
    let (old, e_old) = start("old");
    old.submit(checkpoint(60));
    std::thread::sleep(Duration::from_millis(300));
    let (new, e_new) = start("new");
    // The old primary does not know: it keeps writing.
    for k in 2..10 {
        old.submit(checkpoint(k * 60));
        new.submit(checkpoint(k * 60 + 1));
        std::thread::sleep(Duration::from_millis(30));
    }
    assert!(old.finish(Duration::from_secs(10)) && new.finish(Duration::from_secs(10)));
    let events = events.lock().unwrap();
    let old_writes: Vec<u64> = events
        .iter()
        .filter_map(|(n, e)| match e {
            WriterEvent::Persisted(p) if *n == "old" => Some(p.frame),
            _ => None,
        })
        .collect();
    let fenced = events.iter().filter(|(n, e)| *n == "old" && matches!(e, WriterEvent::Fenced { writer, current, .. } if *writer == e_old && *current == e_new)).count();
    assert_eq!(old_writes, [60], "the old primary wrote before the takeover only");
    assert_eq!(fenced, 1, "the old primary learned it is fenced once, and stopped: {events:?}");
    let mut store = RedisStore::new(&server.url(), "p", 8).unwrap();
    let loaded = store.load().unwrap();
    assert!(
        loaded.verified.iter().all(|c| c.header.epoch == e_new || c.header.frame == 60),
        "no stale write landed"
    );
    assert_eq!(loaded.verified[0].header.epoch, e_new);
    println!(
        "split brain: the old primary (epoch {e_old}) was fenced at its first write after the takeover (epoch {e_new}) and wrote nothing more; {} checkpoints of the new primary stored",
        loaded.verified.len() - 1
    );
}

/// 50 writers; the server is killed and started again 3 s later. Returns the first retries' offsets
/// from the kill, sorted, and the give-ups.
fn herd(jitter: bool) -> (Vec<Duration>, u64) {
    let mut server = RedisServer::start(if jitter { "herd" } else { "herd-nojitter" });
    const WRITERS: usize = 50;
    let first_retry: Arc<Mutex<Vec<Option<Instant>>>> = Arc::new(Mutex::new(vec![None; WRITERS]));
    let persisted_after: Arc<Mutex<Vec<u64>>> = Arc::new(Mutex::new(vec![0; WRITERS]));
    let metrics: Vec<StoreMetrics> = (0..WRITERS).map(|_| StoreMetrics::detached()).collect();
    let writers: Vec<CheckpointWriter> = (0..WRITERS)
        .map(|i| {
            let id = format!("herd-{i}");
            let mut store = RedisStore::new(&server.url(), &id, 2).unwrap();
            let epoch = store.bump_epoch().unwrap();
            let (first, persisted) = (Arc::clone(&first_retry), Arc::clone(&persisted_after));
            CheckpointWriter::start(
                &id,
                Box::new(store),
                anes_ops::store::HeldEpoch::new(epoch),
                RetryPolicy { seed: 1000 + i as u64, jitter, ..RetryPolicy::default() },
                metrics[i].clone(),
                Box::new(move |e| match e {
                    WriterEvent::Reconnecting { attempt: 0 } => {
                        first.lock().unwrap()[i].get_or_insert(Instant::now());
                    }
                    WriterEvent::Persisted(p) => persisted.lock().unwrap()[i] = p.frame,
                    _ => {}
                }),
            )
        })
        .collect();
    let mut frame = 1;
    let write_all = |frame: &mut u64| {
        for w in &writers {
            w.submit(checkpoint(*frame));
        }
        *frame += 1;
    };
    for _ in 0..5 {
        write_all(&mut frame);
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let killed = Instant::now();
    while killed.elapsed() < Duration::from_secs(3) {
        write_all(&mut frame);
        std::thread::sleep(Duration::from_millis(20));
    }
    server.restart();
    let back_at = frame;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        write_all(&mut frame);
        std::thread::sleep(Duration::from_millis(50));
        let all = persisted_after.lock().unwrap().iter().all(|&f| f >= back_at);
        if all {
            break;
        }
        assert!(Instant::now() < deadline, "not every writer reconnected within 120 s");
    }
    for w in writers {
        w.finish(Duration::from_secs(10));
    }
    let mut offsets: Vec<Duration> = first_retry
        .lock()
        .unwrap()
        .iter()
        .map(|t| t.expect("every writer retried").saturating_duration_since(killed))
        .collect();
    offsets.sort();
    let give_ups = metrics.iter().map(|m| m.give_ups.get()).sum();
    (offsets, give_ups)
}

fn report(label: &str, offsets: &[Duration]) -> usize {
    let max_window = offsets
        .iter()
        .enumerate()
        .map(|(i, start)| {
            offsets[i..].iter().take_while(|t| **t < *start + Duration::from_millis(100)).count()
        })
        .max()
        .unwrap_or(0);
    println!(
        "{label}: first retries of {} writers after the server was killed (100 ms buckets):",
        offsets.len()
    );
    let last = offsets.last().map_or(0, |d| d.as_millis() / 100) as usize;
    for bucket in 0..=last {
        let n = offsets.iter().filter(|d| (d.as_millis() / 100) as usize == bucket).count();
        println!("  {:>5}-{:<5} ms {:>3} {}", bucket * 100, bucket * 100 + 100, n, "#".repeat(n));
    }
    println!("  busiest 100 ms window: {max_window} of {}", offsets.len());
    max_window
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn thundering_herd_all_reconnect_none_gives_up_and_jitter_spreads_the_first_retries() {
    require("thundering_herd");
    let (jittered, give_ups) = herd(true);
    let busiest = report("full jitter", &jittered);
    assert_eq!(give_ups, 0, "a writer gave up");
    assert!(
        busiest <= jittered.len() / 5,
        "a 100 ms window held {busiest} of {} first retries",
        jittered.len()
    );
    let (plain, give_ups) = herd(false);
    let herd_window = report("no jitter", &plain);
    assert_eq!(give_ups, 0);
    assert!(
        herd_window > plain.len() / 2,
        "without jitter the first retries bunch up: the herd ({herd_window})"
    );
}

fn open_both(
    server: &RedisServer,
) -> impl Fn(&str) -> (Box<dyn CheckpointStore>, Box<dyn JournalStore>) + '_ {
    |pipeline| {
        (
            Box::new(RedisStore::new(&server.url(), pipeline, 4).unwrap()),
            Box::new(RedisStore::new(&server.url(), pipeline, 4).unwrap()),
        )
    }
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn journal_suite_in_redis() {
    require("journal_suite_in_redis");
    let server = RedisServer::start("journal");
    let open = open_both(&server);
    journal_suite::appends_read_back_and_a_takeover_fences_the_old_owner(&open, "redis");
    journal_suite::an_unacknowledged_tail_is_replaced(&open, "redis");
    journal_suite::retention_and_the_end_moved(&open, "redis");
    journal_suite::records_the_store_lost_are_its_damage(&open, "redis");
    let damage = |pipeline: &str, first: u64| {
        let mut c = server.connection();
        let key = format!("pipeline:{pipeline}:journal");
        let members: Vec<Vec<u8>> =
            redis::cmd("ZRANGEBYSCORE").arg(&key).arg(first).arg(first).query(&mut c).unwrap();
        let mut batch = members[0].clone();
        let last = batch.len() - 1;
        batch[last] ^= 1;
        let _: () = redis::cmd("ZREM").arg(&key).arg(&members[0]).query(&mut c).unwrap();
        let _: () = redis::cmd("ZADD").arg(&key).arg(first).arg(batch).query(&mut c).unwrap();
    };
    journal_suite::a_damaged_batch_is_missing_records_named(&open, &damage, "redis");
}

/// Issue 44: an epoch key set to something that is not a number fenced nothing: every write failed as
/// "store unavailable" while the pipeline stayed ready. It is damage: refused as such by every
/// operation, a takeover included.
#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn an_epoch_that_is_not_a_number_is_damage_not_unavailability() {
    require("an_epoch_that_is_not_a_number_is_damage_not_unavailability");
    let server = RedisServer::start("garbage-epoch");
    let mut store = RedisStore::new(&server.url(), "g", 4).unwrap();
    let epoch = store.bump_epoch().unwrap();
    let mut journal = RedisStore::new(&server.url(), "g", 4).unwrap();
    journal_suite::append(&mut journal, epoch, 0, 10).unwrap();
    let mut c = server.connection();
    let _: () = redis::cmd("SET").arg("pipeline:g:epoch").arg("abc").query(&mut c).unwrap();
    let payload = vec![1u8; 100];
    let header = CheckpointHeader::for_payload("g", epoch, 60, 7, [1; 32], &payload);
    let errors = [
        store.put(&header, &mut payload.as_slice()).unwrap_err(),
        store.current_epoch().unwrap_err(),
        store.advance_epoch(epoch).unwrap_err(),
        store.bump_epoch().unwrap_err(),
        journal_suite::append(&mut journal, epoch, 10, 20).unwrap_err(),
    ];
    for e in errors {
        assert!(matches!(e, StoreError::Damaged(_)), "{e}");
        assert!(!e.is_retryable(), "{e}");
        assert!(e.to_string().contains("pipeline:g:epoch"), "{e}");
    }
    let _: () = redis::cmd("SET").arg("pipeline:g:epoch").arg(i64::MAX).query(&mut c).unwrap();
    let e = store.bump_epoch().unwrap_err();
    assert!(matches!(e, StoreError::Damaged(_)), "an epoch at its maximum cannot wrap: {e}");
}
