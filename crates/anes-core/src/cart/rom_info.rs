//! What a ROM's header says, as types: a leaf the boards read without depending on the parser.

/// Nametable arrangement wired by the board (or selected by the mapper at power-on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mirroring {
    /// $2000=$2400, $2800=$2C00 (vertical arrangement; vertically scrolling games).
    Horizontal,
    /// $2000=$2800, $2400=$2C00 (horizontal arrangement; horizontally scrolling games).
    Vertical,
    /// All four nametables show CIRAM page 0.
    SingleScreenA,
    /// All four nametables show CIRAM page 1.
    SingleScreenB,
    /// Four independent nametables: CIRAM plus 2 KiB of VRAM on the cartridge.
    FourScreen,
}

impl Mirroring {
    /// The decode most two-bit mirroring registers share (the VRC4's and VRC7's, the FME-7's, the
    /// Sunsoft-3's and -4's, Bandai's FCG): 0 vertical, 1 horizontal, 2 page 0, 3 page 1; bits
    /// above the low two ignored.
    pub(crate) const fn from_two_bits(bits: u8) -> Mirroring {
        match bits & 3 {
            0 => Mirroring::Vertical,
            1 => Mirroring::Horizontal,
            2 => Mirroring::SingleScreenA,
            _ => Mirroring::SingleScreenB,
        }
    }
}

/// The TV system a ROM declares (NES 2.0 byte 12 bits 0-1, in this order). iNES 1.0 has no reliable
/// field for it, so those ROMs read as [`HeaderRegion::Ntsc`]. The console that runs it is a
/// [`crate::Region`] ([`HeaderRegion::console`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderRegion {
    /// NTSC (RP2C02).
    Ntsc,
    /// PAL (RP2C07).
    Pal,
    /// Runs on either: the same ROM was sold in both regions or the game adapts to the console's
    /// timing, so it runs as NTSC unless told otherwise.
    Multi,
    /// Dendy clone timing (UA6538).
    Dendy,
}

impl HeaderRegion {
    /// The name used in messages.
    pub const fn name(self) -> &'static str {
        match self {
            HeaderRegion::Ntsc => "NTSC",
            HeaderRegion::Pal => "PAL",
            HeaderRegion::Multi => "multi-region",
            HeaderRegion::Dendy => "Dendy",
        }
    }

    /// The console this ROM asks for: NTSC, PAL or Dendy; `None` for a multi-region ROM, which runs
    /// on any (the caller picks, NTSC unless told otherwise).
    pub const fn console(self) -> Option<crate::region::Region> {
        match self {
            HeaderRegion::Ntsc => Some(crate::region::Region::Ntsc),
            HeaderRegion::Pal => Some(crate::region::Region::Pal),
            HeaderRegion::Multi => None,
            HeaderRegion::Dendy => Some(crate::region::Region::Dendy),
        }
    }
}

/// Which header dialect the file uses (nesdev "INES", section "Variant comparison").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderFormat {
    /// iNES 1.0: byte 7 bits 2-3 are 0 and bytes 12-15 are 0.
    Ines,
    /// NES 2.0: byte 7 bits 2-3 are binary 10.
    Nes20,
    /// Archaic iNES (or a header with garbage such as "DiskDude!" in bytes 7-15): only byte 6's upper
    /// nibble of the mapper number is trusted; bytes 7-15 are ignored.
    ArchaicInes,
}

/// What the header says about a cartridge, with iNES 1.0 defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RomInfo {
    /// Header dialect.
    pub format: HeaderFormat,
    /// Mapper number (12 bits in NES 2.0, 8 in iNES 1.0, 4 in archaic iNES).
    pub mapper: u16,
    /// NES 2.0 submapper (0 for iNES 1.0).
    pub submapper: u8,
    /// PRG ROM size in bytes, as declared (never 0).
    pub prg_rom_size: usize,
    /// CHR ROM size in bytes, as declared (0: the board has CHR RAM).
    pub chr_rom_size: usize,
    /// Volatile PRG RAM in bytes at $6000-$7FFF. iNES 1.0: byte 8 x 8 KiB, 8 KiB when byte 8 is 0 (the
    /// conformance ROMs rely on RAM even on boards that had none), 0 when the battery flag makes it
    /// NVRAM instead. NES 2.0: `64 << n` from byte 10's low nibble (0: none).
    pub prg_ram_size: usize,
    /// Battery-backed PRG RAM in bytes. iNES 1.0: the whole PRG RAM when the battery flag is set.
    /// NES 2.0: `64 << n` from byte 10's high nibble.
    pub prg_nvram_size: usize,
    /// Volatile CHR RAM in bytes. iNES 1.0: 8 KiB when there is no CHR ROM. NES 2.0: byte 11's low
    /// nibble as a shift count.
    pub chr_ram_size: usize,
    /// Battery-backed CHR RAM in bytes (NES 2.0 byte 11's high nibble; 0 in iNES 1.0).
    pub chr_nvram_size: usize,
    /// Nametable mirroring wired on the board (byte 6 bits 0 and 3). Boards with a mapper-controlled
    /// arrangement start from it but may change it.
    pub mirroring: Mirroring,
    /// Byte 6 bit 0 as stored, also where bit 3 (four screens) overrides it in
    /// [`RomInfo::mirroring`]: UNROM 512 tells its one-screen wiring (clear) from its four screens
    /// (set) by it (nesdev "UNROM 512").
    pub mirroring_bit: bool,
    /// Byte 6 bit 1: the board has battery-backed memory.
    pub battery: bool,
    /// Byte 6 bit 2: a 512-byte trainer precedes PRG ROM; it is loaded at $7000-$71FF.
    pub trainer: bool,
    /// TV system: NES 2.0 byte 12 bits 0-1, where PAL and Dendy are refused. Always NTSC for iNES 1.0:
    /// its TV-system bits (byte 9 bit 0, and the unofficial byte 10 bits 0-1) are ignored, because
    /// virtually no dump in circulation sets them, so they cannot tell a PAL dump from an NTSC one.
    pub region: HeaderRegion,
    /// NES 2.0 byte 14 bits 0-1: number of miscellaneous ROMs after CHR ROM (not used by any supported
    /// board; 0 for iNES 1.0).
    pub misc_rom_count: u8,
    /// NES 2.0 byte 15 bits 0-5: default expansion device (0: unspecified; 0 for iNES 1.0).
    pub default_expansion_device: u8,
}
