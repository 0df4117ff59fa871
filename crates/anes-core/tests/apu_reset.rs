//! The frame counter at the reset button, through the whole console (nesdev "CPU power up state":
//! at reset the 2A03G's APU frame counter is reset and $4017's last value is written again; blargg's
//! apu_reset: "At reset, flag should be clear", the reset's rewrite is "as if" $4017 were written
//! 9-12 clocks before the first instruction).

mod cart_support;

use anes_core::{ApuCatchUp, Cartridge, Nes, NesConfig};

/// An NROM image whose reset code is `code` followed by a NOP sled.
fn console(code: &[u8]) -> Nes {
    let rom = cart_support::nrom_running(code);
    Nes::new(Cartridge::from_ines(&rom).expect("valid test image"), NesConfig::default())
}

/// Presses reset at the instruction boundary after CPU cycle `cycle` (a NOP sled, after one 3-cycle
/// LDA zp for an even cycle) and returns the console after the reset sequence.
fn reset_at(cycle: u64, schedule: ApuCatchUp) -> Nes {
    let mut nes = console(if cycle % 2 == 0 { &[0xA5, 0x00] } else { &[] });
    nes.set_apu_catch_up(schedule);
    while nes.cpu_cycle() < cycle {
        nes.step_instruction();
    }
    assert_eq!(nes.cpu_cycle(), cycle, "an instruction boundary");
    nes.soft_reset();
    nes
}

#[test]
fn a_reset_just_before_the_frame_interrupt_leaves_the_flag_clear() {
    // At power-on the 4-step sequence restarts on cycle 1, so its interrupt flag is set on cycles
    // 29829-29831 (`frame_counter.rs`). A reset ending on cycle 29829 with a put cycle next must not
    // let the old sequence run on into its step: the reset line holds the frame counter reset, the
    // flag stays clear and the sequence restarts from 0 (the rewrite of $4017).
    for schedule in [ApuCatchUp::Lazy, ApuCatchUp::Eager] {
        for cycle in [29825, 29826, 29827, 29828, 29829, 29830, 29831] {
            let nes = reset_at(cycle, schedule);
            let fc = nes.apu().state().frame_counter;
            assert_eq!(fc.irq_flag, 0, "reset at {cycle} ({schedule:?})");
            assert_eq!(nes.apu().peek_status() & 0x40, 0, "reset at {cycle} ({schedule:?})");
            // The restart: 6 or 7 cycles before the first instruction (cycle + 8), as if $4017 had
            // been written 10 cycles before it.
            let restart = nes.cpu_cycle() - u64::from(fc.cycle);
            let first = cycle + 8;
            assert_eq!(
                first - restart,
                if first % 2 == 1 { 6 } else { 7 },
                "reset at {cycle} ({schedule:?})"
            );
        }
    }
}
