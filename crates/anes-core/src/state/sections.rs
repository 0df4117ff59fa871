//! The named sections of machine state, in their fixed canonical order.

use super::Section;
use crate::nes::Nes;

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
