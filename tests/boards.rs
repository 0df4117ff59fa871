//! The boards beyond the original set, through ROMs: our ca65 VRC2/VRC4 test ROMs (`roms/vrc/`) and
//! discrete-board test ROMs (`roms/discrete/`), with expectations written into them from the nesdev
//! wiki and results reported in CPU RAM; and the public VRC2a CHR banking test
//! (`../shared/boards/m22chrbankingtest/`), whose source says what its screen shows. (Every ROM under `roms/` also runs in `tests/ppu_schedule.rs` (lazy == eager),
//! `tests/determinism.rs` and `tests/alloc_free.rs`.)

mod support;

use std::path::PathBuf;

use anes::core::movie::FrameInput;
use anes::core::{Cartridge, Nes, NesConfig, PpuCatchUp};
use support::{
    CHECK_CODE as CODE, CHECK_COUNT as COUNT, CHECK_STATUS as STATUS, boot, describe_checks, failed_checks,
    random_input, repo_root, run_checks,
};

/// The checks of `roms/vrc/vrc_test.inc`, in its order.
const CHECKS: [&str; 19] = [
    "the $8000 PRG register selects every 8 KiB bank (5 bits)",
    "the $A000 PRG register selects every 8 KiB bank",
    "$C000 holds the second-last bank, $E000 the last",
    "PRG swap mode (VRC4: second-last bank at $8000, the register's at $C000; VRC2: none)",
    "each CHR register selects every 1 KiB bank, both nibbles",
    "the eight CHR windows are independent",
    "mirroring 0: vertical",
    "mirroring 1: horizontal",
    "mirroring 2: single-screen page 0 (VRC2: vertical)",
    "mirroring 3: single-screen page 1 (VRC2: horizontal)",
    "cycle mode, latch $F0: no IRQ by T0 + 15",
    "cycle mode, latch $F0: the IRQ at T0 + 16",
    "cycle mode, latch $00: the IRQ at T0 + 256, not before",
    "scanline mode, latch $FF: the IRQ at T0 + 114, not before",
    "scanline mode, latch $FE: the IRQ at T0 + 228, not before",
    "scanline mode, latch $FD: the IRQ at T0 + 341, not before",
    "A set: the acknowledge keeps the IRQ enabled (3 IRQs in about 890 cycles)",
    "A clear: the acknowledge disables it (1 IRQ)",
    "$6000-$7FFF: VRC4 PRG RAM; VRC2 without RAM: the 1-bit latch at $6000-$6FFF, open bus above",
];

/// Our VRC ROMs: file name, iNES mapper, NES 2.0 submapper.
const VRC_ROMS: [(&str, u16, u8); 4] =
    [("vrc4e", 23, 2), ("vrc4c", 21, 2), ("vrc4d", 25, 2), ("vrc2b", 23, 3)];

fn vrc_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/vrc/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Our discrete-board ROMs (`roms/discrete/NAME.nes`) and their numbers of checks.
const DISCRETE_ROMS: [(&str, usize); 10] = [
    ("m013_cprom", 3),
    ("m034_bnrom", 2),
    ("m034_nina001", 4),
    ("m079_nina03", 3),
    ("m094_un1rom", 2),
    ("m113_nina06", 3),
    ("m140_jf11", 4),
    ("m180_unrom", 2),
    ("m185_cnrom", 4),
    ("m232_quattro", 3),
];

/// Our MMC3-, MMC1- and Namco 108-family ROMs and GTROM's (`roms/mmc3fam/NAME.nes`) and their numbers
/// of checks.
const MMC3_FAMILY_ROMS: [(&str, usize); 10] = [
    ("m004_big_prg", 4),
    ("m076_namcot3446", 4),
    ("m088_namcot3443", 4),
    ("m095_namcot3425", 5),
    ("m111_gtrom", 5),
    ("m118_txsrom", 6),
    ("m119_tqrom", 6),
    ("m154_namcot3453", 5),
    ("m155_mmc1a", 5),
    ("m206_dxrom", 6),
];

