//! The handshake, against a listening worker on 127.0.0.1 in this process.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::client::build_refusal;
use super::listen::{ConnectionEvent, ListenSettings, accept_retry_delay, serve_accepted, serve_listener};
use super::token::{HandshakeError, digests_equal, encode_token, read_and_check_token};
use super::{MAX_TOKEN_LEN, RemoteWorker, TOKEN_MAGIC};
use crate::protocol::{
    BuildInfo, PROTOCOL_VERSION, Reply, WorkerCommand, decode_reply, encode_command, encode_reply,
    read_frame, read_hello_frame,
};
use crate::{WorkerHandle, WorkerId, WorkerOutput};

const TOKEN: &[u8] = b"s3cret-token";

type Events = Arc<Mutex<Vec<ConnectionEvent>>>;

/// A listening worker on a free port of 127.0.0.1, serving on a thread of this test process.
fn worker(settings: ListenSettings) -> (String, Events) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let events: Events = Arc::default();
    let log = Arc::clone(&events);
    std::thread::spawn(move || {
        serve_listener(&listener, TOKEN, None, settings, move |e| log.lock().unwrap().push(e))
    });
    (address, events)
}

fn quick() -> ListenSettings {
    ListenSettings {
        handshake_timeout: Duration::from_millis(300),
        busy_grace: Duration::from_millis(200),
        max_handshakes: 4,
        idle_timeout: Duration::from_secs(5),
        refusal_log_interval: Duration::ZERO,
    }
}

fn connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
}

/// The first reply on `stream`, and whether the stream ended right after it.
fn first_reply(stream: &mut TcpStream) -> (Reply, bool) {
    let mut frame = Vec::new();
    assert!(read_hello_frame(stream, &mut frame).unwrap(), "the worker said nothing");
    let reply = decode_reply(&frame).unwrap();
    let mut rest = Vec::new();
    let closed = matches!(&reply, Reply::Error { .. }) && {
        // An error frame's checksum follows it; then the end.
        let _ = stream.read_to_end(&mut rest);
        rest.len() <= crate::protocol::FRAME_CHECKSUM_LEN
    };
    (reply, closed)
}

pub(super) fn refusals(events: &Events) -> Vec<HandshakeError> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ConnectionEvent::Refused { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .collect()
}

