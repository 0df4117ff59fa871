//! Golden frame records: every bundled ROM runs the demo's bundled 5,000-frame input stream, and each
//! FrameRecord must equal the committed one in `tests/golden/<rom>.records`; the demo also runs on a
//! PAL and a Dendy console, against `tests/golden/demo.pal.records` and `demo.dendy.records`. Every
//! other ROM of ours (the board, region and shrinker ROMs under `roms/`) runs the stream's first
//! 300 frames against `tests/golden/boards/<folder>-<rom>.records`: their checks end within the
//! first frames (the region ROMs' within 200), and what runs after them (scanline IRQs, bank
//! switches, sound) within 300. The region ROMs (`roms/regions/`) also run on a PAL and a Dendy
//! console, against `boards/regions-<rom>.pal.records` and `.dendy.records`.
//!
//! The golden files change only through one command, and the diff is reviewed in the commit. Records
//! that change are a change of emulated behaviour, so blessing them requires a bumped
//! `anes_core::EMULATION_EPOCH`, recorded in `tests/golden/EPOCH`:
//!
//! ```text
//! ANES_BLESS=1 cargo test --release --test golden
//! ```

mod support;

use std::fmt::Write as _;
use std::path::PathBuf;

use anes::nes::movie::InputStream;
use anes::nes::{Cartridge, FrameRecord, Nes, NesConfig, Region};
use support::repo_root;

const FRAMES: usize = 5_000;
/// Frames of a board ROM's run.
const BOARD_FRAMES: usize = 300;
/// The folders of the bundled ROMs, whose runs are the whole stream.
const BUNDLED: [&str; 3] = ["roms/demo", "roms/stress", "roms/mmc6"];

/// One golden run: a ROM on a console of a region (`None`: the header's), for `frames` frames.
#[derive(Clone)]
struct Run {
    rom: PathBuf,
    region: Option<Region>,
    frames: usize,
}

impl Run {
    fn name(&self) -> String {
        match self.region {
            None => self.rom.display().to_string(),
            Some(region) => format!("{} ({region})", self.rom.display()),
        }
    }
}

fn runs() -> Vec<Run> {
    let mut runs: Vec<Run> =
        bundled_roms().into_iter().map(|rom| Run { rom, region: None, frames: FRAMES }).collect();
    let demo = repo_root().join("roms/demo/demo.nes");
    for region in [Region::Pal, Region::Dendy] {
        runs.push(Run { rom: demo.clone(), region: Some(region), frames: FRAMES });
    }
    let boards = board_roms();
    // The region ROMs also run on PAL and Dendy consoles (their header says nothing: NTSC).
    let regions_dir = repo_root().join("roms/regions");
    let region_roms: Vec<PathBuf> =
        boards.iter().filter(|rom| rom.parent() == Some(regions_dir.as_path())).cloned().collect();
    runs.extend(boards.into_iter().map(|rom| Run { rom, region: None, frames: BOARD_FRAMES }));
    for region in [Region::Pal, Region::Dendy] {
        runs.extend(region_roms.iter().map(|rom| Run {
            rom: rom.clone(),
            region: Some(region),
            frames: BOARD_FRAMES,
        }));
    }
    runs
}

