//! The service's configuration file (TOML), parsed into types and validated before anything starts.
//! Every mistake is one line naming the file, the key and the problem. `deploy/anes.toml` documents
//! every key.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use crate::framed::FsyncPolicy;
use crate::journal::JournalSettings;
use crate::pipeline::{ALERT_DRIFT_THRESHOLD, PipelineSettings, RollbackPolicy};
use crate::worker::WorkerMode;
use crate::worker::remote::RemoteWorkers;

mod input;
mod libretro;
mod remote;
mod store;

pub use input::{InputSection, InputSpec, JournalSection};
use input::{parse_input, parse_journal};
use libretro::parse_libretro;
pub use libretro::{LibretroSection, LibretroSpec};
pub use remote::RemoteSection;
use remote::parse_remote;
use store::parse_store;
pub use store::{StoreBackend, StoreSection, StoreSpec};

/// The default data directory, relative to the configuration file's directory (or, without one, to
/// the working directory): beside `anes-evidence`, where an operator looks first, and inside whatever
/// volume a container mounts as its working directory.
pub const DEFAULT_DATA_DIR: &str = "anes-data";

/// The default address: loopback, port 9650.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9650";

/// The largest configuration file read: a service's file is a few KiB; this leaves room for thousands
/// of pipeline sections.
pub const MAX_CONFIG_FILE_LEN: u64 = 1 << 20;

/// The largest token file read: one line holding a bearer token.
pub const MAX_TOKEN_FILE_LEN: u64 = 4 << 10;

/// A configuration mistake: file, key, problem.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}: {key}: {problem}")]
pub struct ConfigError {
    /// The configuration file, as given (or `(built-in default)`).
    pub file: String,
    /// The key (`pipeline[1].drift_window`, or `line 7` when only the position is known).
    pub key: String,
    /// What is wrong.
    pub problem: String,
}

/// The file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    /// `[[pipeline]]`, at least one.
    #[serde(default)]
    pub pipeline: Vec<PipelineSection>,
}

/// `[server]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Address to listen on (default 127.0.0.1:9650).
    pub listen: Option<String>,
    /// File holding the bearer token for mutating endpoints (else `ANES_TOKEN`).
    pub token_file: Option<PathBuf>,
    /// Where evidence bundles go (default `anes-evidence`).
    pub evidence_dir: Option<PathBuf>,
    /// Where final checkpoints go at shutdown (default: not written).
    pub state_dir: Option<PathBuf>,
    /// Where each pipeline's durable state lives (default `anes-data`): `<data_dir>/<id>/` holds its
    /// journal, dead-letter queue and (filesystem store) checkpoints.
    pub data_dir: Option<PathBuf>,
    /// Enable the drill endpoint.
    pub drill: Option<bool>,
    /// Longest wait for a request's headers, idle kept-alive connections included (default 10).
    pub header_timeout_seconds: Option<u64>,
    /// Longest time from a request's headers to the end of its body (default 30).
    pub body_timeout_seconds: Option<u64>,
    /// Longest time a client may take none of an answer waiting for it (default 10).
    pub write_timeout_seconds: Option<u64>,
    /// Most connections open at once from one IP address (default 32).
    pub connections_per_client: Option<usize>,
    /// Most connections open at once (default 512).
    pub max_connections: Option<usize>,
}

/// `[[pipeline]]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSection {
    /// `pipeline_id`: letters, digits, `-`, `_`, `.`, starting with a letter or digit.
    pub id: Option<String>,
    /// iNES ROM file (default: the bundled demo ROM).
    pub rom: Option<PathBuf>,
    /// `[pipeline.input]`.
    #[serde(default)]
    pub input: InputSection,
    /// A verified checkpoint every K frames (default 60).
    pub checkpoint_every: Option<u64>,
    /// Verified checkpoints kept (default 4).
    pub checkpoints_kept: Option<usize>,
    /// A verified checkpoint is stored durably once this many frames have passed since the last one
    /// stored (default 300; at most `checkpoint_every`: every one).
    pub persist_every: Option<u64>,
    /// Most records a worker may run ahead of its twin (default 120; more than 50).
    pub drift_window: Option<u64>,
    /// `alert` (default) or `immediate`.
    pub rollback: Option<RollbackPolicy>,
    /// `thread` (default), `process` or `remote`.
    pub workers: Option<WorkerMode>,
    /// `[pipeline.remote]`: where remote workers listen.
    pub remote: Option<RemoteSection>,
    /// Records waiting for verification before intake is refused (default 65536).
    pub backlog_capacity: Option<u64>,
    /// Records the dead-letter queue holds (default 262144).
    pub dlq_capacity: Option<usize>,
    /// Seconds a rollback step may make no progress (default 20).
    pub step_timeout_seconds: Option<f64>,
    /// Rollback attempts per incident before the pipeline stays read-only for an operator (default 3;
    /// 1 to 100).
    pub max_attempts: Option<u32>,
    /// No longer used (the dead-letter queue's records are journaled): refused with that reason.
    pub dlq_fsync: Option<FsyncPolicy>,
    /// `[pipeline.store]`: where verified checkpoints are kept.
    #[serde(default)]
    pub store: StoreSection,
    /// `[pipeline.journal]`: the input journal.
    #[serde(default)]
    pub journal: JournalSection,
    /// The consoles' region: `ntsc`, `pal` or `dendy` (default: the ROM header's, NTSC for iNES 1.0).
    pub region: Option<String>,
    /// Both workers' power-on profile (default `default`): a name or `random:SEED`.
    pub power_on: Option<String>,
    /// `[pipeline.libretro]`: the workers run this libretro core on `rom` (its content).
    pub libretro: Option<LibretroSection>,
}

