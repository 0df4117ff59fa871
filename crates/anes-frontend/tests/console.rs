//! Console behaviour a frontend relies on: snapshots refused whole with the reason (codes and all),
//! Game Genie codes restored with a state, the battery RAM dirty flag.

use anes_frontend::anes_core::movie::FrameInput;
use anes_frontend::anes_core::{NesConfig, Region};
use anes_frontend::{CONSOLE_STATE_HEADER_LEN, Console, ConsoleStateError, GameGenieCode, machine_snapshot};

fn demo() -> Console {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    Console::with_config(&rom, Default::default(), None).unwrap()
}

/// A 16 KiB NROM cartridge with 8 KiB of battery-backed RAM whose program stores $42 at $6000 and
/// loops.
fn battery_rom() -> Vec<u8> {
    let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut prg = vec![0xEA; 0x4000];
    let program = [0xA9, 0x42, 0x8D, 0x00, 0x60, 0x4C, 0x05, 0x80]; // LDA #$42; STA $6000; JMP *
    prg[..program.len()].copy_from_slice(&program);
    prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    rom.extend(prg);
    rom.extend(vec![0; 0x2000]);
    rom
}

fn a_code(console: &Console) -> GameGenieCode {
    let reset = u16::from_le_bytes([console.nes().peek(0xFFFC), console.nes().peek(0xFFFD)]);
    GameGenieCode { address: reset + 1, value: 0x00, compare: Some(console.nes().peek(reset + 1)) }
}

#[test]
fn a_state_brings_its_codes_back() {
    let mut console = demo();
    let code = a_code(&console);
    console.set_game_genie_codes(&[code]).unwrap();
    let mut with_code = vec![0; console.snapshot_len()];
    console.save_state_into(&mut with_code).unwrap();
    let hash_with_code = console.state_hash();
    console.set_game_genie_codes(&[]).unwrap();
    assert_ne!(console.state_hash(), hash_with_code);
    console.load_state(&with_code).unwrap();
    assert_eq!(console.nes().game_genie_codes().copied().collect::<Vec<_>>(), vec![code]);
    assert_eq!(console.state_hash(), hash_with_code);
}

#[test]
fn bad_states_are_refused_and_change_nothing() {
    let mut console = demo();
    console.run_frame(Default::default());
    let mut good = vec![0; console.snapshot_len()];
    console.save_state_into(&mut good).unwrap();
    let code = a_code(&console);
    console.set_game_genie_codes(&[code]).unwrap();
    let before = console.state_hash();
    let refuse = |console: &mut Console, bytes: &[u8]| {
        let error = console.load_state(bytes).unwrap_err();
        assert_eq!(console.state_hash(), before, "refused ({error}) yet changed");
        error
    };
    assert!(matches!(refuse(&mut console, &good[1..]), ConsoleStateError::Size { .. }));
    let mut bad = good.clone();
    bad[0] = b'X';
    assert!(matches!(refuse(&mut console, &bad), ConsoleStateError::BadMagic { .. }));
    let mut bad = good.clone();
    bad[8] = 9;
    assert!(matches!(refuse(&mut console, &bad), ConsoleStateError::UnsupportedVersion { found: 9 }));
    for (offset, value, why) in [(10, 17, "codes; at most"), (12, 1, "reserved"), (16, 1, "past the 0 codes")]
    {
        let mut bad = good.clone();
        bad[offset] = value;
        match refuse(&mut console, &bad) {
            ConsoleStateError::Codes { offset: at, why: text } => {
                assert_eq!(at, offset);
                assert!(text.contains(why), "{text}");
            }
            other => panic!("{other}"),
        }
    }
    // One code slot filled with an address below $8000, and a compare flag of 2.
    let mut bad = good.clone();
    bad[10] = 1;
    bad[16..18].copy_from_slice(&0x6000u16.to_le_bytes());
    assert!(matches!(refuse(&mut console, &bad), ConsoleStateError::Codes { offset: 16, .. }));
    bad[16..18].copy_from_slice(&0x8000u16.to_le_bytes());
    bad[19] = 2;
    assert!(matches!(refuse(&mut console, &bad), ConsoleStateError::Codes { offset: 19, .. }));
    // A damaged machine snapshot under a different code set: the console keeps its own codes.
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(matches!(refuse(&mut console, &bad), ConsoleStateError::Machine(_)));
    assert_eq!(console.nes().game_genie_codes().copied().collect::<Vec<_>>(), vec![code]);
    assert!(CONSOLE_STATE_HEADER_LEN < good.len());
    console.load_state(&good).unwrap();
}

