//! `Nes::step_to_next_line` (the lockstep runner's scanline granularity) stops after exactly the
//! instruction where stepping one instruction at a time sees the PPU's scanline change, with the
//! same machine there: every bundled and determinism ROM, all four CPU/PPU phases, both PPU
//! schedules, across a soft reset and a power cycle. So does `step_to_next_line_lagging` (the
//! runner's own step), which leaves the chips behind from line to line: a copy settled after every
//! step is that machine too.
//!
//! After each line step the machines are compared by position and [`Nes::state_digest`] (any
//! changed byte changes it); by the full record, blake3 state hash included, at every eighth step
//! and at each frame's end.

mod support;

use anes::harness::Harness;
use anes::nes::movie::ConsoleCommand;
use anes::nes::{Cartridge, Nes, NesConfig, PpuCatchUp};
use support::{determinism_roms, for_each_rom_in_parallel, random_input};

#[test]
fn line_steps_stop_where_instruction_steps_see_the_line_change() {
    for_each_rom_in_parallel(&determinism_roms(), |_, name, rom| {
        for phase in 0..4u8 {
            for mode in [PpuCatchUp::Lazy, PpuCatchUp::Eager] {
                if mode == PpuCatchUp::Eager && phase != 0 {
                    continue;
                }
                let config = NesConfig { cpu_ppu_alignment: Some(phase), ..NesConfig::default() };
                let mut by_line = Nes::new(Cartridge::from_ines(rom).unwrap(), config);
                by_line.set_ppu_catch_up(mode);
                let mut by_instruction = by_line.clone();
                let mut lagging = by_line.clone();
                let input = random_input(u64::from(phase) + 11, 40);
                let mut lines = 0u64;
                for i in 0..input.len() {
                    let mut frame = input.frame(i);
                    match i {
                        20 => frame.command = ConsoleCommand::SoftReset,
                        30 => frame.command = ConsoleCommand::PowerCycle,
                        _ => {}
                    }
                    by_line.begin_frame(frame);
                    by_instruction.begin_frame(frame);
                    lagging.begin_frame(frame);
                    loop {
                        let line = by_instruction.ppu_position().0;
                        let done_by_instruction = loop {
                            if by_instruction.step_in_frame() {
                                break true;
                            }
                            if by_instruction.ppu_position().0 != line {
                                break false;
                            }
                        };
                        let done_by_line = by_line.step_to_next_line();
                        lines += 1;
                        let context =
                            || format!("{name}, phase {phase}, {mode:?}, frame {i}, line step {lines}");
                        assert_eq!(done_by_line, done_by_instruction, "{}", context());
                        let whole = done_by_line || lines % 8 == 0;
                        assert_same(&by_line, &by_instruction, whole, &context);
                        let done_lagging = lagging.step_to_next_line_lagging();
                        assert_eq!(done_lagging, done_by_line, "{}, lagging", context());
                        let mut settled = lagging.clone();
                        settled.settle();
                        assert_same(&settled, &by_line, whole, &|| format!("{}, lagging", context()));
                        if done_by_line {
                            break;
                        }
                    }
                }
            }
        }
    });
}

/// Fails unless `a` and `b` are at the same cycle and dot with the same state digest, and (`whole`)
/// have equal records; on a difference the records are shown whole.
fn assert_same(a: &Nes, b: &Nes, whole: bool, context: &dyn Fn() -> String) {
    let same = (a.cpu_cycle(), a.ppu_position(), a.state_digest())
        == (b.cpu_cycle(), b.ppu_position(), b.state_digest());
    if !same || whole {
        assert_eq!(a.frame_record(), b.frame_record(), "{}", context());
    }
    assert!(same, "{}: equal records, different digests", context());
}
