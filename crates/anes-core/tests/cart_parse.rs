//! iNES / NES 2.0 header parsing: specific cases, every error's message, and property tests that no
//! input (arbitrary, or a valid file mutated and truncated) makes parsing or later accesses panic.

mod cart_support;

use anes_core::cart::{BatteryRamError, HeaderFormat, HeaderRegion, Mirroring, RomPart};
use anes_core::{Cartridge, RomError};
use cart_support::{RomBuilder, prg_banks};
use proptest::prelude::*;

fn parse_err(bytes: &[u8]) -> RomError {
    Cartridge::from_ines(bytes).expect_err("must be refused")
}

#[test]
fn ines_defaults() {
    let cart = RomBuilder::new(0, 2, 0).cartridge();
    let info = cart.info();
    assert_eq!(info.format, HeaderFormat::Ines);
    assert_eq!((info.prg_rom_size, info.chr_rom_size), (0x8000, 0));
    assert_eq!((info.prg_ram_size, info.prg_nvram_size), (0x2000, 0));
    assert_eq!((info.chr_ram_size, info.chr_nvram_size), (0x2000, 0));
    assert_eq!(
        (info.mirroring, info.region, info.battery, info.trainer),
        (Mirroring::Horizontal, HeaderRegion::Ntsc, false, false)
    );
    assert_eq!(cart.chr_ram().len(), 0x2000);
    assert!(cart.battery_ram().is_none());

    // Battery: the PRG RAM is NVRAM; byte 8 gives its size in 8 KiB units.
    let mut rom = RomBuilder::new(1, 2, 1).flags6(0x03);
    rom.ines_prg_ram_8k = 2;
    let cart = rom.cartridge();
    assert_eq!((cart.info().prg_ram_size, cart.info().prg_nvram_size), (0, 0x4000));
    assert_eq!(cart.info().mirroring, Mirroring::Vertical);
    assert_eq!(cart.battery_ram().map(<[u8]>::len), Some(0x4000));
    assert!(cart.chr_ram().is_empty());
}

#[test]
fn nes20_exponent_multiplier_sizes() {
    let mut rom = RomBuilder::new(2, 0, 0).nes20(0, 0x07, 0x07).header().to_vec();
    rom[4] = (14 << 2) | 1; // 2^14 * 3 = 48 KiB
    rom[5] = 13 << 2; // 2^13 * 1 = 8 KiB
    rom[9] = 0xFF;
    rom.extend(cart_support::prg_image(0xC000));
    rom.extend(cart_support::chr_image(0x2000));
    let cart = Cartridge::from_ines(&rom).unwrap();
    assert_eq!((cart.info().prg_rom_size, cart.info().chr_rom_size), (0xC000, 0x2000));
    assert_eq!(prg_banks(&cart), [0, 1, 4, 5]);
}

#[test]
fn nes20_fields() {
    let mut rom = RomBuilder::new(4, 2, 0).nes20(4, 0x70, 0x09).flags6(0x02).build();
    rom[12] = 2;
    rom[15] = 0x01;
    let cart = Cartridge::from_ines(&rom).unwrap();
    let info = cart.info();
    assert_eq!(info.format, HeaderFormat::Nes20);
    assert_eq!((info.mapper, info.submapper), (4, 4));
    assert_eq!((info.prg_ram_size, info.prg_nvram_size), (0, 0x2000));
    assert_eq!((info.chr_ram_size, info.chr_nvram_size), (0x8000, 0));
    assert_eq!(cart.chr_ram().len(), 0x8000);
    assert_eq!(info.region, HeaderRegion::Multi);
    assert_eq!(info.default_expansion_device, 1);
    // No PRG RAM declared at all: $6000 is open bus.
    let cart = RomBuilder::new(0, 1, 1).nes20(0, 0, 0).cartridge();
    assert!(cart.prg_ram().is_empty());
    assert_eq!(cart.cpu_peek(0x6000, 0x3C), 0x3C);
    // 12-bit mapper number.
    let mut rom = RomBuilder::new(0x104, 1, 1).nes20(3, 0, 0).build();
    rom[8] = 0x31;
    assert_eq!(parse_err(&rom), RomError::UnsupportedMapper { mapper: 0x104, submapper: 3, board: None });
    // Extended console type 3 with byte 13 = 0 is a plain NES.
    let mut rom = RomBuilder::new(0, 1, 1).nes20(0, 0x07, 0).build();
    rom[7] |= 3;
    assert!(Cartridge::from_ines(&rom).is_ok());
}

