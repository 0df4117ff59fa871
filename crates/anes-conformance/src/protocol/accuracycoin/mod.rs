//! AccuracyCoin (100thCoin): 141 tests in one menu-driven ROM. The recipe (`ACCURACYCOIN.md` beside
//! the ROM, taken from the ROM's commented source): power on, wait until the main menu is drawn with
//! the cursor on the page index, hold Start for 4 frames, which runs every test; when the run is over
//! the ROM draws its results table and points its NMI trampoline at "press Start to continue". Each
//! test's result byte then says pass (bit 0 set; the bits above are a success code when several
//! behaviours pass) or fail (`code << 2 | 2`).
//!
//! Several tests depend on the CPU, PPU and APU phases at the moment the run starts, which depend
//! on the frame at which Start is seen. The protocol therefore runs the ROM from [`START_POINTS`]
//! start points (Start pressed at consecutive frames from the first one the menu is ready, each run
//! from its own power-on) and reports every test's worst result; the ROM passes only when every
//! test passes at every start point.
//!
//! The test list (`accuracycoin_tests.csv`) and the meaning of each code (`README.md`) are read from
//! the ROM's folder at run time.

mod catalog;
mod readme;

use super::{Outcome, Progress};
use crate::console::Console;
use crate::manifest::RomEntry;
use crate::report::{StartPoint, Status, SubTest};
use catalog::TestEntry;
use readme::Docs;

/// Runs from different start frames (consecutive frames: the CPU and APU phases against the PPU's
/// frame move by 29,780.67 CPU cycles each time, e.g. 249 cycles of the DMC's power-on period).
pub const START_POINTS: u64 = 8;

/// `Debug_EC`: the boot progress counter, `$0A` once the main menu is drawn with rendering and NMI on.
const BOOT_PROGRESS: u16 = 0x00EC;
const BOOT_DONE: u8 = 0x0A;
/// `menuCursorYPos`: `$FF` while the cursor is on the page index, where Start runs every test.
const MENU_CURSOR: u16 = 0x0016;
const CURSOR_ON_PAGE_INDEX: u8 = 0xFF;
/// `RunningAllTests`: 1 while the tests run.
const RUNNING_ALL_TESTS: u16 = 0x0035;
/// `PostAllTestTally`: the number of the test running, then the number of tests scored.
const TEST_TALLY: u16 = 0x0037;
/// `PostAllPassTally`: after the run, the number of tests passed.
const PASS_TALLY: u16 = 0x0038;
/// The NMI trampoline, `JMP` to the current NMI handler; the results screen points it elsewhere
/// than the menu does.
const NMI_TRAMPOLINE: u16 = 0x0700;
const JMP_ABSOLUTE: u8 = 0x4C;
/// Frames to run before trusting the menu state (random power-on RAM could fake it before).
const MIN_BOOT_FRAMES: u64 = 10;
/// Frames Start is held.
const START_HELD_FRAMES: u64 = 4;
/// Start in the controller's shift order.
const START: u8 = anes_core::input::buttons::START;

/// Runs the ROM's tests from every start point; `power_on` gives a freshly powered-on console.
pub(super) fn run<C: Console>(
    power_on: &dyn Fn() -> Result<C, String>,
    rom: &RomEntry,
    progress: &mut Progress,
) -> Outcome {
    let folder = rom.file.parent().unwrap_or(std::path::Path::new("."));
    let tests = match catalog::load(&folder.join("accuracycoin_tests.csv")) {
        Ok(tests) => tests,
        Err(err) => return Outcome::error(err),
    };
    let (docs, docs_missing) = Docs::load(&folder.join("README.md"));
    let mut console = match power_on() {
        Ok(console) => console,
        Err(err) => return Outcome::error(err),
    };
    let mut frames = 0;
    let menu = match wait_for_menu(&mut console, rom.frame_budget, &mut frames) {
        Ok(menu) => menu,
        Err(outcome) => {
            progress.frames = frames;
            return outcome;
        }
    };
    let mut runs = Vec::new();
    let mut first = Some(console);
    for start_frame in menu.ready_frame..menu.ready_frame + START_POINTS {
        let mut console = match first.take() {
            Some(console) => console,
            None => match power_on() {
                Ok(console) => console,
                Err(err) => return Outcome::error(err),
            },
        };
        let run = run_from(&mut console, &menu, start_frame, &tests, rom.frame_budget);
        frames += run.point.frames;
        runs.push(run);
    }
    progress.frames = frames;
    let mut outcome = summarize(&tests, &docs, &runs);
    if let Some(why) = docs_missing {
        outcome.text.push_str(&format!("\n(no code meanings: {why})"));
    }
    outcome
}

