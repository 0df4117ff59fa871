//! Libretro workers that fail mid-run, and cores that print to stdout, under `anes lockstep`,
//! `anes canary`, `anes shrink` and `anes audit`. The test core (anes-retro-host's testcore) does it
//! on request (`anestest_fault`): `segv` writes through a null pointer in its 50th frame
//! (input-stream frame 49), `exit` calls exit(3) there, `hang` stops answering there, `stdout`
//! prints a line to stdout at load and in every frame.
//!
//! A dead worker's machine answers placeholders; these once compared equal (two dead workers
//! "agreed" on every frame: `frames verified 1000`, rc 0) or unequal by a cycle count of
//! `u64::MAX` (a "divergence" naming the wrong machine), and a shrink whose machine B died
//! panicked. A core printing to stdout wrote into the worker protocol.
//!
//! Every `anes` runs with a deadline and is killed by its PID past it.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anes_retro_host::TEST_CORE_A;

mod support;
use support::{Guard, TempDir, TempFile};

/// What an `anes` run left: exit status, stdout, stderr, and how long it took.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ran {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: stdout {} / stderr {}", self.stdout, self.stderr))
    }
}

/// Runs `anes args` in a scratch folder of its own; kills it (by PID) and fails past `limit`.
fn anes(args: &[&str], limit: Duration) -> Ran {
    let cwd = TempDir::create("cli-worker-failure-cwd");
    let started = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(&*cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the anes binary starts");
    let mut guard = Guard(child);
    // Read both pipes on threads: a core that prints fills a pipe nobody reads.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(guard.0.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = drain(guard.0.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let status = loop {
        if let Some(status) = guard.0.try_wait().expect("waiting for anes") {
            break status;
        }
        if started.elapsed() > limit {
            // Dropping the guard kills it by its PID; its workers see their input close.
            drop(guard);
            panic!("anes {} ran longer than {} s", args.join(" "), limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    Ran {
        code: status.code(),
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
        took,
    }
}

/// A content file for the test core.
fn content(name: &str) -> TempFile {
    TempFile::write(&format!("cli-worker-failure-{name}"), "content.bin", b"anes test core content\n")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

const LIMIT: Duration = Duration::from_secs(90);

/// The one failure the JSON summary `summary` carries.
fn failures(summary: &serde_json::Value) -> Vec<serde_json::Value> {
    summary["worker_failures"].as_array().cloned().unwrap_or_else(|| panic!("no worker_failures: {summary}"))
}

#[test]
fn lockstep_ends_at_the_crash_of_worker_a_naming_it_the_frame_and_the_signal() {
    let content = content("lockstep-segv-a");
    let report = TempDir::named("cli-worker-failure-lockstep-report");
    // A crashes in frame 49; B (--option-b) runs on.
    let ran = anes(
        &[
            "lockstep",
            "--libretro",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "300",
            "--option",
            "anestest_fault=segv",
            "--option-b",
            "anestest_fault=none",
            "--report",
            s(&report),
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    let summary = ran.json();
    assert_eq!(summary["frames_verified"], 49, "nothing verified past the failure: {summary}");
    assert!(summary["divergence"].is_null(), "a crash is not a divergence: {summary}");
    assert!(summary["evidence"].is_null(), "{summary}");
    assert!(summary["final_cpu_cycle"].as_u64().unwrap() < u64::MAX / 2, "a real record: {summary}");
    assert_ne!(summary["final_state_hash"], "0".repeat(64), "{summary}");
    let failed = failures(&summary);
    assert_eq!(failed.len(), 1, "{summary}");
    assert_eq!(failed[0]["worker"], "A", "{summary}");
    assert_eq!(failed[0]["frame"], 49, "{summary}");
    assert_eq!(failed[0]["what"], "crashed", "{summary}");
    assert_eq!(failed[0]["signal"], 11, "{summary}");
    assert_eq!(failed[0]["message"], "core crashed (signal 11, SIGSEGV) at frame 49", "{summary}");
    assert!(
        ran.stderr.contains(&format!(
            "error: worker A ({TEST_CORE_A}): core crashed (signal 11, SIGSEGV) at frame 49"
        )),
        "{}",
        ran.stderr
    );
    assert!(!report.exists(), "no evidence bundle of a crash");
}

#[test]
fn lockstep_of_two_workers_that_crash_verifies_nothing_past_the_crash() {
    let content = content("lockstep-segv-both");
    let ran = anes(
        &[
            "lockstep",
            "--libretro",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "1000",
            "--option",
            "anestest_fault=segv",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(2), "{}\n{}", ran.stdout, ran.stderr);
    assert!(ran.stdout.contains("frames verified   49\n"), "{}", ran.stdout);
    assert!(!ran.stdout.contains("no divergence"), "{}", ran.stdout);
    assert!(!ran.stdout.contains("DIVERGENCE"), "{}", ran.stdout);
    assert!(!ran.stdout.contains(&"0".repeat(64)), "no placeholder hash: {}", ran.stdout);
    for worker in ["A", "B"] {
        let line = format!(
            "FAILED            worker {worker} ({TEST_CORE_A}): core crashed (signal 11, SIGSEGV) at frame 49\n"
        );
        assert!(ran.stdout.contains(&line), "{line}: {}", ran.stdout);
    }
}

#[test]
fn lockstep_names_a_worker_that_exits() {
    let content = content("lockstep-exit");
    let ran = anes(
        &[
            "lockstep",
            "--libretro",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "300",
            "--option",
            "anestest_fault=none",
            "--option-b",
            "anestest_fault=exit",
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    let summary = ran.json();
    assert_eq!(summary["frames_verified"], 49, "{summary}");
    let failed = failures(&summary);
    assert_eq!(failed.len(), 1, "{summary}");
    assert_eq!((&failed[0]["worker"], &failed[0]["what"]), (&"B".into(), &"exited".into()), "{summary}");
    assert_eq!(failed[0]["exit_status"], 3, "{summary}");
    assert_eq!(failed[0]["message"], "worker exited with status 3 at frame 49", "{summary}");
}

#[test]
fn lockstep_names_a_worker_that_hangs_past_the_reply_timeout() {
    let content = content("lockstep-hang");
    let ran = anes(
        &[
            "lockstep",
            "--libretro",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "300",
            "--option",
            "anestest_fault=none",
            "--option-b",
            "anestest_fault=hang",
            "--reply-timeout",
            "2",
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    let summary = ran.json();
    assert_eq!(summary["frames_verified"], 49, "{summary}");
    let failed = failures(&summary);
    assert_eq!((&failed[0]["worker"], &failed[0]["what"]), (&"B".into(), &"hung".into()), "{summary}");
    assert_eq!(
        failed[0]["message"], "core hung at frame 49: no reply to frames within 2 s (the worker is killed)",
        "{summary}"
    );
    // The 2 s timeout, not the 60 s default (nor the test core's two minutes).
    assert!(ran.took < Duration::from_secs(30), "took {:?}", ran.took);
}

#[test]
fn the_canary_fails_when_its_workers_crash_and_counts_no_agreement_past_it() {
    let content = content("canary-segv");
    let ran = anes(
        &[
            "canary",
            "--libretro-baseline",
            TEST_CORE_A,
            "--libretro-candidate",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "1000",
            "--option",
            "anestest_fault=segv",
            "--json",
        ],
        LIMIT,
    );
    // `anes canary --help`: exit status 1 when a worker died.
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let summary = ran.json();
    assert_eq!(summary["result"], "worker_failed", "{summary}");
    assert_eq!(summary["frames_agreed"], 49, "{summary}");
    assert!(summary["divergence"].is_null(), "{summary}");
    let failed = failures(&summary);
    let named: Vec<_> = failed.iter().map(|f| (f["worker"].clone(), f["frame"].clone())).collect();
    assert_eq!(named, [("baseline".into(), 49.into()), ("candidate".into(), 49.into())], "{summary}");
    assert!(failed.iter().all(|f| f["what"] == "crashed" && f["signal"] == 11), "{summary}");

    // In text, and a hang within --reply-timeout.
    let ran = anes(
        &[
            "canary",
            "--libretro-baseline",
            TEST_CORE_A,
            "--libretro-candidate",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "1000",
            "--option",
            "anestest_fault=hang",
            "--reply-timeout",
            "2",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert!(ran.stdout.contains("frames agreed     49 of 1000\n"), "{}", ran.stdout);
    let line = format!(
        "FAILED            the baseline's worker ({TEST_CORE_A}): core hung at frame 49: no reply to frames within 2 s"
    );
    assert!(ran.stdout.contains(&line), "{}", ran.stdout);
    assert!(!ran.stdout.contains("the builds agree"), "{}", ran.stdout);
    assert!(ran.took < Duration::from_secs(30), "took {:?}", ran.took);
}

#[test]
fn a_shrink_whose_worker_b_crashes_names_it_instead_of_panicking() {
    let content = content("shrink-segv-b");
    let out = TempDir::named("cli-worker-failure-shrink-out");
    let ran = anes(
        &[
            "shrink",
            s(&content),
            "--libretro",
            TEST_CORE_A,
            "--option-b",
            "anestest_fault=segv",
            "--frames",
            "300",
            "--out",
            s(&out),
        ],
        LIMIT,
    );
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains(&format!(
            "error: worker B ({TEST_CORE_A}): core crashed (signal 11, SIGSEGV) at frame 49"
        )),
        "{}",
        ran.stderr
    );
    assert!(!out.join("repro.input").exists(), "no repro of a crash");
}

#[test]
fn a_shrink_whose_workers_both_crash_is_no_agreement() {
    // Both crash at frame 49, before the injected fault's frame: once "no divergence over 300
    // frames: nothing to shrink", exit status 0.
    let content = content("shrink-segv-both");
    let out = TempDir::named("cli-worker-failure-shrink-both-out");
    let ran = anes(
        &[
            "shrink",
            s(&content),
            "--libretro",
            TEST_CORE_A,
            "--option",
            "anestest_fault=segv",
            "--inject",
            "flip:system_ram:0x10:3@200",
            "--frames",
            "300",
            "--out",
            s(&out),
        ],
        LIMIT,
    );
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    assert_eq!(ran.code, Some(2), "{}\n{}", ran.stdout, ran.stderr);
    assert!(!ran.stdout.contains("no divergence"), "{}", ran.stdout);
    assert!(ran.stderr.contains("core crashed (signal 11, SIGSEGV) at frame 49"), "{}", ran.stderr);
}

/// Lines the test core printed to its stdout in `text`.
fn core_lines(text: &str) -> usize {
    text.lines().filter(|l| l.contains("a line of a core that talks on its stdout")).count()
}

#[test]
fn a_core_printing_to_stdout_runs_clean_through_the_audit() {
    // 120 bytes a frame: once the protocol broke after about 4 KB (`frame of 1701536102 bytes is
    // longer than the 16777216-byte limit`) and the audit had no result.
    let content = content("audit-stdout");
    let ran = anes(
        &[
            "audit",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "240",
            "--option",
            "anestest_fault=stdout",
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let report = ran.json();
    assert_eq!(report["reached"], "deterministic", "{report}");
    // What the cores printed went to stderr: at least every frame of one instance, many KB.
    assert!(core_lines(&ran.stderr) >= 240, "{} lines: {}", core_lines(&ran.stderr), ran.stderr.len());
    assert!(ran.stderr.contains("anes test core: loaded"), "the line printed at load");
    assert_eq!(core_lines(&ran.stdout), 0, "{}", ran.stdout);
}

#[test]
fn a_core_printing_to_stdout_runs_clean_through_lockstep() {
    let content = content("lockstep-stdout");
    let ran = anes(
        &[
            "lockstep",
            "--libretro",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "600",
            "--option",
            "anestest_fault=stdout",
            "--json",
        ],
        LIMIT,
    );
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    let summary = ran.json();
    assert_eq!(summary["frames_verified"], 600, "{summary}");
    assert!(summary["divergence"].is_null(), "{summary}");
    assert!(summary.get("worker_failures").is_none(), "{summary}");
    // Two workers, 600 frames each: about 140 KB on stderr, none on stdout.
    assert!(core_lines(&ran.stderr) >= 1200, "{} lines", core_lines(&ran.stderr));
}
