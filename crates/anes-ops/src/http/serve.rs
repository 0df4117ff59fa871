//! The HTTP server's connections: hyper's HTTP/1 served one task per connection, bounding time and
//! numbers where `axum::serve` does not (it has no timer, so a client that never finishes its headers
//! or its body holds a connection and a task forever).
//!
//! - Headers: each request's head (and the wait for the next one on a kept-alive connection) must
//!   arrive within `header_timeout`, else hyper closes the connection.
//! - Bodies: a request's body must arrive in full within `body_timeout` of its head; after that the
//!   body reads fail (408 from the endpoints that read bodies) and the connection is closed.
//! - Connections: at most `connections_per_client` open at once from one IP address and
//!   `max_connections` in all; a connection beyond either is answered 503 and closed at once.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

use super::limits::HttpLimits;

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

/// Serves `router` on `listener` within `limits` until `shutdown` completes, then lets open
/// connections finish their request in flight and returns when all are closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: HttpLimits,
    shutdown: impl Future<Output = ()>,
) {
    let counts = Arc::new(Mutex::new(ConnectionCounts::default()));
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
        let Some(slot) = ConnectionSlot::take(&counts, peer.ip().to_canonical(), &limits) else {
            tracing::debug!(peer = %peer, "connection over the limit: refused");
            // Best effort: a client that already sent its request may see a reset instead.
            let _ = stream.try_write(over_limit_answer().as_bytes());
            continue;
        };
        let connection = serve_connection(stream, router.clone(), limits, stop_rx.clone());
        connections.spawn(async move {
            connection.await;
            drop(slot);
        });
    }
    let _ = stop_tx.send(true);
    while connections.join_next().await.is_some() {}
}

async fn serve_connection(
    stream: TcpStream,
    router: Router,
    limits: HttpLimits,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let deadline = Instant::now() + limits.body_timeout;
        let request = request.map(|body| {
            Body::new(DeadlineBody { inner: body, deadline, limit: limits.body_timeout, sleep: None })
        });
        router.clone().oneshot(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_head_bytes);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "HTTP connection ended with an error");
            }
        }
        _ = stop.changed() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

#[derive(Debug, Default)]
struct ConnectionCounts {
    per_client: HashMap<IpAddr, usize>,
    total: usize,
}

/// One open connection, counted until dropped.
struct ConnectionSlot {
    counts: Arc<Mutex<ConnectionCounts>>,
    client: IpAddr,
}

impl ConnectionSlot {
    fn take(
        counts: &Arc<Mutex<ConnectionCounts>>,
        client: IpAddr,
        limits: &HttpLimits,
    ) -> Option<ConnectionSlot> {
        let mut guard = counts.lock().unwrap_or_else(|p| p.into_inner());
        let open = guard.per_client.get(&client).copied().unwrap_or(0);
        if open >= limits.connections_per_client || guard.total >= limits.max_connections {
            return None;
        }
        guard.per_client.insert(client, open + 1);
        guard.total += 1;
        Some(ConnectionSlot { counts: Arc::clone(counts), client })
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        let mut guard = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        guard.total -= 1;
        if let Some(open) = guard.per_client.get_mut(&self.client) {
            *open -= 1;
            if *open == 0 {
                guard.per_client.remove(&self.client);
            }
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
