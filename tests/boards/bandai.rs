//! The Bandai boards through our ROMs (`roms/bandai/`): the FCG-1/2 and LZ93D50 (mappers 16, 159)
//! with their CPU-cycle IRQ and serial EEPROMs, and the discrete boards 70 and 152.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{PpuCatchUp, Section};

use super::support::{CHECK_STATUS as STATUS, boot, random_input, repo_root, run_checks};
use super::{as_ines1, assert_restore_mid_frame_continues, discrete_failures, with_mapper};

fn bandai_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/bandai/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Our Bandai ROMs and their numbers of checks (see `roms/bandai/bandai.inc` and the discrete
/// boards' sources).
const BANDAI_ROMS: [(&str, usize); 6] = [
    ("m016_lz93d50", 8),
    ("m159_lz93d50", 8),
    ("m016_fcg", 5),
    ("m153_bandai", 2),
    ("m070_bandai", 2),
    ("m152_bandai", 3),
];

/// Where `roms/bandai/bandai.inc` leaves the EEPROM's byte at $20 as it found it.
const SAVED_BYTE: u16 = 0x0760;

#[test]
fn every_bandai_rom_passes_its_checks() {
    for (name, checks) in BANDAI_ROMS {
        let failed = discrete_failures(name, &bandai_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
}

#[test]
fn without_a_submapper_mapper_16_answers_in_both_ranges() {
    // iNES 1.0 (submapper 0): the FCG-1/2's registers at $6000 with its IRQ rules, the LZ93D50's at
    // $8000 with its latch, and the 24C02 where the battery flag is set.
    for (name, checks) in [("m016_fcg", 5), ("m016_lz93d50", 8)] {
        let failed = discrete_failures(name, &as_ines1(&bandai_rom(name)), checks);
        assert!(failed.is_empty(), "{name} as iNES 1.0: checks {failed:?} failed");
    }
}

#[test]
fn the_bandai_checks_fail_on_another_boards_rules() {
    // The 24C02 program on the X24C01 (mapper 159): its device byte $A0 is taken as address $50 to
    // write, so the writes are acknowledged (5) but the reads find other bytes (6, 7).
    let failed = discrete_failures("16 as 159", &with_mapper(&bandai_rom("m016_lz93d50"), 159, 0), 8);
    assert_eq!(failed, [6, 7]);
    // The X24C01 program on the 24C02: its first byte is no device address: nothing acknowledged.
    let failed = discrete_failures("159 as 16.5", &with_mapper(&bandai_rom("m159_lz93d50"), 16, 5), 8);
    assert_eq!(failed, [5, 6, 7]);
    // The FCG-1/2 program on the LZ93D50 (16.5): nothing answers at $6000 (the ack-reload check 4
    // passes for want of any IRQ).
    let failed = discrete_failures("16.4 as 16.5", &with_mapper(&bandai_rom("m016_fcg"), 16, 5), 5);
    assert_eq!(failed, [0, 1, 2, 3]);
    // Mapper 153's program on 16.5: no PRG A18 from the CHR registers (0), no RAM at $6000 (1).
    let failed = discrete_failures("153 as 16.5", &with_mapper(&bandai_rom("m153_bandai"), 16, 5), 2);
    assert_eq!(failed, [0, 1]);
    // Mapper 152's program on mapper 70: wired mirroring (2); mapper 70's on 152: 3-bit PRG (0).
    let failed = discrete_failures("152 as 70", &with_mapper(&bandai_rom("m152_bandai"), 70, 0), 3);
    assert_eq!(failed, [2]);
    let failed = discrete_failures("70 as 152", &with_mapper(&bandai_rom("m070_bandai"), 152, 0), 2);
    assert_eq!(failed, [0]);
}

#[test]
fn the_bandai_roms_run_the_same_lazy_and_eager() {
    // The IRQ counter runs lazily and is predicted; the eager PPU schedule must see the same.
    for name in ["m016_lz93d50", "m016_fcg", "m159_lz93d50"] {
        let mut lazy = boot(&bandai_rom(name));
        let mut eager = lazy.clone();
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        for frame in 0..8 {
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
fn a_bandai_restore_mid_frame_continues_exactly() {
    // Frame 2 holds the checks: the IRQ probes and the EEPROM traffic; 2500 instructions in, the
    // checks are under way.
    let frames: Vec<FrameInput> = random_input(11, 6).frames().collect();
    assert_restore_mid_frame_continues(&bandai_rom("m016_lz93d50"), &frames, 2, 2500);
}

#[test]
fn every_byte_of_the_bandai_state_feeds_the_hash() {
    // BandaiFcgState: 18 bytes of registers (the last reserved), then the EEPROM: 256 bytes of
    // memory, its 7 bus-state bytes and a reserved one.
    let mut nes = boot(&bandai_rom("m016_lz93d50"));
    run_checks(&mut nes);
    let mapper = nes.section_bytes(Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 282, "BandaiFcgState");
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
    assert_eq!(refused, [17, 281], "only the reserved bytes must stay zero");
}

#[test]
fn the_eeprom_survives_a_save_and_load_as_battery_data() {
    for (name, len) in [("m016_lz93d50", 256), ("m159_lz93d50", 128)] {
        let rom = bandai_rom(name);
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let saved = nes.cartridge().battery_ram().expect("the EEPROM is the battery save").to_vec();
        assert_eq!(saved.len(), len, "{name}");
        assert_eq!(&saved[0x10..0x14], &[0xC3, 0x5A, 0xA5, 0x3C], "{name}: written over I2C");
        assert!(nes.cartridge().prg_ram().is_empty(), "{name}: no RAM at $6000 besides");
        // A later session: the save loaded, the program reads back address $20 through I2C.
        let mut save = saved.clone();
        save[0x20] = 0x77;
        let mut next = boot(&rom);
        next.load_battery_ram(&save).expect("same size");
        run_checks(&mut next);
        assert_eq!(next.peek(SAVED_BYTE), 0x77, "{name}: the saved byte read back");
        assert_eq!(next.cartridge().battery_ram().map(|ram| ram[0x20]), Some(0x77));
        // A power cycle keeps it too (as battery-backed RAM).
        next.power_cycle();
        assert_eq!(next.cartridge().battery_ram().map(|ram| ram[0x20]), Some(0x77), "{name}");
        assert!(next.load_battery_ram(&save[..len - 1]).is_err(), "{name}: a wrong size is refused");
    }
}