/// The main menu as the first power-on reached it.
struct Menu {
    /// The first frame at whose end the menu was ready (and had been the frame before).
    ready_frame: u64,
    /// Where the menu's NMI trampoline jumps.
    nmi_target: [u8; 2],
}

/// Runs frames until the menu is ready: boot done and cursor on the page index at the ends of two
/// consecutive frames, at least [`MIN_BOOT_FRAMES`] in.
fn wait_for_menu(console: &mut impl Console, budget: u64, frames: &mut u64) -> Result<Menu, Outcome> {
    let mut ready_before = false;
    for _ in 0..budget {
        *frames = console.run_frame();
        if let Some(pc) = console.jammed_at() {
            return Err(super::jammed(pc));
        }
        let ready =
            console.peek(BOOT_PROGRESS) == BOOT_DONE && console.peek(MENU_CURSOR) == CURSOR_ON_PAGE_INDEX;
        if ready && ready_before && *frames >= MIN_BOOT_FRAMES {
            return Ok(Menu { ready_frame: *frames, nmi_target: nmi_target(console) });
        }
        ready_before = ready;
    }
    Err(Outcome::new(
        Status::Timeout,
        None,
        format!(
            "the main menu was not ready after {} frames (${BOOT_PROGRESS:02X} = ${:02X}, ${MENU_CURSOR:02X} = ${:02X})",
            *frames,
            console.peek(BOOT_PROGRESS),
            console.peek(MENU_CURSOR)
        ),
    ))
}

fn nmi_target(console: &impl Console) -> [u8; 2] {
    [console.peek(NMI_TRAMPOLINE + 1), console.peek(NMI_TRAMPOLINE + 2)]
}

/// One run: its summary and, when it finished, every test's result byte.
struct Run {
    point: StartPoint,
    results: Option<Vec<u8>>,
}

/// Runs `console` (powered on, at most at `start_frame`) to the end of `start_frame`, holds Start
/// and waits for the results.
fn run_from(
    console: &mut impl Console,
    menu: &Menu,
    start_frame: u64,
    tests: &[TestEntry],
    budget: u64,
) -> Run {
    let mut point = StartPoint {
        start_frame,
        status: Status::Timeout,
        passed: 0,
        total: tests.len(),
        frames: 0,
        text: String::new(),
    };
    let mut frame = 0;
    while frame < start_frame {
        frame = console.run_frame();
    }
    let ready = console.peek(BOOT_PROGRESS) == BOOT_DONE && console.peek(MENU_CURSOR) == CURSOR_ON_PAGE_INDEX;
    if !ready {
        point.frames = frame;
        point.text = format!("the menu was not ready at frame {start_frame}, as at the first power-on");
        return Run { point, results: None };
    }
    if !console.set_buttons(0, START) {
        point.status = Status::Error;
        point.text = "this console cannot press buttons".to_owned();
        return Run { point, results: None };
    }
    let mut running_test = None;
    for held in 1..=budget {
        frame = console.run_frame();
        point.frames = frame;
        if held == START_HELD_FRAMES {
            console.set_buttons(0, 0);
        }
        if let Some(pc) = console.jammed_at() {
            point.status = Status::Fail;
            point.text = format!("CPU jammed at PC ${pc:04X}{}", during(running_test));
            return Run { point, results: None };
        }
        if console.peek(RUNNING_ALL_TESTS) == 1 {
            running_test = Some(console.peek(TEST_TALLY));
            continue;
        }
        if running_test.is_none() {
            continue;
        }
        if console.peek(BOOT_PROGRESS) != BOOT_DONE {
            // The reset path clears RAM, boot counter and results included.
            point.status = Status::Fail;
            point.text = format!("the machine restarted{}", during(running_test));
            return Run { point, results: None };
        }
        if console.peek(NMI_TRAMPOLINE) == JMP_ABSOLUTE && nmi_target(console) != menu.nmi_target {
            return finished(console, point, tests);
        }
    }
    point.text = match running_test {
        None => format!("Start pressed at frame {start_frame} did not start the tests"),
        Some(test) => format!("no results after {budget} frames; test {test} was the last seen running"),
    };
    Run { point, results: None }
}

