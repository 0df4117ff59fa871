//! What remote workers cost: a pipeline whose two workers are `anes worker --listen` sessions over
//! loopback TCP (served by threads of this process, as `anes worker --listen` serves them) against a
//! pipeline of two thread workers, both replaying the demo at `speed = "max"`, 600 frames verified
//! per iteration in steady state, one pipeline at a time. The last line printed is the throughput
//! ratio of the run (remote/thread frames per second; the acceptance: at least 0.9).
//!
//! `cargo bench -p anes-ops --bench remote`

use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_core::movie::InputStream;
use anes_ops::config::Config;
use anes_ops::metrics::Metrics;
use anes_ops::pipeline::stream_frames;
use anes_ops::service::{Pipelines, ServiceOptions, start_pipelines};
use anes_ops::worker::remote::listen::{ListenSettings, serve_listener};
use criterion::{Criterion, criterion_group, criterion_main};

mod support;

const DEMO_ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
const DEMO_INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");
const FRAMES: u64 = 600;
const TOKEN: &str = "bench-token";

/// A temporary folder, removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A listening worker on a free loopback port, served by a thread of this process for the rest of
/// the bench (its sessions end when the pipeline closes its connections).
fn listening_worker() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        serve_listener(&listener, TOKEN.as_bytes(), None, ListenSettings::default(), |_| {})
    });
    address
}

fn start(config_text: &str, data_dir: &std::path::Path) -> (Pipelines, Arc<Metrics>) {
    let mut config = Config::parse(config_text, "bench.toml").unwrap();
    config.data_dir = data_dir.to_path_buf();
    let options = ServiceOptions {
        demo_rom: Arc::new(DEMO_ROM.to_vec()),
        demo_input: stream_frames(&InputStream::from_bytes(DEMO_INPUT).unwrap()).into(),
        worker_program: None,
        token: None,
    };
    let metrics = Arc::new(Metrics::new());
    let pipelines = start_pipelines(&config, &options, &metrics).unwrap();
    (pipelines, metrics)
}

fn remote_vs_thread(c: &mut Criterion) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir = TempDir(std::env::temp_dir().join(format!("anes-bench-remote-{}-{nanos}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let token_file = dir.0.join("worker-token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let input = "[pipeline.input]\nspeed = \"max\"\nrepeat = \"loop\"\n";
    let kinds = [
        ("thread", format!("[[pipeline]]\nid = \"bench\"\n{input}")),
        (
            "remote",
            format!(
                "[[pipeline]]\nid = \"bench\"\nworkers = \"remote\"\n{input}[pipeline.remote]\na = \"{}\"\nb = \"{}\"\ntoken_file = \"{}\"\n",
                listening_worker(),
                listening_worker(),
                token_file.display()
            ),
        ),
    ];
    let mut group = c.benchmark_group("remote");
    group.sample_size(10);
    // Frames verified and the time they took, per kind, over every iteration criterion ran.
    let totals: Arc<Mutex<Vec<(u64, Duration)>>> = Arc::new(Mutex::new(vec![(0, Duration::ZERO); 2]));
    for (k, (kind, config)) in kinds.iter().enumerate() {
        let data_dir = dir.0.join(kind);
        let (pipelines, metrics) = start(config, &data_dir);
        // Steady state first: workers started (connected), the log filled.
        let warm = Instant::now();
        support::push::wait_verified(&metrics, "bench", 0, 2 * FRAMES, warm);
        let totals = Arc::clone(&totals);
        group.bench_function(format!("{kind}_pipeline_max_{FRAMES}_frames"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                let from = metrics.frames_verified("bench");
                support::push::wait_verified(&metrics, "bench", from, from + iters * FRAMES, start);
                let took = start.elapsed();
                let verified = metrics.frames_verified("bench") - from;
                let mut totals = totals.lock().unwrap();
                totals[k].0 += verified;
                totals[k].1 += took;
                took
            })
        });
        pipelines.drain();
    }
    group.finish();
    let totals = totals.lock().unwrap();
    let rate = |(frames, took): (u64, Duration)| frames as f64 / took.as_secs_f64().max(1e-9);
    let (thread, remote) = (rate(totals[0]), rate(totals[1]));
    println!(
        "remote_vs_thread: thread pipeline {thread:.0} frames/s, remote pipeline over loopback {remote:.0} \
         frames/s: remote/thread {:.3}",
        remote / thread
    );
}

criterion_group!(benches, remote_vs_thread);
criterion_main!(benches);
