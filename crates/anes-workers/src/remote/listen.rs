//! The worker's side: `anes worker --listen` accepts connections, checks each one's token before it
//! reads anything else, and serves one coordinator at a time, dropping a session whose coordinator
//! fell silent (the module's docs: half-open connections).

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::tls::{Link, LinkReader};
use super::token::{HandshakeError, read_and_check_token};
use super::{HANDSHAKE_TIMEOUT, IDLE_TIMEOUT, keepalive};
use crate::protocol::{Encoding, Reply, encode_reply};

/// The limits of a listening worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenSettings {
    /// How long a connection has to send its token.
    pub handshake_timeout: Duration,
    /// How long an authenticated coordinator waits for the session before it to end (a coordinator
    /// that reconnects right after closing its previous connection, or after its predecessor
    /// vanished) before it is refused as busy.
    pub busy_grace: Duration,
    /// Connections in their handshake at once; more are closed at once.
    pub max_handshakes: usize,
    /// A session whose coordinator sent nothing (no command, no heartbeat) for this long, or did not
    /// take a reply for this long, is dropped: the coordinator is taken for gone.
    pub idle_timeout: Duration,
}

impl Default for ListenSettings {
    /// The busy grace outlasts the idle timeout, so a coordinator that restarts after its
    /// predecessor vanished is served once the dead session is dropped, within its
    /// [`super::HELLO_TIMEOUT`].
    fn default() -> ListenSettings {
        ListenSettings {
            handshake_timeout: HANDSHAKE_TIMEOUT,
            busy_grace: IDLE_TIMEOUT + Duration::from_secs(1),
            max_handshakes: 16,
            idle_timeout: IDLE_TIMEOUT,
        }
    }
}

