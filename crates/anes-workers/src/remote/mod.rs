//! Workers on other machines: `anes worker --listen HOST:PORT --token-file FILE` serves the worker
//! protocol over TCP to one coordinator at a time ([`listen`]), and the service's [`RemoteWorker`]
//! connects to it: a third transport behind [`crate::WorkerHandle`], beside threads and child
//! processes.
//!
//! The connection starts with the coordinator's token, in one binary frame of its own (`len u32`, the
//! contents `"ANWT"` and the token, the frame's checksum; at most [`MAX_TOKEN_LEN`] bytes of token).
//! The worker reads nothing else first: it compares the token's blake3 digest with its own token's in
//! constant time and, on a match, answers with its hello and serves the session as `anes worker` serves
//! its stdin; otherwise it sends one [`crate::protocol::Reply::Error`] naming why and closes. The
//! whole handshake is bounded in bytes and in time ([`HANDSHAKE_TIMEOUT`]).
//!
//! For the pipeline a lost connection is a dead worker, exactly as a child process that exits: the
//! reader reports [`crate::WorkerOutput::Exited`], and the rollback procedure's next start connects
//! again (resolving the address again: a restarted pod has a new IP address).

mod client;
pub mod listen;
#[cfg(test)]
mod tests;
mod token;

use std::path::PathBuf;
use std::time::Duration;

pub use client::RemoteWorker;
pub use token::{HandshakeError, read_token_file};

/// The first bytes of the token frame's contents.
pub const TOKEN_MAGIC: [u8; 4] = *b"ANWT";

/// The longest token accepted, in bytes.
pub const MAX_TOKEN_LEN: usize = 1024;

/// The largest token file read: one line holding the token.
pub const MAX_TOKEN_FILE_LEN: u64 = 4 << 10;

/// How long a coordinator has, from its connection, to send its token (the worker's side), and a
/// worker to answer it (the coordinator's).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a connection attempt to a worker may take before it counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

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
}
