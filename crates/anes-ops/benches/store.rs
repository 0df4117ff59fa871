//! What durable checkpoints cost.
//!
//! - `store_write/*`: one verified checkpoint of the demo ROM (its real snapshot) written to a store
//!   and acknowledged: the filesystem store in a temporary directory (temporary file, fsync, rename,
//!   fsync of the directory, retention of 4), and the Redis store against a real `redis-server` this
//!   bench starts on a loopback port (`appendonly yes`, `appendfsync everysec`, as the tests run it) and
//!   stops by PID. Without `redis-server` the Redis part is skipped with a printed line.
//! - `pipeline_checkpoints/*`: 600 demo frames pushed to a pipeline of `anes serve` (two thread workers,
//!   its journal on) and verified, with a verified checkpoint every 60 frames written by the checkpoint
//!   writer (filesystem, and Redis when it is there) against none in the run (`checkpoint_every` past
//!   the run). Then the same three are measured again interleaved, round after round, so a loaded
//!   machine slows them alike, and the medians are printed with the ratio. The acceptance: checkpoints
//!   every 60 frames within 5% of none (the writes are off the workers' path).
//!
//! `cargo bench -p anes-ops --bench store` (`ANES_BENCH_ROUNDS=N` sets the interleaved rounds, 8).

#[path = "../tests/support/redis_server.rs"]
mod redis_server;
mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::{FrameInput, InputStream};
use anes_core::{Cartridge, Nes, NesConfig};
use anes_ops::config::Config;
use anes_ops::metrics::Metrics;
use anes_ops::pipeline::stream_frames;
use anes_ops::service::{PipelineHandle, Pipelines, ServiceOptions, start_pipelines};
use anes_ops::store::{CheckpointHeader, CheckpointStore, FsStore, RedisStore};
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use redis_server::RedisServer;

const DEMO_ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
const DEMO_INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");
/// Frames per measured batch.
const FRAMES: u64 = 600;
/// `checkpoint_every` for "no checkpoint in the run": the largest the configuration takes.
const NO_CHECKPOINTS: u64 = 1 << 20;

fn demo_frames() -> Vec<FrameInput> {
    stream_frames(&InputStream::from_bytes(DEMO_INPUT).expect("the bundled input stream"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "anes-bench-store-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos()
    ));
    std::fs::create_dir_all(&dir).expect("creating a temporary directory");
    dir
}

/// The snapshot a pipeline would store at frame 300 of the demo: (snapshot, state hash, CPU cycle).
fn demo_checkpoint() -> (Vec<u8>, [u8; 32], u64) {
    let mut nes = Nes::new(Cartridge::from_ines(DEMO_ROM).expect("the demo ROM"), NesConfig::default());
    for input in demo_frames().into_iter().take(300) {
        nes.run_frame(input);
    }
    let mut snapshot = Vec::new();
    nes.save_state(&mut snapshot);
    (snapshot, nes.state_hash().0, nes.cpu_cycle())
}

/// Writes checkpoints of rising frames to `store` as one writer would.
fn bench_writes(
    c: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    store: &mut dyn CheckpointStore,
) {
    let (snapshot, hash, cycle) = demo_checkpoint();
    let epoch = store.bump_epoch().expect("taking the store over");
    let mut frame = 0u64;
    c.bench_function(name, |b| {
        b.iter(|| {
            frame += 60;
            let header = CheckpointHeader::for_payload("bench", epoch, frame, cycle, hash, &snapshot);
            store.put(&header, &mut snapshot.as_slice()).expect("a checkpoint write")
        })
    });
}

fn store_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("store_write");
    let dir = temp_dir("fs");
    let mut fs = FsStore::open(&dir, "bench", 4).expect("a filesystem store");
    bench_writes(&mut group, "filesystem_demo_checkpoint", &mut fs);
    drop(fs);
    let _ = std::fs::remove_dir_all(&dir);
    if redis_server::installed_for("store_write/redis_demo_checkpoint") {
        let server = RedisServer::start("bench-write");
        let mut redis = RedisStore::new(&server.url(), "bench", 4).expect("a redis store");
        bench_writes(&mut group, "redis_demo_checkpoint", &mut redis);
    }
    group.finish();
}

