//! `anes serve` in the failures an operator's drill found (issue 30), end to end:
//! 1. a replay pipeline restarted on its data directory verifies frames again within 2 s of its
//!    readiness (it stalled for as long as the previous run had lasted);
//! 2. a pipeline whose `redis-server` restarted empty (no persistence) is fenced: it stops taking
//!    records, uses under 1% of a core, and says `fenced` in its mode, `/readyz`, metrics and page
//!    (it spun at 62% of a core re-offering refused records, mode "normal", ready);
//! 3. two processes that lost their store retry it at different instants (one constant seed made
//!    every process retry at the same ones).
//!
//! Every process started here listens on 127.0.0.1 and is stopped by PID on every exit path.
//! Without `redis-server` (and no way to install it) the second test prints that it skipped; under
//! `CI` it fails instead.

#[path = "../../anes-ops/tests/support/redis_server.rs"]
mod redis_server;
mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use serde_json::Value;
use support::remote::{Serve, free_port, temp_dir};

/// The JSON log lines of a run whose message contains `message`.
fn log_lines(log: &str, message: &str) -> Vec<Value> {
    log.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| {
            v["fields"]["message"].as_str().or(v["message"].as_str()).is_some_and(|m| m.contains(message))
        })
        .collect()
}

/// A log line's field, wherever the JSON layer put it.
fn field<'a>(line: &'a Value, name: &str) -> &'a Value {
    if line["fields"][name].is_null() { &line[name] } else { &line["fields"][name] }
}

/// Issue 30, item 1: `anes serve --data-dir d`, 20 s, SIGTERM, start again: frames verified stayed flat
/// for ~18 s while mode, flag and drift looked normal.
#[test]
fn a_restarted_replay_verifies_frames_again_within_2_s_of_readiness() {
    let dir = temp_dir("reliability-restart");
    let data = dir.0.join("data");
    // The default pipeline: the bundled demo replayed in a loop at real time, a filesystem store.
    let pipeline = "[[pipeline]]\nid = \"p\"\n";
    let mut first = Serve::start(&dir.0, "first", pipeline, &data);
    first.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz"));
    // 8 s of play: a restart that counted the previous run's records against a clock restarted at 0
    // would wait about as long.
    first.wait_for("8 s of frames verified", Duration::from_secs(30), |s| {
        s.status().filter(|st| st["frames_verified"].as_u64() >= Some(480))
    });
    let log = first.stop_and_log();
    let stopped = log_lines(&log, "pipeline stopped");
    let received = stopped.first().and_then(|l| field(l, "received").as_u64()).expect("the run's accounting");
    assert!(received >= 480, "{received}");

    let mut second = Serve::start(&dir.0, "second", pipeline, &data);
    second.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz"));
    let ready = Instant::now();
    // A frame beyond what the first run received is a new record from the replay, verified.
    let st = second.wait_for("a new frame verified", Duration::from_secs(30), |s| {
        s.status().filter(|st| st["frames_verified"].as_u64() > Some(received))
    });
    let took = ready.elapsed();
    println!(
        "restart after {received} records: a new frame verified {:.3} s after /readyz answered 200 (frames verified {})",
        took.as_secs_f64(),
        st["frames_verified"]
    );
    assert!(took < Duration::from_secs(2), "{took:?}:\n{}", second.log());
    assert_eq!(st["store"]["recovered_from_seq"], received, "the drain's final checkpoint was the start");
    // The first frames after a restart may still be verified in recovery mode (the journal's records
    // re-run from the checkpoint); normal follows.
    second
        .wait_for("normal mode", Duration::from_secs(10), |s| s.status().filter(|st| st["mode"] == "normal"));
    second.stop_and_log();
}

