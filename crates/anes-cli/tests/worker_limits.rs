//! `anes worker` over real pipes against what a careless or hostile parent sends: a JSON line of 2 GiB,
//! a batch of a million frames, a stall of 49 days followed by a closed stdin. Both encodings have the
//! same limits (`anes_ops::worker::protocol`: `MAX_JSON_LINE_LEN`, `MAX_BATCH_FRAMES`,
//! `MAX_STALL_MILLIS`), and a closed stdin ends the worker. Every process started here is stopped by PID
//! on every exit path.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command as Process, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anes_ops::worker::protocol::{
    MAX_BATCH_FRAMES, MAX_STALL_MILLIS, Reply, WireInput, WorkerCommand, decode_reply, encode_command,
    read_frame, read_hello_frame,
};
use support::Guard;

/// Most memory a worker may hold at any point of these tests: the 32 MiB line limit plus the process
/// itself, with room to spare; the 2 GiB line reached 2.1 GB before the limit existed.
const RSS_LIMIT_BYTES: u64 = 100 << 20;

struct Worker {
    child: Guard,
    stdin: Option<ChildStdin>,
    replies: Receiver<Reply>,
    /// What the worker writes to stderr, read on its own thread: a test that breaks the protocol
    /// asserts on it instead of leaving the worker's `error:` line in the test log.
    stderr: Option<std::thread::JoinHandle<String>>,
}

impl Worker {
    fn start(protocol: &str) -> Worker {
        let mut child = Guard(
            Process::new(env!("CARGO_BIN_EXE_anes"))
                .args(["worker", "--protocol", protocol])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("the anes binary runs"),
        );
        let stdin = child.0.stdin.take();
        let stdout = child.0.stdout.take().unwrap();
        let mut stderr_pipe = child.0.stderr.take().unwrap();
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr_pipe, &mut text);
            text
        });
        let (tx, rx) = std::sync::mpsc::channel();
        // Replies are read on their own thread, so a worker that stops talking fails a timeout instead of
        // blocking the test.
        let json = protocol == "json-lines";
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            if json {
                for line in reader.lines() {
                    let Ok(line) = line else { return };
                    let reply = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
                    if tx.send(reply).is_err() {
                        return;
                    }
                }
            } else {
                let mut frame = Vec::new();
                let mut first = true;
                loop {
                    let read = if first {
                        read_hello_frame(&mut reader, &mut frame)
                    } else {
                        read_frame(&mut reader, &mut frame)
                    };
                    first = false;
                    if !matches!(read, Ok(true)) {
                        return;
                    }
                    if tx.send(decode_reply(&frame).unwrap()).is_err() {
                        return;
                    }
                }
            }
        });
        let worker = Worker { child, stdin, replies: rx, stderr: Some(stderr) };
        assert!(matches!(worker.next(), Reply::Hello { .. }));
        worker
    }

    fn next(&self) -> Reply {
        match self.replies.recv_timeout(Duration::from_secs(30)) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Timeout) => panic!("no reply within 30 s"),
            Err(RecvTimeoutError::Disconnected) => panic!("the worker's output ended"),
        }
    }

    fn error(&self) -> String {
        match self.next() {
            Reply::Error { message } => message,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    fn send(&mut self, command: &WorkerCommand, protocol: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        if protocol == "json-lines" {
            writeln!(stdin, "{}", serde_json::to_string(command).unwrap()).unwrap();
        } else {
            let mut bytes = Vec::new();
            encode_command(command, &mut bytes);
            stdin.write_all(&bytes).unwrap();
        }
        stdin.flush().unwrap();
    }

    /// Closes stdin and waits up to `limit` for the worker to exit; its status, or `None` if it did not.
    fn close_and_wait(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        self.stdin = None;
        let started = Instant::now();
        while started.elapsed() < limit {
            if let Some(status) = self.child.0.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Everything the worker wrote to stderr, once it has exited.
    fn stderr_after_exit(&mut self) -> String {
        assert!(self.child.0.try_wait().unwrap().is_some(), "the worker still runs");
        self.stderr.take().expect("read once").join().unwrap()
    }

    /// The worker's peak resident memory so far (`VmHWM`), in bytes.
    fn peak_rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.0.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }
}

#[test]
fn a_json_line_of_2_gib_is_refused_with_bounded_memory_and_the_session_goes_on() {
    let mut worker = Worker::start("json-lines");
    let mut stdin = worker.stdin.take().unwrap();
    stdin.write_all(br#"{"type":"inject","spec":""#).unwrap();
    // Streamed from one 1 MiB buffer: the test holds 1 MiB, not 2 GiB.
    let chunk = vec![b'a'; 1 << 20];
    let mut peak = 0;
    for i in 0..2048 {
        stdin.write_all(&chunk).unwrap();
        if i % 64 == 63 {
            peak = worker.peak_rss_bytes();
            // Fails early, and cheaply, where memory follows the line.
            assert!(peak < RSS_LIMIT_BYTES, "after {} MiB of one line the worker holds {peak} bytes", i + 1);
        }
    }
    stdin.write_all(b"\"}\n{\"type\":\"probe\"}\n").unwrap();
    stdin.flush().unwrap();
    worker.stdin = Some(stdin);
    let message = worker.error();
    assert!(message.contains("JSON line of more than"), "{message}");
    // The stream goes on after the long line: the next command is answered.
    assert!(worker.error().contains("no ROM loaded"));
    peak = peak.max(worker.peak_rss_bytes());
    eprintln!("peak RSS of the worker over a 2 GiB line: {:.1} MiB", peak as f64 / f64::from(1 << 20));
    assert!(peak < RSS_LIMIT_BYTES, "{peak}");
    let status = worker.close_and_wait(Duration::from_secs(10)).expect("the worker ends with its input");
    assert!(status.success(), "{status}");
}

#[test]
fn both_encodings_refuse_a_batch_over_the_limit_with_the_same_message() {
    let mut messages = Vec::new();
    for protocol in ["json-lines", "binary"] {
        let mut worker = Worker::start(protocol);
        // No ROM is loaded: a batch the limit lets through would be answered "no ROM loaded".
        let batch = WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 1_000_000] };
        worker.send(&batch, protocol);
        let message = worker.error();
        assert!(
            message.contains(&format!("1000000 frames in one batch (at most {MAX_BATCH_FRAMES})")),
            "{message}"
        );
        messages.push(message);
        let at_limit =
            WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); MAX_BATCH_FRAMES] };
        worker.send(&at_limit, protocol);
        assert!(worker.error().contains("no ROM loaded"), "a batch at the limit is read");
        assert!(worker.close_and_wait(Duration::from_secs(10)).is_some_and(|s| s.success()));
    }
    assert_eq!(messages[0], messages[1]);
}

