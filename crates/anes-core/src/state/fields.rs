//! Names of the bytes of state, for field-level diffs (`cpu.p`, `ram[$0342]`, `apu.pulse[1].timer_period`).
//!
//! The layout tables below are generated from the struct definitions by
//! `python3 scripts/gen_state_layouts.py STRUCT...`; `layouts_cover_their_structs_exactly` fails if a
//! struct changes without its table.

use core::any::type_name;
use core::fmt::Write;
use core::mem::{offset_of, size_of};
use core::ops::Range;

use super::{MachineState, Section};
use crate::apu::ApuState;
use crate::apu::dmc::Dmc;
use crate::apu::envelope::Envelope;
use crate::apu::frame_counter::FrameCounter;
use crate::apu::length::LengthCounter;
use crate::apu::noise::Noise;
use crate::apu::pulse::Pulse;
use crate::apu::triangle::Triangle;
use crate::bus::BusState;
use crate::cart::{
    AxromState, CamericaState, CnromState, ColorDreamsState, GxromState, LatchChrState, SxromState,
    TxromState, UxromState,
};
use crate::cpu::CpuState;
use crate::input::ControllerState;
use crate::nes::Nes;
use crate::ppu::PpuRegs;

/// A named field inside a struct-shaped section.
#[derive(Debug, Clone, Copy)]
pub struct FieldLayout {
    /// Offset of the first byte within the enclosing struct.
    pub offset: usize,
    /// Size in bytes (multi-byte scalars are little-endian).
    pub size: usize,
    /// Field name as written in reports.
    pub name: &'static str,
    type_name: fn() -> &'static str,
    /// Size of one element: equal to `size` for scalars and structs, smaller for arrays.
    pub elem_size: usize,
    /// The element's own layout when it is a struct.
    pub inner: Option<&'static [FieldLayout]>,
}

impl FieldLayout {
    /// The field's Rust type, e.g. `u8`, `[u8; 3]` (tests assert no floating point is ever state).
    pub fn type_name(&self) -> &'static str {
        (self.type_name)()
    }
}

const ENVELOPE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(Envelope, start),
        size: size_of::<u8>(),
        name: "start",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, divider),
        size: size_of::<u8>(),
        name: "divider",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, decay),
        size: size_of::<u8>(),
        name: "decay",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, volume),
        size: size_of::<u8>(),
        name: "volume",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, constant),
        size: size_of::<u8>(),
        name: "constant",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, loop_flag),
        size: size_of::<u8>(),
        name: "loop_flag",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Envelope, reserved),
        size: size_of::<[u8; 2]>(),
        name: "reserved",
        type_name: type_name::<[u8; 2]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const LENGTH_COUNTER: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(LengthCounter, counter),
        size: size_of::<u8>(),
        name: "counter",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, halt),
        size: size_of::<u8>(),
        name: "halt",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, pending_halt),
        size: size_of::<u8>(),
        name: "pending_halt",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, pending_reload),
        size: size_of::<u8>(),
        name: "pending_reload",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, counter_at_write),
        size: size_of::<u8>(),
        name: "counter_at_write",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, enabled),
        size: size_of::<u8>(),
        name: "enabled",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LengthCounter, reserved),
        size: size_of::<[u8; 2]>(),
        name: "reserved",
        type_name: type_name::<[u8; 2]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const PULSE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(Pulse, timer_period),
        size: size_of::<u16>(),
        name: "timer_period",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, timer_counter),
        size: size_of::<u16>(),
        name: "timer_counter",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, duty),
        size: size_of::<u8>(),
        name: "duty",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sequence_step),
        size: size_of::<u8>(),
        name: "sequence_step",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_enabled),
        size: size_of::<u8>(),
        name: "sweep_enabled",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_period),
        size: size_of::<u8>(),
        name: "sweep_period",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_negate),
        size: size_of::<u8>(),
        name: "sweep_negate",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_shift),
        size: size_of::<u8>(),
        name: "sweep_shift",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_reload),
        size: size_of::<u8>(),
        name: "sweep_reload",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, sweep_divider),
        size: size_of::<u8>(),
        name: "sweep_divider",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, ones_complement),
        size: size_of::<u8>(),
        name: "ones_complement",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, reserved),
        size: size_of::<[u8; 3]>(),
        name: "reserved",
        type_name: type_name::<[u8; 3]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Pulse, envelope),
        size: size_of::<Envelope>(),
        name: "envelope",
        type_name: type_name::<Envelope>,
        elem_size: size_of::<Envelope>(),
        inner: Some(ENVELOPE),
    },
    FieldLayout {
        offset: offset_of!(Pulse, length),
        size: size_of::<LengthCounter>(),
        name: "length",
        type_name: type_name::<LengthCounter>,
        elem_size: size_of::<LengthCounter>(),
        inner: Some(LENGTH_COUNTER),
    },
];

