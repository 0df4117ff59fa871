//! A game that saves by programming its own flash (UNROM 512 with the battery bit, `roms/discrete/
//! m030_unrom512_flash.nes`, whose checks program flash $7C400, the fixed bank's $C400, to $C3):
//! the console reports the save dirty, and the save written to a file and loaded into a new console
//! brings the programmed byte back, as a frontend's .sav does across a restart.

use anes_frontend::Console;

fn flash_rom() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/discrete/m030_unrom512_flash.nes"))
        .unwrap()
}

#[test]
fn a_flash_save_survives_a_restart() {
    let rom = flash_rom();
    let mut console = Console::new(&rom).unwrap();
    assert_eq!(console.battery_ram().map(<[u8]>::len), Some(0x8_0000), "the whole 512 KiB flash");
    assert!(!console.battery_ram_dirty());
    // The ROM reports its checks (CPU RAM $0700: $80 while running) within a few frames.
    for _ in 0..60 {
        console.run_frame(Default::default());
        if console.nes().peek(0x0700) != 0x80 && console.nes().peek(0x0701) != 0 {
            break;
        }
    }
    assert_eq!(console.nes().peek(0x0700), 0, "every check passed");
    assert!(console.battery_ram_dirty(), "the game programmed its flash");
    let dir = std::env::temp_dir().join(format!("anes-flash-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sav = dir.join("m030_unrom512_flash.sav");
    std::fs::write(&sav, console.battery_ram().unwrap()).unwrap();
    console.mark_battery_ram_saved();
    assert!(!console.battery_ram_dirty());

    let mut restarted = Console::new(&rom).unwrap();
    assert_eq!(restarted.nes().peek(0xC400), 0xFF, "the shipped image before the save is loaded");
    restarted.load_battery_ram(&std::fs::read(&sav).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(restarted.nes().peek(0xC400), 0xC3, "the programmed byte");
    assert!(!restarted.battery_ram_dirty());
    assert_eq!(restarted.battery_ram(), console.battery_ram());
}