pub(super) fn wait_for(what: &str, mut probe: impl FnMut() -> bool) {
    let start = Instant::now();
    while !probe() {
        assert!(start.elapsed() < Duration::from_secs(10), "no {what} within 10 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_right_token_gets_a_hello_and_a_session() {
    let (address, events) = worker(quick());
    let mut stream = connect(&address);
    let mut bytes = Vec::new();
    encode_token(TOKEN, &mut bytes);
    encode_command(
        &WorkerCommand::Load {
            rom: anes_fixtures::tiny_rom(),
            checkpoint_every: 60,
            region: None,
            power_on: None,
        },
        &mut bytes,
    );
    stream.write_all(&bytes).unwrap();
    assert!(matches!(first_reply(&mut stream).0, Reply::Hello { .. }));
    let mut frame = Vec::new();
    assert!(read_frame(&mut stream, &mut frame).unwrap());
    assert!(matches!(decode_reply(&frame).unwrap(), Reply::Loaded { .. }));
    assert!(refusals(&events).is_empty());
}

#[test]
fn a_wrong_token_is_refused_before_any_command_is_read() {
    let (address, events) = worker(quick());
    let mut stream = connect(&address);
    let mut bytes = Vec::new();
    encode_token(b"s3cret-tokem", &mut bytes);
    // A command right behind the token: it must never be served.
    encode_command(
        &WorkerCommand::Load {
            rom: anes_fixtures::tiny_rom(),
            checkpoint_every: 60,
            region: None,
            power_on: None,
        },
        &mut bytes,
    );
    stream.write_all(&bytes).unwrap();
    let (reply, closed) = first_reply(&mut stream);
    assert_eq!(reply, Reply::Error { message: "refused: wrong token".into() });
    assert!(closed, "nothing follows the refusal");
    wait_for("the refusal logged", || !refusals(&events).is_empty());
    assert_eq!(refusals(&events), [HandshakeError::WrongToken]);
    assert!(
        !events.lock().unwrap().iter().any(|e| matches!(e, ConnectionEvent::SessionStarted { .. })),
        "no session for a wrong token"
    );
}

#[test]
fn a_silent_client_is_dropped_after_the_handshake_timeout() {
    let (address, events) = worker(quick());
    let mut stream = connect(&address);
    let start = Instant::now();
    let (reply, closed) = first_reply(&mut stream);
    let waited = start.elapsed();
    assert_eq!(reply, Reply::Error { message: "refused: no token within 0.3 s".into() });
    assert!(closed);
    assert!(waited >= Duration::from_millis(250) && waited < Duration::from_secs(5), "{waited:?}");
    // A client that sends half a token and stops is timed out alike.
    let mut half = connect(&address);
    half.write_all(&40u32.to_le_bytes()).unwrap();
    half.write_all(&TOKEN_MAGIC).unwrap();
    assert_eq!(first_reply(&mut half).0, Reply::Error { message: "refused: no token within 0.3 s".into() });
    wait_for("both refusals logged", || refusals(&events).len() == 2);
}

#[test]
fn a_second_coordinator_is_refused_while_one_is_connected() {
    let (address, events) = worker(quick());
    let mut first = connect(&address);
    let mut token = Vec::new();
    encode_token(TOKEN, &mut token);
    first.write_all(&token).unwrap();
    assert!(matches!(first_reply(&mut first).0, Reply::Hello { .. }));
    let mut second = connect(&address);
    second.write_all(&token).unwrap();
    let (reply, closed) = first_reply(&mut second);
    assert_eq!(reply, Reply::Error { message: "refused: busy: another coordinator is connected".into() });
    assert!(closed);
    // The first session goes on, and once it ends the next coordinator is served.
    let mut bytes = Vec::new();
    encode_command(
        &WorkerCommand::Load {
            rom: anes_fixtures::tiny_rom(),
            checkpoint_every: 60,
            region: None,
            power_on: None,
        },
        &mut bytes,
    );
    first.write_all(&bytes).unwrap();
    let mut frame = Vec::new();
    assert!(read_frame(&mut first, &mut frame).unwrap());
    assert!(matches!(decode_reply(&frame).unwrap(), Reply::Loaded { .. }));
    first.shutdown(Shutdown::Both).unwrap();
    let mut third = connect(&address);
    third.write_all(&token).unwrap();
    assert!(matches!(first_reply(&mut third).0, Reply::Hello { .. }));
    assert_eq!(refusals(&events), [HandshakeError::Busy]);
}

#[test]
fn junk_is_a_typed_refusal() {
    let (address, events) = worker(quick());
    let mut damaged = Vec::new();
    encode_token(TOKEN, &mut damaged);
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    let mut not_a_token = Vec::new();
    encode_command(&WorkerCommand::Snapshot, &mut not_a_token);
    let cases: [(&[u8], HandshakeError); 4] = [
        (
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
            HandshakeError::TooLong { len: 0x2054_4547, max: 4 + MAX_TOKEN_LEN },
        ),
        (&[0xFF; 64], HandshakeError::TooLong { len: u32::MAX as usize, max: 4 + MAX_TOKEN_LEN }),
        (&damaged, HandshakeError::Damaged),
        (&not_a_token, HandshakeError::NotAToken { found: vec![0x04] }),
    ];
    for (i, (junk, expected)) in cases.iter().enumerate() {
        let mut stream = connect(&address);
        stream.write_all(junk).unwrap();
        let (reply, closed) = first_reply(&mut stream);
        assert_eq!(reply, Reply::Error { message: format!("refused: {expected}") });
        assert!(closed);
        wait_for("the refusal logged", || refusals(&events).len() == i + 1);
        assert_eq!(&refusals(&events)[i], expected);
    }
    // Closed half-way: typed too.
    let mut stream = connect(&address);
    stream.write_all(&8u32.to_le_bytes()).unwrap();
    stream.shutdown(Shutdown::Write).unwrap();
    wait_for("the refusal logged", || refusals(&events).len() == cases.len() + 1);
    assert!(matches!(refusals(&events)[cases.len()], HandshakeError::Closed { .. }));
}

#[test]
fn a_remote_worker_reports_its_hello_its_records_and_the_lost_connection() {
    let (address, _events) = worker(quick());
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut remote = RemoteWorker::connect(&address, TOKEN, None, WorkerId::A, 1, tx.clone()).unwrap();
    remote.send(WorkerCommand::Load {
        rom: anes_fixtures::tiny_rom(),
        checkpoint_every: 60,
        region: None,
        power_on: None,
    });
    let mut replies = Vec::new();
    while replies.len() < 2 {
        match rx.recv_timeout(Duration::from_secs(10)).unwrap().body {
            WorkerOutput::Replies(r) => replies.extend(r),
            WorkerOutput::Exited { reason } => panic!("exited: {reason}"),
        }
    }
    assert!(matches!(replies[0], Reply::Hello { .. }));
    assert!(matches!(replies[1], Reply::Loaded { .. }));
    // A crash drill drops the connection: the pipeline hears an exit, as from a dead process.
    remote.crash();
    let exit = loop {
        if let WorkerOutput::Exited { reason } = rx.recv_timeout(Duration::from_secs(10)).unwrap().body {
            break reason;
        }
    };
    assert!(exit.contains(&address), "{exit}");
    remote.stop();
    // The next incarnation connects again at once: the worker's session ended with the connection.
    let mut again = RemoteWorker::connect(&address, TOKEN, None, WorkerId::A, 2, tx).unwrap();
    let message = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    assert_eq!(message.incarnation, 2);
    assert!(
        matches!(&message.body, WorkerOutput::Replies(r) if matches!(r[0], Reply::Hello { .. })),
        "{message:?}"
    );
    again.stop();
    // Nobody listening: a failed start, not a hang.
    drop(again);
    let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    assert!(
        RemoteWorker::connect(&closed, TOKEN, None, WorkerId::B, 1, crossbeam_channel::unbounded().0)
            .is_err()
    );
    assert!(
        RemoteWorker::connect(
            "no-such-host.invalid:9660",
            TOKEN,
            None,
            WorkerId::B,
            1,
            crossbeam_channel::unbounded().0
        )
        .is_err()
    );
}

#[test]
fn a_wrong_token_reaches_the_pipeline_as_an_exit_naming_the_refusal() {
    let (address, _events) = worker(quick());
    let (tx, rx) = crossbeam_channel::unbounded();
    let _remote = RemoteWorker::connect(&address, b"not-the-token", None, WorkerId::B, 1, tx).unwrap();
    match rx.recv_timeout(Duration::from_secs(10)).unwrap().body {
        WorkerOutput::Exited { reason } => {
            assert!(reason.contains("it refused: refused: wrong token"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

fn authenticate(address: &str) -> TcpStream {
    let mut stream = connect(address);
    let mut token = Vec::new();
    encode_token(TOKEN, &mut token);
    stream.write_all(&token).unwrap();
    stream
}

fn sessions_ended(events: &Events) -> Vec<(String, Option<String>)> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ConnectionEvent::SessionEnded { peer, error } => Some((peer.clone(), error.clone())),
            _ => None,
        })
        .collect()
}

/// The next message of `rx`: a reply batch's first reply, or the exit's reason.
fn next_output(rx: &crossbeam_channel::Receiver<crate::WorkerMessage>) -> Result<Reply, String> {
    match rx.recv_timeout(Duration::from_secs(10)).expect("the remote worker reports").body {
        WorkerOutput::Replies(r) => Ok(r[0].clone()),
        WorkerOutput::Exited { reason } => Err(reason),
    }
}

#[test]
fn a_silent_coordinator_is_dropped_after_the_idle_timeout_and_a_waiting_one_takes_over() {
    // A coordinator that vanished behind a partition: authenticated, then never a byte again.
    let settings = ListenSettings {
        idle_timeout: Duration::from_millis(400),
        busy_grace: Duration::from_secs(3),
        ..quick()
    };
    let (address, events) = worker(settings);
    let mut vanished = authenticate(&address);
    assert!(matches!(first_reply(&mut vanished).0, Reply::Hello { .. }));
    let vanished_peer = vanished.local_addr().unwrap().to_string();
    // The restarted coordinator arrives while the dead session is still open: it waits, and is
    // served once the session is dropped.
    let started = Instant::now();
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut restarted = RemoteWorker::connect(&address, TOKEN, None, WorkerId::A, 1, tx).unwrap();
    assert!(matches!(next_output(&rx), Ok(Reply::Hello { .. })));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(3), "{waited:?}");
    // The slot is freed just before the end is logged.
    wait_for("the dead session's end logged", || !sessions_ended(&events).is_empty());
    let ended = sessions_ended(&events);
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].0, vanished_peer);
    assert!(ended[0].1.as_deref().is_some_and(|e| e.contains("idle timeout")), "{ended:?}");
    // The dropped coordinator was told why, then the connection closed.
    let mut frame = Vec::new();
    assert!(read_frame(&mut vanished, &mut frame).unwrap());
    assert!(
        matches!(decode_reply(&frame).unwrap(), Reply::Error { message } if message.contains("idle timeout"))
    );
    assert!(!read_frame(&mut vanished, &mut frame).unwrap_or(false));
    restarted.stop();
}

#[test]
fn a_quiet_live_coordinator_keeps_its_session_by_heartbeats_and_a_second_one_is_refused() {
    let settings = ListenSettings { idle_timeout: Duration::from_millis(300), ..quick() };
    let (address, events) = worker(settings);
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut live =
        RemoteWorker::connect_with(&address, TOKEN, None, WorkerId::A, 1, tx, Duration::from_millis(50))
            .unwrap();
    assert!(matches!(next_output(&rx), Ok(Reply::Hello { .. })));
    // Four idle timeouts without a command.
    std::thread::sleep(Duration::from_millis(1200));
    let mut second = authenticate(&address);
    let (reply, closed) = first_reply(&mut second);
    assert_eq!(reply, Reply::Error { message: "refused: busy: another coordinator is connected".into() });
    assert!(closed);
    // The first session still answers.
    live.send(WorkerCommand::Load {
        rom: anes_fixtures::tiny_rom(),
        checkpoint_every: 60,
        region: None,
        power_on: None,
    });
    assert!(matches!(next_output(&rx), Ok(Reply::Loaded { .. })));
    assert!(sessions_ended(&events).is_empty(), "{:?}", sessions_ended(&events));
    live.stop();
}

#[test]
fn accept_retries_wait_10_ms_doubling_up_to_1_s() {
    let waits: Vec<u128> = (1..=9).map(|n| accept_retry_delay(n).as_millis()).collect();
    assert_eq!(waits, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    assert_eq!(accept_retry_delay(u32::MAX), Duration::from_secs(1));
    assert_eq!(accept_retry_delay(0), Duration::from_millis(10));
}

#[test]
fn failed_accepts_are_logged_and_retried_and_the_listener_serves_on() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let events: Events = Arc::default();
    let sleeps: Arc<Mutex<Vec<Duration>>> = Arc::default();
    let (log, slept) = (Arc::clone(&events), Arc::clone(&sleeps));
    // Out of file descriptors three times (EMFILE), a connection aborted once, then connections.
    let mut failures = vec![
        std::io::Error::from_raw_os_error(103),
        std::io::Error::from_raw_os_error(24),
        std::io::Error::from_raw_os_error(24),
        std::io::Error::from_raw_os_error(24),
    ];
    std::thread::spawn(move || {
        serve_accepted(
            move || failures.pop().map_or_else(|| listener.accept(), Err),
            move |d| slept.lock().unwrap().push(d),
            TOKEN,
            None,
            quick(),
            move |e| log.lock().unwrap().push(e),
        )
    });
    let mut stream = authenticate(&address);
    assert!(matches!(first_reply(&mut stream).0, Reply::Hello { .. }));
    let failed: Vec<(String, Duration)> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ConnectionEvent::AcceptFailed { error, retry_in } => Some((error.clone(), *retry_in)),
            _ => None,
        })
        .collect();
    let ms = Duration::from_millis;
    assert_eq!(failed.iter().map(|f| f.1).collect::<Vec<_>>(), [ms(10), ms(20), ms(40), ms(80)]);
    assert!(failed[0].0.contains("Too many open files"), "{failed:?}");
    assert!(failed[3].0.contains("connection abort"), "{failed:?}");
    assert_eq!(*sleeps.lock().unwrap(), [ms(10), ms(20), ms(40), ms(80)]);
}

