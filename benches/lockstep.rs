//! Lockstep benchmarks on the demo ROM with its bundled input: 60 more frames of one instance alone, of
//! two instances in lockstep on one thread, and on two worker threads (each mode keeps running the same
//! machines from sample to sample); and finding a divergence injected at frame 4,000 with a checkpoint
//! every 60 frames, without and with localization; and 60 more frames on one thread compared at every
//! frame, scanline and instruction (the sync digest), on one thread and on two. The ratios that matter (lockstep over one
//! instance, finer granularities over frame granularity) are in docs/PERFORMANCE.md.
//! `cargo bench --bench lockstep` (quick: `-- --warm-up-time 0.3 --measurement-time 1`).

use std::hint::black_box;
use std::path::PathBuf;

use anes::lockstep::{
    FaultPlan, Granularity, Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome, Threading,
};
use anes::nes::movie::InputStream;
use anes::nes::{Cartridge, Nes, NesConfig};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const FRAMES: u64 = 60;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn demo() -> (Vec<u8>, InputStream) {
    let rom = std::fs::read(repo().join("roms/demo/demo.nes")).unwrap();
    let input =
        InputStream::from_bytes(&std::fs::read(repo().join("roms/demo/demo.input")).unwrap()).unwrap();
    (rom, input)
}

/// A machine that has run the first `frames` frames of the input.
fn machine_at(rom: &[u8], input: &InputStream, frames: u64) -> NesMachine {
    let mut nes = Nes::new(Cartridge::from_ines(rom).unwrap(), NesConfig::default());
    for i in 0..frames {
        nes.run_frame(input.frame(i as usize));
    }
    NesMachine::new(nes)
}

/// Steady state: each mode keeps its machines from one sample to the next (as a long run does), so
/// a sample is 60 more frames, not a cold start. A threaded sample still starts its two workers, as
/// every `Lockstep::run` call does.
fn per_frame(c: &mut Criterion) {
    let (rom, input) = demo();
    let start = machine_at(&rom, &input, 120);
    let mut group = c.benchmark_group("lockstep_60_frames");
    group.sample_size(20);
    let mut single = start.clone();
    let mut next = 120;
    group.bench_function("single_instance", |b| {
        b.iter(|| {
            for _ in 0..FRAMES {
                black_box(single.run_frame(input.frame(next)));
                next += 1;
            }
        })
    });
    for (name, threading) in
        [("same_thread", Threading::SameThread), ("threaded", Threading::Threaded { window: 8 })]
    {
        let config = LockstepConfig { threading, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(start.clone(), start.clone(), config).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| assert_eq!(lockstep.run(&input, FRAMES), RunOutcome::Agreed { frames: FRAMES }))
        });
    }
    group.finish();
}

/// The same thread, compared at every frame end, scanline and instruction: inside a frame the runner
/// compares the sync digest (`Nes::state_digest`), not the blake3 state hash. Then two worker threads
/// at each granularity with the window `anes lockstep --threads` uses for it (the workers hand over
/// their records in batches, so thousands of sync points per frame cost no wake-up each).
fn per_granularity(c: &mut Criterion) {
    let (rom, input) = demo();
    let start = machine_at(&rom, &input, 120);
    let mut group = c.benchmark_group("lockstep_60_frames_by_granularity");
    group.sample_size(10);
    for (granularity, window) in
        [(Granularity::Frame, 16), (Granularity::Scanline, 16 * 262), (Granularity::Instruction, 16_384)]
    {
        for (mode, threading) in [("", Threading::SameThread), ("threaded_", Threading::Threaded { window })]
        {
            let config = LockstepConfig { granularity, threading, ..LockstepConfig::default() };
            let mut lockstep = Lockstep::new(start.clone(), start.clone(), config).unwrap();
            group.bench_function(format!("{mode}{granularity}"), |b| {
                b.iter(|| assert_eq!(lockstep.run(&input, FRAMES), RunOutcome::Agreed { frames: FRAMES }))
            });
        }
    }
    group.finish();
}

fn localization(c: &mut Criterion) {
    let (rom, input) = demo();
    // Start at frame 3,900 (a checkpoint boundary for K = 60 lies at 3,960), inject in frame 4,000.
    let start = machine_at(&rom, &input, 3_900);
    let mut probe = machine_at(&rom, &input, 3_999);
    let cycle = probe.record().cpu_cycle + 15_000;
    probe.run_frame(input.frame(3_999));
    let plan = FaultPlan::parse([format!("flip:ram:0x0342:3@{cycle}")]).unwrap();
    let mut group = c.benchmark_group("divergence_at_frame_4000");
    group.sample_size(10);
    for (name, localize) in [("detect", false), ("detect_and_localize", true)] {
        group.bench_function(name, |b| {
            b.iter_batched(
                || {
                    let config = LockstepConfig {
                        localize,
                        pictures: false,
                        faults: plan.clone(),
                        ..LockstepConfig::default()
                    };
                    Lockstep::new(start.clone(), start.clone(), config).unwrap()
                },
                |mut lockstep| {
                    let outcome = lockstep.run(&input, 200);
                    assert!(matches!(outcome, RunOutcome::Diverged { .. }), "{outcome:?}");
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, per_frame, per_granularity, localization);
criterion_main!(benches);
