//! TLS between a coordinator and a listening worker on 127.0.0.1, with self-signed pairs generated
//! here (rcgen) into a temporary folder removed on every exit path.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::listen::{ConnectionEvent, ListenSettings, serve_listener};
use super::tests::{refusals, wait_for};
use super::tls::{ClientTls, TlsError, client_config, server_config};
use super::token::{HandshakeError, encode_token};
use super::{HANDSHAKE_TIMEOUT, RemoteWorker};
use crate::protocol::{
    Reply, WireInput, WorkerCommand, decode_reply, encode_command, read_frame, read_hello_frame,
};
use crate::{WorkerHandle, WorkerId, WorkerMessage, WorkerOutput};

const TOKEN: &[u8] = b"tls-test-token";

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir = std::env::temp_dir().join(format!("anes-tls-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A self-signed certificate for `names` and its key, as PEM files `{stem}.crt` and `{stem}.key`.
fn self_signed(dir: &Path, stem: &str, names: &[&str]) -> (PathBuf, PathBuf) {
    let pair =
        rcgen::generate_simple_self_signed(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    let (cert, key) = (dir.join(format!("{stem}.crt")), dir.join(format!("{stem}.key")));
    std::fs::write(&cert, pair.cert.pem()).unwrap();
    std::fs::write(&key, pair.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

type Events = Arc<Mutex<Vec<ConnectionEvent>>>;

fn tls_worker(cert: &Path, key: &Path) -> (String, Events) {
    let config = server_config(cert, key).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let events: Events = Arc::default();
    let log = Arc::clone(&events);
    let settings = ListenSettings {
        handshake_timeout: Duration::from_millis(500),
        refusal_log_interval: Duration::ZERO,
        ..ListenSettings::default()
    };
    std::thread::spawn(move || {
        serve_listener(&listener, TOKEN, Some(config), settings, move |e| log.lock().unwrap().push(e))
    });
    (address, events)
}

fn client(ca: &Path, server_name: Option<&str>) -> ClientTls {
    ClientTls { config: client_config(ca).unwrap(), server_name: server_name.map(str::to_string) }
}

/// Replies until `done` says enough, or the exit's reason.
fn replies_until(
    rx: &crossbeam_channel::Receiver<WorkerMessage>,
    mut done: impl FnMut(&[Reply]) -> bool,
) -> Result<Vec<Reply>, String> {
    let mut replies = Vec::new();
    while !done(&replies) {
        match rx.recv_timeout(Duration::from_secs(20)).expect("the remote worker reports").body {
            WorkerOutput::Replies(r) => replies.extend(r),
            WorkerOutput::Exited { reason } => return Err(reason),
        }
    }
    Ok(replies)
}

#[test]
fn a_session_runs_inside_tls_with_hundreds_of_kib_of_snapshots_streaming_back() {
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1"]);
    let (address, events) = tls_worker(&cert, &key);
    let (tx, rx) = crossbeam_channel::unbounded();
    let tls = client(&cert, None);
    let mut remote = RemoteWorker::connect(&address, TOKEN, Some(&tls), WorkerId::A, 1, tx).unwrap();
    // A checkpoint every 10 frames: snapshots (tens of KiB, several TLS records each) stream back
    // while the next batch of commands goes out.
    remote.send(WorkerCommand::Load {
        rom: anes_fixtures::tiny_rom(),
        checkpoint_every: 10,
        region: None,
        power_on: None,
    });
    for batch in 0..4u64 {
        remote
            .send(WorkerCommand::Frames { first_seq: batch * 150, inputs: vec![WireInput([0, 0, 0]); 150] });
    }
    // Until the snapshot after the last frame (it follows the last record).
    let last = |r: &Reply| matches!(r, Reply::Snapshot { seq: 600, .. });
    let replies = replies_until(&rx, |r| r.last().is_some_and(last))
        .unwrap_or_else(|reason| panic!("exited: {reason}"));
    assert!(matches!(replies[0], Reply::Hello { .. }));
    assert!(matches!(replies[1], Reply::Loaded { .. }));
    assert_eq!(replies.iter().filter(|r| matches!(r, Reply::Record { .. })).count(), 600);
    let snapshots: Vec<(u64, usize)> = replies
        .iter()
        .filter_map(|r| match r {
            Reply::Snapshot { seq, bytes, .. } => Some((*seq, bytes.len())),
            _ => None,
        })
        .collect();
    let every_tenth: Vec<u64> = snapshots.iter().map(|s| s.0).filter(|&seq| seq > 0).collect();
    assert_eq!(every_tenth, (1..=60).map(|k| k * 10).collect::<Vec<u64>>());
    let snapshots: Vec<usize> = snapshots.iter().map(|s| s.1).collect();
    assert!(snapshots.iter().sum::<usize>() > 256 << 10, "{snapshots:?}");
    remote.stop();
    assert!(refusals(&events).is_empty(), "{:?}", refusals(&events));
}

#[test]
fn commands_sent_with_the_token_in_one_write_are_all_served() {
    // The worker reads the token and the commands behind it through one reader: ciphertext read
    // ahead while looking for the token is the session's first commands.
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1"]);
    let (address, _events) = tls_worker(&cert, &key);
    let tls = client(&cert, None);
    let tcp = TcpStream::connect(&address).unwrap();
    let name = super::tls::parse_server_name("127.0.0.1").unwrap();
    let connection = rustls::ClientConnection::new(Arc::clone(&tls.config), name).unwrap();
    let link = super::tls::Link::handshake(tcp, connection.into(), HANDSHAKE_TIMEOUT).unwrap();
    link.tcp().set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut bytes = Vec::new();
    encode_token(TOKEN, &mut bytes);
    let rom = anes_fixtures::tiny_rom();
    encode_command(
        &WorkerCommand::Load { rom: rom.clone(), checkpoint_every: 60, region: None, power_on: None },
        &mut bytes,
    );
    encode_command(
        &WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); 3] },
        &mut bytes,
    );
    assert!(bytes.len() > 3 * 4096, "more than rustls takes in at once: {}", bytes.len());
    let mut output = link.writer().unwrap();
    output.write_all(&bytes).unwrap();
    output.flush().unwrap();
    let mut input = link.reader().unwrap();
    let mut frame = Vec::new();
    let mut kinds = Vec::new();
    assert!(read_hello_frame(&mut input, &mut frame).unwrap());
    kinds.push(crate::stream::reply_kind(&decode_reply(&frame).unwrap()));
    while kinds.len() < 6 {
        assert!(read_frame(&mut input, &mut frame).unwrap(), "ended after {kinds:?}");
        kinds.push(crate::stream::reply_kind(&decode_reply(&frame).unwrap()));
    }
    assert_eq!(kinds, ["hello", "loaded", "snapshot", "record", "record", "record"]);
}

#[test]
fn the_token_is_still_required_inside_tls() {
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1"]);
    let (address, events) = tls_worker(&cert, &key);
    let (tx, rx) = crossbeam_channel::unbounded();
    let tls = client(&cert, None);
    let _remote = RemoteWorker::connect(&address, b"not-the-token", Some(&tls), WorkerId::B, 1, tx).unwrap();
    let reason = replies_until(&rx, |_| false).unwrap_err();
    assert!(reason.contains("it refused: refused: wrong token"), "{reason}");
    wait_for("the refusal logged", || !refusals(&events).is_empty());
    assert_eq!(refusals(&events), [HandshakeError::WrongToken]);
}

#[test]
fn a_worker_whose_certificate_does_not_check_out_is_not_connected() {
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1", "worker.anes"]);
    let (stranger, _) = self_signed(&dir.0, "stranger", &["127.0.0.1"]);
    let (address, events) = tls_worker(&cert, &key);
    let connect = |tls: &ClientTls| {
        RemoteWorker::connect(&address, TOKEN, Some(tls), WorkerId::A, 1, crossbeam_channel::unbounded().0)
            .map(drop)
            .unwrap_err()
            .to_string()
    };
    // Signed by nobody the coordinator trusts.
    let untrusted = connect(&client(&stranger, None));
    assert!(untrusted.contains("TLS") && untrusted.contains("certificate"), "{untrusted}");
    // Trusted, but for other names.
    let misnamed = connect(&client(&cert, Some("other.anes")));
    assert!(misnamed.contains("certificate"), "{misnamed}");
    // The name it does carry.
    let tls = client(&cert, Some("worker.anes"));
    let (tx, rx) = crossbeam_channel::unbounded();
    let mut named = RemoteWorker::connect(&address, TOKEN, Some(&tls), WorkerId::A, 1, tx).unwrap();
    assert!(matches!(replies_until(&rx, |r| !r.is_empty()).unwrap()[0], Reply::Hello { .. }));
    named.stop();
    wait_for("both refusals logged", || refusals(&events).len() == 2);
    assert!(refusals(&events).iter().all(|r| matches!(r, HandshakeError::Tls(_))), "{:?}", refusals(&events));
}

#[test]
fn a_plain_coordinator_gets_nothing_from_a_tls_worker() {
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1"]);
    let (address, events) = tls_worker(&cert, &key);
    let mut stream = TcpStream::connect(&address).unwrap();
    stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT)).unwrap();
    let mut token = Vec::new();
    encode_token(TOKEN, &mut token);
    stream.write_all(&token).unwrap();
    // No hello: at most a TLS alert, then the end.
    let mut frame = Vec::new();
    let hello = read_hello_frame(&mut stream, &mut frame).ok().filter(|read| *read).and_then(|_| {
        crate::protocol::decode_reply(&frame).ok().filter(|r| matches!(r, Reply::Hello { .. }))
    });
    assert_eq!(hello, None);
    wait_for("the refusal logged", || !refusals(&events).is_empty());
    assert!(matches!(&refusals(&events)[0], HandshakeError::Tls(_)), "{:?}", refusals(&events));
    // And a TLS coordinator to a plain worker fails its handshake, within its timeout.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let plain_address = plain.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        serve_listener(&plain, TOKEN, None, ListenSettings::default(), |_| {});
    });
    let started = Instant::now();
    let tls = client(&cert, None);
    let result = RemoteWorker::connect(
        &plain_address,
        TOKEN,
        Some(&tls),
        WorkerId::A,
        1,
        crossbeam_channel::unbounded().0,
    );
    assert!(result.is_err());
    assert!(started.elapsed() < HANDSHAKE_TIMEOUT + Duration::from_secs(6), "{:?}", started.elapsed());
}

