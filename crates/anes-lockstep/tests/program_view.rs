//! `ProgramView`: consoles powered on differently run in lockstep by what their programs do, and a
//! power-on dependence is localized to the first instruction the programs run differently (or the
//! first write the PPU takes differently).

use anes_core::PowerOnProfile;
use anes_core::movie::FrameInput;
use anes_lockstep::check_contract;
use anes_lockstep::{Lockstep, LockstepConfig, Machine, ProgramView, RunOutcome, ShrinkConfig, shrink};

fn read_rom(path: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn view(rom: &[u8], profile: PowerOnProfile) -> ProgramView {
    ProgramView::from_ines(rom, profile.config(), None).unwrap()
}

/// Runs the default against `profile` for `frames` frames; the localization of the divergence, if
/// any: (frame, instruction, differing field names).
fn against_default(rom: &[u8], profile: PowerOnProfile, frames: u64) -> Option<(u64, String, Vec<String>)> {
    let config = LockstepConfig { checkpoint_every: 1, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(view(rom, PowerOnProfile::Default), view(rom, profile), config).unwrap();
    let inputs = vec![FrameInput::default(); frames as usize];
    match lockstep.run(&inputs, frames) {
        RunOutcome::Agreed { .. } => None,
        RunOutcome::Diverged(_) => {
            let evidence = lockstep.evidence().expect("evidence of the divergence");
            let found = evidence.localization.as_ref().expect("localized to an instruction");
            let fields = found.fields.iter().map(|f| f.name.clone()).collect();
            Some((found.frame, found.instruction.clone(), fields))
        }
    }
}

#[test]
fn views_of_different_power_ons_agree_until_the_program_acts_on_the_difference() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    let a = view(&rom, PowerOnProfile::Default);
    for profile in PowerOnProfile::NAMED.into_iter().chain((1..8).map(PowerOnProfile::Random)) {
        let b = view(&rom, profile);
        assert_eq!(a.state_hash(), b.state_hash(), "{profile}: nothing ran yet");
        let whole_differs = profile.config() != PowerOnProfile::Default.config();
        assert_eq!(a.whole_state_hash() != b.whole_state_hash(), whole_differs, "{profile}");
    }
}

#[test]
fn the_vblank_flag_set_at_power_on_is_found_at_the_first_wait() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    let (frame, instruction, fields) =
        against_default(&rom, PowerOnProfile::VblankSet, 10).expect("a dependence");
    assert_eq!(frame, 0);
    assert!(instruction.starts_with("BIT $2002"), "the wait's first read sees the flag set: {instruction}");
    assert_eq!(fields, ["cpu.p"]);
}

#[test]
fn a_write_the_warm_up_ignores_is_found_at_the_write() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    let (frame, instruction, fields) =
        against_default(&rom, PowerOnProfile::WarmUp, 10).expect("a dependence");
    // The wait ends as the first VBlank starts, just after frame 0's end.
    assert_eq!(frame, 1);
    assert!(instruction.starts_with("STA $2006"), "{instruction}");
    assert_eq!(fields, ["ppu.t", "ppu.w"]);
}

#[test]
fn power_on_state_a_program_overwrites_makes_no_divergence() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    // The ROM writes the whole palette and clears RAM; it never reads OAM or shows sprites.
    for profile in [PowerOnProfile::ConsolePalette, PowerOnProfile::RamFf] {
        assert_eq!(against_default(&rom, profile, 30), None, "{profile}");
    }
    // The demo reads PPUSTATUS once before its waits, so the flag's power-on value is lost on it.
    let demo = read_rom("roms/demo/demo.nes");
    assert_eq!(against_default(&demo, PowerOnProfile::VblankSet, 60), None);
}

#[test]
fn a_program_view_keeps_the_machine_contract() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    check_contract(&view(&rom, PowerOnProfile::QuickPowerCycle), 8).unwrap();
}

/// A power-on dependence shrinks like any divergence: the ROM never reads the pads, so every press
/// goes, and the repro ends with frame 0, where the first wait reads the flag set; the start stays
/// at power-on (one snapshot cannot start two consoles powered on differently).
#[test]
fn a_power_on_dependence_shrinks_to_no_presses() {
    let rom = read_rom("roms/poweron/one_vblank.nes");
    let stream: Vec<FrameInput> = (0..40u8).map(|n| FrameInput::buttons(n.wrapping_mul(37), n)).collect();
    let config = ShrinkConfig { checkpoint_every: 4, ..ShrinkConfig::default() };
    let shrunk = shrink(
        view(&rom, PowerOnProfile::Default),
        view(&rom, PowerOnProfile::QuickPowerCycle),
        &stream,
        &config,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(shrunk.report().shrunk.presses, 0);
    assert_eq!(shrunk.repro.len(), 1);
    assert_eq!((shrunk.start_frame, shrunk.start_snapshot.as_ref()), (0, None));
}

/// A console of another CPU/PPU phase reaches the end of a picture up to 3 master clocks later,
/// which can end its frame one instruction later; a view's frame ends where every phase's would.
/// The demo over its input runs alike at every phase until frame 28, where the NMI is taken one
/// instruction later (its spin counter, and the LFSR it stirs, then part ways).
#[test]
fn consoles_of_other_phases_end_their_frames_on_the_same_instruction() {
    let rom = read_rom("roms/demo/demo.nes");
    let stream = anes_core::movie::InputStream::from_bytes(&read_rom("roms/demo/demo.input")).unwrap();
    let inputs: Vec<FrameInput> = (0..40).map(|n| stream.frame(n)).collect();
    for phase in 1..=3 {
        let config = LockstepConfig { checkpoint_every: 1, ..LockstepConfig::default() };
        let b = view(&rom, PowerOnProfile::Phase(phase));
        let mut lockstep = Lockstep::new(view(&rom, PowerOnProfile::Default), b, config).unwrap();
        assert!(matches!(lockstep.run(&inputs, 40), RunOutcome::Diverged(_)), "phase {phase}");
        let found = lockstep.evidence().unwrap().localization.as_ref().unwrap();
        assert_eq!(found.frame, 28, "phase {phase}");
        assert!(found.instruction.starts_with("INC $02"), "phase {phase}: {}", found.instruction);
        assert!(found.fields.iter().any(|f| f.name == "cpu.pc"), "the NMI taken in one only");
    }
}
