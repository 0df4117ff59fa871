//! Instruction execution, one bus cycle per access (dummy reads and writes included, on the addresses
//! the hardware uses: nesdev "CPU addressing modes" cycle tables and blargg's cpu_dummy_reads/writes).

use super::{IRQ_VECTOR, Mode, NMI_VECTOR, RESET_VECTOR, flags};
use crate::nes::Nes;
use crate::region::{RegionModel, with_region_model};
use core::marker::PhantomData;

impl Nes {
    /// [`Nes::run_instruction_as`] in the console's region.
    pub(crate) fn run_instruction(&mut self) {
        with_region_model!(self.region(), R => self.run_instruction_as::<R>())
    }

    /// Runs one instruction, or the interrupt sequence if an interrupt was latched by the end of the
    /// previous instruction. A jammed CPU spends one cycle per call. The PPU may lag behind (see
    /// `bus/mod.rs`); [`Nes::step_instruction`] is this plus the catch-up.
    #[inline]
    pub(crate) fn run_instruction_as<R: RegionModel>(&mut self) {
        // A fast cycle first: it implies the interrupt latches at rest and the CPU running
        // (`Nes::cache_interrupt_lines`), so the fetch of an opcode from plain PRG ROM then is the
        // instruction's start, and the common case makes no call before the opcode's function
        // (tail-called): kept so, this function saves no registers.
        let Some(opcode) = self.read_prg_fast::<R>(self.cpu.pc) else {
            self.run_instruction_slowly::<R>();
            return;
        };
        self.cpu.pc = self.cpu.pc.wrapping_add(1);
        Opcodes::<R>::TABLE[usize::from(opcode)](self);
    }

    /// [`Nes::run_instruction_as`] when the instruction does not start with a fast opcode fetch from
    /// plain PRG ROM: a jammed CPU's cycle, an interrupt, or a fetch down `read`.
    #[inline(never)]
    fn run_instruction_slowly<R: RegionModel>(&mut self) {
        if self.cpu.jammed != 0 {
            // A halted 6502 keeps the bus busy with reads of $FFFF; time still passes.
            self.read::<R>(0xFFFF);
            return;
        }
        if self.cpu.nmi_pending_prev != 0 || self.cpu.irq_pending_prev != 0 {
            self.interrupt_sequence::<R>();
            return;
        }
        let opcode = self.fetch::<R>();
        Opcodes::<R>::TABLE[usize::from(opcode)](self);
    }

    /// The instruction of opcode `OPCODE`, its fetch done: one function per opcode (see [`Opcodes`]).
    fn run_opcode<R: RegionModel, const OPCODE: u8>(&mut self) {
        self.execute::<R>(OPCODE);
    }

    /// Power-on/reset sequence: the 6502 runs its interrupt microcode with writes turned into reads.
    pub(crate) fn reset_sequence(&mut self) {
        with_region_model!(self.region(), R => self.reset_sequence_as::<R>())
    }

    fn reset_sequence_as<R: RegionModel>(&mut self) {
        self.cpu.jammed = 0;
        self.read::<R>(self.cpu.pc);
        self.read::<R>(self.cpu.pc);
        for _ in 0..3 {
            self.read::<R>(0x0100 | u16::from(self.cpu.sp));
            self.cpu.sp = self.cpu.sp.wrapping_sub(1);
        }
        self.cpu.set_flag(flags::I, true);
        let lo = self.read::<R>(RESET_VECTOR);
        let hi = self.read::<R>(RESET_VECTOR + 1);
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
    }

