//! The Konami VRC7 (mapper 85) through our ROMs `roms/vrc7/vrc7a.nes` and `vrc7b.nes`
//! (`vrc7_test.inc`): banking, mirroring, PRG RAM and the IRQ checked by the ROM against the nesdev
//! wiki, then its FM sound measured from the audio output.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, Nes, PpuCatchUp, Section};

use super::support::{CHECK_STATUS as STATUS, boot, describe_checks, failed_checks, repo_root, run_checks};
use super::{
    as_ines1, assert_restore_mid_frame_continues, mean_rising_period, output_hash, record_audio, with_mapper,
};

/// The checks of `roms/vrc7/vrc7_test.inc`, in its order.
const CHECKS: [&str; 10] = [
    "the $8000 register selects every 8 KiB bank at $8000",
    "the second $8000 register selects every 8 KiB bank at $A000",
    "the $9000 register selects every 8 KiB bank at $C000; $E000 holds the last",
    "each CHR register selects every 1 KiB bank in its window",
    "$E000 mirroring 0: vertical",
    "$E000 mirroring 1: horizontal",
    "$E000 mirroring 2: single-screen page 0",
    "$E000 mirroring 3: single-screen page 1",
    "PRG RAM only with $E000 bit 7 set (open bus without)",
    "IRQ: cycle mode at T0 + 16, scanline mode at T0 + 114",
];

fn vrc7_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/vrc7/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn assert_passes(name: &str, rom: &[u8]) -> Nes {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &CHECKS);
    assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, &CHECKS));
    assert_eq!(nes.peek(STATUS), 0, "{name}");
    nes
}

#[test]
fn every_vrc7_rom_passes_its_checks_with_and_without_a_submapper() {
    for (name, submapper) in [("vrc7a", 2), ("vrc7b", 1)] {
        let rom = vrc7_rom(name);
        let info = Cartridge::from_ines(&rom).expect("loads").info().clone();
        assert_eq!((info.mapper, info.submapper), (85, submapper), "{name}'s header");
        assert_passes(name, &rom);
        // Without a submapper the select sees A3 | A4: both programs run.
        assert_passes(&format!("{name} as iNES 1.0"), &as_ines1(&rom));
    }
}

#[test]
fn each_vrc7_program_fails_on_the_other_wiring() {
    // On the other board the second registers ($x010 on the VRC7a, $x008 on the VRC7b) are the
    // first: the $A000 PRG bank, the odd CHR windows and the IRQ latch and acknowledge (which
    // become $E000 and the IRQ control) fail; the first registers, mirroring and PRG RAM pass.
    for (name, other) in [("vrc7a", 1), ("vrc7b", 2)] {
        let mut nes = boot(&with_mapper(&vrc7_rom(name), 85, other));
        run_checks(&mut nes);
        let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
        assert_eq!(
            failed,
            [1, 3, 9],
            "{name} on 85.{other}: {}",
            describe_checks(&failed_checks(&nes, &CHECKS), &CHECKS)
        );
    }
}

#[test]
fn the_vrc7_rom_runs_the_same_lazy_and_eager_and_with_sound_output_on() {
    // Eager PPU against the lazy schedule, and the board run every cycle (audio output on) against
    // its lazy catch-ups (off): the state hashes agree at every frame, with both channels playing.
    let rom = vrc7_rom("vrc7a");
    let mut lazy = boot(&rom);
    let mut eager = boot(&rom);
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    let mut sounding = boot(&rom);
    sounding.set_audio_sample_rate(Some(48_000));
    for frame in 0..75 {
        let record = lazy.run_frame(FrameInput::default());
        assert_eq!(record, eager.run_frame(FrameInput::default()), "frame {frame}");
        sounding.run_frame(FrameInput::default());
        assert_eq!(sounding.state_hash(), record.state_hash, "frame {frame}, audio output on");
    }
    assert_eq!(lazy.peek(STATUS), 0, "all checks passed");
}

#[test]
fn a_vrc7_restore_mid_frame_continues_exactly_with_its_sound_owed() {
    // Within frame 70 (both channels playing), 2,500 instructions in.
    assert_restore_mid_frame_continues(&vrc7_rom("vrc7a"), &[FrameInput::default(); 80], 70, 2500);
}

