//! The Jaleco, Irem and Taito ASIC boards through our ROMs (`roms/asic/`, on `asic.inc`): each ROM's
//! checks pass, fail on another board's rules, run the same on the lazy and eager PPU schedules,
//! continue exactly after a restore inside a frame while a CPU-cycle counter is owed, and every byte
//! of the board's state feeds the state hash.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, PpuCatchUp, Section};

use super::support::{boot, describe_checks, failed_checks, random_input, repo_root, run_checks};
use super::{assert_restore_mid_frame_continues, with_mapper};

/// The checks of `roms/asic/m018_ss88006.s`, in its order.
const SS88006_CHECKS: [&str; 9] = [
    "$8000/1, $8002/3, $9000/1 select the PRG banks at $8000, $A000, $C000; $E000 the last",
    "the eight CHR registers, both nibbles",
    "$F002 mirroring: horizontal, vertical, single-screen 0 and 1",
    "$9002 PRG RAM: read/write, read-only, disabled (open bus)",
    "16-bit counter: reload $0014 asserts /IRQ on T0 + 21",
    "12-bit counter: reload $F014 counts $014 (T0 + 21)",
    "8-bit counter: reload $F10E counts $0E (T0 + 15)",
    "4-bit counter: reload $12F7 counts 7 (T0 + 8)",
    "$F001 acknowledges; a disabled counter holds",
];

/// The checks of `roms/asic/m065_h3001.s`, in its order.
const H3001_CHECKS: [&str; 7] = [
    "power-on: bank 1 at $A000, $3E at $C000, $3F at $E000",
    "$8000 and $A000 select the PRG banks at $8000 and $A000",
    "$9000 bit 7 swaps $8000 and $C000",
    "$B000-$B007 select the eight CHR banks",
    "$9001 mirroring: vertical, horizontal, single-screen page 0 (two settings)",
    "the IRQ: reload 20 asserts /IRQ on T0 + 20",
    "the counter stops at 0 (one IRQ); a reload of 0 asserts nothing",
];

/// The checks of `roms/asic/m033_tc0190.s`, in its order.
const TC0190_CHECKS: [&str; 4] = [
    "$8000 bits 0-5 and $8001 select the PRG banks; the last two fixed",
    "$8002/$8003 2 KiB CHR banks (counted in 2 KiB), $A000-$A003 1 KiB banks",
    "$8000 bit 6 mirroring: vertical, horizontal",
    "registers decoded with mask $A003",
];

/// The checks of `roms/asic/m048_tc0690.s`, in its order.
const TC0690_CHECKS: [&str; 6] = [
    "$8000 (6 bits) and $8001 select the PRG banks; the last two fixed",
    "$8002/$8003 2 KiB CHR banks, $A000-$A003 1 KiB banks",
    "$E000 bit 6 mirroring; $8000 bit 6 a bank bit",
    "the counter: inverted latch 2 raises the IRQ at the third clock; $C003 disables",
    "the IRQ four M2 edges after the clock: three INXs run after it (an MMC3: one)",
    "registers decoded with mask $E003",
];

/// Our ASIC ROMs: file name, mapper, the ROM's check names.
const ASIC_ROMS: [(&str, u16, &[&str]); 4] = [
    ("m018_ss88006", 18, &SS88006_CHECKS),
    ("m065_h3001", 65, &H3001_CHECKS),
    ("m033_tc0190", 33, &TC0190_CHECKS),
    ("m048_tc0690", 48, &TC0690_CHECKS),
];

fn asic_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/asic/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The indexes of the checks of `rom` that did not pass (it must run `checks` of them).
fn failures(rom: &[u8], checks: &[&str]) -> Vec<usize> {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    failed_checks(&nes, checks).iter().map(|f| f.0).collect()
}

#[test]
fn every_asic_rom_passes_its_checks() {
    for (name, mapper, checks) in ASIC_ROMS {
        let rom = asic_rom(name);
        assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, mapper, "{name}'s header");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, checks);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, checks));
    }
}

#[test]
fn the_asic_checks_fail_on_another_boards_rules() {
    // The SS 88006's program on the H3001 (65): its PRG registers sit at $8000/$A000 whole bytes
    // (the nibble pairs land as the last nibble written), no PRG RAM and no $F00x registers.
    let failed = failures(&with_mapper(&asic_rom("m018_ss88006"), 65, 0), &SS88006_CHECKS);
    assert_eq!(failed, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
    // The H3001's program on the SS 88006 (18): whole-byte writes land as nibbles, $9000-$9006 are
    // its PRG and RAM registers, and its counter is not at $900x.
    let failed = failures(&with_mapper(&asic_rom("m065_h3001"), 18, 0), &H3001_CHECKS);
    assert_eq!(failed, [0, 1, 2, 3, 4, 5, 6]);
    // The TC0190's program on the TC0690 (48): $8000 bit 6 is a bank bit there and mirroring sits
    // at $E000 (check 2), and the mask is $E003 ($C001 is the IRQ's, $E002 nothing: check 3).
    let failed = failures(&with_mapper(&asic_rom("m033_tc0190"), 48, 0), &TC0190_CHECKS);
    assert_eq!(failed, [2, 3]);
    // The TC0690's on the TC0190 (33): no IRQ (checks 3, 4), $8000 bit 6 is mirroring (2), and
    // $E004 reaches a CHR register through the mask $A003 (5).
    let failed = failures(&with_mapper(&asic_rom("m048_tc0690"), 33, 0), &TC0690_CHECKS);
    assert_eq!(failed, [2, 3, 4, 5]);
}

#[test]
fn the_asic_roms_run_the_same_lazy_and_eager() {
    // Their checks end with a CPU-cycle counter left running (lazy: owed across frames).
    for (name, _, _) in ASIC_ROMS {
        let mut lazy = boot(&asic_rom(name));
        let mut eager = lazy.clone();
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        for frame in 0..12 {
            assert_eq!(
                lazy.run_frame(FrameInput::default()),
                eager.run_frame(FrameInput::default()),
                "{name}: frame {frame}"
            );
        }
    }
}

#[test]
fn an_asic_restore_mid_frame_continues_exactly() {
    // Saved inside frame 6, past the checks, while the counter the ROM leaves running is owed.
    let frames: Vec<FrameInput> = random_input(11, 9).frames().collect();
    for (name, _, _) in ASIC_ROMS {
        assert_restore_mid_frame_continues(&asic_rom(name), &frames, 6, 5000);
    }
}

#[test]
fn every_byte_of_the_asic_states_feeds_the_hash() {
    // (ROM, state length, where its reserved bytes start: flips there may be refused, as those
    // bytes must stay zero.)
    for (name, len, reserved) in
        [("m018_ss88006", 20, 15), ("m065_h3001", 18, 18), ("m033_tc0190", 8, 8), ("m048_tc0690", 17, 17)]
    {
        let mut nes = boot(&asic_rom(name));
        run_checks(&mut nes);
        let mapper = nes.section_bytes(Section::Mapper).to_vec();
        assert_eq!(mapper.len(), len, "{name}");
        let original = nes.state_hash();
        for byte in 0..len {
            for bit in 0..8 {
                let mut forged = nes.clone();
                if let Err(err) = forged.flip_state_bit(Section::Mapper, byte, bit) {
                    assert!((reserved..reserved + 1).contains(&byte), "{name}: byte {byte} bit {bit}: {err}");
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