fn during(test: Option<u8>) -> String {
    test.map(|test| format!(" during test {test}")).unwrap_or_default()
}

/// Reads the results of a finished run and checks them against the ROM's own tallies.
fn finished(console: &impl Console, mut point: StartPoint, tests: &[TestEntry]) -> Run {
    let results: Vec<u8> = tests.iter().map(|test| console.peek(test.result_addr)).collect();
    point.passed = results.iter().filter(|&&result| passed(result)).count();
    let (total, passes) = (console.peek(TEST_TALLY), console.peek(PASS_TALLY));
    if usize::from(total) != tests.len() || usize::from(passes) != point.passed {
        point.status = Status::Error;
        point.text = format!(
            "the ROM counted {passes} of {total} tests passed, the result bytes say {} of {}: is the test list the ROM's?",
            point.passed,
            tests.len()
        );
        return Run { point, results: None };
    }
    point.status = if point.passed == tests.len() { Status::Pass } else { Status::Fail };
    Run { point, results: Some(results) }
}

/// The ROM counts a test as passed when bit 0 of its result is set.
fn passed(result: u8) -> bool {
    result & 1 != 0
}

/// Every test's worst result over the runs, and the ROM's.
fn summarize(tests: &[TestEntry], docs: &Docs, runs: &[Run]) -> Outcome {
    let finished: Vec<(u64, &[u8])> =
        runs.iter().filter_map(|run| Some((run.point.start_frame, run.results.as_deref()?))).collect();
    let subtests: Vec<SubTest> = tests
        .iter()
        .enumerate()
        .map(|(i, test)| {
            let failed_at: Vec<u64> =
                finished.iter().filter(|(_, results)| !passed(results[i])).map(|&(frame, _)| frame).collect();
            let first_failure = finished.iter().map(|(_, results)| results[i]).find(|&r| !passed(r));
            let (status, code, meaning) = match first_failure {
                Some(result) => {
                    let (code, meaning) = failure(docs, test, result);
                    (Status::Fail, code, meaning)
                }
                None => {
                    let status = if finished.len() == runs.len() { Status::Pass } else { Status::Timeout };
                    let code = finished.first().map(|(_, results)| results[i] >> 2).filter(|&code| code != 0);
                    let meaning = code.map(|code| docs.success(&test.name, code)).unwrap_or_default();
                    (status, code, meaning)
                }
            };
            SubTest {
                index: test.index,
                page: test.page,
                name: test.name.clone(),
                status,
                code,
                meaning,
                failed_at,
            }
        })
        .collect();
    let points: Vec<StartPoint> = runs.iter().map(|run| run.point.clone()).collect();
    let status = if points.iter().any(|p| p.status == Status::Error) {
        Status::Error
    } else if subtests.iter().any(|t| t.status == Status::Fail)
        || points.iter().any(|p| p.status == Status::Fail)
    {
        Status::Fail
    } else if points.iter().any(|p| p.status != Status::Pass) {
        Status::Timeout
    } else {
        Status::Pass
    };
    let mut outcome = Outcome::new(status, None, summary_text(tests.len(), &points, &subtests));
    outcome.subtests = subtests;
    outcome.start_points = points;
    outcome
}