const TRIANGLE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(Triangle, timer_period),
        size: size_of::<u16>(),
        name: "timer_period",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, timer_counter),
        size: size_of::<u16>(),
        name: "timer_counter",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, sequence_step),
        size: size_of::<u8>(),
        name: "sequence_step",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, linear_counter),
        size: size_of::<u8>(),
        name: "linear_counter",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, linear_reload_value),
        size: size_of::<u8>(),
        name: "linear_reload_value",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, linear_reload),
        size: size_of::<u8>(),
        name: "linear_reload",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, control),
        size: size_of::<u8>(),
        name: "control",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, reserved),
        size: size_of::<[u8; 3]>(),
        name: "reserved",
        type_name: type_name::<[u8; 3]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Triangle, length),
        size: size_of::<LengthCounter>(),
        name: "length",
        type_name: type_name::<LengthCounter>,
        elem_size: size_of::<LengthCounter>(),
        inner: Some(LENGTH_COUNTER),
    },
];

const NOISE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(Noise, shift_register),
        size: size_of::<u16>(),
        name: "shift_register",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Noise, timer_counter),
        size: size_of::<u16>(),
        name: "timer_counter",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Noise, period_index),
        size: size_of::<u8>(),
        name: "period_index",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Noise, mode),
        size: size_of::<u8>(),
        name: "mode",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Noise, reserved),
        size: size_of::<[u8; 2]>(),
        name: "reserved",
        type_name: type_name::<[u8; 2]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Noise, envelope),
        size: size_of::<Envelope>(),
        name: "envelope",
        type_name: type_name::<Envelope>,
        elem_size: size_of::<Envelope>(),
        inner: Some(ENVELOPE),
    },
    FieldLayout {
        offset: offset_of!(Noise, length),
        size: size_of::<LengthCounter>(),
        name: "length",
        type_name: type_name::<LengthCounter>,
        elem_size: size_of::<LengthCounter>(),
        inner: Some(LENGTH_COUNTER),
    },
];

