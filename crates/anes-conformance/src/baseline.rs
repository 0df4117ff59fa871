//! The baseline: ROMs known to pass, which must keep passing. One ROM path per line, as written in
//! the manifest; blank lines and `#` comments are ignored.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::limited_read::{MAX_BASELINE_LEN, read_text_limited};
use crate::manifest::Manifest;
use crate::report::{RomResult, Status};

/// Why a baseline could not be used. Every message names the baseline file.
#[derive(Debug, Error)]
pub enum BaselineError {
    /// The file could not be read.
    #[error("{}: cannot read the baseline", path.display())]
    Read {
        /// The baseline file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A line names a ROM the manifest does not list.
    #[error("{}: line {line}: ROM {rom:?} is not in the manifest {}", path.display(), manifest.display())]
    NotInManifest {
        /// The baseline file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The ROM path as written.
        rom: String,
        /// The manifest it was checked against.
        manifest: PathBuf,
    },
}

/// ROMs that must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// The file it was read from.
    pub path: PathBuf,
    /// (1-based line, ROM path as written in the manifest), in file order.
    pub roms: Vec<(usize, String)>,
}

/// How a run compares with a baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineReport {
    /// Baseline ROMs that ran and did not pass.
    pub regressed: Vec<RomResult>,
    /// Baseline ROMs that were not run (filtered out).
    pub not_run: Vec<String>,
    /// ROMs that passed but are not in the baseline yet: candidates to add.
    pub new_passes: Vec<String>,
}

impl Baseline {
    /// Reads the baseline at `path`.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = read_text_limited(path, MAX_BASELINE_LEN, "baseline")
            .map_err(|source| BaselineError::Read { path: path.to_owned(), source })?;
        Ok(Baseline::parse(&text, path))
    }

    /// Parses baseline `text` as if read from `path`.
    pub fn parse(text: &str, path: &Path) -> Baseline {
        let roms = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line.split('#').next().unwrap_or("").trim()))
            .filter(|(_, rom)| !rom.is_empty())
            .map(|(line, rom)| (line, rom.to_owned()))
            .collect();
        Baseline { path: path.to_owned(), roms }
    }

    /// Checks that every baseline ROM is listed in `manifest`.
    pub fn check_against(&self, manifest: &Manifest) -> Result<(), BaselineError> {
        match self.roms.iter().find(|(_, rom)| manifest.rom(rom).is_none()) {
            Some((line, rom)) => Err(BaselineError::NotInManifest {
                path: self.path.clone(),
                line: *line,
                rom: rom.clone(),
                manifest: manifest.path.clone(),
            }),
            None => Ok(()),
        }
    }

    /// True when `rom` (as written in the manifest) is in the baseline.
    pub fn contains(&self, rom: &str) -> bool {
        self.roms.iter().any(|(_, listed)| listed == rom)
    }

    /// Compares `results` with the baseline.
    pub fn compare(&self, results: &[RomResult]) -> BaselineReport {
        let mut report = BaselineReport::default();
        for (_, rom) in &self.roms {
            match results.iter().find(|result| &result.path == rom) {
                Some(result) if result.status != Status::Pass => report.regressed.push(result.clone()),
                Some(_) => {}
                None => report.not_run.push(rom.clone()),
            }
        }
        report.new_passes = results
            .iter()
            .filter(|result| result.status == Status::Pass && !self.contains(&result.path))
            .map(|result| result.path.clone())
            .collect();
        report
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::manifest::Expected;

    fn result(path: &str, status: Status) -> RomResult {
        RomResult {
            path: path.into(),
            suite: String::new(),
            protocol: String::new(),
            expected: Expected::Pass,
            status,
            code: None,
            text: String::new(),
            frames: 0,
            wall_time: Duration::ZERO,
            subtests: Vec::new(),
            start_points: Vec::new(),
        }
    }

    #[test]
    fn parses_paths_and_skips_comments() {
        let baseline = Baseline::parse("# header\n\nroms/a.nes  # why\n  roms/b.nes\n", Path::new("b.txt"));
        assert_eq!(baseline.roms, [(3, "roms/a.nes".to_owned()), (4, "roms/b.nes".to_owned())]);
    }

    #[test]
    fn reports_regressions_missing_runs_and_new_passes() {
        let baseline = Baseline::parse("a\nb\nc\n", Path::new("b.txt"));
        let results = [result("a", Status::Pass), result("b", Status::Timeout), result("d", Status::Pass)];
        let report = baseline.compare(&results);
        assert_eq!(report.regressed.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(report.not_run, ["c"]);
        assert_eq!(report.new_passes, ["d"]);
    }

    #[test]
    fn rom_missing_from_the_manifest_is_named_with_its_line() {
        let manifest = Manifest { path: "m.toml".into(), roms: Vec::new() };
        let baseline = Baseline::parse("# c\nroms/x.nes\n", Path::new("b.txt"));
        let err = baseline.check_against(&manifest).unwrap_err();
        assert_eq!(err.to_string(), "b.txt: line 2: ROM \"roms/x.nes\" is not in the manifest m.toml");
    }
}
