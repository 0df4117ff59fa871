//! The baseline: ROMs known to pass, which must keep passing. One ROM path per line, as written in
//! the manifest; blank lines and `#` comments are ignored. For a ROM that holds many tests and does
//! not pass as a whole yet (AccuracyCoin), a line `<path> tests <list>` names the tests that must keep
//! passing (at every start point), the list being numbers and ranges: `1-81,83,85-90`.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::limits::MAX_BASELINE_LEN;
use crate::manifest::Manifest;
use crate::report::{RomResult, Status};

/// Why a baseline could not be used. Every message names the baseline file.
#[derive(Debug, Error)]
pub enum BaselineError {
    /// The file could not be read (missing, not a regular file, larger than [`MAX_BASELINE_LEN`], not
    /// UTF-8 text); the message names it.
    #[error(transparent)]
    Read(anes_fs::ReadError),
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
    /// A `tests` line whose list is not numbers and ranges.
    #[error("{}: line {line}: {problem}", path.display())]
    BadTests {
        /// The baseline file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        problem: String,
    },
}

/// A `<path> tests <list>` line: tests of one ROM that must keep passing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaselineTests {
    /// 1-based line.
    pub line: usize,
    /// The ROM path as written in the manifest.
    pub rom: String,
    /// The tests' numbers (`SubTest::index`), ascending.
    pub tests: Vec<u16>,
}

/// ROMs that must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// The file it was read from.
    pub path: PathBuf,
    /// (1-based line, ROM path as written in the manifest), in file order: ROMs that must pass.
    pub roms: Vec<(usize, String)>,
    /// Tests of ROMs that do not pass as a whole yet, which must keep passing.
    pub tests: Vec<BaselineTests>,
}

/// How a run compares with a baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineReport {
    /// Baseline ROMs that ran and did not pass.
    pub regressed: Vec<RomResult>,
    /// Baseline ROMs that were not run (filtered out).
    pub not_run: Vec<String>,
    /// ROMs that passed but are not in the baseline yet, and `<path> tests <list>` for tests that
    /// passed but are not listed yet: candidates to add.
    pub new_passes: Vec<String>,
}

impl Baseline {
    /// Reads the baseline at `path`.
    pub fn load(path: &Path) -> Result<Baseline, BaselineError> {
        let text = anes_fs::read_text_capped(path, MAX_BASELINE_LEN as u64, "baseline")
            .map_err(BaselineError::Read)?;
        Baseline::parse(&text, path)
    }

    /// Parses baseline `text` as if read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Baseline, BaselineError> {
        let mut baseline = Baseline { path: path.to_owned(), roms: Vec::new(), tests: Vec::new() };
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let content = line.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            match content.split_once(char::is_whitespace) {
                Some((rom, rest)) if rest.trim_start().starts_with("tests") => {
                    let list = rest.trim_start()["tests".len()..].trim();
                    let tests = parse_test_list(list).map_err(|problem| BaselineError::BadTests {
                        path: path.to_owned(),
                        line: line_number,
                        problem,
                    })?;
                    baseline.tests.push(BaselineTests { line: line_number, rom: rom.to_owned(), tests });
                }
                _ => baseline.roms.push((line_number, content.to_owned())),
            }
        }
        Ok(baseline)
    }

    /// Checks that every ROM the baseline names is listed in `manifest`.
    pub fn check_against(&self, manifest: &Manifest) -> Result<(), BaselineError> {
        let lines = self
            .roms
            .iter()
            .map(|(line, rom)| (*line, rom))
            .chain(self.tests.iter().map(|t| (t.line, &t.rom)));
        for (line, rom) in lines {
            if manifest.rom(rom).is_none() {
                return Err(BaselineError::NotInManifest {
                    path: self.path.clone(),
                    line,
                    rom: rom.clone(),
                    manifest: manifest.path.clone(),
                });
            }
        }
        Ok(())
    }

    /// True when `rom` (as written in the manifest) is in the baseline as a whole.
    pub fn contains(&self, rom: &str) -> bool {
        self.roms.iter().any(|(_, listed)| listed == rom)
    }

    /// True when the baseline requires something of `rom`: that it passes, or that some of its tests do.
    pub fn requires(&self, rom: &str) -> bool {
        self.contains(rom) || self.tests.iter().any(|t| t.rom == rom)
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
        for entry in &self.tests {
            let Some(result) = results.iter().find(|result| result.path == entry.rom) else {
                report.not_run.push(entry.rom.clone());
                continue;
            };
            let failing: Vec<u16> = entry
                .tests
                .iter()
                .copied()
                .filter(|&index| {
                    !result.subtests.iter().any(|t| t.index == index && t.status == Status::Pass)
                })
                .collect();
            if !failing.is_empty() {
                let mut regressed = result.clone();
                regressed.text =
                    format!("tests {} no longer pass; {}", format_test_list(&failing), result.text);
                report.regressed.push(regressed);
            }
        }
        for result in results {
            if result.status == Status::Pass {
                if !self.contains(&result.path) {
                    report.new_passes.push(result.path.clone());
                }
                continue;
            }
            let listed: Vec<u16> = self
                .tests
                .iter()
                .filter(|t| t.rom == result.path)
                .flat_map(|t| t.tests.iter().copied())
                .collect();
            let new: Vec<u16> = result
                .subtests
                .iter()
                .filter(|t| t.status == Status::Pass && !listed.contains(&t.index))
                .map(|t| t.index)
                .collect();
            if !new.is_empty() {
                report.new_passes.push(format!("{} tests {}", result.path, format_test_list(&new)));
            }
        }
        report
    }
}