/// The error code of a failing result byte and what it means.
fn failure(docs: &Docs, test: &TestEntry, result: u8) -> (Option<u8>, String) {
    match result {
        0x00 => (None, "not run".to_owned()),
        0xFF => (None, "skipped".to_owned()),
        _ => {
            let code = result >> 2;
            (Some(code), docs.error(test.page, &test.name, code))
        }
    }
}

/// "141 of 141 passed at each of 8 start points (...)", or the worst and best counts and what failed.
fn summary_text(total: usize, points: &[StartPoint], subtests: &[SubTest]) -> String {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return String::new();
    };
    let frames = format!("Start at frames {}-{}", first.start_frame, last.start_frame);
    let worst = points.iter().min_by_key(|p| (p.status == Status::Pass, p.passed)).unwrap_or(first);
    let mut text = if worst.status == Status::Pass {
        format!("{total} of {total} passed at each of {} start points ({frames})", points.len())
    } else {
        let best = points.iter().map(|p| p.passed).max().unwrap_or(0);
        format!(
            "worst {} of {total} passed (Start at frame {}), best {best}; {} start points ({frames})",
            worst.passed,
            worst.start_frame,
            points.len()
        )
    };
    let failing: Vec<String> = subtests
        .iter()
        .filter(|t| t.status == Status::Fail)
        .map(|t| match t.code_label() {
            Some(code) => format!("#{} {} ({code})", t.index, t.name),
            None => format!("#{} {}", t.index, t.name),
        })
        .collect();
    if !failing.is_empty() {
        text.push_str(&format!("; failing: {}", failing.join(", ")));
    }
    for point in points.iter().filter(|p| !p.text.is_empty()) {
        text.push_str(&format!("\nStart at frame {}: {} ({})", point.start_frame, point.status, point.text));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared conformance folder's AccuracyCoin folder, when it is there. Missing, the test
    /// skips on a bare `cargo test` and fails under CI (`CI` set), as the workspace's tests do.
    fn rom_folder() -> Option<std::path::PathBuf> {
        let dir =
            std::env::var_os("ANES_CONFORMANCE_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
            });
        let folder = dir.join("roms/AccuracyCoin");
        if folder.is_dir() {
            return Some(folder);
        }
        assert!(!anes_fs::ci_is_set(), "{} is missing and CI is set", folder.display());
        eprintln!("skipped: {} is missing", folder.display());
        None
    }

    #[test]
    fn every_test_of_the_rom_has_its_codes_explained() {
        let Some(folder) = rom_folder() else { return };
        let tests = catalog::load(&folder.join("accuracycoin_tests.csv")).unwrap();
        assert_eq!(tests.len(), 141);
        let (docs, missing) = Docs::load(&folder.join("README.md"));
        assert_eq!(missing, None);
        let unexplained: Vec<&str> =
            tests.iter().filter(|t| !docs.knows(t.page, &t.name)).map(|t| t.name.as_str()).collect();
        assert!(unexplained.is_empty(), "no README section for {unexplained:?}");
        // Spot checks where the names differ from the headings.
        let by_name = |name: &str| tests.iter().find(|t| t.name == name).unwrap();
        let stale = by_name("Stale Sprite Shift Regs");
        assert!(
            docs.error(stale.page, &stale.name, 3).starts_with("The sprite shift registers should not be")
        );
        let indirect = by_name("Indirect");
        assert!(docs.error(indirect.page, &indirect.name, 1).starts_with("JMP (Indirect)"));
        let sha = by_name("$93   SHA indirect,Y");
        assert!(docs.success(&sha.name, 2).contains("with only X"));
    }
}
