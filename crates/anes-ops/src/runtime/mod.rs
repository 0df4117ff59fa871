//! The runtime around the pipeline state machines: one driver thread per pipeline (the clock, its
//! input source, its workers, investigations), the HTTP server on a small tokio runtime, and the
//! shutdown sequence (SIGTERM or SIGINT: stop intake, take a final verified checkpoint, exit).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anes_core::hex::to_hex;
use anes_core::movie::{FrameInput, InputStream};
use crossbeam_channel::{Receiver, Sender};
use serde::Serialize;
use thiserror::Error;

use crate::config::{Config, InputSpec};
use crate::metrics::Metrics;
use crate::pipeline::{
    Action, Checkpoint, Event, Pipeline, PipelineSettings, PipelineStatus, PushOutcome, ReplaySource,
    SequenceGap, StoreEvent,
};
use crate::pipeline::{PipelineObserver, PipelineStorage};
use crate::store::writer::{CheckpointWriter, PendingCheckpoint, WriterEvent};
use crate::worker::{WorkerHandle, WorkerId, WorkerLauncher, WorkerMessage, WorkerMode, WorkerOutput};

mod driver;

use driver::Driver;

/// How often a pipeline's clock ticks (checkpoint age, step deadlines) at least.
const TICK: Duration = Duration::from_millis(50);
/// How often the status the HTTP API reads is refreshed at least.
const PUBLISH: Duration = Duration::from_millis(100);
/// How long a drain may take before the service stops with the last checkpoint verified so far.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the checkpoint writer gets at shutdown to store the final checkpoint.
const WRITER_FINISH: Duration = Duration::from_secs(10);

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
    /// Something the service needs could not be set up.
    #[error("{0}")]
    Setup(String),
}

/// What the service needs besides its configuration.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// The bundled demo ROM (used by pipelines without `rom`).
    pub demo_rom: Arc<Vec<u8>>,
    /// The bundled demo input stream.
    pub demo_input: Arc<[FrameInput]>,
    /// The `anes` executable, for process workers.
    pub worker_program: Option<PathBuf>,
    /// The bearer token (already read from its file or the environment).
    pub token: Option<String>,
}

/// A message to a pipeline's driver thread.
#[derive(Debug)]
pub enum Control {
    /// An event for the state machine.
    Event(Event),
    /// A pushed batch; the answer goes back on `reply`.
    Push {
        /// Sequence number of the first record.
        first_seq: u64,
        /// The records.
        inputs: Vec<FrameInput>,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Result<PushOutcome, SequenceGap>>,
    },
}

/// A running pipeline as the HTTP side sees it.
#[derive(Debug, Clone)]
pub struct PipelineHandle {
    /// `pipeline_id`.
    pub id: String,
    /// Its control channel.
    pub control: Sender<Control>,
    /// Its latest status.
    pub status: Arc<Mutex<Arc<PipelineStatus>>>,
    /// True when it takes pushed records.
    pub accepts_push: bool,
}

