//! The MMC6 (iNES mapper 4, NES 2.0 submapper 1) through our test ROM `roms/mmc6/mmc6.nes`.
//!
//! The ROM checks the MMC6's RAM enables, mirroring, open bus and IRQ counter against expectations
//! written into it from the nesdev wiki ("MMC6", "MMC3"), and reports each check in CPU RAM (layout
//! in its source). Here: every check passes; the same checks fail on an MMC3's rules, so they can
//! fail; the battery-backed 1 KiB is exactly what battery saves, snapshots and power cycles keep;
//! two runs agree; blargg's test of the MMC6's counter behaviour passes on it (with the
//! conformance ROMs). (Lazy == eager PPU schedule: `tests/ppu_schedule.rs`, which runs every ROM under
//! `roms/`, this one by name in its reset and power-cycle test.)

mod support;

use anes::nes::movie::{ConsoleCommand, FrameInput};
use anes::nes::{BatteryRamError, Mmc3Revision, Nes, Section};
use support::{
    CHECK_STATUS as STATUS, boot, describe_checks, failed_checks, random_input, repo_root, run_checks,
};

const BOOTS: u16 = 0x0702;
/// The boot counter's offset in the battery RAM ($7180).
const BOOTS_OFFSET: usize = 0x180;

/// The ROM's checks, in its order.
const CHECKS: [&str; 19] = [
    "enabled with $A001 = $F0, both halves read back what was written",
    "the 1 KiB repeats through $7000-$7FFF (reads)",
    "a write through a mirror lands in the RAM",
    "$6000-$6FFF reads open bus and takes no writes",
    "$8000 bit 5 clear: $7000-$7FFF reads open bus",
    "$8000 bit 5 clear: writes are ignored",
    "$A001 writes are ignored while the RAM is disabled",
    "clearing $8000 bit 5 clears $A001",
    "$A001 = $20: lower half readable, upper reads 0",
    "$A001 = $80: upper half readable, lower reads 0",
    "$A001 = $50 (write bits alone): open bus, no writes",
    "$A001 = $A0: both halves write-protected",
    "$A001 = $B0: only the lower half writable",
    "$A001 = $E0: only the upper half writable",
    "$A001 = $D0: a write bit needs its read bit (and the other half's read makes 0)",
    "IRQ: latch 0 and $C001, the clock that reloads 0 raises the IRQ",
    "IRQ: latch 0, later clocks reload 0 and raise no IRQ (the old behaviour)",
    "IRQ: latch 1 raises the IRQ every second clock",
    "IRQ: latch 1, latch 0, decrement to 0 raises it, reloads of 0 do not",
];

fn rom() -> Vec<u8> {
    std::fs::read(repo_root().join("roms/mmc6/mmc6.nes")).expect("the bundled MMC6 ROM")
}

/// The nametable text at PPU `addr`, `len` characters (the font is ASCII).
fn screen_text(nes: &Nes, addr: u16, len: u16) -> String {
    (addr..addr + len).map(|a| char::from(nes.ppu_peek(a))).collect()
}

#[test]
fn every_check_passes() {
    let mut nes = boot(&rom());
    run_checks(&mut nes);
    let failed = failed_checks(&nes, &CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &CHECKS));
    assert_eq!(nes.peek(STATUS), 0);
    assert_eq!(nes.peek(BOOTS), 1, "first power-on");
    assert_eq!(screen_text(&nes, 0x2324, 10), "ALL PASSED");
}

#[test]
fn the_checks_fail_on_the_mmc3s_rules() {
    // The same chip with the Sharp MMC3's counter: latch 0 raises an IRQ at every clock.
    let mut nes = boot(&rom());
    assert!(nes.set_mmc3_revision(Mmc3Revision::B));
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(failed, [16, 18], "{}", describe_checks(&failed_checks(&nes, &CHECKS), &CHECKS));
    assert_eq!(nes.peek(STATUS), 2);

    // The same program on an MMC3 board (submapper 0, with the same 1 KiB of battery RAM): its RAM
    // answers at $6000 and ignores $8000 bit 5, and its $A001 means something else.
    let mut mmc3 = rom();
    mmc3[8] = 0x00;
    let mut nes = boot(&mmc3);
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &CHECKS).iter().map(|f| f.0).collect();
    for check in [3, 4, 8, 9, 16] {
        assert!(failed.contains(&check), "check {check} ({}) passed on an MMC3", CHECKS[check]);
    }
}

