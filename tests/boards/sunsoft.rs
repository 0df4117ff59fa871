//! The Sunsoft boards through our ROMs (`roms/sunsoft/`): mapper 69 (FME-7 / 5B) with its IRQ to the
//! cycle and the 5B's sound measured from the audio output.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{ApuCatchUp, Cartridge, Nes, NesConfig, PpuCatchUp, Section};

use super::support::{boot, describe_checks, failed_checks, repo_root, run_checks};
use super::{assert_restore_mid_frame_continues, mean_rising_period, output_hash, record_audio};

fn sunsoft_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/sunsoft/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The checks of `roms/sunsoft/m069_fme7.s`, in its order.
const FME7_CHECKS: [&str; 9] = [
    "commands $9-$B select the 8 KiB banks at $8000-$C000; $E000 holds the last",
    "command $8, bit 6 clear: ROM banks at $6000",
    "command $8 = $C0: PRG RAM; $40: open bus, writes lost",
    "commands $0-$7 select each 1 KiB CHR window's bank",
    "command $C: vertical, horizontal, single-screen 0 and 1",
    "IRQ from counter 15: at T0 + 16, not before",
    "IRQ from counter $0100: at T0 + 257, not before",
    "a wrap with T clear asserts nothing (nor T set after it); T alone does not count",
    "/IRQ held until a $D write; a $D write acknowledges",
];

#[test]
fn the_fme7_rom_passes_its_checks() {
    let rom = sunsoft_rom("m069_fme7");
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 69);
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &FME7_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &FME7_CHECKS));
}

#[test]
fn the_fme7_checks_fail_on_another_boards_rules() {
    // Without PRG RAM (NES 2.0 byte 10 = 0), $6000 with RAM enabled reads open bus: check 2 only.
    let mut rom = sunsoft_rom("m069_fme7");
    rom[10] = 0;
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &FME7_CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(failed, [2], "{}", describe_checks(&failed_checks(&nes, &FME7_CHECKS), &FME7_CHECKS));
    // As the VRC3 (mapper 73: 16 KiB banks at $F000, an up-counting IRQ): the banking, $6000 ROM,
    // CHR, mirroring and IRQ checks fail; the 5B-less $C000-$FFFF writes land in VRC3 registers.
    let mut nes = boot(&super::with_mapper(&sunsoft_rom("m069_fme7"), 73, 0));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &FME7_CHECKS).iter().map(|f| f.0).collect();
    assert!(failed.len() >= 5, "{failed:?}");
}

#[test]
fn the_fme7_rom_runs_the_same_lazy_and_eager() {
    // The IRQ counter and the 5B run lazily; the eager PPU and APU schedules take every cycle.
    let rom = sunsoft_rom("m069_fme7");
    let mut lazy = Nes::new(Cartridge::from_ines(&rom).expect("loads"), NesConfig::default());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    eager.set_apu_catch_up(ApuCatchUp::Eager);
    for frame in 0..80 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
    }
}

#[test]
fn an_fme7_restore_mid_frame_continues_exactly_with_its_counter_and_sound_owed() {
    // Frame 70: all three 5B channels play (tone, envelope, noise), the counter state from the checks.
    assert_restore_mid_frame_continues(&sunsoft_rom("m069_fme7"), &[FrameInput::default(); 80], 70, 2500);
}

#[test]
fn every_byte_of_the_fme7_state_feeds_the_hash() {
    let mut nes = boot(&sunsoft_rom("m069_fme7"));
    for _ in 0..70 {
        nes.run_frame(FrameInput::default());
    }
    let mapper = nes.section_bytes(Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 56, "Fme7State");
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
    // Only the reserved bytes (after the IRQ counter) must stay zero.
    assert_eq!(refused, [18, 19]);
}