/// One pipeline, validated.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Settings of the state machine.
    pub settings: PipelineSettings,
    /// The ROM file, or `None` for the bundled demo ROM.
    pub rom: Option<PathBuf>,
    /// Where the pipeline's input records come from: a replayed file or HTTP pushes.
    pub input: InputSpec,
    /// How the two workers run: threads of the service, `anes worker` child processes, or remote.
    pub workers: WorkerMode,
    /// Where remote workers listen (`workers = "remote"` only).
    pub remote: Option<RemoteWorkers>,
    /// The checkpoint store.
    pub store: StoreSpec,
    /// Segment size, segments kept and fsync policy of the write-ahead journal.
    pub journal: JournalSettings,
    /// The power-on profile both workers' consoles start with.
    pub power_on: anes_core::PowerOnProfile,
    /// The libretro core the workers run instead of anes consoles (`[pipeline.libretro]`).
    pub libretro: Option<LibretroSpec>,
}

/// The whole configuration, validated.
///
/// ```
/// use anes_ops::config::Config;
/// let config = Config::parse("[[pipeline]]\nid = \"p1\"\nrollback = \"immediate\"\n", "anes.toml").unwrap();
/// assert_eq!(config.pipelines[0].settings.id, "p1");
/// let mistake = Config::parse("[[pipeline]]\nid = \"p1\"\ndrift_window = 7\n", "anes.toml").unwrap_err();
/// assert!(mistake.to_string().starts_with("anes.toml: pipeline[0].drift_window: 7"));
/// ```
#[derive(Debug, Clone)]
pub struct Config {
    /// The HTTP address; loopback unless a token is configured.
    pub listen: SocketAddr,
    /// The file holding the bearer token for mutating endpoints (else `ANES_TOKEN`), resolved against
    /// the configuration file's folder.
    pub token_file: Option<PathBuf>,
    /// Where divergence evidence bundles are written and served from.
    pub evidence_dir: PathBuf,
    /// Final checkpoint directory.
    pub state_dir: Option<PathBuf>,
    /// Durable state directory.
    pub data_dir: PathBuf,
    /// Drill endpoint on.
    pub drill: bool,
    /// HTTP time and connection limits.
    pub http_limits: crate::http::limits::HttpLimits,
    /// Every pipeline, validated, ids unique.
    pub pipelines: Vec<PipelineConfig>,
}

impl Config {
    /// The zero-config default: pipeline `demo` on the bundled ROM and input, looping at real time.
    pub fn demo() -> Config {
        let file = ConfigFile {
            pipeline: vec![PipelineSection { id: Some("demo".into()), ..PipelineSection::default() }],
            ..ConfigFile::default()
        };
        Config::validate(file, "(built-in default)").expect("the default configuration is valid")
    }

