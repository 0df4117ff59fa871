//! Getting a canary's metrics to Prometheus: a `/metrics` endpoint for the run's lifetime (a scrape
//! target), or a push to a Pushgateway-compatible URL (for a short-lived job: the gateway keeps the
//! last values for Prometheus to scrape). Plain HTTP/1.1 over std's sockets: the canary is a batch
//! program and needs no async runtime for two requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use thiserror::Error;

use super::status::CanaryStatus;

/// How long a push may take (connect, send, answer).
const PUSH_TIMEOUT: Duration = Duration::from_secs(10);

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
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `address` and serves `status`'s metrics.
    pub fn start(address: SocketAddr, status: Arc<CanaryStatus>) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(address)?;
        let address = listener.local_addr()?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("canary-metrics".into()).spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => answer(stream, &status),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        })?;
        Ok(MetricsServer { address, stop, thread: Some(thread) })
    }

    /// The address it listens on (the port chosen, when asked for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Answers one connection: the metrics for `GET /metrics`, 404 otherwise. A client that sends junk or
/// nothing gets an error status or a closed connection; nothing it sends can stop the server.
fn answer(stream: TcpStream, status: &Arc<CanaryStatus>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let mut reader = BufReader::new(stream.take(8192));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    // Read the headers up to the blank line (bounded by the take above).
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" && line != "\n" {
        line.clear();
    }
    let mut stream = reader.into_inner().into_inner();
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (code, content_type, body) =
        if method == "GET" && (path == "/metrics" || path.starts_with("/metrics?")) {
            ("200 OK", crate::metrics::CONTENT_TYPE, status.encode())
        } else {
            ("404 Not Found", "text/plain; charset=utf-8", "only GET /metrics is served here\n".to_string())
        };
    let _ = write!(
        stream,
        "HTTP/1.1 {code}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

/// Pushes the run's metrics to a Pushgateway-compatible `url` (`http://host:port`), as job `anes_canary`
/// grouped by the run's `pipeline_id` (`PUT /metrics/job/anes_canary/pipeline_id/<id>`: the push
/// replaces the group's previous values).
pub fn push(url: &str, status: &Arc<CanaryStatus>) -> Result<(), PushError> {
    let bad = || PushError::BadUrl { url: url.to_string() };
    let rest = url.strip_prefix("http://").ok_or_else(bad)?;
    let (authority, base_path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    if authority.is_empty() {
        return Err(bad());
    }
    let host_port = if authority.contains(':') { authority.to_string() } else { format!("{authority}:80") };
    let path = format!(
        "/{}{}metrics/job/anes_canary/pipeline_id/{}",
        base_path.trim_end_matches('/'),
        if base_path.is_empty() { "" } else { "/" },
        percent_encode(status.pipeline_id())
    );
    // The classic text format: the gateway's parser predates OpenMetrics' `# EOF`.
    let body: String = status.encode().lines().filter(|l| *l != "# EOF").map(|l| format!("{l}\n")).collect();
    let io = |e: std::io::Error| PushError::Io { url: url.to_string(), reason: e.to_string() };
    let address = host_port
        .to_socket_addrs()
        .map_err(io)?
        .next()
        .ok_or_else(|| PushError::Io { url: url.to_string(), reason: "the host has no address".into() })?;
    let mut stream = TcpStream::connect_timeout(&address, PUSH_TIMEOUT).map_err(io)?;
    stream.set_read_timeout(Some(PUSH_TIMEOUT)).map_err(io)?;
    stream.set_write_timeout(Some(PUSH_TIMEOUT)).map_err(io)?;
    write!(
        stream,
        "PUT {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .map_err(io)?;
    let mut status_line = String::new();
    BufReader::new(stream.take(4096)).read_line(&mut status_line).map_err(io)?;
    let code = status_line.split_whitespace().nth(1).unwrap_or("");
    if code.starts_with('2') {
        Ok(())
    } else {
        Err(PushError::Refused { url: url.to_string(), status: status_line.trim().to_string() })
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
    use super::*;

    fn get(address: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn serves_the_design_gauges_and_refuses_the_rest() {
        let status = CanaryStatus::new("canary-demo");
        status.set_records(10, 7);
        let server = MetricsServer::start("127.0.0.1:0".parse().unwrap(), Arc::clone(&status)).unwrap();
        let answer = get(server.address(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.contains("worker_state_divergence_flag{pipeline_id=\"canary-demo\"} 0"), "{answer}");
        assert!(answer.contains("worker_drift_offset_records{pipeline_id=\"canary-demo\"} 3"), "{answer}");
        assert!(
            answer.contains(&format!(
                "# HELP worker_state_divergence_flag {}\n",
                crate::metrics::DIVERGENCE_HELP
            ))
        );
        status.diverged();
        let answer = get(server.address(), "GET /metrics HTTP/1.1\r\n\r\n");
        assert!(answer.contains("worker_state_divergence_flag{pipeline_id=\"canary-demo\"} 1"), "{answer}");
        assert!(
            answer.contains("anes_canary_result{pipeline_id=\"canary-demo\",result=\"diverged\"} 1"),
            "{answer}"
        );
        assert!(get(server.address(), "POST /x HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(server.address(), "\u{0}\u{1}garbage\r\n\r\n").starts_with("HTTP/1.1 404"));
        // A client that sends nothing and goes does not stop the server.
        drop(TcpStream::connect(server.address()).unwrap());
        assert!(get(server.address(), "GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
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
