//! What the operations layer costs.
//!
//! - `throughput/*`: 600 frames of the demo ROM verified in steady state, by the bare lockstep runner
//!   (two worker threads, window 16 as the CLI's `--threads`, and 120 as a pipeline's drift window)
//!   and by a pipeline of `anes serve` (two thread workers, replaying
//!   at `max` pace) with its metrics registered and its HTTP server answering a scrape of `/metrics`
//!   and `/v1/pipelines` every second, as Prometheus and a dashboard would. The acceptance: the
//!   pipeline within 3% of the bare runner.
//!   Criterion measures them one after the other, so a loaded machine can tilt the ratio by 10-20%;
//!   `overhead_interleaved` then runs the bare runner (window 120) and a push pipeline (metrics on,
//!   HTTP scraped every second) on the same frames (both go on from power-on through the same
//!   records, 600 a round), alternating round after round, and prints both medians and their ratio:
//!   the figure the acceptance is read from (`ANES_BENCH_ROUNDS`, 15).
//! - `scrape/*`: one `/metrics` with 100 pipelines: encoding alone, and a whole HTTP request over
//!   loopback. The acceptance: under 5 ms.
//!
//! `cargo bench -p anes-ops --bench pipeline`

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{Lockstep, LockstepConfig, NesMachine, RunOutcome, Threading};
use anes_ops::alertmanager::Deduplicator;
use anes_ops::config::Config;
use anes_ops::http::{AppState, router};
use anes_ops::metrics::Metrics;
use anes_ops::pipeline::stream_frames;
use anes_ops::service::{Pipelines, ServiceOptions, start_pipelines};
use criterion::{Criterion, criterion_group, criterion_main};

mod support;

const DEMO_ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
const DEMO_INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");
const FRAMES: u64 = 600;

fn demo_input() -> InputStream {
    InputStream::from_bytes(DEMO_INPUT).expect("the bundled input stream")
}

/// The demo input repeated, as long as the longest run needs (a replay loops the same way).
fn looping_input(frames: usize) -> InputStream {
    let one = stream_frames(&demo_input());
    let looped: Vec<FrameInput> = one.iter().copied().cycle().take(frames).collect();
    InputStream::from_frames(looped)
}

/// A service: pipelines, the HTTP server on a loopback port, and a scraper thread.
struct Service {
    pipelines: Option<Pipelines>,
    metrics: Arc<Metrics>,
    port: u16,
    stop: Arc<AtomicBool>,
    runtime: tokio::runtime::Runtime,
    scraper: Option<std::thread::JoinHandle<()>>,
    data_dir: std::path::PathBuf,
}

