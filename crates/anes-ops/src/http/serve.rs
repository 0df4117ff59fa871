//! The HTTP server's connections: hyper's HTTP/1 served one task per connection, bounding time and
//! numbers where `axum::serve` does not (it has no timer, so a client that never finishes its headers
//! or its body, or never reads its answers, holds a connection and a task forever).
//!
//! - Headers: each request's head (and the wait for the next one on a kept-alive connection: the idle
//!   timeout) must arrive within `header_timeout`, else hyper closes the connection.
//! - Bodies: a request's body must arrive in full within `body_timeout` of its head; after that the
//!   body reads fail (408 from the endpoints that read bodies) and the connection is closed.
//! - Answers: while answer bytes wait to be sent, the client must take some within `write_timeout`;
//!   else the connection is reset (a close would leave the unsent bytes and the close itself queued
//!   in the kernel behind a client that reads nothing).
//! - Connections: at most `connections_per_client` open at once per client address (IPv6: per /64,
//!   see [`client_key`]) and `max_connections` in all. When all are open, a connection from an
//!   address holding fewer than another address by two or more takes the slot of that address's
//!   oldest idle connection (else its oldest), which is reset: a few addresses can never keep another
//!   out. A connection refused is answered 503 and closed at once.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::http::{HeaderValue, header};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

use super::limits::HttpLimits;
use super::raw_head::HeadTap;
use crate::metrics::Metrics;

/// The answer to a connection over a limit, written without reading the request.
fn over_limit_answer() -> String {
    let body = r#"{"error":"too many connections from this address or in all; retry later"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Retry-After: 1\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A request body that did not arrive within the body timeout.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?} of its headers")]
pub struct BodyTimeout(pub Duration);

/// Answers that waited past the write timeout with none of their bytes taken by the client.
#[derive(Debug, thiserror::Error)]
#[error("the client took none of its answers for {0:?}")]
struct WriteTimeout(Duration);

/// Serves `router` on `listener` within `limits` until `shutdown` completes, then lets open
/// connections finish their request in flight and returns when all are closed. Refused and dropped
/// connections are counted in `metrics`, if given.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    metrics: Option<Arc<Metrics>>,
    shutdown: impl Future<Output = ()>,
) {
    let table = Arc::new(Mutex::new(ConnectionTable::default()));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or memory: waiting lets connections close instead of spinning.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let slot = match ConnectionSlot::take(&table, client_key(peer.ip()), &limits) {
            Ok((slot, evicted)) => {
                if let Some(evicted) = evicted {
                    tracing::debug!(peer = %peer, from = %evicted, "all connections open: one of the address holding the most dropped for this one");
                    metrics.iter().for_each(|m| m.http_connection_dropped("evicted"));
                }
                slot
            }
            Err(refusal) => {
                tracing::debug!(peer = %peer, reason = refusal.label(), "connection over the limit: refused");
                metrics.iter().for_each(|m| m.http_connection_refused(refusal.label()));
                // Best effort: a client that already sent its request may see a reset instead.
                let _ = stream.try_write(over_limit_answer().as_bytes());
                continue;
            }
        };
        let connection =
            serve_connection(stream, router.clone(), limits, Arc::clone(&slot.control), stop_rx.clone());
        let metrics = metrics.clone();
        connections.spawn(async move {
            if let (Some(reason), Some(metrics)) = (connection.await, &metrics) {
                metrics.http_connection_dropped(reason);
            }
            drop(slot);
        });
    }
    let _ = stop_tx.send(true);
    while connections.join_next().await.is_some() {}
}

/// Serves one connection until it ends; returns `Some("write_timeout")` when the write timeout
/// ended it (a label of [`crate::metrics::HTTP_DROP_REASONS`]).
async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: HttpLimits,
    control: Arc<ConnectionControl>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> Option<&'static str> {
    let requests = Arc::clone(&control);
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let deadline = Instant::now() + limits.body_timeout;
        let mut request = request.map(|body| {
            Body::new(DeadlineBody { inner: body, deadline, limit: limits.body_timeout, sleep: None })
        });
        let in_progress = RequestInProgress::start(&requests);
        // The credential compared must be the one sent: hyper trimmed the whitespace after it.
        if let Some(sent) = requests.raw_heads.lock().unwrap_or_else(|p| p.into_inner()).next_request() {
            let headers = request.headers_mut();
            headers.remove(header::AUTHORIZATION);
            for value in sent {
                if let Ok(value) = HeaderValue::from_bytes(&value) {
                    headers.append(header::AUTHORIZATION, value);
                }
            }
        }
        let answer = router.clone().oneshot(request);
        async move {
            let answer = answer.await;
            drop(in_progress);
            answer
        }
    });
    let io = ConnectionIo {
        stream,
        write_timeout: limits.write_timeout,
        stalled: None,
        control: Arc::clone(&control),
    };
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_head_bytes);
    let connection = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "HTTP connection ended with an error");
            }
        }
        () = control.evicted.notified() => {
            // Counted where its slot was given away.
            control.reset.store(true, Ordering::Relaxed);
            return None;
        }
        _ = stop.changed() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
    control.write_timed_out.load(Ordering::Relaxed).then_some("write_timeout")
}

