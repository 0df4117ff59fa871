//! Issue 45: operating across machines. A remote worker killed and restarted after 2, 10 and 60 s
//! (loopback), and a worker behind a link taken down for 30 s (network namespaces, with real
//! Prometheus evaluating `deploy/prometheus`'s rules): the coordinator never waits for a worker on the
//! pipeline's thread, so pushes keep their latency while a worker is gone (p99 under 50 ms), the loss
//! shows within 100 ms of the worker's death, `AnesWorkerDown` pages within 25 s of a partition and
//! until the pipeline is normal again, the pipeline is normal within 2 s of the worker listening again
//! however long it was gone, and the store epoch moves at most once per rollback.
//!
//! Every process listens on 127.0.0.1 or on the test's own links and is stopped by PID on every exit
//! path; the namespaces are removed with the test. Without root, `ip` or Prometheus the partition
//! drill says it skipped; under `CI` it fails instead.

mod support;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::coordinator::{Coordinator, Endpoint, Ledger};
use support::netns::{self, Netns};
use support::remote::{Worker, remote_pipeline, temp_dir};

/// A producer pushing 3 records every 50 ms (a game's 60 frames a second), keeping every push's
/// latency with when it was sent.
struct Producer {
    stop: Arc<AtomicBool>,
    latencies: Arc<Mutex<Vec<(Instant, Duration)>>>,
    thread: Option<std::thread::JoinHandle<Ledger>>,
}

impl Producer {
    fn start(endpoint: Endpoint) -> Producer {
        let stop = Arc::new(AtomicBool::new(false));
        let latencies: Arc<Mutex<Vec<(Instant, Duration)>>> = Arc::default();
        let (s, l) = (Arc::clone(&stop), Arc::clone(&latencies));
        let thread = std::thread::spawn(move || {
            let mut ledger = Ledger::default();
            let mut next = 0;
            while !s.load(Ordering::SeqCst) {
                let sent = Instant::now();
                ledger.push(&endpoint, &mut next, 3);
                l.lock().unwrap().push((sent, sent.elapsed()));
                std::thread::sleep(Duration::from_millis(50).saturating_sub(sent.elapsed()));
            }
            ledger
        });
        Producer { stop, latencies, thread: Some(thread) }
    }

    /// The 99th percentile and the largest latency of the pushes sent between `from` and `to`, and
    /// how many there were.
    fn p99(&self, from: Instant, to: Instant) -> (Duration, Duration, usize) {
        let mut during: Vec<Duration> = self
            .latencies
            .lock()
            .unwrap()
            .iter()
            .filter(|(t, _)| *t >= from && *t <= to)
            .map(|(_, d)| *d)
            .collect();
        during.sort();
        assert!(!during.is_empty(), "no push during the outage");
        let p99 = during[(during.len() * 99).div_ceil(100).saturating_sub(1)];
        (p99, *during.last().unwrap(), during.len())
    }

    fn finish(mut self) -> Ledger {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap()
    }
}

fn worker_up(c: &Coordinator, worker: &str) -> Option<f64> {
    let (_, text) = c.get("/metrics")?;
    let line = text
        .lines()
        .find(|l| l.starts_with("anes_worker_up{") && l.contains(&format!("worker=\"{worker}\"")))?;
    line.rsplit(' ').next()?.parse().ok()
}

/// Normal, both workers up.
fn normal(c: &Coordinator) -> Option<Value> {
    let s = c.status()?;
    (s["mode"] == "normal" && worker_up(c, "a") == Some(1.0) && worker_up(c, "b") == Some(1.0)).then_some(s)
}

