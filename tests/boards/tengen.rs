//! The Tengen RAMBO-1 (mapper 64) through our ROM (`roms/tengen/m064_rambo1.s`, on `asic.inc`): its
//! checks pass, fail on the MMC3's rules, pass on Tengen 800037 (mapper 158) but for mirroring, run the same on the lazy and eager PPU schedules (the board
//! asks for the eager one), continue exactly after a restore inside the checks, and every byte of the
//! board's state feeds the state hash.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, PpuCatchUp, Section};

use super::support::{boot, describe_checks, failed_checks, random_input, repo_root, run_checks};
use super::{assert_restore_mid_frame_continues, with_mapper};

/// The checks of `roms/tengen/m064_rambo1.s`, in its order.
const RAMBO1_CHECKS: [&str; 11] = [
    "PRG mode 0: R6, R7, RF at $8000, $A000, $C000; the last bank at $E000",
    "PRG mode 1: RF at $8000, R7 at $A000, R6 at $C000",
    "CHR 2 KiB mode: R0/R1 2 KiB banks (bit 0 ignored), R2-R5 1 KiB, all eight bits",
    "CHR 1 KiB mode: R0, R8, R1, R9 at $0000-$0C00",
    "CHR A12 inversion in both modes",
    "$A000 bit 0 mirroring: vertical, horizontal",
    "A12 mode: latch 2 after $C001 reloads 3 (IRQ at the fourth clock); then 2 (the seventh)",
    "$E001 does not acknowledge",
    "the A12-mode IRQ two M2 edges after the rise: two INXs run after it (MMC3: one)",
    "cycle mode: latch 4, $C001 on T0: /IRQ on T0 + 25 (delay 20 takes it, 19 does not)",
    "$E000 acknowledges and disables",
];

fn rambo1_rom() -> Vec<u8> {
    let path = repo_root().join("roms/tengen/m064_rambo1.nes");
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The indexes of the checks of `rom` that did not pass.
fn failures(rom: &[u8]) -> Vec<usize> {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    failed_checks(&nes, &RAMBO1_CHECKS).iter().map(|f| f.0).collect()
}

#[test]
fn the_rambo1_rom_passes_its_checks() {
    let rom = rambo1_rom();
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 64);
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &RAMBO1_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &RAMBO1_CHECKS));
}

#[test]
fn the_rambo1_checks_fail_on_the_mmc3s_rules() {
    // On the MMC3 (4): three bank-select bits, so RF, R8 and R9 land in R7, R0 and R1 (0-4); no 1 KiB
    // mode (3, 4); the reload takes the latch as it is (6); /IRQ rises with the clock (8); no cycle
    // mode (9). Mirroring, the $E001 write and the $E000 acknowledge behave alike (5, 7, 10).
    assert_eq!(failures(&with_mapper(&rambo1_rom(), 4, 0)), [0, 1, 2, 3, 4, 6, 8, 9]);
}

#[test]
fn the_rambo1_checks_pass_on_the_tengen_800037_but_for_mirroring() {
    // Mapper 158 is the same chip with CHR A17 as CIRAM A10: $A000 reaches nothing, so the mirroring
    // probe (5) sees each nametable's page from bit 7 of the bank behind it. Everything else,
    // the IRQ to the cycle included, is the RAMBO-1's.
    let rom = with_mapper(&rambo1_rom(), 158, 0);
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 158);
    assert_eq!(failures(&rom), [5]);
}

#[test]
fn the_rambo1_rom_runs_the_same_lazy_and_eager() {
    let mut lazy = boot(&rambo1_rom());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    for frame in 0..12 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
    }
}

#[test]
fn a_rambo1_restore_inside_the_checks_continues_exactly() {
    // Frame 2 runs the checks: the A12 filter, a delayed /IRQ and the prescaler are all state.
    let frames: Vec<FrameInput> = random_input(64, 8).frames().collect();
    for steps in [500, 1500, 3000] {
        assert_restore_mid_frame_continues(&rambo1_rom(), &frames, 2, steps);
    }
}

#[test]
fn every_byte_of_the_rambo1_state_feeds_the_hash() {
    let mut nes = boot(&rambo1_rom());
    run_checks(&mut nes);
    let mapper = nes.section_bytes(Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 28);
    let original = nes.state_hash();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            forged.flip_state_bit(Section::Mapper, byte, bit).expect("no reserved bytes");
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
}
