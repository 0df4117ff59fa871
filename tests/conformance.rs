//! The conformance baseline (tests/conformance-baseline.txt) through the library: every ROM listed
//! there must pass. Needs the ROMs in `../shared/conformance` (or `ANES_CONFORMANCE_DIR`); without
//! them a bare `cargo test` says why it skipped, and under CI (`CI` set) the test fails.

mod support;

use anes::conformance::{Baseline, Manifest, default_jobs, run_roms};

#[test]
fn baseline_roms_pass() {
    let Some(dir) = support::conformance_folder("baseline_roms_pass") else { return };
    let manifest_path = dir.join("manifest.toml");
    let manifest = Manifest::load(&manifest_path).unwrap_or_else(|err| panic!("{err}"));
    let baseline_path = support::repo_root().join("tests/conformance-baseline.txt");
    let baseline = Baseline::load(&baseline_path).unwrap_or_else(|err| panic!("{err}"));
    baseline.check_against(&manifest).unwrap_or_else(|err| panic!("{err}"));

    let roms: Vec<_> = manifest.roms.iter().filter(|rom| baseline.requires(&rom.path)).collect();
    let whole = roms.iter().filter(|rom| baseline.contains(&rom.path)).count();
    assert_eq!(whole, baseline.roms.len(), "a ROM is listed twice in the baseline");
    let results = run_roms(&roms, default_jobs(), &|_| {});
    for result in &results {
        eprintln!("{:<7} {:>6} frames  {}", result.status, result.frames, result.path);
    }
    eprintln!("ran {} baseline ROMs from {}", results.len(), manifest_path.display());
    let report = baseline.compare(&results);
    let regressed: Vec<String> =
        report.regressed.iter().map(|r| format!("{} is {}: {}", r.path, r.status, r.text)).collect();
    assert!(regressed.is_empty(), "baseline ROMs or tests that no longer pass:\n{}", regressed.join("\n"));
    assert!(report.not_run.is_empty(), "baseline ROMs not run: {:?}", report.not_run);
}