    /// Reads and validates `path`. Relative paths inside are relative to the file's directory.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let name = path.display().to_string();
        let text = anes_fs::read_text_capped(path, MAX_CONFIG_FILE_LEN, "configuration")
            .map_err(|e| ConfigError { file: name.clone(), key: "(file)".into(), problem: e.problem() })?;
        let mut config = Config::parse(&text, &name)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        config.token_file.as_mut().map(resolve);
        config.state_dir.as_mut().map(resolve);
        resolve(&mut config.data_dir);
        resolve(&mut config.evidence_dir);
        for p in &mut config.pipelines {
            p.rom.as_mut().map(resolve);
            if let Some(spec) = &mut p.libretro {
                spec.cores.iter_mut().for_each(resolve);
            }
            if let InputSpec::Replay { file: Some(f), .. } = &mut p.input {
                resolve(f);
            }
            match &mut p.store.backend {
                StoreBackend::Filesystem(Some(d)) | StoreBackend::S3 { credentials_file: Some(d), .. } => {
                    resolve(d)
                }
                _ => {}
            }
        }
        for (i, p) in config.pipelines.iter_mut().enumerate() {
            if let Some(remote) = &mut p.remote {
                resolve(&mut remote.token_file);
                // Checked now so a missing secret stops the start; read again at every connection.
                crate::worker::remote::read_token_file(&remote.token_file).map_err(|problem| {
                    ConfigError {
                        file: name.clone(),
                        key: format!("pipeline[{i}].remote.token_file"),
                        problem,
                    }
                })?;
                if let Some(ca) = &mut remote.tls_ca {
                    resolve(ca);
                    crate::worker::remote::tls::client_config(ca).map_err(|e| ConfigError {
                        file: name.clone(),
                        key: format!("pipeline[{i}].remote.tls_ca"),
                        problem: e.to_string(),
                    })?;
                }
            }
        }
        Ok(config)
    }

    /// Parses and validates TOML text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Config, ConfigError> {
        let parsed: ConfigFile = toml::from_str(text).map_err(|e| {
            let (key, line) = match e.span() {
                Some(span) => {
                    let line_no = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    let line = text.lines().nth(line_no - 1).unwrap_or("");
                    let key = line.split('=').next().unwrap_or("").trim();
                    (key.trim_matches(['[', ']']).to_string(), line_no)
                }
                None => (String::new(), 0),
            };
            let problem = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
            let key = if key.is_empty() { format!("line {line}") } else { format!("line {line}, key {key}") };
            ConfigError { file: file.to_string(), key, problem }
        })?;
        Config::validate(parsed, file)
    }

    fn validate(file: ConfigFile, name: &str) -> Result<Config, ConfigError> {
        let err = |key: String, problem: String| ConfigError { file: name.to_string(), key, problem };
        let server = file.server;
        let http_limits = http_limits(&server).map_err(|(key, problem)| err(key.into(), problem))?;
        let listen_text = server.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen: SocketAddr = listen_text.parse().map_err(|_| {
            err("server.listen".into(), format!("{listen_text:?} is not an address such as 127.0.0.1:9650"))
        })?;
        if file.pipeline.is_empty() {
            return Err(err("pipeline".into(), "no [[pipeline]] declared: declare at least one".into()));
        }
        let mut pipelines = Vec::new();
        let mut ids = std::collections::BTreeSet::new();
        for (i, p) in file.pipeline.into_iter().enumerate() {
            let key = |field: &str| format!("pipeline[{i}].{field}");
            let id =
                p.id.clone().ok_or_else(|| err(key("id"), "missing: every pipeline needs an id".into()))?;
            if !crate::store::valid_pipeline_id(&id) {
                return Err(err(key("id"), format!("{id:?}: {}", crate::store::PIPELINE_ID_RULE)));
            }
            if !ids.insert(id.clone()) {
                return Err(err(key("id"), format!("{id:?} is declared twice")));
            }
            let mut settings = PipelineSettings::new(&id);
            if let Some(k) = p.checkpoint_every {
                if k == 0 || k > 1 << 20 {
                    return Err(err(key("checkpoint_every"), format!("{k}: use 1 to 1048576 frames")));
                }
                settings.checkpoint_every = k;
            }
            if let Some(k) = p.persist_every {
                if k == 0 || k > 1 << 24 {
                    return Err(err(key("persist_every"), format!("{k}: use 1 to 16777216 frames")));
                }
                settings.persist_every = k;
            }
            if let Some(n) = p.checkpoints_kept {
                if n == 0 || n > 256 {
                    return Err(err(key("checkpoints_kept"), format!("{n}: use 1 to 256")));
                }
                settings.checkpoints_kept = n;
            }
            if let Some(w) = p.drift_window {
                if w <= ALERT_DRIFT_THRESHOLD || w > 1 << 16 {
                    return Err(err(
                        key("drift_window"),
                        format!(
                            "{w}: use {} to 65536; at {ALERT_DRIFT_THRESHOLD} or less a stalled worker could never raise the drift alert",
                            ALERT_DRIFT_THRESHOLD + 1
                        ),
                    ));
                }
                settings.drift_window = w;
            }
            if let Some(policy) = p.rollback {
                settings.policy = policy;
            }
            if let Some(n) = p.backlog_capacity {
                if n < settings.drift_window {
                    return Err(err(
                        key("backlog_capacity"),
                        format!("{n}: must be at least the drift window"),
                    ));
                }
                settings.backlog_capacity = n;
            }
            if let Some(n) = p.dlq_capacity {
                if n == 0 {
                    return Err(err(
                        key("dlq_capacity"),
                        "0: the dead-letter queue must hold records".into(),
                    ));
                }
                settings.dlq_capacity = n;
            }
            if let Some(s) = p.step_timeout_seconds {
                if !(0.1..=3600.0).contains(&s) {
                    return Err(err(key("step_timeout_seconds"), format!("{s}: use 0.1 to 3600")));
                }
                settings.step_timeout = Duration::from_secs_f64(s);
            }
            if let Some(name) = &p.region {
                let region = anes_core::Region::from_name(name)
                    .ok_or_else(|| err(key("region"), format!("{name:?}: use ntsc, pal or dendy")))?;
                settings.region = Some(region);
            }
            if let Some(n) = p.max_attempts {
                // At least one, or an incident would give up before trying; at most 100, so one
                // incident's retries end (the backoff's 30 s cap: under an hour).
                if !(1..=100).contains(&n) {
                    return Err(err(key("max_attempts"), format!("{n}: use 1 to 100 attempts")));
                }
                settings.max_attempts = n;
            }
            let power_on = match &p.power_on {
                None => anes_core::PowerOnProfile::Default,
                Some(text) => {
                    text.parse().map_err(|e: anes_core::PowerOnError| err(key("power_on"), e.to_string()))?
                }
            };
            let input = parse_input(&p.input, p.rom.is_some())
                .map_err(|(field, problem)| err(key(field), problem))?;
            let store = parse_store(&p.store).map_err(|(field, problem)| err(key(field), problem))?;
            // A journal append is a store request too: a failed commit backs off like the writer.
            settings.journal_retry = (store.retry.base, store.retry.cap, store.retry.seed);
            let journal = parse_journal(&p.journal).map_err(|(field, problem)| err(key(field), problem))?;
            if p.dlq_fsync.is_some() {
                return Err(err(
                    key("dlq_fsync"),
                    "no longer used: the dead-letter queue's records are journaled before they are acknowledged, so journal.fsync applies to them; remove the key".into(),
                ));
            }
            let workers = p.workers.unwrap_or_default();
            let remote = parse_remote(workers, p.remote.as_ref())
                .map_err(|(field, problem)| err(key(field), problem))?;
            let libretro = parse_libretro(p.libretro.as_ref(), workers, p.rom.is_some(), p.region.is_some())
                .map_err(|(field, problem)| err(key(field), problem))?;
            if libretro.is_some() && p.power_on.is_some() {
                return Err(err(
                    key("power_on"),
                    "a power-on profile is the anes console's; a libretro core takes its own from its content and options".into(),
                ));
            }
            pipelines.push(PipelineConfig {
                settings,
                rom: p.rom,
                input,
                workers,
                remote,
                store,
                journal,
                power_on,
                libretro,
            });
        }
        Ok(Config {
            listen,
            token_file: server.token_file,
            evidence_dir: server.evidence_dir.unwrap_or_else(|| PathBuf::from("anes-evidence")),
            state_dir: server.state_dir,
            data_dir: server.data_dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR)),
            drill: server.drill.unwrap_or(false),
            http_limits,
            pipelines,
        })
    }
}