/// A worker of another build: speaks the protocol, accepts any token, and says hello as `build`.
fn worker_of_build(build: BuildInfo) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = Vec::new();
        encode_reply(&Reply::Hello { protocol_version: PROTOCOL_VERSION, build }, &mut hello);
        stream.write_all(&hello).unwrap();
        // Serves nothing; holds the connection until the coordinator closes it.
        let _ = stream.read_to_end(&mut Vec::new());
    });
    address
}

#[test]
fn a_worker_of_another_build_or_epoch_is_refused_before_its_hello_reaches_the_pipeline() {
    let ours = BuildInfo::current();
    let cases = [
        (BuildInfo { version: "0.0.9".into(), ..ours.clone() }, "another build: 0.0.9"),
        (BuildInfo { git_commit: Some("0badc0de".into()), ..ours.clone() }, "(commit 0badc0de"),
        (BuildInfo { emulation_epoch: ours.emulation_epoch + 1, ..ours.clone() }, "another emulation epoch"),
    ];
    for (build, expected) in cases {
        let address = worker_of_build(build);
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut remote = RemoteWorker::connect(&address, TOKEN, None, WorkerId::B, 1, tx).unwrap();
        // The first thing the pipeline hears is the exit: never a hello (worker_up stays 0).
        let reason = next_output(&rx).unwrap_err();
        assert!(reason.contains(expected) && reason.contains("this coordinator runs"), "{reason}");
        assert!(reason.contains(&address), "{reason}");
        remote.stop();
    }
    assert_eq!(build_refusal(&ours, &BuildInfo::current()), None);
}