fn mmc3_family_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/mmc3fam/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn every_mmc3_family_rom_passes_its_checks() {
    for (name, checks) in MMC3_FAMILY_ROMS {
        let failed = discrete_failures(name, &mmc3_family_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
}

#[test]
fn the_mmc1a_checks_fail_on_the_mmc1b() {
    // As mapper 1 (MMC1B), PRG bank bit 4 disables the RAM (check 2) and bit 3 leaves the fixed
    // banks alone (0: bank 15 at $C000, 3: bank 0 at $8000). Check 1 sets bit 3, where the fixed
    // bank 15 has A17 high anyway, and check 4 clears bit 4: the chips agree there.
    let failed = discrete_failures("155 as 1", &with_mapper(&mmc3_family_rom("m155_mmc1a"), 1, 0), 5);
    assert_eq!(failed, [0, 2, 3]);
}

#[test]
fn the_namco_108_checks_fail_on_another_boards_rules() {
    // Mapper 88's ROM on DxROM (206): R2-R5 bank in the first 64 KiB (check 3).
    let failed = discrete_failures("88 as 206", &with_mapper(&mmc3_family_rom("m088_namcot3443"), 206, 0), 4);
    assert_eq!(failed, [3]);
    // Mapper 154's on mapper 88: the header's vertical mirroring, not the single-screen bit (3, 4).
    let failed = discrete_failures("154 as 88", &with_mapper(&mmc3_family_rom("m154_namcot3453"), 88, 0), 5);
    assert_eq!(failed, [3, 4]);
    // Mapper 95's on DxROM: vertical mirroring, not R0/R1 bit 5 (2, 3, 4).
    let failed = discrete_failures("95 as 206", &with_mapper(&mmc3_family_rom("m095_namcot3425"), 206, 0), 5);
    assert_eq!(failed, [2, 3, 4]);
}

fn discrete_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/discrete/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Runs `rom` until it reports, and returns the indexes of its checks that did not pass, after
/// checking it ran `checks` of them.
fn discrete_failures(name: &str, rom: &[u8], checks: usize) -> Vec<usize> {
    let mut nes = boot(rom);
    run_checks(&mut nes);
    assert_eq!(usize::from(nes.peek(COUNT)), checks, "{name}: number of checks");
    (0..checks).filter(|&i| nes.peek(CODE + i as u16) != 0).collect()
}

#[test]
fn every_discrete_board_rom_passes_its_checks() {
    for (name, checks) in DISCRETE_ROMS {
        let failed = discrete_failures(name, &discrete_rom(name), checks);
        assert!(failed.is_empty(), "{name}: checks {failed:?} failed (see the ROM's source)");
    }
}

#[test]
fn mapper_34_without_a_submapper_goes_by_chr_size() {
    // iNES 1.0: NINA-001 has more than 8 KiB of CHR ROM, BNROM CHR RAM.
    for (name, checks) in [("m034_nina001", 4), ("m034_bnrom", 2)] {
        let failed = discrete_failures(name, &as_ines1(&discrete_rom(name)), checks);
        assert!(failed.is_empty(), "{name} as iNES 1.0: checks {failed:?} failed");
    }
}

#[test]
fn the_discrete_checks_fail_on_another_boards_rules() {
    // Mapper 185 without a submapper: the wiki's heuristic enables CHR for a latch of $02 or $03
    // (low nibble non-zero, not $13), where chip select 1 (submapper 5) disables it: check 1 only.
    let failed = discrete_failures("185 as 185.0", &with_mapper(&discrete_rom("m185_cnrom"), 185, 0), 4);
    assert_eq!(failed, [1]);
    // The Quattro's program on the Aladdin Deck Enhancer (232.1, block bits swapped): blocks 0 and
    // 3 read the same, 1 and 2 trade places: check 2 only.
    let failed = discrete_failures("232 as 232.1", &with_mapper(&discrete_rom("m232_quattro"), 232, 1), 3);
    assert_eq!(failed, [2]);
}

/// The header of `rom` rewritten to NES 2.0 `mapper`.`submapper`.
fn with_mapper(rom: &[u8], mapper: u16, submapper: u8) -> Vec<u8> {
    let mut rom = rom.to_vec();
    rom[6] = (rom[6] & 0x0F) | ((mapper as u8 & 0x0F) << 4);
    rom[7] = (mapper as u8 & 0xF0) | 0x08;
    rom[8] = submapper << 4 | (mapper >> 8) as u8;
    rom
}

/// The header of `rom` rewritten to iNES 1.0 (no submapper, 8 KiB PRG RAM implied).
fn as_ines1(rom: &[u8]) -> Vec<u8> {
    let mut rom = rom.to_vec();
    rom[7] &= 0xF0;
    rom[8..16].fill(0);
    rom
}

#[test]
fn every_vrc_rom_passes_its_checks() {
    for (name, mapper, submapper) in VRC_ROMS {
        let rom = vrc_rom(name);
        let cart = Cartridge::from_ines(&rom).expect("our VRC ROM loads");
        assert_eq!((cart.info().mapper, cart.info().submapper), (mapper, submapper), "{name}'s header");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, &CHECKS);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, &CHECKS));
        assert_eq!(nes.peek(STATUS), 0, "{name}");
    }
}

