//! The Taito X1-005 (mappers 80, 207) and X1-017 (82) through our ROMs (`roms/taito/`, on
//! `roms/asic/asic.inc`): each ROM's checks pass, fail on another board's rules, run the same on the
//! lazy and eager PPU schedules, continue exactly after a restore inside a frame, and every byte of
//! the board's state (the X1-005's internal RAM included) feeds the state hash.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, PpuCatchUp, Section};

use super::support::{boot, describe_checks, failed_checks, random_input, repo_root, run_checks};
use super::{assert_restore_mid_frame_continues, with_mapper};

/// The checks of `roms/taito/x1005.inc`, in its order (mapper 80's wording, 207's in brackets).
const X1005_CHECKS: [&str; 6] = [
    "$7EFA/$7EFC/$7EFE (and $7EFB/$7EFD/$7EFF) select the PRG banks; $E000 the last",
    "$7EF0/$7EF1 2 KiB CHR banks, $7EF2-$7EF5 1 KiB banks, 8 bits [207: 7 bits]",
    "$7EF6/$7EF7 bit 0: horizontal, vertical [207: $7EF0/$7EF1 bit 7 select the CIRAM pages]",
    "the 128 bytes at $7F00 (again at $7F80) only while $7EF8/$7EF9 holds $A3",
    "open bus at $6000, $7E00 and the registers",
    "registers decoded at $7EF0-$7EFF only",
];

/// The checks of `roms/taito/m082_x1017.s`, in its order.
const X1017_CHECKS: [&str; 8] = [
    "$7EFA-$7EFC bits 2-5 select the PRG banks; $E000 the last",
    "CHR mode 0: 2 KiB banks at $0000/$0800, 1 KiB banks at $1000-$1C00",
    "CHR mode 1: 1 KiB banks at $0000-$0C00, 2 KiB banks at $1000/$1800",
    "$7EF6 bit 0: horizontal, vertical",
    "$7EF7 = $CA enables $6000-$67FF; else reads 0, writes lost",
    "$7EF8 = $69 enables $6800-$6FFF",
    "$7EF9 = $84 enables $7000-$73FF; $7400-$7FFF reads 0",
    "the three regions are 5 KiB of distinct RAM",
];

/// Our Taito ROMs: file name, mapper, the ROM's check names.
const TAITO_ROMS: [(&str, u16, &[&str]); 3] = [
    ("m080_x1005", 80, &X1005_CHECKS),
    ("m207_x1005", 207, &X1005_CHECKS),
    ("m082_x1017", 82, &X1017_CHECKS),
];

fn taito_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/taito/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The indexes of the checks of `rom` that did not pass.
fn failures(rom: &[u8], checks: &[&str]) -> Vec<usize> {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    failed_checks(&nes, checks).iter().map(|f| f.0).collect()
}

#[test]
fn every_taito_rom_passes_its_checks() {
    for (name, mapper, checks) in TAITO_ROMS {
        let rom = taito_rom(name);
        assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, mapper, "{name}'s header");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, checks);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, checks));
    }
}

#[test]
fn the_taito_checks_fail_on_another_boards_rules() {
    // Mapper 80's program on 207: CHR bit 7 is no bank bit (1), and the nametables follow it, not
    // $7EF6 (2).
    assert_eq!(failures(&with_mapper(&taito_rom("m080_x1005"), 207, 0), &X1005_CHECKS), [1, 2]);
    // Mapper 207's on 80: $7EF0 bit 7 a bank bit again (1: 128 KiB of CHR repeat, but the
    // nametables stay put: 2).
    assert_eq!(failures(&with_mapper(&taito_rom("m207_x1005"), 80, 0), &X1005_CHECKS), [2]);
    // The X1-017's on the X1-005: $7EFA-$7EFC are whole bank numbers there (0), no CHR mode (2, and
    // 3's read of $1000 in mode 1), no RAM regions (4-7: $6000-$7FFF open bus, not RAM or 0).
    assert_eq!(failures(&with_mapper(&taito_rom("m082_x1017"), 80, 0), &X1017_CHECKS), [0, 2, 3, 4, 5, 6, 7]);
    // The X1-005's on the X1-017: PRG bits 2-5 (0), $7EF7 is a RAM enable, not mirroring (2), no
    // 128-byte RAM at $7F00 (3), reads of 0 where open bus was (4).
    assert_eq!(failures(&with_mapper(&taito_rom("m080_x1005"), 82, 0), &X1005_CHECKS), [0, 2, 3, 4]);
}

#[test]
fn the_taito_roms_run_the_same_lazy_and_eager() {
    for (name, _, _) in TAITO_ROMS {
        let mut lazy = boot(&taito_rom(name));
        let mut eager = lazy.clone();
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        for frame in 0..8 {
            assert_eq!(
                lazy.run_frame(FrameInput::default()),
                eager.run_frame(FrameInput::default()),
                "{name}: frame {frame}"
            );
        }
    }
}

#[test]
fn a_taito_restore_mid_frame_continues_exactly() {
    let frames: Vec<FrameInput> = random_input(12, 8).frames().collect();
    for (name, _, _) in TAITO_ROMS {
        assert_restore_mid_frame_continues(&taito_rom(name), &frames, 1, 2000);
    }
}

#[test]
fn every_byte_of_the_taito_states_feeds_the_hash() {
    for (name, len) in [("m080_x1005", 139), ("m207_x1005", 139), ("m082_x1017", 13)] {
        let mut nes = boot(&taito_rom(name));
        run_checks(&mut nes);
        let mapper = nes.section_bytes(Section::Mapper).to_vec();
        assert_eq!(mapper.len(), len, "{name}");
        let original = nes.state_hash();
        for byte in 0..len {
            for bit in 0..8 {
                let mut forged = nes.clone();
                forged.flip_state_bit(Section::Mapper, byte, bit).expect("no reserved bytes");
                assert_ne!(
                    forged.state_hash(),
                    original,
                    "{name}: mapper byte {byte} bit {bit} escapes the hash"
                );
            }
        }
    }
}
