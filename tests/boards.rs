//! The boards beyond the original set, through ROMs: our ca65 VRC2/VRC4 test ROMs (`roms/vrc/`) and
//! discrete-board test ROMs (`roms/discrete/`), with expectations written into them from the nesdev
//! wiki and results reported in CPU RAM; and the public VRC2a CHR banking test
//! (`../shared/boards/m22chrbankingtest/`), whose source says what its screen shows. (Every ROM under `roms/` also runs in `tests/ppu_schedule.rs` (lazy == eager),
//! `tests/determinism.rs` and `tests/alloc_free.rs`.)

#[path = "boards/asic.rs"]
mod asic;
#[path = "boards/discrete2.rs"]
mod discrete2;
#[path = "boards/flash.rs"]
mod flash;
mod support;
#[path = "boards/vrc7.rs"]
mod vrc7;

#[path = "boards/mmc5.rs"]
mod mmc5;

#[path = "boards/sunsoft.rs"]
mod sunsoft;

#[path = "boards/bandai.rs"]
mod bandai;

#[path = "boards/tengen.rs"]
mod tengen;

#[path = "boards/event.rs"]
mod event;
#[path = "boards/taito.rs"]
mod taito;

use std::path::PathBuf;

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, Nes, NesConfig, PpuCatchUp};
use support::{
    CHECK_CODE as CODE, CHECK_COUNT as COUNT, CHECK_STATUS as STATUS, boot, describe_checks, failed_checks,
    random_input, repo_root, run_checks,
};

