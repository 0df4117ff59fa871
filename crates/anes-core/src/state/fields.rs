//! Names of the bytes of state, for field-level diffs (`cpu.p`, `ram[$0342]`, `ppu.v`).

use core::fmt::Write;

use super::Section;

/// A named field inside a Pod section: byte offset, size in bytes, name.
#[derive(Debug, Clone, Copy)]
pub struct FieldLayout {
    /// Offset of the first byte within the section.
    pub offset: usize,
    /// Size in bytes (multi-byte fields are little-endian).
    pub size: usize,
    /// Field name as written in reports, without the section prefix.
    pub name: &'static str,
    type_name: fn() -> &'static str,
}

impl FieldLayout {
    /// The field's Rust type, e.g. `u8`, `[u8; 3]` (tests assert no floating point is ever state).
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }
}

macro_rules! layout {
    ($ty:ty: $($field:ident),* $(,)?) => {
        &[$(FieldLayout {
            offset: core::mem::offset_of!($ty, $field),
            size: size_of_field(|s: &$ty| &s.$field),
            name: stringify!($field),
            type_name: type_name_of_field(|s: &$ty| &s.$field),
        }),*]
    };
}

const fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize {
    core::mem::size_of::<F>()
}

const fn type_name_of_field<T, F>(_: fn(&T) -> &F) -> fn() -> &'static str {
    core::any::type_name::<F>
}

/// The layout of a section's fields, for sections that are structs; `None` for memory arrays, whose
/// bytes are named by address (`ram[$0342]`).
pub fn section_layout(section: Section) -> Option<&'static [FieldLayout]> {
    use super::MachineState;
    use crate::bus::BusState;
    use crate::cpu::CpuState;
    use crate::input::ControllerState;
    const MACHINE: &[FieldLayout] = layout!(MachineState: frame, seed, ram_init, reserved);
    const CPU: &[FieldLayout] = layout!(CpuState: pc, a, x, y, sp, p, jammed, nmi_line_prev, nmi_pending,
        nmi_pending_prev, irq_pending, irq_pending_prev, reserved);
    const BUS: &[FieldLayout] = layout!(BusState: master_clock, cpu_cycle, ppu_clock, oam_dma_count, open_bus,
        ppu_offset, oam_dma_page, oam_dma_running, oam_dma_value, dmc_dma_running, dma_halt, dmc_dma_dummy,
        reserved);
    const PAD: &[FieldLayout] = layout!(ControllerState: buttons, shift, strobe, reserved);
    match section {
        Section::Machine => Some(MACHINE),
        Section::Cpu => Some(CPU),
        Section::Bus => Some(BUS),
        Section::Input => Some(PAD),
        _ => None,
    }
}

/// Base address used to name bytes of memory sections (`ram[$0342]`, `vram[$2400]`).
fn memory_base(section: Section) -> u32 {
    match section {
        Section::Vram => 0x2000,
        Section::Palette => 0x3F00,
        Section::PrgRam => 0x6000,
        _ => 0,
    }
}

/// Writes the name of the field that holds byte `offset` of `section` into `out`, e.g. `cpu.p`,
/// `bus.cpu_cycle`, `ram[$0342]`, `input[1].shift`. Multi-byte fields name the whole field.
pub fn field_name(section: Section, offset: usize, out: &mut String) {
    match section_layout(section) {
        Some(layout) => {
            let size: usize = layout.iter().map(|f| f.offset + f.size).max().unwrap_or(1);
            let (index, within) = (offset / size, offset % size);
            let _ = write!(out, "{}", section.name());
            if section == Section::Input {
                let _ = write!(out, "[{index}]");
            }
            match layout.iter().find(|f| (f.offset..f.offset + f.size).contains(&within)) {
                Some(field) if field.size > 1 && field.name == "reserved" => {
                    let _ = write!(out, ".reserved[{}]", within - field.offset);
                }
                Some(field) => {
                    let _ = write!(out, ".{}", field.name);
                }
                None => {
                    let _ = write!(out, "[{offset}]");
                }
            }
        }
        None => {
            let addr = memory_base(section) + offset as u32;
            let _ = write!(out, "{}[${addr:04X}]", section.name());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(section: Section, offset: usize) -> String {
        let mut s = String::new();
        field_name(section, offset, &mut s);
        s
    }

    #[test]
    fn names_fields_and_memory() {
        assert_eq!(name(Section::Ram, 0x342), "ram[$0342]");
        assert_eq!(name(Section::Cpu, core::mem::offset_of!(crate::cpu::CpuState, p)), "cpu.p");
        assert_eq!(name(Section::Cpu, 1), "cpu.pc");
        assert_eq!(name(Section::Bus, 9), "bus.cpu_cycle");
        assert_eq!(name(Section::Input, 5), "input[1].shift");
        assert_eq!(name(Section::Vram, 0x400), "vram[$2400]");
    }

    #[test]
    fn layouts_cover_their_structs_exactly() {
        for (section, size) in [
            (Section::Cpu, size_of::<crate::cpu::CpuState>()),
            (Section::Bus, size_of::<crate::bus::BusState>()),
            (Section::Machine, size_of::<super::super::MachineState>()),
            (Section::Input, size_of::<crate::input::ControllerState>()),
        ] {
            let layout = section_layout(section).unwrap();
            let mut covered = vec![0u8; size];
            for f in layout {
                for b in &mut covered[f.offset..f.offset + f.size] {
                    *b += 1;
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{section:?}: {covered:?}");
        }
    }
}
