//! `anes canary --pushgateway` against a real Prometheus Pushgateway (Debian's
//! `prometheus-pushgateway`, started here on 127.0.0.1 with a temporary persistence file and stopped by
//! PID on every exit path): what a short-lived canary Job leaves for Prometheus to scrape is the
//! design's divergence flag, 0 for a run that agreed and 1 for one that differed, with the run's
//! `pipeline_id`, and the result. The test is `#[ignore]`d; `.ci/run` installs the
//! Pushgateway (`scripts/install-ops-servers.sh --pushgateway`) and runs it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A running Pushgateway this test started; killed by PID and its directory removed on drop.
struct Pushgateway {
    port: u16,
    dir: PathBuf,
    child: Child,
}

impl Pushgateway {
    /// Fails naming the command that installs it: tests never install anything.
    fn require() {
        assert!(
            Command::new("prometheus-pushgateway")
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok(),
            "this test needs prometheus-pushgateway: bash scripts/install-ops-servers.sh --pushgateway installs it"
        );
    }

    fn start() -> Pushgateway {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pushgateway-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = std::fs::File::create(dir.join("pushgateway.log")).unwrap();
        let child = Command::new("prometheus-pushgateway")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!("--persistence.file={}", dir.join("pushgateway.data").display()))
            .stdin(Stdio::null())
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("prometheus-pushgateway starts");
        let mut gateway = Pushgateway { port, dir, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        while gateway.get("/-/ready").is_none_or(|(code, _)| code != 200) {
            if let Ok(Some(exit)) = gateway.child.try_wait() {
                panic!("prometheus-pushgateway exited ({exit}):\n{}", gateway.log());
            }
            assert!(
                Instant::now() < deadline,
                "the Pushgateway was not ready within 20 s:\n{}",
                gateway.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        gateway
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("pushgateway.log")).unwrap_or_default()
    }

    /// A plain HTTP/1.0 GET on loopback: (status, body).
    fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer).ok()?;
        let code = answer.split_whitespace().nth(1)?.parse().ok()?;
        let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
        Some((code, body))
    }

    /// The value of the sample whose line starts with `name{` and contains every `labels` pair.
    fn sample(&self, name: &str, labels: &[&str]) -> Option<f64> {
        let (_, body) = self.get("/metrics")?;
        body.lines()
            .filter(|l| l.starts_with(&format!("{name}{{")))
            .find(|l| labels.iter().all(|label| l.contains(label)))
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
    }
}

impl Drop for Pushgateway {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn canary(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .arg("canary")
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the anes binary runs")
}

#[test]
#[ignore = "needs prometheus-pushgateway (scripts/install-ops-servers.sh --pushgateway)"]
fn a_canary_job_leaves_its_verdict_on_a_real_pushgateway() {
    Pushgateway::require();
    let gateway = Pushgateway::start();
    let url = gateway.url();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("canary-pushgateway");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    // A run that agrees: the demo against its golden log.
    let golden = repo().join("tests/golden/demo.records");
    let output = canary(
        &[
            "--baseline-log",
            golden.to_str().unwrap(),
            "--frames",
            "600",
            "--pushgateway",
            &url,
            "--pipeline-id",
            "agree",
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("--pushgateway"), "a push failed: {stderr}");
    let agree = ["job=\"anes_canary\"", "pipeline_id=\"agree\""];
    assert_eq!(
        gateway.sample("worker_state_divergence_flag", &agree),
        Some(0.0),
        "{}",
        gateway.get("/metrics").unwrap().1
    );
    assert_eq!(gateway.sample("anes_canary_result", &[agree[0], agree[1], "result=\"same\""]), Some(1.0));

    // A run that differs at input frame 299 (the record of frame 300): a golden log with one record changed (under this epoch).
    let text = std::fs::read_to_string(&golden).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let fields: Vec<&str> = lines[299].split_whitespace().collect();
    let cycle: u64 = fields[1].parse().unwrap();
    lines[299] = format!("{} {} {} {} {}", fields[0], cycle + 1, fields[2], fields[3], fields[4]);
    std::fs::write(dir.join("demo.records"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("EPOCH"), format!("{}\n", anes_core::EMULATION_EPOCH)).unwrap();
    let output = canary(
        &[
            "--baseline-log",
            "demo.records",
            "--frames",
            "600",
            "--no-localize",
            "--json",
            "--pushgateway",
            &url,
            "--pipeline-id",
            "differ",
        ],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("--pushgateway"), "a push failed: {stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["divergence"]["frame"], 299, "{summary}");
    let differ = ["job=\"anes_canary\"", "pipeline_id=\"differ\""];
    assert_eq!(gateway.sample("worker_state_divergence_flag", &differ), Some(1.0));
    assert_eq!(
        gateway.sample("anes_canary_result", &[differ[0], differ[1], "result=\"diverged\""]),
        Some(1.0)
    );
    // The agreeing run's group is untouched: each run is its own grouping key.
    assert_eq!(gateway.sample("worker_state_divergence_flag", &agree), Some(0.0));
    // The gateway's own record of the pushes: it accepted both groups and logged no refusal.
    let log = gateway.log();
    assert!(!log.to_lowercase().contains("level=error"), "{log}");
    println!(
        "pushgateway {}: agree flag 0 (result same), differ flag 1 at input frame 299 (result diverged)",
        url
    );
}