impl Service {
    fn start(config_text: &str, scrape: bool) -> Service {
        let mut config = Config::parse(config_text, "bench.toml").unwrap();
        // Durable state in a directory of its own, removed on drop (never `./anes-data`).
        let data_dir = std::env::temp_dir().join(format!(
            "anes-bench-pipeline-{}-{}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        ));
        config.data_dir = data_dir.clone();
        let options = ServiceOptions {
            demo_rom: Arc::new(DEMO_ROM.to_vec()),
            demo_input: stream_frames(&demo_input()).into(),
            worker_program: None,
            token: None,
        };
        let metrics = Arc::new(Metrics::new());
        let pipelines = start_pipelines(&config, &options, &metrics).unwrap();
        let state = AppState {
            pipelines: Arc::new(pipelines.handles.clone()),
            metrics: Arc::clone(&metrics),
            token: None,
            drill: false,
            evidence_dir: std::env::temp_dir(),
            dedup: Arc::new(Mutex::new(Deduplicator::new())),
            stopping: Arc::new(AtomicBool::new(false)),
        };
        let runtime =
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        runtime.spawn(async move { axum::serve(listener, router(state)).await });
        let stop = Arc::new(AtomicBool::new(false));
        let scraper = scrape.then(|| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                let agent = agent();
                while !stop.load(Ordering::Relaxed) {
                    for path in ["/metrics", "/v1/pipelines"] {
                        let _ = get(&agent, port, path);
                    }
                    // Asleep until the next scrape or until the service stops (it unparks this
                    // thread): no wake-ups in between to take a core from a worker.
                    let until = Instant::now() + Duration::from_secs(1);
                    while !stop.load(Ordering::Relaxed) {
                        let Some(left) = until.checked_duration_since(Instant::now()) else { break };
                        std::thread::park_timeout(left);
                    }
                }
            })
        });
        Service { pipelines: Some(pipelines), metrics, port, stop, runtime, scraper, data_dir }
    }

    /// Read from the live counter (the status the API serves is refreshed only every 100 ms).
    fn frames_verified(&self) -> u64 {
        self.metrics.frames_verified("bench")
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(s) = self.scraper.take() {
            s.thread().unpark();
            let _ = s.join();
        }
        if let Some(p) = self.pipelines.take() {
            p.drain();
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
        let _ = &self.runtime;
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder().proxy(None).timeout_global(Some(Duration::from_secs(5))).build().into()
}

fn get(agent: &ureq::Agent, port: u16, path: &str) -> Option<String> {
    agent.get(&format!("http://127.0.0.1:{port}{path}")).call().ok()?.body_mut().read_to_string().ok()
}

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("throughput");
    group.sample_size(10);

    let inputs = looping_input(2_000_000);
    let machine = NesMachine::from_ines(DEMO_ROM, NesConfig::default()).unwrap();
    // The CLI's threaded window (16), and the pipeline's drift window (120) for a like-for-like lead.
    for window in [16, 120] {
        let config =
            LockstepConfig { threading: Threading::Threaded { window }, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        group.bench_function(format!("bare_lockstep_threaded_window_{window}_600_frames"), |b| {
            b.iter(|| assert_eq!(lockstep.run(&inputs, FRAMES), RunOutcome::Agreed { frames: FRAMES }))
        });
    }

    let service = Service::start(
        "[[pipeline]]\nid = \"bench\"\n[pipeline.input]\nspeed = \"max\"\nrepeat = \"loop\"\n",
        true,
    );
    // Steady state first: workers started, the log filled.
    while service.frames_verified() < 2 * FRAMES {
        std::thread::sleep(Duration::from_millis(10));
    }
    group.bench_function("pipeline_with_metrics_and_http_600_frames", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let from = service.frames_verified();
            support::push::wait_verified(&service.metrics, "bench", from, from + iters * FRAMES, start);
            start.elapsed()
        })
    });
    drop(service);
    group.finish();
}

