//! The coordinator's side: a pipeline's worker at the other end of a TCP connection.

use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::thread::JoinHandle;

use crossbeam_channel::Sender;

use super::token::encode_token;
use super::{CONNECT_TIMEOUT, HANDSHAKE_TIMEOUT};
use crate::protocol::WorkerCommand;
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
    /// the first address that answers within [`CONNECT_TIMEOUT`], sends `token`, and reports the
    /// worker's replies (its hello first, or the reason it refused) to `events`. An unresolvable name
    /// or a refused connection is an error here: for the pipeline, a worker that could not start.
    pub fn connect(
        address: &str,
        token: &[u8],
        worker: WorkerId,
        incarnation: u64,
        events: Sender<WorkerMessage>,
    ) -> std::io::Result<RemoteWorker> {
        let stream = connect_any(address)?;
        stream.set_nodelay(true)?;
        // A worker that accepted but never answers is found by the pipeline's step timeout; this
        // bounds only the wait for its hello.
        stream.set_read_timeout(Some(HANDSHAKE_TIMEOUT))?;
        let mut frame = Vec::new();
        encode_token(token, &mut frame);
        std::io::Write::write_all(&mut &stream, &frame)?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let name = format!("worker-{worker}-{incarnation}");
        let writer = spawn_writer(format!("{name}-out"), stream.try_clone()?, rx)?;
        let reader_stream = stream.try_clone()?;
        let peer = address.to_string();
        let mut sink = HelloThenStream {
            inner: ReplyBatcher::new(worker, incarnation, events),
            stream: reader_stream.try_clone()?,
            greeted: false,
        };
        let reader = std::thread::Builder::new().name(format!("{name}-in")).spawn(move || {
            let end = read_replies(&reader_stream, &mut sink);
            let _ = reader_stream.shutdown(Shutdown::Both);
            sink.inner.ended(format!("{}; the connection to {peer} is closed", end.reason()));
        })?;
        Ok(RemoteWorker { stream, commands: Some(tx), writer: Some(writer), reader: Some(reader) })
    }
}

/// Hands replies to the pipeline, and lifts the hello's read timeout once the hello came: from then
/// on a quiet worker is the pipeline's to judge (a stall drill is silence on purpose).
#[derive(Debug)]
struct HelloThenStream {
    inner: ReplyBatcher,
    stream: TcpStream,
    greeted: bool,
}

impl ReplySink for HelloThenStream {
    fn reply(&mut self, reply: crate::protocol::Reply, more_buffered: bool) -> bool {
        if !self.greeted {
            self.greeted = true;
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