fn nes_files_in(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .expect("roms/ is part of the repository")
        .map(|e| e.expect("readable roms/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "nes"))
        .collect()
}

fn bundled_roms() -> Vec<PathBuf> {
    let mut roms: Vec<PathBuf> =
        BUNDLED.iter().flat_map(|dir| nes_files_in(&repo_root().join(dir))).collect();
    roms.sort();
    roms
}

/// Every `.nes` in the other folders of `roms/`.
fn board_roms() -> Vec<PathBuf> {
    let root = repo_root();
    let mut roms: Vec<PathBuf> = std::fs::read_dir(root.join("roms"))
        .expect("roms/ is part of the repository")
        .map(|e| e.expect("readable roms/ entry").path())
        .filter(|dir| dir.is_dir() && !BUNDLED.iter().any(|b| root.join(b) == *dir))
        .flat_map(|dir| nes_files_in(&dir))
        .collect();
    roms.sort();
    roms
}

fn format_record(r: &FrameRecord, out: &mut String) {
    let _ = writeln!(out, "{} {} {} {} {}", r.frame, r.cpu_cycle, r.ppu_scanline, r.ppu_dot, r.state_hash);
}

fn golden_path(run: &Run) -> PathBuf {
    let stem = run.rom.file_stem().expect("ROM file name").to_string_lossy();
    if run.frames == BOARD_FRAMES {
        let folder =
            run.rom.parent().and_then(|p| p.file_name()).expect("a folder of roms/").to_string_lossy();
        let name = match run.region {
            None => format!("{folder}-{stem}.records"),
            Some(region) => format!("{folder}-{stem}.{region}.records"),
        };
        return repo_root().join("tests/golden/boards").join(name);
    }
    let name = match run.region {
        None => format!("{stem}.records"),
        Some(region) => format!("{stem}.{region}.records"),
    };
    repo_root().join("tests/golden").join(name)
}

fn run(run: &Run, input: &InputStream) -> String {
    let cart = Cartridge::from_ines(&std::fs::read(&run.rom).expect("read bundled ROM")).expect("ROM loads");
    let mut nes = Nes::with_region(cart, NesConfig::default(), run.region);
    let mut out = String::with_capacity(run.frames * 96);
    for i in 0..run.frames {
        format_record(&nes.run_frame(input.frame(i)), &mut out);
    }
    out
}

#[test]
fn bundled_roms_match_golden_records() {
    let input = InputStream::from_bytes(&std::fs::read(repo_root().join("roms/demo/demo.input")).unwrap())
        .expect("bundled input stream is valid");
    assert_eq!(input.len(), FRAMES);
    let bless = std::env::var_os("ANES_BLESS").is_some();
    let runs = runs();
    assert!(!runs.is_empty());
    let results: Vec<(Run, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = runs
            .iter()
            .map(|one| {
                let input = &input;
                scope.spawn(move || (one.clone(), run(one, input)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("run thread")).collect()
    });
    let epoch_path = repo_root().join("tests/golden/EPOCH");
    let blessed_epoch: u32 = std::fs::read_to_string(&epoch_path)
        .expect("tests/golden/EPOCH holds the emulation epoch the records were blessed under")
        .trim()
        .parse()
        .expect("tests/golden/EPOCH is a number");
    let mut failures = Vec::new();
    if bless {
        // Records that change mean emulated behaviour changed: that is a new emulation epoch, so the
        // canary can tell an expected change from a regression. A ROM without records yet (a new
        // bundled ROM) changes nothing.
        let changed: Vec<String> = results
            .iter()
            .filter(|(rom, actual)| {
                std::fs::read_to_string(golden_path(rom)).is_ok_and(|golden| golden != *actual)
            })
            .map(|(rom, _)| rom.name())
            .collect();
        assert!(
            changed.is_empty() || anes::nes::EMULATION_EPOCH > blessed_epoch,
            "blessing changes the records of {changed:?}: bump anes_core::EMULATION_EPOCH (now {}) in the same commit",
            anes::nes::EMULATION_EPOCH
        );
        std::fs::write(&epoch_path, format!("{}\n", anes::nes::EMULATION_EPOCH)).expect("write EPOCH");
    } else {
        assert_eq!(
            anes::nes::EMULATION_EPOCH,
            blessed_epoch,
            "the emulation epoch changed but the golden records were not re-blessed under it (ANES_BLESS=1)"
        );
    }
    for (rom, actual) in results {
        let path = golden_path(&rom);
        if bless {
            std::fs::write(&path, &actual).expect("write golden file");
            eprintln!("blessed {}", path.display());
            continue;
        }
        let Ok(expected) = std::fs::read_to_string(&path) else {
            failures.push(format!("{}: no golden file {} (bless it)", rom.name(), path.display()));
            continue;
        };
        if let Some((line, (want, got))) =
            expected.lines().zip(actual.lines()).enumerate().find(|(_, (want, got))| want != got)
        {
            failures.push(format!(
                "{}: first differing frame is {} (line {}):\n  golden: {want}\n  actual: {got}",
                rom.name(),
                line + 1,
                line + 1
            ));
        } else if expected.lines().count() != actual.lines().count() {
            failures.push(format!("{}: golden file has {} records", rom.name(), expected.lines().count()));
        }
    }
    assert!(failures.is_empty(), "golden records differ:\n{}", failures.join("\n"));
}