#[test]
fn unusable_pem_files_are_typed_errors_naming_the_file() {
    let dir = TempDir::new();
    let (cert, key) = self_signed(&dir.0, "worker", &["127.0.0.1"]);
    let missing = dir.0.join("missing.pem");
    let empty = dir.0.join("empty.pem");
    std::fs::write(&empty, "no PEM here\n").unwrap();
    assert!(matches!(server_config(&missing, &key), Err(TlsError::File { path, .. }) if path == missing));
    assert_eq!(
        server_config(&empty, &key).unwrap_err(),
        TlsError::Missing { path: empty.clone(), what: "certificate" }
    );
    assert_eq!(
        server_config(&cert, &empty).unwrap_err(),
        TlsError::Missing { path: empty.clone(), what: "private key" }
    );
    // A key that is not the certificate's.
    let (_, other_key) = self_signed(&dir.0, "other", &["127.0.0.1"]);
    assert!(
        matches!(server_config(&cert, &other_key), Err(TlsError::Refused { path, .. }) if path == other_key)
    );
    assert_eq!(client_config(&empty).unwrap_err(), TlsError::Missing { path: empty, what: "certificate" });
    let large = dir.0.join("large.pem");
    std::fs::write(&large, vec![b'-'; (super::tls::MAX_PEM_FILE_LEN + 1) as usize]).unwrap();
    assert!(
        matches!(client_config(&large), Err(TlsError::File { problem, .. }) if problem.contains("larger"))
    );
}
