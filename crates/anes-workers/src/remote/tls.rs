//! TLS on a remote worker's connection (rustls, the aws-lc-rs provider the S3 store already links):
//! the worker presents a certificate (`anes worker --tls-cert --tls-key`), the coordinator checks it
//! against its CA file (`[pipeline.remote] tls_ca`). The token still comes first inside the session.
//!
//! A connection is read by one thread and written by another (the transports' reader and writer), so
//! the rustls state is shared behind a mutex that is never held across socket I/O: the reader reads
//! ciphertext from the socket unlocked and feeds it in; the writer encrypts locked and writes to the
//! socket unlocked, and is the only one that writes. Anything rustls wants to send on the reader's
//! behalf after the handshake (a key update's answer) waits for the writer's next write: both sides
//! write at least every heartbeat. Neither side can then block the other's progress, which a lock
//! held across a blocking write could do (both peers writing, neither reading).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use thiserror::Error;

pub use rustls::{ClientConfig, ServerConfig};

/// The largest certificate, key or CA file read.
pub const MAX_PEM_FILE_LEN: u64 = 256 << 10;

/// Why TLS could not be set up from its files.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TlsError {
    /// The file could not be read (missing, not a regular file, too large).
    #[error("{path}: {problem}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        problem: String,
    },
    /// The file holds no PEM item of the kind needed.
    #[error("{path}: no {what} in PEM form")]
    Missing {
        /// The file.
        path: PathBuf,
        /// `certificate` or `private key`.
        what: &'static str,
    },
    /// A PEM item is damaged.
    #[error("{path}: {problem}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// rustls' reason.
        problem: String,
    },
    /// rustls refused the certificate, the key or the pair.
    #[error("{path}: {problem}")]
    Refused {
        /// The file the item came from.
        path: PathBuf,
        /// rustls' reason.
        problem: String,
    },
}

fn read_pem(path: &Path, what: &'static str) -> Result<Vec<u8>, TlsError> {
    anes_fs::read_capped(path, MAX_PEM_FILE_LEN, what)
        .map_err(|e| TlsError::File { path: path.to_owned(), problem: e.problem() })
}

fn certificates(path: &Path, what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read_pem(path, what)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Pem { path: path.to_owned(), problem: e.to_string() })?;
    if certs.is_empty() {
        return Err(TlsError::Missing { path: path.to_owned(), what: "certificate" });
    }
    Ok(certs)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The worker's side: its certificate chain and private key, from PEM files.
pub fn server_config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let chain = certificates(cert, "TLS certificate file")?;
    let key_pem = read_pem(key, "TLS key file")?;
    let private_key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => {
            TlsError::Missing { path: key.to_owned(), what: "private key" }
        }
        e => TlsError::Pem { path: key.to_owned(), problem: e.to_string() },
    })?;
    let config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Refused { path: cert.to_owned(), problem: e.to_string() })?
        .with_no_client_auth()
        .with_single_cert(chain, private_key)
        .map_err(|e| TlsError::Refused { path: key.to_owned(), problem: e.to_string() })?;
    Ok(Arc::new(config))
}

/// The coordinator's side: the certificates a worker's chain must end in, from a PEM file.
pub fn client_config(ca: &Path) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in certificates(ca, "TLS CA file")? {
        roots.add(cert).map_err(|e| TlsError::Refused { path: ca.to_owned(), problem: e.to_string() })?;
    }
    let config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError::Refused { path: ca.to_owned(), problem: e.to_string() })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// How a coordinator reaches its workers over TLS.
#[derive(Debug, Clone)]
pub struct ClientTls {
    /// Trust and protocol settings.
    pub config: Arc<rustls::ClientConfig>,
    /// The name the worker's certificate must carry; `None`: the host part of its address.
    pub server_name: Option<String>,
}

/// The name a worker's certificate is checked against: `server_name`, else the host of `address`
/// (`HOST:PORT`, an IPv6 address in brackets).
pub(crate) fn name_for(address: &str, server_name: Option<&str>) -> std::io::Result<ServerName<'static>> {
    let host = match server_name {
        Some(name) => name,
        None => {
            let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
            host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host)
        }
    };
    parse_server_name(host).map_err(|e| std::io::Error::new(ErrorKind::InvalidInput, e))
}

/// `name` as the name a certificate is checked against: a DNS name or an IP address.
pub fn parse_server_name(name: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(name.to_string()).map_err(|e| format!("{name:?} is not a TLS server name: {e}"))
}

/// A TCP connection, in the clear or with TLS over it; split into a reader and a writer for two
/// threads.
#[derive(Debug)]
pub(crate) struct Link {
    tcp: TcpStream,
    tls: Option<Arc<Mutex<rustls::Connection>>>,
}

impl Link {
    pub(crate) fn plain(tcp: TcpStream) -> Link {
        Link { tcp, tls: None }
    }

