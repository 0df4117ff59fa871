//! iNES 1.0 / NES 2.0 header parsing (nesdev "INES", "NES 2.0").
//!
//! Every size is computed with checked arithmetic and checked against the file length before any slice
//! is taken, so no input panics.

use super::error::{MAX_ROM_FILE_LEN, RomError, RomPart};
use super::rom_info::{HeaderFormat, HeaderRegion, Mirroring, RomInfo};

/// The parts of a parsed file, borrowed from it.
#[derive(Debug)]
pub(super) struct ParsedRom<'a> {
    pub info: RomInfo,
    pub trainer: Option<&'a [u8]>,
    pub prg_rom: &'a [u8],
    pub chr_rom: &'a [u8],
}

const HEADER_LEN: usize = 16;
const TRAINER_LEN: usize = 512;

/// Common names of boards by mapper number (and submapper where it changes the board), for messages.
pub(super) fn board_name(mapper: u16, submapper: u8) -> Option<&'static str> {
    Some(match (mapper, submapper) {
        (0, _) => "NROM",
        (1, _) => "MMC1 (SxROM)",
        (2, _) => "UxROM",
        (3, _) => "CNROM",
        (4, 1) => "MMC6 (HKROM)",
        (4, 3) => "MC-ACC (Acclaim MMC3 clone)",
        (4, _) => "MMC3 (TxROM)",
        (5, _) => "MMC5 (ExROM)",
        (7, _) => "AxROM",
        (9, _) => "MMC2 (PxROM)",
        (10, _) => "MMC4 (FxROM)",
        (11, _) => "Color Dreams",
        (13, _) => "CPROM",
        (16, 1) => "Bandai LZ93D50 with 24C01 (deprecated: mapper 159)",
        (16, 2) => "Bandai Datach Joint ROM System (deprecated: mapper 157)",
        (16, 3) => "Bandai LZ93D50 with SRAM (deprecated: mapper 153)",
        (16, 4) => "Bandai FCG-1/2",
        (16, 5) => "Bandai LZ93D50",
        (16, _) => "Bandai FCG",
        (18, _) => "Jaleco SS88006",
        (19, _) => "Namco 163",
        (21, 1) => "Konami VRC4a",
        (21, 2) => "Konami VRC4c",
        (21, _) => "Konami VRC4a/VRC4c",
        (22, _) => "Konami VRC2a",
        (23, 1) => "Konami VRC4f",
        (23, 2) => "Konami VRC4e",
        (23, 3) => "Konami VRC2b",
        (23, _) => "Konami VRC4e/VRC4f/VRC2b",
        (25, 1) => "Konami VRC4b",
        (25, 2) => "Konami VRC4d",
        (25, 3) => "Konami VRC2c",
        (25, _) => "Konami VRC4b/VRC4d/VRC2c",
        (24 | 26, _) => "Konami VRC6",
        (28, _) => "Action 53",
        (30, _) => "UNROM 512",
        (32, 1) => "Irem G-101 (Major League)",
        (32, _) => "Irem G-101",
        (78, 1) => "Irem 74HC161 (Cosmo Carrier)",
        (78, 3) => "Irem 74HC161 (Holy Diver)",
        (78, _) => "Irem 74HC161 (Holy Diver / Cosmo Carrier)",
        (86, _) => "Jaleco JF-13",
        (87, _) => "Jaleco JF-05..10 (CHR latch)",
        (92, _) => "Jaleco JF-19/JF-21",
        (97, _) => "Irem TAM-S1",
        (34, 1) => "NINA-001",
        (34, 2) => "BNROM",
        (34, _) => "BNROM / NINA-001",
        (33, _) => "Taito TC0190",
        (48, _) => "Taito TC0690",
        (80, _) => "Taito X1-005",
        (82, _) => "Taito X1-017",
        (207, _) => "Taito X1-005 (nametables from CHR bit 7)",
        (64, _) => "Tengen RAMBO-1",
        (65, _) => "Irem H3001",
        (66, _) => "GxROM",
        (67, _) => "Sunsoft-3",
        (68, _) => "Sunsoft-4",
        (69, _) => "Sunsoft FME-7",
        (70, _) => "Bandai discrete (mapper 70)",
        (71, 1) => "Camerica BF9097 (Fire Hawk)",
        (71, _) => "Camerica/Codemasters BF9093",
        (73, _) => "Konami VRC3",
        (75, _) => "Konami VRC1",
        (76, _) => "NAMCOT-3446 (Namco 108)",
        (88, _) => "NAMCOT-3443 (Namco 108)",
        (89, _) => "Sunsoft-2 (Sunsoft-3 board)",
        (93, _) => "Sunsoft-2 (Sunsoft-3R board)",
        (184, _) => "Sunsoft-1",
        (95, _) => "NAMCOT-3425 (Namco 108)",
        (152, _) => "Bandai discrete, one-screen (mapper 152)",
        (153, _) => "Bandai LZ93D50 with SRAM",
        (159, _) => "Bandai LZ93D50 with X24C01",
        (154, _) => "NAMCOT-3453 (Namco 108)",
        (79, _) => "NINA-03/06",
        (85, _) => "Konami VRC7",
        (94, _) => "UN1ROM",
        (111, _) => "GTROM (Cheapocabra)",
        (113, _) => "NINA-03/06 (HES)",
        (140, _) => "Jaleco JF-11/JF-14",
        (155, _) => "MMC1A (SxROM)",
        (180, _) => "UNROM (first bank fixed)",
        (185, _) => "CNROM with copy protection",
        (232, 1) => "Camerica BF9096 (Aladdin Deck Enhancer)",
        (232, _) => "Camerica BF9096 (Quattro)",
        (105, _) => "NES-EVENT (MMC1)",
        (118, _) => "TxSROM (MMC3)",
        (119, _) => "TQROM (MMC3)",
        (206, _) => "DxROM (Namco 108)",
        (210, _) => "Namco 175/340",
        _ => return None,
    })
}

