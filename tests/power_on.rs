//! Power-on profiles (issue 49): each profile's choices reach the machine's state and hash, the same
//! profile powers on the same machine whichever way it is built, and the default runs a start-up
//! that waits for one VBlank and then writes the palette (`roms/poweron/one_vblank.nes`), which the
//! profiles with the warm-up leave grey.

mod support;

use anes::nes::movie::FrameInput;
use anes::nes::power_on::CONSOLE_PALETTE;
use anes::nes::state::section_layout;
use anes::nes::{Cartridge, Nes, NesConfig, PowerOnProfile, Section};
use support::repo_root;

fn one_vblank_rom() -> Vec<u8> {
    std::fs::read(repo_root().join("roms/poweron/one_vblank.nes")).expect("roms/poweron/one_vblank.nes")
}

fn power_on(rom: &[u8], profile: PowerOnProfile) -> Nes {
    Nes::new(Cartridge::from_ines(rom).unwrap(), profile.config())
}

/// Every named profile and a few drawn ones.
fn profiles() -> Vec<PowerOnProfile> {
    PowerOnProfile::NAMED.into_iter().chain((1..=12).map(PowerOnProfile::Random)).collect()
}

/// The byte of `field` in the PPU registers section.
fn ppu_register(nes: &Nes, field: &str) -> u8 {
    let layout = section_layout(Section::Ppu).expect("the PPU registers are a struct");
    let offset = layout.iter().find(|f| f.name == field).unwrap_or_else(|| panic!("no ppu.{field}")).offset;
    nes.section_bytes(Section::Ppu)[offset]
}

#[test]
fn profiles_hash_apart_exactly_where_their_choices_differ() {
    let rom = one_vblank_rom();
    let machines: Vec<(PowerOnProfile, Nes)> =
        profiles().into_iter().map(|p| (p, power_on(&rom, p))).collect();
    for (i, (a, nes_a)) in machines.iter().enumerate() {
        for (b, nes_b) in &machines[i + 1..] {
            let same = a.config() == b.config();
            assert_eq!(nes_a.state_hash() == nes_b.state_hash(), same, "{a} and {b} at power-on");
        }
    }
    // Two frames on, still apart where they were, and the same profile still agrees with itself.
    for (profile, nes) in &machines {
        let mut again = power_on(&rom, *profile);
        let mut nes = nes.clone();
        for _ in 0..2 {
            assert_eq!(
                nes.run_frame(FrameInput::default()),
                again.run_frame(FrameInput::default()),
                "{profile}"
            );
        }
    }
}

#[test]
fn each_choice_lands_in_its_part_of_the_state() {
    let rom = one_vblank_rom();
    let default = power_on(&rom, PowerOnProfile::Default);
    assert_eq!(ppu_register(&default, "status") & 0xE0, 0, "default: PPUSTATUS clear");
    assert_eq!(ppu_register(&default, "reset_warmup"), 0, "default: no warm-up");
    assert_eq!(default.ppu().palette(), &[0; 32]);
    assert!(default.section_bytes(Section::Ram).iter().all(|&b| b == 0));
    assert!(default.section_bytes(Section::Oam).iter().all(|&b| b == 0));

    let set = power_on(&rom, PowerOnProfile::VblankSet);
    assert_eq!(ppu_register(&set, "status") & 0xE0, 0xA0, "\"+0+x xxxx\": VBlank and overflow");
    let warm = power_on(&rom, PowerOnProfile::WarmUp);
    assert_eq!(ppu_register(&warm, "reset_warmup"), 1);
    let palette = power_on(&rom, PowerOnProfile::ConsolePalette);
    for (index, &value) in CONSOLE_PALETTE.iter().enumerate() {
        // $3F10/$3F14/$3F18/$3F1C are stored at their mirrors.
        let stored = if index & 0x13 == 0x10 { index & 0x0F } else { index };
        assert_eq!(palette.ppu().palette()[stored], value, "palette entry {index:#04x}");
    }
    let ones = power_on(&rom, PowerOnProfile::RamFf);
    assert!(ones.section_bytes(Section::Ram).iter().all(|&b| b == 0xFF));
    assert!(ones.section_bytes(Section::Oam).iter().all(|&b| b == 0xFF));
    for phase in 1..=3 {
        assert_eq!(power_on(&rom, PowerOnProfile::Phase(phase)).config().alignment(), phase);
    }
    // A seeded OAM is its own pattern, not a copy of work RAM's first bytes.
    let seeded = NesConfig {
        seed: 5,
        ram_init: anes::nes::RamInit::Seeded,
        oam_init: anes::nes::RamInit::Seeded,
        ..NesConfig::default()
    };
    let seeded = Nes::new(Cartridge::from_ines(&rom).unwrap(), seeded);
    assert_ne!(&seeded.section_bytes(Section::Ram)[..256], seeded.section_bytes(Section::Oam));
}

/// A profile's machine is the same built directly, restored from another profile's console, and
/// power-cycled after the restore: the choices travel in the state.
#[test]
fn the_same_profile_gives_the_same_machine_everywhere() {
    let rom = one_vblank_rom();
    for profile in profiles() {
        let mut direct = power_on(&rom, profile);
        let mut snapshot = Vec::new();
        direct.save_state(&mut snapshot);
        let mut restored = power_on(&rom, PowerOnProfile::QuickPowerCycle);
        restored.load_state(&snapshot).unwrap();
        assert_eq!(restored.state_hash(), direct.state_hash(), "{profile}");
        assert_eq!(restored.config(), profile.config(), "{profile}");
        let cycle = FrameInput { pads: [0, 0], command: anes::nes::movie::ConsoleCommand::PowerCycle };
        direct.run_frame(FrameInput::default());
        restored.run_frame(FrameInput::default());
        assert_eq!(restored.run_frame(cycle), direct.run_frame(cycle), "{profile} after a power cycle");
        let parsed: PowerOnProfile = profile.to_string().parse().unwrap();
        assert_eq!(power_on(&rom, parsed).state_hash(), power_on(&rom, profile).state_hash(), "{profile}");
    }
}

/// The colour indices of the four squares of the ROM's tile at the top left: colours 0-3 of palette 0.
fn squares(nes: &Nes) -> [u16; 4] {
    let picture = nes.ppu().frame_buffer();
    [picture[0], picture[4], picture[4 * 256], picture[4 * 256 + 4]]
}

#[test]
fn the_one_vblank_start_up_shows_its_picture_only_without_the_warm_up() {
    let rom = one_vblank_rom();
    // $21 blue, $16 red, $2A green, $30 white: the ROM's palette; $00 (grey) is palette RAM untouched.
    let picture = [0x21, 0x16, 0x2A, 0x30];
    for (profile, expected) in [
        (PowerOnProfile::Default, picture),
        (PowerOnProfile::VblankSet, picture),
        (PowerOnProfile::ConsolePalette, picture),
        (PowerOnProfile::WarmUp, [0; 4]),
        (PowerOnProfile::QuickPowerCycle, [0; 4]),
    ] {
        let mut nes = power_on(&rom, profile);
        for _ in 0..10 {
            nes.run_frame(FrameInput::default());
        }
        assert_eq!(nes.peek(0x0010), 0xA5, "{profile}: the start-up ran to its end");
        assert_eq!(squares(&nes), expected, "{profile}");
        let grey = nes.ppu().frame_buffer().iter().all(|&pixel| pixel == 0);
        assert_eq!(grey, expected == [0; 4], "{profile}: the whole picture");
    }
}
