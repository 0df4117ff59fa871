//! The HTTP server's time and connection limits: a leaf, so the configuration that sets them does not
//! depend on the server.

use std::time::Duration;

/// Time and connection limits of the HTTP server (`[server]` keys in the configuration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// Longest wait for a request's head, including the idle wait on a kept-alive connection
    /// (`header_timeout_seconds`).
    pub header_timeout: Duration,
    /// Longest time from a request's head to the end of its body (`body_timeout_seconds`).
    pub body_timeout: Duration,
    /// Longest time the client may take none of an answer's bytes while some wait to be sent
    /// (`write_timeout_seconds`); past it the connection is reset.
    pub write_timeout: Duration,
    /// Most connections open at once per client address, IPv6 per /64 (`connections_per_client`):
    /// one host usually holds a whole /64, and must not count as 2^64 clients.
    pub connections_per_client: usize,
    /// Most connections open at once (`max_connections`). When they are all open, a connection from
    /// an address (IPv6: a /64) holding fewer than another (by two or more) takes the slot of that
    /// address's oldest idle connection, so no set of addresses can keep a new one out.
    pub max_connections: usize,
    /// Largest request head (request line and headers) read; a longer one is answered 431. At least
    /// 8192, hyper's smallest read buffer.
    pub max_head_bytes: usize,
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        // A scrape, a webhook or a 1 MiB input batch takes milliseconds on a LAN; these leave two
        // orders of magnitude for slow clients. 32 per client covers Prometheus, Alertmanager, a
        // browser's 6 and a pushing client's pool from one host; 512 in all stays well under the usual
        // 1024 descriptors with the pipelines' own files. A client taking nothing for 10 s while
        // answers wait has stopped reading: any byte taken restarts that clock, so a slow link is
        // never cut for being slow.
        HttpLimits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(10),
            connections_per_client: 32,
            max_connections: 512,
            // hyper's own default (8 KiB + 100 x 4 KiB), named here so every server states it.
            max_head_bytes: 8192 + 4096 * 100,
        }
    }
}