fn http_limits(server: &ServerSection) -> Result<crate::http::limits::HttpLimits, (&'static str, String)> {
    let defaults = crate::http::limits::HttpLimits::default();
    let seconds = |key: &'static str, value: Option<u64>, default: Duration| match value {
        None => Ok(default),
        Some(s @ 1..=3600) => Ok(Duration::from_secs(s)),
        Some(s) => Err((key, format!("{s}: use 1 to 3600 seconds"))),
    };
    let count = |key: &'static str, value: Option<usize>, default: usize| match value {
        None => Ok(default),
        Some(n @ 1..=65536) => Ok(n),
        Some(n) => Err((key, format!("{n}: use 1 to 65536"))),
    };
    Ok(crate::http::limits::HttpLimits {
        header_timeout: seconds(
            "server.header_timeout_seconds",
            server.header_timeout_seconds,
            defaults.header_timeout,
        )?,
        body_timeout: seconds(
            "server.body_timeout_seconds",
            server.body_timeout_seconds,
            defaults.body_timeout,
        )?,
        write_timeout: seconds(
            "server.write_timeout_seconds",
            server.write_timeout_seconds,
            defaults.write_timeout,
        )?,
        connections_per_client: count(
            "server.connections_per_client",
            server.connections_per_client,
            defaults.connections_per_client,
        )?,
        max_connections: count("server.max_connections", server.max_connections, defaults.max_connections)?,
        ..defaults
    })
}

#[cfg(test)]
mod tests;