impl PipelineHandle {
    /// The latest status.
    pub fn status(&self) -> Arc<PipelineStatus> {
        Arc::clone(&self.status.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// How a pipeline ended.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineReport {
    /// `pipeline_id`.
    pub id: String,
    /// Where every record went.
    pub accounting: crate::pipeline::Accounting,
    /// The final checkpoint's frame.
    pub final_checkpoint_seq: Option<u64>,
    /// Its state hash.
    pub final_state_hash: Option<String>,
    /// True when both workers were verified to have it at shutdown.
    pub final_checkpoint_verified: bool,
    /// Where it was written.
    pub final_checkpoint_file: Option<String>,
}

struct PipelinePlan {
    config: crate::config::PipelineConfig,
    settings: PipelineSettings,
    rom: Arc<Vec<u8>>,
    source: Option<ReplaySource>,
    launcher: WorkerLauncher,
}

/// The pipelines of a service, started.
#[derive(Debug)]
pub struct Pipelines {
    /// Handles for the HTTP side.
    pub handles: Vec<PipelineHandle>,
    threads: Vec<JoinHandle<PipelineReport>>,
}

impl Pipelines {
    /// Asks every pipeline to drain and waits for their reports.
    pub fn drain(self) -> Vec<PipelineReport> {
        for h in &self.handles {
            let _ = h.control.send(Control::Event(Event::Drain));
        }
        self.threads
            .into_iter()
            .zip(&self.handles)
            .map(|(t, h)| {
                t.join().unwrap_or_else(|_| PipelineReport {
                    id: h.id.clone(),
                    accounting: h.status().accounting,
                    final_checkpoint_seq: None,
                    final_state_hash: None,
                    final_checkpoint_verified: false,
                    final_checkpoint_file: None,
                })
            })
            .collect()
    }
}

/// Reads the token from `file` (its first line) or `ANES_TOKEN`.
pub fn read_token(file: Option<&Path>) -> Result<Option<String>, StartError> {
    match file {
        Some(path) => {
            let text = anes_fs::read_text_capped(path, crate::config::MAX_TOKEN_FILE_LEN, "token")
                .map_err(|e| StartError::File { path: path.display().to_string(), problem: e.problem() })?;
            let token = text.lines().next().unwrap_or("").trim().to_string();
            if token.is_empty() {
                return Err(StartError::EmptyToken(path.display().to_string()));
            }
            Ok(Some(token))
        }
        None => Ok(std::env::var("ANES_TOKEN").ok().map(|t| t.trim().to_string()).filter(|t| !t.is_empty())),
    }
}

fn read_stream(path: &Path) -> Result<InputStream, StartError> {
    let file = |problem: String| StartError::File { path: path.display().to_string(), problem };
    let bytes = anes_fs::read_capped(path, anes_core::movie::MAX_INPUT_STREAM_LEN as u64, "input stream")
        .map_err(|e| file(e.problem()))?;
    if bytes.starts_with(&anes_core::movie::INPUT_STREAM_MAGIC) {
        InputStream::from_bytes(&bytes).map_err(|e| file(e.to_string()))
    } else if bytes.starts_with(b"version ") {
        InputStream::from_fm2(&bytes).map_err(|e| file(e.to_string()))
    } else {
        Err(file(
            "not an anes input stream (magic \"ANESINPT\") or an FCEUX .fm2 movie (\"version 3\")".into(),
        ))
    }
}

/// A jitter seed for one pipeline's retries of one kind, drawn from the operating system's entropy
/// (std's `RandomState` keys come from it): different in every process and for every pipeline, so
/// services and pipelines that lost their store together do not retry at the same instants. A
/// constant seed made every one of them retry at 1.98, 0.53, 0.47, 5.95, 28.64 s.
pub fn jitter_seed(pipeline: &str, purpose: &str) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one((pipeline, purpose))
}

/// Starts every pipeline of `config`: reads ROMs and streams, checks them, spawns the driver threads.
pub fn start_pipelines(
    config: &Config,
    options: &ServiceOptions,
    metrics: &Metrics,
) -> Result<Pipelines, StartError> {
    let clock = Instant::now();
    let mut plans = Vec::new();
    for p in &config.pipelines {
        let rom = match &p.rom {
            Some(path) => Arc::new(
                anes_fs::read_capped(path, anes_core::cart::MAX_ROM_FILE_LEN as u64, "ROM").map_err(|e| {
                    StartError::File { path: path.display().to_string(), problem: e.problem() }
                })?,
            ),
            None => Arc::clone(&options.demo_rom),
        };
        // Refuse a ROM the core refuses now, not in a worker later.
        anes_core::Cartridge::from_ines(&rom).map_err(|e| StartError::File {
            path: p.rom.as_ref().map_or("the bundled demo ROM".into(), |r| r.display().to_string()),
            problem: e.to_string(),
        })?;
        let source = match &p.input {
            InputSpec::Push => None,
            InputSpec::Replay { file, looping, pace } => {
                let stream = match file {
                    Some(path) => crate::pipeline::stream_frames(&read_stream(path)?).into(),
                    None => Arc::clone(&options.demo_input),
                };
                Some(ReplaySource::new(stream, *looping, *pace))
            }
        };
        let launcher = WorkerLauncher {
            mode: p.workers,
            program: options.worker_program.clone(),
            remote: p.remote.clone(),
        };
        if p.workers == WorkerMode::Process && launcher.program.is_none() {
            return Err(StartError::Setup(format!(
                "pipeline {}: process workers need the anes executable's path",
                p.settings.id
            )));
        }
        // Jitter from entropy per process and pipeline: the configuration's seeds are for tests.
        let mut config = p.clone();
        config.store.retry.seed = jitter_seed(&p.settings.id, "store");
        config.settings.retry.2 = jitter_seed(&p.settings.id, "rollback");
        let settings = config.settings.clone();
        plans.push(PipelinePlan { config, settings, rom, source, launcher });
    }
    let mut handles = Vec::new();
    let mut threads = Vec::new();
    for mut plan in plans {
        let (control_tx, control_rx) = crossbeam_channel::unbounded();
        let opened = crate::recovery::open(&plan.config, &config.data_dir, &plan.rom)?;
        let observer = PipelineObserver::new(metrics.pipeline(&plan.settings.id));
        tracing::info!(pipeline = %plan.settings.id, "{}", opened.summary);
        let mut pipeline = opened.pipeline;
        pipeline.handle(Duration::ZERO, Event::Store(StoreEvent::Epoch(opened.epoch)));
        if let Some(source) = plan.source.as_mut() {
            source.skip(pipeline.accounting().received);
        }
        let id = plan.settings.id.clone();
        let back = control_tx.clone();
        let writer = CheckpointWriter::start(
            &id,
            opened.store,
            opened.epoch,
            plan.config.store.retry,
            metrics.store(&id, plan.config.store.backend.name()),
            Box::new(move |event| {
                let event = match event {
                    WriterEvent::Epoch(e) => StoreEvent::Epoch(e),
                    WriterEvent::Persisted(p) => StoreEvent::Persisted {
                        seq: p.frame,
                        epoch: p.epoch,
                        oldest_kept_seq: p.oldest_kept_frame,
                    },
                    WriterEvent::Fenced { writer, current, .. } => StoreEvent::Fenced { writer, current },
                    _ => return,
                };
                let _ = back.send(Control::Event(Event::Store(event)));
            }),
        );
        let status = Arc::new(Mutex::new(Arc::new(pipeline.status())));
        let handle = PipelineHandle {
            id: plan.settings.id.clone(),
            control: control_tx.clone(),
            status: Arc::clone(&status),
            accepts_push: plan.source.is_none(),
        };
        let driver = Driver {
            pipeline,
            observer,
            storage: opened.storage,
            replies: VecDeque::new(),
            writer: Some(writer),
            _lock: opened.lock,
            plan,
            control: control_rx,
            control_tx,
            status,
            clock,
            evidence_dir: config.evidence_dir.clone(),
            state_dir: config.state_dir.clone(),
        };
        let name = format!("pipeline-{}", handle.id);
        let thread = std::thread::Builder::new()
            .name(name)
            .spawn(move || driver.run())
            .map_err(|e| StartError::Setup(format!("cannot start a pipeline thread: {e}")))?;
        handles.push(handle);
        threads.push(thread);
    }
    Ok(Pipelines { handles, threads })
}

fn write_checkpoint(dir: &Path, id: &str, c: &Checkpoint, verified: bool) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let snap = dir.join(format!("{id}.snap"));
    std::fs::write(&snap, &*c.snapshot)?;
    let meta = serde_json::json!({
        "pipeline_id": id,
        "seq": c.seq,
        "state_hash": to_hex(&c.state_hash),
        "verified_at_shutdown": verified,
    });
    std::fs::write(dir.join(format!("{id}.json")), serde_json::to_vec_pretty(&meta).expect("serializes"))?;
    Ok(snap)
}

