//! The named sections of machine state, in their fixed canonical order.

use crate::nes::Nes;

/// A named block of machine state. Snapshots store, and the state hash covers, every section in the
/// order of [`Section::ALL`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// Frame counter and power-on parameters ([`MachineState`]).
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
            // pins, the $2006 copy delay).
            Section::Ppu => 4,
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

crate::layout::state_struct! {
    /// The power-on config and the frame counter: the machine-level part of the state. The config is
    /// state so that a power cycle after a restore repeats the power-on of the machine that was saved,
    /// whatever config the restoring console was built with.
    pub struct MachineState {
        /// Frames completed since power-on (see [`Nes::run_until_frame_end`]).
        pub frame: u64,
        /// [`crate::NesConfig::seed`].
        pub seed: u64,
        /// [`crate::NesConfig::ram_init`] ([`crate::RamInit`] as u8).
        pub ram_init: u8,
        /// [`crate::NesConfig::cpu_ppu_alignment`]: the phase 0-3, or [`ALIGNMENT_FROM_SEED`] for `None`.
        /// (Formerly a reserved zero byte: snapshots from before read as phase 0, and are refused if their
        /// bus disagrees.)
        pub cpu_ppu_alignment: u8,
        /// The console's region ([`crate::Region`] as u8: 0 NTSC, 1 PAL, 2 Dendy). Formerly a
        /// reserved zero byte, so snapshots from before read as NTSC, which they are.
        pub region: u8,
        /// [`crate::NesConfig::palette_init`] ([`crate::PaletteInit`] as u8).
        pub palette_init: u8,
        /// [`crate::NesConfig::oam_init`] ([`crate::RamInit`] as u8).
        pub oam_init: u8,
        /// [`crate::NesConfig::ppu_vblank`] ([`crate::VblankAtPowerOn`] as u8).
        pub ppu_vblank: u8,
        /// [`crate::NesConfig::ppu_warm_up`] ([`crate::PpuWarmUp`] as u8).
        /// (These four were reserved zero bytes, and 0 is each one's power-on before they existed:
        /// palette and OAM $00, VBlank set, the warm-up ignoring writes.)
        pub ppu_warm_up: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 1],
    }
}

/// [`MachineState::cpu_ppu_alignment`] of a config that derives the phase from its seed.
pub const ALIGNMENT_FROM_SEED: u8 = 0xFF;

const _: () = assert!(core::mem::size_of::<MachineState>() == 24);

impl Nes {
    /// The canonical bytes of one section of the state.
    pub fn section_bytes(&self, section: Section) -> &[u8] {
        match section {
            Section::Machine => bytemuck::bytes_of(&self.machine),
            Section::Cpu => bytemuck::bytes_of(&self.cpu),
            Section::Bus => bytemuck::bytes_of(&self.bus),
            Section::Ram => &self.ram,
            Section::Ppu => self.ppu.state_bytes()[0],
            Section::Oam => self.ppu.state_bytes()[1],
            Section::SecondaryOam => self.ppu.state_bytes()[2],
            Section::Palette => self.ppu.state_bytes()[3],
            Section::Vram => &self.ciram,
            Section::Apu => self.apu.state_bytes(),
            Section::Mapper => self.cart.mapper_state_bytes(),
            Section::PrgRam => self.cart.prg_ram(),
            Section::ChrRam => self.cart.chr_ram(),
            Section::Input => bytemuck::cast_slice(&self.pads),
        }
    }

    /// Mutable access to one section's bytes; used only by `load_state`, which validates first.
    pub(crate) fn section_bytes_mut(&mut self, section: Section) -> &mut [u8] {
        match section {
            Section::Machine => bytemuck::bytes_of_mut(&mut self.machine),
            Section::Cpu => bytemuck::bytes_of_mut(&mut self.cpu),
            Section::Bus => bytemuck::bytes_of_mut(&mut self.bus),
            Section::Ram => &mut self.ram,
            Section::Ppu | Section::Oam | Section::SecondaryOam | Section::Palette => {
                let [regs, oam, secondary_oam, palette] = self.ppu.state_bytes_mut();
                match section {
                    Section::Ppu => regs,
                    Section::Oam => oam,
                    Section::SecondaryOam => secondary_oam,
                    _ => palette,
                }
            }
            Section::Vram => &mut self.ciram,
            Section::Apu => self.apu.state_bytes_mut(),
            Section::Mapper => self.cart.mapper_state_bytes_mut(),
            Section::PrgRam => self.cart.prg_ram_mut(),
            Section::ChrRam => self.cart.chr_ram_mut(),
            Section::Input => bytemuck::cast_slice_mut(&mut self.pads),
        }
    }
}