#[test]
fn without_a_submapper_the_vrc4_boards_decode_both_wirings() {
    // iNES 1.0 headers (and NES 2.0 submapper 0) OR the candidate address lines: each VRC4 wiring
    // of its mapper number works.
    let mut roms: Vec<(String, Vec<u8>)> = VRC_ROMS
        .iter()
        .filter(|rom| rom.0.starts_with("vrc4"))
        .map(|&(name, _, _)| (format!("{name} as iNES 1.0"), as_ines1(&vrc_rom(name))))
        .collect();
    roms.push(("vrc4e as NES 2.0 23.0".into(), with_mapper(&vrc_rom("vrc4e"), 23, 0)));
    for (name, rom) in roms {
        assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().submapper, 0, "{name}");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, &CHECKS);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, &CHECKS));
    }
}

#[test]
fn the_checks_fail_on_another_boards_rules() {
    // vrc4e's program on a VRC4f (23.1: selects on A0/A1): its high-nibble and select 2-3 writes at
    // $x004/$x008/$x00C reach select 0 there. The PRG registers (select 0) still work; the CHR
    // checks and the swap mode do not.
    let mut nes = boot(&with_mapper(&vrc_rom("vrc4e"), 23, 1));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
    for check in [0, 1, 2] {
        assert!(!failed.contains(&check), "check {check} ({}) failed on the VRC4f", CHECKS[check]);
    }
    for check in [3, 4, 5] {
        assert!(failed.contains(&check), "check {check} ({}) passed on the VRC4f", CHECKS[check]);
    }

    // vrc2b's program as iNES 1.0 mapper 23 runs on the VRC4 the heuristic assumes, with the 8 KiB
    // of PRG RAM iNES 1.0 implies: everything the VRC2 lacks (swap mode, single-screen mirroring,
    // the IRQ) shows, and RAM answers where the latch would. An iNES 1.0 VRC2b image whose
    // program writes those registers needs a NES 2.0 header (submapper 3).
    let mut nes = boot(&as_ines1(&vrc_rom("vrc2b")));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(
        failed,
        [3, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18],
        "{}",
        describe_checks(&failed_checks(&nes, &CHECKS), &CHECKS)
    );
}

