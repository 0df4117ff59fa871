//! The named sections of machine state: a leaf, so that the cartridge can name the memories it
//! keeps the sync digest for without depending on the console.

/// A named block of machine state. Snapshots store, and the state hash covers, every section in the
/// order of [`Section::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// Frame counter and power-on parameters ([`MachineState`](crate::state::MachineState)).
    Machine,
    /// CPU registers and interrupt latches ([`crate::CpuState`]).
    Cpu,
    /// Clocks, data bus and DMA unit ([`crate::bus::BusState`]).
    Bus,
    /// The console's 2 KiB of work RAM.
    Ram,
    /// PPU registers, latches, shifters and position.
    Ppu,
    /// Primary sprite memory (256 bytes).
    Oam,
    /// Secondary sprite memory (32 bytes).
    SecondaryOam,
    /// Palette RAM (32 bytes).
    Palette,
    /// The console's 2 KiB of nametable RAM (CIRAM).
    Vram,
    /// APU channels, frame counter and DMC.
    Apu,
    /// The cartridge board's registers.
    Mapper,
    /// Cartridge PRG RAM (work RAM / battery RAM); empty when the board has none.
    PrgRam,
    /// Cartridge CHR RAM (and extra nametable RAM); empty when the board has CHR ROM only.
    ChrRam,
    /// Both controllers' shift registers and held buttons.
    Input,
}

impl Section {
    /// Every section, in canonical order.
    pub const ALL: [Section; 14] = [
        Section::Machine,
        Section::Cpu,
        Section::Bus,
        Section::Ram,
        Section::Ppu,
        Section::Oam,
        Section::SecondaryOam,
        Section::Palette,
        Section::Vram,
        Section::Apu,
        Section::Mapper,
        Section::PrgRam,
        Section::ChrRam,
        Section::Input,
    ];

    /// The section's position in [`Section::ALL`] (and in snapshots).
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The section's name in reports and `--json` output.
    pub const fn name(self) -> &'static str {
        match self {
            Section::Machine => "machine",
            Section::Cpu => "cpu",
            Section::Bus => "bus",
            Section::Ram => "ram",
            Section::Ppu => "ppu",
            Section::Oam => "oam",
            Section::SecondaryOam => "secondary_oam",
            Section::Palette => "palette",
            Section::Vram => "vram",
            Section::Apu => "apu",
            Section::Mapper => "mapper",
            Section::PrgRam => "prg_ram",
            Section::ChrRam => "chr_ram",
            Section::Input => "input",
        }
    }

    /// Looks a section up by [`Section::name`].
    pub fn from_name(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The four-byte tag that marks the section in a snapshot.
    pub const fn tag(self) -> [u8; 4] {
        match self {
            Section::Machine => *b"MACH",
            Section::Cpu => *b"CPU ",
            Section::Bus => *b"BUS ",
            Section::Ram => *b"RAM ",
            Section::Ppu => *b"PPU ",
            Section::Oam => *b"OAM ",
            Section::SecondaryOam => *b"OAM2",
            Section::Palette => *b"PAL ",
            Section::Vram => *b"VRAM",
            Section::Apu => *b"APU ",
            Section::Mapper => *b"MAPR",
            Section::PrgRam => *b"PRAM",
            Section::ChrRam => *b"CRAM",
            Section::Input => *b"PADS",
        }
    }

    /// The layout version of the section. Bumped whenever the section's bytes change meaning; old
    /// versions are refused (or migrated explicitly), never reinterpreted.
    pub const fn version(self) -> u16 {
        match self {
            // Bus and input 2: the internal data bus and the joypad /OE and OUT0 latch timing.
            Section::Bus | Section::Input => 2,
            // PPU 2: the sprite flags' one-dot delay; 3: the owed OAM corruption, the sprite units'
            // first pixels after the odd-frame skip and 5 reserved bytes; 4: those 5 bytes hold the
            // address bus collisions (the PPUDATA read's buffer fill, the octal latch, the data
            // pins, the $2006 copy delay); 5: a PPUDATA read outside rendering fills the buffer late
            // too (bit 7 of the pending fill, its byte in the data pins).
            Section::Ppu => 5,
            // APU 2: the frame counter's deferred interrupt flag clear; 3: the DMC's delayed enable
            // and implicit abort.
            Section::Apu => 3,
            _ => 1,
        }
    }
}

const _: () = {
    let mut i = 0;
    while i < Section::ALL.len() {
        assert!(Section::ALL[i].index() == i, "Section::ALL is in declaration order");
        i += 1;
    }
};
