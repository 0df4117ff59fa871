//! The Namco 163 (mapper 19) and its cost-reduced Namco 175/340 (mapper 210), through our ROMs in
//! `roms/namco/`: the checks they report, their runs under other boards' rules, lazy == eager, a
//! restore mid-frame, the state hash, and the 163's wavetable sound against the wiki's formula.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, Nes, PpuCatchUp, Section};

use super::support::{CHECK_STATUS as STATUS, boot, describe_checks, failed_checks, repo_root, run_checks};
use super::{assert_restore_mid_frame_continues, mean_rising_period, output_hash, record_audio, with_mapper};

/// The checks of `roms/namco/m019_namco163.s`, in its order.
const N163_CHECKS: [&str; 11] = [
    "$E000 selects the 8 KiB bank at $8000 (6 bits)",
    "$E800 selects the 8 KiB bank at $A000 (6 bits)",
    "$F000 selects the 8 KiB bank at $C000 (6 bits); $E000 holds the last",
    "each pattern table register selects every 1 KiB bank ($E800 bits 6-7 set)",
    "the eight pattern table windows are independent",
    "$E0-$FF select nametable RAM in the pattern tables unless $E800 bit 6 (7) is set",
    "$C000-$D800 select each nametable's RAM page",
    "the internal RAM's port, with and without auto-increment, wrapping",
    "$5000/$5800 read the counter: 4 after 4 cycles, 8 after 8, stopped at $7FFF",
    "the IRQ 15 cycles after enabling from $7FF0, not by T0 + 14",
    "PRG RAM write protection by $F800",
];

/// The checks of `roms/namco/m019_namco163_ntrom.s`, in its order.
const N163_NTROM_CHECKS: [&str; 4] = [
    "$C000-$D800 below $E0 select CHR ROM banks",
    "writes to a ROM nametable go nowhere; nametable RAM keeps its byte",
    "ROM and RAM nametables side by side",
    "$E800 bits 6-7 leave the nametable registers alone",
];

fn namco_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/namco/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The failed checks' indices after running `rom`.
fn failures(rom: &[u8], checks: &[&str]) -> Vec<usize> {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    failed_checks(&nes, checks).iter().map(|f| f.0).collect()
}

#[test]
fn the_namco_163_rom_passes_its_checks() {
    let rom = namco_rom("m019_namco163");
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 19);
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &N163_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &N163_CHECKS));
}

#[test]
fn the_namco_163_checks_fail_on_a_namco_340() {
    // The 340 has the PRG and pattern table registers only: no nametable selection, internal RAM,
    // IRQ counter or PRG RAM ($C000-$D800 and $F800 are no registers there).
    let failed = failures(&with_mapper(&namco_rom("m019_namco163"), 210, 2), &N163_CHECKS);
    assert_eq!(failed, [5, 6, 7, 8, 9, 10]);
}

#[test]
fn the_namco_163_rom_runs_the_same_lazy_and_eager() {
    // Its IRQ and counter reads and the sound's phases in the internal RAM run lazily either way;
    // the pictures and every frame's record must agree.
    let mut lazy = boot(&namco_rom("m019_namco163"));
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    for frame in 0..12 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
        assert!(lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(), "frame {frame}");
    }
    assert_eq!(lazy.peek(STATUS), 0, "all checks passed");
}

#[test]
fn a_namco_163_restore_mid_frame_continues_exactly_with_its_sound_owed() {
    // Frame 8: the checks are done and channel 7 plays, its phase written back to the internal RAM
    // lazily; a snapshot within the frame restores into a machine that continues as the original.
    assert_restore_mid_frame_continues(&namco_rom("m019_namco163"), &[FrameInput::default(); 12], 8, 2000);
}

