//! The coordinator's side: a pipeline's worker at the other end of a TCP connection.

use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Sender;

use super::tls::{ClientTls, Link, name_for};
use super::token::encode_token;
use super::{CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT, HEARTBEAT_INTERVAL, HELLO_TIMEOUT, keepalive};
use crate::protocol::{BuildInfo, Reply, WorkerCommand};
use crate::stream::{ReplySink, read_replies, spawn_writer};
use crate::{ReplyBatcher, WorkerHandle, WorkerId, WorkerMessage};

/// A worker served by `anes worker --listen` on another machine. Its replies reach the pipeline as a
/// process worker's do; the end of the connection is its exit.
#[derive(Debug)]
pub struct RemoteWorker {
    stream: TcpStream,
    commands: Option<Sender<WorkerCommand>>,
    writer: Option<JoinHandle<()>>,
    reader: Option<JoinHandle<()>>,
}

impl RemoteWorker {
    /// Resolves `address` (`HOST:PORT`; a host name is looked up now, at every attempt), connects to
    /// the first address that answers within [`CONNECT_TIMEOUT`], with `tls` runs the TLS handshake
    /// (within [`HANDSHAKE_TIMEOUT`]; a worker whose certificate does not check out is a failed
    /// connection), sends `token`, and reports the
    /// worker's replies (its hello first, or the reason it refused) to `events`. A worker whose hello
    /// names another build than this one's ([`BuildInfo::current`]) is refused: its exit names both
    /// builds, and its hello is not handed on. An unresolvable name or a refused connection is an
    /// error here: for the pipeline, a worker that could not start.
    pub fn connect(
        address: &str,
        token: &[u8],
        tls: Option<&ClientTls>,
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> std::io::Result<RemoteWorker> {
        RemoteWorker::connect_with(address, token, tls, worker, incarnation, events, HEARTBEAT_INTERVAL)
    }

    /// [`RemoteWorker::connect`] with a heartbeat after every `heartbeat` without a command.
    pub(crate) fn connect_with(
        address: &str,
        token: &[u8],
        tls: Option<&ClientTls>,
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
        heartbeat: Duration,
    ) -> std::io::Result<RemoteWorker> {
        let stream = connect_any(address)?;
        stream.set_nodelay(true)?;
        keepalive(&stream)?;
        let link = match tls {
            None => Link::plain(stream),
            Some(tls) => {
                let name = name_for(address, tls.server_name.as_deref())?;
                let connection = rustls::ClientConnection::new(std::sync::Arc::clone(&tls.config), name)
                    .map_err(std::io::Error::other)?;
                Link::handshake(stream, connection.into(), HANDSHAKE_TIMEOUT)?
            }
        };
        let stream = link.tcp().try_clone()?;
        // A worker that accepted but never answers is found by the pipeline's step timeout; this
        // bounds only the wait for its hello.
        stream.set_read_timeout(Some(HELLO_TIMEOUT))?;
        let mut frame = Vec::new();
        encode_token(token, &mut frame);
        let mut output = link.writer()?;
        std::io::Write::write_all(&mut output, &frame)?;
        std::io::Write::flush(&mut output)?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let name = format!("worker-{worker}-{incarnation}");
        let writer = spawn_writer(format!("{name}-out"), output, rx, Some(heartbeat))?;
        let input = link.reader()?;
        let peer = address.to_string();
        let mut sink = HelloThenStream {
            inner: ReplyBatcher::new(worker, incarnation, events),
            stream: stream.try_clone()?,
            greeted: false,
            refused: None,
        };
        let reader_stream = stream.try_clone()?;
        let reader = std::thread::Builder::new().name(format!("{name}-in")).spawn(move || {
            let end = read_replies(input, &mut sink);
            let _ = reader_stream.shutdown(Shutdown::Both);
            let reason = sink.refused.take().unwrap_or_else(|| end.reason());
            sink.inner.ended(format!("{reason}; the connection to {peer} is closed"));
        })?;
        Ok(RemoteWorker { stream, commands: Some(tx), writer: Some(writer), reader: Some(reader) })
    }
}

/// Why a worker whose hello names `theirs` may not be compared with a twin of this build: `None`
/// when it runs this very build (crate version, git commit, emulation epoch).
pub(crate) fn build_refusal(theirs: &BuildInfo, ours: &BuildInfo) -> Option<String> {
    let describe = |b: &BuildInfo| {
        format!(
            "{} (commit {}, emulation epoch {})",
            b.version,
            b.git_commit.as_deref().unwrap_or("unknown"),
            b.emulation_epoch
        )
    };
    let what = if theirs.emulation_epoch != ours.emulation_epoch {
        "another emulation epoch"
    } else if theirs != ours {
        "another build"
    } else {
        return None;
    };
    Some(format!(
        "refused: the worker runs {what}: {}; this coordinator runs {}",
        describe(theirs),
        describe(ours)
    ))
}

/// Hands replies to the pipeline once the hello named this build, and lifts the hello's read
/// timeout then: from then on a quiet worker is the pipeline's to judge (a stall drill is silence on
/// purpose).
#[derive(Debug)]
struct HelloThenStream {
    inner: ReplyBatcher,
    stream: TcpStream,
    greeted: bool,
    /// Why the worker was refused at its hello.
    refused: Option<String>,
}

impl ReplySink for HelloThenStream {
    fn reply(&mut self, reply: Reply, more_buffered: bool) -> bool {
        if !self.greeted {
            self.greeted = true;
            if let Reply::Hello { build, .. } = &reply {
                self.refused = build_refusal(build, &BuildInfo::current());
                if self.refused.is_some() {
                    return false;
                }
            }
            if self.stream.set_read_timeout(None).is_err() {
                return false;
            }
        }
        self.inner.reply(reply, more_buffered)
    }