    /// Runs the TLS handshake of `connection` over `tcp`, within `timeout` in all.
    pub(crate) fn handshake(
        tcp: TcpStream,
        mut connection: rustls::Connection,
        timeout: Duration,
    ) -> std::io::Result<Link> {
        let deadline = Instant::now() + timeout;
        let mut socket = &tcp;
        while connection.is_handshaking() || connection.wants_write() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::Error::new(
                    ErrorKind::TimedOut,
                    format!("no TLS handshake within {} s", timeout.as_secs_f64()),
                ));
            }
            tcp.set_read_timeout(Some(left))?;
            tcp.set_write_timeout(Some(left))?;
            while connection.wants_write() {
                connection.write_tls(&mut socket)?;
            }
            if connection.is_handshaking() && connection.wants_read() {
                if connection.read_tls(&mut socket)? == 0 {
                    return Err(std::io::Error::new(
                        ErrorKind::UnexpectedEof,
                        "the connection closed during the TLS handshake",
                    ));
                }
                if let Err(e) = connection.process_new_packets() {
                    // The alert telling the peer why, if it can still be sent.
                    let _ = connection.write_tls(&mut socket);
                    return Err(std::io::Error::new(ErrorKind::InvalidData, format!("TLS: {e}")));
                }
            }
        }
        tcp.set_write_timeout(None)?;
        Ok(Link { tcp, tls: Some(Arc::new(Mutex::new(connection))) })
    }

    pub(crate) fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// The reading half. With TLS it holds the ciphertext it read ahead of rustls, so a connection
    /// must be read through one reader from its start (the token's) to its end (the session's).
    pub(crate) fn reader(&self) -> std::io::Result<LinkReader> {
        Ok(LinkReader { tcp: self.tcp.try_clone()?, tls: self.tls.clone(), ciphertext: Vec::new(), fed: 0 })
    }

    pub(crate) fn writer(&self) -> std::io::Result<LinkWriter> {
        Ok(LinkWriter { tcp: self.tcp.try_clone()?, tls: self.tls.clone(), ciphertext: Vec::new() })
    }
}

fn lock(tls: &Mutex<rustls::Connection>) -> std::sync::MutexGuard<'_, rustls::Connection> {
    tls.lock().unwrap_or_else(|p| p.into_inner())
}

/// The reading half of a [`Link`]: plaintext out.
#[derive(Debug)]
pub(crate) struct LinkReader {
    tcp: TcpStream,
    tls: Option<Arc<Mutex<rustls::Connection>>>,
    /// Ciphertext read from the socket and not yet taken by rustls.
    ciphertext: Vec<u8>,
    fed: usize,
}

impl Read for LinkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(tls) = &self.tls else { return self.tcp.read(buf) };
        loop {
            {
                let mut connection = lock(tls);
                match connection.reader().read(buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    done => return done,
                }
                // Fed only while no plaintext waits, so rustls' plaintext buffer stays bounded.
                if self.fed < self.ciphertext.len() {
                    self.fed += connection.read_tls(&mut &self.ciphertext[self.fed..])?;
                    connection
                        .process_new_packets()
                        .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, format!("TLS: {e}")))?;
                    continue;
                }
            }
            self.ciphertext.resize(16 << 10, 0);
            self.fed = 0;
            let n = match self.tcp.read(&mut self.ciphertext) {
                Ok(n) => n,
                Err(e) => {
                    self.ciphertext.clear();
                    return Err(e);
                }
            };
            self.ciphertext.truncate(n);
            if n == 0 {
                // The end of the stream, told to rustls: a reader then sees a clean end after the
                // peer's close_notify, or an unexpected end without one.
                let mut connection = lock(tls);
                connection.read_tls(&mut &[][..])?;
                connection
                    .process_new_packets()
                    .map_err(|e| std::io::Error::new(ErrorKind::InvalidData, format!("TLS: {e}")))?;
                return match connection.reader().read(buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
                    done => done,
                };
            }
        }
    }
}

/// The writing half of a [`Link`]: plaintext in.
#[derive(Debug)]
pub(crate) struct LinkWriter {
    tcp: TcpStream,
    tls: Option<Arc<Mutex<rustls::Connection>>>,
    ciphertext: Vec<u8>,
}

impl LinkWriter {
    /// Encrypts `plaintext` (all of it, or as much as rustls buffers) under the lock, then writes the
    /// ciphertext without it.
    fn seal_and_send(&mut self, plaintext: &[u8]) -> std::io::Result<usize> {
        let Some(tls) = &self.tls else { return self.tcp.write(plaintext) };
        let taken = {
            let mut connection = lock(tls);
            let taken = connection.writer().write(plaintext)?;
            self.ciphertext.clear();
            while connection.wants_write() {
                connection.write_tls(&mut self.ciphertext)?;
            }
            taken
        };
        self.tcp.write_all(&self.ciphertext)?;
        Ok(taken)
    }
}

impl Write for LinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let taken = self.seal_and_send(buf)?;
            // Nothing taken: rustls' buffer was full, and is empty now that it was sent.
            if taken > 0 {
                return Ok(taken);
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.seal_and_send(&[])?;
        self.tcp.flush()
    }
}