/// Runs the service until SIGTERM or SIGINT: binds the listener, starts the pipelines, serves HTTP,
/// then drains every pipeline (intake stops, a final verified checkpoint is taken) and returns how
/// each ended.
pub fn run_service(
    config: Config,
    options: ServiceOptions,
    drill: bool,
) -> Result<Vec<PipelineReport>, StartError> {
    if !config.listen.ip().is_loopback() && options.token.is_none() {
        return Err(StartError::NoToken(config.listen));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("anes-http")
        .enable_all()
        .build()
        .map_err(|e| StartError::Setup(format!("cannot start the HTTP runtime: {e}")))?;
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(config.listen))
        .map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let addr = listener.local_addr().map_err(|source| StartError::Bind { addr: config.listen, source })?;
    let metrics = Arc::new(Metrics::new());
    let pipelines = start_pipelines(&config, &options, &metrics)?;
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let state = crate::http::AppState {
        pipelines: Arc::new(pipelines.handles.clone()),
        metrics,
        token: options.token.as_deref().map(Arc::from),
        drill: drill || config.drill,
        evidence_dir: config.evidence_dir.clone(),
        dedup: Arc::new(Mutex::new(crate::alertmanager::Deduplicator::new())),
        stopping: Arc::clone(&stopping),
    };
    tracing::info!(
        listen = %addr,
        pipelines = %pipelines.handles.iter().map(|h| h.id.as_str()).collect::<Vec<_>>().join(","),
        drill = state.drill,
        token = state.token.is_some(),
        "anes serve: listening on http://{addr}/"
    );
    runtime.block_on(async move {
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(crate::http::serve(
            listener,
            crate::http::router(state),
            config.http_limits,
            async {
                let _ = stop_rx.await;
            },
        ));
        let signal = wait_for_signal().await;
        stopping.store(true, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(signal, "stopping: intake stops, final verified checkpoints follow");
        let reports = tokio::task::spawn_blocking(move || pipelines.drain())
            .await
            .map_err(|e| StartError::Setup(format!("draining failed: {e}")))?;
        let _ = stop_tx.send(());
        match tokio::time::timeout(Duration::from_secs(5), server).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "the HTTP server task failed"),
            Err(_) => tracing::warn!("the HTTP server did not stop within 5 s"),
        }
        Ok(reports)
    })
}

async fn wait_for_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            },
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                "SIGINT"
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "SIGINT"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backoff::Backoff;
    use crate::store::writer::RetryPolicy;

    fn schedule(seed: u64) -> Vec<Duration> {
        let policy = RetryPolicy::default();
        let mut backoff = Backoff::new(policy.base, policy.cap, seed);
        (0..5).map(|attempt| backoff.delay(attempt)).collect()
    }

    /// Issue 30, item 2: every pipeline of every process retried its store at the same instants
    /// (1.98, 0.53, 0.47, 5.95, 28.64 s): the seed was a constant.
    #[test]
    fn retry_schedules_differ_per_pipeline_and_per_process() {
        let p1 = schedule(jitter_seed("p1", "store"));
        let p2 = schedule(jitter_seed("p2", "store"));
        assert_ne!(p1, p2, "two pipelines of one process");
        // Another process draws from the operating system again: the same pipeline, another schedule.
        assert_ne!(schedule(jitter_seed("p1", "store")), p1, "the same pipeline in two processes");
        assert_ne!(jitter_seed("p1", "store"), jitter_seed("p1", "rollback"));
        assert_ne!(p1, schedule(RetryPolicy::default().seed), "not the fixed seed tests use");
    }
}
