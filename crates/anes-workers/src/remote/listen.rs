//! The worker's side: `anes worker --listen` accepts connections, checks each one's token before it
//! reads anything else, and serves one coordinator at a time, dropping a session whose coordinator
//! fell silent (the module's docs: half-open connections).
//!
//! Connections that have not shown their token hold one of `max_handshakes` slots, for at most the
//! token timeout. When every slot is taken, a new connection takes the slot of the oldest connection
//! that has sent nothing (else the oldest) of the address holding the most slots, which is closed:
//! connections that stay silent can never keep out a coordinator, which sends its token at once
//! (it is not silent from then on). Refusals are logged once per address and
//! `refusal_log_interval`, with the count of those not logged.

use std::collections::{BTreeMap, HashMap};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::tls::{Link, LinkReader};
use super::token::{HandshakeError, read_and_check_token};
use super::{IDLE_TIMEOUT, TOKEN_TIMEOUT, keepalive};
use crate::protocol::{Encoding, Reply, encode_reply};

/// The pause of the accept loop after a connection took another's handshake slot: clients that
/// reconnect as soon as they are dropped turn every slot taken into one more, and this bounds that
/// churn to 200 connections a second (the coordinator is never one of them: it is not silent).
const AFTER_EVICTION: Duration = Duration::from_millis(5);

/// The most addresses whose refusals are remembered for [`ListenSettings::refusal_log_interval`];
/// past it, the entries of addresses quiet for a whole interval are forgotten.
const REMEMBERED_REFUSERS: usize = 4096;

/// The limits of a listening worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenSettings {
    /// How long a connection has to send its token (and, with TLS, as long again for the TLS
    /// handshake before it).
    pub handshake_timeout: Duration,
    /// How long an authenticated coordinator waits for the session before it to end (a coordinator
    /// that reconnects right after closing its previous connection, or after its predecessor
    /// vanished) before it is refused as busy.
    pub busy_grace: Duration,
    /// Connections in their handshake at once; a new one beyond takes the slot of a silent one.
    pub max_handshakes: usize,
    /// A session whose coordinator sent nothing (no command, no heartbeat) for this long, or did not
    /// take a reply for this long, is dropped: the coordinator is taken for gone.
    pub idle_timeout: Duration,
    /// At most one refusal per address is logged in this time; the next one logged says how many
    /// were not (zero: every refusal is logged).
    pub refusal_log_interval: Duration,
}

