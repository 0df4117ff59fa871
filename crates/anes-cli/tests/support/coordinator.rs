//! One `anes serve` as a coordinator of pipeline `p` with pushed input, a token, JSON logs, its data
//! directory and store of the test's choosing; and a producer that trusts acknowledgements: it holds
//! what each 200 answer counted, resends only from an owner's answer, and notices when an owner
//! expects less than it was promised (an acknowledged record lost).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Guard, agent};

pub const TOKEN: &str = "durability-token";
pub const PIPELINE: &str = "p";

/// The record a producer sends at `seq`: both ports, a value of `seq` (so a lost, repeated or reordered
/// record changes the console's state).
pub fn input(seq: u64) -> [u8; 2] {
    [(seq * 37 % 251) as u8, (seq % 7) as u8]
}

/// A running (or refused) `anes serve`.
pub struct Coordinator {
    pub name: String,
    pub port: u16,
    log: PathBuf,
    /// Where this process's lines start in the log (an earlier life's come before).
    log_start: usize,
    child: Guard,
    agent: ureq::Agent,
}

/// `[[pipeline]]` of `p` with pushed input and the store `store` (TOML keys of `[pipeline.store]`),
/// verified checkpoints every `every` frames, stored every `persist` frames, and `extra` (keys of the
/// pipeline, then tables).
pub fn pipeline_toml(store: &str, every: u32, persist: u32, extra: &str) -> String {
    format!(
        "[[pipeline]]\nid = \"{PIPELINE}\"\ncheckpoint_every = {every}\npersist_every = {persist}\nrollback = \"immediate\"\n{extra}\n\
         [pipeline.input]\nsource = \"push\"\n[pipeline.store]\n{store}\n"
    )
}

impl Coordinator {
    /// Starts one in `dir` (its config, token and log there) with `pipelines` and its data in
    /// `data_dir`, and waits until it listens and the pipeline is ready.
    pub fn start(dir: &Path, name: &str, pipelines: &str, data_dir: &Path) -> Coordinator {
        let mut c = Coordinator::spawn(dir, name, pipelines, data_dir);
        c.port = c.wait_for("the address it listens on", Duration::from_secs(60), Coordinator::bound_port);
        let last = std::cell::RefCell::new(None);
        let ready = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            c.wait_for("readiness", Duration::from_secs(120), |c| {
                let answer = c.get("/readyz");
                *last.borrow_mut() = answer.clone();
                answer.filter(|(code, _)| *code == 200).map(|_| ())
            })
        }));
        if let Err(e) = ready {
            eprintln!("{name}: /readyz last answered {:?}; status {:?}", last.borrow(), c.status());
            std::panic::resume_unwind(e);
        }
        c
    }

    /// Starts one without waiting (for a start-up expected to be refused).
    pub fn spawn(dir: &Path, name: &str, pipelines: &str, data_dir: &Path) -> Coordinator {
        std::fs::write(dir.join("token"), TOKEN).unwrap();
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(
            &config,
            format!(
                "[server]\nlisten = \"127.0.0.1:0\"\ntoken_file = \"token\"\ndrill = true\n\n{pipelines}"
            ),
        )
        .unwrap();
        let log = dir.join(format!("{name}.log"));
        // Appended: a coordinator restarted on its data directory keeps its earlier life's lines.
        let out = std::fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
        let log_start = out.metadata().unwrap().len() as usize;
        let child = Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["serve", "--log-format", "json", "--config"])
            .arg(&config)
            .arg("--data-dir")
            .arg(data_dir)
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", "test")
            .env_remove("ANES_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::from(out.try_clone().unwrap()))
            .stderr(Stdio::from(out))
            .spawn()
            .unwrap();
        Coordinator { name: name.to_string(), child: Guard(child), port: 0, log, log_start, agent: agent() }
    }

    fn bound_port(&self) -> Option<u16> {
        self.own_log().lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find_map(|v| {
            let listen = v["fields"]["listen"].as_str().or(v["listen"].as_str())?;
            listen.rsplit(':').next()?.parse().ok()
        })
    }

    /// The whole log, earlier lives' lines included.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// This process's lines of the log.
    pub fn own_log(&self) -> String {
        self.log().get(self.log_start..).unwrap_or_default().to_string()
    }

    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    pub fn get(&self, path: &str) -> Option<(u16, String)> {
        let mut r = self.agent.get(&format!("http://127.0.0.1:{}{path}", self.port)).call().ok()?;
        Some((r.status().as_u16(), r.body_mut().read_to_string().ok()?))
    }

    /// Pipeline `p`'s status.
    pub fn status(&self) -> Option<Value> {
        self.get(&format!("/v1/pipelines/{PIPELINE}"))
            .filter(|(c, _)| *c == 200)
            .and_then(|(_, b)| serde_json::from_str(&b).ok())
    }

    /// Where a producer reaches it (from any thread).
    pub fn endpoint(&self) -> Endpoint {
        Endpoint { name: self.name.clone(), port: self.port }
    }

    /// Polls `probe` every 20 ms until it gives a value; panics with the log after `limit` or when
    /// the service exits.
    pub fn wait_for<T>(
        &mut self,
        what: &str,
        limit: Duration,
        mut probe: impl FnMut(&Coordinator) -> Option<T>,
    ) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = probe(self) {
                return v;
            }
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                panic!("{}: anes serve exited ({exit}) waiting for {what}:\n{}", self.name, self.log());
            }
            assert!(start.elapsed() < limit, "{}: no {what} within {limit:?}:\n{}", self.name, self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until every record received is verified (and nothing waits in the queue); panics with the
    /// last status and the log when that does not come.
    pub fn wait_settled(&mut self, limit: Duration) -> Value {
        let last = std::cell::RefCell::new(Value::Null);
        let settled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.wait_for("every record verified", limit, |c| {
                let s = c.status()?;
                *last.borrow_mut() = s.clone();
                let a = &s["accounting"];
                (s["mode"] == "normal" && a["unverified"] == 0 && a["in_dlq"] == 0).then_some(s)
            })
        }));
        settled.unwrap_or_else(|e| {
            eprintln!("{}: the last status: {}", self.name, last.borrow());
            std::panic::resume_unwind(e)
        })
    }

    /// SIGTERM, then (at most 60 s) its exit: the pipeline's line of the summary it prints, and its log.
    pub fn stop(mut self) -> (Value, String) {
        let pid = self.child.0.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let exit = self.wait_exit(Duration::from_secs(60));
        let log = self.own_log();
        assert!(exit.success(), "{}: SIGTERM: {exit}\n{log}", self.name);
        let summary = log
            .lines()
            .find_map(|l| serde_json::from_str::<Value>(l).ok().filter(|v| v["pipelines"].is_array()))
            .unwrap_or_else(|| panic!("{}: no summary line:\n{log}", self.name));
        (summary["pipelines"][0].clone(), log)
    }

    /// kill -9.
    pub fn kill_9(&mut self) {
        let pid = self.child.0.id().to_string();
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
        let _ = self.child.0.wait();
    }

    /// Waits for the process to exit by itself (a refused start-up): its status and log.
    pub fn refused(mut self, limit: Duration) -> (ExitStatus, String) {
        let exit = self.wait_exit(limit);
        (exit, self.own_log())
    }

    fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Ok(Some(exit)) = self.child.0.try_wait() {
                return exit;
            }
            assert!(start.elapsed() < limit, "{}: no exit within {limit:?}:\n{}", self.name, self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A coordinator's HTTP address, as a producer holds it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub name: String,
    pub port: u16,
}

