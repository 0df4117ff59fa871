//! Core benchmarks: stepping a frame of each bundled ROM, the state hash, section digests, and
//! snapshot save/load. `cargo bench --bench core`; quick mode for CI:
//! `cargo bench --bench core -- --warm-up-time 0.5 --measurement-time 1`.

use std::hint::black_box;
use std::path::PathBuf;

use anes::nes::movie::{FrameInput, InputStream};
use anes::nes::{Cartridge, Nes, NesConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bundled_roms() -> Vec<(String, Vec<u8>)> {
    let mut roms = Vec::new();
    for dir in ["roms/demo", "roms/stress"] {
        let mut paths: Vec<PathBuf> =
            std::fs::read_dir(repo().join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        paths.sort();
        for path in paths.into_iter().filter(|p| p.extension().is_some_and(|e| e == "nes")) {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            roms.push((name, std::fs::read(path).unwrap()));
        }
    }
    roms
}

fn demo_input() -> InputStream {
    InputStream::from_bytes(&std::fs::read(repo().join("roms/demo/demo.input")).unwrap()).unwrap()
}

/// A machine that has run 120 frames of the demo input, so it is past its boot screens.
fn warmed(rom: &[u8], input: &InputStream) -> Nes {
    let mut nes = Nes::new(Cartridge::from_ines(rom).unwrap(), NesConfig::default());
    for i in 0..120 {
        nes.run_frame(input.frame(i));
    }
    nes
}

fn frame_step(c: &mut Criterion) {
    let input = demo_input();
    let mut group = c.benchmark_group("frame_step");
    group.throughput(Throughput::Elements(1));
    for (name, rom) in bundled_roms() {
        let mut nes = warmed(&rom, &input);
        let mut i = 120;
        group.bench_function(&name, |b| {
            b.iter(|| {
                i = (i + 1) % input.len();
                black_box(nes.run_frame(input.frame(i)))
            })
        });
    }
    group.finish();
}

fn state(c: &mut Criterion) {
    let input = demo_input();
    let demo = bundled_roms().into_iter().find(|(n, _)| n == "demo").expect("demo ROM").1;
    let nes = warmed(&demo, &input);
    c.bench_function("state_hash", |b| b.iter(|| black_box(nes.state_hash())));
    c.bench_function("section_digests", |b| b.iter(|| black_box(nes.section_digests())));
    let mut buffer = Vec::with_capacity(nes.snapshot_len());
    c.bench_function("save_state", |b| b.iter(|| nes.save_state(black_box(&mut buffer))));
    nes.save_state(&mut buffer);
    let mut target = warmed(&demo, &input);
    target.run_frame(FrameInput::default());
    c.bench_function("load_state", |b| b.iter(|| target.load_state(black_box(&buffer)).unwrap()));
}

criterion_group!(benches, frame_step, state);
criterion_main!(benches);
