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
use crate::store::writer::RetryPolicy;
use crate::worker::WorkerMode;

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
    /// Most connections open at once from one IP address (default 32).
    pub connections_per_client: Option<usize>,
    /// Most connections open at once (default 512).
    pub max_connections: Option<usize>,
}

/// `[[pipeline]]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSection {
    /// `pipeline_id`: letters, digits, `-`, `_`, `.`.
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
    /// `thread` (default) or `process`.
    pub workers: Option<WorkerMode>,
    /// Records waiting for verification before intake is refused (default 65536).
    pub backlog_capacity: Option<u64>,
    /// Records the dead-letter queue holds (default 262144).
    pub dlq_capacity: Option<usize>,
    /// Seconds a rollback step may make no progress (default 20).
    pub step_timeout_seconds: Option<f64>,
    /// When the dead-letter queue's appends are fsynced: `always`, `batch` (default), `never`.
    pub dlq_fsync: Option<FsyncPolicy>,
    /// `[pipeline.store]`: where verified checkpoints are kept.
    #[serde(default)]
    pub store: StoreSection,
    /// `[pipeline.journal]`: the input journal.
    #[serde(default)]
    pub journal: JournalSection,
}

/// `[pipeline.store]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSection {
    /// `filesystem` (default) or `redis`.
    pub backend: Option<String>,
    /// Filesystem: the directory (default `<data_dir>/<id>/checkpoints`).
    pub dir: Option<PathBuf>,
    /// Redis: the URL (`redis://127.0.0.1:6379/0`).
    pub url: Option<String>,
    /// Checkpoints kept (default 4).
    pub kept: Option<usize>,
    /// Delay ceiling of the first retry, seconds (default 2; doubling per retry).
    pub retry_base_seconds: Option<f64>,
    /// Largest delay ceiling, seconds (default 30).
    pub retry_cap_seconds: Option<f64>,
    /// Attempts of one request before it is given up (default 10).
    pub retry_attempts: Option<u32>,
}

/// `[pipeline.journal]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalSection {
    /// A new segment starts at this size (default 8 MiB).
    pub segment_bytes: Option<u64>,
    /// Segments kept at least (default 16).
    pub segments_kept: Option<usize>,
    /// `always`, `batch` (default) or `never`.
    pub fsync: Option<FsyncPolicy>,
}

/// Where a pipeline's checkpoints are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreBackend {
    /// Files in a directory (`None`: `<data_dir>/<id>/checkpoints`).
    Filesystem(Option<PathBuf>),
    /// A Redis server.
    Redis(String),
}

/// A pipeline's store, validated.
#[derive(Debug, Clone)]
pub struct StoreSpec {
    /// Where checkpoints go: a folder or a Redis server.
    pub backend: StoreBackend,
    /// How many verified checkpoints the store keeps; older ones are deleted after a write.
    pub kept: usize,
    /// Retries of store requests.
    pub retry: RetryPolicy,
}

/// `[pipeline.input]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSection {
    /// `replay` (default) or `push`.
    pub source: Option<String>,
    /// The recorded stream (anes input stream or FCEUX .fm2); default: the bundled demo input.
    pub file: Option<PathBuf>,
    /// `loop` (default) or `once`.
    pub repeat: Option<String>,
    /// `realtime` (default), `max`, or a multiple of real time such as `2x`.
    pub speed: Option<String>,
}

