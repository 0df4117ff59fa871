//! iNES 1.0 / NES 2.0 header parsing.

use thiserror::Error;

/// Nametable arrangement wired by the board (or selected by the mapper at power-on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirroring {
    /// $2000=$2400, $2800=$2C00 (vertical arrangement; horizontal scrolling games).
    Horizontal,
    /// $2000=$2800, $2400=$2C00.
    Vertical,
    /// All four nametables show CIRAM page 0.
    SingleScreenA,
    /// All four nametables show CIRAM page 1.
    SingleScreenB,
    /// Four independent nametables (extra VRAM on the cartridge).
    FourScreen,
}

/// The TV system a ROM declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// NTSC (RP2C02).
    Ntsc,
    /// PAL (RP2C07).
    Pal,
    /// Works on both.
    Multi,
    /// Dendy clone timing.
    Dendy,
}

/// What the header says about a cartridge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RomInfo {
    /// iNES mapper number.
    pub mapper: u16,
    /// NES 2.0 submapper (0 for iNES 1.0).
    pub submapper: u8,
    /// PRG ROM size in bytes.
    pub prg_rom_size: usize,
    /// CHR ROM size in bytes (0: the board has CHR RAM).
    pub chr_rom_size: usize,
    /// Nametable mirroring.
    pub mirroring: Mirroring,
    /// Battery-backed memory present.
    pub battery: bool,
    /// Region.
    pub region: Region,
}

/// Why a ROM file was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RomError {
    /// The file is shorter than the 16-byte header.
    #[error("file is {len} bytes, shorter than the 16-byte iNES header")]
    TooShortForHeader {
        /// File length.
        len: usize,
    },
    /// Bytes 0-3 are not "NES\x1A".
    #[error("bad magic at offset 0: expected 4E 45 53 1A (\"NES\\x1A\"), found {found:02X?}")]
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// The file ends before the data its header declares.
    #[error("file is {len} bytes but its header declares {needed} bytes")]
    Truncated {
        /// File length.
        len: usize,
        /// Bytes the header requires.
        needed: usize,
    },
}

pub(super) fn parse(bytes: &[u8]) -> Result<(RomInfo, Vec<u8>, Vec<u8>), RomError> {
    if bytes.len() < 16 {
        return Err(RomError::TooShortForHeader { len: bytes.len() });
    }
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    if &magic != b"NES\x1a" {
        return Err(RomError::BadMagic { found: magic });
    }
    let prg = usize::from(bytes[4]) * 0x4000;
    let chr = usize::from(bytes[5]) * 0x2000;
    let trainer = if bytes[6] & 4 != 0 { 512 } else { 0 };
    let start = 16 + trainer;
    let needed = start + prg + chr;
    if bytes.len() < needed {
        return Err(RomError::Truncated { len: bytes.len(), needed });
    }
    let mirroring = if bytes[6] & 8 != 0 {
        Mirroring::FourScreen
    } else if bytes[6] & 1 != 0 {
        Mirroring::Vertical
    } else {
        Mirroring::Horizontal
    };
    let info = RomInfo {
        mapper: u16::from(bytes[6] >> 4) | u16::from(bytes[7] & 0xF0),
        submapper: 0,
        prg_rom_size: prg,
        chr_rom_size: chr,
        mirroring,
        battery: bytes[6] & 2 != 0,
        region: Region::Ntsc,
    };
    Ok((info, bytes[start..start + prg].to_vec(), bytes[start + prg..needed].to_vec()))
}