#[test]
fn every_byte_of_the_namco_163_state_feeds_the_hash() {
    let mut nes = boot(&namco_rom("m019_namco163"));
    for _ in 0..8 {
        nes.run_frame(FrameInput::default());
    }
    assert_eq!(nes.section_bytes(Section::Mapper).len(), 152, "Namco163State");
    assert_eq!(every_mapper_bit_feeds_the_hash(&nes), Vec::<usize>::new(), "no reserved bytes");
}

/// Flips every bit of the mapper section in turn, each into a clone of `nes`, and checks that each
/// changes the state hash. Returns the bytes whose flips were refused (reserved, must stay zero).
fn every_mapper_bit_feeds_the_hash(nes: &Nes) -> Vec<usize> {
    let len = nes.section_bytes(Section::Mapper).len();
    let original = nes.state_hash();
    let mut refused = Vec::new();
    for byte in 0..len {
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
    refused
}

#[test]
fn the_namco_163_channel_sounds_at_the_wikis_frequency() {
    // Channel 7 alone (a 16-sample square wave, frequency $F1C) from the end of the checks, the APU
    // silent: the rising zero crossings come at CPU x f / (15 x 65536 x N x length) with N = 1,
    // length 16: 1,789,772.7 x 3868 / 15,728,640 = 440.14 Hz (nesdev "Namco 163 audio").
    let mut nes = boot(&namco_rom("m019_namco163"));
    nes.set_audio_sample_rate(Some(48_000));
    run_checks(&mut nes);
    record_audio(&mut nes, 2);
    let samples = record_audio(&mut nes, 40);
    let period = mean_rising_period(&samples, 250);
    let expected = 48_000.0 / (1_789_772.7 * 3868.0 / (15.0 * 65536.0 * 16.0));
    // A cadence of 16 cycles an update instead of 15 would give 116.3 samples; 2 channels 218.
    assert!((period - expected).abs() < 0.03, "a period of {period:.4} samples, {expected:.4} expected");
}

#[test]
fn the_namco_163_sound_output_matches_its_golden_hash() {
    // The checks, then channel 7: the mixed output's bits over 30 frames. Change only with a
    // reviewed change of the Namco 163 sound or the mixer.
    let mut nes = boot(&namco_rom("m019_namco163"));
    nes.set_audio_sample_rate(Some(48_000));
    let samples = record_audio(&mut nes, 30);
    assert!(samples.iter().any(|&s| s != 0.0), "the 163 plays");
    assert_eq!(output_hash(&samples), "6d19486ec0e6450f5c13050dc2523a09f40dae6523aa8d9967d535c82bef01f1");
}

#[test]
fn the_namco_163_internal_ram_is_the_battery_memory_when_the_header_says_so() {
    // NES 2.0: the battery flag with no PRG-NVRAM declared: the 128 bytes of the chip are saved.
    let mut rom = namco_rom("m019_namco163");
    rom[6] |= 0x02;
    rom[10] = 0x00;
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let saved = nes.cartridge().battery_ram().expect("battery-backed").to_vec();
    assert_eq!(saved.len(), 128);
    assert_eq!(saved[0x11..0x13], [0xA2, 0xA3], "check 7's port writes");
    let mut other = boot(&rom);
    other.load_battery_ram(&saved).expect("same size");
    assert_eq!(other.cartridge().battery_ram().expect("battery-backed"), saved.as_slice());
    // With 8 KiB of PRG-NVRAM declared, that is the battery memory.
    rom[10] = 0x70;
    assert_eq!(boot(&rom).cartridge().battery_ram().map(<[u8]>::len), Some(0x2000));
}

/// The checks of `roms/namco/namco210.inc`, in its order.
const N210_CHECKS: [&str; 6] = [
    "$E000 selects the 8 KiB bank at $8000 (6 bits)",
    "$E800 selects the 8 KiB bank at $A000 (6 bits)",
    "$F000 selects the 8 KiB bank at $C000 (6 bits); $E000 holds the last",
    "each pattern table register selects every 1 KiB bank",
    "mirroring: 175 wired vertical; 340 by $E000 bits 6-7 (page 0, V, page 1, H)",
    "PRG RAM: 175 while $C000 bit 0 is set; 340 none",
];

#[test]
fn the_namco_175_and_340_roms_pass_their_checks_and_fail_on_each_other() {
    for (name, submapper) in [("m210_namco175", 1), ("m210_namco340", 2)] {
        let rom = namco_rom(name);
        let cart = Cartridge::from_ines(&rom).expect("loads");
        let info = cart.info();
        assert_eq!((info.mapper, info.submapper), (210, submapper), "{name}'s header");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, &N210_CHECKS);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, &N210_CHECKS));
        // On the other chip: its mirroring rules differ, and the 340 has no PRG RAM where the 175's
        // header declares some (the 340's declares none, so the 175 has none for it either).
        let other = with_mapper(&rom, 210, 3 - submapper);
        let expected: &[usize] = if submapper == 1 { &[4, 5] } else { &[4] };
        assert_eq!(failures(&other, &N210_CHECKS), expected, "{name} on submapper {}", 3 - submapper);
    }
    // Without a submapper: the 175's RAM, and the 340's mirroring once $E000 bits 6-7 were set,
    // which the 175's program does too (its checks write $40 and more there).
    for name in ["m210_namco175", "m210_namco340"] {
        let failed = failures(&with_mapper(&namco_rom(name), 210, 0), &N210_CHECKS);
        let expected: &[usize] = if name == "m210_namco175" { &[4] } else { &[] };
        assert_eq!(failed, expected, "{name} without a submapper");
    }
}

