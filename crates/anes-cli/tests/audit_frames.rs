//! `anes audit`'s frames: a run too short for a check to measure anything is refused before any
//! worker starts; checks 1 and 5 look at every frame, not only at the run-ahead windows' starts;
//! every frame it prints is counted from 1 (frame N: the N-th frame from power-on; 0: power-on), as
//! the JSON's. Every `anes` run here is bounded in time and killed by PID past it.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anes_retro_host::TEST_CORE_A;

mod support;
use support::{Guard, TempFile};

/// Debian's multiarch folder of libretro cores.
const DEBIAN_CORES: &str = "/usr/lib/x86_64-linux-gnu/libretro";

/// Longer than any audit here takes (a few seconds in a debug build).
const LIMIT: Duration = Duration::from_secs(120);

/// An `anes` run: (exit status, stdout, stderr), killed by PID after [`LIMIT`].
fn anes(args: &[&str]) -> (Option<i32>, String, String) {
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("audit-frames-cwd");
    std::fs::create_dir_all(&cwd).expect("a scratch folder");
    let child = Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the anes binary starts");
    let mut guard = Guard(child);
    // Read both pipes on threads, so a full pipe never stalls the child past the deadline.
    let mut out = guard.0.stdout.take().expect("piped");
    let mut err = guard.0.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = guard.0.try_wait().expect("the child's status") {
            break status;
        }
        assert!(start.elapsed() < LIMIT, "anes {args:?} ran past {LIMIT:?}: killed");
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), out.join().expect("stdout"), err.join().expect("stderr"))
}

fn content(name: &str) -> TempFile {
    TempFile::write(&format!("cli-audit-frames-{name}"), "content.bin", b"anes test core content\n")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn json(stdout: &str, stderr: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout} / {stderr}"))
}

/// Without the refusal, `--frames 0` passed all five checks (`reaches deterministic`, exit 0) and
/// `--fresh-at 1000 --frames 10` was cut to 10, check 4 running no frame after the hand-over.
#[test]
fn a_run_too_short_to_measure_is_refused_before_any_worker_starts() {
    let content = content("short");
    for (args, says) in [
        (
            &["--frames", "0"][..],
            "--frames 0 is too short: a run of no frame gives no check anything to measure, and check 3 (run-ahead) runs whole windows of --runahead 2 frames; the audit needs --frames 2 or more",
        ),
        (
            &["--frames", "5", "--runahead", "10"][..],
            "--frames 5 is too short: check 3 (run-ahead) runs whole windows of --runahead 10 frames; the audit needs --frames 10 or more",
        ),
        (
            &["--fresh-at", "1000", "--frames", "10"][..],
            "--fresh-at 1000 is not before --frames 10: check 4 (fresh instance) would run no frame after the hand-over; it needs --fresh-at 9 or less",
        ),
        (&["--fresh-at", "10", "--frames", "10"][..], "--fresh-at 10 is not before --frames 10"),
    ] {
        let mut all = vec!["audit", TEST_CORE_A, s(&content)];
        all.extend_from_slice(args);
        let (status, stdout, stderr) = anes(&all);
        assert_eq!(status, Some(2), "{args:?}: {stdout} / {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "no table, no verdict: {stdout}");
    }
    // The shortest run that measures every check: one window, the hand-over before its last frame.
    let (status, stdout, stderr) = anes(&["audit", TEST_CORE_A, s(&content), "--frames", "2", "--json"]);
    assert_eq!(status, Some(0), "{stderr}");
    let report = json(&stdout, &stderr);
    assert_eq!(report["reached"], "deterministic", "{report}");
}

/// The test core's state grows by a byte every 60 frames. Without checking every frame, windows of
/// 7 saw it at their start after it, frame 63.
#[test]
fn a_growing_state_is_caught_at_its_frame_whatever_the_window() {
    let content = content("grow");
    for runahead in ["2", "7"] {
        let (_, stdout, stderr) = anes(&[
            "audit",
            TEST_CORE_A,
            s(&content),
            "--frames",
            "130",
            "--runahead",
            runahead,
            "--option",
            "anestest_fault=grow",
            "--json",
        ]);
        let report = json(&stdout, &stderr);
        let size = &report["checks"][4];
        assert_eq!(size["finding"]["frame"], 60, "--runahead {runahead}: {size}");
        let detail = size["detail"].as_str().unwrap();
        assert!(detail.ends_with("; then 333 from frame 60, 334 from frame 120"), "{detail}");
        assert!(detail.contains("frames 0-130 (131 states; frame 0 is power-on)"), "{detail}");
    }
}

/// The table's frames agree with the JSON's: the window from the state of frame 0 runs frames 1-2,
/// and its first difference is at frame 1 (the texts once said "frames 0-1" there).
#[test]
fn the_tables_frames_are_counted_as_the_jsons() {
    let content = content("leak");
    let args = ["audit", TEST_CORE_A, s(&content), "--frames", "40", "--option", "anestest_fault=leak"];
    let (status, table, stderr) = anes(&args);
    assert_eq!(status, Some(0), "no .info claims anything: {stderr}");
    assert!(
        table.contains(
            "first at frame 1: the second run of frames 1-2 after unserializing the state of frame 0, against the first"
        ),
        "{table}"
    );
    assert!(
        table.contains("20 windows of 2 frames over frames 1-40, each run three times; 20 differed"),
        "{table}"
    );
    assert!(table.contains("serialized twice at frames 0-40 (41 states; frame 0 is power-on)"), "{table}");
    assert!(table.contains("state of frame 20 into a fresh instance, run to frame 40"), "{table}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let (_, stdout, stderr) = anes(&with_json);
    let report = json(&stdout, &stderr);
    assert_eq!(report["checks"][2]["finding"]["frame"], 1, "{report}");
}

/// The test core aborts in its 100th frame (`machine.frame == 100` after the increment): frame 100,
/// not the 0-based 99 the error once named.
#[test]
fn a_crash_is_named_at_the_frame_it_ran() {
    let content = content("crash");
    let (status, _, stderr) =
        anes(&["audit", TEST_CORE_A, s(&content), "--frames", "240", "--option", "anestest_fault=crash"]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stderr.contains("instance A of the audit failed outright at run_frame, frame 100: "), "{stderr}");
}

/// Debian's Nestopia serializes fewer bytes after its first `retro_run` than at power-on: frame 1,
/// whatever the window (it was reported at the first window start after it: frame 2 with windows of
/// 2, frame 10 with windows of 10).
#[test]
#[ignore = "needs libretro-nestopia (scripts/install-libretro-cores.sh)"]
fn nestopias_size_change_is_at_frame_1() {
    let core = Path::new(DEBIAN_CORES).join("nestopia_libretro.so");
    assert!(core.is_file(), "needs {}: scripts/install-libretro-cores.sh installs it", core.display());
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../roms/demo/demo.nes");
    for runahead in ["2", "10"] {
        let (_, stdout, stderr) =
            anes(&["audit", s(&core), s(&demo), "--frames", "60", "--runahead", runahead, "--json"]);
        let report = json(&stdout, &stderr);
        assert_eq!(report["checks"][4]["finding"]["frame"], 1, "--runahead {runahead}: {report}");
    }
}