#[test]
fn the_5b_tone_sounds_at_the_wikis_frequency() {
    // After its checks the ROM plays channel A alone (period 127, volume 15) to frame $40, the APU
    // silent: the output's rising zero crossings come at CPU / (32 x 127) = 440.40 Hz (nesdev
    // "Sunsoft 5B audio": no + 1 on the period, unlike the APU and VRC6).
    let mut nes = boot(&sunsoft_rom("m069_fme7"));
    nes.set_audio_sample_rate(Some(48_000));
    run_checks(&mut nes);
    record_audio(&mut nes, 5);
    let samples = record_audio(&mut nes, 45);
    // 48,000 / 440.40 = 108.99 samples (a period of 32 (P + 1) cycles would give 109.85, 16 P 54.5).
    let period = mean_rising_period(&samples, 300);
    let expected = 48_000.0 / (1_789_772.7 / (32.0 * 127.0));
    assert!((period - expected).abs() < 0.02, "a period of {period:.4} samples, {expected:.4} expected");
}

#[test]
fn the_5b_sound_output_matches_its_golden_hash() {
    // Channel A, then from frame $40 the envelope on B and the noise on C: the mixed output's bits
    // over 100 frames. Change only with a reviewed change of the 5B sound or the mixer.
    let mut nes = boot(&sunsoft_rom("m069_fme7"));
    nes.set_audio_sample_rate(Some(48_000));
    let samples = record_audio(&mut nes, 100);
    assert!(samples.iter().any(|&s| s != 0.0), "the 5B plays");
    assert_eq!(output_hash(&samples), "deb14985c1561202042b4359ead29fa4c2ce29b27f7bc47156a090fb313a4fe4");
}

/// The small Sunsoft boards' ROMs (on `roms/discrete/discrete.inc`) and their numbers of checks.
const DISCRETE_SUNSOFT_ROMS: [(&str, usize); 3] =
    [("m089_sunsoft2", 4), ("m093_sunsoft2_3r", 4), ("m184_sunsoft1", 4)];

#[test]
fn the_small_sunsoft_boards_pass_their_checks() {
    for (name, checks) in DISCRETE_SUNSOFT_ROMS {
        let failed = super::discrete_failures(name, &sunsoft_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
}

#[test]
fn the_small_sunsoft_checks_fail_on_another_boards_rules() {
    // Mapper 89's program on mapper 93: no CHR banking (8 KiB of ROM at bank 0) nor single-screen
    // mirroring: checks 1 and 2 (and the conflict's CHR bank, 3); and its values with bit 0 clear
    // disable the CHR, which check 0 reads: all four.
    let failed =
        super::discrete_failures("89 as 93", &super::with_mapper(&sunsoft_rom("m089_sunsoft2"), 93, 0), 4);
    assert_eq!(failed, [0, 1, 2, 3]);
    // Mapper 93's on mapper 89: bits 0-2 bank CHR (here 8 KiB of RAM, one bank) and bit 3 the
    // mirroring; the PRG bits are the same, but no bit disables the CHR RAM: checks 2 and 3 fail.
    // Mapper 184's on 140 (JF-11, also a register at $6000): 8 KiB CHR banks and 32 KiB PRG banks
    // from the same bits: checks 0-2 fail.
    let failed =
        super::discrete_failures("93 as 89", &super::with_mapper(&sunsoft_rom("m093_sunsoft2_3r"), 89, 0), 4);
    assert_eq!(failed, [2, 3]);
    let failed =
        super::discrete_failures("184 as 140", &super::with_mapper(&sunsoft_rom("m184_sunsoft1"), 140, 0), 4);
    assert_eq!(failed, [0, 1, 2]);
}

/// The checks of `roms/sunsoft/m067_sunsoft3.s`, in its order.
const SUNSOFT3_CHECKS: [&str; 8] = [
    "$F800 selects the 16 KiB bank at $8000; $C000 holds the last",
    "$8800-$B800 select the 2 KiB CHR banks",
    "$E800: vertical, horizontal, single-screen 0 and 1",
    "IRQ from counter 15: at T0 + 16, not before",
    "IRQ from counter $0100 (high byte first): at T0 + 257, not before",
    "a $D800 write resets the $C800 toggle",
    "/IRQ held until a $8000 write; a $8000 write acknowledges",
    "PRG RAM at $6000-$7FFF",
];

#[test]
fn the_sunsoft3_rom_passes_its_checks_and_fails_on_the_fme7s_rules() {
    let rom = sunsoft_rom("m067_sunsoft3");
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &SUNSOFT3_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &SUNSOFT3_CHECKS));
    // As an FME-7 (mapper 69), another 16-bit down-counter with other registers: all but PRG RAM
    // fail.
    let mut nes = boot(&super::with_mapper(&rom, 69, 0));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &SUNSOFT3_CHECKS).iter().map(|f| f.0).collect();
    assert!(failed.len() >= 5, "{failed:?}");
}

