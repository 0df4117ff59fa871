//! nestest in automation mode against its golden log (needs ../shared/conformance; skipped without it,
//! except under CI, where that fails).

use std::path::PathBuf;

use anes_core::harness::Harness;
use anes_core::{Cartridge, Nes, NesConfig};

/// `../shared/conformance` beside the repository (the workspace root is two levels above this crate);
/// `ANES_CONFORMANCE_DIR` overrides it, e.g. for git worktrees elsewhere.
fn conformance_dir() -> PathBuf {
    let base = std::env::var_os("ANES_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
    base.join("roms/other")
}

#[test]
fn nestest_matches_golden_log() {
    let dir = conformance_dir();
    let (Ok(rom), Ok(log)) =
        (std::fs::read(dir.join("nestest.nes")), std::fs::read_to_string(dir.join("nestest.log")))
    else {
        // A fresh clone may lack the ROMs; under CI their absence fails rather than passes unseen.
        assert!(
            !anes_fs::ci_is_set(),
            "nestest_matches_golden_log: {} has no nestest.nes/.log and CI is set",
            dir.display()
        );
        eprintln!("skipped nestest_matches_golden_log: {} not present", dir.display());
        return;
    };
    let config = NesConfig { cpu_ppu_alignment: Some(0), ..NesConfig::default() };
    let mut nes = Nes::new(Cartridge::from_ines(&rom).unwrap(), config);
    nes.set_pc(0xC000);
    let mut line = String::new();
    for (i, expected) in log.lines().enumerate() {
        line.clear();
        anes_core::cpu::trace_line(&nes, &mut line);
        assert_eq!(line, expected, "line {} differs", i + 1);
        nes.step_instruction();
    }
    assert_eq!((nes.peek(2), nes.peek(3)), (0, 0), "nestest reports failure codes in $02/$03");
}