/// Is this mapper/submapper pair implemented?
pub(super) fn is_supported(mapper: u16, submapper: u8) -> bool {
    super::board::Board::supports(mapper, submapper)
}

/// The MMC6's RAM, inside the chip: 1 KiB (nesdev "MMC6").
pub(super) const MMC6_PRG_RAM_LEN: usize = 0x400;

/// NES 2.0 ROM size: a 12-bit count of `unit`-byte banks, or, when the MSB nibble is $F, the
/// exponent-multiplier form `2^E * (MM*2+1)` of the LSB byte `EEEEEEMM`.
fn nes20_rom_size(lsb: u8, msb_nibble: u8, unit: usize, field: &'static str) -> Result<usize, RomError> {
    let overflow =
        || RomError::SizeOverflow { field, detail: format!("LSB {lsb:#04X}, MSB nibble {msb_nibble:#X}") };
    if msb_nibble == 0xF {
        let exponent = u32::from(lsb >> 2);
        let multiplier = usize::from(lsb & 3) * 2 + 1;
        let power = 1usize.checked_shl(exponent).ok_or_else(overflow)?;
        power.checked_mul(multiplier).ok_or_else(overflow)
    } else {
        let banks = usize::from(msb_nibble) << 8 | usize::from(lsb);
        banks.checked_mul(unit).ok_or_else(overflow)
    }
}

/// NES 2.0 RAM size from a 4-bit shift count: 0 means none, otherwise `64 << n`.
fn nes20_ram_size(shift: u8) -> usize {
    if shift == 0 { 0 } else { 64usize << shift }
}

