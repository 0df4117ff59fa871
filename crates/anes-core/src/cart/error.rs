//! Why a ROM file or a battery save was refused.

use thiserror::Error;

/// Which part of an iNES file a size or offset refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RomPart {
    /// The 512-byte trainer (header byte 6 bit 2).
    Trainer,
    /// PRG ROM (header byte 4, and byte 9 low nibble in NES 2.0).
    PrgRom,
    /// CHR ROM (header byte 5, and byte 9 high nibble in NES 2.0).
    ChrRom,
}

impl core::fmt::Display for RomPart {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            RomPart::Trainer => "trainer",
            RomPart::PrgRom => "PRG ROM",
            RomPart::ChrRom => "CHR ROM",
        })
    }
}

/// The largest ROM file this core loads: 16 MiB. The largest iNES 1.0 file is under 6 MiB, and no
/// board anes implements addresses more than 2 MiB of PRG ROM and 256 KiB of CHR ROM, so only a
/// NES 2.0 header declaring far more than any supported board can use (or a device such as
/// `/dev/zero`) reaches it. Readers cap their reads here.
pub const MAX_ROM_FILE_LEN: usize = 16 << 20;

/// Comma-separated [`super::SUPPORTED_MAPPERS`], for messages.
pub(super) struct SupportedList;

impl core::fmt::Display for SupportedList {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, mapper) in super::board::SUPPORTED_MAPPERS.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{mapper}")?;
        }
        Ok(())
    }
}

/// `" (board name)"` when the board is known, empty otherwise.
pub(super) struct BoardSuffix(pub Option<&'static str>);

impl core::fmt::Display for BoardSuffix {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(name) => write!(f, " ({name})"),
            None => Ok(()),
        }
    }
}

/// Why a ROM file was refused. Every variant names the header field or file offset at fault and the
/// values found, so a person can fix the file or pick another dump.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RomError {
    /// The file is shorter than the 16-byte header.
    #[error("file is {len} bytes, shorter than the 16-byte iNES header; is this an NES ROM?")]
    TooShortForHeader {
        /// File length.
        len: usize,
    },
    /// The file is larger than any ROM this core loads.
    #[error("file is {len} bytes, larger than the {max}-byte limit for a ROM (MAX_ROM_FILE_LEN)")]
    FileTooLarge {
        /// File length.
        len: usize,
        /// [`MAX_ROM_FILE_LEN`].
        max: usize,
    },
    /// Bytes 0-3 are not "NES\x1A".
    #[error(
        "bad magic at offset 0: expected 4E 45 53 1A (\"NES\\x1A\"), found {found:02X?}; \
         not an iNES / NES 2.0 file (UNIF, FDS and raw dumps are not supported)"
    )]
    BadMagic {
        /// The first four bytes.
        found: [u8; 4],
    },
    /// The file ends before the data its header declares.
    #[error(
        "file ends inside the {part}: the header declares {expected} bytes of {part} at offsets \
         {start:#X}-{end:#X}, but the file has only {actual} of them ({file_len} bytes in all); \
         the dump is truncated or the header sizes are wrong"
    )]
    Truncated {
        /// The part that is cut short.
        part: RomPart,
        /// File offset where the part starts.
        start: usize,
        /// File offset just past the part's end, as declared.
        end: usize,
        /// Bytes of the part the header declares.
        expected: usize,
        /// Bytes of the part the file holds.
        actual: usize,
        /// File length.
        file_len: usize,
    },
    /// The board is not implemented.
    #[error(
        "ROM header bytes 6-8: mapper {mapper}{board}, submapper {submapper} is not supported; \
         supported mappers: {list}",
        board = BoardSuffix(*board),
        list = SupportedList
    )]
    UnsupportedMapper {
        /// iNES mapper number.
        mapper: u16,
        /// NES 2.0 submapper (0 for iNES 1.0).
        submapper: u8,
        /// Common name of the board, where known.
        board: Option<&'static str>,
    },
    /// The header declares no PRG ROM, so there is no reset vector.
    #[error("ROM header byte 4{nes20}: PRG ROM size is 0; a cartridge needs PRG ROM for its reset vector",
        nes20 = if *nes20 { " (and byte 9 low nibble)" } else { "" })]
    ZeroPrgSize {
        /// The header is NES 2.0 (the size also uses byte 9).
        nes20: bool,
    },
    /// A size computed from the header does not fit in memory.
    #[error("ROM header {field}: declared size overflows ({detail}); the header is corrupt")]
    SizeOverflow {
        /// The header field, e.g. "byte 4 / byte 9 low nibble (PRG ROM size, exponent form)".
        field: &'static str,
        /// The raw values involved.
        detail: String,
    },
    /// Not a plain NES/Famicom cartridge.
    #[error(
        "ROM header byte 7 bits 0-1 = {value} ({console}): only NES/Famicom cartridges are \
         supported (console type 0)"
    )]
    UnsupportedConsole {
        /// Console type field value.
        value: u8,
        /// What the value means.
        console: &'static str,
    },
    /// An NES 2.0 field this core cannot honour.
    #[error("ROM header byte {offset} ({field}) = {value:#04X}: {reason}")]
    InvalidNes20Field {
        /// Header byte offset.
        offset: usize,
        /// Field name.
        field: &'static str,
        /// Raw byte.
        value: u8,
        /// What is wrong and what to do.
        reason: &'static str,
    },
}

/// Why a battery save could not be loaded. The cartridge's RAM is left untouched.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BatteryRamError {
    /// The header declares no battery-backed RAM.
    #[error("this cartridge has no battery-backed RAM (ROM header byte 6 bit 1 clear, no NVRAM declared)")]
    NoBattery,
    /// The save has the wrong size.
    #[error(
        "battery save is {actual} bytes but this cartridge has {expected} bytes of battery-backed RAM; \
         is the save from another game or emulator?"
    )]
    SizeMismatch {
        /// Size of the cartridge's battery-backed RAM.
        expected: usize,
        /// Size of the data offered.
        actual: usize,
    },
}