#[test]
fn a_restore_while_the_counter_is_owed_continues_exactly() {
    // The VRC4 counter runs lazily; a snapshot taken at any instruction restores into a fresh
    // machine that continues exactly as the uninterrupted one.
    let rom = vrc_rom("vrc4e");
    let input = random_input(7, 40);
    let mut reference = boot(&rom);
    let mut records = Vec::new();
    for frame in input.frames() {
        records.push(reference.run_frame(frame));
    }
    let mut first = boot(&rom);
    let frames: Vec<FrameInput> = input.frames().collect();
    for frame in &frames[..20] {
        first.run_frame(*frame);
    }
    // Into the frame, past the IRQ's arming (NMI) and some of its counting.
    first.begin_frame(frames[20]);
    for _ in 0..3000 {
        first.step_in_frame();
    }
    let mut snapshot = Vec::new();
    first.save_state(&mut snapshot);
    let mut second = boot(&rom);
    second.load_state(&snapshot).expect("restores");
    assert_eq!(second.state_hash(), first.state_hash());
    second.run_until_frame_end();
    assert_eq!(second.state_hash(), records[20].state_hash, "frame 20 after the restore");
    for (i, frame) in frames.iter().enumerate().skip(21) {
        assert_eq!(second.run_frame(*frame), records[i], "frame {i} after the restore");
    }
}

/// `../shared/boards/` beside the checkout, or `None` (skipped with a line on a bare `cargo test`,
/// an error under CI, like the conformance folder).
fn boards_folder(test: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared/boards");
    if dir.join("README.md").is_file() {
        return Some(dir);
    }
    let why = format!("{test}: no board test folder at {} (the public board test ROMs)", dir.display());
    assert!(!anes_fs::ci_is_set(), "{why}; CI is set, so a missing folder is an error, not a skip");
    eprintln!("skipped {why}");
    None
}

/// The 1 KiB CHR bank (0-127) of `chr` whose tiles $40-$7F the m22 test's block shows in `picture`,
/// if any. The block: tile columns 14-17 and rows 7-22 hold tiles $40 + 16 * column + row
/// (0-127.c writes them down the columns with a +32 increment); pixels are palette colours $0F, $01,
/// $23, $30 for pattern values 0-3 (its palette upload), emphasis bits aside.
fn m22_bank_shown(picture: &[u16], chr: &[u8]) -> Option<usize> {
    let colour_value = |pixel: u16| match pixel & 0x3F {
        0x0F => Some(0u8),
        0x01 => Some(1),
        0x23 => Some(2),
        0x30 => Some(3),
        _ => None,
    };
    let shown: Option<Vec<u8>> = (0..16 * 8)
        .flat_map(|y| (0..4 * 8).map(move |x| (x, y)))
        .map(|(x, y)| colour_value(picture[(56 + y) * 256 + 112 + x]))
        .collect();
    let shown = shown?;
    (0..128).find(|&bank| {
        let tiles = &chr[bank * 0x400..][..0x400];
        shown.iter().enumerate().all(|(i, &value)| {
            let (x, y) = (i % 32, i / 32);
            let tile = (x / 8) * 16 + y / 8;
            let row = &tiles[tile * 16 + y % 8..];
            let bit = 7 - x % 8;
            value == ((row[0] >> bit) & 1) | ((row[8] >> bit) & 1) << 1
        })
    })
}