/// What the server shares with one open connection.
#[derive(Debug)]
struct ConnectionControl {
    /// The requests' heads as read off the socket, for what hyper's parser trims.
    raw_heads: Mutex<HeadTap>,
    /// Requests whose answer is being made; 0 while the connection is idle (kept alive between
    /// requests, or its last answer made and being written).
    requests_in_progress: AtomicUsize,
    /// Notified when the connection's slot goes to another address.
    evicted: Notify,
    /// Set when the connection is to be reset rather than closed.
    reset: AtomicBool,
    /// Set when the write timeout ended it.
    write_timed_out: AtomicBool,
}

impl ConnectionControl {
    fn new(max_head_bytes: usize) -> ConnectionControl {
        ConnectionControl {
            raw_heads: Mutex::new(HeadTap::new(max_head_bytes)),
            requests_in_progress: AtomicUsize::new(0),
            evicted: Notify::new(),
            reset: AtomicBool::new(false),
            write_timed_out: AtomicBool::new(false),
        }
    }
}

/// One request being answered, counted until dropped.
struct RequestInProgress(Arc<ConnectionControl>);

impl RequestInProgress {
    fn start(control: &Arc<ConnectionControl>) -> RequestInProgress {
        control.requests_in_progress.fetch_add(1, Ordering::Relaxed);
        RequestInProgress(Arc::clone(control))
    }
}

impl Drop for RequestInProgress {
    fn drop(&mut self) {
        self.0.requests_in_progress.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Why a connection was refused on arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Its address holds `connections_per_client` already.
    PerClient,
    /// Every slot is taken and no address holds enough more than this one to give one up.
    MaxConnections,
}

impl Refusal {
    /// Its label in `anes_http_connections_refused_total`.
    fn label(self) -> &'static str {
        match self {
            Refusal::PerClient => "per_client",
            Refusal::MaxConnections => "max_connections",
        }
    }
}

/// The address a client's connections are counted under: an IPv4 address (also when IPv4-mapped) as
/// itself, an IPv6 address as its /64. A single host is routinely handed a whole /64, so counting
/// its addresses one by one would let it hold every slot with one connection per address, leaving
/// nobody holding two for a newcomer to evict.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(v6.to_bits() & !u128::from(u64::MAX))),
        v4 @ IpAddr::V4(_) => v4,
    }
}

/// Every open connection by client address (its [`client_key`]), each address's in the order they
/// were accepted.
#[derive(Debug, Default)]
struct ConnectionTable {
    by_client: HashMap<IpAddr, BTreeMap<u64, Arc<ConnectionControl>>>,
    total: usize,
    next_id: u64,
}

impl ConnectionTable {
    /// Frees a slot for a connection from an address holding `open`: the oldest idle connection (else
    /// the oldest) of the address holding the most, when that is at least two more than `open`, so
    /// the move never leaves it with fewer than the newcomer. Returns the address it was taken from.
    fn evict_for(&mut self, open: usize) -> Option<IpAddr> {
        let (&hog, connections) = self.by_client.iter_mut().max_by_key(|(_, c)| c.len())?;
        if connections.len() < open + 2 {
            return None;
        }
        let idle = connections
            .iter()
            .find(|(_, c)| c.requests_in_progress.load(Ordering::Relaxed) == 0)
            .map(|(&id, _)| id);
        let id = idle.or_else(|| connections.keys().next().copied())?;
        let victim = connections.remove(&id)?;
        // notify_one keeps the wakeup for a task not yet waiting on it.
        victim.evicted.notify_one();
        self.total -= 1;
        Some(hog)
    }
}

/// One open connection, counted until dropped.
struct ConnectionSlot {
    table: Arc<Mutex<ConnectionTable>>,
    client: IpAddr,
    id: u64,
    control: Arc<ConnectionControl>,
}

impl ConnectionSlot {
    /// A slot for a connection from `client` (a [`client_key`]), and the address whose connection
    /// was dropped to make room for it, if one was.
    fn take(
        table: &Arc<Mutex<ConnectionTable>>,
        client: IpAddr,
        limits: &HttpLimits,
    ) -> Result<(ConnectionSlot, Option<IpAddr>), Refusal> {
        let mut guard = table.lock().unwrap_or_else(|p| p.into_inner());
        let open = guard.by_client.get(&client).map_or(0, BTreeMap::len);
        if open >= limits.connections_per_client {
            return Err(Refusal::PerClient);
        }
        let evicted = if guard.total >= limits.max_connections {
            Some(guard.evict_for(open).ok_or(Refusal::MaxConnections)?)
        } else {
            None
        };
        let id = guard.next_id;
        guard.next_id += 1;
        let control = Arc::new(ConnectionControl::new(limits.max_head_bytes));
        guard.by_client.entry(client).or_default().insert(id, Arc::clone(&control));
        guard.total += 1;
        Ok((ConnectionSlot { table: Arc::clone(table), client, id, control }, evicted))
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut guard = self.table.lock().unwrap_or_else(|p| p.into_inner());
        // An evicted connection left the table when its slot was given away.
        let Some(connections) = guard.by_client.get_mut(&self.client) else { return };
        if connections.remove(&self.id).is_none() {
            return;
        }
        if connections.is_empty() {
            guard.by_client.remove(&self.client);
        }
        guard.total -= 1;
    }
}

