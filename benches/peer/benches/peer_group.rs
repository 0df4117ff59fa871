//! anes against tetanes-core and Nestopia, the same ROMs for the same number of frames, in one run.
//!
//! All run headless without input. anes and tetanes-core run without audio output; Nestopia's
//! libretro core synthesizes 48 kHz audio every frame (it has no switch for it), which the host
//! drops. All render pixels (anes's PPU always writes its frame buffer; the libretro host copies
//! Nestopia's picture once per frame, as a frontend would). Each sample runs 60 frames from a
//! machine warmed up by 60 frames. After criterion's own output, the ratios of the medians are
//! printed per ROM (`tetanes / anes` and `nestopia / anes`: above 1 means anes is faster).
//!
//! Nestopia is Debian's `libretro-nestopia` (`bash benches/peer/install-nestopia.sh`, or
//! `ANES_NESTOPIA_CORE=/path/to/nestopia_libretro.so`); without it the bench says so and compares
//! anes with tetanes-core alone.
//!
//! `cargo bench --manifest-path benches/peer/Cargo.toml` (quick: append `-- --warm-up-time 0.5
//! --measurement-time 2`).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use anes_core::movie::FrameInput;
use anes_core::{Cartridge, Nes, NesConfig};
use anes_peer_bench::libretro::LibretroHost;
use anes_peer_bench::nestopia;
use criterion::Criterion;
use tetanes_core::control_deck::{Config, ControlDeck, HeadlessMode};

const FRAMES_PER_SAMPLE: usize = 60;

fn roms() -> Vec<(String, Vec<u8>)> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut list: Vec<PathBuf> =
        vec![repo.join("roms/demo/demo.nes"), repo.join("roms/stress/dma_collide.nes")];
    let shared = repo.join("../shared/conformance/roms");
    for rel in [
        "other/nestest.nes",
        "instr_test-v5/all_instrs.nes",
        "sprite_hit_tests_2005.10.05/09.timing_basics.nes",
    ] {
        if shared.join(rel).is_file() {
            list.push(shared.join(rel));
        }
    }
    list.into_iter()
        .map(|p| (name_of(&p), std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))))
        .collect()
}

fn name_of(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().replace(['.', ' '], "_")
}

fn anes_machine(rom: &[u8]) -> Nes {
    let mut nes = Nes::new(Cartridge::from_ines(rom).unwrap(), NesConfig::default());
    for _ in 0..60 {
        nes.run_frame(FrameInput::default());
    }
    nes
}

fn tetanes_machine(name: &str, rom: &[u8]) -> ControlDeck {
    let config = Config::default().with_headless_mode(HeadlessMode::NO_AUDIO);
    let mut deck = ControlDeck::with_config(config);
    deck.load_rom(name, &mut std::io::Cursor::new(rom)).expect("tetanes loads the ROM");
    for _ in 0..60 {
        let _ = deck.clock_frame().expect("tetanes runs");
    }
    deck
}

fn nestopia_machine(core: &Path, rom: &[u8]) -> LibretroHost {
    let mut host = LibretroHost::new(core, rom, &nestopia::config()).expect("Nestopia loads the ROM");
    for _ in 0..60 {
        host.run_frame();
    }
    host
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let roms = roms();
    let nestopia_core = nestopia::core_path();
    if let Err(err) = &nestopia_core {
        println!("peer group: Nestopia is not run: {err}");
    }
    for (name, rom) in &roms {
        let mut group = criterion.benchmark_group(format!("peer/{name}"));
        let mut nes = anes_machine(rom);
        group.bench_function("anes", |b| {
            b.iter(|| {
                for _ in 0..FRAMES_PER_SAMPLE {
                    black_box(nes.run_frame(FrameInput::default()));
                }
            })
        });
        let mut deck = tetanes_machine(name, rom);
        group.bench_function("tetanes", |b| {
            b.iter(|| {
                for _ in 0..FRAMES_PER_SAMPLE {
                    let _ = black_box(deck.clock_frame().unwrap());
                }
            })
        });
        if let Ok(core) = &nestopia_core {
            // One libretro host per process: this ROM's is dropped before the next ROM's loads.
            let mut host = nestopia_machine(core, rom);
            group.bench_function("nestopia", |b| {
                b.iter(|| {
                    for _ in 0..FRAMES_PER_SAMPLE {
                        host.run_frame();
                    }
                })
            });
        }
        group.finish();
    }
    criterion.final_summary();
    print_ratios(&roms, nestopia_core.is_ok());
}

/// Reads criterion's median estimates back and prints `tetanes / anes` and `nestopia / anes` per ROM.
fn print_ratios(roms: &[(String, Vec<u8>)], nestopia_ran: bool) {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    let median = |group: &str, function: &str| -> Option<f64> {
        let path = target.join("criterion").join(group).join(function).join("new/estimates.json");
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        json["median"]["point_estimate"].as_f64()
    };
    println!(
        "\npeer group: median time per {FRAMES_PER_SAMPLE} frames, ratio peer / anes (> 1: anes faster)"
    );
    for (name, _) in roms {
        let group = format!("peer_{name}");
        let Some(anes) = median(&group, "anes") else {
            println!("  {name:<24} (no estimates found under {})", target.display());
            continue;
        };
        let mut line = format!("  {name:<24} anes {:>8.2} ms", anes / 1e6);
        let peers = [("tetanes", true), ("nestopia", nestopia_ran)];
        for (peer, ran) in peers {
            match median(&group, peer).filter(|_| ran) {
                Some(time) => line += &format!("  {peer} {:>8.2} ms ratio {:>5.2}", time / 1e6, time / anes),
                None => line += &format!("  {peer} {:>8} {:>11}", "not run", ""),
            }
        }
        println!("{line}");
    }
}
