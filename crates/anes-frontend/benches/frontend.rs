//! The frontend path: a frame with audio, the picture in each pixel format, and the whole path a
//! frontend runs every frame (frame + RGBA conversion + audio). `cargo bench -p anes-frontend`;
//! quick mode for CI: `cargo bench -p anes-frontend -- --warm-up-time 0.3 --measurement-time 1`.
//! The last line printed is the conversion's share of a frame (target: under 5%).

use std::hint::black_box;
use std::time::Instant;

use anes_frontend::anes_core::movie::InputStream;
use anes_frontend::{Console, Overscan, PixelFormat};
use criterion::{Criterion, criterion_group, criterion_main};

fn repo_file(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The demo after 120 frames of its input stream (past the boot screens), and the stream.
fn warmed() -> (Console, InputStream) {
    let input = InputStream::from_bytes(&repo_file("roms/demo/demo.input")).unwrap();
    let mut console = Console::new(&repo_file("roms/demo/demo.nes")).unwrap();
    for i in 0..120 {
        console.run_frame(input.frame(i));
    }
    (console, input)
}

fn frontend(c: &mut Criterion) {
    let (mut console, input) = warmed();
    let mut frame = 120;
    let mut group = c.benchmark_group("frontend");
    group.bench_function("frame_with_audio", |b| {
        b.iter(|| {
            frame = (frame + 1) % input.len();
            console.run_frame(input.frame(frame));
            black_box(console.audio().len())
        })
    });
    let mut rgba = vec![0u8; 256 * 240 * 4];
    group.bench_function("frame_rgba_audio", |b| {
        b.iter(|| {
            frame = (frame + 1) % input.len();
            console.run_frame(input.frame(frame));
            console.write_picture(PixelFormat::Rgba8888, Overscan::NONE, &mut rgba).unwrap();
            black_box(rgba[0]);
            black_box(console.audio().len())
        })
    });
    for format in [PixelFormat::Rgba8888, PixelFormat::Xrgb8888, PixelFormat::Rgb565] {
        let mut out = vec![0u8; 256 * 240 * 4];
        group.bench_function(format!("picture_{format:?}").to_lowercase(), |b| {
            b.iter(|| {
                console.write_picture(format, Overscan::NONE, &mut out).unwrap();
                black_box(&out);
            })
        });
    }
    let mut silent = console.clone();
    silent.set_audio_rate(None).unwrap();
    group.bench_function("frame_without_audio", |b| {
        b.iter(|| {
            frame = (frame + 1) % input.len();
            silent.run_frame(input.frame(frame));
        })
    });
    group.finish();

    // The acceptance figure, measured directly: conversion time over frame time, same machine,
    // interleaved so load on the machine hits both alike.
    let (mut frame_total, mut convert_total) = (0.0, 0.0);
    for _ in 0..300 {
        frame = (frame + 1) % input.len();
        let start = Instant::now();
        console.run_frame(input.frame(frame));
        let ran = Instant::now();
        console.write_picture(PixelFormat::Rgba8888, Overscan::NONE, &mut rgba).unwrap();
        let converted = Instant::now();
        black_box(&rgba);
        frame_total += (ran - start).as_secs_f64();
        convert_total += (converted - ran).as_secs_f64();
    }
    println!(
        "frontend: RGBA conversion {:.1} us = {:.2}% of a frame with audio ({:.1} us), 300 frames of the demo",
        convert_total / 300.0 * 1e6,
        convert_total / frame_total * 100.0,
        frame_total / 300.0 * 1e6
    );
}

criterion_group!(benches, frontend);
criterion_main!(benches);