/// The wait before accepting again after `consecutive` failed accepts (1 after the first): 10 ms,
/// doubling, at most 1 s. Accepting fails while the process is out of file descriptors (EMFILE,
/// ENFILE) or memory, or when a connection was reset before it was taken (ECONNABORTED); retrying
/// at once would spin on a full table, and giving up would end a worker that recovers in a moment.
pub fn accept_retry_delay(consecutive: u32) -> Duration {
    const FIRST: Duration = Duration::from_millis(10);
    const MAX: Duration = Duration::from_secs(1);
    let doublings = consecutive.saturating_sub(1).min(16);
    (FIRST * (1u32 << doublings)).min(MAX)
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
    /// Accepting a connection failed; the listener tries again after `retry_in`.
    AcceptFailed {
        /// The error.
        error: String,
        /// The wait before the next attempt ([`accept_retry_delay`]).
        retry_in: Duration,
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

/// Serves the worker protocol to the coordinators that connect to `listener` with `token` (inside
/// TLS with `tls`), one at a time, for good: a failed accept is logged and retried
/// ([`accept_retry_delay`]). Each connection is handled on a thread of its own; `log` hears what
/// happened to each.
pub fn serve_listener(
    listener: &TcpListener,
    token: &[u8],
    tls: Option<Arc<rustls::ServerConfig>>,
    settings: ListenSettings,
    log: impl Fn(ConnectionEvent) + Send + Sync + 'static,
) -> ! {
    serve_accepted(|| listener.accept(), std::thread::sleep, token, tls, settings, log)
}

/// [`serve_listener`] over any source of connections, and `sleep` for the waits between failed
/// accepts.
pub(crate) fn serve_accepted(
    mut accept: impl FnMut() -> std::io::Result<(TcpStream, SocketAddr)>,
    mut sleep: impl FnMut(Duration),
    token: &[u8],
    tls: Option<Arc<rustls::ServerConfig>>,
    settings: ListenSettings,
    log: impl Fn(ConnectionEvent) + Send + Sync + 'static,
) -> ! {
    let expected = blake3::hash(token);
    let slot = Arc::new(Slot::default());
    let handshakes = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(log);
    let mut failures = 0u32;
    loop {
        let (stream, peer) = match accept() {
            Ok(accepted) => {
                failures = 0;
                accepted
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                failures = failures.saturating_add(1);
                let retry_in = accept_retry_delay(failures);
                log(ConnectionEvent::AcceptFailed { error: e.to_string(), retry_in });
                sleep(retry_in);
                continue;
            }
        };
        if handshakes.fetch_add(1, Ordering::SeqCst) >= settings.max_handshakes {
            handshakes.fetch_sub(1, Ordering::SeqCst);
            drop(stream);
            continue;
        }
        let (slot, pending, log) = (Arc::clone(&slot), Arc::clone(&handshakes), Arc::clone(&log));
        let tls = tls.clone();
        let spawned = std::thread::Builder::new().name(format!("session-{peer}")).spawn(move || {
            let peer = peer.to_string();
            let link = match secure(stream, tls, settings.handshake_timeout) {
                Ok(link) => link,
                Err(reason) => {
                    // Nothing can be said to a peer that did not finish the TLS handshake.
                    pending.fetch_sub(1, Ordering::SeqCst);
                    log(ConnectionEvent::Refused { peer, reason });
                    return;
                }
            };
            // One reader for the token and the session: with TLS it holds ciphertext read ahead.
            let admitted = link
                .reader()
                .map_err(|e| HandshakeError::Io(e.to_string()))
                .and_then(|mut input| admit(&link, &mut input, &expected, &slot, settings).map(|()| input));
            pending.fetch_sub(1, Ordering::SeqCst);
            match admitted {
                Ok(input) => {
                    log(ConnectionEvent::SessionStarted { peer: peer.clone() });
                    let error = serve_session(&link, input, settings.idle_timeout).err();
                    slot.release();
                    log(ConnectionEvent::SessionEnded { peer, error });
                }
                Err(reason) => {
                    refuse(&link, &reason);
                    log(ConnectionEvent::Refused { peer, reason });
                }
            }
        });
        if spawned.is_err() {
            handshakes.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The connection as it is, or with TLS once its handshake completed within `timeout`.
fn secure(
    stream: TcpStream,
    tls: Option<Arc<rustls::ServerConfig>>,
    timeout: Duration,
) -> Result<Link, HandshakeError> {
    let Some(config) = tls else { return Ok(Link::plain(stream)) };
    let connection = rustls::ServerConnection::new(config).map_err(|e| HandshakeError::Tls(e.to_string()))?;
    Link::handshake(stream, connection.into(), timeout).map_err(|e| HandshakeError::Tls(e.to_string()))
}

/// Checks the connection's token, then takes the session slot.
fn admit(
    link: &Link,
    input: &mut LinkReader,
    expected: &blake3::Hash,
    slot: &Slot,
    settings: ListenSettings,
) -> Result<(), HandshakeError> {
    let stream = link.tcp();
    let mut set_timeout = |left: Duration| stream.set_read_timeout(Some(left));
    read_and_check_token(input, &mut set_timeout, settings.handshake_timeout, expected)?;
    if !slot.claim(settings.busy_grace) {
        return Err(HandshakeError::Busy);
    }
    Ok(())
}

/// One coordinator's session: the protocol as `anes worker` serves it on stdin and stdout, until the
/// coordinator closes, or is silent or does not read for `idle_timeout`.
fn serve_session(link: &Link, input: LinkReader, idle_timeout: Duration) -> Result<(), String> {
    let stream = link.tcp();
    stream.set_read_timeout(Some(idle_timeout)).map_err(|e| e.to_string())?;
    stream.set_write_timeout(Some(idle_timeout)).map_err(|e| e.to_string())?;
    let _ = stream.set_nodelay(true);
    keepalive(stream).map_err(|e| format!("TCP keepalive: {e}"))?;
    let input = IdleInput { input, idle_timeout };
    let output = link.writer().map_err(|e| e.to_string())?;
    let result = crate::stdio::serve(Encoding::Binary, input, output).map_err(|e| e.to_string());
    let _ = stream.shutdown(Shutdown::Both);
    result
}

/// The session's input, whose read timeout says what it means: the coordinator is taken for gone.
struct IdleInput {
    input: LinkReader,
    idle_timeout: Duration,
}

impl Read for IdleInput {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf).map_err(|e| match e.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => std::io::Error::new(
                ErrorKind::TimedOut,
                format!(
                    "idle timeout: nothing from the coordinator for {} s, taken for gone",
                    self.idle_timeout.as_secs_f64()
                ),
            ),
            _ => e,
        })
    }
}

/// Tells a refused connection why, in the one message a coordinator reads first, and closes it.
fn refuse(link: &Link, reason: &HandshakeError) {
    let mut frame = Vec::new();
    encode_reply(&Reply::Error { message: format!("refused: {reason}") }, &mut frame);
    let _ = link.tcp().set_write_timeout(Some(Duration::from_secs(1)));
    if let Ok(mut output) = link.writer() {
        let _ = output.write_all(&frame);
        let _ = output.flush();
    }
    let _ = link.tcp().shutdown(Shutdown::Both);
}
