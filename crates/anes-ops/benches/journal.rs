//! What a shared journal costs (issue 44): a replay pipeline at `speed = "max"` (two thread workers,
//! the demo and its input looping) verifying frames with its journal in the data directory (the
//! filesystem store; batches fsynced with the acknowledged mark), in Redis (`appendonly yes`, with
//! `appendfsync always` and with `everysec`), in PostgreSQL (fsync on) and in S3 (moto's server), every
//! commit a round trip under the store's fence. Each round starts every configuration in turn (in a
//! rotating order), lets it reach steady state (300 frames verified) and times the next 1,800; the
//! medians and their ratio to the data directory's journal are printed. The acceptance: PostgreSQL and
//! Redis within 25% of the local journal.
//!
//! `cargo bench -p anes-ops --bench journal` (`ANES_BENCH_ROUNDS=N`, default 5). Servers that are not
//! installed are skipped with a printed line.

#[path = "../tests/support/postgres_server.rs"]
mod postgres_server;
#[path = "../tests/support/redis_server.rs"]
mod redis_server;
#[path = "../tests/support/s3_server.rs"]
mod s3_server;
mod support;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anes_core::movie::InputStream;
use anes_ops::config::Config;
use anes_ops::metrics::Metrics;
use anes_ops::pipeline::stream_frames;
use anes_ops::service::{ServiceOptions, start_pipelines};

const DEMO_ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
const DEMO_INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");
const WARM: u64 = 300;
const FRAMES: u64 = 1800;

/// Runs a replay pipeline with `store` (a `[pipeline.store]` body) until it verified `WARM` frames,
/// then returns how long the next `FRAMES` took.
fn measure(name: &str, store: &str) -> Duration {
    let text = format!(
        "[[pipeline]]\nid = \"bench\"\n[pipeline.input]\nsource = \"replay\"\nspeed = \"max\"\n[pipeline.store]\n{store}\n"
    );
    let mut config = Config::parse(&text, "bench.toml").expect("the bench's configuration");
    let data_dir: PathBuf = std::env::temp_dir().join(format!(
        "anes-bench-journal-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos()
    ));
    config.data_dir = data_dir.clone();
    let options = ServiceOptions {
        demo_rom: Arc::new(DEMO_ROM.to_vec()),
        demo_input: stream_frames(&InputStream::from_bytes(DEMO_INPUT).expect("the demo input")).into(),
        worker_program: None,
        token: None,
    };
    let metrics = Arc::new(Metrics::new());
    let pipelines = start_pipelines(&config, &options, &metrics).expect("starting the pipeline");
    let handle = pipelines.handles[0].clone();
    let verified = || handle.status().frames_verified;
    let deadline = Instant::now() + Duration::from_secs(300);
    while verified() < WARM {
        assert!(Instant::now() < deadline, "{name}: no steady state");
        std::thread::sleep(Duration::from_millis(2));
    }
    let (from, started) = (verified(), Instant::now());
    while verified() < from + FRAMES {
        assert!(Instant::now() < deadline, "{name}: {FRAMES} frames not verified");
        std::thread::sleep(Duration::from_millis(1));
    }
    let took = started.elapsed();
    pipelines.drain();
    let _ = std::fs::remove_dir_all(&data_dir);
    took
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let rounds = support::push::interleaved_rounds(5).unwrap_or(5);
    let redis = redis_server::installed_for("journal bench, redis")
        .then(|| redis_server::RedisServer::start("bench-journal"));
    let postgres = postgres_server::installed_for("journal bench, postgres")
        .then(|| postgres_server::PostgresServer::start_with("bench-journal", true));
    let s3 = s3_server::installed_for("journal bench, s3").then(|| {
        let server = s3_server::S3Server::start("bench-journal");
        server.create_bucket("anes-bench");
        server
    });
    let credentials = std::env::temp_dir().join(format!("anes-bench-aws-{}", std::process::id()));
    std::fs::write(&credentials, "[default]\naws_access_key_id = test\naws_secret_access_key = test\n")
        .unwrap();
    let mut configs: Vec<(String, String)> = vec![("data directory (fsync)".into(), String::new())];
    if let Some(server) = &redis {
        for fsync in ["always", "everysec"] {
            configs.push((
                format!("redis, appendfsync {fsync}"),
                format!("backend = \"redis\"\nurl = \"{}\"", server.url()),
            ));
        }
    }
    if let Some(server) = &postgres {
        configs.push((
            "postgres (fsync on)".into(),
            format!("backend = \"postgres\"\nurl = \"{}\"", server.url()),
        ));
    }
    if let Some(server) = &s3 {
        configs.push((
            "s3 (moto)".into(),
            format!(
                "backend = \"s3\"\nendpoint = \"{}\"\nbucket = \"anes-bench\"\nregion = \"us-east-1\"\ncredentials_file = \"{}\"",
                server.endpoint(),
                credentials.display()
            ),
        ));
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); configs.len()];
    for round in 0..rounds {
        for k in 0..configs.len() {
            let i = (round + k) % configs.len();
            let (name, store) = &configs[i];
            if let (Some(server), Some(fsync)) = (&redis, name.strip_prefix("redis, appendfsync ")) {
                let mut c = server.connection();
                redis::cmd("FLUSHALL").query::<()>(&mut c).unwrap();
                redis::cmd("CONFIG").arg("SET").arg("appendfsync").arg(fsync).query::<()>(&mut c).unwrap();
            }
            if let Some(server) = &postgres
                && name.starts_with("postgres")
            {
                let mut c = server.client();
                for table in ["anes_journal", "anes_store_checkpoints", "anes_store_epochs"] {
                    let _ = c.execute(&format!("DELETE FROM {table}"), &[]);
                }
            }
            let store = if name.starts_with("s3") {
                format!("{store}\nprefix = \"round{round}\"")
            } else {
                store.clone()
            };
            samples[i].push(measure(&format!("{i}"), &store));
        }
    }
    let medians: Vec<Duration> = samples.iter_mut().map(|s| support::push::median(s)).collect();
    let local = medians[0];
    println!(
        "journal, speed = \"max\": {rounds} interleaved rounds of {FRAMES} frames per configuration (medians)"
    );
    for ((name, _), m) in configs.iter().zip(&medians) {
        println!(
            "  {name:<26} {:>8.1} ms  {:>6.0} frames/s  throughput {:.2} of the data directory's",
            m.as_secs_f64() * 1e3,
            FRAMES as f64 / m.as_secs_f64(),
            local.as_secs_f64() / m.as_secs_f64()
        );
    }
    let _ = std::fs::remove_file(&credentials);
}
