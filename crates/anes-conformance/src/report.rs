//! What a run reports: one [`RomResult`] per ROM and the [`Summary`] over them.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::manifest::Expected;

/// How a ROM's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The ROM reported that it passed.
    Pass,
    /// The ROM reported a failure (or the CPU jammed, or the trace differed).
    Fail,
    /// The frame budget ran out before the ROM reported a result.
    Timeout,
    /// The ROM could not be run: missing or damaged file, unsupported protocol or a panic in the core.
    Error,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Timeout => "timeout",
            Status::Error => "error",
        })
    }
}

/// The result of one ROM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RomResult {
    /// The ROM's path as written in the manifest.
    pub path: String,
    /// Its suite.
    pub suite: String,
    /// Its protocol's name as written in the manifest.
    pub protocol: String,
    /// What the manifest expects of it.
    pub expected: Expected,
    /// How its run ended.
    pub status: Status,
    /// The ROM's own result code, where its protocol has one ($00 = passed for blargg6000).
    pub code: Option<u8>,
    /// The ROM's own explanation (blargg's `$6004` text, the screen text found) or the runner's
    /// explanation of a timeout or error. May span several lines.
    pub text: String,
    /// Frames the console completed.
    pub frames: u64,
    /// Wall-clock time the run took (not serialised: output stays identical between runs).
    #[serde(skip)]
    pub wall_time: Duration,
    /// For ROMs that hold many tests (`accuracycoin`): each test's result, worst over the start
    /// points; empty for other protocols.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subtests: Vec<SubTest>,
    /// For protocols that run the ROM from several start points (`accuracycoin`): each run's
    /// outcome; empty for other protocols.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub start_points: Vec<StartPoint>,
}

/// One test of a ROM that holds many (AccuracyCoin), as its runs reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SubTest {
    /// Its number in the ROM's run order (1-based).
    pub index: u16,
    /// The ROM's menu page it is on.
    pub page: u8,
    /// Its name as the ROM's test list gives it.
    pub name: String,
    /// `pass` when it passed at every start point, `fail` when it failed at one, `timeout` when
    /// some start point never finished (and it passed at the others).
    pub status: Status,
    /// The ROM's code: the error code of the first start point where it failed, else the success
    /// code (several behaviours are acceptable) when the ROM gave one.
    pub code: Option<u8>,
    /// What the code means, from the ROM's documentation (empty when it says nothing).
    pub meaning: String,
    /// The start frames at which it failed.
    pub failed_at: Vec<u64>,
}

impl SubTest {
    /// The code as the ROM prints it: 0-9, then A, B, ... for 10, 11, ...
    pub fn code_label(&self) -> Option<String> {
        self.code.map(code_label)
    }
}

/// A code as AccuracyCoin prints it: 0-9, then letters from A for 10.
pub fn code_label(code: u8) -> String {
    match code {
        0..=9 => code.to_string(),
        10..=35 => char::from(b'A' + code - 10).to_string(),
        _ => format!("${code:02X}"),
    }
}

/// One run of a ROM from one start point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartPoint {
    /// The frame at whose end the start button was pressed.
    pub start_frame: u64,
    /// How this run ended.
    pub status: Status,
    /// Tests passed.
    pub passed: usize,
    /// Tests scored.
    pub total: usize,
    /// Frames the run took.
    pub frames: u64,
    /// What went wrong, when it did not finish.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub text: String,
}

impl RomResult {
    /// True when this result makes a conformance run fail: the ROM must pass and did not.
    pub fn is_failure(&self) -> bool {
        self.expected == Expected::Pass && self.status != Status::Pass
    }
}

/// Counts over a set of results.
///
/// `failed` counts only ROMs expected to pass that did not pass; `either` and `info` ROMs are
/// reported but never fail a run, whatever their status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// ROMs whose status is `pass`, whatever their expectation.
    pub passed: usize,
    /// ROMs expected to pass whose status is not `pass`.
    pub failed: usize,
}

impl Summary {
    /// Counts `results`.
    pub fn of(results: &[RomResult]) -> Summary {
        Summary {
            passed: results.iter().filter(|r| r.status == Status::Pass).count(),
            failed: results.iter().filter(|r| r.is_failure()).count(),
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(expected: Expected, status: Status) -> RomResult {
        RomResult {
            path: String::new(),
            suite: String::new(),
            protocol: String::new(),
            expected,
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
    fn codes_are_labelled_as_the_rom_prints_them() {
        let labels: Vec<String> = [0, 9, 10, 11, 35, 36].into_iter().map(code_label).collect();
        assert_eq!(labels, ["0", "9", "A", "B", "Z", "$24"]);
    }

    #[test]
    fn only_roms_expected_to_pass_can_fail_a_run() {
        let results = [
            result(Expected::Pass, Status::Pass),
            result(Expected::Pass, Status::Timeout),
            result(Expected::Either, Status::Fail),
            result(Expected::Info, Status::Pass),
            result(Expected::Info, Status::Error),
        ];
        let summary = Summary::of(&results);
        assert_eq!(summary, Summary { passed: 2, failed: 1 });
        assert_eq!(summary.to_string(), "2 passed, 1 failed");
    }
}
