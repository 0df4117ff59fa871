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

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redis_server::RedisServer;
use serde_json::Value;
use support::{Guard, TempDir, agent};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!(
        "anes-reliability-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

/// One `anes serve` with JSON logs in `<dir>/<name>.log`.
struct Serve {
    child: Guard,
    port: u16,
    log: PathBuf,
    agent: ureq::Agent,
}

impl Serve {
    /// Starts `anes serve` with `[server]` listening on a free port, then `pipelines` (TOML).
    fn start(dir: &Path, name: &str, pipelines: &str, data_dir: &Path) -> Serve {
        let port = free_port();
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, format!("[server]\nlisten = \"127.0.0.1:{port}\"\n\n{pipelines}")).unwrap();
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["serve", "--log-format", "json", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(data_dir)
            .env_remove("ANES_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .unwrap();
        Serve { child: Guard(child), port, log, agent: agent() }
    }

    fn pid(&self) -> u32 {
        self.child.0.id()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut r = self.agent.get(&format!("http://127.0.0.1:{}{path}", self.port)).call().ok()?;
        Some((r.status().as_u16(), r.body_mut().read_to_string().ok()?))
    }

    fn status(&self) -> Option<Value> {
        let (code, body) = self.get("/v1/pipelines/p")?;
        (code == 200).then(|| serde_json::from_str(&body).ok())?
    }

    /// Polls `probe` every 10 ms until it gives a value; panics with the log after `limit`.
    fn wait_for<T>(&mut self, what: &str, limit: Duration, mut probe: impl FnMut(&Serve) -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = probe(self) {
                return v;
            }
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                panic!("anes serve exited ({exit}) waiting for {what}:\n{}", self.log());
            }
            assert!(start.elapsed() < limit, "no {what} within {limit:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM, then waits (at most 30 s) for a clean exit.
    fn stop(mut self) -> String {
        Command::new("kill").args(["-TERM", &self.pid().to_string()]).status().unwrap();
        let start = Instant::now();
        loop {
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                assert!(exit.success(), "SIGTERM: {exit}\n{}", self.log());
                return self.log();
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no exit after SIGTERM:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The value of the series whose line starts with `series` on `/metrics`.
    fn metric(&self, series: &str) -> Option<f64> {
        let (_, text) = self.get("/metrics")?;
        text.lines().find(|l| l.starts_with(series))?.rsplit(' ').next()?.parse().ok()
    }
}

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
    let dir = temp_dir("restart");
    let data = dir.0.join("data");
    // The default pipeline: the bundled demo replayed in a loop at real time, a filesystem store.
    let pipeline = "[[pipeline]]\nid = \"p\"\n";
    let mut first = Serve::start(&dir.0, "first", pipeline, &data);
    first.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz").filter(|r| r.0 == 200));
    // 8 s of play: a restart that counted the previous run's records against a clock restarted at 0
    // would wait about as long.
    first.wait_for("8 s of frames verified", Duration::from_secs(30), |s| {
        s.status().filter(|st| st["frames_verified"].as_u64() >= Some(480))
    });
    let log = first.stop();
    let stopped = log_lines(&log, "pipeline stopped");
    let received = stopped.first().and_then(|l| field(l, "received").as_u64()).expect("the run's accounting");
    assert!(received >= 480, "{received}");

    let mut second = Serve::start(&dir.0, "second", pipeline, &data);
    second.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz").filter(|r| r.0 == 200));
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
    assert_eq!(st["mode"], "normal");
    second.stop();
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
fn a_pipeline_whose_store_restarted_empty_is_fenced_idle_and_says_so() {
    if !redis_server::available("serve_reliability") {
        return;
    }
    let mut server = RedisServer::start("fenced");
    let dir = temp_dir("fenced");
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\ncheckpoint_every = 60\npersist_every = 60\n\
         [pipeline.store]\nbackend = \"redis\"\nurl = \"{}\"\nretry_base_seconds = 0.2\n",
        server.url()
    );
    let mut serve = Serve::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    serve.wait_for("readiness", Duration::from_secs(30), |s| s.get("/readyz").filter(|r| r.0 == 200));
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
    let (code, body) = serve.get("/readyz").unwrap();
    assert_eq!(code, 503, "{body}");
    assert!(body.contains("p: fenced: the store lost the pipeline's data"), "{body}");
    assert_eq!(serve.metric("anes_pipeline_mode{pipeline_id=\"p\",mode=\"fenced\"}"), Some(1.0));
    assert_eq!(serve.metric("anes_pipeline_mode{pipeline_id=\"p\",mode=\"normal\"}"), Some(0.0));
    let (_, page) = serve.get("/").unwrap();
    assert!(page.contains("<span class=\"mode fenced\">fenced</span>"), "{page}");
    assert!(page.contains("the store lost the pipeline&#39;s data"), "{page}");
    assert!(!log_lines(&serve.log(), "the checkpoint store lost this pipeline's data").is_empty());

    // Idle: it offers nothing, refuses nothing, and costs next to no CPU.
    let refused = |s: &Serve| s.metric("anes_records_refused_total{pipeline_id=\"p\",reason=\"store_lost\"}");
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
    serve.stop();
}

/// Issue 30, item 2: two services that lose their store together retry at different instants.
#[test]
fn two_processes_retry_a_lost_store_at_different_instants() {
    let dir = temp_dir("jitter");
    // Nothing listens there: taking the store over fails, and is retried with backoff.
    let pipeline = format!(
        "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"redis\"\nurl = \"redis://127.0.0.1:{}/0\"\n\
         retry_base_seconds = 0.05\nretry_cap_seconds = 1\nretry_attempts = 4\n",
        free_port()
    );
    let services: Vec<Serve> =
        ["one", "two"].iter().map(|name| Serve::start(&dir.0, name, &pipeline, &dir.0.join(name))).collect();
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
