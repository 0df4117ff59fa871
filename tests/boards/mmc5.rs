//! The MMC5's sound (`roms/mmc5/mmc5_audio.s`): its register checks, the pulse's frequency measured
//! from the audio output, the output's golden hash, lazy == eager, and its state in the hash.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{ApuCatchUp, Nes, PpuCatchUp};

use super::{
    STATUS, boot, describe_checks, failed_checks, mean_rising_period, output_hash, record_audio, repo_root,
    run_checks, with_mapper,
};

/// The checks of `roms/mmc5/mmc5_audio.s`, in its order.
const CHECKS: [&str; 5] = [
    "$5015 reads pulse 1's length loaded; pulse 2, disabled, ignores its load",
    "the length counters run at 240 Hz: length 2 runs out within two frames",
    "a halted length counter holds; $5015 = 0 clears it",
    "PCM write mode: $5011 = 0 trips the IRQ, the $5010 read acknowledges",
    "PCM read mode: a 0 read from $8000-$BFFF trips the IRQ and /IRQ reaches the CPU",
];

fn audio_rom() -> Vec<u8> {
    let path = repo_root().join("roms/mmc5/mmc5_audio.nes");
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn the_mmc5_audio_rom_passes_its_checks() {
    let mut nes = boot(&audio_rom());
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &CHECKS);
    assert!(failed.is_empty(), "mmc5_audio.nes:{}", describe_checks(&failed, &CHECKS));
    assert_eq!(nes.peek(STATUS), 0);
}

#[test]
fn the_mmc5_audio_checks_fail_on_a_board_without_the_sound() {
    // The same program on mapper 4 (nothing at $5000-$5FFF: reads are open bus, the $5010 reads
    // $50) must not pass: the checks see the sound's registers, not the bus.
    let mut nes = boot(&with_mapper(&audio_rom(), 4, 0));
    for _ in 0..10 {
        nes.run_frame(FrameInput::default());
    }
    assert_ne!(nes.peek(STATUS), 0, "the checks must not pass without the MMC5");
}

#[test]
fn the_mmc5_pulse_sounds_at_the_wikis_frequency() {
    // Pulse 1 alone (duty 2, period 253) from the checks to frame $40, the APU silent: the
    // output's rising zero crossings come at CPU / (16 x (253 + 1)) = 440.39 Hz (nesdev "APU
    // Pulse"; the MMC5's pulses are the APU's, nesdev "MMC5 audio").
    let mut nes = boot(&audio_rom());
    nes.set_audio_sample_rate(Some(48_000));
    run_checks(&mut nes);
    record_audio(&mut nes, 5);
    let samples = record_audio(&mut nes, 40);
    // The mean period in samples: 48,000 / 440.39 = 108.995 (a period of 16 P cycles would give
    // 109.42, one clocked every CPU cycle instead of every other 54.5).
    let period = mean_rising_period(&samples, 250);
    let expected = 48_000.0 / (1_789_772.7 / (16.0 * 254.0));
    assert!((period - expected).abs() < 0.02, "a period of {period:.4} samples, {expected:.4} expected");
}

#[test]
fn the_mmc5_sound_output_matches_its_golden_hash() {
    // Pulse 1, then from frame $40 pulse 2 and the PCM DAC too: the mixed output's bits over 80
    // frames. Change only with a reviewed change of the MMC5 sound or the mixer.
    let mut nes = boot(&audio_rom());
    nes.set_audio_sample_rate(Some(48_000));
    let samples = record_audio(&mut nes, 80);
    assert!(samples.iter().any(|&s| s != 0.0), "the MMC5 plays");
    assert_eq!(output_hash(&samples), "406158bdf3d04973e6351c05d3d3afafbd0deb25e3537acfd17ab465f6f6d5df");
}

/// Runs `frames` frames of `a` and `b` and asserts their records equal frame by frame.
fn assert_same_run(mut a: Nes, mut b: Nes, frames: usize, what: &str) {
    for frame in 0..frames {
        assert_eq!(
            a.run_frame(FrameInput::default()),
            b.run_frame(FrameInput::default()),
            "{what}: frame {frame}"
        );
    }
}

#[test]
fn the_mmc5_sound_runs_the_same_lazy_and_eager() {
    // The sound catches up in closed form at register accesses and at the 240 Hz clocks while a
    // length counter runs; the PCM read mode runs the board every cycle. Every schedule agrees,
    // with audio output off (the lazy catch-up) and on (the board run every cycle).
    let lazy = boot(&audio_rom());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    eager.set_apu_catch_up(ApuCatchUp::Eager);
    assert_same_run(lazy.clone(), eager, 70, "lazy against eager");
    let mut playing = lazy.clone();
    playing.set_audio_sample_rate(Some(48_000));
    assert_same_run(lazy, playing, 70, "output off against on");
}

#[test]
fn every_byte_of_the_mmc5_sound_state_feeds_the_hash() {
    // Mmc5State's bytes 26-65 are the sound (`Mmc5Audio`), taken while both pulses play.
    let mut nes = boot(&audio_rom());
    for _ in 0..70 {
        nes.run_frame(FrameInput::default());
    }
    let mapper = nes.section_bytes(anes::nes::Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 98, "Mmc5State");
    let original = nes.state_hash();
    let mut refused = Vec::new();
    for byte in 26..66 {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if forged.flip_state_bit(anes::nes::Section::Mapper, byte, bit).is_err() {
                refused.push(byte);
                continue;
            }
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
    refused.dedup();
    // The reserved bytes (each envelope's two, the sound's last) must stay zero.
    assert_eq!(refused, [40, 41, 56, 57, 65]);
}
