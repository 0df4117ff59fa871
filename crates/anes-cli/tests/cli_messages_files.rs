//! The messages of files and folders given on the command line, as a user meets them: what is at a
//! path is named for what it is, a bad folder is refused before the work that would fill it, and an
//! error names the path the user gave (never an internal temporary name).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::TempDir;

/// `anes args` run in `cwd`.
fn anes_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the anes binary runs")
}

/// A folder of the test's own, made.
fn scratch(name: &str) -> TempDir {
    TempDir::create(&format!("cli-messages-{name}"))
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn s(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// Exit status 2 and one stderr line that is `error: ` followed by `expected`.
#[track_caller]
fn assert_refused(output: &Output, expected: &str) {
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    assert!(err.starts_with(&format!("error: {expected}")), "{err:?} should start with error: {expected:?}");
}

#[test]
fn audit_names_content_that_is_not_a_regular_file() {
    let dir = scratch("audit-content");
    let folder = dir.join("d");
    std::fs::create_dir(&folder).unwrap();
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    for (content, kind) in [
        (folder.as_path(), "a directory"),
        (Path::new("/dev/zero"), "a character device"),
        (fifo.as_path(), "a FIFO (named pipe)"),
    ] {
        let output = anes_in(&dir, &["audit", "no-such-core.so", s(content)]);
        assert_refused(&output, &format!("{}: is {kind}, not a regular file", content.display()));
    }
    let missing = dir.join("missing.bin");
    assert_refused(
        &anes_in(&dir, &["audit", "no-such-core.so", s(&missing)]),
        &format!("{}: no such content file", missing.display()),
    );
}

#[test]
fn audit_refuses_a_shrink_path_that_is_not_a_folder_before_the_audit() {
    let dir = scratch("audit-shrink");
    let content = dir.join("content.bin");
    std::fs::write(&content, b"content").unwrap();
    let file = dir.join("afile");
    std::fs::write(&file, b"mine").unwrap();
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let input = repo("roms/demo/demo.input");
    for (shrink, kind) in [
        (file.as_path(), "a regular file"),
        (fifo.as_path(), "a FIFO (named pipe)"),
        (Path::new("/dev/null"), "a character device"),
    ] {
        // The core does not exist: refused for --shrink first shows no audit was started.
        let args = ["audit", "no-such-core.so", s(&content), "--input", s(&input), "--shrink", s(shrink)];
        let output = anes_in(&dir, &args);
        assert_refused(
            &output,
            &format!("--shrink {}: is {kind}, not a folder; a folder is expected", shrink.display()),
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"mine", "left alone");
}

#[test]
fn canary_names_a_golden_log_too_short_for_the_run() {
    let dir = scratch("canary-short-log");
    let empty = dir.join("empty.records");
    std::fs::write(&empty, b"").unwrap();
    let output = anes_in(&dir, &["canary", "--baseline-log", s(&empty), "--frames", "100"]);
    assert_refused(
        &output,
        &format!("{}: the golden log holds 0 records; the run needs 100", empty.display()),
    );
}

#[test]
fn canary_refuses_a_damaged_epoch_file() {
    let dir = scratch("canary-epoch");
    let golden = std::fs::read_to_string(repo("tests/golden/demo.records")).unwrap();
    let log = dir.join("demo.records");
    std::fs::write(&log, golden.lines().take(10).map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let epoch = dir.join("EPOCH");
    for text in ["zz", "99999999999999999999"] {
        std::fs::write(&epoch, format!("{text}\n")).unwrap();
        let output = anes_in(&dir, &["canary", "--baseline-log", s(&log), "--frames", "10"]);
        let holds = format!("{}: holds {text:?}, not an emulation epoch", epoch.display());
        assert_refused(&output, &format!("{}: {holds}", log.display()));
    }
}

#[test]
fn an_output_in_a_missing_folder_names_the_output_and_the_folder() {
    let dir = scratch("output-folder");
    let input = repo("roms/demo/demo.input");
    let cases: [&[&str]; 3] = [
        &["run", "--frames", "1", "--save-state", "nodir/x.out"],
        &["run", "--frames", "1", "--screenshot", "nodir/x.out"],
        &["movie", "convert", s(&input), "nodir/x.out"],
    ];
    for args in cases {
        let output = anes_in(&dir, args);
        assert_refused(&output, "nodir/x.out: the folder nodir does not exist");
    }
    std::fs::write(dir.join("afile"), b"").unwrap();
    let output = anes_in(&dir, &["run", "--frames", "1", "--save-state", "afile/x.out"]);
    assert_refused(&output, "afile/x.out: afile is a regular file, not a folder");
}

/// Outputs that long work ends in are refused before the work: a run of a trillion frames and the
/// 9-case golden corpus answer at once (each would take hours or seconds before writing).
#[test]
fn an_output_that_cannot_be_written_is_refused_before_the_work() {
    let dir = scratch("output-first");
    let started = std::time::Instant::now();
    for flag in ["--save-state", "--screenshot"] {
        let output = anes_in(&dir, &["run", "--frames", "1000000000000", flag, "nodir/x.out"]);
        assert_refused(&output, "nodir/x.out: the folder nodir does not exist");
    }
    let output = anes_in(&dir, &["run", "--frames", "1000000000000", "--save-state", s(&dir)]);
    assert_refused(&output, &format!("{}: is a directory; give a file path", dir.display()));
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    // The corpus's cases take 11 s in a debug build before the write would fail.
    let started = std::time::Instant::now();
    let corpus = repo("tests/canary/golden.toml");
    let output = anes_in(&dir, &["canary", "--corpus", s(&corpus), "--junit", "nodir/results.xml"]);
    assert_refused(&output, "nodir/results.xml: the folder nodir does not exist");
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "{:?}", started.elapsed());
}

#[test]
fn a_worker_named_without_a_slash_is_looked_up_on_path_and_the_fix_is_said() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("canary-bare-name");
    let script = dir.join("exit0.sh");
    std::fs::write(&script, b"#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let expected = "exit0.sh: cannot start it as a worker: not found on PATH; for the file in this folder write ./exit0.sh";
    assert_refused(&anes_in(&dir, &["canary", "--baseline", "exit0.sh", "--frames", "10"]), expected);
    let log = dir.join("demo.records");
    std::fs::write(&log, std::fs::read(repo("tests/golden/demo.records")).unwrap()).unwrap();
    let args = ["canary", "--baseline-log", s(&log), "--candidate", "exit0.sh", "--frames", "10"];
    assert_refused(&anes_in(&dir, &args), expected);
}

#[test]
fn force_refuses_a_folder_at_a_bundle_name_before_the_run() {
    let dir = scratch("bundle-folder");
    // The lockstep's own bundle name (a flip that diverges at once, so the bundle would be written).
    std::fs::create_dir_all(dir.join("f2/report.json")).unwrap();
    let args =
        ["lockstep", "--frames", "300", "--inject", "flip:ram:2:0@100000", "--report", "f2", "--force"];
    assert_refused(&anes_in(&dir, &args), "f2/report.json: exists and is a directory");
    // The canary's: canary.json.
    std::fs::create_dir_all(dir.join("f3/canary.json")).unwrap();
    let log = dir.join("demo.records");
    std::fs::write(&log, std::fs::read(repo("tests/golden/demo.records")).unwrap()).unwrap();
    let args = ["canary", "--baseline-log", s(&log), "--frames", "10", "--report", "f3", "--force"];
    assert_refused(&anes_in(&dir, &args), "f3/canary.json: exists and is a directory");
    assert!(dir.join("f3/canary.json").is_dir(), "left alone");
    // A comparison with another core at the end: its two pictures. Refused before the core is
    // even looked for (there is none at that path).
    for picture in ["anes.png", "other.png"] {
        let folder = format!("f4-{picture}");
        std::fs::create_dir_all(dir.join(&folder).join(picture)).unwrap();
        let rom = repo("roms/demo/demo.nes");
        let args = [
            "lockstep",
            s(&rom),
            "--versus",
            "./no-such-core.so",
            "--at-end",
            "--report",
            &folder,
            "--force",
        ];
        assert_refused(&anes_in(&dir, &args), &format!("{folder}/{picture}: exists and is a directory"));
    }
    let fifo_folder = dir.join("f5");
    std::fs::create_dir(&fifo_folder).unwrap();
    mkfifo(&fifo_folder.join("other.png"));
    let rom = repo("roms/demo/demo.nes");
    let args =
        ["lockstep", s(&rom), "--versus", "./no-such-core.so", "--at-end", "--report", "f5", "--force"];
    assert_refused(&anes_in(&dir, &args), "f5/other.png: exists and is a FIFO (named pipe)");
}