    /// IRQ or NMI: two dummy reads of PC, three pushes, vector fetch. An NMI edge seen before P is
    /// pushed hijacks an IRQ (nesdev "CPU interrupts", interrupt hijacking).
    fn interrupt_sequence<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.read_code::<R>(self.cpu.pc);
        self.push::<R>((self.cpu.pc >> 8) as u8);
        self.push::<R>(self.cpu.pc as u8);
        let vector = self.take_vector();
        self.push::<R>(self.cpu.p & !flags::B);
        self.cpu.set_flag(flags::I, true);
        let lo = self.read::<R>(vector);
        let hi = self.read::<R>(vector + 1);
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
        // The handler's first instruction always runs before another interrupt is taken
        // (cpu_interrupts_v2 2-nmi_and_brk).
        self.cpu.nmi_pending_prev = 0;
    }

    /// Chooses the vector at the moment P is pushed: a pending NMI wins and is consumed.
    #[inline]
    fn take_vector(&mut self) -> u16 {
        if self.cpu.nmi_pending != 0 {
            self.cpu.nmi_pending = 0;
            NMI_VECTOR
        } else {
            IRQ_VECTOR
        }
    }

    #[inline(always)]
    fn execute<R: RegionModel>(&mut self, opcode: u8) {
        match opcode {
            0x00 => self.brk::<R>(),
            0x01 => self.read_op::<R>(Mode::IndirectX, Self::ora),
            0x02 => self.jam::<R>(),
            0x03 => self.rmw_op::<R>(Mode::IndirectX, Self::slo),
            0x04 => self.read_op::<R>(Mode::ZeroPage, Self::nop_read),
            0x05 => self.read_op::<R>(Mode::ZeroPage, Self::ora),
            0x06 => self.rmw_op::<R>(Mode::ZeroPage, Self::asl),
            0x07 => self.rmw_op::<R>(Mode::ZeroPage, Self::slo),
            0x08 => self.php::<R>(),
            0x09 => self.read_op::<R>(Mode::Immediate, Self::ora),
            0x0A => self.accumulator_op::<R>(Self::asl),
            0x0B => self.read_op::<R>(Mode::Immediate, Self::anc),
            0x0C => self.read_op::<R>(Mode::Absolute, Self::nop_read),
            0x0D => self.read_op::<R>(Mode::Absolute, Self::ora),
            0x0E => self.rmw_op::<R>(Mode::Absolute, Self::asl),
            0x0F => self.rmw_op::<R>(Mode::Absolute, Self::slo),
            0x10 => self.branch::<R>(!self.cpu.flag(flags::N)),
            0x11 => self.read_op::<R>(Mode::IndirectY, Self::ora),
            0x12 => self.jam::<R>(),
            0x13 => self.rmw_op::<R>(Mode::IndirectY, Self::slo),
            0x14 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0x15 => self.read_op::<R>(Mode::ZeroPageX, Self::ora),
            0x16 => self.rmw_op::<R>(Mode::ZeroPageX, Self::asl),
            0x17 => self.rmw_op::<R>(Mode::ZeroPageX, Self::slo),
            0x18 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::C, false)),
            0x19 => self.read_op::<R>(Mode::AbsoluteY, Self::ora),
            0x1A => self.implied_op::<R>(|_| ()),
            0x1B => self.rmw_op::<R>(Mode::AbsoluteY, Self::slo),
            0x1C => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0x1D => self.read_op::<R>(Mode::AbsoluteX, Self::ora),
            0x1E => self.rmw_op::<R>(Mode::AbsoluteX, Self::asl),
            0x1F => self.rmw_op::<R>(Mode::AbsoluteX, Self::slo),
            0x20 => self.jsr::<R>(),
            0x21 => self.read_op::<R>(Mode::IndirectX, Self::and),
            0x22 => self.jam::<R>(),
            0x23 => self.rmw_op::<R>(Mode::IndirectX, Self::rla),
            0x24 => self.read_op::<R>(Mode::ZeroPage, Self::bit),
            0x25 => self.read_op::<R>(Mode::ZeroPage, Self::and),
            0x26 => self.rmw_op::<R>(Mode::ZeroPage, Self::rol),
            0x27 => self.rmw_op::<R>(Mode::ZeroPage, Self::rla),
            0x28 => self.plp::<R>(),
            0x29 => self.read_op::<R>(Mode::Immediate, Self::and),
            0x2A => self.accumulator_op::<R>(Self::rol),
            0x2B => self.read_op::<R>(Mode::Immediate, Self::anc),
            0x2C => self.read_op::<R>(Mode::Absolute, Self::bit),
            0x2D => self.read_op::<R>(Mode::Absolute, Self::and),
            0x2E => self.rmw_op::<R>(Mode::Absolute, Self::rol),
            0x2F => self.rmw_op::<R>(Mode::Absolute, Self::rla),
            0x30 => self.branch::<R>(self.cpu.flag(flags::N)),
            0x31 => self.read_op::<R>(Mode::IndirectY, Self::and),
            0x32 => self.jam::<R>(),
            0x33 => self.rmw_op::<R>(Mode::IndirectY, Self::rla),
            0x34 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0x35 => self.read_op::<R>(Mode::ZeroPageX, Self::and),
            0x36 => self.rmw_op::<R>(Mode::ZeroPageX, Self::rol),
            0x37 => self.rmw_op::<R>(Mode::ZeroPageX, Self::rla),
            0x38 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::C, true)),
            0x39 => self.read_op::<R>(Mode::AbsoluteY, Self::and),
            0x3A => self.implied_op::<R>(|_| ()),
            0x3B => self.rmw_op::<R>(Mode::AbsoluteY, Self::rla),
            0x3C => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0x3D => self.read_op::<R>(Mode::AbsoluteX, Self::and),
            0x3E => self.rmw_op::<R>(Mode::AbsoluteX, Self::rol),
            0x3F => self.rmw_op::<R>(Mode::AbsoluteX, Self::rla),
            0x40 => self.rti::<R>(),
            0x41 => self.read_op::<R>(Mode::IndirectX, Self::eor),
            0x42 => self.jam::<R>(),
            0x43 => self.rmw_op::<R>(Mode::IndirectX, Self::sre),
            0x44 => self.read_op::<R>(Mode::ZeroPage, Self::nop_read),
            0x45 => self.read_op::<R>(Mode::ZeroPage, Self::eor),
            0x46 => self.rmw_op::<R>(Mode::ZeroPage, Self::lsr),
            0x47 => self.rmw_op::<R>(Mode::ZeroPage, Self::sre),
            0x48 => self.pha::<R>(),
            0x49 => self.read_op::<R>(Mode::Immediate, Self::eor),
            0x4A => self.accumulator_op::<R>(Self::lsr),
            0x4B => self.read_op::<R>(Mode::Immediate, Self::alr),
            0x4C => self.jmp_absolute::<R>(),
            0x4D => self.read_op::<R>(Mode::Absolute, Self::eor),
            0x4E => self.rmw_op::<R>(Mode::Absolute, Self::lsr),
            0x4F => self.rmw_op::<R>(Mode::Absolute, Self::sre),
            0x50 => self.branch::<R>(!self.cpu.flag(flags::V)),
            0x51 => self.read_op::<R>(Mode::IndirectY, Self::eor),
            0x52 => self.jam::<R>(),
            0x53 => self.rmw_op::<R>(Mode::IndirectY, Self::sre),
            0x54 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0x55 => self.read_op::<R>(Mode::ZeroPageX, Self::eor),
            0x56 => self.rmw_op::<R>(Mode::ZeroPageX, Self::lsr),
            0x57 => self.rmw_op::<R>(Mode::ZeroPageX, Self::sre),
            0x58 => self.implied_op::<R>(|s| {
                s.cpu.set_flag(flags::I, false);
                s.irq_unmasked();
            }),
            0x59 => self.read_op::<R>(Mode::AbsoluteY, Self::eor),
            0x5A => self.implied_op::<R>(|_| ()),
            0x5B => self.rmw_op::<R>(Mode::AbsoluteY, Self::sre),
            0x5C => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0x5D => self.read_op::<R>(Mode::AbsoluteX, Self::eor),
            0x5E => self.rmw_op::<R>(Mode::AbsoluteX, Self::lsr),
            0x5F => self.rmw_op::<R>(Mode::AbsoluteX, Self::sre),
            0x60 => self.rts::<R>(),
            0x61 => self.read_op::<R>(Mode::IndirectX, Self::adc),
            0x62 => self.jam::<R>(),
            0x63 => self.rmw_op::<R>(Mode::IndirectX, Self::rra),
            0x64 => self.read_op::<R>(Mode::ZeroPage, Self::nop_read),
            0x65 => self.read_op::<R>(Mode::ZeroPage, Self::adc),
            0x66 => self.rmw_op::<R>(Mode::ZeroPage, Self::ror),
            0x67 => self.rmw_op::<R>(Mode::ZeroPage, Self::rra),
            0x68 => self.pla::<R>(),
            0x69 => self.read_op::<R>(Mode::Immediate, Self::adc),
            0x6A => self.accumulator_op::<R>(Self::ror),
            0x6B => self.read_op::<R>(Mode::Immediate, Self::arr),
            0x6C => self.jmp_indirect::<R>(),
            0x6D => self.read_op::<R>(Mode::Absolute, Self::adc),
            0x6E => self.rmw_op::<R>(Mode::Absolute, Self::ror),
            0x6F => self.rmw_op::<R>(Mode::Absolute, Self::rra),
            0x70 => self.branch::<R>(self.cpu.flag(flags::V)),
            0x71 => self.read_op::<R>(Mode::IndirectY, Self::adc),
            0x72 => self.jam::<R>(),
            0x73 => self.rmw_op::<R>(Mode::IndirectY, Self::rra),
            0x74 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0x75 => self.read_op::<R>(Mode::ZeroPageX, Self::adc),
            0x76 => self.rmw_op::<R>(Mode::ZeroPageX, Self::ror),
            0x77 => self.rmw_op::<R>(Mode::ZeroPageX, Self::rra),
            0x78 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::I, true)),
            0x79 => self.read_op::<R>(Mode::AbsoluteY, Self::adc),
            0x7A => self.implied_op::<R>(|_| ()),
            0x7B => self.rmw_op::<R>(Mode::AbsoluteY, Self::rra),
            0x7C => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0x7D => self.read_op::<R>(Mode::AbsoluteX, Self::adc),
            0x7E => self.rmw_op::<R>(Mode::AbsoluteX, Self::ror),
            0x7F => self.rmw_op::<R>(Mode::AbsoluteX, Self::rra),
            0x80 => self.read_op::<R>(Mode::Immediate, Self::nop_read),
            0x81 => self.store_op::<R>(Mode::IndirectX, self.cpu.a),
            0x82 => self.read_op::<R>(Mode::Immediate, Self::nop_read),
            0x83 => self.store_op::<R>(Mode::IndirectX, self.cpu.a & self.cpu.x),
            0x84 => {
                // The canary's drill (tests/canary.rs builds it; no shipped build has the feature): one
                // deliberate cycle too many, a second read of the operand byte before STY zp stores.
                #[cfg(feature = "canary-drill")]
                self.read::<R>(self.cpu.pc);
                self.store_op::<R>(Mode::ZeroPage, self.cpu.y)
            }
            0x85 => self.store_op::<R>(Mode::ZeroPage, self.cpu.a),
            0x86 => self.store_op::<R>(Mode::ZeroPage, self.cpu.x),
            0x87 => self.store_op::<R>(Mode::ZeroPage, self.cpu.a & self.cpu.x),
            0x88 => self.implied_op::<R>(|s| {
                s.cpu.y = s.cpu.y.wrapping_sub(1);
                s.cpu.set_nz(s.cpu.y)
            }),
            0x89 => self.read_op::<R>(Mode::Immediate, Self::nop_read),
            0x8A => self.implied_op::<R>(|s| {
                s.cpu.a = s.cpu.x;
                s.cpu.set_nz(s.cpu.a)
            }),
            0x8B => self.read_op::<R>(Mode::Immediate, Self::ane),
            0x8C => self.store_op::<R>(Mode::Absolute, self.cpu.y),
            0x8D => self.store_op::<R>(Mode::Absolute, self.cpu.a),
            0x8E => self.store_op::<R>(Mode::Absolute, self.cpu.x),
            0x8F => self.store_op::<R>(Mode::Absolute, self.cpu.a & self.cpu.x),
            0x90 => self.branch::<R>(!self.cpu.flag(flags::C)),
            0x91 => self.store_op::<R>(Mode::IndirectY, self.cpu.a),
            0x92 => self.jam::<R>(),
            0x93 => self.sha::<R>(Mode::IndirectY),
            0x94 => self.store_op::<R>(Mode::ZeroPageX, self.cpu.y),
            0x95 => self.store_op::<R>(Mode::ZeroPageX, self.cpu.a),
            0x96 => self.store_op::<R>(Mode::ZeroPageY, self.cpu.x),
            0x97 => self.store_op::<R>(Mode::ZeroPageY, self.cpu.a & self.cpu.x),
            0x98 => self.implied_op::<R>(|s| {
                s.cpu.a = s.cpu.y;
                s.cpu.set_nz(s.cpu.a)
            }),
            0x99 => self.store_op::<R>(Mode::AbsoluteY, self.cpu.a),
            0x9A => self.implied_op::<R>(|s| s.cpu.sp = s.cpu.x),
            0x9B => self.tas::<R>(Mode::AbsoluteY),
            0x9C => self.shy::<R>(Mode::AbsoluteX),
            0x9D => self.store_op::<R>(Mode::AbsoluteX, self.cpu.a),
            0x9E => self.shx::<R>(Mode::AbsoluteY),
            0x9F => self.sha::<R>(Mode::AbsoluteY),
            0xA0 => self.read_op::<R>(Mode::Immediate, Self::ldy),
            0xA1 => self.read_op::<R>(Mode::IndirectX, Self::lda),
            0xA2 => self.read_op::<R>(Mode::Immediate, Self::ldx),
            0xA3 => self.read_op::<R>(Mode::IndirectX, Self::lax),
            0xA4 => self.read_op::<R>(Mode::ZeroPage, Self::ldy),
            0xA5 => self.read_op::<R>(Mode::ZeroPage, Self::lda),
            0xA6 => self.read_op::<R>(Mode::ZeroPage, Self::ldx),
            0xA7 => self.read_op::<R>(Mode::ZeroPage, Self::lax),
            0xA8 => self.implied_op::<R>(|s| {
                s.cpu.y = s.cpu.a;
                s.cpu.set_nz(s.cpu.y)
            }),
            0xA9 => self.read_op::<R>(Mode::Immediate, Self::lda),
            0xAA => self.implied_op::<R>(|s| {
                s.cpu.x = s.cpu.a;
                s.cpu.set_nz(s.cpu.x)
            }),
            0xAB => self.read_op::<R>(Mode::Immediate, Self::lxa),
            0xAC => self.read_op::<R>(Mode::Absolute, Self::ldy),
            0xAD => self.read_op::<R>(Mode::Absolute, Self::lda),
            0xAE => self.read_op::<R>(Mode::Absolute, Self::ldx),
            0xAF => self.read_op::<R>(Mode::Absolute, Self::lax),
            0xB0 => self.branch::<R>(self.cpu.flag(flags::C)),
            0xB1 => self.read_op::<R>(Mode::IndirectY, Self::lda),
            0xB2 => self.jam::<R>(),
            0xB3 => self.read_op::<R>(Mode::IndirectY, Self::lax),
            0xB4 => self.read_op::<R>(Mode::ZeroPageX, Self::ldy),
            0xB5 => self.read_op::<R>(Mode::ZeroPageX, Self::lda),
            0xB6 => self.read_op::<R>(Mode::ZeroPageY, Self::ldx),
            0xB7 => self.read_op::<R>(Mode::ZeroPageY, Self::lax),
            0xB8 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::V, false)),
            0xB9 => self.read_op::<R>(Mode::AbsoluteY, Self::lda),
            0xBA => self.implied_op::<R>(|s| {
                s.cpu.x = s.cpu.sp;
                s.cpu.set_nz(s.cpu.x)
            }),
            0xBB => self.read_op::<R>(Mode::AbsoluteY, Self::las),
            0xBC => self.read_op::<R>(Mode::AbsoluteX, Self::ldy),
            0xBD => self.read_op::<R>(Mode::AbsoluteX, Self::lda),
            0xBE => self.read_op::<R>(Mode::AbsoluteY, Self::ldx),
            0xBF => self.read_op::<R>(Mode::AbsoluteY, Self::lax),
            0xC0 => self.read_op::<R>(Mode::Immediate, Self::cpy),
            0xC1 => self.read_op::<R>(Mode::IndirectX, Self::cmp),
            0xC2 => self.read_op::<R>(Mode::Immediate, Self::nop_read),
            0xC3 => self.rmw_op::<R>(Mode::IndirectX, Self::dcp),
            0xC4 => self.read_op::<R>(Mode::ZeroPage, Self::cpy),
            0xC5 => self.read_op::<R>(Mode::ZeroPage, Self::cmp),
            0xC6 => self.rmw_op::<R>(Mode::ZeroPage, Self::dec),
            0xC7 => self.rmw_op::<R>(Mode::ZeroPage, Self::dcp),
            0xC8 => self.implied_op::<R>(|s| {
                s.cpu.y = s.cpu.y.wrapping_add(1);
                s.cpu.set_nz(s.cpu.y)
            }),
            0xC9 => self.read_op::<R>(Mode::Immediate, Self::cmp),
            0xCA => self.implied_op::<R>(|s| {
                s.cpu.x = s.cpu.x.wrapping_sub(1);
                s.cpu.set_nz(s.cpu.x)
            }),
            0xCB => self.read_op::<R>(Mode::Immediate, Self::sbx),
            0xCC => self.read_op::<R>(Mode::Absolute, Self::cpy),
            0xCD => self.read_op::<R>(Mode::Absolute, Self::cmp),
            0xCE => self.rmw_op::<R>(Mode::Absolute, Self::dec),
            0xCF => self.rmw_op::<R>(Mode::Absolute, Self::dcp),
            0xD0 => self.branch::<R>(!self.cpu.flag(flags::Z)),
            0xD1 => self.read_op::<R>(Mode::IndirectY, Self::cmp),
            0xD2 => self.jam::<R>(),
            0xD3 => self.rmw_op::<R>(Mode::IndirectY, Self::dcp),
            0xD4 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0xD5 => self.read_op::<R>(Mode::ZeroPageX, Self::cmp),
            0xD6 => self.rmw_op::<R>(Mode::ZeroPageX, Self::dec),
            0xD7 => self.rmw_op::<R>(Mode::ZeroPageX, Self::dcp),
            0xD8 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::D, false)),
            0xD9 => self.read_op::<R>(Mode::AbsoluteY, Self::cmp),
            0xDA => self.implied_op::<R>(|_| ()),
            0xDB => self.rmw_op::<R>(Mode::AbsoluteY, Self::dcp),
            0xDC => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0xDD => self.read_op::<R>(Mode::AbsoluteX, Self::cmp),
            0xDE => self.rmw_op::<R>(Mode::AbsoluteX, Self::dec),
            0xDF => self.rmw_op::<R>(Mode::AbsoluteX, Self::dcp),
            0xE0 => self.read_op::<R>(Mode::Immediate, Self::cpx),
            0xE1 => self.read_op::<R>(Mode::IndirectX, Self::sbc),
            0xE2 => self.read_op::<R>(Mode::Immediate, Self::nop_read),
            0xE3 => self.rmw_op::<R>(Mode::IndirectX, Self::isb),
            0xE4 => self.read_op::<R>(Mode::ZeroPage, Self::cpx),
            0xE5 => self.read_op::<R>(Mode::ZeroPage, Self::sbc),
            0xE6 => self.rmw_op::<R>(Mode::ZeroPage, Self::inc),
            0xE7 => self.rmw_op::<R>(Mode::ZeroPage, Self::isb),
            0xE8 => self.implied_op::<R>(|s| {
                s.cpu.x = s.cpu.x.wrapping_add(1);
                s.cpu.set_nz(s.cpu.x)
            }),
            0xE9 => self.read_op::<R>(Mode::Immediate, Self::sbc),
            0xEA => self.implied_op::<R>(|_| ()),
            0xEB => self.read_op::<R>(Mode::Immediate, Self::sbc),
            0xEC => self.read_op::<R>(Mode::Absolute, Self::cpx),
            0xED => self.read_op::<R>(Mode::Absolute, Self::sbc),
            0xEE => self.rmw_op::<R>(Mode::Absolute, Self::inc),
            0xEF => self.rmw_op::<R>(Mode::Absolute, Self::isb),
            0xF0 => self.branch::<R>(self.cpu.flag(flags::Z)),
            0xF1 => self.read_op::<R>(Mode::IndirectY, Self::sbc),
            0xF2 => self.jam::<R>(),
            0xF3 => self.rmw_op::<R>(Mode::IndirectY, Self::isb),
            0xF4 => self.read_op::<R>(Mode::ZeroPageX, Self::nop_read),
            0xF5 => self.read_op::<R>(Mode::ZeroPageX, Self::sbc),
            0xF6 => self.rmw_op::<R>(Mode::ZeroPageX, Self::inc),
            0xF7 => self.rmw_op::<R>(Mode::ZeroPageX, Self::isb),
            0xF8 => self.implied_op::<R>(|s| s.cpu.set_flag(flags::D, true)),
            0xF9 => self.read_op::<R>(Mode::AbsoluteY, Self::sbc),
            0xFA => self.implied_op::<R>(|_| ()),
            0xFB => self.rmw_op::<R>(Mode::AbsoluteY, Self::isb),
            0xFC => self.read_op::<R>(Mode::AbsoluteX, Self::nop_read),
            0xFD => self.read_op::<R>(Mode::AbsoluteX, Self::sbc),
            0xFE => self.rmw_op::<R>(Mode::AbsoluteX, Self::inc),
            0xFF => self.rmw_op::<R>(Mode::AbsoluteX, Self::isb),
        }
    }

    // ---- fetch and stack ----

    #[inline(always)]
    fn fetch<R: RegionModel>(&mut self) -> u8 {
        let pc = self.cpu.pc;
        let v = self.read_code::<R>(pc);
        self.cpu.pc = pc.wrapping_add(1);
        v
    }

    /// A read of the program (PC, a branch's target): programs run from PRG ROM, so its fast read
    /// comes first, skipping the checks for work RAM.
    #[inline(always)]
    fn read_code<R: RegionModel>(&mut self, addr: u16) -> u8 {
        match self.read_prg_fast::<R>(addr) {
            Some(v) => v,
            None => self.read::<R>(addr),
        }
    }

    #[inline(always)]
    fn fetch_word<R: RegionModel>(&mut self) -> u16 {
        let lo = self.fetch::<R>();
        let hi = self.fetch::<R>();
        u16::from_le_bytes([lo, hi])
    }

    #[inline(always)]
    fn push<R: RegionModel>(&mut self, v: u8) {
        self.write::<R>(0x0100 | u16::from(self.cpu.sp), v);
        self.cpu.sp = self.cpu.sp.wrapping_sub(1);
    }

    #[inline(always)]
    fn pull<R: RegionModel>(&mut self) -> u8 {
        self.cpu.sp = self.cpu.sp.wrapping_add(1);
        self.read::<R>(0x0100 | u16::from(self.cpu.sp))
    }

    /// The dummy read of the stack that precedes the first pull.
    #[inline(always)]
    fn stack_dummy_read<R: RegionModel>(&mut self) {
        self.read::<R>(0x0100 | u16::from(self.cpu.sp));
    }

    // ---- addressing ----

    /// Computes the effective address of `mode`, performing the mode's bus cycles. `always_fix` is set
    /// for writes and read-modify-writes, which always spend the cycle that reads the address before
    /// the page carry is fixed; reads spend it only when the index crosses a page.
    #[inline(always)]
    fn operand_address<R: RegionModel>(&mut self, mode: Mode, always_fix: bool) -> u16 {
        match mode {
            Mode::ZeroPage => u16::from(self.fetch::<R>()),
            Mode::ZeroPageX => {
                let base = self.fetch::<R>();
                self.read::<R>(u16::from(base));
                u16::from(base.wrapping_add(self.cpu.x))
            }
            Mode::ZeroPageY => {
                let base = self.fetch::<R>();
                self.read::<R>(u16::from(base));
                u16::from(base.wrapping_add(self.cpu.y))
            }
            Mode::Absolute => self.fetch_word::<R>(),
            Mode::AbsoluteX => {
                let base = self.fetch_word::<R>();
                self.indexed::<R>(base, self.cpu.x, always_fix)
            }
            Mode::AbsoluteY => {
                let base = self.fetch_word::<R>();
                self.indexed::<R>(base, self.cpu.y, always_fix)
            }
            Mode::IndirectX => {
                let ptr = self.fetch::<R>();
                self.read::<R>(u16::from(ptr));
                let ptr = ptr.wrapping_add(self.cpu.x);
                let lo = self.read::<R>(u16::from(ptr));
                let hi = self.read::<R>(u16::from(ptr.wrapping_add(1)));
                u16::from_le_bytes([lo, hi])
            }
            Mode::IndirectY => {
                let base = self.indirect_y_base::<R>();
                self.indexed::<R>(base, self.cpu.y, always_fix)
            }
            Mode::Implied | Mode::Accumulator | Mode::Immediate | Mode::Indirect | Mode::Relative => {
                unreachable!("{mode:?} has no operand address")
            }
        }
    }

    #[inline(always)]
    fn indirect_y_base<R: RegionModel>(&mut self) -> u16 {
        let ptr = self.fetch::<R>();
        let lo = self.read::<R>(u16::from(ptr));
        let hi = self.read::<R>(u16::from(ptr.wrapping_add(1)));
        u16::from_le_bytes([lo, hi])
    }

    /// base + index, with the dummy read of the not-yet-carried address when the hardware makes it.
    #[inline(always)]
    fn indexed<R: RegionModel>(&mut self, base: u16, index: u8, always_fix: bool) -> u16 {
        let addr = base.wrapping_add(u16::from(index));
        if always_fix || (addr ^ base) & 0xFF00 != 0 {
            self.read::<R>((base & 0xFF00) | (addr & 0x00FF));
        }
        addr
    }

    // ---- instruction shapes ----

    #[inline(always)]
    fn read_op<R: RegionModel>(&mut self, mode: Mode, op: fn(&mut Self, u8)) {
        let value = if mode == Mode::Immediate {
            self.fetch::<R>()
        } else {
            let addr = self.operand_address::<R>(mode, false);
            self.read::<R>(addr)
        };
        op(self, value);
    }

    #[inline(always)]
    fn store_op<R: RegionModel>(&mut self, mode: Mode, value: u8) {
        let addr = self.operand_address::<R>(mode, true);
        self.write::<R>(addr, value);
    }

    /// Read-modify-write: read, write the old value back (the dummy write), write the result.
    #[inline(always)]
    fn rmw_op<R: RegionModel>(&mut self, mode: Mode, op: fn(&mut Self, u8) -> u8) {
        let addr = self.operand_address::<R>(mode, true);
        let value = self.read::<R>(addr);
        self.write::<R>(addr, value);
        let result = op(self, value);
        self.write::<R>(addr, result);
    }

    #[inline(always)]
    fn accumulator_op<R: RegionModel>(&mut self, op: fn(&mut Self, u8) -> u8) {
        self.read_code::<R>(self.cpu.pc);
        self.cpu.a = op(self, self.cpu.a);
    }

    /// One-byte instructions read the next byte and discard it.
    #[inline(always)]
    fn implied_op<R: RegionModel>(&mut self, op: fn(&mut Self)) {
        self.read_code::<R>(self.cpu.pc);
        op(self);
    }

    // ---- ALU ----

    fn lda(&mut self, v: u8) {
        self.cpu.a = v;
        self.cpu.set_nz(v);
    }
    fn ldx(&mut self, v: u8) {
        self.cpu.x = v;
        self.cpu.set_nz(v);
    }
    fn ldy(&mut self, v: u8) {
        self.cpu.y = v;
        self.cpu.set_nz(v);
    }
    fn lax(&mut self, v: u8) {
        self.cpu.a = v;
        self.cpu.x = v;
        self.cpu.set_nz(v);
    }
    fn nop_read(&mut self, _v: u8) {}
    fn ora(&mut self, v: u8) {
        self.cpu.a |= v;
        self.cpu.set_nz(self.cpu.a);
    }
    fn and(&mut self, v: u8) {
        self.cpu.a &= v;
        self.cpu.set_nz(self.cpu.a);
    }
    fn eor(&mut self, v: u8) {
        self.cpu.a ^= v;
        self.cpu.set_nz(self.cpu.a);
    }
    fn adc(&mut self, v: u8) {
        let a = self.cpu.a;
        let sum = u16::from(a) + u16::from(v) + u16::from(self.cpu.p & flags::C);
        let result = sum as u8;
        self.cpu.set_flag(flags::C, sum > 0xFF);
        self.cpu.set_flag(flags::V, (a ^ result) & (v ^ result) & 0x80 != 0);
        self.cpu.a = result;
        self.cpu.set_nz(result);
    }
    fn sbc(&mut self, v: u8) {
        self.adc(!v);
    }
    fn compare(&mut self, reg: u8, v: u8) {
        self.cpu.set_flag(flags::C, reg >= v);
        self.cpu.set_nz(reg.wrapping_sub(v));
    }
    fn cmp(&mut self, v: u8) {
        self.compare(self.cpu.a, v);
    }
    fn cpx(&mut self, v: u8) {
        self.compare(self.cpu.x, v);
    }
    fn cpy(&mut self, v: u8) {
        self.compare(self.cpu.y, v);
    }
    fn bit(&mut self, v: u8) {
        self.cpu.set_flag(flags::Z, self.cpu.a & v == 0);
        self.cpu.p = (self.cpu.p & !(flags::N | flags::V)) | (v & (flags::N | flags::V));
    }
    fn asl(&mut self, v: u8) -> u8 {
        self.cpu.set_flag(flags::C, v & 0x80 != 0);
        let r = v << 1;
        self.cpu.set_nz(r);
        r
    }
    fn lsr(&mut self, v: u8) -> u8 {
        self.cpu.set_flag(flags::C, v & 1 != 0);
        let r = v >> 1;
        self.cpu.set_nz(r);
        r
    }
    fn rol(&mut self, v: u8) -> u8 {
        let r = (v << 1) | (self.cpu.p & flags::C);
        self.cpu.set_flag(flags::C, v & 0x80 != 0);
        self.cpu.set_nz(r);
        r
    }
    fn ror(&mut self, v: u8) -> u8 {
        let r = (v >> 1) | ((self.cpu.p & flags::C) << 7);
        self.cpu.set_flag(flags::C, v & 1 != 0);
        self.cpu.set_nz(r);
        r
    }
    fn inc(&mut self, v: u8) -> u8 {
        let r = v.wrapping_add(1);
        self.cpu.set_nz(r);
        r
    }
    fn dec(&mut self, v: u8) -> u8 {
        let r = v.wrapping_sub(1);
        self.cpu.set_nz(r);
        r
    }

    // ---- unofficial combinations (nesdev "Programming with unofficial opcodes") ----

    fn slo(&mut self, v: u8) -> u8 {
        let r = self.asl(v);
        self.ora(r);
        r
    }
    fn rla(&mut self, v: u8) -> u8 {
        let r = self.rol(v);
        self.and(r);
        r
    }
    fn sre(&mut self, v: u8) -> u8 {
        let r = self.lsr(v);
        self.eor(r);
        r
    }
    fn rra(&mut self, v: u8) -> u8 {
        let r = self.ror(v);
        self.adc(r);
        r
    }
    fn dcp(&mut self, v: u8) -> u8 {
        let r = v.wrapping_sub(1);
        self.cmp(r);
        r
    }
    fn isb(&mut self, v: u8) -> u8 {
        let r = v.wrapping_add(1);
        self.sbc(r);
        r
    }
    fn anc(&mut self, v: u8) {
        self.and(v);
        self.cpu.set_flag(flags::C, self.cpu.a & 0x80 != 0);
    }
    fn alr(&mut self, v: u8) {
        self.cpu.a &= v;
        self.cpu.a = self.lsr(self.cpu.a);
    }
    fn arr(&mut self, v: u8) {
        let a = ((self.cpu.a & v) >> 1) | ((self.cpu.p & flags::C) << 7);
        self.cpu.a = a;
        self.cpu.set_nz(a);
        self.cpu.set_flag(flags::C, a & 0x40 != 0);
        self.cpu.set_flag(flags::V, ((a >> 6) ^ (a >> 5)) & 1 != 0);
    }
    /// ANE (XAA): A = (A | magic) & X & operand. The magic constant is analog and chip-dependent;
    /// $EE is the commonly documented value (also FCEUX's), so traces compare with other emulators.
    fn ane(&mut self, v: u8) {
        self.cpu.a = (self.cpu.a | 0xEE) & self.cpu.x & v;
        self.cpu.set_nz(self.cpu.a);
    }
    /// LXA (ATX): with the 2A03's magic constant $FF, A and X both receive the operand.
    fn lxa(&mut self, v: u8) {
        self.lax(v);
    }
    fn sbx(&mut self, v: u8) {
        let ax = self.cpu.a & self.cpu.x;
        self.cpu.set_flag(flags::C, ax >= v);
        self.cpu.x = ax.wrapping_sub(v);
        self.cpu.set_nz(self.cpu.x);
    }
    fn las(&mut self, v: u8) {
        let r = v & self.cpu.sp;
        self.cpu.sp = r;
        self.lax(r);
    }

    /// The SH* family stores `value & (H + 1)`, H being the base address's high byte; when the index
    /// crosses a page the stored value also replaces the high byte of the address. When a DMA halts
    /// the CPU on the read just before the write, the `& (H + 1)` drops off and `value` is stored as
    /// is (AccuracyCoin "SHA/SHX/SHY/SHS", error 7: "if the RDY line goes low 2 cycles before the
    /// write cycle"; the same on the C64, VICE testprogs CPU/sha "unstable conditions").
    #[inline(always)]
    fn unstable_store<R: RegionModel>(&mut self, mode: Mode, value: u8) {
        let (base, index) = match mode {
            Mode::AbsoluteX => (self.fetch_word::<R>(), self.cpu.x),
            Mode::AbsoluteY => (self.fetch_word::<R>(), self.cpu.y),
            Mode::IndirectY => (self.indirect_y_base::<R>(), self.cpu.y),
            _ => unreachable!("SH* opcodes use indexed modes"),
        };
        // The read below is halted by a DMA exactly when one is pending now (`Nes::read`).
        let halted = self.bus.dma_halt != 0;
        let addr = self.indexed::<R>(base, index, true);
        let high_mask = if halted { 0xFF } else { ((base >> 8) as u8).wrapping_add(1) };
        let stored = value & high_mask;
        let addr = if (addr ^ base) & 0xFF00 != 0 { (u16::from(stored) << 8) | (addr & 0xFF) } else { addr };
        self.write::<R>(addr, stored);
    }
    fn sha<R: RegionModel>(&mut self, mode: Mode) {
        self.unstable_store::<R>(mode, self.cpu.a & self.cpu.x);
    }
    fn shx<R: RegionModel>(&mut self, mode: Mode) {
        self.unstable_store::<R>(mode, self.cpu.x);
    }
    fn shy<R: RegionModel>(&mut self, mode: Mode) {
        self.unstable_store::<R>(mode, self.cpu.y);
    }
    fn tas<R: RegionModel>(&mut self, mode: Mode) {
        self.cpu.sp = self.cpu.a & self.cpu.x;
        self.unstable_store::<R>(mode, self.cpu.sp);
    }

    // ---- control flow ----

    /// Inlined into each branch opcode's function: called, it saved and restored four registers.
    #[inline(always)]
    fn branch<R: RegionModel>(&mut self, taken: bool) {
        let offset = self.fetch::<R>() as i8;
        if !taken {
            return;
        }
        // A taken branch that does not cross a page does not poll interrupts on its last cycle, so an
        // IRQ that arrives during it waits for one more instruction (cpu_interrupts_v2 5-branch_delays_irq).
        if self.cpu.irq_pending != 0 && self.cpu.irq_pending_prev == 0 {
            self.cpu.irq_pending = 0;
        }
        self.read_code::<R>(self.cpu.pc);
        let target = self.cpu.pc.wrapping_add(offset as u16);
        if (target ^ self.cpu.pc) & 0xFF00 != 0 {
            self.read_code::<R>((self.cpu.pc & 0xFF00) | (target & 0x00FF));
        }
        let at = self.cpu.pc.wrapping_sub(2);
        self.cpu.pc = target;
        if offset < 0 {
            self.spin_taken::<R>(at);
        }
    }

    fn jmp_absolute<R: RegionModel>(&mut self) {
        let at = self.cpu.pc.wrapping_sub(1);
        self.cpu.pc = self.fetch_word::<R>();
        if self.cpu.pc <= at {
            self.spin_taken::<R>(at);
        }
    }

    /// JMP ($xxFF) reads the high byte from $xx00: the pointer increment does not carry.
    fn jmp_indirect<R: RegionModel>(&mut self) {
        let ptr = self.fetch_word::<R>();
        let lo = self.read::<R>(ptr);
        let hi = self.read::<R>((ptr & 0xFF00) | (ptr.wrapping_add(1) & 0x00FF));
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
    }

    fn jsr<R: RegionModel>(&mut self) {
        let lo = self.fetch::<R>();
        self.stack_dummy_read::<R>();
        self.push::<R>((self.cpu.pc >> 8) as u8);
        self.push::<R>(self.cpu.pc as u8);
        let hi = self.read_code::<R>(self.cpu.pc);
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
    }

    fn rts<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.stack_dummy_read::<R>();
        let lo = self.pull::<R>();
        let hi = self.pull::<R>();
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
        self.read_code::<R>(self.cpu.pc);
        self.cpu.pc = self.cpu.pc.wrapping_add(1);
    }

    fn rti<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.stack_dummy_read::<R>();
        let p = self.pull::<R>();
        self.cpu.p = (p & !flags::B) | flags::U;
        self.irq_unmasked();
        let lo = self.pull::<R>();
        let hi = self.pull::<R>();
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
    }

    fn brk<R: RegionModel>(&mut self) {
        self.fetch::<R>();
        self.push::<R>((self.cpu.pc >> 8) as u8);
        self.push::<R>(self.cpu.pc as u8);
        let vector = self.take_vector();
        self.push::<R>(self.cpu.p | flags::B);
        self.cpu.set_flag(flags::I, true);
        let lo = self.read::<R>(vector);
        let hi = self.read::<R>(vector + 1);
        self.cpu.pc = u16::from_le_bytes([lo, hi]);
        self.cpu.nmi_pending_prev = 0;
    }

    fn pha<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.push::<R>(self.cpu.a);
    }

    fn php<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.push::<R>(self.cpu.p | flags::B);
    }

    fn pla<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.stack_dummy_read::<R>();
        let v = self.pull::<R>();
        self.lda(v);
    }

    fn plp<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.stack_dummy_read::<R>();
        let p = self.pull::<R>();
        self.cpu.p = (p & !flags::B) | flags::U;
        self.irq_unmasked();
    }

    /// After an instruction wrote P, possibly clearing I: while /IRQ is asserted, the interrupt
    /// latches are no longer at rest, and the cycles that follow take the full path, which samples
    /// the lines (`Nes::cache_interrupt_lines`).
    #[inline(always)]
    fn irq_unmasked(&mut self) {
        if self.sync.irq_input && !self.cpu.flag(flags::I) {
            self.sync.fast_before = 0;
        }
    }

    /// JAM (KIL): the CPU locks up after reading its operand byte; only reset recovers it.
    fn jam<R: RegionModel>(&mut self) {
        self.read_code::<R>(self.cpu.pc);
        self.cpu.jammed = 1;
        // A jammed CPU's cycles take the full path (`Nes::cache_interrupt_lines`).
        self.sync.fast_before = 0;
    }
}