/// The checks of `roms/vrc/vrc_test.inc`, in its order.
const CHECKS: [&str; 20] = [
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
    "VRC4 $9002 bit 0 enables PRG RAM, $9001/$9003 set neither it nor mirroring; VRC2: $9003 is mirroring",
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
    ("m111_gtrom", 9),
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
pub(crate) fn with_mapper(rom: &[u8], mapper: u16, submapper: u8) -> Vec<u8> {
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
    // the IRQ) shows, the VRC4's select 3 is no mirroring register (19), and the RAM, never
    // enabled by $9002 bit 0, reads open bus where the latch would answer. An iNES 1.0 VRC2b image whose
    // program writes those registers needs a NES 2.0 header (submapper 3).
    let mut nes = boot(&as_ines1(&vrc_rom("vrc2b")));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(
        failed,
        [3, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19],
        "{}",
        describe_checks(&failed_checks(&nes, &CHECKS), &CHECKS)
    );
}

/// Saves inside frame `at` of `frames` after `steps` instructions, restores into a fresh console and
/// checks that it ends that frame and runs the rest exactly as a console never interrupted.
pub(crate) fn assert_restore_mid_frame_continues(rom: &[u8], frames: &[FrameInput], at: usize, steps: usize) {
    let mut reference = boot(rom);
    let records: Vec<_> = frames.iter().map(|frame| reference.run_frame(*frame)).collect();
    let mut first = boot(rom);
    for frame in &frames[..at] {
        first.run_frame(*frame);
    }
    first.begin_frame(frames[at]);
    for _ in 0..steps {
        first.step_in_frame();
    }
    let mut snapshot = Vec::new();
    first.save_state(&mut snapshot);
    let mut second = boot(rom);
    second.load_state(&snapshot).expect("restores");
    assert_eq!(second.state_hash(), first.state_hash());
    second.run_until_frame_end();
    assert_eq!(second.state_hash(), records[at].state_hash, "frame {at} after the restore");
    for (i, frame) in frames.iter().enumerate().skip(at + 1) {
        assert_eq!(second.run_frame(*frame), records[i], "frame {i} after the restore");
    }
}

#[test]
fn a_restore_while_the_counter_is_owed_continues_exactly() {
    // The VRC4 counter runs lazily; a snapshot taken at any instruction restores into a fresh
    // machine that continues exactly as the uninterrupted one.
    let frames: Vec<FrameInput> = random_input(7, 40).frames().collect();
    // Into frame 20, past the IRQ's arming (NMI) and some of its counting.
    assert_restore_mid_frame_continues(&vrc_rom("vrc4e"), &frames, 20, 3000);
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
    let mapper = nes.section_bytes(anes::nes::Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 28, "VrcState");
    let original = nes.state_hash();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if let Err(err) = forged.flip_state_bit(anes::nes::Section::Mapper, byte, bit) {
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
        ("m111_gtrom", 3, 3), // GtromState (111): the register and the flash's command state
    ];
    for (name, len, reserved) in layouts {
        let mut nes = boot(&mmc3_family_rom(name));
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

/// The checks of `roms/vrc6/vrc6_test.inc`, in its order.
const VRC6_CHECKS: [&str; 12] = [
    "the $8000 register selects every 16 KiB bank",
    "the $C000 register selects every 8 KiB bank; $E000 holds the last",
    "mode 0: each CHR register selects every 1 KiB bank in its window",
    "mode 1, A10 from the PPU: 2 KiB regions R & ~1, R | 1",
    "mode 2: R0-R3 1 KiB, R4 and R5 2 KiB regions",
    "mode 1, A10 from the register: bank R twice",
    "$B003 = $20: vertical",
    "$B003 = $24: horizontal",
    "$B003 = $28: single-screen page 0",
    "$B003 = $2C: single-screen page 1",
    "PRG RAM only with $B003 bit 7 set (open bus without)",
    "IRQ: cycle mode at T0 + 16, scanline mode at T0 + 114",
];

fn vrc6_rom(name: &str) -> Vec<u8> {
    let path = repo_root().join(format!("roms/vrc6/{name}.nes"));
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn every_vrc6_rom_passes_its_checks() {
    for (name, mapper) in [("vrc6a", 24), ("vrc6b", 26)] {
        let rom = vrc6_rom(name);
        assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, mapper, "{name}'s header");
        let mut nes = boot(&rom);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, &VRC6_CHECKS);
        assert!(failed.is_empty(), "{name}: checks failed:{}", describe_checks(&failed, &VRC6_CHECKS));
    }
}

#[test]
fn the_vrc6a_program_fails_on_a_vrc6b() {
    // Selects 1 and 2 trade places: CHR registers R1/R2 and R5/R6 swap and the IRQ control write
    // becomes an acknowledge; the PRG registers, $B003 and R0/R3 are select 0 or 3 on both.
    let mut nes = boot(&with_mapper(&vrc6_rom("vrc6a"), 26, 0));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &VRC6_CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(
        failed,
        [2, 3, 4, 11],
        "{}",
        describe_checks(&failed_checks(&nes, &VRC6_CHECKS), &VRC6_CHECKS)
    );
}

/// The checks of `roms/vrc6/vrc6_ntrom.s`, in its order.
const VRC6_NTROM_CHECKS: [&str; 4] = [
    "$B003 N set, P clear: nametables are the CHR ROM banks of R6/R7 (R4-R7 in mode 1), as dumped",
    "$B003 N and P set: bit 0 from PPU A11, PPU A10, 1, 0 ($33, $37, $3B, $3F), as dumped",
    "writes to ROM nametables go nowhere; CIRAM keeps its bytes",
    "$B003 N clear, P set: CIRAM pages from the same bits ($23, $27, $2B, $2F)",
];

#[test]
fn the_vrc6_rom_nametable_modes_pass_their_checks_and_fail_on_a_vrc6b() {
    let rom = vrc6_rom("vrc6_ntrom");
    let mut nes = boot(&rom);
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &VRC6_NTROM_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &VRC6_NTROM_CHECKS));
    // On a VRC6b, $E001 and $E002 trade places: R6 holds R5's value, so every ROM nametable check
    // fails; the CIRAM pages of check 3 come from PPU lines and constants there, not R6.
    let mut nes = boot(&with_mapper(&rom, 26, 0));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &VRC6_NTROM_CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(failed, [0, 1, 2]);
}

/// Runs `frames` frames of `nes` and returns the audio output drained meanwhile.
fn record_audio(nes: &mut Nes, frames: usize) -> Vec<f32> {
    let mut samples = Vec::new();
    let mut buffer = vec![0.0f32; 4096];
    for _ in 0..frames {
        nes.run_frame(FrameInput::default());
        let n = nes.drain_audio(&mut buffer);
        samples.extend_from_slice(&buffer[..n]);
    }
    samples
}