#[test]
fn every_byte_of_the_vrc7_state_feeds_the_hash() {
    let mut nes = boot(&vrc7_rom("vrc7b"));
    for _ in 0..70 {
        nes.run_frame(FrameInput::default());
    }
    let mapper = nes.section_bytes(Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 188, "Vrc7State");
    let original = nes.state_hash();
    let mut refused = Vec::new();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if forged.flip_state_bit(Section::Mapper, byte, bit).is_err() {
                refused.push(byte);
                continue;
            }
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
    refused.dedup();
    // Only the reserved bytes, which must stay zero: the board's two after the IRQ counter, the
    // sound's two after its divider, and per channel (from byte 44, 24 each) the one after the
    // instrument and two in each operator.
    let mut reserved = vec![18, 19, 30, 31];
    for channel in 0..6 {
        let base = 44 + 24 * channel;
        reserved.extend([base + 3, base + 14, base + 15, base + 22, base + 23]);
    }
    assert_eq!(refused, reserved);
}

/// The audio output of `frames` frames once the ROM's checks are done and `skip` frames more.
fn sound_after_checks(skip: usize, frames: usize) -> Vec<f32> {
    let mut nes = boot(&vrc7_rom("vrc7a"));
    nes.set_audio_sample_rate(Some(48_000));
    run_checks(&mut nes);
    record_audio(&mut nes, skip);
    record_audio(&mut nes, frames)
}

#[test]
fn the_vrc7_sine_sounds_at_the_f_number_formula() {
    // Channel 0 alone (the APU silent) plays the custom instrument as a sine with F = 290, B = 4
    // until frame $40: f = (CPU / 36) x F / 2^(19 - B) (nesdev "VRC7 audio") = 439.997 Hz. The
    // output's rising zero crossings, 48,000 samples a second, come 109.09 samples apart.
    let samples = sound_after_checks(5, 40);
    let period = mean_rising_period(&samples, 250);
    let frequency = 1_789_772.727 / 36.0 * 290.0 / f64::from(1 << 15);
    let expected = 48_000.0 / frequency;
    assert!((period - expected).abs() < 0.01, "a period of {period:.4} samples, {expected:.4} expected");
    // Full scale (volume 0, no modulation): peak to peak as an APU pulse at volume 15 (the gain
    // of `apu::mixer`), times the output's two one-pole high-passes (90 Hz and 440 Hz, nesdev "APU
    // Mixer") at this frequency: |alpha (1 - z^-1) / (1 - alpha z^-1)| at z = e^(i 2 pi f / 48,000).
    let high_pass = |cutoff: f64| {
        let rc = 1.0 / (2.0 * std::f64::consts::PI * cutoff);
        let alpha = rc / (rc + 1.0 / 48_000.0);
        let w = 2.0 * std::f64::consts::PI * frequency / 48_000.0;
        let numerator = alpha * ((1.0 - w.cos()).powi(2) + w.sin().powi(2)).sqrt();
        numerator / ((1.0 - alpha * w.cos()).powi(2) + (alpha * w.sin()).powi(2)).sqrt()
    };
    let pulse = 95.52 / (8128.0 / 15.0 + 100.0);
    let expected = pulse * high_pass(90.0) * high_pass(440.0);
    let high = samples.iter().cloned().fold(f32::MIN, f32::max);
    let low = samples.iter().cloned().fold(f32::MAX, f32::min);
    let swing = f64::from(high - low);
    assert!((swing / expected - 1.0).abs() < 0.01, "peak to peak {swing:.5}, {expected:.5} expected");
}

#[test]
fn the_vrc7_sound_output_matches_its_golden_hash() {
    // The sine, then from frame $40 also instrument 3 on channel 1: the output's bits over 100
    // frames. Change only with a reviewed change of the VRC7 sound or the mixer.
    let samples = sound_after_checks(0, 100);
    assert!(samples.iter().any(|&s| s != 0.0), "the VRC7 plays");
    assert_eq!(output_hash(&samples), "f6d7aa856f5660efede644dd30b5e755e5cf3d35d469b3d029efd14290a510dd");
}