impl Endpoint {
    /// Pushes records `first..first + n` (their contents from [`input`]): the status code and the
    /// answer (a JSON outcome, or the error text as a string); `None` when the request failed.
    pub fn push(&self, first: u64, n: u64) -> Option<(u16, Value)> {
        let frames: Vec<Value> = (first..first + n).map(|s| serde_json::json!(input(s))).collect();
        let body = serde_json::json!({ "first_seq": first, "frames": frames }).to_string();
        let mut r = agent()
            .post(&format!("http://127.0.0.1:{}/v1/pipelines/{PIPELINE}/input", self.port))
            .header("Authorization", &format!("Bearer {TOKEN}"))
            .header("Content-Type", "application/json")
            .send(&body)
            .ok()?;
        let code = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap_or_default();
        Some((code, serde_json::from_str(&text).unwrap_or(Value::String(text))))
    }
}

/// What a producer saw.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    /// Every record below this was acknowledged (a 200, or a 503 outcome's accepted part).
    pub acked: u64,
    /// Pushes refused as fenced (the owner was taken over).
    pub fenced: u64,
    /// Times an owner expected a record below what was acknowledged: lost acknowledged records.
    pub lost: Vec<String>,
}

impl Ledger {
    /// Pushes up to `n` records to `owner` from its own notion of the next record, in one batch;
    /// updates the ledger from the answer. Returns false when the owner refused as fenced (the
    /// producer should move on to the new owner) or did not answer.
    pub fn push(&mut self, owner: &Endpoint, next: &mut u64, n: u64) -> bool {
        let Some((code, answer)) = owner.push(*next, n) else { return false };
        if let Some(next_seq) = answer["next_seq"].as_u64() {
            // A 200 counts every record before next_seq; a 503 outcome counts what it accepted.
            if next_seq < self.acked {
                self.lost.push(format!(
                    "{} answered next_seq {next_seq} after {} were acknowledged: {answer}",
                    owner.name, self.acked
                ));
            }
            self.acked = self.acked.max(next_seq);
            *next = next_seq;
        }
        match code {
            200 => true,
            503 if answer["refused"]["reason"] == "fenced" => {
                self.fenced += 1;
                false
            }
            503 => true,
            409 => {
                // A gap: the owner expects less than the producer sends from (its own next, or
                // acknowledged records it lost).
                let text = answer.as_str().unwrap_or_default().to_string();
                let expected = text
                    .rsplit("expects ")
                    .next()
                    .and_then(|t| t.split_whitespace().next())
                    .and_then(|t| t.parse::<u64>().ok());
                match expected {
                    Some(e) if e < self.acked => {
                        self.lost.push(format!(
                            "{} expects {e} after {} were acknowledged",
                            owner.name, self.acked
                        ));
                        *next = e;
                    }
                    Some(e) => *next = e,
                    None => panic!("{}: 409 {text}", owner.name),
                }
                true
            }
            other => panic!("{}: push answered {other}: {answer}", owner.name),
        }
    }
}

/// The state hash of the bundled demo after running `input(0..n)` from power-on, in hex: what a
/// pipeline that verified exactly those records, once each and in order, ends with.
pub fn reference_hash(n: u64) -> String {
    let rom = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.nes")).unwrap();
    let mut nes =
        anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom).unwrap(), anes_core::NesConfig::default());
    for seq in 0..n {
        let [a, b] = input(seq);
        nes.run_frame(anes_core::movie::FrameInput::buttons(a, b));
    }
    anes_core::hex::to_hex(&nes.state_hash().0)
}
