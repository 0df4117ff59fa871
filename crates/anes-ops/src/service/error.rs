//! Why the service could not start.

use std::net::SocketAddr;

use thiserror::Error;

use crate::recovery::RecoveryError;

/// Why the service could not start.
#[derive(Debug, Error)]
pub enum StartError {
    /// A file named by the configuration could not be read or parsed.
    #[error("{path}: {problem}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        problem: String,
    },
    /// Listening beyond loopback needs a token.
    #[error(
        "refusing to listen on {0} without a token: set server.token_file, --token-file or ANES_TOKEN, or listen on 127.0.0.1"
    )]
    NoToken(SocketAddr),
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The token file is empty.
    #[error("{0}: the token file is empty")]
    EmptyToken(String),
    /// A pipeline's durable state could not be opened.
    #[error(transparent)]
    Recovery(#[from] RecoveryError),
    /// Something the service needs could not be set up.
    #[error("{0}")]
    Setup(String),
}