const DMC: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(Dmc, current_address),
        size: size_of::<u16>(),
        name: "current_address",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, bytes_remaining),
        size: size_of::<u16>(),
        name: "bytes_remaining",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, timer_counter),
        size: size_of::<u16>(),
        name: "timer_counter",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, sample_address),
        size: size_of::<u8>(),
        name: "sample_address",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, sample_length),
        size: size_of::<u8>(),
        name: "sample_length",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, rate_index),
        size: size_of::<u8>(),
        name: "rate_index",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, irq_enabled),
        size: size_of::<u8>(),
        name: "irq_enabled",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, loop_flag),
        size: size_of::<u8>(),
        name: "loop_flag",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, irq_flag),
        size: size_of::<u8>(),
        name: "irq_flag",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, output_level),
        size: size_of::<u8>(),
        name: "output_level",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, shift_register),
        size: size_of::<u8>(),
        name: "shift_register",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, bits_remaining),
        size: size_of::<u8>(),
        name: "bits_remaining",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, silence),
        size: size_of::<u8>(),
        name: "silence",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, sample_buffer),
        size: size_of::<u8>(),
        name: "sample_buffer",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, buffer_full),
        size: size_of::<u8>(),
        name: "buffer_full",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, load_delay),
        size: size_of::<u8>(),
        name: "load_delay",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(Dmc, reserved),
        size: size_of::<u8>(),
        name: "reserved",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const FRAME_COUNTER: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(FrameCounter, cycle),
        size: size_of::<u16>(),
        name: "cycle",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, mode),
        size: size_of::<u8>(),
        name: "mode",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, irq_inhibit),
        size: size_of::<u8>(),
        name: "irq_inhibit",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, irq_flag),
        size: size_of::<u8>(),
        name: "irq_flag",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, last_write),
        size: size_of::<u8>(),
        name: "last_write",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, write_delay),
        size: size_of::<u8>(),
        name: "write_delay",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, restart_on_next_cycle),
        size: size_of::<u8>(),
        name: "restart_on_next_cycle",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(FrameCounter, reserved),
        size: size_of::<[u8; 2]>(),
        name: "reserved",
        type_name: type_name::<[u8; 2]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const APU_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(ApuState, pulse),
        size: size_of::<[Pulse; 2]>(),
        name: "pulse",
        type_name: type_name::<[Pulse; 2]>,
        elem_size: size_of::<Pulse>(),
        inner: Some(PULSE),
    },
    FieldLayout {
        offset: offset_of!(ApuState, triangle),
        size: size_of::<Triangle>(),
        name: "triangle",
        type_name: type_name::<Triangle>,
        elem_size: size_of::<Triangle>(),
        inner: Some(TRIANGLE),
    },
    FieldLayout {
        offset: offset_of!(ApuState, noise),
        size: size_of::<Noise>(),
        name: "noise",
        type_name: type_name::<Noise>,
        elem_size: size_of::<Noise>(),
        inner: Some(NOISE),
    },
    FieldLayout {
        offset: offset_of!(ApuState, dmc),
        size: size_of::<Dmc>(),
        name: "dmc",
        type_name: type_name::<Dmc>,
        elem_size: size_of::<Dmc>(),
        inner: Some(DMC),
    },
    FieldLayout {
        offset: offset_of!(ApuState, frame_counter),
        size: size_of::<FrameCounter>(),
        name: "frame_counter",
        type_name: type_name::<FrameCounter>,
        elem_size: size_of::<FrameCounter>(),
        inner: Some(FRAME_COUNTER),
    },
];

const SXROM_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(SxromState, shift),
        size: size_of::<u8>(),
        name: "shift",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, shift_count),
        size: size_of::<u8>(),
        name: "shift_count",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, control),
        size: size_of::<u8>(),
        name: "control",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, chr_bank0),
        size: size_of::<u8>(),
        name: "chr_bank0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, chr_bank1),
        size: size_of::<u8>(),
        name: "chr_bank1",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, prg_bank),
        size: size_of::<u8>(),
        name: "prg_bank",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, reserved),
        size: size_of::<[u8; 2]>(),
        name: "reserved",
        type_name: type_name::<[u8; 2]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(SxromState, last_write_cycle),
        size: size_of::<u64>(),
        name: "last_write_cycle",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
];

const UXROM_STATE: &[FieldLayout] = &[FieldLayout {
    offset: offset_of!(UxromState, prg_bank),
    size: size_of::<u8>(),
    name: "prg_bank",
    type_name: type_name::<u8>,
    elem_size: size_of::<u8>(),
    inner: None,
}];

const CNROM_STATE: &[FieldLayout] = &[FieldLayout {
    offset: offset_of!(CnromState, chr_bank),
    size: size_of::<u8>(),
    name: "chr_bank",
    type_name: type_name::<u8>,
    elem_size: size_of::<u8>(),
    inner: None,
}];