/// The mean distance in samples between the rising zero crossings of `samples` (a tone's period),
/// which must hold more than `at_least` of them.
pub(crate) fn mean_rising_period(samples: &[f32], at_least: usize) -> f64 {
    let rising: Vec<usize> =
        (1..samples.len()).filter(|&i| samples[i - 1] < 0.0 && samples[i] >= 0.0).collect();
    assert!(rising.len() > at_least, "{} rising crossings in {} samples", rising.len(), samples.len());
    (rising[rising.len() - 1] - rising[0]) as f64 / (rising.len() - 1) as f64
}

/// blake3 of the samples' bits, for a golden output hash.
pub(crate) fn output_hash(samples: &[f32]) -> String {
    let mut hasher = blake3::Hasher::new();
    for sample in samples {
        hasher.update(&sample.to_bits().to_le_bytes());
    }
    hasher.finalize().to_hex().to_string()
}

#[test]
fn the_vrc6_pulse_sounds_at_the_wikis_frequency() {
    // The ROM plays VRC6 pulse 1 alone (duty 7, period 253) from its checks to frame $40, the APU
    // silent: the output's rising zero crossings come at CPU / (16 x (253 + 1)) = 440.39 Hz
    // (nesdev "VRC6 audio").
    let mut nes = boot(&vrc6_rom("vrc6a"));
    nes.set_audio_sample_rate(Some(48_000));
    run_checks(&mut nes);
    record_audio(&mut nes, 5);
    let samples = record_audio(&mut nes, 45);
    // The mean period in samples, to a few thousandths: 48,000 / 440.39 = 108.995 (a period of P
    // cycles instead of P + 1 would give 108.57).
    let period = mean_rising_period(&samples, 300);
    let expected = 48_000.0 / (1_789_772.7 / (16.0 * 254.0));
    assert!((period - expected).abs() < 0.02, "a period of {period:.4} samples, {expected:.4} expected");
}

#[test]
fn the_vrc6_sound_output_matches_its_golden_hash() {
    // Pulse 1, then from frame $40 pulse 2 and the saw too: the mixed output's bits over 130 frames.
    // Change only with a reviewed change of the VRC6 sound or the mixer.
    let mut nes = boot(&vrc6_rom("vrc6a"));
    nes.set_audio_sample_rate(Some(48_000));
    let samples = record_audio(&mut nes, 130);
    let silent = samples[..samples.len() / 2].iter().all(|&s| s == 0.0);
    assert!(!silent, "the VRC6 plays");
    assert_eq!(output_hash(&samples), "723b8e62f2442d807d71e7131325cb8197f6b9249c78448d6ea26807f387362c");
}

#[test]
fn a_vrc6_restore_mid_frame_continues_exactly_with_its_sound_owed() {
    // The VRC6's IRQ counter and sound run lazily (audio output off): a snapshot taken within a
    // frame while all three channels play restores into a machine that continues as the original.
    assert_restore_mid_frame_continues(&vrc6_rom("vrc6a"), &[FrameInput::default(); 90], 70, 2500);
}

#[test]
fn every_byte_of_the_vrc6_state_feeds_the_hash() {
    let mut nes = boot(&vrc6_rom("vrc6b"));
    for _ in 0..80 {
        nes.run_frame(FrameInput::default());
    }
    let mapper = nes.section_bytes(anes::nes::Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 40, "Vrc6State");
    let original = nes.state_hash();
    let mut refused = Vec::new();
    for byte in 0..mapper.len() {
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
    // The reserved bytes (after ppu_banking, the saw's accumulator, and the last) must stay zero.
    assert_eq!(refused, [11, 37, 39]);
}

#[test]
fn the_vrc1_and_vrc3_roms_pass_their_checks() {
    for (path, checks) in [("roms/vrc1/m075_vrc1.nes", 5), ("roms/vrc3/m073_vrc3.nes", 5)] {
        let rom = std::fs::read(repo_root().join(path)).unwrap_or_else(|err| panic!("{path}: {err}"));
        let failed = discrete_failures(path, &rom, checks);
        assert!(failed.is_empty(), "{path}: checks {failed:?} failed (see the ROM's source)");
    }
}

// ---- MMC5 (mapper 5): the public tests in ../shared/boards/ (their sources say what they show).

/// `../shared/boards/DIR/FILE`, or `None` where the folder is absent (see `boards_folder`).
fn public_mmc5_rom(test: &str, file: &str) -> Option<Vec<u8>> {
    let dir = boards_folder(test)?;
    let path = dir.join(file);
    Some(std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display())))
}