#[test]
fn digests_compare_equal_only_when_equal() {
    let a = blake3::hash(b"token");
    assert!(digests_equal(&a, &blake3::hash(b"token")));
    assert!(!digests_equal(&a, &blake3::hash(b"token ")));
    assert!(!digests_equal(&a, &blake3::hash(b"")));
}

proptest! {
    #[test]
    fn arbitrary_bytes_before_the_token_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2100)) {
        let expected = blake3::hash(TOKEN);
        let mut reader = &bytes[..];
        let result = read_and_check_token(&mut reader, &mut |_| Ok(()), Duration::from_secs(1), &expected);
        prop_assert!(result.is_err());
    }
}

/// `n` threads each holding one connection to `address` that sends nothing, re-opened as soon as the
/// worker drops it, until `stop`; each counts its re-openings.
fn silent_connections(
    address: &str,
    n: usize,
    stop: &Arc<std::sync::atomic::AtomicBool>,
) -> Vec<std::thread::JoinHandle<u64>> {
    (0..n)
        .map(|_| {
            let (address, stop) = (address.to_string(), Arc::clone(stop));
            std::thread::spawn(move || {
                let mut opened = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(mut stream) = TcpStream::connect(&address) else { continue };
                    opened += 1;
                    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
                    let mut sink = [0; 256];
                    // Held until the worker closes it (EOF or reset) or the test ends.
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        match stream.read(&mut sink) {
                            Ok(0) => break,
                            Ok(_) => {}
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                                ) => {}
                            Err(_) => break,
                        }
                    }
                }
                opened
            })
        })
        .collect()
}

