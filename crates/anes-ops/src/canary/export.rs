//! Getting a canary's metrics to Prometheus: a `/metrics` endpoint for the run's lifetime (a scrape
//! target), or a push to a Pushgateway-compatible URL (for a short-lived job: the gateway keeps the
//! last values for Prometheus to scrape). The endpoint is the service's HTTP server
//! ([`crate::http::serve`]: axum on hyper, with its header timeout and connection limits) on a
//! current-thread tokio runtime of its own thread; the push is one `ureq` request.

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use thiserror::Error;

use super::status::CanaryStatus;
use crate::http::limits::HttpLimits;

/// How long a push may take (connect, send, answer).
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of the gateway's answer head read; its body is not read.
const PUSH_ANSWER_HEAD_LIMIT: usize = 4096;

/// A scrape is one short `GET`: a client gets 2 s to send it, and a head beyond 8 KiB (hyper's
/// smallest buffer) is refused with 431. Connections are closed after each answer.
const ENDPOINT_LIMITS: HttpLimits = HttpLimits {
    header_timeout: Duration::from_secs(2),
    body_timeout: Duration::from_secs(2),
    write_timeout: Duration::from_secs(2),
    connections_per_client: 4,
    max_connections: 16,
    max_head_bytes: 8192,
};

/// Why a push failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PushError {
    /// Not an `http://host:port/path` URL.
    #[error("{url}: not a plain http URL (http://host[:port][/path])")]
    BadUrl {
        /// The URL.
        url: String,
    },
    /// The gateway could not be reached or did not answer.
    #[error("{url}: {reason}")]
    Io {
        /// The URL pushed to.
        url: String,
        /// What happened.
        reason: String,
    },
    /// The gateway refused the push.
    #[error("{url}: the gateway answered {status}")]
    Refused {
        /// The URL pushed to.
        url: String,
        /// Its status line.
        status: String,
    },
}

/// Serves `GET /metrics` from a background thread until dropped.
#[derive(Debug)]
pub struct MetricsServer {
    address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `address` and serves `status`'s metrics.
    pub fn start(address: SocketAddr, status: Arc<CanaryStatus>) -> std::io::Result<MetricsServer> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        // Bound here, so a busy address is the caller's error rather than the thread's.
        let listener = std::net::TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let router = router(status);
        let thread = std::thread::Builder::new().name("canary-metrics".into()).spawn(move || {
            runtime.block_on(crate::http::serve(listener, router, ENDPOINT_LIMITS, None, async {
                let _ = stopped.await;
            }));
        })?;
        Ok(MetricsServer { address, stop: Some(stop), thread: Some(thread) })
    }

    /// The address it listens on (the port chosen, when asked for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The metrics for `GET /metrics`, 404 for anything else.
fn router(status: Arc<CanaryStatus>) -> Router {
    Router::new().route("/metrics", get(metrics).fallback(not_found)).fallback(not_found).with_state(status)
}

async fn metrics(axum::extract::State(status): axum::extract::State<Arc<CanaryStatus>>) -> Response {
    closing(StatusCode::OK, crate::metrics::CONTENT_TYPE, status.encode())
}

async fn not_found() -> Response {
    closing(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "only GET /metrics is served here\n".into())
}

/// An answer after which hyper closes the connection: a scraper opens one per scrape, and a client
/// that reads to the end of the stream gets its end.
fn closing(code: StatusCode, content_type: &'static str, body: String) -> Response {
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
        (header::CONNECTION, HeaderValue::from_static("close")),
    ];
    (code, headers, body).into_response()
}

/// Pushes the run's metrics to a Pushgateway-compatible `url` (`http://host:port`), as job `anes_canary`
/// grouped by the run's `pipeline_id` (`PUT /metrics/job/anes_canary/pipeline_id/<id>`: the push
/// replaces the group's previous values).
pub fn push(url: &str, status: &Arc<CanaryStatus>) -> Result<(), PushError> {
    push_within(url, status, PUSH_TIMEOUT)
}

