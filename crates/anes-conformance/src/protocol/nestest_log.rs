//! nestest in automation mode: start at `$C000` and compare the trace of every instruction with
//! `nestest.log` beside the ROM (address, bytes, disassembly, registers, PPU position, CPU cycle).

use anes_core::Nes;
use anes_core::harness::Harness;

use super::{Outcome, Progress};
use crate::limits::MAX_LOG_LEN;
use crate::manifest::RomEntry;
use crate::report::Status;

const START_PC: u16 = 0xC000;

pub(super) fn run(nes: &mut Nes, rom: &RomEntry, progress: &mut Progress) -> Outcome {
    let log_file = rom.file.with_extension("log");
    let log = match anes_fs::read_text_capped(&log_file, MAX_LOG_LEN as u64, "golden trace log") {
        Ok(log) => log,
        Err(err) => return Outcome::error(err.to_string()),
    };
    nes.set_pc(START_PC);
    let mut actual = String::with_capacity(96);
    let mut lines = 0;
    for (index, expected) in log.lines().enumerate() {
        actual.clear();
        anes_core::cpu::trace_line(nes, &mut actual);
        if actual != expected.trim_end() {
            progress.frames = nes.ppu().frames_completed();
            return Outcome::new(
                Status::Fail,
                None,
                format!("line {} differs\nexpected: {}\nactual:   {actual}", index + 1, expected.trim_end()),
            );
        }
        nes.step_instruction();
        lines = index + 1;
    }
    progress.frames = nes.ppu().frames_completed();
    if lines == 0 {
        return Outcome::error(format!("{}: the golden log is empty", log_file.display()));
    }
    // In automation mode nestest leaves its failure codes in $02 (official) and $03 (unofficial).
    Outcome::new(
        Status::Pass,
        None,
        format!("{lines} lines match; $02 = ${:02X}, $03 = ${:02X}", nes.peek(2), nes.peek(3)),
    )
}