/// Where a pipeline's records come from.
#[derive(Debug, Clone, PartialEq)]
pub enum InputSpec {
    /// A recorded stream.
    Replay {
        /// The file, or `None` for the bundled demo input.
        file: Option<PathBuf>,
        /// Start again at the end.
        looping: bool,
        /// How fast records are replayed: a multiple of real time, or as fast as the pipeline accepts them.
        pace: crate::pipeline::Pace,
    },
    /// Records pushed over HTTP.
    Push,
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
    /// How the two workers run: threads of the service or `anes worker` child processes.
    pub workers: WorkerMode,
    /// The checkpoint store.
    pub store: StoreSpec,
    /// Segment size, segments kept and fsync policy of the write-ahead journal.
    pub journal: JournalSettings,
    /// The dead-letter queue's fsync policy.
    pub dlq_fsync: FsyncPolicy,
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
    pub http_limits: crate::http::HttpLimits,
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
            if let InputSpec::Replay { file: Some(f), .. } = &mut p.input {
                resolve(f);
            }
            if let StoreBackend::Filesystem(Some(d)) = &mut p.store.backend {
                resolve(d);
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
            if id.is_empty()
                || id.len() > 64
                || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            {
                return Err(err(key("id"), format!("{id:?}: use 1-64 letters, digits, '-', '_' or '.'")));
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
            let input = parse_input(&p.input, p.rom.is_some())
                .map_err(|(field, problem)| err(key(field), problem))?;
            let store = parse_store(&p.store).map_err(|(field, problem)| err(key(field), problem))?;
            let journal = parse_journal(&p.journal).map_err(|(field, problem)| err(key(field), problem))?;
            pipelines.push(PipelineConfig {
                settings,
                rom: p.rom,
                input,
                workers: p.workers.unwrap_or_default(),
                store,
                journal,
                dlq_fsync: p.dlq_fsync.unwrap_or_default(),
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

fn http_limits(server: &ServerSection) -> Result<crate::http::HttpLimits, (&'static str, String)> {
    let defaults = crate::http::HttpLimits::default();
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
    Ok(crate::http::HttpLimits {
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
        connections_per_client: count(
            "server.connections_per_client",
            server.connections_per_client,
            defaults.connections_per_client,
        )?,
        max_connections: count("server.max_connections", server.max_connections, defaults.max_connections)?,
    })
}

fn parse_store(store: &StoreSection) -> Result<StoreSpec, (&'static str, String)> {
    let backend = match store.backend.as_deref().unwrap_or("filesystem") {
        "filesystem" => {
            if store.url.is_some() {
                return Err(("store.url", "only the redis backend has a URL (backend = \"redis\")".into()));
            }
            StoreBackend::Filesystem(store.dir.clone())
        }
        "redis" => {
            if store.dir.is_some() {
                return Err(("store.dir", "only the filesystem backend has a directory".into()));
            }
            let url = store.url.clone().ok_or((
                "store.url",
                "missing: the redis backend needs url = \"redis://HOST:PORT/DB\"".to_string(),
            ))?;
            if redis::Client::open(url.as_str()).is_err() {
                return Err((
                    "store.url",
                    format!("{url:?} is not a redis URL such as redis://127.0.0.1:6379/0"),
                ));
            }
            StoreBackend::Redis(url)
        }
        other => return Err(("store.backend", format!("{other:?}: use \"filesystem\" or \"redis\""))),
    };
    let kept = store.kept.unwrap_or(4);
    if kept == 0 || kept > 256 {
        return Err(("store.kept", format!("{kept}: use 1 to 256")));
    }
    let mut retry = RetryPolicy::default();
    if let Some(s) = store.retry_base_seconds {
        if !(0.001..=60.0).contains(&s) {
            return Err(("store.retry_base_seconds", format!("{s}: use 0.001 to 60")));
        }
        retry.base = Duration::from_secs_f64(s);
    }
    if let Some(s) = store.retry_cap_seconds {
        if !(0.001..=3600.0).contains(&s) || Duration::from_secs_f64(s) < retry.base {
            return Err(("store.retry_cap_seconds", format!("{s}: use the base to 3600")));
        }
        retry.cap = Duration::from_secs_f64(s);
    }
    if let Some(n) = store.retry_attempts {
        if n == 0 || n > 1000 {
            return Err(("store.retry_attempts", format!("{n}: use 1 to 1000")));
        }
        retry.attempts = n;
    }
    Ok(StoreSpec { backend, kept, retry })
}

fn parse_journal(journal: &JournalSection) -> Result<JournalSettings, (&'static str, String)> {
    let mut settings = JournalSettings::default();
    if let Some(n) = journal.segment_bytes {
        if !(4096..=1 << 30).contains(&n) {
            return Err(("journal.segment_bytes", format!("{n}: use 4096 to 1073741824")));
        }
        settings.segment_bytes = n;
    }
    if let Some(n) = journal.segments_kept {
        if n == 0 || n > 100_000 {
            return Err(("journal.segments_kept", format!("{n}: use 1 to 100000")));
        }
        settings.segments_kept = n;
    }
    if let Some(f) = journal.fsync {
        settings.fsync = f;
    }
    Ok(settings)
}

fn parse_input(input: &InputSection, has_rom: bool) -> Result<InputSpec, (&'static str, String)> {
    let source = input.source.as_deref().unwrap_or("replay");
    match source {
        "push" => {
            for (field, set) in [
                ("input.file", input.file.is_some()),
                ("input.repeat", input.repeat.is_some()),
                ("input.speed", input.speed.is_some()),
            ] {
                if set {
                    return Err((field, "only a replayed input has this setting (source = \"push\")".into()));
                }
            }
            Ok(InputSpec::Push)
        }
        "replay" => {
            if has_rom && input.file.is_none() {
                return Err((
                    "input.file",
                    "missing: a pipeline with its own ROM replays its own input stream (or use source = \"push\")".into(),
                ));
            }
            let looping = match input.repeat.as_deref().unwrap_or("loop") {
                "loop" => true,
                "once" => false,
                other => return Err(("input.repeat", format!("{other:?}: use \"loop\" or \"once\""))),
            };
            let speed = input.speed.as_deref().unwrap_or("realtime");
            let pace = match speed {
                "realtime" => crate::pipeline::Pace::RealTime { speed: 1.0 },
                "max" => crate::pipeline::Pace::Max,
                other => match other.strip_suffix('x').and_then(|n| n.parse::<f64>().ok()) {
                    Some(f) if (0.01..=1000.0).contains(&f) => crate::pipeline::Pace::RealTime { speed: f },
                    _ => {
                        return Err((
                            "input.speed",
                            format!(
                                "{other:?}: use \"realtime\", \"max\" or a multiple such as \"2x\" (0.01x to 1000x)"
                            ),
                        ));
                    }
                },
            };
            Ok(InputSpec::Replay { file: input.file.clone(), looping, pace })
        }
        other => Err(("input.source", format!("{other:?}: use \"replay\" or \"push\""))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_deploy_example_is_valid() {
        let text = include_str!("../../../deploy/anes.toml");
        let config = Config::parse(text, "deploy/anes.toml").unwrap();
        assert!(config.pipelines.len() >= 2);
        assert!(config.listen.ip().is_loopback());
        // Run as `anes serve --config deploy/anes.toml`, the example must not write its durable state
        // and evidence into the repository's deploy/ folder.
        for dir in [&config.data_dir, &config.evidence_dir] {
            assert!(dir.is_absolute() && !dir.starts_with("deploy"), "{}", dir.display());
        }
    }

    #[test]
    fn a_configuration_or_token_file_that_is_a_fifo_or_too_large_is_refused() {
        let dir = std::env::temp_dir().join(format!("anes-config-capped-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = |name: &str| {
            let path = dir.join(name);
            rustix::fs::mkfifoat(rustix::fs::CWD, &path, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
            path
        };
        let large = |name: &str, len: u64| {
            let path = dir.join(name);
            std::fs::write(&path, vec![b'#'; len as usize + 1]).unwrap();
            path
        };
        for (path, problem) in [
            (fifo("anes.toml"), "is a FIFO (named pipe), not a regular file"),
            (
                large("large.toml", MAX_CONFIG_FILE_LEN),
                "larger than 1 MiB, the limit for configuration files",
            ),
        ] {
            let e = Config::load(&path).unwrap_err();
            assert_eq!((e.file.as_str(), e.key.as_str()), (path.to_str().unwrap(), "(file)"));
            assert!(e.problem.contains(problem), "{e}");
        }
        for (path, problem) in [
            (fifo("token"), "is a FIFO (named pipe), not a regular file"),
            (large("large-token", MAX_TOKEN_FILE_LEN), "larger than 4096 bytes, the limit for token files"),
        ] {
            match crate::runtime::read_token(Some(&path)) {
                Err(crate::runtime::StartError::File { path: named, problem: found }) => {
                    assert_eq!(named, path.display().to_string());
                    assert!(found.contains(problem), "{found}");
                }
                other => panic!("{other:?}"),
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_default_is_one_demo_pipeline_on_loopback() {
        let config = Config::demo();
        assert_eq!(config.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(config.pipelines.len(), 1);
        let p = &config.pipelines[0];
        assert_eq!(p.settings.id, "demo");
        assert_eq!(p.workers, WorkerMode::Thread);
        assert_eq!(
            p.input,
            InputSpec::Replay {
                file: None,
                looping: true,
                pace: crate::pipeline::Pace::RealTime { speed: 1.0 }
            }
        );
    }

    #[test]
    fn mistakes_are_one_line_naming_file_key_and_problem() {
        let cases = [
            ("[[pipeline]]\nid = \"p\"\ndrift = 3\n", "line 3, key drift", "unknown field `drift`"),
            ("[[pipeline]]\nid = \"p\"\ndrift_window = 40\n", "pipeline[0].drift_window", "stalled worker"),
            ("[[pipeline]]\nid = \"p\"\ndrift_window = \"x\"\n", "line 3, key drift_window", "invalid type"),
            ("[[pipeline]]\nid = \"p\"\nrollback = \"later\"\n", "line 3, key rollback", "unknown variant"),
            ("[[pipeline]]\nid = \"p q\"\n", "pipeline[0].id", "letters"),
            ("[[pipeline]]\nid = \"p\"\n[[pipeline]]\nid = \"p\"\n", "pipeline[1].id", "twice"),
            (
                "[server]\nlisten = \"localhost\"\n[[pipeline]]\nid = \"p\"\n",
                "server.listen",
                "not an address",
            ),
            (
                "[[pipeline]]\nid = \"p\"\n[pipeline.input]\nspeed = \"fast\"\n",
                "pipeline[0].input.speed",
                "2x",
            ),
            ("[[pipeline]]\nid = \"p\"\nrom = \"x.nes\"\n", "pipeline[0].input.file", "own input"),
            (
                "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"s3\"\n",
                "pipeline[0].store.backend",
                "\"s3\"",
            ),
            (
                "[[pipeline]]\nid = \"p\"\n[pipeline.store]\nbackend = \"redis\"\n",
                "pipeline[0].store.url",
                "missing",
            ),
            ("[[pipeline]]\nid = \"p\"\n[pipeline.store]\nkept = 0\n", "pipeline[0].store.kept", "1 to 256"),
            (
                "[[pipeline]]\nid = \"p\"\n[pipeline.journal]\nfsync = \"sometimes\"\n",
                "line 4, key fsync",
                "unknown variant",
            ),
            (
                "[[pipeline]]\nid = \"p\"\n[pipeline.journal]\nsegment_bytes = 10\n",
                "pipeline[0].journal.segment_bytes",
                "4096",
            ),
            ("", "pipeline", "at least one"),
            ("[[pipeline]\n", "line 1", ""),
        ];
        for (text, key, problem) in cases {
            let e = Config::parse(text, "anes.toml").unwrap_err();
            let line = e.to_string();
            assert_eq!(e.file, "anes.toml");
            assert!(e.key.starts_with(key), "{text:?}: key {:?}, wanted {key:?} ({line})", e.key);
            assert!(line.contains(problem), "{text:?}: {line}");
            assert!(!line.contains('\n'), "{line}");
        }
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = Config::parse(&text, "fuzz.toml");
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Config::parse(&String::from_utf8_lossy(&bytes), "fuzz.toml");
        }
    }
}
