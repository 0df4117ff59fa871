//! Workers on other machines: `anes worker --listen HOST:PORT --token-file FILE` serves the worker
//! protocol over TCP to one coordinator at a time ([`listen`]), and the service's [`RemoteWorker`]
//! connects to it: a third transport behind [`crate::WorkerHandle`], beside threads and child
//! processes.
//!
//! With TLS ([`tls`]: the worker's `--tls-cert`/`--tls-key`, the coordinator's `tls_ca`), the TLS
//! handshake comes first, bounded in time too, and everything below runs inside it.
//!
//! The connection starts with the coordinator's token, in one binary frame of its own (`len u32`, the
//! contents `"ANWT"` and the token, the frame's checksum; at most [`MAX_TOKEN_LEN`] bytes of token).
//! The worker reads nothing else first: it compares the token's blake3 digest with its own token's in
//! constant time and, on a match, answers with its hello and serves the session as `anes worker` serves
//! its stdin; otherwise it sends one [`crate::protocol::Reply::Error`] naming why and closes. The
//! whole handshake is bounded in bytes and in time ([`TOKEN_TIMEOUT`] on the worker's side), and in
//! numbers: connections that stay silent lose their handshake slots to new ones ([`listen`]).
//!
//! For the pipeline a lost connection is a dead worker, exactly as a child process that exits: the
//! reader reports [`crate::WorkerOutput::Exited`], and the rollback procedure's next start connects
//! again (resolving the address again: a restarted pod has a new IP address).
//!
//! A peer that vanished behind a partition leaves a half-open connection, found on both sides:
//! - the coordinator sends a heartbeat frame ([`crate::protocol::HEARTBEAT_FRAME`]) after every
//!   [`HEARTBEAT_INTERVAL`] without a command, and the worker ends a session that sent it nothing
//!   for its idle timeout ([`IDLE_TIMEOUT`] by default), and a reply it cannot deliver for as long;
//! - both sockets have TCP keepalive and, on Linux, `TCP_USER_TIMEOUT` ([`keepalive`]): a
//!   coordinator whose heartbeats go unacknowledged, or whose quiet worker's host is gone, sees its
//!   connection fail; a worker that stalls on purpose (a drill) is the pipeline's step timeout's to
//!   judge, as for every transport.
//!
//! A worker serves one coordinator at a time, and a live coordinator keeps its worker: a second one
//! that authenticates while a session is open waits for it to end, up to its busy grace (by default
//! the idle timeout and a second, so a coordinator that restarted after its predecessor vanished
//! gets the worker as soon as the dead session is dropped), and is refused as busy otherwise. A newer
//! coordinator never displaces a live one: two services that both think they own a pipeline (the
//! split brain the store's fencing epoch settles) would otherwise take the workers from each other in
//! turn; the one the store fenced stops writing and is to be stopped, and its workers are free once it is.

mod client;
pub mod listen;
#[cfg(test)]
mod tests;
pub mod tls;
#[cfg(test)]
mod tls_tests;
mod token;

use std::path::PathBuf;
use std::time::Duration;

pub use client::{ConnectingWorker, RemoteWorker};
pub use token::{HandshakeError, read_token_file};

/// The first bytes of the token frame's contents.
pub const TOKEN_MAGIC: [u8; 4] = *b"ANWT";

/// The longest token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 1024;

/// The largest token file read: one line holding the token.
pub const MAX_TOKEN_FILE_LEN: u64 = 4 << 10;

/// How long a coordinator gives a worker for the TLS handshake and to answer its token.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a listening worker gives a connection to send its token (and as long again for a TLS
/// handshake before it) by default. A coordinator sends it at once, so this is a few round trips of
/// any real network; a connection that holds a handshake slot longer is not a coordinator.
pub const TOKEN_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a connection attempt to a worker may take before it counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A coordinator with nothing to send sends a heartbeat this often.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);

/// The worker's default idle timeout: a coordinator silent this long (four heartbeats missed) is
/// taken for gone and its session dropped.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// How long a coordinator waits for its worker's hello: the handshake, and a session of a vanished
/// predecessor being dropped ([`listen::ListenSettings::busy_grace`]'s default).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(11);

/// TCP keepalive on a remote worker's connection (either side): the first probe after 5 s without
/// traffic, then every second, 3 unanswered probes end it; and, on Linux, data unacknowledged for
/// 10 s ends it too (`TCP_USER_TIMEOUT`: while data waits for its acknowledgement keepalive sends no
/// probes, so a coordinator's heartbeats into a partition would otherwise be retried for ~15 min).
pub fn keepalive(stream: &std::net::TcpStream) -> std::io::Result<()> {
    let socket = socket2::SockRef::from(stream);
    let probes = socket2::TcpKeepalive::new()
        .with_time(Duration::from_secs(5))
        .with_interval(Duration::from_secs(1))
        .with_retries(3);
    socket.set_tcp_keepalive(&probes)?;
    #[cfg(target_os = "linux")]
    socket.set_tcp_user_timeout(Some(Duration::from_secs(10)))?;
    Ok(())
}

/// Where a pipeline's two remote workers listen, and the token they expect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteWorkers {
    /// Worker A's `HOST:PORT` (a host name is resolved at every connection attempt).
    pub a: String,
    /// Worker B's `HOST:PORT`.
    pub b: String,
    /// The file holding the token, read at every connection attempt (a rotated secret is picked up
    /// on the next reconnection).
    pub token_file: PathBuf,
    /// With TLS: the PEM file of the certificates a worker's chain must end in, read at every
    /// connection attempt as the token is.
    pub tls_ca: Option<PathBuf>,
    /// With TLS: the name the workers' certificates carry, when it is not the host of their
    /// addresses (workers reached by IP address with a certificate for a name).
    pub tls_server_name: Option<String>,
}
