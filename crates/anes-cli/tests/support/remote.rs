//! Remote workers and the coordinator that drives them, for the tests of issue 25: `anes worker
//! --listen` (on 127.0.0.1 or inside a test's network namespace) and `anes serve` with JSON logs,
//! each stopped by PID on every exit path.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::netns::Netns;
use super::{Guard, TempDir, agent};

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A new temporary folder ([`TempDir::create`]).
pub fn temp_dir(name: &str) -> TempDir {
    TempDir::create(name)
}

/// `anes worker --listen address`, once it said where it listens.
pub struct Worker {
    pub child: Guard,
    pub address: String,
}

impl Worker {
    /// On 127.0.0.1 (`address` such as `127.0.0.1:0`).
    pub fn start(address: &str, token_file: &Path) -> Worker {
        Worker::start_with(address, token_file, &[])
    }

    /// On 127.0.0.1, with `more` arguments (`--tls-cert F --tls-key F`).
    pub fn start_with(address: &str, token_file: &Path, more: &[&Path]) -> Worker {
        let mut command = Command::new(env!("CARGO_BIN_EXE_anes"));
        command.args(["worker", "--listen", address, "--token-file"]).arg(token_file).args(more);
        Worker::spawn(command)
    }

    /// Inside `netns`, on its address (`port` 0: a free one).
    pub fn start_in(netns: &Netns, port: u16, token_file: &Path) -> Worker {
        let address = format!("{}:{port}", netns.address);
        let mut command = netns.command(env!("CARGO_BIN_EXE_anes"));
        command.args(["worker", "--listen", &address, "--token-file"]).arg(token_file);
        Worker::spawn(command)
    }

    fn spawn(mut command: Command) -> Worker {
        let mut child =
            command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let child = Guard(child);
        let (tx, rx) = mpsc::channel();
        // Reads the worker's stderr to its end (the worker logs its sessions there).
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let line = rx.recv_timeout(Duration::from_secs(10)).expect("the worker says where it listens");
        let address = line.strip_prefix("listening on ").unwrap_or_else(|| panic!("{line:?}")).to_string();
        Worker { child, address }
    }

    pub fn port(&self) -> u16 {
        self.address.rsplit(':').next().unwrap().parse().unwrap()
    }

    pub fn kill_9(&mut self) {
        let pid = self.child.0.id().to_string();
        assert!(Command::new("kill").args(["-9", &pid]).status().unwrap().success());
        let _ = self.child.0.wait();
    }
}

/// `[[pipeline]] id = "p"` with remote workers at `a` and `b` and the `extra` keys (TOML lines).
pub fn remote_pipeline(a: &str, b: &str, token_file: &Path, extra: &str) -> String {
    format!(
        "[[pipeline]]\nid = \"p\"\nworkers = \"remote\"\n{extra}\n\n\
         [pipeline.remote]\na = \"{a}\"\nb = \"{b}\"\ntoken_file = \"{}\"\n",
        token_file.display()
    )
}

/// One `anes serve` with JSON logs in `<dir>/<name>.log`.
pub struct Serve {
    pub child: Guard,
    pub port: u16,
    log: PathBuf,
    agent: ureq::Agent,
}

impl Serve {
    /// Starts `anes serve` with `[server]` on port 0, then `pipelines` (TOML), its data in
    /// `data_dir`; returns once it logged the port it bound (a port picked free beforehand can be
    /// taken by another test's server before this one binds it).
    pub fn start(dir: &Path, name: &str, pipelines: &str, data_dir: &Path) -> Serve {
        let mut serve = Serve::spawn(dir, name, pipelines, data_dir);
        serve.port = serve.wait_for("the address it listens on", Duration::from_secs(30), Serve::bound_port);
        serve
    }

    /// [`Serve::start`] without waiting: for a service expected to exit before it listens (`port`
    /// stays 0).
    pub fn spawn(dir: &Path, name: &str, pipelines: &str, data_dir: &Path) -> Serve {
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, format!("[server]\nlisten = \"127.0.0.1:0\"\n\n{pipelines}")).unwrap();
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
        Serve { child: Guard(child), port: 0, log, agent: agent() }
    }

    /// The port in the log's "listening on" line, once it is there.
    fn bound_port(&self) -> Option<u16> {
        self.log().lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|v| {
            let listen = v["fields"]["listen"].as_str().or(v["listen"].as_str())?;
            listen.rsplit(':').next()?.parse().ok()
        })
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// The body of `path` when it answers 200.
    pub fn get(&self, path: &str) -> Option<String> {
        self.get_any(path).filter(|(code, _)| *code == 200).map(|(_, body)| body)
    }

    /// The status code and body of `path`, whatever the code.
    pub fn get_any(&self, path: &str) -> Option<(u16, String)> {
        let mut r = self.agent.get(&format!("http://127.0.0.1:{}{path}", self.port)).call().ok()?;
        Some((r.status().as_u16(), r.body_mut().read_to_string().ok()?))
    }

    /// Pipeline `p`'s status.
    pub fn status(&self) -> Option<Value> {
        serde_json::from_str(&self.get("/v1/pipelines/p")?).ok()
    }

    /// The value of the first series on `/metrics` whose line starts with `prefix` and contains
    /// every one of `labels`.
    pub fn metric(&self, prefix: &str, labels: &[&str]) -> Option<f64> {
        let text = self.get("/metrics")?;
        let line = text.lines().find(|l| l.starts_with(prefix) && labels.iter().all(|x| l.contains(x)))?;
        line.rsplit(' ').next()?.parse().ok()
    }

    /// `anes_worker_up` of `worker` on `/metrics`.
    pub fn worker_up(&self, worker: &str) -> Option<f64> {
        self.metric("anes_worker_up{", &[&format!("worker=\"{worker}\"")])
    }

    /// Polls `probe` every 20 ms until it gives a value; panics with the log after `limit` or when
    /// the service exits.
    pub fn wait_for<T>(
        &mut self,
        what: &str,
        limit: Duration,
        mut probe: impl FnMut(&Serve) -> Option<T>,
    ) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = probe(self) {
                return v;
            }
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                panic!("anes serve exited ({exit}) waiting for {what}:\n{}", self.log());
            }
            assert!(start.elapsed() < limit, "no {what} within {limit:?}:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then (at most 30 s) the summary line it prints on its way out.
    pub fn stop(self) -> Value {
        let log = self.stop_and_log();
        log.lines()
            .find_map(|l| serde_json::from_str::<Value>(l).ok().filter(|v| v["pipelines"].is_array()))
            .unwrap_or_else(|| panic!("no summary line:\n{log}"))
    }

    /// SIGTERM, then (at most 30 s) a clean exit; its whole log.
    pub fn stop_and_log(mut self) -> String {
        let pid = self.child.0.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let start = Instant::now();
        loop {
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                assert!(exit.success(), "SIGTERM: {exit}\n{}", self.log());
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "no exit after SIGTERM:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
        self.log()
    }
}

pub fn frames_verified(status: &Value) -> u64 {
    status["frames_verified"].as_u64().unwrap_or(0)
}
