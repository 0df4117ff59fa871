//! The service's start: read the token, each pipeline's ROM and input stream, open its durable state
//! ([`crate::recovery`]), start its checkpoint writer, and spawn one driver thread per pipeline.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anes_core::movie::{FrameInput, InputStream};

use super::driver::{Driver, PipelinePlan, PipelineReport};
use super::error::StartError;
use super::handle::{Control, PipelineHandle};
use crate::config::{Config, InputSpec, MAX_TOKEN_FILE_LEN};
use crate::metrics::Metrics;
use crate::pipeline::{Event, PipelineObserver, ReplaySource, StorageThread, StoreEvent};
use crate::store::writer::{CheckpointWriter, WriterEvent};
use crate::worker::{WorkerLauncher, WorkerMode};

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
                    final_checkpoint_stored: false,
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
            let text = anes_fs::read_text_capped(path, MAX_TOKEN_FILE_LEN, "token")
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
        // A libretro pipeline's content is the core's to refuse: its workers' `Load` answers.
        let (region, state_sections): (_, Arc<[(&'static str, usize)]>) = if p.libretro.is_some() {
            // Replayed at the NTSC rate; a drill's flip names a core's section, which only its
            // workers know (none is accepted here).
            (None, Arc::new([]))
        } else {
            // Refuse a ROM the core refuses now, not in a worker later.
            let cart = anes_core::Cartridge::from_ines(&rom).map_err(|e| StartError::File {
                path: p.rom.as_ref().map_or("the bundled demo ROM".into(), |r| r.display().to_string()),
                problem: e.to_string(),
            })?;
            // The region made explicit, so the workers are told it and a worker of another is refused.
            let region = p.settings.region.unwrap_or_else(|| anes_core::Nes::region_for(&cart));
            let console = anes_core::Nes::with_region(cart, anes_core::NesConfig::default(), Some(region));
            (Some(region), anes_core::Section::ALL.map(|s| (s.name(), console.section_bytes(s).len())).into())
        };
        let source = match &p.input {
            InputSpec::Push => None,
            InputSpec::Replay { file, looping, pace } => {
                let stream = match file {
                    Some(path) => crate::pipeline::stream_frames(&read_stream(path)?).into(),
                    None => Arc::clone(&options.demo_input),
                };
                let frame_rate = region.unwrap_or(anes_core::Region::Ntsc).timing().frame_rate_hz();
                Some(ReplaySource::new(stream, *looping, *pace).at_frame_rate(frame_rate))
            }
        };
        let launcher = WorkerLauncher {
            mode: p.workers,
            program: options.worker_program.clone(),
            remote: p.remote.clone(),
            region,
            // Left out of `Load` for the default, so workers of older builds still take it.
            power_on: Some(p.power_on).filter(|profile| *profile != anes_core::PowerOnProfile::Default),
            process_args: match (&p.libretro, &p.rom) {
                (Some(spec), Some(content)) => [spec.worker_args(0, content), spec.worker_args(1, content)],
                _ => Default::default(),
            },
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
        config.settings.journal_retry.2 = jitter_seed(&p.settings.id, "journal");
        config.settings.region = region;
        let settings = config.settings.clone();
        plans.push((PipelinePlan { config, settings, rom, source, launcher }, state_sections));
    }
    let mut handles = Vec::new();
    let mut threads = Vec::new();
    for (mut plan, state_sections) in plans {
        let (control_tx, control_rx) = crossbeam_channel::unbounded();
        let opened = crate::recovery::open(&plan.config, &config.data_dir, &plan.rom)?;
        let observer = PipelineObserver::new(metrics.pipeline(&plan.settings.id));
        tracing::info!(pipeline = %plan.settings.id, "{}", opened.summary);
        let mut pipeline = opened.pipeline;
        pipeline.handle(Duration::ZERO, Event::Store(StoreEvent::Epoch(opened.epoch.get())));
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
                    WriterEvent::Damaged { .. } => StoreEvent::Damaged,
                    _ => return,
                };
                let _ = back.send(Control::Event(Event::Store(event)));
            }),
        );
        let answers = control_tx.clone();
        let storage = StorageThread::start(
            &id,
            opened.storage,
            Box::new(move |event| {
                let _ = answers.send(Control::Event(event));
            }),
        );
        let status = Arc::new(Mutex::new(Arc::new(pipeline.status())));
        let handle = PipelineHandle {
            id: plan.settings.id.clone(),
            control: control_tx.clone(),
            status: Arc::clone(&status),
            accepts_push: plan.source.is_none(),
            rom: plan.config.rom.clone(),
            state_sections,
        };
        let driver = Driver {
            pipeline,
            observer,
            storage: Some(storage),
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
