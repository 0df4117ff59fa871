//! A fault-injecting TCP proxy between a coordinator and one remote worker (the kernel here has no
//! `netem`): it listens on 127.0.0.1, forwards every connection to the worker, and can
//! - delay each direction by a fixed time (latency, not a bandwidth limit: bytes are read as they
//!   come and written when their time is due);
//! - cut a connection in the middle of the next worker message with a given tag: the worker's side
//!   is read in whole protocol frames (`len u32`, contents starting with the tag, 8 checksum bytes),
//!   and the first frame with that tag is forwarded only halfway before both sockets are shut down;
//! - hold the next coordinator message with a given tag (both sides are read in whole frames)
//!   until released, so a test can act while, for example, a rollback waits on a restore;
//! - cut every open connection now.
//!
//! Its threads end with their connections; dropping the proxy stops the listener and cuts what is
//! still open (every exit path, panics included).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest worker frame the proxy reads whole; a longer length is forwarded as it is and the
/// connection cut (the coordinator refuses such a frame anyway).
const MAX_FRAME_LEN: usize = 64 << 20;
const CHECKSUM_LEN: usize = 8;

#[derive(Default)]
struct Shared {
    delay: Mutex<Duration>,
    cut_at_tag: Mutex<Option<u8>>,
    hold_at_tag: Mutex<Option<u8>>,
    holding: AtomicBool,
    open: Mutex<Vec<TcpStream>>,
    connections: AtomicU64,
    cuts: AtomicU64,
    stop: AtomicBool,
}

