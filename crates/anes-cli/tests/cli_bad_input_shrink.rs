//! `anes shrink` given bad input: a --baseline worker that never replies held each call for the
//! fixed 60 s reply timeout whatever --budget said (now --reply-timeout, as `anes canary` has it); a
//! --budget too large for the search's clock was refused without saying the largest accepted (or, at
//! 1e19, overflowed it); a bundle's fault spec machine B cannot take was reported against the ROM
//! instead of the bundle's report.json. Every process started here is stopped by PID.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use support::TempDir;

const DEMO_ROM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes");
const DEMO_INPUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.input");

/// Runs anes in `dir`, killed by PID after `limit`: its output and how long it took.
fn anes_within(dir: &Path, args: &[&str], limit: Duration) -> (Output, Duration) {
    let out = std::fs::File::create(dir.join("out")).unwrap();
    let err = std::fs::File::create(dir.join("err")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("the anes binary runs");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("anes {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    (Output { status, stdout: read("out"), stderr: read("err") }, elapsed)
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_worker_that_never_replies_is_given_up_after_reply_timeout() {
    let dir = TempDir::create("cli-bad-input-shrink-sleeper");
    let sleeper = dir.join("sleeper.sh");
    // Never replies; ends on its own, should anes leave it behind.
    std::fs::write(&sleeper, "#!/bin/sh\nexec sleep 30\n").unwrap();
    std::fs::set_permissions(&sleeper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = [
        "shrink",
        DEMO_ROM,
        "--input",
        DEMO_INPUT,
        "--frames",
        "60",
        "--baseline",
        "./sleeper.sh",
        "--budget",
        "1",
        "--reply-timeout",
        "1",
        "--out",
        "repro",
    ];
    let (output, elapsed) = anes_within(&dir, &args, Duration::from_secs(50));
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}: {err}");
    assert!(err.starts_with("error: --baseline: ") && err.contains("1 s"), "{err}");
    assert!(!dir.join("repro").exists());

    // The help says it.
    let (help, _) = anes_within(&dir, &["shrink", "--help"], Duration::from_secs(30));
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("--reply-timeout <SECONDS>") && help.contains("[default: 60]"), "{help}");
}

#[test]
fn a_budget_past_a_year_is_refused_naming_the_largest() {
    let dir = TempDir::create("cli-bad-input-shrink-budget");
    // 1e19 s fits a Duration but not the search's deadline: it panicked once a divergence was found.
    for budget in ["1e19", "1e20", "31536001", "-1", "NaN", "inf"] {
        let budget_arg = format!("--budget={budget}");
        let inject = "flip:ram:0x0342:3@12345";
        let args = ["shrink", "--frames", "600", "--inject", inject, &budget_arg, "--out", "repro"];
        let (output, _) = anes_within(&dir, &args, Duration::from_secs(60));
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "--budget {budget}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: --budget ") && err.contains("0 to 31536000 (one year)"), "{err}");
        assert!(!dir.join("repro").exists());
    }
}

/// A lockstep bundle whose report.json names `spec` as its fault.
fn bundle_with_fault(dir: &Path, spec: &str) {
    let args = [
        "lockstep",
        DEMO_ROM,
        "--input",
        DEMO_INPUT,
        "--frames",
        "600",
        "--inject",
        "flip:ram:0x0342:3@12345",
        "--report",
        "bundle",
    ];
    let (output, _) = anes_within(dir, &args, Duration::from_secs(120));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let path = dir.join("bundle/report.json");
    let mut report: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    report["faults"][0]["spec"] = spec.into();
    std::fs::write(&path, serde_json::to_vec(&report).unwrap()).unwrap();
}

#[test]
fn a_fault_spec_machine_b_cannot_take_names_where_it_came_from() {
    let dir = TempDir::create("cli-bad-input-shrink-fault");
    bundle_with_fault(&dir, "flip:ram:0x9342:3@12345");
    for (args, source) in [
        (vec!["shrink", DEMO_ROM, "--evidence", "bundle", "--out", "repro"], "bundle/report.json: faults: "),
        (
            vec!["shrink", DEMO_ROM, "--frames", "60", "--inject", "flip:prg:0x1:3@100", "--out", "repro"],
            "--inject: ",
        ),
    ] {
        let (output, _) = anes_within(&dir, &args, Duration::from_secs(120));
        let err = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("error: {source}fault flip:")), "{err}");
        assert!(!err.contains("demo.nes"), "{err}");
        assert!(!dir.join("repro").exists());
    }
}
