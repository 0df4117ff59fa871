//! Names of the bytes of state, for field-level diffs (`cpu.p`, `ram[$0342]`, `apu.pulse[1].timer_period`).
//!
//! The layout tables come from the state structs themselves (`state_struct!`, see `crate::layout`).

use core::fmt::Write;
use core::ops::Range;

use super::{MachineState, Section};
use crate::apu::ApuState;
use crate::bus::sync::BusState;
use crate::cart::{
    Action53State, AxromState, Bandai70State, Bandai152State, BandaiFcgState, CamericaState, Cnrom185State,
    CnromState, ColorDreamsState, CpromState, Fme7State, G101State, GtromState, GxromState, H3001State,
    Jf11State, Jf13State, Jf19State, LatchChrState, Mapper34State, Mapper78State, Mapper87State, Mmc5State,
    Namco108State, Namco163State, Namco175State, NesEventState, Nina03State, QuattroState, Rambo1State,
    Ss88006State, Sunsoft1State, Sunsoft2_3rState, Sunsoft2State, Sunsoft3State, Sunsoft4State, SxromState,
    TamS1State, Tc0190State, Tc0690State, TxromState, Un1romState, Unrom180State, Unrom512State, UxromState,
    Vrc1State, Vrc3State, Vrc6State, Vrc7State, VrcState, X1005State, X1017State,
};
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

/// The layout of the mapper registers of the board with iNES number `mapper`.
pub fn mapper_layout(mapper: u16) -> Option<&'static [FieldLayout]> {
    Some(match mapper {
        1 | 155 => SxromState::FIELDS,
        2 => UxromState::FIELDS,
        3 => CnromState::FIELDS,
        4 | 118 | 119 => TxromState::FIELDS,
        5 => Mmc5State::FIELDS,
        76 | 88 | 95 | 154 | 206 => Namco108State::FIELDS,
        111 => GtromState::FIELDS,
        7 => AxromState::FIELDS,
        9 | 10 => LatchChrState::FIELDS,
        11 => ColorDreamsState::FIELDS,
        66 => GxromState::FIELDS,
        71 => CamericaState::FIELDS,
        13 => CpromState::FIELDS,
        21 | 22 | 23 | 25 => VrcState::FIELDS,
        34 => Mapper34State::FIELDS,
        79 | 113 => Nina03State::FIELDS,
        94 => Un1romState::FIELDS,
        140 => Jf11State::FIELDS,
        180 => Unrom180State::FIELDS,
        185 => Cnrom185State::FIELDS,
        232 => QuattroState::FIELDS,
        24 | 26 => Vrc6State::FIELDS,
        85 => Vrc7State::FIELDS,
        73 => Vrc3State::FIELDS,
        69 => Fme7State::FIELDS,
        67 => Sunsoft3State::FIELDS,
        68 => Sunsoft4State::FIELDS,
        89 => Sunsoft2State::FIELDS,
        93 => Sunsoft2_3rState::FIELDS,
        184 => Sunsoft1State::FIELDS,
        75 => Vrc1State::FIELDS,
        18 => Ss88006State::FIELDS,
        65 => H3001State::FIELDS,
        33 => Tc0190State::FIELDS,
        48 => Tc0690State::FIELDS,
        80 | 207 => X1005State::FIELDS,
        82 => X1017State::FIELDS,
        19 => Namco163State::FIELDS,
        210 => Namco175State::FIELDS,
        16 | 153 | 159 => BandaiFcgState::FIELDS,
        70 => Bandai70State::FIELDS,
        152 => Bandai152State::FIELDS,
        32 => G101State::FIELDS,
        78 => Mapper78State::FIELDS,
        97 => TamS1State::FIELDS,
        86 => Jf13State::FIELDS,
        87 => Mapper87State::FIELDS,
        92 => Jf19State::FIELDS,
        30 => Unrom512State::FIELDS,
        28 => Action53State::FIELDS,
        64 => Rambo1State::FIELDS,
        105 => NesEventState::FIELDS,
        _ => return None,
    })
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
/// depend on the cartridge. See [`Nes::field_name`] for every section.
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
        let _ = write!(out, "[{offset}]");
        return offset..offset + 1;
    }
    let _ = write!(out, "[${:04X}]", base + offset);
    offset..offset + 1
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
    /// returns the byte range of the whole field it belongs to.
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
        for (mapper, size) in [
            (1, size_of::<SxromState>()),
            (2, size_of::<UxromState>()),
            (3, size_of::<CnromState>()),
            (4, size_of::<TxromState>()),
            (5, size_of::<Mmc5State>()),
            (7, size_of::<AxromState>()),
            (9, size_of::<LatchChrState>()),
            (11, size_of::<ColorDreamsState>()),
            (66, size_of::<GxromState>()),
            (71, size_of::<CamericaState>()),
            (13, size_of::<CpromState>()),
            (21, size_of::<VrcState>()),
            (34, size_of::<Mapper34State>()),
            (79, size_of::<Nina03State>()),
            (94, size_of::<Un1romState>()),
            (140, size_of::<Jf11State>()),
            (180, size_of::<Unrom180State>()),
            (185, size_of::<Cnrom185State>()),
            (232, size_of::<QuattroState>()),
            (24, size_of::<Vrc6State>()),
            (85, size_of::<Vrc7State>()),
            (73, size_of::<Vrc3State>()),
            (69, size_of::<Fme7State>()),
            (67, size_of::<Sunsoft3State>()),
            (68, size_of::<Sunsoft4State>()),
            (89, size_of::<Sunsoft2State>()),
            (93, size_of::<Sunsoft2_3rState>()),
            (184, size_of::<Sunsoft1State>()),
            (75, size_of::<Vrc1State>()),
            (118, size_of::<TxromState>()),
            (155, size_of::<SxromState>()),
            (206, size_of::<Namco108State>()),
            (111, size_of::<GtromState>()),
            (18, size_of::<Ss88006State>()),
            (65, size_of::<H3001State>()),
            (33, size_of::<Tc0190State>()),
            (48, size_of::<Tc0690State>()),
            (80, size_of::<X1005State>()),
            (207, size_of::<X1005State>()),
            (82, size_of::<X1017State>()),
            (19, size_of::<Namco163State>()),
            (210, size_of::<Namco175State>()),
            (16, size_of::<BandaiFcgState>()),
            (153, size_of::<BandaiFcgState>()),
            (159, size_of::<BandaiFcgState>()),
            (70, size_of::<Bandai70State>()),
            (152, size_of::<Bandai152State>()),
            (32, size_of::<G101State>()),
            (78, size_of::<Mapper78State>()),
            (97, size_of::<TamS1State>()),
            (86, size_of::<Jf13State>()),
            (87, size_of::<Mapper87State>()),
            (92, size_of::<Jf19State>()),
            (30, size_of::<Unrom512State>()),
            (28, size_of::<Action53State>()),
            (64, size_of::<Rambo1State>()),
            (105, size_of::<NesEventState>()),
        ] {
            assert_covers("mapper", mapper_layout(mapper).unwrap(), size);
        }
    }
}