/// `1-81,83` as numbers, ascending; ranges are inclusive.
fn parse_test_list(list: &str) -> Result<Vec<u16>, String> {
    let mut tests = Vec::new();
    for item in list.split(',').map(str::trim) {
        let number = |text: &str| {
            text.trim().parse::<u16>().map_err(|_| format!("{item:?} is not a test number or range"))
        };
        let (first, last) = match item.split_once('-') {
            Some((first, last)) => (number(first)?, number(last)?),
            None => (number(item)?, number(item)?),
        };
        if first > last {
            return Err(format!("range {item:?} is backwards"));
        }
        tests.extend(first..=last);
    }
    tests.sort_unstable();
    tests.dedup();
    Ok(tests)
}

/// Ascending numbers written with ranges: `1-81,83`.
pub(crate) fn format_test_list(tests: &[u16]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tests.len() {
        let mut j = i;
        while j + 1 < tests.len() && tests[j + 1] == tests[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { tests[i].to_string() } else { format!("{}-{}", tests[i], tests[j]) });
        i = j + 1;
    }
    parts.join(",")
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
        let baseline =
            Baseline::parse("# header\n\nroms/a.nes  # why\n  roms/b.nes\n", Path::new("b.txt")).unwrap();
        assert_eq!(baseline.roms, [(3, "roms/a.nes".to_owned()), (4, "roms/b.nes".to_owned())]);
        assert!(baseline.tests.is_empty());
    }

    #[test]
    fn parses_test_lists() {
        let baseline = Baseline::parse("roms/ac.nes tests 5, 1-3,9 # partly\n", Path::new("b.txt")).unwrap();
        assert!(baseline.roms.is_empty());
        assert_eq!(
            baseline.tests,
            [BaselineTests { line: 1, rom: "roms/ac.nes".into(), tests: vec![1, 2, 3, 5, 9] }]
        );
        assert!(baseline.requires("roms/ac.nes") && !baseline.contains("roms/ac.nes"));
        assert_eq!(format_test_list(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
        for (bad, problem) in
            [("x tests 1-z", "\"1-z\" is not"), ("x tests 4-2", "backwards"), ("x tests", "\"\" is not")]
        {
            let err = Baseline::parse(bad, Path::new("b.txt")).unwrap_err();
            assert!(
                err.to_string().starts_with("b.txt: line 1: ") && err.to_string().contains(problem),
                "{err}"
            );
        }
    }

    fn subtest(index: u16, status: Status) -> crate::report::SubTest {
        crate::report::SubTest {
            index,
            page: 1,
            name: String::new(),
            status,
            code: None,
            meaning: String::new(),
            failed_at: Vec::new(),
        }
    }

    #[test]
    fn listed_tests_must_keep_passing_and_new_ones_are_offered() {
        let baseline = Baseline::parse("ac tests 1-2\n", Path::new("b.txt")).unwrap();
        let mut ac = result("ac", Status::Fail);
        ac.subtests = vec![
            subtest(1, Status::Pass),
            subtest(2, Status::Pass),
            subtest(3, Status::Pass),
            subtest(4, Status::Fail),
        ];
        let report = baseline.compare(std::slice::from_ref(&ac));
        assert!(report.regressed.is_empty());
        assert_eq!(report.new_passes, ["ac tests 3"]);
        ac.subtests[1].status = Status::Fail;
        let report = baseline.compare(std::slice::from_ref(&ac));
        assert_eq!(report.regressed.len(), 1);
        assert!(
            report.regressed[0].text.starts_with("tests 2 no longer pass; "),
            "{}",
            report.regressed[0].text
        );
        assert_eq!(baseline.compare(&[]).not_run, ["ac"]);
    }

    #[test]
    fn reports_regressions_missing_runs_and_new_passes() {
        let baseline = Baseline::parse("a\nb\nc\n", Path::new("b.txt")).unwrap();
        let results = [result("a", Status::Pass), result("b", Status::Timeout), result("d", Status::Pass)];
        let report = baseline.compare(&results);
        assert_eq!(report.regressed.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(report.not_run, ["c"]);
        assert_eq!(report.new_passes, ["d"]);
    }

    #[test]
    fn rom_missing_from_the_manifest_is_named_with_its_line() {
        let manifest = Manifest { path: "m.toml".into(), roms: Vec::new() };
        let baseline = Baseline::parse("# c\nroms/x.nes\n", Path::new("b.txt")).unwrap();
        let err = baseline.check_against(&manifest).unwrap_err();
        assert_eq!(err.to_string(), "b.txt: line 2: ROM \"roms/x.nes\" is not in the manifest m.toml");
    }
}