const TXROM_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(TxromState, bank_select),
        size: size_of::<u8>(),
        name: "bank_select",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, mirroring),
        size: size_of::<u8>(),
        name: "mirroring",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, prg_ram_protect),
        size: size_of::<u8>(),
        name: "prg_ram_protect",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, irq_latch),
        size: size_of::<u8>(),
        name: "irq_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, irq_counter),
        size: size_of::<u8>(),
        name: "irq_counter",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, irq_reload),
        size: size_of::<u8>(),
        name: "irq_reload",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, irq_enabled),
        size: size_of::<u8>(),
        name: "irq_enabled",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, irq_pending),
        size: size_of::<u8>(),
        name: "irq_pending",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, registers),
        size: size_of::<[u8; 8]>(),
        name: "registers",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, a12_level),
        size: size_of::<u8>(),
        name: "a12_level",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, a12_low_m2_edges),
        size: size_of::<u8>(),
        name: "a12_low_m2_edges",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, revision),
        size: size_of::<u8>(),
        name: "revision",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(TxromState, reserved),
        size: size_of::<[u8; 5]>(),
        name: "reserved",
        type_name: type_name::<[u8; 5]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const AXROM_STATE: &[FieldLayout] = &[FieldLayout {
    offset: offset_of!(AxromState, register),
    size: size_of::<u8>(),
    name: "register",
    type_name: type_name::<u8>,
    elem_size: size_of::<u8>(),
    inner: None,
}];

const LATCH_CHR_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(LatchChrState, prg_bank),
        size: size_of::<u8>(),
        name: "prg_bank",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, chr_fd0),
        size: size_of::<u8>(),
        name: "chr_fd0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, chr_fe0),
        size: size_of::<u8>(),
        name: "chr_fe0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, chr_fd1),
        size: size_of::<u8>(),
        name: "chr_fd1",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, chr_fe1),
        size: size_of::<u8>(),
        name: "chr_fe1",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, mirroring),
        size: size_of::<u8>(),
        name: "mirroring",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, latch0),
        size: size_of::<u8>(),
        name: "latch0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(LatchChrState, latch1),
        size: size_of::<u8>(),
        name: "latch1",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const COLOR_DREAMS_STATE: &[FieldLayout] = &[FieldLayout {
    offset: offset_of!(ColorDreamsState, register),
    size: size_of::<u8>(),
    name: "register",
    type_name: type_name::<u8>,
    elem_size: size_of::<u8>(),
    inner: None,
}];

const GXROM_STATE: &[FieldLayout] = &[FieldLayout {
    offset: offset_of!(GxromState, register),
    size: size_of::<u8>(),
    name: "register",
    type_name: type_name::<u8>,
    elem_size: size_of::<u8>(),
    inner: None,
}];

