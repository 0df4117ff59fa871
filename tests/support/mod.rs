//! Shared helpers for the workspace's integration tests: which ROMs to run and small utilities.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use anes::core::movie::{FrameInput, InputStream};
use anes::core::{Cartridge, Nes, NesConfig};

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared conformance ROM folder, when present beside the checkout.
pub fn shared_roms() -> Option<PathBuf> {
    let dir = repo_root().join("../shared/conformance/roms");
    dir.is_dir().then_some(dir)
}

/// ROMs for determinism tests: every bundled ROM under roms/, plus a varied selection of the shared
/// conformance ROMs when ../shared is present. Prints what was skipped and why.
pub fn determinism_roms() -> Vec<(String, Vec<u8>)> {
    let mut roms = Vec::new();
    collect_nes_files(&repo_root().join("roms"), &mut roms);
    match shared_roms() {
        Some(dir) => {
            for rel in [
                "other/nestest.nes",
                "instr_test-v5/rom_singles/03-immediate.nes",
                "cpu_interrupts_v2/rom_singles/1-cli_latency.nes",
                "ppu_vbl_nmi/rom_singles/05-nmi_timing.nes",
                "sprite_hit_tests_2005.10.05/09.timing_basics.nes",
                "apu_test/rom_singles/7-dmc_basics.nes",
                "instr_test-v5/all_instrs.nes",
                "mmc3_test_2/rom_singles/4-scanline_timing.nes",
            ] {
                if let Ok(bytes) = std::fs::read(dir.join(rel)) {
                    roms.push((rel.to_string(), bytes));
                }
            }
        }
        None => eprintln!("note: ../shared/conformance not present: determinism tests use bundled ROMs only"),
    }
    // Keep only ROMs this build can load (a mapper still being built is not a determinism failure).
    roms.retain(|(name, bytes)| match Cartridge::from_ines(bytes) {
        Ok(_) => true,
        Err(e) => {
            eprintln!("skipped {name}: {e}");
            false
        }
    });
    assert!(!roms.is_empty(), "no ROMs at all: roms/ holds the bundled ROMs; is the checkout complete?");
    roms
}

fn collect_nes_files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_nes_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "nes") {
            let name = path.strip_prefix(repo_root()).unwrap_or(&path).display().to_string();
            out.push((name, std::fs::read(&path).expect("read bundled ROM")));
        }
    }
}

/// A machine running `rom` with the default config.
pub fn boot(rom: &[u8]) -> Nes {
    Nes::new(Cartridge::from_ines(rom).expect("ROM loads"), NesConfig::default())
}

/// splitmix64 step: deterministic pseudo-random numbers for tests.
pub fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A random input stream that holds each button state for a few frames, like a person would.
pub fn random_input(seed: u64, frames: usize) -> InputStream {
    let mut rng = seed;
    let mut stream = InputStream::new();
    let mut current = FrameInput::default();
    for _ in 0..frames {
        if next_random(&mut rng) % 4 == 0 {
            let r = next_random(&mut rng);
            current = FrameInput::buttons(r as u8, (r >> 8) as u8);
        }
        stream.push(current);
    }
    stream
}