    fn ended(self, reason: String) {
        self.inner.ended(reason);
    }
}

fn connect_any(address: &str) -> std::io::Result<TcpStream> {
    let addresses: Vec<SocketAddr> = address.to_socket_addrs()?.collect();
    let mut last = None;
    for a in &addresses {
        match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{address}: the name resolves to no address"),
        )
    }))
}

impl WorkerHandle for RemoteWorker {
    fn send(&mut self, command: WorkerCommand) {
        if let Some(tx) = &self.commands {
            let _ = tx.send(command);
        }
    }

    fn stop(&mut self) {
        self.commands = None;
        // Both threads return once the socket is shut down, whatever they were blocked on; the
        // worker's session sees the end of its input and ends, freeing it for the next connection.
        let _ = self.stream.shutdown(Shutdown::Both);
        for thread in [self.writer.take(), self.reader.take()].into_iter().flatten() {
            let _ = thread.join();
        }
    }

    fn crash(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

impl Drop for RemoteWorker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A remote worker being connected to on a thread of its own ([`RemoteWorker::start`]), so that the
/// pipeline's thread never waits for a connection, a TLS handshake or a hello. Commands sent before
/// the connection is up are queued and sent once it is; a connection that fails is the worker's exit.
#[derive(Debug)]
pub struct ConnectingWorker {
    state: std::sync::Arc<std::sync::Mutex<Connection>>,
}

#[derive(Debug)]
enum Connection {
    /// The connector thread runs; these wait for the connection.
    Connecting {
        queued: Vec<WorkerCommand>,
        stopped: bool,
        crashed: bool,
    },
    Connected(RemoteWorker),
    /// Stopped, or the connection failed.
    Gone,
}

impl RemoteWorker {
    /// Connects as [`RemoteWorker::connect`] does, on a thread of its own, and returns at once. A
    /// connection that fails (no answer, refused, a TLS handshake that does not check out) reaches
    /// `events` as the worker's exit, `could not connect: ...`.
    pub fn start(
        address: &str,
        token: Vec<u8>,
        tls: Option<ClientTls>,
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> std::io::Result<ConnectingWorker> {
        let state = std::sync::Arc::new(std::sync::Mutex::new(Connection::Connecting {
            queued: Vec::new(),
            stopped: false,
            crashed: false,
        }));
        let shared = std::sync::Arc::clone(&state);
        let address = address.to_string();
        std::thread::Builder::new().name(format!("worker-{worker}-{incarnation}-connect")).spawn(
            move || {
                let connected = RemoteWorker::connect(
                    &address,
                    &token,
                    tls.as_ref(),
                    worker,
                    incarnation,
                    events.clone(),
                );
                let mut state = shared.lock().unwrap_or_else(|p| p.into_inner());
                let Connection::Connecting { queued, stopped, crashed } =
                    std::mem::replace(&mut *state, Connection::Gone)
                else {
                    return;
                };
                match connected {
                    Ok(mut remote) if !stopped => {
                        for command in queued {
                            remote.send(command);
                        }
                        if crashed {
                            remote.crash();
                        }
                        *state = Connection::Connected(remote);
                    }
                    // Stopped while it connected: the connection closes as `remote` drops.
                    Ok(_) => {}
                    Err(e) if !stopped => {
                        let reason = format!("could not connect to {address}: {e}");
                        let _ = events.send(WorkerMessage {
                            worker,
                            incarnation,
                            body: crate::WorkerOutput::Exited { reason },
                        });
                    }
                    Err(_) => {}
                }
            },
        )?;
        Ok(ConnectingWorker { state })
    }
}

impl ConnectingWorker {
    fn state(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl WorkerHandle for ConnectingWorker {
    fn send(&mut self, command: WorkerCommand) {
        match &mut *self.state() {
            Connection::Connecting { queued, .. } => queued.push(command),
            Connection::Connected(remote) => remote.send(command),
            Connection::Gone => {}
        }
    }

    /// Stops the worker: a connected one as [`RemoteWorker`] does; one still being connected to is
    /// closed as soon as its connection is up, without waiting for it here.
    fn stop(&mut self) {
        let mut state = self.state();
        match std::mem::replace(&mut *state, Connection::Gone) {
            Connection::Connecting { queued, crashed, .. } => {
                *state = Connection::Connecting { queued, stopped: true, crashed };
            }
            Connection::Connected(mut remote) => {
                drop(state);
                remote.stop();
            }
            Connection::Gone => {}
        }
    }

    fn crash(&mut self) {
        match &mut *self.state() {
            Connection::Connecting { crashed, .. } => *crashed = true,
            Connection::Connected(remote) => remote.crash(),
            Connection::Gone => {}
        }
    }
}
