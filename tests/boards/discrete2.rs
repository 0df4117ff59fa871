//! The Irem, Jaleco and Taito discrete boards (issue 26) through our ca65 ROMs in `roms/discrete/`
//! (the check engine of `discrete.inc`; each ROM's source says what it expects, from the nesdev
//! wiki): mappers 32 (and 32.1), 78.1 and 78.3, 86, 87, 92 and 97, UNROM 512 (30.1, 30.2) and Action 53 (28). (The ROMs also run in
//! `tests/ppu_schedule.rs` (lazy == eager), `tests/determinism.rs` and `tests/alloc_free.rs`, which
//! take every ROM under `roms/`.)

use anes::harness::Harness;

use super::{as_ines1, boot, discrete_failures, discrete_rom, run_checks, with_mapper};

/// Our ROMs and their numbers of checks.
const ROMS: [(&str, usize); 8] = [
    ("m032_g101", 5),
    ("m032_major_league", 5),
    ("m078_cosmo_carrier", 4),
    ("m078_holy_diver", 4),
    ("m086_jf13", 5),
    ("m087_jf05", 4),
    ("m092_jf19", 4),
    ("m097_tam_s1", 4),
];

#[test]
fn every_irem_jaleco_rom_passes_its_checks() {
    for (name, checks) in ROMS {
        let failed = discrete_failures(name, &discrete_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
}

#[test]
fn the_irem_jaleco_checks_fail_on_another_boards_rules() {
    // (ROM, header it runs under, checks expected to fail).
    let cases: [(&str, u16, u8, &[usize]); 8] = [
        // G-101 on Major League's wiring and back: the PRG mode (2) and the nametables (4).
        ("m032_g101", 32, 1, &[2, 4]),
        ("m032_major_league", 32, 0, &[2, 4]),
        // The two mapper 78 wirings swapped: only the nametables (3).
        ("m078_cosmo_carrier", 78, 3, &[3]),
        ("m078_holy_diver", 78, 1, &[3]),
        // JF-13 read as JF-11 (bits 0-3 CHR in order, $7000-$7FFF decodes): CHR (1) and the
        // speech port (2).
        ("m086_jf13", 140, 0, &[1, 2]),
        // The swapped CHR bits read in order (JF-11's CHR bits 0-3): checks 0 and 1.
        ("m087_jf05", 140, 0, &[0, 1]),
        // JF-19 as UNROM (the last bank fixed at $C000, CHR fixed): no CHR latch (0), no PRG latch
        // (2), and checks 1 and 3, which expect the bank check 2 latched, fail with it.
        ("m092_jf19", 2, 0, &[0, 1, 2, 3]),
        // TAM-S1 as UNROM ($8000 switchable, $C000 fixed, the register at $8000-$FFFF, wired
        // mirroring): every check.
        ("m097_tam_s1", 2, 0, &[0, 1, 2, 3]),
    ];
    for (name, mapper, submapper, expected) in cases {
        let checks = ROMS.iter().find(|(rom, _)| *rom == name).expect("listed").1;
        let failed = discrete_failures(name, &with_mapper(&discrete_rom(name), mapper, submapper), checks);
        assert_eq!(failed, expected, "{name} as {mapper}.{submapper}");
    }
}

#[test]
fn mapper_78_without_a_submapper_goes_by_the_four_screen_flag() {
    // iNES 1.0 dumps of Holy Diver set the four-screen flag; Cosmo Carrier's leave it clear.
    let mut holy_diver = as_ines1(&discrete_rom("m078_holy_diver"));
    holy_diver[6] |= 0x08;
    assert_eq!(discrete_failures("78 four-screen", &holy_diver, 4), [] as [usize; 0]);
    let cosmo_carrier = as_ines1(&discrete_rom("m078_cosmo_carrier"));
    assert_eq!(discrete_failures("78 two-screen", &cosmo_carrier, 4), [] as [usize; 0]);
    // And the other way round, each board's nametable check fails.
    let mut cosmo_as_holy = cosmo_carrier.clone();
    cosmo_as_holy[6] |= 0x08;
    assert_eq!(discrete_failures("cosmo as four-screen", &cosmo_as_holy, 4), [3]);
}

#[test]
fn every_byte_of_the_irem_jaleco_states_feeds_the_hash() {
    // (ROM, state length, where its reserved bytes start).
    let layouts = [
        ("m032_g101", 12, 11), // G101State
        ("m078_holy_diver", 1, 1),
        ("m086_jf13", 1, 1),
        ("m087_jf05", 1, 1),
        ("m092_jf19", 3, 3),
        ("m097_tam_s1", 1, 1),
        ("m030_unrom512", 1, 1),
        ("m030_unrom512_flash", 3, 3), // the register and the flash's command state
        ("m028_action53", 5, 5),
    ];
    for (name, len, reserved) in layouts {
        let mut nes = boot(&discrete_rom(name));
        run_checks(&mut nes);
        let mapper = nes.section_bytes(anes::nes::Section::Mapper).to_vec();
        assert_eq!(mapper.len(), len, "{name}");
        let original = nes.state_hash();
        for byte in 0..len {
            for bit in 0..8 {
                let mut forged = nes.clone();
                if let Err(err) = forged.flip_state_bit(anes::nes::Section::Mapper, byte, bit) {
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

#[test]
fn the_unrom_512_roms_pass_their_checks_and_fail_on_each_others_wiring() {
    for (name, checks) in [("m030_unrom512", 5), ("m030_unrom512_flash", 9)] {
        let failed = discrete_failures(name, &discrete_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
    // The one-screen, bus-conflict board's program on submapper 1 (no bus conflicts): check 2.
    let failed = discrete_failures("30.2 as 30.1", &with_mapper(&discrete_rom("m030_unrom512"), 30, 1), 5);
    assert_eq!(failed, [2]);
    // The self-flashable board's program with the battery bit cleared: the register answers at
    // $8000-$BFFF again (check 4), and submapper 1 keeps it free of bus conflicts; no flash to
    // program (5-8, `flash.rs`).
    let mut no_battery = discrete_rom("m030_unrom512_flash");
    no_battery[6] &= !0x02;
    assert_eq!(discrete_failures("30.1 without battery", &no_battery, 9), [4, 5, 6, 7, 8]);
    // Submapper 3 switches H/V by a register bit this board does not model: refused, not guessed.
    assert!(anes::nes::Cartridge::from_ines(&with_mapper(&discrete_rom("m030_unrom512"), 30, 3)).is_err());
}

#[test]
fn the_action_53_rom_passes_its_checks_and_fails_as_unrom_512() {
    let failed = discrete_failures("m028_action53", &discrete_rom("m028_action53"), 5);
    assert!(failed.is_empty(), "m028_action53: checks {failed:?} failed (see the ROM's source)");
    // As UNROM 512 (30.1: every write to $8000-$FFFF is the one bank register, the last 16 KiB
    // fixed, wired nametables): no register select, no outer bank, no PRG modes.
    let failed = discrete_failures("28 as 30.1", &with_mapper(&discrete_rom("m028_action53"), 30, 1), 5);
    assert_eq!(failed, [0, 1, 2, 3, 4]);
}
