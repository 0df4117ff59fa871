//! ROMs that report only on screen or in zero page (blargg's older suites): a zero-page result byte
//! (`pass_value` = passed, 2 or more = failure code, 0 = not finished) and/or result text written
//! to the nametables with tile index = ASCII code.
//!
//! With texts given, the first frame that shows one decides. Without, the pass value decides at once,
//! but a failure code only at the end of the frame budget: the ROMs keep the running sub-test's code
//! in the byte, so it is final only once nothing changes it any more.

use super::{Outcome, Progress, jammed, run_frame};
use crate::console::Console;
use crate::manifest::{RomEntry, ScreenSpec};
use crate::report::Status;

/// Visible tiles of one nametable: 30 rows of 32 (the attribute table follows).
const ROWS: u16 = 30;
const COLUMNS: u16 = 32;

pub(super) fn run(nes: &mut impl Console, rom: &RomEntry, progress: &mut Progress) -> Outcome {
    let Some(spec) = rom.screen.as_ref() else {
        return Outcome::error("screen protocol without a [rom.screen] table in the manifest");
    };
    let by_text = !spec.text_pass.is_empty() || !spec.text_fail.is_empty();
    if !by_text && spec.result_addr.is_none() {
        return Outcome::error("[rom.screen] names neither result_addr nor text_pass/text_fail");
    }
    let pass_value = spec.pass_value.unwrap_or(1);
    for _ in 0..rom.frame_budget {
        run_frame(nes, progress);
        if let Some(pc) = nes.jammed_at() {
            return jammed(pc);
        }
        if by_text {
            // The result byte is rewritten while the tests run (e.g. with the sub-test number), so
            // only the final text decides; the byte then gives the failure code.
            if let Some(outcome) = decide_by_text(nes, spec, pass_value) {
                return outcome;
            }
        } else if spec.result_addr.is_some_and(|addr| nes.peek(u16::from(addr)) == pass_value) {
            // Only the pass value is final: before each sub-test the ROMs store that sub-test's
            // failure code, so 2 or more may still change (blargg_ppu_tests vbl_clear_time holds 2
            // for a frame, then 1).
            return Outcome::new(Status::Pass, Some(pass_value), screen_text(nes));
        }
    }
    // The budget is over: a failure code still in the result byte is the ROM's final answer.
    if let (false, Some(addr)) = (by_text, spec.result_addr) {
        let code = nes.peek(u16::from(addr));
        if code >= 2 && code != pass_value {
            return Outcome::new(Status::Fail, Some(code), screen_text(nes));
        }
    }
    let mut text = if by_text {
        format!(
            "none of {:?} / {:?} on screen after {} frames",
            spec.text_pass, spec.text_fail, progress.frames
        )
    } else {
        format!("no result after {} frames", progress.frames)
    };
    if let Some(addr) = spec.result_addr {
        text.push_str(&format!("; ${addr:02X} = ${:02X}", nes.peek(u16::from(addr))));
    }
    Outcome::new(Status::Timeout, None, text)
}

fn decide_by_text(nes: &impl Console, spec: &ScreenSpec, pass_value: u8) -> Option<Outcome> {
    let code = spec.result_addr.map(|addr| nes.peek(u16::from(addr)));
    // Failure text wins: a screen that shows both has not passed.
    for table in 0..4 {
        let rows = nametable_rows(nes, table);
        let contains =
            |texts: &[String]| texts.iter().any(|t| rows.iter().any(|row| row.contains(t.as_str())));
        if contains(&spec.text_fail) {
            return Some(Outcome::new(Status::Fail, code.filter(|&c| c >= 2), join(&rows)));
        }
        if contains(&spec.text_pass) {
            return Some(Outcome::new(Status::Pass, code.filter(|&c| c == pass_value), join(&rows)));
        }
    }
    None
}

/// Nametable `table` (0-3) as 30 lines of text: printable ASCII tiles as characters, others as spaces.
fn nametable_rows(nes: &impl Console, table: u16) -> Vec<String> {
    let base = 0x2000 + table * 0x400;
    (0..ROWS)
        .map(|row| {
            (0..COLUMNS)
                .map(|column| match nes.ppu_peek(base + row * COLUMNS + column) {
                    tile @ 0x20..=0x7E => char::from(tile),
                    _ => ' ',
                })
                .collect()
        })
        .collect()
}

/// The non-blank lines, trimmed, one per line.
fn join(rows: &[String]) -> String {
    rows.iter().map(|row| row.trim()).filter(|row| !row.is_empty()).collect::<Vec<_>>().join("\n")
}

/// What nametable 0 shows, for a result reported through the result byte.
fn screen_text(nes: &impl Console) -> String {
    join(&nametable_rows(nes, 0))
}