#[test]
fn diskdude_garbage_ignores_the_upper_mapper_nibble() {
    let mut rom = RomBuilder::new(1, 2, 1).build();
    rom[7..16].copy_from_slice(b"DiskDude!");
    let cart = Cartridge::from_ines(&rom).unwrap();
    assert_eq!(cart.info().format, HeaderFormat::ArchaicInes);
    assert_eq!(cart.info().mapper, 1);
    assert_eq!(cart.info().prg_ram_size, 0x2000);
}

#[test]
fn trainer_is_loaded_at_7000_and_skipped_before_prg() {
    let cart = RomBuilder::new(0, 1, 1).flags6(0x04).cartridge();
    assert!(cart.info().trainer);
    assert_eq!(cart.cpu_peek(0x7000, 0), 0xA5);
    assert_eq!(cart.cpu_peek(0x71FF, 0), 0xFF ^ 0xA5);
    assert_eq!(cart.cpu_peek(0x7200, 0), 0);
    assert_eq!(prg_banks(&cart), [0, 1, 0, 1]);
    // A trainer gets RAM even when an NES 2.0 header declares none.
    let cart = RomBuilder::new(0, 1, 1).nes20(0, 0, 0).flags6(0x04).cartridge();
    assert_eq!(cart.cpu_peek(0x7001, 0), 0xA4);
    // The MMC6's 1 KiB starts at $7000: the trainer fills its lower half.
    let mut cart = RomBuilder::new(4, 2, 1).nes20(1, 0x04, 0).flags6(0x04).cartridge();
    assert_eq!(cart.prg_ram().len(), 0x400);
    assert_eq!((cart.prg_ram()[0], cart.prg_ram()[0x1FF], cart.prg_ram()[0x200]), (0xA5, 0xFF ^ 0xA5, 0));
    cart.cpu_write(0x8000, 0x20, 1);
    cart.cpu_write(0xA001, 0x20, 3);
    assert_eq!(cart.cpu_peek(0x7001, 0), 0xA4);
}

/// A trainer on a board with no PRG RAM whatever the header says (the Bandai LZ93D50 with its EEPROM,
/// the X1-005, the flash boards) has nowhere to go: it is dropped, the board loads with no RAM. The
/// random-seed header fuzz found mapper 159 with a trainer panicking at power-on.
#[test]
fn a_trainer_on_a_board_without_prg_ram_is_dropped() {
    for (mapper, battery) in [(159, 0), (80, 0), (30, 0x02), (111, 0)] {
        let mut cart = RomBuilder::new(mapper, 2, 1).nes20(0, 0, 0).flags6(0x04 | battery).cartridge();
        assert!(cart.info().trainer, "mapper {mapper}");
        assert!(cart.prg_ram().is_empty() || mapper == 30 || mapper == 111, "mapper {mapper}");
        cart.power_on();
        assert_ne!(cart.cpu_peek(0x7000, 0x5A), 0xA5, "mapper {mapper}: the trainer is not at $7000");
    }
}

#[test]
fn four_screen_header() {
    let cart = RomBuilder::new(4, 2, 1).flags6(0x09).cartridge();
    assert_eq!(cart.info().mirroring, Mirroring::FourScreen);
    assert_eq!(cart.extra_vram().len(), 0x800);
    assert!(RomBuilder::new(4, 2, 1).cartridge().extra_vram().is_empty());
}

#[test]
fn error_too_short_and_bad_magic() {
    let e = parse_err(&[0x4E, 0x45]);
    assert_eq!(e, RomError::TooShortForHeader { len: 2 });
    assert_eq!(e.to_string(), "file is 2 bytes, shorter than the 16-byte iNES header; is this an NES ROM?");
    let e = parse_err(b"PK\x03\x04 zip file, not a ROM");
    assert_eq!(e, RomError::BadMagic { found: *b"PK\x03\x04" });
    assert!(
        e.to_string().starts_with(
            "bad magic at offset 0: expected 4E 45 53 1A (\"NES\\x1A\"), found [50, 4B, 03, 04]"
        ),
        "{e}"
    );
}

