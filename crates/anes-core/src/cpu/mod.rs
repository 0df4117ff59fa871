//! The Ricoh 2A03's 6502 core (no decimal mode): registers, interrupt latches, instruction execution
//! and the nestest-format trace.
//!
//! The CPU drives the console: [`crate::Nes::step_instruction`] runs one instruction (or one interrupt
//! sequence), and every memory access it makes is one CPU cycle on the bus, dummy accesses included.

mod disasm;
mod execute;
mod opcodes;

pub use disasm::trace_line;
pub use opcodes::{ExtraCycles, Mnemonic, Mode, OPCODES, OpcodeInfo};

/// Status flag bits of `P`.
pub mod flags {
    /// Carry.
    pub const C: u8 = 0x01;
    /// Zero.
    pub const Z: u8 = 0x02;
    /// IRQ disable.
    pub const I: u8 = 0x04;
    /// Decimal (stored but has no effect on the 2A03).
    pub const D: u8 = 0x08;
    /// Break: exists only in the copy of P pushed by BRK/PHP.
    pub const B: u8 = 0x10;
    /// Unused: always reads as 1.
    pub const U: u8 = 0x20;
    /// Overflow.
    pub const V: u8 = 0x40;
    /// Negative.
    pub const N: u8 = 0x80;
}

/// Vector addresses.
pub const NMI_VECTOR: u16 = 0xFFFA;
/// Reset vector.
pub const RESET_VECTOR: u16 = 0xFFFC;
/// IRQ/BRK vector.
pub const IRQ_VECTOR: u16 = 0xFFFE;

crate::layout::state_struct! {
    /// CPU registers and interrupt-detection latches: all of the CPU's mutable state.
    ///
    /// `p` always has bit 5 set and bit 4 clear (B exists only on the stack), as nestest.log prints it.
    pub struct CpuState {
        /// Program counter.
        pub pc: u16,
        /// Accumulator.
        pub a: u8,
        /// X index.
        pub x: u8,
        /// Y index.
        pub y: u8,
        /// Stack pointer (the stack is page 1).
        pub sp: u8,
        /// Status flags (see [`flags`]).
        pub p: u8,
        /// 1 once a JAM opcode halted the CPU; only reset or power clears it.
        pub jammed: u8,
        /// /NMI level sampled at the end of the previous cycle (1 = asserted), for edge detection.
        pub nmi_line_prev: u8,
        /// An NMI edge was detected and the NMI is not yet serviced.
        pub nmi_pending: u8,
        /// `nmi_pending` as it was one cycle earlier: what the end of an instruction acts on, which yields
        /// the hardware's poll on the second-to-last cycle.
        pub nmi_pending_prev: u8,
        /// IRQ line asserted and I clear at the end of the last cycle.
        pub irq_pending: u8,
        /// `irq_pending` one cycle earlier.
        pub irq_pending_prev: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 3],
    }
}

const _: () = assert!(core::mem::size_of::<CpuState>() == 16);

impl CpuState {
    #[inline]
    pub(crate) fn flag(&self, f: u8) -> bool {
        self.p & f != 0
    }

    #[inline]
    pub(crate) fn set_flag(&mut self, f: u8, on: bool) {
        if on {
            self.p |= f;
        } else {
            self.p &= !f;
        }
    }

    #[inline]
    pub(crate) fn set_nz(&mut self, v: u8) {
        self.p = (self.p & !(flags::N | flags::Z)) | (v & flags::N) | if v == 0 { flags::Z } else { 0 };
    }
}
