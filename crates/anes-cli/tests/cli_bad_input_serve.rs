//! `anes serve --state-dir` naming a regular file or a FIFO started normally and only at SIGTERM
//! logged "writing the final checkpoint failed ... File exists", exiting 0: the final checkpoints were
//! lost without a failing status. Now refused at start (exit status 2, naming it, nothing made), and
//! a final checkpoint that cannot be written at shutdown makes the exit status 1. Every process
//! started here is stopped by PID on every exit path.

mod support;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{Guard, TempDir};

/// `anes serve` of the demo pipeline in `dir`, its stdout and stderr into files there (a pipe nobody
/// reads while it runs would fill and stop it).
fn serve(dir: &Path, port: u16, state_dir: &str) -> Guard {
    let file = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
    Guard(
        Command::new(env!("CARGO_BIN_EXE_anes"))
            .current_dir(dir)
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir", "data"])
            .args(["--evidence-dir", "evidence", "--state-dir", state_dir])
            .env_remove("ANES_TOKEN")
            .stdin(Stdio::null())
            .stdout(file("stdout"))
            .stderr(file("stderr"))
            .spawn()
            .expect("the anes binary runs"),
    )
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits up to `limit` for the child to exit; its status, stdout and stderr. Stops it first when it
/// is still running then.
fn finish(child: &mut Guard, dir: &Path, limit: Duration) -> (Option<i32>, String, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if status.is_none() {
        let _ = child.0.kill();
        let _ = child.0.wait();
    }
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    (status.and_then(|s| s.code()), read("stdout"), read("stderr"))
}

#[test]
fn a_state_dir_that_is_not_a_folder_is_refused_at_start() {
    let dir = TempDir::create("cli-bad-input-serve-state");
    std::fs::write(dir.join("afile"), b"not a folder").unwrap();
    assert!(Command::new("mkfifo").arg(dir.join("fifo")).status().unwrap().success());
    for (state_dir, what) in
        [("afile", "a regular file"), ("fifo", "a FIFO"), ("afile/sub", "afile is not a folder")]
    {
        let mut child = serve(&dir, free_port(), state_dir);
        let (code, _, stderr) = finish(&mut child, &dir, Duration::from_secs(30));
        assert_eq!(code, Some(2), "--state-dir {state_dir}: {stderr}");
        let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("{stderr}"));
        assert!(line.starts_with(&format!("error: --state-dir {state_dir}: ")), "{line}");
        assert!(line.contains(what) && line.contains("final checkpoint"), "{line}");
        // Nothing started: no data directory, no evidence folder, the file and FIFO as they were.
        assert!(!dir.join("data").exists() && !dir.join("evidence").exists(), "--state-dir {state_dir}");
        assert_eq!(std::fs::read(dir.join("afile")).unwrap(), b"not a folder");
    }
}

#[test]
fn a_data_dir_that_is_not_a_folder_is_refused_by_name() {
    let dir = TempDir::create("cli-bad-input-serve-data");
    std::fs::write(dir.join("afile"), b"not a folder").unwrap();
    for args in [
        vec!["serve", "--listen", "127.0.0.1:0", "--data-dir", "afile"],
        vec!["journal", "accept-loss", "--config", "anes.toml", "--pipeline", "demo", "--data-dir", "afile"],
    ] {
        if args[0] == "journal" {
            let config = "[[pipeline]]\nid = \"demo\"\n";
            std::fs::write(dir.join("anes.toml"), config).unwrap();
        }
        let output = Command::new(env!("CARGO_BIN_EXE_anes"))
            .current_dir(&dir.0)
            .args(&args)
            .env_remove("ANES_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--data-dir afile: is a regular file, not a folder"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_final_checkpoint_that_cannot_be_written_fails_the_exit_status() {
    let dir = TempDir::create("cli-bad-input-serve-final");
    std::fs::create_dir_all(dir.join("state")).unwrap();
    let port = free_port();
    let mut child = serve(&dir, port, "state");
    let agent = support::agent();
    let started = Instant::now();
    loop {
        let status = support::get_json(&agent, &format!("http://127.0.0.1:{port}/v1/pipelines/demo"));
        if status.is_some_and(|s| s["frames_verified"].as_u64() > Some(60)) {
            break;
        }
        assert!(child.0.try_wait().unwrap().is_none(), "anes serve ended early");
        assert!(started.elapsed() < Duration::from_secs(60), "no frames verified in 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The folder replaced by a file while the service runs: the final checkpoint cannot go there.
    std::fs::remove_dir_all(dir.join("state")).unwrap();
    std::fs::write(dir.join("state"), b"in the way").unwrap();
    assert!(Command::new("kill").args(["-TERM", &child.0.id().to_string()]).status().unwrap().success());
    let (code, stdout, stderr) = finish(&mut child, &dir, Duration::from_secs(60));
    assert_eq!(code, Some(1), "{stderr}");
    // The accounting is still printed; the error line names the folder and the pipeline.
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("the JSON report");
    assert_eq!(report["pipelines"][0]["final_checkpoint_file"], serde_json::Value::Null, "{report}");
    let line = stderr.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("--state-dir state") && line.contains("pipeline demo"), "{line}");
}