#[test]
fn the_battery_ram_is_exactly_the_1_kib_and_survives_saves_snapshots_and_power_cycles() {
    let mut first = boot(&rom());
    run_checks(&mut first);
    let save = first.cartridge().battery_ram().expect("the MMC6 ROM declares a battery").to_vec();
    assert_eq!(save.len(), 0x400);
    assert_eq!(save, first.cartridge().prg_ram(), "all of the PRG RAM is battery-backed");
    assert_eq!((save[BOOTS_OFFSET], first.peek(BOOTS)), (1, 1));
    // What the checks left in the RAM, as the wiki's rules have it: $7000 written under $A001 = $B0
    // (check 12), $7200 under $E0 and $D0 (13, 14), $7205 through the mirror $7A05 (2).
    assert_eq!((save[0], save[0x1FF], save[0x200], save[0x205], save[0x3FF]), (0x66, 0x33, 0xCD, 0x55, 0x44));

    // A battery save put into a console switched on with the cartridge: the program sees it.
    let mut second = boot(&rom());
    second.load_battery_ram(&save).expect("a 1 KiB save");
    run_checks(&mut second);
    assert_eq!(second.peek(BOOTS), 2, "the boot counter came from the save");
    assert!(
        failed_checks(&second, &CHECKS).is_empty(),
        "{}",
        describe_checks(&failed_checks(&second, &CHECKS), &CHECKS)
    );
    assert_eq!(
        second.load_battery_ram(&save[..0x3FF]),
        Err(BatteryRamError::SizeMismatch { expected: 0x400, actual: 0x3FF })
    );
    assert_eq!(
        second.load_battery_ram(&[0; 0x2000]),
        Err(BatteryRamError::SizeMismatch { expected: 0x400, actual: 0x2000 })
    );
    assert_eq!(second.cartridge().battery_ram().unwrap()[BOOTS_OFFSET], 2, "a refused save changes nothing");

    // A snapshot carries the RAM: a fresh console restored from it is the same machine from there on.
    let input = random_input(0x36, 120);
    for frame in input.frames().take(40) {
        first.run_frame(frame);
    }
    let mut snapshot = Vec::new();
    first.save_state(&mut snapshot);
    let mut restored = boot(&rom());
    restored.load_state(&snapshot).expect("own snapshot");
    assert_eq!(restored.cartridge().battery_ram(), first.cartridge().battery_ram());
    assert_eq!(restored.state_hash(), first.state_hash());
    for frame in input.frames().skip(40) {
        assert_eq!(restored.run_frame(frame), first.run_frame(frame));
    }

    // A power cycle keeps the battery RAM (and the program counts the boot); a reset is a boot too.
    first.run_frame(FrameInput { command: ConsoleCommand::PowerCycle, ..FrameInput::default() });
    run_checks(&mut first);
    assert_eq!(first.peek(BOOTS), 2);
    first.run_frame(FrameInput { command: ConsoleCommand::SoftReset, ..FrameInput::default() });
    run_checks(&mut first);
    assert_eq!((first.peek(BOOTS), first.cartridge().battery_ram().unwrap()[BOOTS_OFFSET]), (3, 3));
}

#[test]
fn two_runs_agree_frame_by_frame() {
    let input = random_input(0x6D6D_6336, 600);
    let (mut a, mut b) = (boot(&rom()), boot(&rom()));
    for (i, frame) in input.frames().enumerate() {
        assert_eq!(a.run_frame(frame), b.run_frame(frame), "frame {i}");
    }
    // The running part keeps the RAM busy: it is not what the checks left.
    assert_ne!(a.cartridge().prg_ram()[0x200..], boot_and_check().cartridge().prg_ram()[0x200..]);
}

fn boot_and_check() -> Nes {
    let mut nes = boot(&rom());
    run_checks(&mut nes);
    nes
}

#[test]
fn prg_ram_bytes_are_named_by_their_cpu_address() {
    let nes = boot(&rom());
    let mut name = String::new();
    nes.field_name(Section::PrgRam, BOOTS_OFFSET, &mut name);
    assert_eq!(name, "prg_ram[$7180]");
}

/// `rom` with an NES 2.0 header for mapper 4 `submapper` and 1 KiB of battery-backed PRG RAM.
fn relabelled(rom: &[u8], submapper: u8) -> Vec<u8> {
    let mut rom = rom.to_vec();
    rom[7] = (rom[7] & 0xF3) | 0x08;
    rom[8] = submapper << 4;
    rom[9..16].copy_from_slice(&[0, 0x40, 0, 0, 0, 0, 0]);
    rom
}

/// Whether the nametable at $2000 shows `text` on any line.
fn screen_shows(nes: &Nes, text: &str) -> bool {
    (0..30u16).any(|row| screen_text(nes, 0x2000 + row * 32, 32).contains(text))
}

#[test]
fn blarggs_alternate_counter_test_passes_on_the_mmc6() {
    // blargg's mmc3_test_2 6-MMC3_alt (6-MMC6 in the first mmc3_test) tests the counter behaviour
    // that the MMC6 has. Its $6000 text does not reach the MMC6 (nothing answers there), but the
    // screen does. Relabelled as an MMC6 it passes; as a Sharp MMC3 (submapper 0) it does not.
    let roms = support::conformance_roms("mmc6 blargg alt", &["mmc3_test_2/rom_singles/6-MMC3_alt.nes"]);
    for (name, rom) in roms {
        for (submapper, passes) in [(1, true), (0, false)] {
            let mut nes = boot(&relabelled(&rom, submapper));
            for _ in 0..120 {
                nes.run_frame(FrameInput::default());
            }
            assert!(screen_shows(&nes, "6-MMC3_alt"), "{name}: the test did not run");
            assert_eq!(screen_shows(&nes, "Passed"), passes, "{name} as mapper 4 submapper {submapper}");
        }
    }
}