/// The bare lockstep runner against a pipeline with metrics and HTTP, interleaved (see the module doc).
fn overhead_interleaved(_: &mut Criterion) {
    let Some(rounds) = support::push::interleaved_rounds(15) else { return };
    let frames = stream_frames(&looping_input(FRAMES as usize));
    // Both sides emulate the same frames every round: each continues from power-on through the same
    // records, 600 per round (the demo's first 600, again and again), so round k of the bare runner and
    // round k of the pipeline run the same game state. (Restarting the bare runner at power-on each
    // round while the pipeline went on would compare different scenes of the demo.)
    let bare_inputs =
        InputStream::from_frames(frames.iter().copied().cycle().take(frames.len() * (rounds + 1)).collect());
    let machine = NesMachine::from_ines(DEMO_ROM, NesConfig::default()).unwrap();
    let config =
        LockstepConfig { threading: Threading::Threaded { window: 120 }, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let service = Service::start("[[pipeline]]\nid = \"bench\"\n[pipeline.input]\nsource = \"push\"\n", true);
    let handle = service.pipelines.as_ref().expect("running").handles[0].clone();
    let mut next_seq = 0;
    // Each round gives (wall time, process CPU time).
    let cpu = || support::push::process_cpu_time().unwrap_or_default();
    let mut bare_round = || {
        let (started, cpu_before) = (Instant::now(), cpu());
        assert_eq!(lockstep.run(&bare_inputs, FRAMES), RunOutcome::Agreed { frames: FRAMES });
        (started.elapsed(), cpu() - cpu_before)
    };
    let mut accepted_after = Vec::new();
    let mut pipeline_round = || {
        let cpu_before = cpu();
        let pushed = support::push::push_and_wait(&handle, &service.metrics, next_seq, frames.clone());
        next_seq = pushed.next_seq;
        accepted_after.push(pushed.accepted_after);
        (pushed.verified_after, cpu() - cpu_before)
    };
    // Warm both up.
    bare_round();
    pipeline_round();
    let (mut bare, mut pipeline) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            bare.push(bare_round());
            pipeline.push(pipeline_round());
        } else {
            pipeline.push(pipeline_round());
            bare.push(bare_round());
        }
    }
    for (what, pick) in [("wall time", 0), ("process CPU time", 1)] {
        let of = |rounds: &[(Duration, Duration)]| -> Vec<Duration> {
            rounds.iter().map(|r| if pick == 0 { r.0 } else { r.1 }).collect()
        };
        let (mut b, mut p) = (of(&bare), of(&pipeline));
        let mut ratios: Vec<f64> =
            b.iter().zip(&p).map(|(b, p)| p.as_secs_f64() / b.as_secs_f64().max(1e-9)).collect();
        ratios.sort_by(f64::total_cmp);
        let (b, p) = (support::push::median(&mut b), support::push::median(&mut p));
        println!(
            "overhead_interleaved, {what}: {rounds} rounds of {FRAMES} frames; bare lockstep (window 120) median \
             {:.1} ms, pipeline with metrics and HTTP median {:.1} ms: pipeline/bare {:.3} (per-round ratios: \
             median {:.3}, range {:.3}-{:.3})",
            b.as_secs_f64() * 1e3,
            p.as_secs_f64() * 1e3,
            p.as_secs_f64() / b.as_secs_f64().max(1e-9),
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1],
        );
    }
    // Part of the pipeline's wall time: its answer to the push comes after the batch is journaled
    // (written and fsynced), and no worker runs a record before that.
    println!(
        "overhead_interleaved, of which journaling the pushed batch before it runs: median {:.2} ms",
        support::push::median(&mut accepted_after).as_secs_f64() * 1e3
    );
    drop(service);
}

fn scrape(c: &mut Criterion) {
    let mut group = c.benchmark_group("scrape");
    let metrics = Metrics::new();
    let handles: Vec<_> = (0..100).map(|i| metrics.pipeline(&format!("pipeline-{i:03}"))).collect();
    for (i, h) in handles.iter().enumerate() {
        h.frames_verified.inc_by(1000 + i as u64);
        h.drift.set(i as i64 % 7);
        for k in 0..50 {
            h.compare_latency.observe(0.0001 * k as f64);
        }
    }
    let mut text = String::with_capacity(1 << 20);
    group.bench_function("encode_100_pipelines", |b| {
        b.iter(|| {
            text.clear();
            metrics.encode(&mut text).unwrap();
            text.len()
        })
    });

    let mut config = String::new();
    for i in 0..100 {
        config.push_str(&format!(
            "[[pipeline]]\nid = \"pipeline-{i:03}\"\n[pipeline.input]\nsource = \"push\"\n"
        ));
    }
    let service = Service::start(&config, false);
    let agent = agent();
    let body = get(&agent, service.port, "/metrics").expect("a scrape");
    assert!(body.contains("worker_drift_offset_records{pipeline_id=\"pipeline-099\"}"));
    println!("one /metrics body with 100 pipelines: {} bytes, {} lines", body.len(), body.lines().count());
    group.bench_function("http_get_metrics_100_pipelines", |b| {
        b.iter(|| get(&agent, service.port, "/metrics").map(|s| s.len()))
    });
    drop(service);
    group.finish();
}

criterion_group!(benches, throughput, overhead_interleaved, scrape);
criterion_main!(benches);
