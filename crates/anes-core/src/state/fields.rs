//! Names of the bytes of state, for field-level diffs (`cpu.p`, `ram[$0342]`, `apu.pulse[1].timer_period`).
//!
//! The layout tables come from the state structs themselves (`state_struct!`, see `crate::layout`).

use core::fmt::Write;
use core::ops::Range;

use super::{MachineState, Section};
use crate::apu::ApuState;
use crate::bus::sync::BusState;
use crate::cpu::CpuState;
use crate::input::ControllerState;
use crate::layout::{FieldLayout, StateLayout};
use crate::nes::Nes;
use crate::ppu::PpuRegs;

/// The input section: both controllers, named `input[0]` and `input[1]`.
const PADS: &[FieldLayout] = &[FieldLayout::of::<[ControllerState; 2]>(0, "")];

/// The layout of a section that is a struct, for sections whose shape does not depend on the
/// cartridge; `None` for memory arrays (named by address, `ram[$0342]`) and for the mapper.
pub fn section_layout(section: Section) -> Option<&'static [FieldLayout]> {
    match section {
        Section::Machine => Some(MachineState::FIELDS),
        Section::Cpu => Some(CpuState::FIELDS),
        Section::Bus => Some(BusState::FIELDS),
        Section::Apu => Some(ApuState::FIELDS),
        Section::Ppu => Some(PpuRegs::FIELDS),
        Section::Input => Some(PADS),
        _ => None,
    }
}

/// The layout of the mapper registers of the board with iNES number `mapper` (from the board
/// table's rows); `None` for an unsupported mapper or a board without registers.
pub fn mapper_layout(mapper: u16) -> Option<&'static [FieldLayout]> {
    crate::cart::mapper_fields(mapper)
}

/// Base address used to name bytes of memory sections (`ram[$0342]`, `vram[$2400]`).
fn memory_base(section: Section) -> usize {
    match section {
        Section::Vram => 0x2000,
        Section::Palette => 0x3F00,
        Section::PrgRam => 0x6000,
        _ => 0,
    }
}

/// Writes the name of the field holding byte `offset` of a section with `layout` (prefixed with
/// `prefix`) and returns the byte range of that field (the whole scalar for multi-byte fields).
fn name_in_layout(
    layout: &[FieldLayout],
    offset: usize,
    base: usize,
    out: &mut String,
) -> Option<Range<usize>> {
    let field = layout.iter().find(|f| (f.offset..f.offset + f.size).contains(&offset))?;
    if !field.name.is_empty() {
        out.push('.');
        out.push_str(field.name);
    }
    let mut within = offset - field.offset;
    let mut start = base + field.offset;
    if field.elem_size < field.size {
        let index = within / field.elem_size;
        let _ = write!(out, "[{index}]");
        within %= field.elem_size;
        start += index * field.elem_size;
    }
    match field.inner {
        Some(inner) => name_in_layout(inner, within, start, out),
        None if field.elem_size > 1 && field.type_name().starts_with('[') => {
            // An array of multi-byte scalars or a byte array inside an element: name the byte.
            Some(start + within..start + within + 1)
        }
        None => Some(start..start + field.elem_size),
    }
}

/// The offset of the first non-zero byte inside a field named `reserved` (at any depth) of a struct
/// with `layout` whose bytes are `bytes`, if any.
pub(crate) fn nonzero_reserved_byte(layout: &[FieldLayout], bytes: &[u8]) -> Option<usize> {
    layout.iter().find_map(|field| {
        let within = bytes.get(field.offset..field.offset + field.size)?;
        if field.name == "reserved" {
            return within.iter().position(|&b| b != 0).map(|at| field.offset + at);
        }
        let inner = field.inner?;
        within
            .chunks_exact(field.elem_size)
            .enumerate()
            .find_map(|(i, element)| nonzero_reserved_byte(inner, element).map(|at| i * field.elem_size + at))
            .map(|at| field.offset + at)
    })
}