/// One press of `buttons` (a frame held, a frame released), then `frames` frames.
fn press(nes: &mut Nes, buttons: u8, frames: usize) {
    nes.run_frame(FrameInput::buttons(buttons, 0));
    for _ in 0..=frames {
        nes.run_frame(FrameInput::default());
    }
}

/// mmc5test.asm's `zp::databanks`: the byte at $03FF of each 1 KiB window, read through $2007 in
/// vblank (its `ReadData`); CHR bank n holds n there.
const MMC5TEST_DATABANKS: u16 = 0x0A;

fn mmc5test_databanks(nes: &Nes) -> [u8; 8] {
    core::array::from_fn(|i| nes.peek(MMC5TEST_DATABANKS + i as u16))
}

#[test]
fn the_public_mmc5_chr_test_reads_through_the_set_written_last() {
    let Some(rom) = public_mmc5_rom("the_public_mmc5_chr_test", "mmc5test_v2/mmc5test.nes") else {
        return;
    };
    use anes::nes::input::buttons::RIGHT;
    let mut nes = boot(&rom);
    for _ in 0..10 {
        nes.run_frame(FrameInput::default());
    }
    // mmc5test.asm writes $5120 + BankOrderData[y] = y, in each order of BankOrderData (Left/Right
    // choose); the CPU's $2007 reads then see the set written last (nesdev "MMC5", CHR banks: $5120-
    // $5127 cover $0000-$1FFF, $5128-$512B cover $0000-$0FFF twice). 1 KiB mode ($5101 = 3).
    let orders: [[u8; 8]; 4] = [
        [8, 9, 10, 11, 8, 9, 10, 11], // 0-11 in order: $512B last
        [4, 5, 6, 7, 8, 9, 10, 11],   // $5128-$512B first, then $5120-$5127
        [0, 3, 6, 11, 0, 3, 6, 11],   // ends with $512B
        [0, 3, 6, 10, 1, 4, 7, 11],   // ends with $5127
    ];
    for (order, expected) in orders.iter().enumerate() {
        assert_eq!(mmc5test_databanks(&nes), *expected, "bank order {order}");
        // The "DATA:" row shows them as digits (tiles 0-15) at nametable column 15, row 18.
        let shown: [u8; 8] = core::array::from_fn(|i| nes.ppu_peek(0x2000 + 18 * 32 + 15 + i as u16));
        assert_eq!(shown, *expected, "bank order {order}: the DATA row");
        press(&mut nes, RIGHT, 4);
    }
    assert_eq!(mmc5test_databanks(&nes), orders[0], "Right wraps to the first order");
}

/// The 8x8 cells of `picture` (256x240) outside the rows where mmc5test's sprites are
/// (y 104-143), as (cell column, cell row, the 64 pixels' colours).
fn picture_cells(picture: &[u16]) -> Vec<(usize, usize, Vec<u16>)> {
    let mut cells = Vec::new();
    for row in 0..30 {
        if (13..18).contains(&row) {
            continue;
        }
        for column in 0..32 {
            let pixels =
                (0..64).map(|i| picture[(row * 8 + i / 8) * 256 + column * 8 + i % 8] & 0x3F).collect();
            cells.push((column, row, pixels));
        }
    }
    cells
}

#[test]
fn the_public_mmc5_test_fill_mode_fills_every_nametable() {
    let Some(rom) = public_mmc5_rom("the_public_mmc5_fill_test", "mmc5test_v2/mmc5test.nes") else {
        return;
    };
    use anes::nes::input::buttons::UP;
    let mut nes = boot(&rom);
    for _ in 0..10 {
        nes.run_frame(FrameInput::default());
    }
    let cells = picture_cells(nes.ppu().frame_buffer());
    let text = cells.iter().filter(|cell| cell.2 != cells[0].2).count();
    assert!(text > 100, "the text screen: {text} cells unlike the first");
    // Up: $5105 = $FF, every quadrant the fill page (tile $25, attribute 3 from $5106/$5107).
    press(&mut nes, UP, 3);
    let cells = picture_cells(nes.ppu().frame_buffer());
    let odd: Vec<(usize, usize)> =
        cells.iter().filter(|cell| cell.2 != cells[0].2).map(|c| (c.0, c.1)).collect();
    assert!(odd.is_empty(), "fill mode: cells {odd:?} differ from the first");
    // Palette 3 of the text palettes: a pixel is $00 (colours 0 and 3), $0F (2) or $26 (1).
    assert!(cells[0].2.iter().all(|c| [0x00, 0x0F, 0x26].contains(c)), "{:?}", cells[0].2);
}

