//! `[pipeline.remote]`: where a pipeline's two remote workers listen (`workers = "remote"`), and the
//! token they expect.

use std::path::PathBuf;

use serde::Deserialize;

use crate::worker::WorkerMode;
use crate::worker::remote::RemoteWorkers;

/// `[pipeline.remote]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSection {
    /// Worker A's `HOST:PORT` (a host name, resolved at every connection attempt, or an IP address).
    pub a: Option<String>,
    /// Worker B's `HOST:PORT`.
    pub b: Option<String>,
    /// The file holding the token both workers expect (`anes worker --token-file`).
    pub token_file: Option<PathBuf>,
    /// TLS: the PEM file of the CA (or self-signed certificates) the workers' certificates must
    /// chain to (`anes worker --tls-cert`). Without it the connection is plain TCP.
    pub tls_ca: Option<PathBuf>,
    /// TLS: the name the workers' certificates carry, when not the host part of `a` and `b`.
    pub tls_server_name: Option<String>,
}

/// The remote workers of a pipeline whose `workers` is `remote`; `None` for the other kinds. Errors
/// name the key, relative to the pipeline.
pub(super) fn parse_remote(
    workers: WorkerMode,
    remote: Option<&RemoteSection>,
) -> Result<Option<RemoteWorkers>, (&'static str, String)> {
    let remote = match (workers, remote) {
        (WorkerMode::Remote, Some(remote)) => remote,
        (WorkerMode::Remote, None) => {
            return Err((
                "remote",
                "missing: workers = \"remote\" needs [pipeline.remote] with a, b and token_file".into(),
            ));
        }
        (_, Some(_)) => {
            return Err(("remote", "only remote workers have addresses (workers = \"remote\")".into()));
        }
        (_, None) => return Ok(None),
    };
    let a = address("remote.a", remote.a.as_deref())?;
    let b = address("remote.b", remote.b.as_deref())?;
    if a == b {
        return Err(("remote.b", format!("{b:?} is also worker a's address: the two workers must be two")));
    }
    let token_file = remote
        .token_file
        .clone()
        .ok_or_else(|| ("remote.token_file", "missing: the file holding the workers' token".to_string()))?;
    if let Some(name) = &remote.tls_server_name {
        if remote.tls_ca.is_none() {
            return Err(("remote.tls_server_name", "only with tls_ca (TLS)".to_string()));
        }
        if crate::worker::remote::tls::parse_server_name(name).is_err() {
            return Err(("remote.tls_server_name", format!("{name:?} is not a DNS name or an IP address")));
        }
    }
    Ok(Some(RemoteWorkers {
        a,
        b,
        token_file,
        tls_ca: remote.tls_ca.clone(),
        tls_server_name: remote.tls_server_name.clone(),
    }))
}

