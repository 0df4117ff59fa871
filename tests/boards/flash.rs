//! The self-programmable flash of UNROM 512 (30 with the battery bit) and GTROM (111): our ROMs'
//! flash checks (`roms/discrete/m030_unrom512.inc`, `roms/mmc3fam/m111_gtrom.s`, from the
//! SST39SF0x0 datasheet's command sequences and the wiki's wiring), the flash as the battery save
//! (a save survives a save/load cycle and a power cycle), in snapshots, and the chip erase and ID
//! reads through the cartridge's bus methods.

use anes::nes::movie::{ConsoleCommand, FrameInput};
use anes::nes::{Cartridge, Section};

use super::support::{boot, describe_checks, failed_checks, repo_root, run_checks};

/// The checks of `roms/discrete/m030_unrom512_flash.nes`, in its order.
const UNROM512_FLASH_CHECKS: [&str; 9] = [
    "the register's five PRG bank bits",
    "the four CHR RAM banks",
    "no bus conflicts (submapper 1)",
    "four screens",
    "the register answers at $C000-$FFFF only: $8000-$BFFF is the flash",
    "software ID: $BF, $B7 (SST39SF040) in both windows, memory again after $F0",
    "byte program: $FF to $A5, read twice alike; $5A over it reads $00 (bits only cleared)",
    "sector erase: the 4 KiB sector reads $FF, the next keeps its bytes; the byte programs again",
    "programming through the bank register: bank 31's $8400 is the fixed bank's $C400",
];

/// The checks of `roms/mmc3fam/m111_gtrom.nes`, in its order.
const GTROM_CHECKS: [&str; 9] = [
    "pppp selects each 32 KiB bank",
    "$7FFF is the register too, $6000 and $4FFF are not",
    "c selects one of two CHR RAM banks",
    "four distinct screens per page, n selects the page",
    "pattern and nametable RAM are apart",
    "software ID: $BF, $B5 (SST39SF010A, 128 KiB) in every window, memory again after $F0",
    "byte program: $FF to $A5, read twice alike; $5A over it reads $00 (bits only cleared)",
    "sector erase: the 4 KiB sector reads $FF, the next keeps its tag; the byte programs again",
    "programming through the bank register: bank 2's $E400 only",
];