#[test]
fn a_stall_is_bounded_and_ends_when_stdin_closes_in_both_encodings() {
    for protocol in ["json-lines", "binary"] {
        let mut worker = Worker::start(protocol);
        worker.send(&WorkerCommand::Stall { millis: u32::MAX }, protocol);
        let message = worker.error();
        assert!(
            message.contains(&format!("longer than the {MAX_STALL_MILLIS} ms limit")),
            "{protocol}: {message}"
        );
        // The longest stall there is, then the parent goes away.
        worker.send(&WorkerCommand::Stall { millis: MAX_STALL_MILLIS }, protocol);
        std::thread::sleep(Duration::from_millis(200));
        let started = Instant::now();
        let status = worker.close_and_wait(Duration::from_secs(10));
        assert!(status.is_some_and(|s| s.success()), "{protocol}: still stalled 10 s after stdin closed");
        eprintln!("{protocol}: the stalled worker ended {:?} after its stdin closed", started.elapsed());
    }
}

#[test]
fn a_damaged_binary_frame_ends_the_worker_with_the_reason() {
    let mut worker = Worker::start("binary");
    let mut bytes = Vec::new();
    encode_command(&WorkerCommand::Probe, &mut bytes);
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    let stdin = worker.stdin.as_mut().unwrap();
    stdin.write_all(&bytes).unwrap();
    stdin.flush().unwrap();
    let message = worker.error();
    assert!(message.contains("checksum mismatch"), "{message}");
    let status = worker.close_and_wait(Duration::from_secs(10)).expect("the worker ends");
    assert_eq!(status.code(), Some(2), "{status}");
    // Its one stderr line names the reason (expected here, so read rather than left in the log).
    let said = worker.stderr_after_exit();
    assert!(
        said.starts_with("error: worker protocol: frame of ") && said.contains("checksum mismatch"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
}