#[test]
fn console_and_machine_snapshots_convert_both_ways() {
    let mut console = demo();
    console.run_frame(Default::default());
    let code = a_code(&console);
    let mut console_state = vec![0; console.snapshot_len()];
    console.save_state_into(&mut console_state).unwrap();
    let mut machine_state = Vec::new();
    console.nes().save_state(&mut machine_state);
    assert_eq!(
        machine_snapshot(&console_state).unwrap(),
        &machine_state[..],
        "the header, then the machine's"
    );
    assert!(matches!(machine_snapshot(&machine_state), Err(ConsoleStateError::BadMagic { .. })));

    let mut other = demo();
    other.load_state(&machine_state).unwrap();
    assert_eq!(other.state_hash(), console.state_hash());
    // A bare snapshot has no codes to bring: taken without codes, it does not fit a console with one.
    other.set_game_genie_codes(&[code]).unwrap();
    let before = other.state_hash();
    assert!(matches!(other.load_state(&machine_state), Err(ConsoleStateError::Bare(_))));
    assert_eq!(other.state_hash(), before, "refused and unchanged");
    let mut truncated = machine_state.clone();
    truncated.pop();
    other.set_game_genie_codes(&[]).unwrap();
    assert!(matches!(other.load_state(&truncated), Err(ConsoleStateError::Bare(_))));
}

#[test]
fn a_console_keeps_its_audio_rate_through_a_load() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let mut silent = Console::with_config(&rom, Default::default(), None).unwrap();
    silent.run_frame(Default::default());
    let mut state = vec![0; silent.snapshot_len()];
    silent.save_state_into(&mut state).unwrap();

    let mut loud = Console::with_config(&rom, Default::default(), Some(44_100.0)).unwrap();
    loud.load_state(&state).unwrap();
    assert_eq!(loud.state_hash(), silent.state_hash(), "the rate is no part of the state");
    assert_eq!(loud.audio_rate(), Some(44_100.0));
    assert_eq!(loud.nes().audio_sample_rate(), Some(44_100));
    loud.run_frame(Default::default());
    silent.run_frame(Default::default());
    assert!(loud.audio().len() > 2 * 700, "44.1 kHz / 60.1 frames, two channels: {}", loud.audio().len());
    assert!(silent.audio().is_empty());
    assert_eq!(loud.state_hash(), silent.state_hash());

    silent.load_state(&state).unwrap();
    assert_eq!(silent.audio_rate(), None, "a load turns no audio on");
}

#[test]
fn battery_ram_is_dirty_until_saved() {
    let mut console = Console::with_config(&battery_rom(), Default::default(), None).unwrap();
    assert_eq!(console.battery_ram().map(<[u8]>::len), Some(0x2000));
    assert!(!console.battery_ram_dirty());
    console.run_frame(Default::default());
    assert!(console.battery_ram_dirty(), "the program wrote $6000");
    assert_eq!(console.battery_ram().unwrap()[0], 0x42);
    console.mark_battery_ram_saved();
    assert!(!console.battery_ram_dirty());
    console.run_frame(Default::default());
    assert!(!console.battery_ram_dirty(), "writing the same value changes nothing");
    let save = vec![7u8; 0x2000];
    console.load_battery_ram(&save).unwrap();
    assert!(!console.battery_ram_dirty());
    assert_eq!(console.battery_ram().unwrap(), &save[..]);
    assert!(console.load_battery_ram(&save[1..]).is_err());
    assert!(!demo().battery_ram_dirty(), "no battery, never dirty");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any damage to a state's bytes is refused whole or loads a valid machine; nothing panics and a
    /// refusal changes nothing.
    #[test]
    fn damaged_states_never_panic(flips in proptest::collection::vec((0usize..1 << 16, 0u8..8), 1..8)) {
        let mut console = demo();
        console.run_frame(Default::default());
        let mut state = vec![0; console.snapshot_len()];
        console.save_state_into(&mut state).unwrap();
        let before = console.state_hash();
        for (at, bit) in flips {
            let at = at % state.len();
            state[at] ^= 1 << bit;
        }
        if console.load_state(&state).is_err() {
            proptest::prop_assert_eq!(console.state_hash(), before);
        }
        console.run_frame(Default::default());
    }

    /// Any text given as a Game Genie code decodes or is refused with a reason; never a panic.
    #[test]
    fn any_text_is_a_code_or_an_error(text in "\\PC{0,10}") {
        if let Ok(code) = text.parse::<GameGenieCode>() {
            proptest::prop_assert_eq!(code.to_string().parse::<GameGenieCode>().unwrap(), code);
        }
    }
}

