//! Issue 44: an acknowledgement is a promise kept across a takeover. Two coordinators (their own data
//! directories, one shared store: Redis, PostgreSQL or moto's S3, real servers started here) and a
//! producer that trusts acknowledgements: it pushes to A, B takes the pipeline over meanwhile, A's
//! next push is refused as fenced (never acknowledged), and the producer resends only from B's answer.
//! The final owner must have verified every acknowledged record exactly once and in order (its final
//! checkpoint's state hash is that of a console that ran exactly those records), and A's shutdown
//! must not claim a final checkpoint it could not store.

#[path = "../../anes-ops/tests/support/postgres_server.rs"]
mod postgres_server;
#[path = "../../anes-ops/tests/support/redis_server.rs"]
mod redis_server;
#[path = "../../anes-ops/tests/support/s3_server.rs"]
mod s3_server;
mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::TempDir;
use support::coordinator::{Coordinator, Endpoint, Ledger, pipeline_toml, reference_hash};

/// Records the producer pushes in all.
const RECORDS: u64 = 900;

fn temp(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("anes-takeover-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// The drill on `store` (a `[pipeline.store]` body); returns a line for the log.
fn takeover(dir: &Path, backend: &str, store: &str) -> String {
    let pipelines = pipeline_toml(store, 10, 10, "");
    let a = Coordinator::start(dir, "a", &pipelines, &dir.join("data-a"));
    // The producer runs on its own thread against whoever owns the pipeline, as it learns it.
    let owner: Arc<Mutex<Endpoint>> = Arc::new(Mutex::new(a.endpoint()));
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let (producer_owner, producer_ledger) = (Arc::clone(&owner), Arc::clone(&ledger));
    let producer = std::thread::spawn(move || {
        let mut next = 0u64;
        let mut batch = 1u64;
        let started = Instant::now();
        while next < RECORDS {
            assert!(started.elapsed() < Duration::from_secs(120), "the producer did not finish (at {next})");
            let target = producer_owner.lock().unwrap().clone();
            let n = (batch % 23 + 1).min(RECORDS - next);
            batch += 1;
            if !producer_ledger.lock().unwrap().push(&target, &mut next, n) {
                // Fenced (or no answer): wait for the new owner, then resend from what it answers.
                std::thread::sleep(Duration::from_millis(50));
                let acked = producer_ledger.lock().unwrap().acked;
                next = next.min(acked);
            }
            // About 300 records a second: the takeover lands in the middle of the stream.
            std::thread::sleep(Duration::from_millis(40));
        }
    });
    // B takes over while A is taking records.
    std::thread::sleep(Duration::from_millis(1200));
    let acked_before_b = ledger.lock().unwrap().acked;
    let b = Coordinator::start(dir, "b", &pipelines, &dir.join("data-b"));
    *owner.lock().unwrap() = b.endpoint();
    if producer.join().is_err() {
        let tail = |log: String| {
            log.lines().rev().take(40).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n")
        };
        panic!(
            "{backend}: the producer failed ({:?});\nA's log ends:\n{}\nB's log ends:\n{}",
            ledger.lock().map(|l| l.clone()).unwrap_or_default(),
            tail(a.log()),
            tail(b.log())
        );
    }
    let mut b = b;
    let ledger = ledger.lock().unwrap().clone();
    assert!(ledger.lost.is_empty(), "{backend}: acknowledged records lost: {:?}", ledger.lost);
    assert!(ledger.acked >= RECORDS, "{backend}: {ledger:?}");
    // A is fenced for good: a push now is refused, never acknowledged.
    let (code, answer) = a.endpoint().push(ledger.acked, 3).expect("A answers");
    assert_eq!((code, answer["refused"]["reason"].as_str()), (503, Some("fenced")), "{backend}: {answer}");
    assert_eq!(answer["accepted"], 0, "{answer}");
    let settled = b.wait_settled(Duration::from_secs(120));
    let received = settled["accounting"]["received"].as_u64().unwrap();
    assert_eq!(received, ledger.acked, "{backend}: B holds what was acknowledged, no more, no less");
    let (a_report, a_log) = a.stop();
    let (b_report, _) = b.stop();
    // B's final checkpoint is every acknowledged record, each once, in order.
    assert_eq!(b_report["final_checkpoint_seq"], received, "{b_report}");
    assert_eq!(b_report["final_checkpoint_verified"], true, "{b_report}");
    assert_eq!(b_report["final_checkpoint_stored"], true, "{b_report}");
    assert_eq!(
        b_report["final_state_hash"].as_str(),
        Some(reference_hash(received).as_str()),
        "{backend}: {b_report}"
    );
    // A stored nothing at shutdown and says so.
    assert_eq!(a_report["final_checkpoint_stored"], false, "{backend}: {a_report}");
    assert!(a_log.contains("not stored"), "{backend}: A's log:\n{a_log}");
    assert!(
        !a_log.contains("\"final verified checkpoint\""),
        "{backend}: A claims a final checkpoint:\n{a_log}"
    );
    format!(
        "{backend}: {RECORDS} records acknowledged ({acked_before_b} by A before B started), 0 missing from B's verified stream; \
         A's pushes refused as fenced {} times; A's final checkpoint not stored",
        ledger.fenced
    )
}

#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn a_takeover_on_redis_loses_no_acknowledged_record() {
    redis_server::require("takeover on redis");
    let server = redis_server::RedisServer::start("takeover");
    let dir = temp("redis");
    let line =
        takeover(&dir.0, "redis", &format!("backend = \"redis\"\nurl = \"{}\"\nkept = 64", server.url()));
    println!("{line}");
}

#[test]
#[ignore = "needs PostgreSQL (scripts/install-ops-servers.sh --postgres)"]
fn a_takeover_on_postgres_loses_no_acknowledged_record() {
    postgres_server::require("takeover on postgres");
    let server = postgres_server::PostgresServer::start("takeover");
    let dir = temp("postgres");
    let line = takeover(
        &dir.0,
        "postgres",
        &format!("backend = \"postgres\"\nurl = \"{}\"\nkept = 64", server.url()),
    );
    println!("{line}");
}

#[test]
#[ignore = "needs moto[server] (scripts/install-ops-servers.sh --moto)"]
fn a_takeover_on_s3_loses_no_acknowledged_record() {
    s3_server::require("takeover on s3");
    let server = s3_server::S3Server::start("takeover");
    server.create_bucket("anes-takeover");
    let dir = temp("s3");
    let store = format!(
        "backend = \"s3\"\nendpoint = \"{}\"\nbucket = \"anes-takeover\"\nprefix = \"t\"\nregion = \"us-east-1\"\nkept = 64",
        server.endpoint()
    );
    println!("{}", takeover(&dir.0, "s3", &store));
}
