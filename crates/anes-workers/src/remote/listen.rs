//! The worker's side: `anes worker --listen` accepts connections, checks each one's token before it
//! reads anything else, and serves one coordinator at a time.

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::HANDSHAKE_TIMEOUT;
use super::token::{HandshakeError, read_and_check_token};
use crate::protocol::{Encoding, Reply, encode_reply};

/// The limits of a listening worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenSettings {
    /// How long a connection has to send its token.
    pub handshake_timeout: Duration,
    /// How long an authenticated coordinator waits for the session before it to end (a coordinator
    /// that reconnects right after closing its previous connection) before it is refused as busy.
    pub busy_grace: Duration,
    /// Connections in their handshake at once; more are closed at once.
    pub max_handshakes: usize,
}

impl Default for ListenSettings {
    fn default() -> ListenSettings {
        ListenSettings {
            handshake_timeout: HANDSHAKE_TIMEOUT,
            busy_grace: Duration::from_secs(2),
            max_handshakes: 16,
        }
    }
}

/// What happened to one connection, for the worker's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// A session ended (the coordinator closed, or shut the worker's session down); `error` says why
    /// when the stream could not go on.
    SessionEnded {
        /// The coordinator's address.
        peer: String,
        /// Why the session ended early, if it did.
        error: Option<String>,
    },
    /// A connection was refused, with the reason sent to it.
    Refused {
        /// The connection's address.
        peer: String,
        /// Why.
        reason: HandshakeError,
    },
    /// A session started.
    SessionStarted {
        /// The coordinator's address.
        peer: String,
    },
}

/// The one session slot: taken by the authenticated coordinator being served.
#[derive(Debug, Default)]
struct Slot {
    busy: Mutex<bool>,
    freed: Condvar,
}

impl Slot {
    fn claim(&self, grace: Duration) -> bool {
        let busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        let (mut busy, _) =
            self.freed.wait_timeout_while(busy, grace, |busy| *busy).unwrap_or_else(|p| p.into_inner());
        if *busy {
            return false;
        }
        *busy = true;
        true
    }

    fn release(&self) {
        *self.busy.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.freed.notify_all();
    }
}

/// Serves the worker protocol to the coordinators that connect to `listener` with `token`, one at a
/// time, until accepting fails. Each connection is handled on a thread of its own; `log` hears what
/// happened to each.
pub fn serve_listener(
    listener: &TcpListener,
    token: &[u8],
    settings: ListenSettings,
    log: impl Fn(ConnectionEvent) + Send + Sync + 'static,
) -> std::io::Result<()> {
    let expected = blake3::hash(token);
    let slot = Arc::new(Slot::default());
    let handshakes = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(log);
    loop {
        let (stream, peer) = listener.accept()?;
        if handshakes.fetch_add(1, Ordering::SeqCst) >= settings.max_handshakes {
            handshakes.fetch_sub(1, Ordering::SeqCst);
            drop(stream);
            continue;
        }
        let (slot, pending, log) = (Arc::clone(&slot), Arc::clone(&handshakes), Arc::clone(&log));
        let spawned = std::thread::Builder::new().name(format!("session-{peer}")).spawn(move || {
            let peer = peer.to_string();
            let admitted = admit(&stream, &expected, &slot, settings);
            pending.fetch_sub(1, Ordering::SeqCst);
            match admitted {
                Ok(()) => {
                    log(ConnectionEvent::SessionStarted { peer: peer.clone() });
                    let error = serve_session(stream).err();
                    slot.release();
                    log(ConnectionEvent::SessionEnded { peer, error });
                }
                Err(reason) => {
                    refuse(&stream, &reason);
                    log(ConnectionEvent::Refused { peer, reason });
                }
            }
        });
        if spawned.is_err() {
            handshakes.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Checks the connection's token, then takes the session slot.
fn admit(
    stream: &TcpStream,
    expected: &blake3::Hash,
    slot: &Slot,
    settings: ListenSettings,
) -> Result<(), HandshakeError> {
    let mut reader = stream;
    let mut set_timeout = |left: Duration| stream.set_read_timeout(Some(left));
    read_and_check_token(&mut reader, &mut set_timeout, settings.handshake_timeout, expected)?;
    if !slot.claim(settings.busy_grace) {
        return Err(HandshakeError::Busy);
    }
    Ok(())
}

/// One coordinator's session: the protocol as `anes worker` serves it on stdin and stdout.
fn serve_session(stream: TcpStream) -> Result<(), String> {
    stream.set_read_timeout(None).map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    let input = stream.try_clone().map_err(|e| e.to_string())?;
    let result = crate::stdio::serve(Encoding::Binary, input, &stream).map_err(|e| e.to_string());
    let _ = stream.shutdown(Shutdown::Both);
    result
}

/// Tells a refused connection why, in the one message a coordinator reads first, and closes it.
fn refuse(stream: &TcpStream, reason: &HandshakeError) {
    let mut frame = Vec::new();
    encode_reply(&Reply::Error { message: format!("refused: {reason}") }, &mut frame);
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = (&*stream).write_all(&frame);
    let _ = stream.shutdown(Shutdown::Both);
}
