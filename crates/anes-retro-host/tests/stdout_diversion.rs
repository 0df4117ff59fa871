//! `divert_stdout`: what a core prints to stdout goes to stderr, and what is written to the file it
//! returns is the process's stdout, whole. Run in a child process (this test binary again, asked for
//! this test alone), since the diversion rewires the process's descriptor 1: the test core is
//! loaded there with `anestest_fault=stdout` (a `printf` at load and in every frame, flushed), as in
//! an `anes worker --libretro` process.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anes_retro_host::{HostConfig, RetroCore, TEST_CORE_A};

/// Set in the child: run the child's part.
const CHILD: &str = "ANES_STDOUT_DIVERSION_CHILD";
/// What the child writes to the returned file: stands for the worker protocol.
const PROTOCOL: &[u8] = b"\x00\x00\x00\x08protocol";
/// Frames the child runs.
const FRAMES: usize = 200;

/// The child: diverts stdout, loads the test core that prints, runs it, writes the "protocol".
fn child(content: &Path) {
    let mut protocol = anes_retro_host::divert_stdout().expect("stdout diverted");
    let config = HostConfig {
        options: vec![("anestest_fault".to_owned(), "stdout".to_owned())],
        ..HostConfig::default()
    };
    let mut core = RetroCore::load(Path::new(TEST_CORE_A), content, &config).expect("the test core loads");
    for _ in 0..FRAMES {
        core.run_frame();
    }
    // Rust's own stdout goes the same way as the core's.
    println!("printed by Rust after the diversion");
    protocol.write_all(PROTOCOL).expect("the protocol written");
    protocol.flush().expect("flushed");
}

/// The test's folder, removed with what is in it when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn a_core_printing_to_stdout_prints_to_stderr_and_the_protocol_stays_whole() {
    if let Some(content) = std::env::var_os(CHILD) {
        child(Path::new(&content));
        return;
    }
    let scratch = Scratch(std::env::temp_dir().join(format!("anes-stdout-diversion-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let content = scratch.0.join("content.bin");
    std::fs::write(&content, b"anes test core content\n").unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_core_printing_to_stdout_prints_to_stderr_and_the_protocol_stays_whole"])
        .args(["--nocapture", "--test-threads", "1"])
        .env(CHILD, &content)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let (stdout, stderr) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the child ran longer than 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    let stderr_text = String::from_utf8_lossy(&stderr);
    assert!(status.success(), "{status}: {stderr_text}");
    // The test harness prints its own lines to stdout before the test runs; after the diversion,
    // the protocol's bytes are the only ones that reach it.
    let stdout_text = String::from_utf8_lossy(&stdout);
    let shown: String = stdout_text.chars().take(2000).collect();
    let at = stdout.windows(PROTOCOL.len()).position(|w| w == PROTOCOL);
    let at = at.unwrap_or_else(|| panic!("no protocol on stdout: {shown}"));
    assert_eq!(at + PROTOCOL.len(), stdout.len(), "something after the protocol: {shown}");
    assert!(!stdout_text.contains("anes test core"), "the core's lines on stdout: {shown}");
    assert!(!stdout_text.contains("printed by Rust"), "{shown}");
    let lines =
        stderr_text.lines().filter(|l| l.contains("a line of a core that talks on its stdout")).count();
    assert_eq!(lines, FRAMES, "one line a frame on stderr");
    assert!(stderr_text.contains("anes test core: loaded"), "{stderr_text}");
    assert!(stderr_text.contains("printed by Rust after the diversion"), "{stderr_text}");
}
