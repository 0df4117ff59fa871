//! `anes serve` and `anes worker` as a user meets them, without the monitoring servers: configuration
//! mistakes, the loopback rule, a crashed worker process, and the worker protocol over real pipes.
//! Every process started here is stopped by PID on every exit path.

mod support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Guard, TempDir};

fn anes() -> Command {
    Command::new(env!("CARGO_BIN_EXE_anes"))
}

/// A new folder for the test, removed with what is in it when the result is dropped.
fn temp_dir(name: &str) -> TempDir {
    TempDir::create(&format!("serve-cli-{name}"))
}

/// `anes serve --config` of `text`: the exit status and stderr, where the config file's path reads
/// `anes.toml`.
fn run_with_config(text: &str, name: &str) -> (Option<i32>, String) {
    let dir = temp_dir(name);
    let path = dir.join("anes.toml");
    std::fs::write(&path, text).unwrap();
    let out = anes().args(["serve", "--config"]).arg(&path).env_remove("ANES_TOKEN").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&path.display().to_string(), "anes.toml");
    (out.status.code(), stderr)
}

#[test]
fn a_bad_config_is_one_line_and_exit_2() {
    let (code, stderr) = run_with_config("[[pipeline]]\nid = \"p1\"\ndrift_window = 10\n", "bad");
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: ") && stderr.contains("anes.toml: pipeline[0].drift_window: 10"),
        "{stderr}"
    );
    let (code, stderr) = run_with_config("[[pipeline]]\nid = \"p1\"\nworkers = \"fork\"\n", "bad2");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("line 3, key workers") && stderr.contains("unknown variant"), "{stderr}");
    // The examples docs/OPERATIONS.md gives are the lines the binary writes.
    let docs = include_str!("../../../docs/OPERATIONS.md");
    for (text, key) in [
        ("[[pipeline]]\nid = \"p1\"\ndrift_window = 40\n", "error: anes.toml: pipeline[0].drift_window: "),
        (
            "[server]\ndrill = false\n\n[[pipeline]]\nid = \"p1\"\nrollback = \"alert\"\nworkers = \"fork\"\n",
            "error: anes.toml: line 7, key workers: ",
        ),
    ] {
        let documented =
            docs.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key:?} in the docs"));
        let (code, stderr) = run_with_config(text, "documented");
        assert_eq!(code, Some(2), "{stderr}");
        assert_eq!(stderr.trim_end(), documented);
    }
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let (code, stderr) =
        run_with_config("[server]\nlisten = \"0.0.0.0:0\"\n[[pipeline]]\nid = \"p1\"\n", "public");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("refusing to listen on 0.0.0.0:0 without a token"), "{stderr}");
}

fn get(port: u16, path: &str) -> Option<String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut response = agent.get(&format!("http://127.0.0.1:{port}{path}")).call().ok()?;
    response.body_mut().read_to_string().ok()
}