#[test]
fn a_worker_back_after_2_10_or_60_s_is_normal_within_2_s_of_listening() {
    let dir = temp_dir("reachability-restart");
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, "reachability-token\n").unwrap();
    let a = Worker::start("127.0.0.1:0", &token_file);
    let b = Worker::start("127.0.0.1:0", &token_file);
    let extra = "rollback = \"immediate\"\n[pipeline.input]\nsource = \"push\"";
    let pipeline = remote_pipeline(&a.address, &b.address, &token_file, extra);
    let mut serve = Coordinator::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    let producer = Producer::start(serve.endpoint());
    serve.wait_for("normal with both workers", Duration::from_secs(60), normal);
    let mut a = a;
    let mut lines = Vec::new();
    let first = serve.status().unwrap();
    for absence in [2u64, 10, 60] {
        serve.wait_for("normal with both workers", Duration::from_secs(60), normal);
        let before = serve.status().unwrap();
        let killed = Instant::now();
        a.kill_9();
        // The loss shows on /metrics within 100 ms.
        let mut down = None;
        while killed.elapsed() < Duration::from_secs(5) {
            if worker_up(&serve, "a") == Some(0.0) {
                down = Some(killed.elapsed());
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let down = down.expect("worker a shown down");
        std::thread::sleep(Duration::from_secs(absence).saturating_sub(killed.elapsed()));
        a = Worker::start(&a.address, &token_file);
        let listening = Instant::now();
        let after = serve.wait_for("normal again", Duration::from_secs(30), normal);
        let back = listening.elapsed();
        let (p99, max, pushes) = producer.p99(killed, listening + back);
        let rollbacks =
            after["rollbacks_succeeded"].as_u64().unwrap() - before["rollbacks_succeeded"].as_u64().unwrap();
        let line = format!(
            "worker a gone {absence} s: shown down after {:.1} ms; normal {:.2} s after it listened again; pushes during it {pushes}, p99 {:.1} ms, max {:.1} ms; {rollbacks} rollbacks ({} failed)",
            down.as_secs_f64() * 1e3,
            back.as_secs_f64(),
            p99.as_secs_f64() * 1e3,
            max.as_secs_f64() * 1e3,
            after["rollbacks_failed"].as_u64().unwrap() - before["rollbacks_failed"].as_u64().unwrap(),
        );
        println!("{line}");
        assert!(down < Duration::from_millis(100), "{line}");
        assert!(back < Duration::from_secs(2), "{line}");
        assert!(p99 < Duration::from_millis(50), "{line}");
        assert!(rollbacks >= 1, "{line}");
        lines.push(line);
    }
    let ledger = producer.finish();
    assert!(ledger.lost.is_empty(), "{:?}", ledger.lost);
    let settled = serve.wait_settled(Duration::from_secs(60));
    assert!(settled["accounting"]["received"].as_u64().unwrap() >= ledger.acked);
    // The epoch is bumped by the checkpoint writer just after a rollback's Verify step, so it is
    // compared once everything has settled, not at the instant the page turns normal.
    let epoch_moved = settled["store"]["epoch"].as_u64().unwrap() - first["store"]["epoch"].as_u64().unwrap();
    let rollbacks =
        settled["rollbacks_succeeded"].as_u64().unwrap() - first["rollbacks_succeeded"].as_u64().unwrap();
    println!("store epoch +{epoch_moved} over {rollbacks} rollbacks");
    assert!(
        rollbacks >= 3 && epoch_moved <= rollbacks,
        "store epoch +{epoch_moved} over {rollbacks} rollbacks"
    );
    serve.stop();
}

/// Prometheus with `deploy/prometheus`'s configuration and rules, scraping `target`.
struct Prometheus {
    child: Child,
    port: u16,
}

impl Prometheus {
    fn start(dir: &Path, target: &str) -> Prometheus {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let deploy = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/prometheus");
        let config = std::fs::read_to_string(deploy.join("prometheus.yml"))
            .unwrap()
            .replace("127.0.0.1:9650", target)
            // No Alertmanager here: the alert's state is read from Prometheus itself.
            .replace("127.0.0.1:9093", "127.0.0.1:9");
        std::fs::write(dir.join("prometheus.yml"), config).unwrap();
        std::fs::copy(deploy.join("anes-rules.yml"), dir.join("anes-rules.yml")).unwrap();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("prom-data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("starting prometheus");
        Prometheus { child, port }
    }

    /// The state of `alertname` for `worker`: `firing`, `pending`, or `None`.
    fn alert(&self, alertname: &str, worker: &str) -> Option<String> {
        let mut r =
            support::agent().get(&format!("http://127.0.0.1:{}/api/v1/alerts", self.port)).call().ok()?;
        let v: Value = serde_json::from_str(&r.body_mut().read_to_string().ok()?).ok()?;
        v["data"]["alerts"].as_array()?.iter().find_map(|a| {
            (a["labels"]["alertname"] == alertname && a["labels"]["worker"] == worker)
                .then(|| a["state"].as_str().unwrap_or_default().to_string())
        })
    }

    fn scraping(&self) -> bool {
        let Ok(mut r) = support::agent()
            .get(&format!("http://127.0.0.1:{}/api/v1/query?query=up%7Bjob%3D%22anes%22%7D", self.port))
            .call()
        else {
            return false;
        };
        let v: Value =
            serde_json::from_str(&r.body_mut().read_to_string().unwrap_or_default()).unwrap_or_default();
        v["data"]["result"][0]["value"][1] == "1"
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_30_s_partition_drill_pages_until_the_pipeline_is_normal() {
    if !netns::available("partition drill") {
        return;
    }
    if Command::new("prometheus").arg("--version").output().is_err() {
        assert!(
            !anes_fs::ci_is_set(),
            "the partition drill needs prometheus (scripts/install-ops-servers.sh)"
        );
        println!("partition drill skipped: prometheus is not installed (scripts/install-ops-servers.sh)");
        return;
    }
    let dir = temp_dir("reachability-partition");
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, "partition-token\n").unwrap();
    let (ns_a, ns_b) = (Netns::new(), Netns::new());
    let _a = Worker::start_in(&ns_a, 0, &token_file);
    let b = Worker::start_in(&ns_b, 0, &token_file);
    let extra = "rollback = \"immediate\"\nstep_timeout_seconds = 10\n[pipeline.input]\nsource = \"push\"";
    let pipeline = remote_pipeline(&_a.address, &b.address, &token_file, extra);
    let mut serve = Coordinator::start(&dir.0, "serve", &pipeline, &dir.0.join("data"));
    let prometheus = Prometheus::start(&dir.0, &format!("127.0.0.1:{}", serve.port));
    let producer = Producer::start(serve.endpoint());
    serve.wait_for("normal with both workers", Duration::from_secs(60), normal);
    serve.wait_for("prometheus scraping anes", Duration::from_secs(60), |_| {
        prometheus.scraping().then_some(())
    });
    let cut = Instant::now();
    ns_a.set_link(false);
    let mut fired = None;
    while cut.elapsed() < Duration::from_secs(30) {
        if fired.is_none() && prometheus.alert("AnesWorkerDown", "a").as_deref() == Some("firing") {
            fired = Some(cut.elapsed());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    ns_a.set_link(true);
    let back = Instant::now();
    let fired = fired.expect("AnesWorkerDown fired during the partition");
    // Firing at every look until the pipeline is normal again.
    let mut looks = 0;
    let mut worker_back = None;
    loop {
        if normal(&serve).is_some() {
            break;
        }
        if worker_back.is_none() && worker_up(&serve, "a") == Some(1.0) {
            worker_back = Some(back.elapsed());
        }
        assert_eq!(
            prometheus.alert("AnesWorkerDown", "a").as_deref(),
            Some("firing"),
            "resolved before the pipeline was normal"
        );
        looks += 1;
        assert!(
            back.elapsed() < Duration::from_secs(30),
            "not normal 30 s after the link came back:\n{}",
            serve.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let healed = back.elapsed();
    let (p99, max, pushes) = producer.p99(cut, back);
    let line = format!(
        "30 s partition of worker a: AnesWorkerDown firing {:.1} s after the link went down, still firing at {looks} looks until the pipeline was normal {:.2} s after the link came back (worker a up again after {:.2} s); pushes during the partition {pushes}, p99 {:.1} ms, max {:.1} ms",
        fired.as_secs_f64(),
        healed.as_secs_f64(),
        worker_back.unwrap_or(healed).as_secs_f64(),
        p99.as_secs_f64() * 1e3,
        max.as_secs_f64() * 1e3
    );
    println!("{line}");
    assert!(fired < Duration::from_secs(25), "{line}");
    assert!(healed < Duration::from_secs(2), "{line}");
    assert!(p99 < Duration::from_millis(50), "{line}");
    let ledger = producer.finish();
    assert!(ledger.lost.is_empty(), "{:?}", ledger.lost);
    serve.wait_settled(Duration::from_secs(120));
    serve.stop();
}