fn rom(path: &str) -> Vec<u8> {
    let path = repo_root().join(path);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn unrom512_flash() -> Vec<u8> {
    rom("roms/discrete/m030_unrom512_flash.nes")
}

fn gtrom() -> Vec<u8> {
    rom("roms/mmc3fam/m111_gtrom.nes")
}

#[test]
fn the_flash_roms_pass_their_checks() {
    for (name, image, checks) in [
        ("m030_unrom512_flash", unrom512_flash(), &UNROM512_FLASH_CHECKS),
        ("m111_gtrom", gtrom(), &GTROM_CHECKS),
    ] {
        let mut nes = boot(&image);
        run_checks(&mut nes);
        let failed = failed_checks(&nes, checks);
        assert!(failed.is_empty(), "{name}:{}", describe_checks(&failed, checks));
    }
}

#[test]
fn the_flash_checks_fail_where_the_board_has_no_flash() {
    // UNROM 512 without the battery bit: no flash, the register at $8000-$FFFF (check 4) takes
    // the command writes, so nothing programs, erases or identifies (5-8).
    let mut image = unrom512_flash();
    image[6] &= !0x02;
    let mut nes = boot(&image);
    run_checks(&mut nes);
    let failed: Vec<usize> = failed_checks(&nes, &UNROM512_FLASH_CHECKS).iter().map(|f| f.0).collect();
    assert_eq!(failed, [4, 5, 6, 7, 8]);
    assert!(nes.cartridge().battery_ram().is_none(), "no battery, no flash: nothing to save");
}

/// The flash bytes the UNROM 512 ROM's checks leave programmed: flash $30200 (bank 12's $8200)
/// erased and reprogrammed to $3C, the rest of its sector erased, and $7C400 (the fixed bank's
/// $C400) programmed to $C3.
fn assert_unrom512_programmed(flash: &[u8]) {
    assert_eq!(flash.len(), 0x8_0000, "the whole 512 KiB chip");
    assert_eq!((flash[0x3_0200], flash[0x3_0000], flash[0x3_0100]), (0x3C, 0xFF, 0xFF));
    assert_eq!((flash[0x3_2000], flash[0x7_C400]), (25, 0xC3), "another sector; the fixed bank");
}

#[test]
fn a_flash_save_survives_a_save_and_load_cycle() {
    let image = unrom512_flash();
    let mut nes = boot(&image);
    run_checks(&mut nes);
    let save = nes.cartridge().battery_ram().expect("the flash is the battery save").to_vec();
    assert_unrom512_programmed(&save);
    // A power cycle keeps the flash; the machine restarts from the programmed chip.
    nes.run_frame(FrameInput { command: ConsoleCommand::PowerCycle, ..FrameInput::default() });
    assert_eq!(nes.peek(0xC400), 0xC3);
    assert_unrom512_programmed(nes.cartridge().battery_ram().unwrap());
    // A new console from the same file reads the ROM as shipped until the save is loaded.
    let mut restarted = boot(&image);
    assert_eq!(restarted.peek(0xC400), 0xFF);
    let shipped_hash = restarted.state_hash();
    restarted.load_battery_ram(&save).expect("the save's size is the chip's");
    assert_eq!(restarted.peek(0xC400), 0xC3, "the programmed byte in the fixed bank");
    assert_ne!(restarted.state_hash(), shipped_hash, "the flash is hashed state");
    assert_eq!(restarted.rom_identity(), nes.rom_identity(), "the identity is the file's, not the flash's");
    // A save of another size is refused, the flash untouched.
    assert!(restarted.load_battery_ram(&save[..0x4_0000]).is_err());
    assert_eq!(restarted.peek(0xC400), 0xC3);
}

#[test]
fn snapshots_carry_the_flash() {
    let mut nes = boot(&gtrom());
    run_checks(&mut nes);
    let flash = nes.section_bytes(Section::PrgRam).to_vec();
    assert_eq!(flash.len(), 0x2_0000, "GTROM's PRG RAM section is its 128 KiB flash here");
    assert_eq!((flash[0x0200], flash[0x1_6400], flash[0xE400]), (0x3C, 0xC3, 0xFF));
    let mut snapshot = Vec::new();
    nes.save_state(&mut snapshot);
    let mut restored = boot(&gtrom());
    restored.load_state(&snapshot).expect("a snapshot of the same ROM");
    assert_eq!(restored.section_bytes(Section::PrgRam), &flash[..]);
    assert_eq!(restored.state_hash(), nes.state_hash());
    // The battery save is the flash on GTROM whatever the header's battery bit says.
    assert_eq!(gtrom()[6] & 0x02, 0, "our GTROM image has no battery bit");
    assert_eq!(restored.cartridge().battery_ram(), Some(&flash[..]));
}

#[test]
fn chip_erase_and_software_id_through_the_cartridge_bus() {
    let image = gtrom();
    let mut cart = Cartridge::from_ines(&image).expect("GTROM");
    let shipped = cart.prg_rom().to_vec();
    // GTROM: the register at $5000 (bank 1), the flash's $5555 at $D555 and $2AAA at $AAAA.
    cart.cpu_write(0x5000, 0x01, 1);
    let mut cycle = 2;
    let mut write = |cart: &mut Cartridge, addr: u16, value: u8| {
        cart.cpu_write(addr, value, cycle);
        cycle += 1;
    };
    for (addr, value) in [(0xD555, 0xAA), (0xAAAA, 0x55), (0xD555, 0x90)] {
        write(&mut cart, addr, value);
    }
    assert_eq!((cart.cpu_peek(0x8000, 0), cart.cpu_peek(0xBFFF, 0)), (0xBF, 0xB5));
    write(&mut cart, 0x8000, 0xF0);
    assert_eq!(cart.cpu_peek(0x8000, 0), 4, "bank 1's first 8 KiB tag");
    let erase =
        [(0xD555, 0xAA), (0xAAAA, 0x55), (0xD555, 0x80), (0xD555, 0xAA), (0xAAAA, 0x55), (0xD555, 0x10)];
    for (addr, value) in erase {
        write(&mut cart, addr, value);
    }
    assert!(cart.prg_ram().iter().all(|&b| b == 0xFF), "chip erase: every byte $FF");
    assert_eq!(cart.prg_rom(), &shipped[..], "the file's image (the identity) is kept apart");
    // A program sequence, then the data: only where the chip was erased does it show.
    for (addr, value) in [(0xD555, 0xAA), (0xAAAA, 0x55), (0xD555, 0xA0), (0x8123, 0x42)] {
        write(&mut cart, addr, value);
    }
    assert_eq!((cart.cpu_peek(0x8123, 0), cart.prg_ram()[0x8123]), (0x42, 0x42));
}