fn push_within(url: &str, status: &Arc<CanaryStatus>, timeout: Duration) -> Result<(), PushError> {
    let bad = || PushError::BadUrl { url: url.to_string() };
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let (authority, base_path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    if authority.is_empty() {
        return Err(bad());
    }
    let target = format!(
        "http://{authority}/{}{}metrics/job/anes_canary/pipeline_id/{}",
        base_path.trim_end_matches('/'),
        if base_path.is_empty() { "" } else { "/" },
        percent_encode(status.pipeline_id())
    );
    // The classic text format: the gateway's parser predates OpenMetrics' `# EOF`.
    let body: String = status.encode().lines().filter(|l| *l != "# EOF").map(|l| format!("{l}\n")).collect();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .proxy(None)
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .max_redirects(0)
        .max_response_header_size(PUSH_ANSWER_HEAD_LIMIT)
        .build()
        .into();
    let response = agent
        .put(&target)
        .header("Content-Type", "text/plain; version=0.0.4")
        .send(body.as_bytes())
        .map_err(|e| PushError::Io { url: url.to_string(), reason: e.to_string() })?;
    if response.status().is_success() {
        Ok(())
    } else {
        Err(PushError::Refused {
            url: url.to_string(),
            status: format!("{:?} {}", response.version(), response.status()),
        })
    }
}

/// Escapes a grouping-key value for a URL path segment.
fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    use super::*;

    /// Sends `request` and reads the answer to the end of the stream, which the server must close
    /// within 5 s.
    fn exchange(address: SocketAddr, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        stream.write_all(request).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).expect("the server closes the connection after its answer");
        String::from_utf8_lossy(&answer).into_owned()
    }

    #[test]
    fn serves_the_design_gauges_and_refuses_the_rest() {
        let status = CanaryStatus::new("canary-demo");
        status.set_records(10, 7);
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), Arc::clone(&status)).unwrap();
        let get = |request: &str| exchange(server.address(), request.as_bytes());
        let answer = get("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains(crate::metrics::CONTENT_TYPE), "{answer}");
        // One answer per connection, as a scraper expects of a batch job's endpoint.
        assert!(answer.to_ascii_lowercase().contains("\r\nconnection: close\r\n"), "{answer}");
        assert!(answer.contains("worker_state_divergence_flag{pipeline_id=\"canary-demo\"} 0"), "{answer}");
        assert!(answer.contains("worker_drift_offset_records{pipeline_id=\"canary-demo\"} 3"), "{answer}");
        assert!(
            answer.contains(&format!(
                "# HELP worker_state_divergence_flag {}\n",
                crate::metrics::DIVERGENCE_HELP
            ))
        );
        status.diverged();
        let answer = get("GET /metrics?x=1 HTTP/1.1\r\n\r\n");
        assert!(answer.contains("worker_state_divergence_flag{pipeline_id=\"canary-demo\"} 1"), "{answer}");
        assert!(
            answer.contains("anes_canary_result{pipeline_id=\"canary-demo\",result=\"diverged\"} 1"),
            "{answer}"
        );
        assert!(get("POST /x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get("POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get("\u{0}\u{1}garbage\r\n\r\n").starts_with("HTTP/1.1 400"));
        // The head is read up to 8 KiB, no further (exactly that, unfinished, so the server reads all of
        // it and its close is not a reset that could discard the answer).
        let mut long = b"GET /metrics HTTP/1.1\r\nX-Padding: ".to_vec();
        long.resize(ENDPOINT_LIMITS.max_head_bytes, b'a');
        assert!(exchange(server.address(), &long).starts_with("HTTP/1.1 431"));
        // A client that sends nothing and goes, or half a head and waits, does not stop the server; the
        // second is cut off after the header timeout (2 s) and the read below ends.
        drop(TcpStream::connect(server.address()).unwrap());
        let cut_off = exchange(server.address(), b"GET /metrics HTTP/1.1\r\n");
        assert!(!cut_off.contains("200 OK"), "{cut_off}");
        assert!(get("GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
    }

    const OK: &str = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

    /// A one-connection gateway on loopback: reads one request (head and `Content-Length` body),
    /// answers `answer` after `delay`, and hands back the request it read.
    fn fake_gateway(answer: String, delay: Duration) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/base/", listener.local_addr().unwrap());
        let thread = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            let complete = |r: &[u8]| {
                let text = String::from_utf8_lossy(r);
                let Some((head, body)) = text.split_once("\r\n\r\n") else { return false };
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                    })
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0);
                body.len() >= length
            };
            while !complete(&request) {
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&chunk[..n]);
            }
            std::thread::sleep(delay);
            let _ = stream.write_all(answer.as_bytes());
            String::from_utf8(request).unwrap()
        });
        (url, thread)
    }

    #[test]
    fn a_push_puts_the_classic_text_format_under_the_grouping_key() {
        let status = CanaryStatus::new("canary a/b");
        status.set_records(10, 7);
        let (url, gateway) = fake_gateway(OK.into(), Duration::ZERO);
        push(&url, &status).unwrap();
        let request = gateway.join().unwrap();
        assert!(
            request.starts_with("PUT /base/metrics/job/anes_canary/pipeline_id/canary%20a%2Fb HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.to_ascii_lowercase().contains("content-type: text/plain; version=0.0.4"),
            "{request}"
        );
        assert!(request.contains("worker_drift_offset_records{pipeline_id=\"canary a/b\"} 3\n"), "{request}");
        assert!(!request.contains("# EOF"), "{request}");
    }

    #[test]
    fn a_refused_push_names_the_url_and_the_status() {
        let status = CanaryStatus::new("c");
        let answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 5\r\n\r\nnope\n";
        let (url, gateway) = fake_gateway(answer.into(), Duration::ZERO);
        let refused = push(&url, &status).unwrap_err();
        gateway.join().unwrap();
        assert_eq!(
            refused,
            PushError::Refused { url: url.clone(), status: "HTTP/1.1 400 Bad Request".into() }
        );
        assert!(refused.to_string().starts_with(&url), "{refused}");
    }

    #[test]
    fn a_push_is_bounded_in_time_and_in_what_it_reads() {
        let status = CanaryStatus::new("c");
        let (url, gateway) = fake_gateway(OK.into(), Duration::from_secs(3));
        let started = std::time::Instant::now();
        let late = push_within(&url, &status, Duration::from_millis(500)).unwrap_err();
        assert!(matches!(&late, PushError::Io { url: named, .. } if *named == url), "{late:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        gateway.join().unwrap();
        let huge = format!("HTTP/1.1 200 OK\r\nX-Padding: {}\r\nContent-Length: 0\r\n\r\n", "a".repeat(8192));
        let (url, gateway) = fake_gateway(huge, Duration::ZERO);
        assert!(matches!(push(&url, &status), Err(PushError::Io { .. })));
        gateway.join().unwrap();
    }

    #[test]
    fn push_urls_are_checked() {
        let status = CanaryStatus::new("c");
        assert!(matches!(push("https://gateway:9091", &status), Err(PushError::BadUrl { .. })));
        assert!(matches!(push("http://", &status), Err(PushError::BadUrl { .. })));
        // Nothing listens on port 1 of loopback.
        assert!(matches!(push("http://127.0.0.1:1", &status), Err(PushError::Io { .. })));
        assert_eq!(percent_encode("a b/c"), "a%20b%2Fc");
    }
}