#[test]
fn a_vrc6_roms_expansion_sound_reaches_the_stereo_output() {
    // roms/vrc6/vrc6a.nes keeps the APU silent and plays VRC6 pulse 1 (volume 15) after its checks:
    // everything audible is the board's sound chip, mixed in by the core.
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/vrc6/vrc6a.nes")).unwrap();
    let mut console = Console::new(&rom).unwrap();
    // The first frames carry the output filters' start-up transient (from the APU, present without
    // the VRC6): the checks run meanwhile.
    for _ in 0..5 {
        console.run_frame(Default::default());
    }
    let mut loudest = 0i16;
    for _ in 5..40 {
        console.run_frame(Default::default());
        loudest = loudest.max(console.audio().iter().map(|s| s.saturating_abs()).max().unwrap_or(0));
    }
    // A full-volume APU pulse reaches about 0.15 of full scale; the VRC6's at 15 matches it (0 when
    // the chip's level does not reach the mix).
    assert!(loudest > 2000, "the loudest sample is {loudest}: the VRC6 is not heard");
}

/// Stereo frames of audio a `region` console makes at 48 kHz over `frames` frames, after a warm-up
/// (the resampler's kernel delay and the first, partial frame).
fn audio_frames_at_48_khz(region: Region, frames: usize) -> usize {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let mut console = Console::with_region(&rom, NesConfig::default(), Some(region), Some(48_000.0)).unwrap();
    for _ in 0..10 {
        console.run_frame(FrameInput::default());
    }
    (0..frames)
        .map(|_| {
            console.run_frame(FrameInput::default());
            console.audio().len() / 2
        })
        .sum()
}

/// A second of audio is 48,000 samples at 48 kHz in every region: the core's samples come at the
/// region's CPU clock and are resampled from it. Figures from the nesdev wiki ("Clock rate",
/// "Cycle reference chart"), not from the code: PAL and Dendy run 26.6017125 MHz / (312 x 341 x 5)
/// = 50.0070 frames a second, NTSC 236.25 MHz / 11 / (262 x 341 x 4 - 2) = 60.0988 (the demo
/// renders: every other frame is a dot short).
#[test]
fn a_second_of_audio_is_48000_samples_in_every_region() {
    let pal_frame_seconds: f64 = (312.0 * 341.0 * 5.0) / 26_601_712.5;
    let ntsc_frame_seconds: f64 = (262.0 * 341.0 * 4.0 - 0.5) * 11.0 / 236_250_000.0;
    for (region, frame_seconds) in [
        (Region::Pal, pal_frame_seconds),
        (Region::Dendy, pal_frame_seconds),
        (Region::Ntsc, ntsc_frame_seconds),
    ] {
        // Two seconds' worth of whole frames: 48,000 a second, give or take one at each end for
        // where a frame's last sample falls (measured: within 1 in every region).
        let frames = (2.0 / frame_seconds).round() as usize;
        let expected = 48_000.0 * frames as f64 * frame_seconds;
        let got = audio_frames_at_48_khz(region, frames);
        assert!(
            (got as f64 - expected).abs() <= 2.0,
            "{region}: {got} samples in {frames} frames, expected {expected:.1}"
        );
    }
}

/// A power-on profile makes the same machine in a frontend console as in the core, its power
/// cycles repeat it, and a snapshot carries it into a console built with another.
#[test]
fn a_power_on_profile_is_the_same_machine_in_a_console() {
    use anes_frontend::anes_core::movie::{ConsoleCommand, FrameInput};
    use anes_frontend::anes_core::{Cartridge, Nes, PowerOnProfile};
    let rom =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/poweron/one_vblank.nes")).unwrap();
    for profile in [PowerOnProfile::Default, PowerOnProfile::QuickPowerCycle, PowerOnProfile::Random(5)] {
        let mut console = Console::with_config(&rom, profile.config(), None).unwrap();
        let mut nes = Nes::new(Cartridge::from_ines(&rom).unwrap(), profile.config());
        assert_eq!(console.state_hash(), nes.state_hash(), "{profile}");
        let cycle = FrameInput { pads: [0, 0], command: ConsoleCommand::PowerCycle };
        for input in [FrameInput::default(), cycle, FrameInput::default()] {
            console.run_frame(input);
            nes.run_frame(input);
        }
        assert_eq!(
            (console.state_hash(), console.config()),
            (nes.state_hash(), profile.config()),
            "{profile}"
        );
        let mut state = vec![0; console.snapshot_len()];
        console.save_state_into(&mut state).unwrap();
        let mut other = Console::with_config(&rom, PowerOnProfile::RamFf.config(), None).unwrap();
        other.load_state(&state).unwrap();
        assert_eq!(other.config(), profile.config(), "{profile}");
    }
}