/// Checks that `bytes` holds `len` bytes of `part` at `start`, and returns them.
fn take(bytes: &[u8], part: RomPart, start: usize, len: usize) -> Result<&[u8], RomError> {
    let end = start.checked_add(len).ok_or_else(|| RomError::SizeOverflow {
        field: "file layout (header + trainer + PRG ROM + CHR ROM)",
        detail: format!("{part} of {len} bytes at offset {start:#X}"),
    })?;
    match bytes.get(start..end) {
        Some(slice) => Ok(slice),
        None => Err(RomError::Truncated {
            part,
            start,
            end,
            expected: len,
            actual: bytes.len().saturating_sub(start),
            file_len: bytes.len(),
        }),
    }
}

/// Parses the header and splits the file into trainer, PRG ROM and CHR ROM.
pub(super) fn parse(bytes: &[u8]) -> Result<ParsedRom<'_>, RomError> {
    let Some(header) = bytes.first_chunk::<HEADER_LEN>() else {
        return Err(RomError::TooShortForHeader { len: bytes.len() });
    };
    let magic = [header[0], header[1], header[2], header[3]];
    if &magic != b"NES\x1a" {
        return Err(RomError::BadMagic { found: magic });
    }
    if bytes.len() > MAX_ROM_FILE_LEN {
        return Err(RomError::FileTooLarge { len: bytes.len(), max: MAX_ROM_FILE_LEN });
    }
    let format = match header[7] & 0x0C {
        0x08 => HeaderFormat::Nes20,
        0x00 if header[12..16].iter().all(|&b| b == 0) => HeaderFormat::Ines,
        // nesdev "INES", "Variant comparison": anything else (e.g. "DiskDude!" from byte 7 on) is
        // archaic iNES, whose bytes 7-15 are not to be trusted.
        _ => HeaderFormat::ArchaicInes,
    };
    let flags6 = header[6];
    let mirroring = if flags6 & 0x08 != 0 {
        Mirroring::FourScreen
    } else if flags6 & 0x01 != 0 {
        Mirroring::Vertical
    } else {
        Mirroring::Horizontal
    };
    let battery = flags6 & 0x02 != 0;
    let trainer = flags6 & 0x04 != 0;
    let mapper_low = u16::from(flags6 >> 4);

    let mut info = RomInfo {
        format,
        mapper: mapper_low,
        submapper: 0,
        prg_rom_size: 0,
        chr_rom_size: 0,
        prg_ram_size: 0,
        prg_nvram_size: 0,
        chr_ram_size: 0,
        chr_nvram_size: 0,
        mirroring,
        mirroring_bit: flags6 & 0x01 != 0,
        battery,
        trainer,
        region: HeaderRegion::Ntsc,
        misc_rom_count: 0,
        default_expansion_device: 0,
    };
    match format {
        HeaderFormat::Nes20 => {
            check_console_type(header[7] & 3, Some(header[13] & 0x0F))?;
            info.mapper = mapper_low | u16::from(header[7] & 0xF0) | u16::from(header[8] & 0x0F) << 8;
            info.submapper = header[8] >> 4;
            info.prg_rom_size = nes20_rom_size(
                header[4],
                header[9] & 0x0F,
                0x4000,
                "byte 4 / byte 9 low nibble (PRG ROM size)",
            )?;
            info.chr_rom_size = nes20_rom_size(
                header[5],
                header[9] >> 4,
                0x2000,
                "byte 5 / byte 9 high nibble (CHR ROM size)",
            )?;
            info.prg_ram_size = nes20_ram_size(header[10] & 0x0F);
            info.prg_nvram_size = nes20_ram_size(header[10] >> 4);
            info.chr_ram_size = nes20_ram_size(header[11] & 0x0F);
            info.chr_nvram_size = nes20_ram_size(header[11] >> 4);
            info.region = match header[12] & 3 {
                0 => HeaderRegion::Ntsc,
                1 => HeaderRegion::Pal,
                2 => HeaderRegion::Multi,
                _ => HeaderRegion::Dendy,
            };
            info.misc_rom_count = header[14] & 3;
            info.default_expansion_device = header[15] & 0x3F;
        }
        HeaderFormat::Ines | HeaderFormat::ArchaicInes => {
            let archaic = format == HeaderFormat::ArchaicInes;
            if !archaic {
                check_console_type(header[7] & 3, None)?;
                info.mapper |= u16::from(header[7] & 0xF0);
                // Byte 9 bit 0 (PAL) is not trusted; see `RomInfo::region`.
            }
            info.prg_rom_size = usize::from(header[4]) * 0x4000;
            info.chr_rom_size = usize::from(header[5]) * 0x2000;
            // Byte 8 (PRG RAM in 8 KiB units, 0 meaning 8 KiB) is only trusted in a clean header.
            let ram = if archaic || header[8] == 0 { 0x2000 } else { usize::from(header[8]) * 0x2000 };
            if battery {
                info.prg_nvram_size = ram;
            } else {
                info.prg_ram_size = ram;
            }
            if info.chr_rom_size == 0 {
                info.chr_ram_size = 0x2000;
            }
        }
    }
    if info.prg_rom_size == 0 {
        return Err(RomError::ZeroPrgSize { nes20: format == HeaderFormat::Nes20 });
    }
    if !is_supported(info.mapper, info.submapper) {
        return Err(RomError::UnsupportedMapper {
            mapper: info.mapper,
            submapper: info.submapper,
            board: board_name(info.mapper, info.submapper),
        });
    }
    // Submappers exist only in NES 2.0 headers, so this is one. The MMC6 has exactly its own 1 KiB:
    // a header declaring another size describes no real HKROM board (nesdev "INES Mapper 004":
    // NES 2.0 images of it have 1024 bytes of battery-backed PRG RAM).
    if (info.mapper, info.submapper) == (4, 1)
        && info.prg_ram_size.saturating_add(info.prg_nvram_size) != MMC6_PRG_RAM_LEN
    {
        return Err(RomError::InvalidNes20Field {
            offset: 10,
            field: "PRG RAM / PRG NVRAM size",
            value: header[10],
            reason: "the MMC6 (mapper 4, submapper 1) has exactly 1 KiB of PRG RAM, inside the chip: \
                     byte 10 must declare 1 KiB, $40 when battery-backed (StarTropics) or $04 when not",
        });
    }

    let mut offset = HEADER_LEN;
    let trainer_data = if trainer {
        let data = take(bytes, RomPart::Trainer, offset, TRAINER_LEN)?;
        offset += TRAINER_LEN;
        Some(data)
    } else {
        None
    };
    let prg_rom = take(bytes, RomPart::PrgRom, offset, info.prg_rom_size)?;
    offset += prg_rom.len();
    let chr_rom = take(bytes, RomPart::ChrRom, offset, info.chr_rom_size)?;
    offset += chr_rom.len();
    if info.misc_rom_count > 0 && bytes.len() <= offset {
        return Err(RomError::InvalidNes20Field {
            offset: 14,
            field: "miscellaneous ROM count",
            value: header[14],
            reason: "miscellaneous ROMs are declared but the file ends right after CHR ROM; \
                     the dump is truncated or byte 14 should be 0",
        });
    }
    Ok(ParsedRom { info, trainer: trainer_data, prg_rom, chr_rom })
}