#[test]
fn the_sunsoft3_rom_runs_the_same_lazy_and_eager_and_restores_mid_frame() {
    let rom = sunsoft_rom("m067_sunsoft3");
    let mut lazy = Nes::new(Cartridge::from_ines(&rom).expect("loads"), NesConfig::default());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    eager.set_apu_catch_up(ApuCatchUp::Eager);
    for frame in 0..10 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
    }
    // Frame 2 runs the IRQ probes.
    assert_restore_mid_frame_continues(&rom, &[FrameInput::default(); 6], 2, 3000);
}

/// The checks of `roms/sunsoft/m068_sunsoft4.s`, in its order.
const SUNSOFT4_CHECKS: [&str; 7] = [
    "$F000 selects the 16 KiB bank at $8000; $C000 holds the last",
    "$8000-$B000 select the 2 KiB CHR banks",
    "$E000 bit 4 clear: CIRAM vertical, horizontal, single-screen 0 and 1",
    "$E000 bit 4 set: $C000/$D000 select CHR ROM banks $80-$FF for pages 0/1, vertical",
    "ROM nametables horizontal and single-screen",
    "writes to ROM nametables go nowhere; CIRAM keeps its bytes",
    "$F000 bit 4 enables PRG RAM (open bus and lost writes without)",
];

#[test]
fn the_sunsoft4_rom_passes_its_checks_and_fails_on_the_sunsoft3s_rules() {
    let rom = sunsoft_rom("m068_sunsoft4");
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 68);
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &SUNSOFT4_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &SUNSOFT4_CHECKS));
    // As a Sunsoft-3 (mapper 67: registers at $x800 only, PRG RAM always on, no ROM nametables):
    // none of the writes at $x000 reaches a register, so every check fails.
    let mut nes = boot(&super::with_mapper(&rom, 67, 0));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &SUNSOFT4_CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(failed, [0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn the_sunsoft4_rom_runs_the_same_lazy_and_eager_and_restores_mid_frame() {
    // It ends rendering from ROM nametables: the pictures must agree too.
    let rom = sunsoft_rom("m068_sunsoft4");
    let mut lazy = Nes::new(Cartridge::from_ines(&rom).expect("loads"), NesConfig::default());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    for frame in 0..10 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
        assert!(lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(), "frame {frame}");
    }
    // Frame 7 renders through the ROM nametables the registers select.
    assert_restore_mid_frame_continues(&rom, &[FrameInput::default(); 10], 7, 3000);
}

#[test]
fn every_byte_of_the_small_sunsoft_states_feeds_the_hash() {
    // (ROM, state length, where its reserved bytes start.)
    for (name, len, reserved) in [
        ("m067_sunsoft3", 12, 11),
        ("m068_sunsoft4", 8, 8),
        ("m089_sunsoft2", 1, 1),
        ("m093_sunsoft2_3r", 1, 1),
        ("m184_sunsoft1", 1, 1),
    ] {
        let mut nes = boot(&sunsoft_rom(name));
        run_checks(&mut nes);
        let mapper = nes.section_bytes(Section::Mapper).to_vec();
        assert_eq!(mapper.len(), len, "{name}");
        let original = nes.state_hash();
        for byte in 0..len {
            for bit in 0..8 {
                let mut forged = nes.clone();
                if let Err(err) = forged.flip_state_bit(Section::Mapper, byte, bit) {
                    assert!(byte >= reserved, "{name}: mapper byte {byte} bit {bit}: {err}");
                    continue;
                }
                assert_ne!(
                    forged.state_hash(),
                    original,
                    "{name}: mapper byte {byte} bit {bit} escapes the hash"
                );
            }
        }
    }
}
