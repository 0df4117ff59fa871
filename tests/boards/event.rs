//! NES-EVENT (mapper 105) through our ROM (`roms/event/m105_nes_event.s`): its checks pass, the timer's
//! IRQ included (6 min 15 s of emulated time), it runs the same on the lazy and eager PPU schedules,
//! continues exactly after a restore while the timer is owed, and every byte of the board's state
//! feeds the state hash.

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::{Cartridge, Nes, PpuCatchUp, Section};

use super::assert_restore_mid_frame_continues;
use super::support::{
    CHECK_COUNT, CHECK_STATUS, boot, describe_checks, failed_checks, random_input, repo_root,
};

/// The checks of `roms/event/m105_nes_event.s`, in its order.
const EVENT_CHECKS: [&str; 13] = [
    "locked: $A000 = $1E still shows the first 32 KiB",
    "locked: the MMC1 still drives PRG A14 (mode 3, register 1)",
    "I = 0 alone keeps the lock; I = 1 after it unlocks (O=0, A=2: tags 8-11)",
    "O=1, mode 3, register 2: 16 KiB banks 10 and 15",
    "O=1, mode 2, register 5: 16 KiB banks 8 and 13",
    "O=1, 32 KiB mode, register $0E: banks 14-15 (bit 3 unused)",
    "O=0, A=3: 32 KiB bank 3, A14 from the MMC1",
    "PRG RAM: read back; $E000 bit 4 set: open bus, writes lost",
    "mirroring: vertical, horizontal, one-screen lower and upper",
    "CHR RAM not banked by $A000 bit 0",
    "the timer: /IRQ not asserted by T0 + $28000000 - 1",
    "the timer: /IRQ asserted by T0 + $28000000 + 8",
    "/IRQ held until I = 1",
];

/// Frames before the timer's check has ended: $28000000 CPU cycles at 29780.5 a frame, and some.
const TIMER_FRAMES: usize = 22_600;

fn event_rom() -> Vec<u8> {
    let path = repo_root().join("roms/event/m105_nes_event.nes");
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Runs the ROM until it has reported (after the timer's checks).
fn run_to_verdict(nes: &mut Nes) {
    for _ in 0..TIMER_FRAMES {
        nes.run_frame(FrameInput::default());
        if nes.peek(CHECK_STATUS) != 0x80 && nes.peek(CHECK_COUNT) != 0 {
            return;
        }
    }
    panic!("no verdict within {TIMER_FRAMES} frames (status ${:02X})", nes.peek(CHECK_STATUS));
}

#[test]
fn the_event_rom_passes_its_checks_the_timer_included() {
    let rom = event_rom();
    assert_eq!(Cartridge::from_ines(&rom).expect("loads").info().mapper, 105);
    let mut nes = boot(&rom);
    run_to_verdict(&mut nes);
    let failed = failed_checks(&nes, &EVENT_CHECKS);
    assert!(failed.is_empty(), "checks failed:{}", describe_checks(&failed, &EVENT_CHECKS));
    assert_eq!(nes.peek(CHECK_STATUS), 0);
}

#[test]
fn the_event_rom_runs_the_same_lazy_and_eager() {
    let mut lazy = boot(&event_rom());
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
fn an_event_restore_while_the_timer_is_owed_continues_exactly() {
    // Frame 6: the ROM waits for the timer, which runs lazily (owed between the CPU's writes).
    let frames: Vec<FrameInput> = random_input(105, 9).frames().collect();
    assert_restore_mid_frame_continues(&event_rom(), &frames, 6, 5000);
}

#[test]
fn every_byte_of_the_event_state_feeds_the_hash() {
    let mut nes = boot(&event_rom());
    run_checks_started(&mut nes);
    let mapper = nes.section_bytes(Section::Mapper).to_vec();
    assert_eq!(mapper.len(), 24);
    let original = nes.state_hash();
    for byte in 0..mapper.len() {
        for bit in 0..8 {
            let mut forged = nes.clone();
            if let Err(err) = forged.flip_state_bit(Section::Mapper, byte, bit) {
                // The MMC1's reserved bytes (6-7) and the board's (22-23) must stay zero.
                assert!(matches!(byte, 6 | 7 | 22 | 23), "byte {byte} bit {bit}: {err}");
                continue;
            }
            assert_ne!(forged.state_hash(), original, "mapper byte {byte} bit {bit} escapes the hash");
        }
    }
}

/// Runs the ROM into its timer wait (the bank checks done, the timer counting).
fn run_checks_started(nes: &mut Nes) {
    for _ in 0..8 {
        nes.run_frame(FrameInput::default());
    }
    assert_eq!(nes.peek(0x0700), 0x80, "still waiting for the timer");
}