/// A service with one push pipeline fed the demo input.
struct Service {
    pipelines: Option<Pipelines>,
    handle: PipelineHandle,
    metrics: Arc<Metrics>,
    data_dir: PathBuf,
    inputs: Vec<FrameInput>,
    next_seq: u64,
}

impl Service {
    fn start(name: &str, checkpoint_every: u64, store: &str) -> Service {
        let text = format!(
            "[[pipeline]]\nid = \"bench\"\ncheckpoint_every = {checkpoint_every}\npersist_every = {checkpoint_every}\n{store}[pipeline.input]\nsource = \"push\"\n"
        );
        let mut config = Config::parse(&text, "bench.toml").expect("the bench's configuration");
        let data_dir = temp_dir(name);
        config.data_dir = data_dir.clone();
        let options = ServiceOptions {
            demo_rom: Arc::new(DEMO_ROM.to_vec()),
            demo_input: demo_frames().into(),
            worker_program: None,
            token: None,
        };
        let metrics = Arc::new(Metrics::new());
        let pipelines = start_pipelines(&config, &options, &metrics).expect("starting the pipeline");
        let handle = pipelines.handles[0].clone();
        let inputs = demo_frames();
        let mut service =
            Service { pipelines: Some(pipelines), handle, metrics, data_dir, inputs, next_seq: 0 };
        // Steady state first: workers started and warm.
        service.run_batch();
        service
    }

    /// Pushes `FRAMES` records and waits until the workers verified them; returns the time taken.
    fn run_batch(&mut self) -> Duration {
        let first_seq = self.next_seq;
        let inputs: Vec<FrameInput> = (first_seq..first_seq + FRAMES)
            .map(|s| self.inputs[(s % self.inputs.len() as u64) as usize])
            .collect();
        let pushed = support::push::push_and_wait(&self.handle, &self.metrics, first_seq, inputs);
        self.next_seq = pushed.next_seq;
        pushed.verified_after
    }

    fn checkpoints_persisted(&self) -> Option<u64> {
        self.handle.status().store.persisted_seq
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if let Some(p) = self.pipelines.take() {
            p.drain();
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

fn pipeline_checkpoints(c: &mut Criterion) {
    let redis = redis_server::installed_for("pipeline_checkpoints/every_60_redis")
        .then(|| RedisServer::start("bench-pipeline"));
    let mut services: Vec<(&str, Service)> = vec![
        ("none", Service::start("none", NO_CHECKPOINTS, "")),
        ("every_60_filesystem", Service::start("fs", 60, "")),
    ];
    if let Some(server) = &redis {
        let store = format!("[pipeline.store]\nbackend = \"redis\"\nurl = \"{}\"\n", server.url());
        services.push(("every_60_redis", Service::start("redis", 60, &store)));
    }

    let mut group = c.benchmark_group("pipeline_checkpoints");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for (name, service) in &mut services {
        group.bench_function(format!("{name}_600_frames"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| service.run_batch()).sum())
        });
    }
    group.finish();

    // Interleaved: each round runs every configuration once, in a rotating order.
    let Some(rounds) = support::push::interleaved_rounds(8) else { return };
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); services.len()];
    for round in 0..rounds {
        for k in 0..services.len() {
            let i = (round + k) % services.len();
            samples[i].push(services[i].1.run_batch());
        }
    }
    let medians: Vec<Duration> = samples.iter_mut().map(|s| support::push::median(s)).collect();
    let none = medians[0];
    println!(
        "pipeline_checkpoints, interleaved: {rounds} rounds of {FRAMES} frames per configuration (medians)"
    );
    for ((name, service), m) in services.iter().zip(&medians) {
        println!(
            "  {name:<22} {:>8.1} ms  {:>6.0} frames/s  {:+.1}% against none; newest checkpoint stored: frame {}",
            m.as_secs_f64() * 1e3,
            FRAMES as f64 / m.as_secs_f64(),
            (m.as_secs_f64() / none.as_secs_f64() - 1.0) * 100.0,
            service.checkpoints_persisted().map_or("none".to_string(), |s| s.to_string())
        );
    }
}

criterion_group!(benches, store_write, pipeline_checkpoints);
criterion_main!(benches);