impl Default for ListenSettings {
    /// The busy grace outlasts the idle timeout, so a coordinator that restarts after its
    /// predecessor vanished is served once the dead session is dropped, within its
    /// [`super::HELLO_TIMEOUT`].
    fn default() -> ListenSettings {
        ListenSettings {
            handshake_timeout: TOKEN_TIMEOUT,
            busy_grace: IDLE_TIMEOUT + Duration::from_secs(1),
            max_handshakes: 16,
            idle_timeout: IDLE_TIMEOUT,
            refusal_log_interval: Duration::from_secs(10),
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
        /// Refusals of the same IP address since the last one logged, not logged themselves
        /// ([`ListenSettings::refusal_log_interval`]).
        not_logged: u64,
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
    let handshakes = Arc::new(Mutex::new(Handshakes::default()));
    let log = Arc::new(RefusalGate::new(log, settings.refusal_log_interval));
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
                log.event(ConnectionEvent::AcceptFailed { error: e.to_string(), retry_in });
                sleep(retry_in);
                continue;
            }
        };
        let heard = Arc::new(AtomicBool::new(false));
        let (id, evicted) = match Handshakes::enter(
            &handshakes,
            &stream,
            peer.ip().to_canonical(),
            &heard,
            settings.max_handshakes,
        ) {
            Ok(entered) => entered,
            // Out of descriptors for its handle: the connection cannot be watched, so it is not served.
            Err(_) => continue,
        };
        let mut pending = PendingHandshake { handshakes: Arc::clone(&handshakes), id, left: false };
        let (slot, log) = (Arc::clone(&slot), Arc::clone(&log));
        let tls = tls.clone();
        let spawned = std::thread::Builder::new().name(format!("session-{peer}")).spawn(move || {
            let peer_ip = peer.ip().to_canonical();
            let peer = peer.to_string();
            let is_tls = tls.is_some();
            let link = match secure(stream, tls, settings.handshake_timeout) {
                Ok(link) => link,
                Err(reason) => {
                    // Nothing can be said to a peer that did not finish the TLS handshake.
                    let reason = pending.failed(reason);
                    log.refused(peer_ip, peer, reason);
                    return;
                }
            };
            // A peer that finished a TLS handshake is speaking: no longer a silent connection.
            if is_tls {
                heard.store(true, Ordering::Relaxed);
            }
            // One reader for the token and the session: with TLS it holds ciphertext read ahead.
            let admitted = link.reader().map_err(|e| HandshakeError::Io(e.to_string())).and_then(|input| {
                let mut heard_input = Heard { input, heard: &heard };
                check_token(&link, &mut heard_input, &expected, settings)?;
                if !pending.authenticated() {
                    return Err(HandshakeError::Evicted);
                }
                if !slot.claim(settings.busy_grace) {
                    return Err(HandshakeError::Busy);
                }
                Ok(heard_input.input)
            });
            match admitted {
                Ok(input) => {
                    log.event(ConnectionEvent::SessionStarted { peer: peer.clone() });
                    let error = serve_session(&link, input, settings.idle_timeout).err();
                    slot.release();
                    log.event(ConnectionEvent::SessionEnded { peer, error });
                }
                Err(reason) => {
                    let reason = pending.failed(reason);
                    // An evicted connection's socket is shut already.
                    if reason != HandshakeError::Evicted {
                        refuse(&link, &reason);
                    }
                    log.refused(peer_ip, peer, reason);
                }
            }
        });
        // A thread that could not start drops its closure: the connection closes and leaves its slot.
        drop(spawned);
        if evicted {
            sleep(AFTER_EVICTION);
        }
    }
}

/// The connections still in their handshake, oldest first, each with a handle to close it and
/// whether it has sent anything.
#[derive(Debug, Default)]
struct Handshakes {
    pending: BTreeMap<u64, PendingEntry>,
    next_id: u64,
}

#[derive(Debug)]
struct PendingEntry {
    peer: IpAddr,
    handle: TcpStream,
    heard: Arc<AtomicBool>,
}

impl PendingEntry {
    /// True when nothing came from the peer: nothing read, nothing waiting in the kernel.
    fn silent(&self) -> bool {
        !self.heard.load(Ordering::Relaxed) && rustix::io::ioctl_fionread(&self.handle).is_ok_and(|n| n == 0)
    }
}

impl Handshakes {
    /// Registers `stream` from `peer`, first closing another connection's handshake when all `max`
    /// slots are taken. Returns its id and whether a connection was closed for it.
    fn enter(
        handshakes: &Mutex<Handshakes>,
        stream: &TcpStream,
        peer: IpAddr,
        heard: &Arc<AtomicBool>,
        max: usize,
    ) -> std::io::Result<(u64, bool)> {
        let handle = stream.try_clone()?;
        let mut table = handshakes.lock().unwrap_or_else(|p| p.into_inner());
        let mut evicted = false;
        while table.pending.len() >= max.max(1) {
            table.evict_one();
            evicted = true;
        }
        let id = table.next_id;
        table.next_id += 1;
        table.pending.insert(id, PendingEntry { peer, handle, heard: Arc::clone(heard) });
        Ok((id, evicted))
    }