/// A connection's socket: a write the client takes nothing of for `write_timeout` fails, and the
/// socket is reset when dropped after that or after an eviction.
struct ConnectionIo {
    stream: TcpStream,
    write_timeout: Duration,
    // Runs while a write waits for the client; any byte taken ends it.
    stalled: Option<Pin<Box<Sleep>>>,
    control: Arc<ConnectionControl>,
}

impl ConnectionIo {
    /// A write's outcome, or the write timeout's error once the client took nothing for it.
    fn wait_for_client(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        if written.is_ready() {
            // Bytes taken (or an error that ends the connection anyway).
            self.stalled = None;
            return written;
        }
        let limit = self.write_timeout;
        let stalled = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if stalled.as_mut().poll(cx).is_pending() {
            return Poll::Pending;
        }
        self.control.write_timed_out.store(true, Ordering::Relaxed);
        self.control.reset.store(true, Ordering::Relaxed);
        Poll::Ready(Err(std::io::Error::new(std::io::ErrorKind::TimedOut, WriteTimeout(limit))))
    }
}

impl AsyncRead for ConnectionIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = read {
            self.control.raw_heads.lock().unwrap_or_else(|p| p.into_inner()).feed(&buf.filled()[before..]);
        }
        read
    }
}

impl AsyncWrite for ConnectionIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.wait_for_client(cx, written)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.wait_for_client(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        // A socket has no buffer of its own to flush: this takes no byte, so it says nothing of the
        // client.
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

impl Drop for ConnectionIo {
    fn drop(&mut self) {
        if self.control.reset.load(Ordering::Relaxed) {
            // A reset frees the socket now; a close would queue behind the bytes the client never took.
            let _ = self.stream.set_zero_linger();
        }
    }
}

/// A request body that fails with [`BodyTimeout`] once `deadline` passes before its end.
struct DeadlineBody {
    inner: Incoming,
    deadline: Instant,
    limit: Duration,
    // Made on the first wait, so requests whose body is already there cost no timer.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl HttpBody for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::BoxError>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(axum::BoxError::from)));
        }
        let deadline = this.deadline;
        let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(BodyTimeout(this.limit).into()))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn clients_are_keyed_by_ipv4_address_or_ipv6_64() {
        assert_eq!(client_key(ip("192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_key(ip("::ffff:192.0.2.7")), ip("192.0.2.7"));
        assert_eq!(client_key(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:2:ffff::9")));
        assert_ne!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:3::1")));
        assert_eq!(client_key(ip("::1")), ip("::"));
    }

    fn take(
        table: &Arc<Mutex<ConnectionTable>>,
        peer: &str,
        limits: &HttpLimits,
    ) -> Result<(ConnectionSlot, Option<IpAddr>), Refusal> {
        ConnectionSlot::take(table, client_key(ip(peer)), limits)
    }

    #[test]
    fn one_64_holding_every_slot_from_distinct_addresses_cannot_keep_a_fresh_network_out() {
        let limits = HttpLimits { connections_per_client: 32, max_connections: 8, ..HttpLimits::default() };
        let table = Arc::new(Mutex::new(ConnectionTable::default()));
        let mut slots: Vec<ConnectionSlot> = (1..=8)
            .map(|host| take(&table, &format!("2001:db8:0:1::{host:x}"), &limits).unwrap().0)
            .collect();
        for slot in &slots {
            // Busy, so eviction cannot prefer an idle one: it must still find one.
            slot.control.requests_in_progress.store(1, Ordering::Relaxed);
        }
        let (newcomer, evicted) = take(&table, "2001:db8:0:2::1", &limits).unwrap();
        assert_eq!(evicted, Some(ip("2001:db8:0:1::")));
        let (ipv4, evicted) = take(&table, "192.0.2.1", &limits).unwrap();
        assert_eq!(evicted, Some(ip("2001:db8:0:1::")));
        assert_eq!(table.lock().unwrap().total, 8);
        slots.push(newcomer);
        slots.push(ipv4);
        drop(slots);
        let guard = table.lock().unwrap();
        assert_eq!((guard.total, guard.by_client.len()), (0, 0));
    }

    #[test]
    fn the_per_client_limit_counts_a_whole_64() {
        let limits = HttpLimits { connections_per_client: 3, max_connections: 100, ..HttpLimits::default() };
        let table = Arc::new(Mutex::new(ConnectionTable::default()));
        let _held: Vec<ConnectionSlot> = (1..=3)
            .map(|host| take(&table, &format!("2001:db8:0:1::{host:x}"), &limits).unwrap().0)
            .collect();
        assert_eq!(take(&table, "2001:db8:0:1:ffff::1", &limits).err(), Some(Refusal::PerClient));
        assert!(take(&table, "2001:db8:0:2::1", &limits).is_ok());
        assert!(take(&table, "::ffff:192.0.2.1", &limits).is_ok());
    }
}
