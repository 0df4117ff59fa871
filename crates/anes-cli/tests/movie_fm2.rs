//! `anes movie fm2` of a stream declaring 2^32 - 1 frames, whose movie is some 99 GB of text: the
//! export is read from a FIFO while the process's peak memory is watched, and must stay under 64 MiB
//! whatever the length (it held the whole movie in memory: 1.35 GiB for 60 M frames). The child is
//! stopped by PID on every exit path; the folder is removed on every exit path.

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anes_core::input::buttons;
use anes_core::movie::{FrameInput, InputStream};
use support::{Guard, TempDir};

/// The bound the export must stay under, whatever the stream's length.
const PEAK_LIMIT_BYTES: u64 = 64 << 20;
/// Movie text read before stopping: 4 GiB, three times the 60 M frames (1.38 GB) of the report.
const READ_BYTES: u64 = 4 << 30;

/// The process's peak resident memory (`VmHWM`), if it is still there.
fn peak_rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib << 10)
}

fn scratch(name: &str) -> TempDir {
    TempDir::create(&format!("cli-{name}"))
}

#[test]
fn a_movie_of_4_billion_frames_is_written_in_bounded_memory() {
    let scratch = scratch("fm2-memory");
    let dir: &Path = &scratch.0;
    // Three runs, 2^32 - 1 frames in all: a few bytes of input stream.
    let mut stream = InputStream::new();
    stream.push_repeated(FrameInput::default(), 1000);
    stream.push_repeated(FrameInput::buttons(buttons::A | buttons::RIGHT, buttons::START), 7);
    stream.push_repeated(FrameInput::default(), u32::MAX as usize - 1007);
    assert_eq!(stream.len(), u32::MAX as usize);
    let input = dir.join("long.input");
    std::fs::write(&input, stream.to_bytes()).unwrap();
    let fifo = dir.join("movie.fm2");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Read and write: opening a FIFO so never waits, and the export's open finds a reader.
    let mut reader = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let mut unblock = reader.try_clone().unwrap();
    let mut child = Guard(
        Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(["movie", "fm2", input.to_str().unwrap(), fifo.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the anes binary runs"),
    );
    let pid = child.0.id();
    let (read, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
    let head = {
        let (read, stop) = (Arc::clone(&read), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut head = Vec::new();
            let mut buffer = vec![0; 1 << 20];
            while !stop.load(Ordering::Relaxed) {
                let Ok(n) = reader.read(&mut buffer) else { break };
                let room = (32 << 10) - head.len().min(32 << 10);
                head.extend_from_slice(&buffer[..n.min(room)]);
                read.fetch_add(n as u64, Ordering::Relaxed);
            }
            head
        })
    };
    let started = Instant::now();
    let mut peak = 0;
    while read.load(Ordering::Relaxed) < READ_BYTES {
        if let Some(status) = child.0.try_wait().unwrap() {
            let mut stderr = String::new();
            let _ = child.0.stderr.take().unwrap().read_to_string(&mut stderr);
            panic!("the export ended ({status}) after {} bytes: {stderr}", read.load(Ordering::Relaxed));
        }
        peak = peak.max(peak_rss_bytes(pid).unwrap_or(0));
        // Stopped as soon as it is over: a movie built in memory would take the machine's.
        assert!(
            peak < PEAK_LIMIT_BYTES,
            "peak memory {} MiB after {} MiB of movie",
            peak >> 20,
            read.load(Ordering::Relaxed) >> 20
        );
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "{} bytes in 240 s",
            read.load(Ordering::Relaxed)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let elapsed = started.elapsed();
    peak = peak.max(peak_rss_bytes(pid).unwrap_or(0));
    drop(child);
    stop.store(true, Ordering::Relaxed);
    let _ = unblock.write_all(b"\n");
    let head = String::from_utf8(head.join().unwrap()).unwrap();
    let moved = read.load(Ordering::Relaxed);
    eprintln!(
        "movie fm2 of 2^32 - 1 frames: {} MiB read in {:.1} s, peak memory {:.1} MiB",
        moved >> 20,
        elapsed.as_secs_f64(),
        peak as f64 / f64::from(1 << 20)
    );
    assert!(peak < PEAK_LIMIT_BYTES && peak > 0, "peak {peak}");
    assert!(head.starts_with("version 3\n"), "{head}");
    // The log after the header: 1000 empty frames, 7 with buttons (RLDUTSBA order), empty ones again.
    let log: Vec<&str> = head.lines().skip_while(|l| !l.starts_with('|')).take(1100).collect();
    assert_eq!(log.len(), 1100);
    for (frame, line) in log.iter().enumerate() {
        let expected =
            if (1000..1007).contains(&frame) { "|0|R......A|....T...||" } else { "|0|........|........||" };
        assert_eq!(*line, expected, "frame {frame}");
    }
}