/// Names byte `offset` of `section` into `out` (e.g. `cpu.p`, `bus.cpu_cycle`, `ram[$0342]`,
/// `input[1].shift`) and returns the byte range of the whole field, for sections whose layout does not
/// depend on the cartridge. See [`Nes::field_name`] for every section. An offset so large that its
/// address or the end of its byte overflows a `usize` is named out of range (`ram[out of range]`,
/// `cpu[out of range]`), with the empty range `offset..offset`.
pub fn field_name(section: Section, offset: usize, out: &mut String) -> Range<usize> {
    name_with(section, section_layout(section), memory_base(section), offset, out)
}

fn name_with(
    section: Section,
    layout: Option<&[FieldLayout]>,
    base: usize,
    offset: usize,
    out: &mut String,
) -> Range<usize> {
    out.push_str(section.name());
    if let Some(layout) = layout {
        if let Some(range) = name_in_layout(layout, offset, 0, out) {
            return range;
        }
    }
    // Checked: the offset is the caller's, any usize. One whose byte range or address does not fit
    // in a usize is no byte of any section: named out of range, with an empty range.
    let (Some(end), Some(address)) = (offset.checked_add(1), base.checked_add(offset)) else {
        out.push_str("[out of range]");
        return offset..offset;
    };
    let _ = if layout.is_some() { write!(out, "[{offset}]") } else { write!(out, "[${address:04X}]") };
    offset..end
}

impl Nes {
    /// The layout of a section that is a struct, including this cartridge's mapper registers.
    pub fn section_layout(&self, section: Section) -> Option<&'static [FieldLayout]> {
        match section {
            Section::Mapper => mapper_layout(self.cart.info().mapper),
            _ => section_layout(section),
        }
    }

    /// Names byte `offset` of `section` into `out` (`cpu.p`, `mapper.irq_counter`, `ram[$0342]`) and
    /// returns the byte range of the whole field it belongs to; an offset too large to name is
    /// named out of range, as [`field_name`] does.
    pub fn field_name(&self, section: Section, offset: usize, out: &mut String) -> Range<usize> {
        let base = match section {
            // The flash boards' section is the flash: named by chip address.
            Section::PrgRam if self.cart.has_flash() => 0,
            Section::PrgRam => usize::from(self.cart.prg_ram_cpu_address()),
            _ => memory_base(section),
        };
        name_with(section, self.section_layout(section), base, offset, out)
    }
}

#[cfg(test)]
mod tests {
    use core::mem::{offset_of, size_of};

    use super::*;
    use crate::apu::length::LengthCounter;
    use crate::apu::noise::Noise;
    use crate::apu::pulse::Pulse;

    fn name(section: Section, offset: usize) -> String {
        let mut s = String::new();
        field_name(section, offset, &mut s);
        s
    }

    #[test]
    fn names_fields_and_memory() {
        assert_eq!(name(Section::Ram, 0x342), "ram[$0342]");
        assert_eq!(name(Section::Cpu, offset_of!(CpuState, p)), "cpu.p");
        assert_eq!(name(Section::Cpu, 1), "cpu.pc");
        assert_eq!(name(Section::Bus, 9), "bus.cpu_cycle");
        assert_eq!(name(Section::Input, 5), "input[1].shift");
        assert_eq!(name(Section::Vram, 0x400), "vram[$2400]");
        assert_eq!(name(Section::Ppu, offset_of!(PpuRegs, v) + 1), "ppu.v");
        assert_eq!(name(Section::Oam, 5), "oam[$0005]");
        let pulse1_period = size_of::<Pulse>() + offset_of!(Pulse, timer_period) + 1;
        assert_eq!(name(Section::Apu, pulse1_period), "apu.pulse[1].timer_period");
        let mut s = String::new();
        let range = field_name(Section::Apu, pulse1_period, &mut s);
        assert_eq!(range.len(), 2);
        let length =
            offset_of!(ApuState, noise) + offset_of!(Noise, length) + offset_of!(LengthCounter, counter);
        assert_eq!(name(Section::Apu, length), "apu.noise.length.counter");
    }