/// utime + stime of a process, in clock ticks (`/proc/PID/stat` fields 14 and 15).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The command name (field 2) may hold spaces; the fields after it follow its closing parenthesis.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn clock_ticks_per_second() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Issue 30, item 3: restart redis-server without persistence while the service runs.
#[test]
#[ignore = "needs redis-server (scripts/install-ops-servers.sh --redis)"]
fn a_pipeline_whose_store_restarted_empty_is_fenced_idle_and_says_so() {
    redis_server::require("serve_reliability");
    let mut server = RedisServer::start("fenced");
    let dir = temp_dir("reliability-fenced");
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\ncheckpoint_every = 60\npersist_every = 60\n\
         [pipeline.store]\nbackend = \"redis\"\nurl = \"{}\"\nretry_base_seconds = 0.2\n",
        server.url()
    );
    let mut serve = Serve::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    serve.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz"));
    serve.wait_for("a checkpoint stored", Duration::from_secs(30), |s| {
        s.status().filter(|st| st["store"]["persisted_seq"].as_u64() >= Some(60))
    });
    // The server comes back empty: what it had is gone, its epoch key included.
    server.kill();
    for entry in std::fs::read_dir(&server.dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            std::fs::remove_file(&path).unwrap();
        }
    }
    server.restart();
    let st = serve.wait_for("the fenced mode", Duration::from_secs(30), |s| {
        s.status().filter(|st| st["mode"] == "fenced")
    });
    assert_eq!(st["fence"]["cause"], "store_lost", "{st}");
    assert_eq!(st["store"]["lost_at_epoch"], 0, "{st}");
    assert!(st["store"]["fenced_by_epoch"].is_null(), "not a takeover: {st}");
    let (code, body) = serve.get_any("/readyz").unwrap();
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("p: fenced: the store lost the pipeline's data"), "{body}");
    assert_eq!(serve.metric("anes_pipeline_mode{pipeline_id=\"p\",mode=\"fenced\"}", &[]), Some(1.0));
    assert_eq!(serve.metric("anes_pipeline_mode{pipeline_id=\"p\",mode=\"normal\"}", &[]), Some(0.0));
    let page = serve.get("/").unwrap();
    assert!(page.contains("<span class=\"mode fenced\">fenced</span>"), "{page}");
    assert!(page.contains("the store lost the pipeline&#39;s data"), "{page}");
    assert!(!log_lines(&serve.log(), "the checkpoint store lost this pipeline's data").is_empty());

    // Idle: it offers nothing, refuses nothing, and costs next to no CPU.
    let refused =
        |s: &Serve| s.metric("anes_records_refused_total{pipeline_id=\"p\",reason=\"store_lost\"}", &[]);
    let refused_before = refused(&serve);
    let received_before = serve.status().unwrap()["accounting"]["received"].clone();
    let ticks = cpu_ticks(serve.pid());
    let measured = Instant::now();
    std::thread::sleep(Duration::from_secs(10));
    let used = (cpu_ticks(serve.pid()) - ticks) as f64 / clock_ticks_per_second() as f64;
    let share = used / measured.elapsed().as_secs_f64();
    println!("fenced pipeline: {used:.2} s of CPU in 10 s ({:.2}% of a core)", share * 100.0);
    assert!(share < 0.01, "{:.2}% of a core", share * 100.0);
    assert_eq!(refused(&serve), refused_before, "nothing offered, nothing refused");
    assert_eq!(serve.status().unwrap()["accounting"]["received"], received_before);
    serve.stop_and_log();
}

/// Issue 30, item 2: two services that lose their store together retry at different instants.
#[test]
fn two_processes_retry_a_lost_store_at_different_instants() {
    let dir = temp_dir("reliability-jitter");
    // Nothing listens there: taking the store over fails, and is retried with backoff.
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:{}/0\"\n\
         retry_base_seconds = 0.05\nretry_cap_seconds = 1\nretry_attempts = 4\n",
        free_port()
    );
    let services: Vec<Serve> =
        ["one", "two"].iter().map(|name| Serve::spawn(&dir.0, name, &pipeline, &dir.0.join(name))).collect();
    let schedules: Vec<Vec<f64>> = services
        .into_iter()
        .map(|mut s| {
            let start = Instant::now();
            let exit = loop {
                if let Ok(Some(exit)) = s.child.0.try_wait() {
                    break exit;
                }
                assert!(start.elapsed() < Duration::from_secs(30), "still retrying:\n{}", s.log());
                std::thread::sleep(Duration::from_millis(20));
            };
            assert_eq!(exit.code(), Some(2), "it cannot start without its store:\n{}", s.log());
            log_lines(&s.log(), "the store is unavailable; retrying")
                .iter()
                .map(|l| field(l, "delay_seconds").as_f64().expect("delay_seconds"))
                .collect()
        })
        .collect();
    println!("retry delays of two processes (s): {schedules:?}");
    assert_eq!(schedules[0].len(), 3, "{schedules:?}");
    assert_eq!(schedules[1].len(), 3, "{schedules:?}");
    assert_ne!(schedules[0], schedules[1], "the same instants");
}