/// Refuses everything but a plain NES/Famicom (byte 7 bits 0-1, and NES 2.0 byte 13 for the extended
/// console type).
fn check_console_type(console_type: u8, extended: Option<u8>) -> Result<(), RomError> {
    let console = match (console_type, extended) {
        (0, _) | (3, Some(0)) => return Ok(()),
        (1, _) | (3, Some(1)) => "Vs. System",
        (2, _) | (3, Some(2)) => "PlayChoice-10",
        (3, Some(3)) => "Famiclone with decimal mode",
        (3, Some(4)) => "NES/Famicom with EPSM",
        (3, Some(5..=0xB)) => "VT01-VT369 famiclone",
        (3, Some(0xC)) => "UMC UM6578",
        (3, Some(0xD)) => "Famicom Network System",
        (3, _) => "extended console type (byte 13 low nibble reserved)",
        _ => "unknown",
    };
    Err(RomError::UnsupportedConsole { value: console_type, console })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NROM file: 16 KiB PRG ROM, 8 KiB CHR ROM, with `header` bytes 7-15 as given.
    fn nrom(bytes_7_to_15: [u8; 9]) -> Vec<u8> {
        let mut rom = vec![0u8; HEADER_LEN + 0x4000 + 0x2000];
        rom[..7].copy_from_slice(b"NES\x1a\x01\x01\x00");
        rom[7..HEADER_LEN].copy_from_slice(&bytes_7_to_15);
        rom
    }

    #[test]
    fn nes20_byte_12_names_the_console() {
        use crate::region::Region;
        // nesdev "NES 2.0" byte 12 bits 0-1: 0 NTSC, 1 PAL, 2 multi-region, 3 Dendy; bits 2-7 unused.
        for (byte12, region, console) in [
            (0u8, HeaderRegion::Ntsc, Some(Region::Ntsc)),
            (1, HeaderRegion::Pal, Some(Region::Pal)),
            (2, HeaderRegion::Multi, None),
            (3, HeaderRegion::Dendy, Some(Region::Dendy)),
            (0xFD, HeaderRegion::Pal, Some(Region::Pal)),
        ] {
            let rom = nrom([0x08, 0, 0, 0, 0, byte12, 0, 0, 0]);
            let info = parse(&rom).unwrap().info;
            assert_eq!((info.region, info.region.console()), (region, console), "byte 12 = {byte12:#04X}");
        }
    }

    #[test]
    fn files_over_the_limit_are_refused() {
        let mut rom = nrom([0; 9]);
        rom.resize(MAX_ROM_FILE_LEN, 0);
        assert!(parse(&rom).is_ok(), "trailing bytes up to the limit are allowed");
        rom.push(0);
        assert_eq!(
            parse(&rom).unwrap_err(),
            RomError::FileTooLarge { len: MAX_ROM_FILE_LEN + 1, max: MAX_ROM_FILE_LEN }
        );
    }

    #[test]
    fn ines_tv_system_bits_are_ignored() {
        // Byte 9 bit 0 (PAL in the iNES 1.0 text) and byte 10 bits 0-1 (unofficial): still NTSC.
        for (byte9, byte10) in [(1u8, 0u8), (0, 2), (1, 3)] {
            let rom = nrom([0, 0, byte9, byte10, 0, 0, 0, 0, 0]);
            let info = parse(&rom).unwrap().info;
            assert_eq!((info.format, info.region), (HeaderFormat::Ines, HeaderRegion::Ntsc));
        }
    }

    #[test]
    fn mapper_4_submappers() {
        // 0 MMC3, 1 MMC6, 4 MMC3A are modelled; 3, the Acclaim MC-ACC, is not.
        assert!(is_supported(4, 0) && is_supported(4, 1) && is_supported(4, 4));
        assert!(!is_supported(4, 3));
        assert_eq!(board_name(4, 1), Some("MMC6 (HKROM)"));
    }

    #[test]
    fn nes20_sizes() {
        assert_eq!(nes20_rom_size(2, 0, 0x4000, "f"), Ok(0x8000));
        assert_eq!(nes20_rom_size(0x00, 1, 0x4000, "f"), Ok(0x100 * 0x4000));
        // Exponent-multiplier: 2^E * (2*MM + 1).
        assert_eq!(nes20_rom_size(0x00, 0xF, 0x4000, "f"), Ok(1));
        assert_eq!(nes20_rom_size((10 << 2) | 3, 0xF, 0x4000, "f"), Ok(7 * 1024));
        assert!(nes20_rom_size(0xFF, 0xF, 0x4000, "f").is_err());
        assert_eq!((nes20_ram_size(0), nes20_ram_size(7), nes20_ram_size(15)), (0, 0x2000, 0x20_0000));
    }
}