#[test]
fn a_crashed_worker_process_is_noticed_and_replaced() {
    let dir = temp_dir("crash");
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(dir.join("token"), "t0ken\n").unwrap();
    std::fs::write(
        dir.join("anes.toml"),
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\ntoken_file = \"token\"\ndrill = true\nevidence_dir = \"evidence\"\n\
             [[pipeline]]\nid = \"p\"\nworkers = \"process\"\nrollback = \"immediate\"\n"
        ),
    )
    .unwrap();
    let mut serve = Guard(
        anes()
            .args(["serve", "--config"])
            .arg(dir.join("anes.toml"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let status = || -> Option<Value> { serde_json::from_str(&get(port, "/v1/pipelines/p")?).ok() };
    let wait = |what: &str, f: &dyn Fn(&Value) -> bool| {
        let start = Instant::now();
        loop {
            if let Some(s) = status()
                && f(&s)
            {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    wait("frames verified", &|s| s["frames_verified"].as_u64() > Some(30));
    let agent: ureq::Agent =
        ureq::Agent::config_builder().http_status_as_error(false).proxy(None).build().into();
    let response = agent
        .post(&format!("http://127.0.0.1:{port}/v1/pipelines/p/drill"))
        .header("Authorization", "Bearer t0ken")
        .header("Content-Type", "application/json")
        .send(r#"{"worker": "a", "crash": true}"#)
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let s =
        wait("the replacement", &|s| s["rollbacks_succeeded"].as_u64() >= Some(1) && s["mode"] == "normal");
    assert_eq!(s["incidents"][0]["kind"], "worker_exited");
    let exit = s["workers"][0]["last_exit"].as_str().unwrap();
    assert!(exit.contains("signal: 9") || exit.contains("SIGKILL"), "{exit}");
    assert_eq!(s["workers"][0]["restarts"], 1);
    assert_eq!(s["workers"][0]["incarnation"], 2);
    let verified = s["frames_verified"].as_u64().unwrap();
    wait("verification to go on", &|s| s["frames_verified"].as_u64() > Some(verified + 30));
    Command::new("kill").args(["-TERM", &serve.0.id().to_string()]).status().unwrap();
    let start = Instant::now();
    let code = loop {
        if let Some(code) = serve.0.try_wait().unwrap() {
            break code;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "serve did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(code.success());
    let mut out = String::new();
    serve.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let summary: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(summary["pipelines"][0]["final_checkpoint_verified"], true, "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn anes_worker_speaks_json_lines_over_its_pipes() {
    let mut worker = Guard(
        anes()
            .args(["worker", "--protocol", "json-lines"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let hex = anes_core::hex::to_hex(&rom);
    let mut stdin = worker.0.stdin.take().unwrap();
    writeln!(stdin, r#"{{"type":"load","rom":"{hex}","checkpoint_every":2}}"#).unwrap();
    writeln!(stdin, r#"{{"type":"frames","first_seq":0,"inputs":[[0,0,0],[1,0,0]]}}"#).unwrap();
    writeln!(stdin, r#"{{"type":"shutdown"}}"#).unwrap();
    drop(stdin);
    let mut out = String::new();
    worker.0.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let replies: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = replies.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["hello", "loaded", "snapshot", "record", "record", "snapshot"]);
    assert_eq!(replies[0]["protocol_version"], anes_ops::worker::protocol::PROTOCOL_VERSION);
    assert_eq!(replies[0]["build"]["emulation_epoch"], anes_core::EMULATION_EPOCH);
    assert_eq!(replies[4]["record"]["frame"], 2);
    assert!(worker.0.wait().unwrap().success());
}

/// A pipeline's ROM or input stream that is a FIFO stops `anes serve` at start, at once, with one line
/// saying what the file is: it used to block forever in the read.
#[test]
fn a_pipeline_file_that_is_a_fifo_is_refused_at_start() {
    let cases = [
        ("rom", "[[pipeline]]\nid = \"p1\"\nrom = \"{fifo}\"\n[pipeline.input]\nsource = \"push\"\n"),
        ("input", "[[pipeline]]\nid = \"p1\"\n[pipeline.input]\nsource = \"replay\"\nfile = \"{fifo}\"\n"),
    ];
    for (name, template) in cases {
        let dir = temp_dir(&format!("fifo-{name}"));
        let fifo = dir.join("pipe");
        if !Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            eprintln!("note: mkfifo unavailable: FIFO test skipped");
            return;
        }
        let config = dir.join("anes.toml");
        std::fs::write(&config, template.replace("{fifo}", fifo.to_str().unwrap())).unwrap();
        let mut serve = Guard(
            anes()
                .args(["serve", "--listen", "127.0.0.1:0", "--config"])
                .arg(&config)
                .arg("--data-dir")
                .arg(dir.join("data"))
                .env_remove("ANES_TOKEN")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
        );
        let start = Instant::now();
        let status = loop {
            if let Some(status) = serve.0.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{name}: anes serve still runs after 20 s");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        serve.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains("FIFO"), "{name}: {stderr}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A PAL pipeline on `anes worker` processes: both workers' consoles are PAL (a worker of another
/// region would be refused: `last_exit`), checkpoints advance by PAL frames.
#[test]
fn a_pal_pipeline_runs_pal_worker_processes() {
    let dir = temp_dir("pal");
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    std::fs::write(
        dir.join("anes.toml"),
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nevidence_dir = \"evidence\"\ndata_dir = \"data\"\n\
             [[pipeline]]\nid = \"p\"\nworkers = \"process\"\nregion = \"pal\"\ncheckpoint_every = 10\n\
             [pipeline.input]\nsource = \"replay\"\nspeed = \"max\"\n"
        ),
    )
    .unwrap();
    let mut serve = Guard(
        anes()
            .args(["serve", "--config"])
            .arg(dir.join("anes.toml"))
            .env_remove("ANES_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let status = loop {
        let status: Option<Value> =
            get(port, "/v1/pipelines/p").and_then(|text| serde_json::from_str(&text).ok());
        if let Some(s) = status.filter(|s| s["frames_verified"].as_u64() > Some(200)) {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for 200 frames verified");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status["region"], "pal", "{status}");
    for worker in 0..2 {
        assert_eq!(status["workers"][worker]["last_exit"], Value::Null, "{status}");
        assert_eq!(status["workers"][worker]["restarts"], 0, "{status}");
    }
    assert_eq!(status["mode"], "normal", "{status}");
    let exit = serve.terminate(Duration::from_secs(20));
    assert!(exit.is_some_and(|s| s.success()), "{exit:?}");
}