    /// Offsets at the top of `usize` (whose byte end or address overflows) are named out of range,
    /// with an empty range; the largest that fits is still named by its address.
    #[test]
    fn offsets_too_large_to_name_are_out_of_range() {
        for section in Section::ALL {
            for offset in [usize::MAX, usize::MAX - 1, usize::MAX - 0x6000] {
                let mut s = String::new();
                let range = field_name(section, offset, &mut s);
                let fits =
                    offset.checked_add(1).is_some() && memory_base(section).checked_add(offset).is_some();
                if fits {
                    assert_eq!(range, offset..offset + 1, "{s}");
                    assert!(!s.contains("out of range"), "{s}");
                } else {
                    assert_eq!(
                        (s.as_str(), range),
                        (format!("{}[out of range]", section.name()).as_str(), offset..offset)
                    );
                }
            }
        }
        assert_eq!(name(Section::Vram, usize::MAX - 1), "vram[out of range]");
        assert_eq!(name(Section::Ram, usize::MAX - 1), format!("ram[${:04X}]", usize::MAX - 1));
        assert_eq!(name(Section::Cpu, usize::MAX), "cpu[out of range]");
        assert_eq!(name(Section::Cpu, 1000), "cpu[1000]");
        // The machine's own naming (PRG RAM at $6000 here, the mapper's layout) too.
        let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        rom.resize(16 + 0x4000 + 0x2000, 0);
        let nes = Nes::new(crate::Cartridge::from_ines(&rom).unwrap(), crate::NesConfig::default());
        for section in Section::ALL {
            let mut s = String::new();
            assert_eq!(nes.field_name(section, usize::MAX, &mut s), usize::MAX..usize::MAX);
            assert_eq!(s, format!("{}[out of range]", section.name()));
        }
        // $6000 + offset overflows from usize::MAX - $5FFF on.
        let mut s = String::new();
        let past = usize::MAX - 0x5FFF;
        assert_eq!(nes.field_name(Section::PrgRam, past, &mut s), past..past);
        assert_eq!(s, "prg_ram[out of range]");
        s.clear();
        assert_eq!(nes.field_name(Section::PrgRam, past - 1, &mut s), past - 1..past);
        assert_eq!(s, format!("prg_ram[${:04X}]", usize::MAX));
    }

    fn assert_covers(name: &str, layout: &[FieldLayout], size: usize) {
        let mut covered = vec![0u8; size];
        for f in layout {
            assert_eq!(f.size % f.elem_size, 0, "{name}.{}", f.name);
            for b in &mut covered[f.offset..f.offset + f.size] {
                *b += 1;
            }
            if let Some(inner) = f.inner {
                assert_covers(f.name, inner, f.elem_size);
            }
        }
        assert!(covered.iter().all(|&c| c == 1), "{name}: {covered:?}");
    }

    #[test]
    fn every_board_with_registers_names_them() {
        // NROM has no registers; every other supported board's bytes are named in diffs.
        for &mapper in crate::cart::SUPPORTED_MAPPERS.iter().filter(|&&m| m != 0) {
            assert!(mapper_layout(mapper).is_some(), "mapper {mapper} has no field layout");
        }
    }

    #[test]
    fn layouts_cover_their_structs_exactly() {
        assert_covers("cpu", CpuState::FIELDS, size_of::<CpuState>());
        assert_covers("bus", BusState::FIELDS, size_of::<BusState>());
        assert_covers("machine", MachineState::FIELDS, size_of::<MachineState>());
        assert_covers("input", PADS, 2 * size_of::<ControllerState>());
        assert_covers("apu", ApuState::FIELDS, size_of::<ApuState>());
        assert_covers("ppu", PpuRegs::FIELDS, size_of::<PpuRegs>());
        // The mapper rows are checked where the board table is built (`cart/board.rs`).
    }
}
