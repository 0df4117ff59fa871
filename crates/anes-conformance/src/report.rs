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
        }
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
