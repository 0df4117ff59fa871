//! Shared helpers for the workspace's integration tests: which ROMs to run and small utilities.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use anes::nes::movie::{FrameInput, InputStream};
use anes::nes::{Cartridge, Nes, NesConfig};

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the conformance ROMs are looked for: `ANES_CONFORMANCE_DIR` when set, else
/// `../shared/conformance` beside the checkout.
pub fn conformance_dir() -> PathBuf {
    std::env::var_os("ANES_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/conformance"))
}

/// The conformance folder (the one holding `manifest.toml` and `roms/`) for `test`, or `None` when
/// it is missing. A missing folder is skipped with a printed line on a bare `cargo test` (a fresh
/// clone has no ROMs), and fails the test under CI, where a skipped check would pass unseen.
pub fn conformance_folder(test: &str) -> Option<PathBuf> {
    let dir = conformance_dir();
    if dir.join("manifest.toml").is_file() {
        return Some(dir);
    }
    let looked_at = match std::env::var_os("ANES_CONFORMANCE_DIR") {
        Some(_) => format!("ANES_CONFORMANCE_DIR={}", dir.display()),
        None => format!("../shared/conformance beside the checkout ({})", dir.display()),
    };
    let why = format!(
        "{test}: no conformance folder: {looked_at} has no manifest.toml (put the test ROMs there or set \
         ANES_CONFORMANCE_DIR to the folder that holds them)"
    );
    assert!(!anes_fs::ci_is_set(), "{why}; CI is set, so a missing folder is an error, not a skip");
    eprintln!("skipped {why}");
    None
}

/// The conformance ROMs (`roms/` of [`conformance_folder`]), with the same skip-or-fail rule.
pub fn shared_roms(test: &str) -> Option<PathBuf> {
    conformance_folder(test).map(|dir| dir.join("roms"))
}

/// The conformance ROMs at `paths` (relative to its `roms/`), named by those paths; none when the
/// folder is missing and `test` may skip (see [`conformance_folder`]). A listed ROM missing from a
/// present folder is an error.
pub fn conformance_roms(test: &str, paths: &[&str]) -> Vec<(String, Vec<u8>)> {
    let Some(dir) = shared_roms(test) else { return Vec::new() };
    paths
        .iter()
        .map(|rel| {
            let path = dir.join(rel);
            let bytes = std::fs::read(&path).unwrap_or_else(|err| {
                panic!("{}: {err} (the conformance folder is incomplete)", path.display())
            });
            (rel.to_string(), bytes)
        })
        .collect()
}

/// ROMs for determinism tests: every bundled ROM under roms/, plus a varied selection of the shared
/// conformance ROMs when the conformance folder is present (see [`conformance_folder`]).
/// Runs `check(index, name, rom)` on every ROM, shared out among the machine's cores. `cargo test`
/// runs test binaries one at a time, so a test that walks many ROMs one by one keeps one core busy
/// and the other idle. A panic in any check fails the test; its message names the ROM as the check's
/// own assertions do.
pub fn for_each_rom_in_parallel(roms: &[(String, Vec<u8>)], check: impl Fn(usize, &str, &[u8]) + Sync) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, roms.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some((name, rom)) = roms.get(index) else { break };
                    check(index, name, rom);
                }
            });
        }
    });
}

/// True for a ROM of ours that checks a board (`roms/<family>/NAME.nes`) or one behaviour
/// (`roms/secret/`) in its first frames and then idles; false for the demo, the stress ROMs, the region
/// ROM and the conformance ROMs.
pub fn is_board_check_rom(name: &str) -> bool {
    let mut parts = name.split(['/', '\\']);
    parts.next() == Some("roms")
        && parts.next().is_some_and(|family| !matches!(family, "demo" | "stress" | "regions"))
}

pub fn determinism_roms() -> Vec<(String, Vec<u8>)> {
    let mut roms = Vec::new();
    collect_nes_files(&repo_root().join("roms"), &mut roms);
    assert!(
        !roms.is_empty(),
        "no .nes files under roms/: the bundled ROMs are committed; is the checkout complete?"
    );
    roms.extend(conformance_roms(
        "determinism ROMs from the conformance folder",
        &[
            "other/nestest.nes",
            "instr_test-v5/rom_singles/03-immediate.nes",
            "cpu_interrupts_v2/rom_singles/1-cli_latency.nes",
            "ppu_vbl_nmi/rom_singles/05-nmi_timing.nes",
            "sprite_hit_tests_2005.10.05/09.timing_basics.nes",
            "apu_test/rom_singles/7-dmc_basics.nes",
            "instr_test-v5/all_instrs.nes",
            "mmc3_test_2/rom_singles/4-scanline_timing.nes",
        ],
    ));
    // Every mapper these ROMs use is supported: one that no longer loads is a regression, not a skip.
    for (name, bytes) in &roms {
        if let Err(err) = Cartridge::from_ines(bytes) {
            panic!("{name}: {err}");
        }
    }
    roms
}

fn collect_nes_files(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
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

/// An iNES 1.0 image: `prg` (whole 16 KiB banks), then `chr` (whole 8 KiB banks), header byte 6
/// `flags_6` (mapper low nibble, mirroring).
pub fn ines_image(flags_6: u8, prg: &[u8], chr: &[u8]) -> Vec<u8> {
    let banks = |bytes: &[u8], size: usize| u8::try_from(bytes.len() / size).expect("fewer than 256 banks");
    let mut rom = vec![b'N', b'E', b'S', 0x1A, banks(prg, 0x4000), banks(chr, 0x2000), flags_6, 0];
    rom.resize(16, 0);
    rom.extend_from_slice(prg);
    rom.extend_from_slice(chr);
    rom
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

/// Where our check ROMs (`roms/mmc6`, `roms/vrc`, `roms/discrete`) report in work RAM: a status byte
/// ($80 while running, then 0 or a failure code), the number of checks, and per check its result code
/// (0 passed, $FF not run) and the value it read.
pub const CHECK_STATUS: u16 = 0x0700;
/// The number of checks the ROM ran.
pub const CHECK_COUNT: u16 = 0x0701;
/// Each check's result code.
pub const CHECK_CODE: u16 = 0x0710;
/// Each check's value read.
pub const CHECK_SEEN: u16 = 0x0740;

/// Runs frames until a check ROM has reported (it does within its first frames).
pub fn run_checks(nes: &mut Nes) {
    for _ in 0..60 {
        nes.run_frame(FrameInput::default());
        if nes.peek(CHECK_STATUS) != 0x80 && nes.peek(CHECK_COUNT) != 0 {
            return;
        }
    }
    panic!("the ROM did not report within 60 frames (status ${:02X})", nes.peek(CHECK_STATUS));
}

/// The checks that did not pass, as (index, code, value read); `checks` names them in the ROM's order.
pub fn failed_checks(nes: &Nes, checks: &[&str]) -> Vec<(usize, u8, u8)> {
    assert_eq!(usize::from(nes.peek(CHECK_COUNT)), checks.len(), "the ROM's number of checks");
    (0..checks.len())
        .map(|i| (i, nes.peek(CHECK_CODE + i as u16), nes.peek(CHECK_SEEN + i as u16)))
        .filter(|&(_, code, _)| code != 0)
        .collect()
}

/// Failed checks as lines for an assertion message.
pub fn describe_checks(failed: &[(usize, u8, u8)], checks: &[&str]) -> String {
    failed
        .iter()
        .map(|&(i, code, seen)| {
            let what = if code == 0xFF { "not run".to_owned() } else { format!("read ${seen:02X}") };
            format!("\n  {i}: {} ({what})", checks[i])
        })
        .collect()
}