#[test]
fn silent_connections_never_keep_a_coordinator_out() {
    // The defaults: 16 handshake slots.
    let (address, events) = worker(ListenSettings::default());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let attackers = silent_connections(&address, 16, &stop);
    std::thread::sleep(Duration::from_millis(300));
    let mut waits = Vec::new();
    for incarnation in 1..=5 {
        let started = Instant::now();
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut remote = RemoteWorker::connect(&address, TOKEN, None, WorkerId::A, incarnation, tx)
            .expect("connecting to the worker");
        match next_output(&rx) {
            Ok(Reply::Hello { .. }) => {}
            other => panic!("attempt {incarnation}: {other:?} after {:?}", started.elapsed()),
        }
        let waited = started.elapsed();
        assert!(waited < Duration::from_secs(2), "attempt {incarnation}: the hello took {waited:?}");
        waits.push(waited);
        remote.stop();
        // Past the 2 s token timeout in all: the silent ones are also dropped and re-opened on time.
        std::thread::sleep(Duration::from_millis(600));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reopened: u64 = attackers.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!("16 silent connections (opened {reopened} times): hellos after {waits:?}");
    // The silent ones lost their slots, and the log says so once (one address, within the 10 s
    // interval) however many times it happened.
    assert!(reopened > 16, "no silent connection was ever dropped");
    assert_eq!(refusals(&events), [HandshakeError::Evicted], "{:?}", events.lock().unwrap());
}