#[test]
fn the_public_mmc5_test_extended_attributes_colour_each_tile() {
    let Some(rom) = public_mmc5_rom("the_public_mmc5_exattr_test", "mmc5test_v2/mmc5test.nes") else {
        return;
    };
    use anes::nes::input::buttons::SELECT;
    let mut nes = boot(&rom);
    for _ in 0..10 {
        nes.run_frame(FrameInput::default());
    }
    // Select: $5104 = 1 and palettes [$00, C, $0F, $00] with C = $33, $36, $39, $3C. The start-up
    // loop filled ExRAM byte k with $03 + $40 * (k - k / 32): 4 KiB CHR bank 3 and palette
    // (31 * row + column) mod 4 for nametable row `row`, column `column`.
    press(&mut nes, SELECT, 3);
    let colours = [0x33u16, 0x36, 0x39, 0x3C];
    let (mut right, mut wrong) = (0, Vec::new());
    for (column, row, pixels) in picture_cells(nes.ppu().frame_buffer()) {
        // PPUSCROLL Y is 8: screen row `row` shows nametable row `row + 1` (the last one wraps).
        if row == 29 {
            continue;
        }
        let palette = (31 * (row + 1) + column) % 4;
        for &pixel in &pixels {
            match pixel {
                0x00 | 0x0F => {}
                c if c == colours[palette] => right += 1,
                c => wrong.push((column, row, c)),
            }
        }
    }
    assert!(wrong.is_empty(), "pixels of another palette: {:?}", &wrong[..wrong.len().min(8)]);
    assert!(right > 1000, "only {right} pixels of colour 1");
}

#[test]
fn the_public_mmc5_exram_test_runs_its_code_from_exram() {
    let Some(rom) = public_mmc5_rom("the_public_mmc5_exram_test", "exram/mmc5exram.nes") else {
        return;
    };
    // mmc5exram.asm copies do_rast and rast_init to $5C00 (ExRAM mode 2) and calls them: rast_init
    // sets rbars ($04-$09) to 16 * x, and every NMI's do_rast increments each. Were ExRAM not
    // executable the first call would run open bus and never return.
    let mut nes = boot(&rom);
    let mut counts = Vec::new();
    // Its reset waits three vblanks before it initialises anything.
    for _ in 0..5 {
        nes.run_frame(FrameInput::default());
    }
    for _ in 0..60 {
        nes.run_frame(FrameInput::default());
        let bars: Vec<u8> = (0..6).map(|x| nes.peek(0x04 + x)).collect();
        let advanced: Vec<u8> = bars.iter().enumerate().map(|(x, &b)| b.wrapping_sub(16 * x as u8)).collect();
        assert!(advanced.iter().all(|&a| a == advanced[0]), "rbars {bars:02X?}");
        counts.push(advanced[0]);
    }
    // One increment per frame once the NMI runs.
    let steps: Vec<u8> = counts.windows(2).map(|w| w[1].wrapping_sub(w[0])).collect();
    assert!(steps.iter().all(|&s| s == 1), "per-frame increments {steps:?}");
    // The raster table (ctabl, $0C-$CD) holds the six bars, five entries each with bit 7 set
    // ("12321"), which may overlap.
    let bars = (0x0Cu16..0xCE).filter(|&a| nes.peek(a) & 0x80 != 0).count();
    assert!((5..=30).contains(&bars), "{bars} raster table entries");
}

#[test]
fn the_public_mmc5_tests_run_the_same_lazy_and_eager() {
    for file in ["mmc5test_v2/mmc5test.nes", "mmc5test/mmc5test.nes", "exram/mmc5exram.nes"] {
        let Some(rom) = public_mmc5_rom("the_public_mmc5_tests_run_the_same_lazy_and_eager", file) else {
            return;
        };
        let mut lazy = boot(&rom);
        let mut eager = lazy.clone();
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        for (frame, input) in random_input(11, 90).frames().enumerate() {
            assert_eq!(lazy.run_frame(input), eager.run_frame(input), "{file}: frame {frame}");
            assert!(lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(), "{file}: frame {frame}");
        }
    }
}