#[test]
fn error_truncated_names_the_part_and_offsets() {
    let rom = RomBuilder::new(0, 2, 1).build();
    let e = parse_err(&rom[..0x9000]);
    assert_eq!(
        e,
        RomError::Truncated {
            part: RomPart::ChrRom,
            start: 0x8010,
            end: 0xA010,
            expected: 0x2000,
            actual: 0xFF0,
            file_len: 0x9000
        }
    );
    assert!(e.to_string().starts_with("file ends inside the CHR ROM: the header declares 8192 bytes of CHR ROM at offsets 0x8010-0xA010, but the file has only 4080 of them (36864 bytes in all)"), "{e}");
    let e = parse_err(&rom[..0x4000]);
    assert!(
        matches!(e, RomError::Truncated { part: RomPart::PrgRom, start: 0x10, actual: 0x3FF0, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("PRG ROM"));
    let rom = RomBuilder::new(0, 1, 1).flags6(0x04).build();
    let e = parse_err(&rom[..100]);
    assert!(
        matches!(e, RomError::Truncated { part: RomPart::Trainer, expected: 512, actual: 84, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("trainer"));
}

#[test]
fn error_unsupported_mapper_lists_the_supported_ones() {
    // 15 (a K-1029 multicart) has no board here and no name in the table.
    let e = parse_err(&RomBuilder::new(15, 2, 1).build());
    assert_eq!(e, RomError::UnsupportedMapper { mapper: 15, submapper: 0, board: None });
    assert_eq!(
        e.to_string(),
        "ROM header bytes 6-8: mapper 15, submapper 0 is not supported; supported mappers: 0, 1, 2, 3, 4, 5, \
         7, 9, 10, 11, 13, 16, 18, 19, 21, 22, 23, 24, 25, 26, 28, 30, 32, 33, 34, 48, 64, 65, 66, 67, 68, \
         69, 70, 71, 73, 75, 76, 78, 79, 80, 82, 85, 86, 87, 88, 89, 92, 93, 94, 95, 97, 105, 111, 113, 118, \
         119, 140, 152, 153, 154, 155, 158, 159, 180, 184, 185, 206, 207, 210, 232"
    );
    // Mapper 16's deprecated submappers name the mapper that replaced them.
    let e = parse_err(&RomBuilder::new(16, 2, 1).nes20(1, 0x07, 0).build());
    assert!(e.to_string().contains("(deprecated: mapper 159)), submapper 1 is not supported"), "{e}");
    let e = parse_err(&RomBuilder::new(4, 2, 1).nes20(3, 0x07, 0).build());
    assert!(
        e.to_string().contains("mapper 4 (MC-ACC (Acclaim MMC3 clone)), submapper 3 is not supported"),
        "{e}"
    );
    let e = parse_err(&RomBuilder::new(200, 2, 1).build());
    assert!(
        e.to_string().starts_with("ROM header bytes 6-8: mapper 200, submapper 0 is not supported"),
        "{e}"
    );
}

#[test]
fn error_zero_prg() {
    let e = parse_err(&RomBuilder::new(0, 0, 1).build());
    assert_eq!(e, RomError::ZeroPrgSize { nes20: false });
    assert_eq!(
        e.to_string(),
        "ROM header byte 4: PRG ROM size is 0; a cartridge needs PRG ROM for its reset vector"
    );
    let e = parse_err(&RomBuilder::new(0, 0, 1).nes20(0, 0, 0).build());
    assert!(e.to_string().starts_with("ROM header byte 4 (and byte 9 low nibble): PRG ROM size is 0"), "{e}");
}

#[test]
fn error_size_overflow() {
    let mut rom = RomBuilder::new(0, 1, 1).nes20(0, 0, 0).build();
    rom[4] = 0xFF; // 2^63 * 7
    rom[9] = 0x0F;
    let e = parse_err(&rom);
    assert!(matches!(e, RomError::SizeOverflow { .. }));
    assert_eq!(
        e.to_string(),
        "ROM header byte 4 / byte 9 low nibble (PRG ROM size): declared size overflows \
         (LSB 0xFF, MSB nibble 0xF); the header is corrupt"
    );
    // 2^62 * 1 is representable but the file cannot hold it.
    rom[4] = 62 << 2;
    assert!(matches!(parse_err(&rom), RomError::Truncated { part: RomPart::PrgRom, .. }));
}

#[test]
fn error_unsupported_console() {
    let mut rom = RomBuilder::new(0, 1, 1).build();
    rom[7] = 0x01;
    let e = parse_err(&rom);
    assert_eq!(e, RomError::UnsupportedConsole { value: 1, console: "Vs. System" });
    assert_eq!(
        e.to_string(),
        "ROM header byte 7 bits 0-1 = 1 (Vs. System): only NES/Famicom cartridges are supported (console type 0)"
    );
    rom[7] = 0x02;
    assert!(parse_err(&rom).to_string().contains("PlayChoice-10"));
    let mut rom = RomBuilder::new(0, 1, 1).nes20(0, 0, 0).build();
    rom[7] |= 3;
    rom[13] = 3;
    assert!(parse_err(&rom).to_string().contains("Famiclone with decimal mode"));
}

#[test]
fn error_nes20_misc_rom_without_data() {
    let mut rom = RomBuilder::new(0, 1, 1).nes20(0, 0, 0).build();
    rom[14] = 1;
    let e = parse_err(&rom);
    assert!(matches!(e, RomError::InvalidNes20Field { offset: 14, value: 1, .. }));
    assert!(
        e.to_string().starts_with(
            "ROM header byte 14 (miscellaneous ROM count) = 0x01: miscellaneous ROMs are declared"
        ),
        "{e}"
    );
    rom.push(0);
    assert!(Cartridge::from_ines(&rom).is_ok());
}

#[test]
fn mmc6_has_exactly_its_1_kib_of_prg_ram() {
    // Battery-backed ($40, StarTropics) or not ($04).
    let cart = RomBuilder::new(4, 2, 1).nes20(1, 0x40, 0).flags6(0x02).cartridge();
    let info = cart.info();
    assert_eq!((info.mapper, info.submapper, info.prg_ram_size, info.prg_nvram_size), (4, 1, 0, 0x400));
    assert_eq!((cart.prg_ram().len(), cart.battery_ram().map(<[u8]>::len)), (0x400, Some(0x400)));
    let cart = RomBuilder::new(4, 2, 1).nes20(1, 0x04, 0).cartridge();
    assert_eq!((cart.prg_ram().len(), cart.battery_ram()), (0x400, None));
    // Any other size describes no MMC6 board.
    for byte10 in [0x00, 0x07, 0x70, 0x44, 0x03, 0x50] {
        let e = parse_err(&RomBuilder::new(4, 2, 1).nes20(1, byte10, 0).build());
        assert_eq!(
            e,
            RomError::InvalidNes20Field {
                offset: 10,
                field: "PRG RAM / PRG NVRAM size",
                value: byte10,
                reason: "the MMC6 (mapper 4, submapper 1) has exactly 1 KiB of PRG RAM, inside the chip: \
                         byte 10 must declare 1 KiB, $40 when battery-backed (StarTropics) or $04 when not",
            },
            "byte 10 = ${byte10:02X}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "ROM header byte 10 (PRG RAM / PRG NVRAM size) = {byte10:#04X}: the MMC6"
            )),
            "{e}"
        );
    }
}

#[test]
fn battery_ram_load_and_errors() {
    let mut cart = RomBuilder::new(1, 2, 1).flags6(0x02).cartridge();
    let save: Vec<u8> = (0..0x2000).map(|i| i as u8).collect();
    cart.load_battery_ram(&save).unwrap();
    assert_eq!(cart.battery_ram(), Some(&save[..]));
    assert_eq!(cart.cpu_peek(0x6003, 0), 3);
    let e = cart.load_battery_ram(&[1, 2, 3]).unwrap_err();
    assert_eq!(e, BatteryRamError::SizeMismatch { expected: 0x2000, actual: 3 });
    assert_eq!(
        e.to_string(),
        "battery save is 3 bytes but this cartridge has 8192 bytes of battery-backed RAM; \
         is the save from another game or emulator?"
    );
    assert_eq!(cart.battery_ram(), Some(&save[..]), "a refused save leaves RAM untouched");
    let mut cart = RomBuilder::new(0, 1, 1).cartridge();
    let e = cart.load_battery_ram(&save).unwrap_err();
    assert_eq!(e, BatteryRamError::NoBattery);
    assert!(e.to_string().starts_with("this cartridge has no battery-backed RAM"));
    // PRG NVRAM declared on a board without PRG RAM (the X1-005, mappers 80 and 207): no battery there,
    // and a save of the declared size is refused, not indexed into RAM that is not there.
    for mapper in [80, 207] {
        let mut cart = RomBuilder::new(mapper, 2, 1).nes20(0, 0x10, 0).flags6(0x02).cartridge();
        assert_eq!(cart.info().prg_nvram_size, 128, "mapper {mapper}");
        assert_eq!(cart.battery_ram(), None, "mapper {mapper}");
        assert_eq!(cart.load_battery_ram(&[7; 128]), Err(BatteryRamError::NoBattery), "mapper {mapper}");
    }
}

/// Every CPU and PPU access, with side effects, plus a few register writes: none may panic.
fn exercise(cart: &mut Cartridge, writes: &[(u16, u8)]) {
    let mut ciram = [0u8; 0x800];
    for (i, &(addr, value)) in writes.iter().enumerate() {
        cart.cpu_write(addr | 0x4020, value, i as u64);
        cart.cpu_cycle();
    }
    for addr in 0x4020..=0xFFFFu16 {
        let _ = cart.cpu_read(addr, 0);
    }
    for addr in 0..0x4000u16 {
        let _ = cart.ppu_read(addr, &mut ciram);
        cart.ppu_address(addr ^ 0x1000);
        cart.ppu_write(addr, addr as u8, &mut ciram);
        cart.cpu_cycle();
    }
    let _ = cart.irq_line();
    cart.reset();
}

/// Valid files of every supported board, small enough to mutate.
fn valid_rom() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![0u16, 1, 2, 3, 4, 7, 9, 10, 11, 66, 71]),
        1usize..3,
        0usize..3,
        0u8..16,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mapper, prg, chr, flags6, nes20, mmc6)| {
            let rom = RomBuilder::new(mapper, prg, chr).flags6(flags6);
            match (nes20, mapper == 4 && mmc6) {
                (true, true) => rom.nes20(1, 0x40, 0x07).build(),
                (true, false) => rom.nes20(0, 0x07, 0x07).build(),
                (false, _) => rom.build(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(mut cart) = Cartridge::from_ines(&bytes) {
            exercise(&mut cart, &[]);
        }
    }

    #[test]
    fn arbitrary_headers_never_panic(
        header in prop::array::uniform12(any::<u8>()),
        body_len in 0usize..0x9000,
    ) {
        let mut bytes = b"NES\x1a".to_vec();
        bytes.extend(header);
        bytes.extend((0..body_len).map(|i| i as u8));
        if let Ok(mut cart) = Cartridge::from_ines(&bytes) {
            exercise(&mut cart, &[(0x8000, header[0]), (0xE001, header[1])]);
        }
    }

    #[test]
    fn mutated_valid_files_never_panic(
        rom in valid_rom(),
        mutations in prop::collection::vec((0usize..64, any::<u8>()), 0..6),
        truncate in prop::option::of(0usize..0x10000),
        writes in prop::collection::vec((0x4020u16..=0xFFFF, any::<u8>()), 0..40),
    ) {
        let mut rom = rom;
        for (index, value) in mutations {
            // Mostly the header, sometimes the trainer or PRG start.
            let index = if index < 16 { index } else { index * 37 };
            if let Some(byte) = rom.get_mut(index) {
                *byte = value;
            }
        }
        if let Some(len) = truncate {
            rom.truncate(len);
        }
        match Cartridge::from_ines(&rom) {
            Ok(mut cart) => exercise(&mut cart, &writes),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn corrupt_mapper_state_never_panics(
        rom in valid_rom(),
        state in prop::collection::vec(any::<u8>(), 32),
        writes in prop::collection::vec((0x4020u16..=0xFFFF, any::<u8>()), 0..20),
    ) {
        let mut cart = Cartridge::from_ines(&rom).unwrap();
        let bytes = cart.mapper_state_bytes_mut();
        let len = bytes.len();
        bytes.copy_from_slice(&state[..len]);
        cart.rebuild_caches();
        exercise(&mut cart, &writes);
    }
}