/// A `HOST:PORT` with a host name, an IPv4 address or a bracketed IPv6 address, and a port from 1.
/// The name is not resolved here: a worker's name may resolve only once its pod runs.
fn address(key: &'static str, value: Option<&str>) -> Result<String, (&'static str, String)> {
    let value = value.ok_or_else(|| (key, "missing: the worker's HOST:PORT".to_string()))?;
    let bad = |why: &str| (key, format!("{value:?}: {why}; use HOST:PORT, such as 10.0.0.5:9660"));
    let (host, port) = value.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    match port.parse::<u16>() {
        Ok(1..) => {}
        _ => return Err(bad("the port is not 1 to 65535")),
    }
    let name_ok = !host.is_empty()
        && host.len() <= 253
        && host.bytes().all(|c| c.is_ascii_alphanumeric() || b"-._".contains(&c));
    let ipv6_ok = host.len() > 2
        && host.starts_with('[')
        && host.ends_with(']')
        && host[1..host.len() - 1].parse::<std::net::Ipv6Addr>().is_ok();
    if !name_ok && !ipv6_ok {
        return Err(bad("the host is not a name or an address"));
    }
    Ok(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(a: Option<&str>, b: Option<&str>, token: Option<&str>) -> RemoteSection {
        RemoteSection {
            a: a.map(str::to_string),
            b: b.map(str::to_string),
            token_file: token.map(PathBuf::from),
            ..RemoteSection::default()
        }
    }

    #[test]
    fn a_tls_server_name_needs_tls_ca_and_must_be_a_name() {
        let with = |ca: Option<&str>, name: &str| RemoteSection {
            tls_ca: ca.map(PathBuf::from),
            tls_server_name: Some(name.to_string()),
            ..section(Some("10.0.0.5:9660"), Some("10.0.1.7:9660"), Some("t"))
        };
        let err = |s: RemoteSection| parse_remote(WorkerMode::Remote, Some(&s)).unwrap_err();
        assert_eq!(
            err(with(None, "workers.anes")),
            ("remote.tls_server_name", "only with tls_ca (TLS)".into())
        );
        assert_eq!(err(with(Some("ca.pem"), "not a name!")).0, "remote.tls_server_name");
        let ok =
            parse_remote(WorkerMode::Remote, Some(&with(Some("ca.pem"), "workers.anes"))).unwrap().unwrap();
        assert_eq!(
            (ok.tls_ca, ok.tls_server_name),
            (Some(PathBuf::from("ca.pem")), Some("workers.anes".into()))
        );
    }

    #[test]
    fn addresses_take_names_and_addresses_and_errors_name_the_key() {
        let ok =
            section(Some("dual-worker-primary-0.dual-worker-primary:9660"), Some("[::1]:9661"), Some("t"));
        let remote = parse_remote(WorkerMode::Remote, Some(&ok)).unwrap().unwrap();
        assert_eq!(remote.a, "dual-worker-primary-0.dual-worker-primary:9660");
        assert_eq!(remote.b, "[::1]:9661");
        let key = |s: RemoteSection| parse_remote(WorkerMode::Remote, Some(&s)).unwrap_err().0;
        assert_eq!(key(section(Some("10.0.0.5"), Some("h:1"), Some("t"))), "remote.a");
        assert_eq!(key(section(Some("h:1"), Some("h:0"), Some("t"))), "remote.b");
        assert_eq!(key(section(Some("h:1"), Some("a b:2"), Some("t"))), "remote.b");
        assert_eq!(key(section(Some("h:1"), Some("h:1"), Some("t"))), "remote.b");
        assert_eq!(key(section(Some("h:1"), Some("h:2"), None)), "remote.token_file");
        assert_eq!(key(section(None, Some("h:2"), Some("t"))), "remote.a");
        assert_eq!(parse_remote(WorkerMode::Remote, None).unwrap_err().0, "remote");
        assert_eq!(parse_remote(WorkerMode::Process, Some(&ok)).unwrap_err().0, "remote");
        assert_eq!(parse_remote(WorkerMode::Thread, None), Ok(None));
    }

    #[test]
    fn a_missing_or_empty_token_file_stops_the_load_naming_the_key() {
        let dir = std::env::temp_dir().join(format!("anes-config-remote-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("anes.toml");
        std::fs::write(
            &config,
            "[[pipeline]]\nid = \"p\"\nworkers = \"remote\"\n[pipeline.remote]\na = \"w-a:9660\"\nb = \"w-b:9660\"\ntoken_file = \"token\"\n",
        )
        .unwrap();
        let missing = crate::config::Config::load(&config).unwrap_err();
        assert_eq!(missing.key, "pipeline[0].remote.token_file", "{missing}");
        std::fs::write(dir.join("token"), "\n").unwrap();
        let empty = crate::config::Config::load(&config).unwrap_err();
        assert!(empty.problem.contains("empty"), "{empty}");
        std::fs::write(dir.join("token"), "t0ken\n").unwrap();
        let loaded = crate::config::Config::load(&config).unwrap();
        let remote = loaded.pipelines[0].remote.clone().unwrap();
        assert_eq!(remote.token_file, dir.join("token"), "relative to the configuration file");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