/// The opcodes' functions, indexed by opcode. One function per opcode instead of one match over all
/// of them: the match was a single function too big to keep anything in registers, which saved and
/// restored six registers around every instruction and called out of line from many of its arms;
/// each opcode's own function spills only what its instruction needs.
struct Opcodes<R>(PhantomData<R>);

impl<R: RegionModel> Opcodes<R> {
    #[rustfmt::skip]
    const TABLE: &'static [fn(&mut Nes); 256] = &[
        Nes::run_opcode::<R, 0x00>, Nes::run_opcode::<R, 0x01>, Nes::run_opcode::<R, 0x02>, Nes::run_opcode::<R, 0x03>, Nes::run_opcode::<R, 0x04>, Nes::run_opcode::<R, 0x05>, Nes::run_opcode::<R, 0x06>, Nes::run_opcode::<R, 0x07>,
        Nes::run_opcode::<R, 0x08>, Nes::run_opcode::<R, 0x09>, Nes::run_opcode::<R, 0x0A>, Nes::run_opcode::<R, 0x0B>, Nes::run_opcode::<R, 0x0C>, Nes::run_opcode::<R, 0x0D>, Nes::run_opcode::<R, 0x0E>, Nes::run_opcode::<R, 0x0F>,
        Nes::run_opcode::<R, 0x10>, Nes::run_opcode::<R, 0x11>, Nes::run_opcode::<R, 0x12>, Nes::run_opcode::<R, 0x13>, Nes::run_opcode::<R, 0x14>, Nes::run_opcode::<R, 0x15>, Nes::run_opcode::<R, 0x16>, Nes::run_opcode::<R, 0x17>,
        Nes::run_opcode::<R, 0x18>, Nes::run_opcode::<R, 0x19>, Nes::run_opcode::<R, 0x1A>, Nes::run_opcode::<R, 0x1B>, Nes::run_opcode::<R, 0x1C>, Nes::run_opcode::<R, 0x1D>, Nes::run_opcode::<R, 0x1E>, Nes::run_opcode::<R, 0x1F>,
        Nes::run_opcode::<R, 0x20>, Nes::run_opcode::<R, 0x21>, Nes::run_opcode::<R, 0x22>, Nes::run_opcode::<R, 0x23>, Nes::run_opcode::<R, 0x24>, Nes::run_opcode::<R, 0x25>, Nes::run_opcode::<R, 0x26>, Nes::run_opcode::<R, 0x27>,
        Nes::run_opcode::<R, 0x28>, Nes::run_opcode::<R, 0x29>, Nes::run_opcode::<R, 0x2A>, Nes::run_opcode::<R, 0x2B>, Nes::run_opcode::<R, 0x2C>, Nes::run_opcode::<R, 0x2D>, Nes::run_opcode::<R, 0x2E>, Nes::run_opcode::<R, 0x2F>,
        Nes::run_opcode::<R, 0x30>, Nes::run_opcode::<R, 0x31>, Nes::run_opcode::<R, 0x32>, Nes::run_opcode::<R, 0x33>, Nes::run_opcode::<R, 0x34>, Nes::run_opcode::<R, 0x35>, Nes::run_opcode::<R, 0x36>, Nes::run_opcode::<R, 0x37>,
        Nes::run_opcode::<R, 0x38>, Nes::run_opcode::<R, 0x39>, Nes::run_opcode::<R, 0x3A>, Nes::run_opcode::<R, 0x3B>, Nes::run_opcode::<R, 0x3C>, Nes::run_opcode::<R, 0x3D>, Nes::run_opcode::<R, 0x3E>, Nes::run_opcode::<R, 0x3F>,
        Nes::run_opcode::<R, 0x40>, Nes::run_opcode::<R, 0x41>, Nes::run_opcode::<R, 0x42>, Nes::run_opcode::<R, 0x43>, Nes::run_opcode::<R, 0x44>, Nes::run_opcode::<R, 0x45>, Nes::run_opcode::<R, 0x46>, Nes::run_opcode::<R, 0x47>,
        Nes::run_opcode::<R, 0x48>, Nes::run_opcode::<R, 0x49>, Nes::run_opcode::<R, 0x4A>, Nes::run_opcode::<R, 0x4B>, Nes::run_opcode::<R, 0x4C>, Nes::run_opcode::<R, 0x4D>, Nes::run_opcode::<R, 0x4E>, Nes::run_opcode::<R, 0x4F>,
        Nes::run_opcode::<R, 0x50>, Nes::run_opcode::<R, 0x51>, Nes::run_opcode::<R, 0x52>, Nes::run_opcode::<R, 0x53>, Nes::run_opcode::<R, 0x54>, Nes::run_opcode::<R, 0x55>, Nes::run_opcode::<R, 0x56>, Nes::run_opcode::<R, 0x57>,
        Nes::run_opcode::<R, 0x58>, Nes::run_opcode::<R, 0x59>, Nes::run_opcode::<R, 0x5A>, Nes::run_opcode::<R, 0x5B>, Nes::run_opcode::<R, 0x5C>, Nes::run_opcode::<R, 0x5D>, Nes::run_opcode::<R, 0x5E>, Nes::run_opcode::<R, 0x5F>,
        Nes::run_opcode::<R, 0x60>, Nes::run_opcode::<R, 0x61>, Nes::run_opcode::<R, 0x62>, Nes::run_opcode::<R, 0x63>, Nes::run_opcode::<R, 0x64>, Nes::run_opcode::<R, 0x65>, Nes::run_opcode::<R, 0x66>, Nes::run_opcode::<R, 0x67>,
        Nes::run_opcode::<R, 0x68>, Nes::run_opcode::<R, 0x69>, Nes::run_opcode::<R, 0x6A>, Nes::run_opcode::<R, 0x6B>, Nes::run_opcode::<R, 0x6C>, Nes::run_opcode::<R, 0x6D>, Nes::run_opcode::<R, 0x6E>, Nes::run_opcode::<R, 0x6F>,
        Nes::run_opcode::<R, 0x70>, Nes::run_opcode::<R, 0x71>, Nes::run_opcode::<R, 0x72>, Nes::run_opcode::<R, 0x73>, Nes::run_opcode::<R, 0x74>, Nes::run_opcode::<R, 0x75>, Nes::run_opcode::<R, 0x76>, Nes::run_opcode::<R, 0x77>,
        Nes::run_opcode::<R, 0x78>, Nes::run_opcode::<R, 0x79>, Nes::run_opcode::<R, 0x7A>, Nes::run_opcode::<R, 0x7B>, Nes::run_opcode::<R, 0x7C>, Nes::run_opcode::<R, 0x7D>, Nes::run_opcode::<R, 0x7E>, Nes::run_opcode::<R, 0x7F>,
        Nes::run_opcode::<R, 0x80>, Nes::run_opcode::<R, 0x81>, Nes::run_opcode::<R, 0x82>, Nes::run_opcode::<R, 0x83>, Nes::run_opcode::<R, 0x84>, Nes::run_opcode::<R, 0x85>, Nes::run_opcode::<R, 0x86>, Nes::run_opcode::<R, 0x87>,
        Nes::run_opcode::<R, 0x88>, Nes::run_opcode::<R, 0x89>, Nes::run_opcode::<R, 0x8A>, Nes::run_opcode::<R, 0x8B>, Nes::run_opcode::<R, 0x8C>, Nes::run_opcode::<R, 0x8D>, Nes::run_opcode::<R, 0x8E>, Nes::run_opcode::<R, 0x8F>,
        Nes::run_opcode::<R, 0x90>, Nes::run_opcode::<R, 0x91>, Nes::run_opcode::<R, 0x92>, Nes::run_opcode::<R, 0x93>, Nes::run_opcode::<R, 0x94>, Nes::run_opcode::<R, 0x95>, Nes::run_opcode::<R, 0x96>, Nes::run_opcode::<R, 0x97>,
        Nes::run_opcode::<R, 0x98>, Nes::run_opcode::<R, 0x99>, Nes::run_opcode::<R, 0x9A>, Nes::run_opcode::<R, 0x9B>, Nes::run_opcode::<R, 0x9C>, Nes::run_opcode::<R, 0x9D>, Nes::run_opcode::<R, 0x9E>, Nes::run_opcode::<R, 0x9F>,
        Nes::run_opcode::<R, 0xA0>, Nes::run_opcode::<R, 0xA1>, Nes::run_opcode::<R, 0xA2>, Nes::run_opcode::<R, 0xA3>, Nes::run_opcode::<R, 0xA4>, Nes::run_opcode::<R, 0xA5>, Nes::run_opcode::<R, 0xA6>, Nes::run_opcode::<R, 0xA7>,
        Nes::run_opcode::<R, 0xA8>, Nes::run_opcode::<R, 0xA9>, Nes::run_opcode::<R, 0xAA>, Nes::run_opcode::<R, 0xAB>, Nes::run_opcode::<R, 0xAC>, Nes::run_opcode::<R, 0xAD>, Nes::run_opcode::<R, 0xAE>, Nes::run_opcode::<R, 0xAF>,
        Nes::run_opcode::<R, 0xB0>, Nes::run_opcode::<R, 0xB1>, Nes::run_opcode::<R, 0xB2>, Nes::run_opcode::<R, 0xB3>, Nes::run_opcode::<R, 0xB4>, Nes::run_opcode::<R, 0xB5>, Nes::run_opcode::<R, 0xB6>, Nes::run_opcode::<R, 0xB7>,
        Nes::run_opcode::<R, 0xB8>, Nes::run_opcode::<R, 0xB9>, Nes::run_opcode::<R, 0xBA>, Nes::run_opcode::<R, 0xBB>, Nes::run_opcode::<R, 0xBC>, Nes::run_opcode::<R, 0xBD>, Nes::run_opcode::<R, 0xBE>, Nes::run_opcode::<R, 0xBF>,
        Nes::run_opcode::<R, 0xC0>, Nes::run_opcode::<R, 0xC1>, Nes::run_opcode::<R, 0xC2>, Nes::run_opcode::<R, 0xC3>, Nes::run_opcode::<R, 0xC4>, Nes::run_opcode::<R, 0xC5>, Nes::run_opcode::<R, 0xC6>, Nes::run_opcode::<R, 0xC7>,
        Nes::run_opcode::<R, 0xC8>, Nes::run_opcode::<R, 0xC9>, Nes::run_opcode::<R, 0xCA>, Nes::run_opcode::<R, 0xCB>, Nes::run_opcode::<R, 0xCC>, Nes::run_opcode::<R, 0xCD>, Nes::run_opcode::<R, 0xCE>, Nes::run_opcode::<R, 0xCF>,
        Nes::run_opcode::<R, 0xD0>, Nes::run_opcode::<R, 0xD1>, Nes::run_opcode::<R, 0xD2>, Nes::run_opcode::<R, 0xD3>, Nes::run_opcode::<R, 0xD4>, Nes::run_opcode::<R, 0xD5>, Nes::run_opcode::<R, 0xD6>, Nes::run_opcode::<R, 0xD7>,
        Nes::run_opcode::<R, 0xD8>, Nes::run_opcode::<R, 0xD9>, Nes::run_opcode::<R, 0xDA>, Nes::run_opcode::<R, 0xDB>, Nes::run_opcode::<R, 0xDC>, Nes::run_opcode::<R, 0xDD>, Nes::run_opcode::<R, 0xDE>, Nes::run_opcode::<R, 0xDF>,
        Nes::run_opcode::<R, 0xE0>, Nes::run_opcode::<R, 0xE1>, Nes::run_opcode::<R, 0xE2>, Nes::run_opcode::<R, 0xE3>, Nes::run_opcode::<R, 0xE4>, Nes::run_opcode::<R, 0xE5>, Nes::run_opcode::<R, 0xE6>, Nes::run_opcode::<R, 0xE7>,
        Nes::run_opcode::<R, 0xE8>, Nes::run_opcode::<R, 0xE9>, Nes::run_opcode::<R, 0xEA>, Nes::run_opcode::<R, 0xEB>, Nes::run_opcode::<R, 0xEC>, Nes::run_opcode::<R, 0xED>, Nes::run_opcode::<R, 0xEE>, Nes::run_opcode::<R, 0xEF>,
        Nes::run_opcode::<R, 0xF0>, Nes::run_opcode::<R, 0xF1>, Nes::run_opcode::<R, 0xF2>, Nes::run_opcode::<R, 0xF3>, Nes::run_opcode::<R, 0xF4>, Nes::run_opcode::<R, 0xF5>, Nes::run_opcode::<R, 0xF6>, Nes::run_opcode::<R, 0xF7>,
        Nes::run_opcode::<R, 0xF8>, Nes::run_opcode::<R, 0xF9>, Nes::run_opcode::<R, 0xFA>, Nes::run_opcode::<R, 0xFB>, Nes::run_opcode::<R, 0xFC>, Nes::run_opcode::<R, 0xFD>, Nes::run_opcode::<R, 0xFE>, Nes::run_opcode::<R, 0xFF>,
    ];
}