/// The checks of `roms/mmc5/mmc5.s`, in its order.
const MMC5_CHECKS: [&str; 14] = [
    "PRG mode 3: $5114-$5116 8 KiB banks, $E000 from $5117",
    "PRG mode 2: 16 KiB from $5115, 8 KiB from $5116",
    "PRG mode 1: 16 KiB from $5115 and $5117",
    "PRG mode 0: 32 KiB from $5117",
    "PRG RAM: $5113 at $6000, RAM at $8000 when bit 7 is clear",
    "RAM writes need $5102 = 2 and $5103 = 1",
    "ExRAM: mode 2 read-back, mode 3 read-only, mode 0 out of frame stores 0 and reads open bus",
    "multiplier $5205 x $5206",
    "CHR modes 0-3, set $5120-$5127 written last",
    "CHR mode 3, set $5128-$512B written last, repeated at $1000",
    "nametables: fill mode, ExRAM (mode 0) written by the PPU, zeros in mode 2",
    "scanline IRQ status at the start of lines 1 and 100; in-frame flag",
    "$5203 = 0 never sets the IRQ",
    "the /IRQ line: one IRQ a frame, acknowledged by reading $5204",
];

fn mmc5_rom() -> Vec<u8> {
    let path = repo_root().join("roms/mmc5/mmc5.nes");
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn the_mmc5_rom_passes_its_checks() {
    let mut nes = boot(&mmc5_rom());
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &MMC5_CHECKS);
    assert!(failed.is_empty(), "mmc5.nes:{}", describe_checks(&failed, &MMC5_CHECKS));
    assert_eq!(nes.peek(STATUS), 0);
}

#[test]
fn every_byte_of_the_mmc5_state_feeds_the_hash() {
    // The MMC5's registers, scanline detector and snooped PPU registers are the mapper section,
    // its ExRAM the CHR RAM section (after CHR RAM, which a CHR ROM board has none of). Taken
    // mid-frame, while the detector runs.
    let mut nes = boot(&mmc5_rom());
    run_checks(&mut nes);
    nes.begin_frame(FrameInput::default());
    for _ in 0..3000 {
        nes.step_in_frame();
    }
    let mapper = nes.section_bytes(anes::nes::Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 98, "Mmc5State");
    assert_eq!(nes.section_bytes(anes::nes::Section::ChrRam).len(), 0x400, "ExRAM");
    let original = nes.state_hash();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if let Err(err) = forged.flip_state_bit(anes::nes::Section::Mapper, byte, bit) {
                // Only the reserved bytes may be refused: they must stay zero (each envelope's two
                // and the sound's last, `tests/boards/mmc5.rs`; the state's last).
                assert!([40, 41, 56, 57, 65, 97].contains(&byte), "mapper byte {byte} bit {bit}: {err}");
                continue;
            }
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
    for byte in [0, 0x10, 0x3FF] {
        let mut forged = nes.clone();
        forged.flip_state_bit(anes::nes::Section::ChrRam, byte, 0).expect("ExRAM takes any value");
        assert_ne!(forged.state_hash(), original, "ExRAM byte {byte} escapes the hash");
    }
}

#[test]
fn an_mmc5_snapshot_mid_frame_continues_exactly() {
    // Saved inside a frame while the scanline detector and the IRQ run (mmc5test_v2 is not always
    // present, our ROM is): a fresh machine restored from it continues exactly as the original.
    let frames: Vec<FrameInput> = random_input(5, 30).frames().collect();
    assert_restore_mid_frame_continues(&mmc5_rom(), &frames, 20, 2500);
}

#[test]
fn the_mmc5_rom_runs_the_same_lazy_and_eager() {
    // Its IRQ checks poll $5204 and take the /IRQ line: the lazy schedule catches up at those
    // reads and at dot 2 of each line while the IRQ is enabled (tests/ppu_schedule.rs runs it too,
    // at every instruction).
    let mut lazy = boot(&mmc5_rom());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    for frame in 0..30 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            eager.run_frame(FrameInput::default()),
            "frame {frame}"
        );
    }
    assert_eq!(lazy.peek(STATUS), 0, "all checks passed");
}
#[path = "boards/namco.rs"]
mod namco;