const CAMERICA_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(CamericaState, prg_bank),
        size: size_of::<u8>(),
        name: "prg_bank",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CamericaState, single_screen),
        size: size_of::<u8>(),
        name: "single_screen",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const MACHINE_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(MachineState, frame),
        size: size_of::<u64>(),
        name: "frame",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(MachineState, seed),
        size: size_of::<u64>(),
        name: "seed",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(MachineState, ram_init),
        size: size_of::<u8>(),
        name: "ram_init",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(MachineState, cpu_ppu_alignment),
        size: size_of::<u8>(),
        name: "cpu_ppu_alignment",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(MachineState, reserved),
        size: size_of::<[u8; 6]>(),
        name: "reserved",
        type_name: type_name::<[u8; 6]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const CPU_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(CpuState, pc),
        size: size_of::<u16>(),
        name: "pc",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, a),
        size: size_of::<u8>(),
        name: "a",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, x),
        size: size_of::<u8>(),
        name: "x",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, y),
        size: size_of::<u8>(),
        name: "y",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, sp),
        size: size_of::<u8>(),
        name: "sp",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, p),
        size: size_of::<u8>(),
        name: "p",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, jammed),
        size: size_of::<u8>(),
        name: "jammed",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, nmi_line_prev),
        size: size_of::<u8>(),
        name: "nmi_line_prev",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, nmi_pending),
        size: size_of::<u8>(),
        name: "nmi_pending",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, nmi_pending_prev),
        size: size_of::<u8>(),
        name: "nmi_pending_prev",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, irq_pending),
        size: size_of::<u8>(),
        name: "irq_pending",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, irq_pending_prev),
        size: size_of::<u8>(),
        name: "irq_pending_prev",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(CpuState, reserved),
        size: size_of::<[u8; 3]>(),
        name: "reserved",
        type_name: type_name::<[u8; 3]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const BUS_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(BusState, master_clock),
        size: size_of::<u64>(),
        name: "master_clock",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, cpu_cycle),
        size: size_of::<u64>(),
        name: "cpu_cycle",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, ppu_clock),
        size: size_of::<u64>(),
        name: "ppu_clock",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, oam_dma_count),
        size: size_of::<u16>(),
        name: "oam_dma_count",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, open_bus),
        size: size_of::<u8>(),
        name: "open_bus",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, ppu_offset),
        size: size_of::<u8>(),
        name: "ppu_offset",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, oam_dma_page),
        size: size_of::<u8>(),
        name: "oam_dma_page",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, oam_dma_running),
        size: size_of::<u8>(),
        name: "oam_dma_running",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, oam_dma_value),
        size: size_of::<u8>(),
        name: "oam_dma_value",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, dmc_dma_running),
        size: size_of::<u8>(),
        name: "dmc_dma_running",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, dma_halt),
        size: size_of::<u8>(),
        name: "dma_halt",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, dmc_dma_dummy),
        size: size_of::<u8>(),
        name: "dmc_dma_dummy",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(BusState, reserved),
        size: size_of::<[u8; 6]>(),
        name: "reserved",
        type_name: type_name::<[u8; 6]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const CONTROLLER_STATE: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(ControllerState, buttons),
        size: size_of::<u8>(),
        name: "buttons",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(ControllerState, shift),
        size: size_of::<u8>(),
        name: "shift",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(ControllerState, strobe),
        size: size_of::<u8>(),
        name: "strobe",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(ControllerState, reserved),
        size: size_of::<u8>(),
        name: "reserved",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const PPU_REGS: &[FieldLayout] = &[
    FieldLayout {
        offset: offset_of!(PpuRegs, frames_completed),
        size: size_of::<u64>(),
        name: "frames_completed",
        type_name: type_name::<u64>,
        elem_size: size_of::<u64>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, v),
        size: size_of::<u16>(),
        name: "v",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, t),
        size: size_of::<u16>(),
        name: "t",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, scanline),
        size: size_of::<u16>(),
        name: "scanline",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, dot),
        size: size_of::<u16>(),
        name: "dot",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, bg_pattern_lo),
        size: size_of::<u16>(),
        name: "bg_pattern_lo",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, bg_pattern_hi),
        size: size_of::<u16>(),
        name: "bg_pattern_hi",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, bg_attr_lo),
        size: size_of::<u16>(),
        name: "bg_attr_lo",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, bg_attr_hi),
        size: size_of::<u16>(),
        name: "bg_attr_hi",
        type_name: type_name::<u16>,
        elem_size: size_of::<u16>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, x),
        size: size_of::<u8>(),
        name: "x",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, w),
        size: size_of::<u8>(),
        name: "w",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, ctrl),
        size: size_of::<u8>(),
        name: "ctrl",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, mask),
        size: size_of::<u8>(),
        name: "mask",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, status),
        size: size_of::<u8>(),
        name: "status",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, oam_addr),
        size: size_of::<u8>(),
        name: "oam_addr",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, read_buffer),
        size: size_of::<u8>(),
        name: "read_buffer",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, io_latch),
        size: size_of::<u8>(),
        name: "io_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, io_decay_frames),
        size: size_of::<[u8; 8]>(),
        name: "io_decay_frames",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, odd_frame),
        size: size_of::<u8>(),
        name: "odd_frame",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, vblank_suppress),
        size: size_of::<u8>(),
        name: "vblank_suppress",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, reset_warmup),
        size: size_of::<u8>(),
        name: "reset_warmup",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, nt_latch),
        size: size_of::<u8>(),
        name: "nt_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, at_latch),
        size: size_of::<u8>(),
        name: "at_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, pattern_lo_latch),
        size: size_of::<u8>(),
        name: "pattern_lo_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, pattern_hi_latch),
        size: size_of::<u8>(),
        name: "pattern_hi_latch",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, oam_bus),
        size: size_of::<u8>(),
        name: "oam_bus",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_pattern_lo),
        size: size_of::<[u8; 8]>(),
        name: "sprite_pattern_lo",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_pattern_hi),
        size: size_of::<[u8; 8]>(),
        name: "sprite_pattern_hi",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_attr),
        size: size_of::<[u8; 8]>(),
        name: "sprite_attr",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_x),
        size: size_of::<[u8; 8]>(),
        name: "sprite_x",
        type_name: type_name::<[u8; 8]>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_count),
        size: size_of::<u8>(),
        name: "sprite_count",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, sprite_0_in_unit_0),
        size: size_of::<u8>(),
        name: "sprite_0_in_unit_0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, eval_secondary_addr),
        size: size_of::<u8>(),
        name: "eval_secondary_addr",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, eval_copy_left),
        size: size_of::<u8>(),
        name: "eval_copy_left",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, eval_done),
        size: size_of::<u8>(),
        name: "eval_done",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, eval_sprite_0),
        size: size_of::<u8>(),
        name: "eval_sprite_0",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, reserved),
        size: size_of::<u8>(),
        name: "reserved",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
    FieldLayout {
        offset: offset_of!(PpuRegs, rendering_history),
        size: size_of::<u8>(),
        name: "rendering_history",
        type_name: type_name::<u8>,
        elem_size: size_of::<u8>(),
        inner: None,
    },
];