pub struct FaultProxy {
    pub address: String,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl FaultProxy {
    /// Listens on 127.0.0.1 (a free port) and forwards to `target` (`HOST:PORT`).
    pub fn start(target: &str) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let target: SocketAddr = target.parse().unwrap();
        let shared = Arc::new(Shared::default());
        let s = Arc::clone(&shared);
        let accept = std::thread::spawn(move || {
            while !s.stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => connect(client, target, &s),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        FaultProxy { address, shared, accept: Some(accept) }
    }

    /// Delays every byte by `delay` in each direction, from the next byte read on.
    pub fn set_delay(&self, delay: Duration) {
        *self.shared.delay.lock().unwrap() = delay;
    }

    /// Cuts the connection in the middle of the next worker message tagged `tag` (once).
    pub fn cut_inside_next(&self, tag: u8) {
        *self.shared.cut_at_tag.lock().unwrap() = Some(tag);
    }

    /// Whether the cut asked by [`FaultProxy::cut_inside_next`] is still to come.
    pub fn cut_pending(&self) -> bool {
        self.shared.cut_at_tag.lock().unwrap().is_some()
    }

    /// Holds the next coordinator message tagged `tag` until [`FaultProxy::release`].
    pub fn hold_next(&self, tag: u8) {
        *self.shared.hold_at_tag.lock().unwrap() = Some(tag);
    }

    /// Whether a message asked for by [`FaultProxy::hold_next`] is being held.
    pub fn holding(&self) -> bool {
        self.shared.holding.load(Ordering::SeqCst)
    }

    /// Lets the held message (and everything after it) through.
    pub fn release(&self) {
        *self.shared.hold_at_tag.lock().unwrap() = None;
        self.shared.holding.store(false, Ordering::SeqCst);
    }

    /// Cuts every open connection now.
    pub fn cut_all(&self) {
        for stream in self.shared.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        self.shared.cuts.fetch_add(1, Ordering::SeqCst);
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Cuts made so far (inside a message or all at once).
    pub fn cuts(&self) -> u64 {
        self.shared.cuts.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for stream in self.shared.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn connect(client: TcpStream, target: SocketAddr, shared: &Arc<Shared>) {
    let _ = client.set_nonblocking(false);
    let Ok(server) = TcpStream::connect_timeout(&target, Duration::from_secs(3)) else {
        // The worker is unreachable: so is the proxy, as the coordinator should see it.
        let _ = client.shutdown(Shutdown::Both);
        return;
    };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    shared.connections.fetch_add(1, Ordering::SeqCst);
    let clones = [client.try_clone(), server.try_clone(), client.try_clone(), server.try_clone()];
    let [Ok(c1), Ok(s1), Ok(c2), Ok(s2)] = clones else { return };
    shared.open.lock().unwrap().extend([c1, s1]);
    let (to_worker, to_coordinator) = (Arc::clone(shared), Arc::clone(shared));
    std::thread::spawn(move || pump(client, server, to_worker, Direction::ToWorker));
    std::thread::spawn(move || pump(s2, c2, to_coordinator, Direction::ToCoordinator));
}

/// What the reading half hands the writing half.
enum Piece {
    Bytes(Instant, Vec<u8>),
    /// Write what came before, then shut both sockets down.
    Cut(Instant, Vec<u8>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToWorker,
    ToCoordinator,
}

/// Forwards `from` to `to` in whole frames, each written when its delay is over.
fn pump(from: TcpStream, to: TcpStream, shared: Arc<Shared>, direction: Direction) {
    let (tx, rx) = std::sync::mpsc::channel::<Piece>();
    let (writer_to, writer_from) = (to.try_clone(), from.try_clone());
    let writer = std::thread::spawn(move || {
        let (Ok(mut to), Ok(from)) = (writer_to, writer_from) else { return };
        for piece in rx {
            let (due, bytes, cut) = match piece {
                Piece::Bytes(due, bytes) => (due, bytes, false),
                Piece::Cut(due, bytes) => (due, bytes, true),
            };
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            if to.write_all(&bytes).is_err() || cut {
                let _ = (to.shutdown(Shutdown::Both), from.shutdown(Shutdown::Both));
                return;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
    let mut from = from;
    loop {
        let piece = read_frame(&mut from, &shared, direction);
        let Some(piece) = piece else { break };
        let cut = matches!(piece, Piece::Cut(..));
        if tx.send(piece).is_err() || cut {
            break;
        }
    }
    drop(tx);
    let _ = writer.join();
}

fn due(shared: &Shared) -> Instant {
    Instant::now() + *shared.delay.lock().unwrap()
}

fn read_frame(from: &mut TcpStream, shared: &Shared, direction: Direction) -> Option<Piece> {
    let mut header = [0; 4];
    from.read_exact(&mut header).ok()?;
    let len = u32::from_le_bytes(header) as usize;
    if len == 0 || len > MAX_FRAME_LEN {
        return Some(Piece::Cut(due(shared), header.to_vec()));
    }
    let mut frame = vec![0; 4 + len + CHECKSUM_LEN];
    frame[..4].copy_from_slice(&header);
    from.read_exact(&mut frame[4..]).ok()?;
    if direction == Direction::ToWorker {
        hold(shared, frame[4]);
        return Some(Piece::Bytes(due(shared), frame));
    }
    let mut cut_at_tag = shared.cut_at_tag.lock().unwrap();
    if *cut_at_tag == Some(frame[4]) {
        *cut_at_tag = None;
        shared.cuts.fetch_add(1, Ordering::SeqCst);
        frame.truncate(4 + len / 2);
        return Some(Piece::Cut(due(shared), frame));
    }
    Some(Piece::Bytes(due(shared), frame))
}

/// Waits while a message tagged `tag` is to be held (at most a minute: a test that forgot to
/// release does not leave a thread behind for long).
fn hold(shared: &Shared, tag: u8) {
    if *shared.hold_at_tag.lock().unwrap() != Some(tag) {
        return;
    }
    shared.holding.store(true, Ordering::SeqCst);
    let start = Instant::now();
    while shared.holding.load(Ordering::SeqCst)
        && !shared.stop.load(Ordering::SeqCst)
        && start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(2));
    }
}