    /// Closes the oldest silent connection (else the oldest) of the address holding the most slots.
    fn evict_one(&mut self) {
        let mut held: HashMap<IpAddr, usize> = HashMap::new();
        for entry in self.pending.values() {
            *held.entry(entry.peer).or_default() += 1;
        }
        let Some(most) = held.values().copied().max() else { return };
        let of_hog = |entry: &PendingEntry| held.get(&entry.peer) == Some(&most);
        let victim = self
            .pending
            .iter()
            .find(|(_, e)| of_hog(e) && e.silent())
            .or_else(|| self.pending.iter().find(|(_, e)| of_hog(e)))
            .map(|(&id, _)| id);
        if let Some(entry) = victim.and_then(|id| self.pending.remove(&id)) {
            // Its thread's next read fails and reports the eviction.
            let _ = entry.handle.shutdown(Shutdown::Both);
        }
    }
}

/// A connection's place among [`Handshakes`] until it authenticated or failed.
struct PendingHandshake {
    handshakes: Arc<Mutex<Handshakes>>,
    id: u64,
    left: bool,
}

impl PendingHandshake {
    /// Leaves the handshakes; false when it had been evicted already.
    fn leave(&mut self) -> bool {
        if std::mem::replace(&mut self.left, true) {
            return true;
        }
        self.handshakes.lock().unwrap_or_else(|p| p.into_inner()).pending.remove(&self.id).is_some()
    }

    /// After a valid token: false when the connection lost its slot meanwhile (its socket is shut).
    fn authenticated(&mut self) -> bool {
        self.leave()
    }

    /// The reason to report for a failed handshake: an evicted connection's read failed because it
    /// was evicted.
    fn failed(&mut self, reason: HandshakeError) -> HandshakeError {
        let was_pending = !self.left;
        if !self.leave() && was_pending { HandshakeError::Evicted } else { reason }
    }
}

impl Drop for PendingHandshake {
    fn drop(&mut self) {
        self.leave();
    }
}

/// A reader that notes its first byte: a connection that sent one is not silent.
struct Heard<'a> {
    input: LinkReader,
    heard: &'a AtomicBool,
}

impl Read for Heard<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.input.read(buf)?;
        if n > 0 {
            self.heard.store(true, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// The log, with refusals gated: at most one per IP address and interval, the next one logged
/// counting those that were not.
struct RefusalGate<L> {
    log: L,
    interval: Duration,
    // Per address: when its last refusal was logged, and the refusals not logged since.
    last: Mutex<HashMap<IpAddr, (Instant, u64)>>,
}

impl<L: Fn(ConnectionEvent)> RefusalGate<L> {
    fn new(log: L, interval: Duration) -> RefusalGate<L> {
        RefusalGate { log, interval, last: Mutex::new(HashMap::new()) }
    }

    fn event(&self, event: ConnectionEvent) {
        (self.log)(event);
    }

    fn refused(&self, ip: IpAddr, peer: String, reason: HandshakeError) {
        let now = Instant::now();
        let not_logged = {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.len() >= REMEMBERED_REFUSERS {
                last.retain(|_, (at, _)| now.duration_since(*at) < self.interval);
            }
            match last.get_mut(&ip) {
                Some((at, skipped)) if now.duration_since(*at) < self.interval => {
                    *skipped += 1;
                    return;
                }
                Some((at, skipped)) => {
                    *at = now;
                    std::mem::take(skipped)
                }
                None => {
                    if last.len() < REMEMBERED_REFUSERS {
                        last.insert(ip, (now, 0));
                    }
                    0
                }
            }
        };
        (self.log)(ConnectionEvent::Refused { peer, reason, not_logged });
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

/// Reads and checks the connection's token within the handshake timeout.
fn check_token(
    link: &Link,
    input: &mut impl Read,
    expected: &blake3::Hash,
    settings: ListenSettings,
) -> Result<(), HandshakeError> {
    let stream = link.tcp();
    let mut set_timeout = |left: Duration| stream.set_read_timeout(Some(left));
    read_and_check_token(input, &mut set_timeout, settings.handshake_timeout, expected)
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