#[test]
fn every_byte_of_the_namco_175_state_feeds_the_hash() {
    let mut nes = boot(&with_mapper(&namco_rom("m210_namco175"), 210, 0));
    run_checks(&mut nes);
    assert_eq!(nes.section_bytes(Section::Mapper).len(), 16, "Namco175State");
    assert_eq!(every_mapper_bit_feeds_the_hash(&nes), [13, 14, 15], "the reserved bytes");
}

#[test]
fn the_namco_175_and_340_roms_run_the_same_lazy_and_eager() {
    for name in ["m210_namco175", "m210_namco340"] {
        let mut lazy = boot(&namco_rom(name));
        let mut eager = lazy.clone();
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        for frame in 0..6 {
            assert_eq!(
                lazy.run_frame(FrameInput::default()),
                eager.run_frame(FrameInput::default()),
                "{name}: frame {frame}"
            );
        }
        assert_eq!(lazy.peek(STATUS), 0, "{name}: all checks passed");
    }
}

#[test]
fn the_namco_163_sound_run_every_cycle_equals_the_lazy_sound() {
    // Audio output on runs the board every CPU cycle (one update every 15); off, the sound and the
    // IRQ counter catch up in closed form at the board's accesses and the frame's end. The phases
    // the chip writes to its RAM, and so the state hashes, must agree at every frame.
    let rom = namco_rom("m019_namco163");
    let mut every_cycle = boot(&rom);
    every_cycle.set_audio_sample_rate(Some(48_000));
    let mut lazy = boot(&rom);
    for frame in 0..12 {
        let record = every_cycle.run_frame(FrameInput::default());
        assert_eq!(record, lazy.run_frame(FrameInput::default()), "frame {frame}");
    }
    assert_eq!(lazy.peek(STATUS), 0, "all checks passed");
}

#[test]
fn the_namco_163_rom_nametables_pass_their_checks_and_fail_on_a_namco_340() {
    let rom = namco_rom("m019_namco163_ntrom");
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &N163_NTROM_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &N163_NTROM_CHECKS));
    // The 340 has no nametable registers: its CIRAM, mirrored vertically by the $E000 write, takes
    // every nametable access.
    assert_eq!(failures(&with_mapper(&rom, 210, 2), &N163_NTROM_CHECKS), [0, 1, 2, 3]);
}