const PADS: &[FieldLayout] = &[FieldLayout {
    offset: 0,
    size: 2 * size_of::<ControllerState>(),
    name: "",
    type_name: type_name::<[ControllerState; 2]>,
    elem_size: size_of::<ControllerState>(),
    inner: Some(CONTROLLER_STATE),
}];

/// The layout of a section that is a struct, for sections whose shape does not depend on the
/// cartridge; `None` for memory arrays (named by address, `ram[$0342]`) and for the mapper.
pub fn section_layout(section: Section) -> Option<&'static [FieldLayout]> {
    match section {
        Section::Machine => Some(MACHINE_STATE),
        Section::Cpu => Some(CPU_STATE),
        Section::Bus => Some(BUS_STATE),
        Section::Apu => Some(APU_STATE),
        Section::Ppu => Some(PPU_REGS),
        Section::Input => Some(PADS),
        _ => None,
    }
}

/// The layout of the mapper registers of the board with iNES number `mapper`.
pub fn mapper_layout(mapper: u16) -> Option<&'static [FieldLayout]> {
    Some(match mapper {
        1 => SXROM_STATE,
        2 => UXROM_STATE,
        3 => CNROM_STATE,
        4 => TXROM_STATE,
        7 => AXROM_STATE,
        9 | 10 => LATCH_CHR_STATE,
        11 => COLOR_DREAMS_STATE,
        66 => GXROM_STATE,
        71 => CAMERICA_STATE,
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
    name_with(section, section_layout(section), offset, out)
}

fn name_with(
    section: Section,
    layout: Option<&[FieldLayout]>,
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
    let _ = write!(out, "[${:04X}]", memory_base(section) + offset);
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
        name_with(section, self.section_layout(section), offset, out)
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
    fn layouts_cover_their_structs_exactly() {
        assert_covers("cpu", CPU_STATE, size_of::<CpuState>());
        assert_covers("bus", BUS_STATE, size_of::<BusState>());
        assert_covers("machine", MACHINE_STATE, size_of::<MachineState>());
        assert_covers("input", PADS, 2 * size_of::<ControllerState>());
        assert_covers("apu", APU_STATE, size_of::<ApuState>());
        assert_covers("ppu", PPU_REGS, size_of::<PpuRegs>());
        for (mapper, size) in [
            (1, size_of::<SxromState>()),
            (2, size_of::<UxromState>()),
            (3, size_of::<CnromState>()),
            (4, size_of::<TxromState>()),
            (7, size_of::<AxromState>()),
            (9, size_of::<LatchChrState>()),
            (11, size_of::<ColorDreamsState>()),
            (66, size_of::<GxromState>()),
            (71, size_of::<CamericaState>()),
        ] {
            assert_covers("mapper", mapper_layout(mapper).unwrap(), size);
        }
    }
}
