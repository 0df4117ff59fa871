//! The named sections of machine state, in their fixed canonical order.

use super::Section;
use crate::nes::Nes;

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