#[test]
fn the_public_vrc2a_chr_banking_test_shows_banks_0_to_127_in_order() {
    let Some(dir) = boards_folder("the_public_vrc2a_chr_banking_test_shows_banks_0_to_127_in_order") else {
        return;
    };
    let rom = std::fs::read(dir.join("m22chrbankingtest/0-127.nes")).expect("0-127.nes");
    let cart = Cartridge::from_ines(&rom).expect("mapper 22 loads");
    assert_eq!(cart.info().mapper, 22);
    let chr = cart.chr_rom().to_vec();
    // 0-127.c: for jj, ii in 0..16, writes ii to $B001 and jj to $B003 (VRC2a: CHR bank 1's low
    // and high nibbles, at $0400-$07FF) right after a vblank, then waits 7 more: register value
    // jj * 16 + ii for 8 frames, i.e. bank (jj * 16 + ii) >> 1 for 16 frames, banks 0-127 in order.
    let mut nes = boot(&rom);
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for frame in 0..2100 {
        nes.run_frame(FrameInput::default());
        let shown = m22_bank_shown(nes.ppu().frame_buffer(), &chr);
        // Before the program turns rendering on (its C start-up), the picture is the backdrop.
        if runs.is_empty() && shown.is_none() && frame < 10 {
            continue;
        }
        let bank = shown.unwrap_or_else(|| panic!("frame {frame}: the block shows no CHR bank's tiles"));
        match runs.last_mut() {
            Some((shown, frames)) if *shown == bank => *frames += 1,
            _ => runs.push((bank, 1)),
        }
    }
    let banks: Vec<usize> = runs.iter().map(|r| r.0).collect();
    assert_eq!(banks[..128], (0..128).collect::<Vec<_>>(), "banks in the order shown");
    // Whole runs (not the first, which starts at power-on, nor the one cut by the end) are 16 frames.
    for &(bank, frames) in &runs[1..128] {
        assert_eq!(frames, 16, "bank {bank} shown for {frames} frames");
    }
}

#[test]
fn the_public_vrc2a_test_runs_the_same_lazy_and_eager() {
    let Some(dir) = boards_folder("the_public_vrc2a_test_runs_the_same_lazy_and_eager") else {
        return;
    };
    let rom = std::fs::read(dir.join("m22chrbankingtest/0-127.nes")).expect("0-127.nes");
    let mut lazy = Nes::new(Cartridge::from_ines(&rom).expect("loads"), NesConfig::default());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    for frame in 0..120 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
        assert!(lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(), "frame {frame}: pictures differ");
    }
}

#[test]
fn every_byte_of_the_vrc4_state_feeds_the_hash() {
    // The VRC4's registers and counter are the mapper section: flip each bit of each byte of a
    // snapshot taken while the counter runs, and the restored machine's state hash must differ.
    // (tests/state.rs does this for the first bundled ROMs; the VRC ROMs sort after them.)
    let rom = vrc_rom("vrc4e");
    let mut nes = boot(&rom);
    for frame in random_input(3, 30).frames() {
        nes.run_frame(frame);
    }
    let mapper = nes.section_bytes(anes::core::Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 28, "VrcState");
    let original = nes.state_hash();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if let Err(err) = forged.flip_state_bit(anes::core::Section::Mapper, byte, bit) {
                // Only the reserved byte (the last) may be refused: it must stay zero.
                assert_eq!(byte, mapper.len() - 1, "mapper byte {byte} bit {bit}: {err}");
                continue;
            }
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
}

#[test]
fn every_byte_of_the_new_boards_states_feeds_the_hash() {
    // One ROM per new state layout, each after its checks: (ROM, state length, where its reserved
    // bytes start: flips there may be refused, as those bytes must stay zero).
    let layouts = [
        ("m118_txsrom", 24, 20), // TxromState (118, 119, 4)
        ("m155_mmc1a", 16, 6),   // SxromState (155)
        ("m206_dxrom", 16, 10),  // Namco108State (206, 76, 88, 95, 154)
        ("m154_namcot3453", 16, 10),
        ("m111_gtrom", 1, 1), // GtromState (111)
    ];
    for (name, len, reserved) in layouts {
        let mut nes = boot(&mmc3_family_rom(name));
        run_checks(&mut nes);
        let mapper = nes.section_bytes(anes::core::Section::Mapper).to_vec();
        assert_eq!(mapper.len(), len, "{name}");
        let original = nes.state_hash();
        for byte in 0..len {
            for bit in 0..8 {
                let mut forged = nes.clone();
                if let Err(err) = forged.flip_state_bit(anes::core::Section::Mapper, byte, bit) {
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
