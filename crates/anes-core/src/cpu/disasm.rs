//! Disassembly and the nestest.log trace format. Everything here peeks: tracing never touches the bus.

use core::fmt::Write;

use super::{Mode, OPCODES};
use crate::nes::Nes;

/// Appends one trace line for the instruction at PC, before it runs, in nestest.log's exact format:
///
/// `C000  4C F5 C5  JMP $C5F5                       A:00 X:00 Y:00 P:24 SP:FD PPU:  0, 21 CYC:7`
pub fn trace_line(nes: &Nes, out: &mut String) {
    let cpu = nes.cpu();
    let pc = cpu.pc;
    let opcode = nes.peek(pc);
    let info = OPCODES[usize::from(opcode)];
    let len = info.mode.byte_len();
    let b1 = nes.peek(pc.wrapping_add(1));
    let b2 = nes.peek(pc.wrapping_add(2));
    let start = out.len();
    let _ = write!(out, "{pc:04X}  {opcode:02X} ");
    match len {
        1 => out.push_str("      "),
        2 => {
            let _ = write!(out, "{b1:02X}    ");
        }
        _ => {
            let _ = write!(out, "{b1:02X} {b2:02X} ");
        }
    }
    out.push(if info.official { ' ' } else { '*' });
    let text_start = out.len();
    out.push_str(info.mnemonic.name());
    out.push(' ');
    write_operand(nes, info.mnemonic.name(), info.mode, pc, b1, b2, out);
    // Disassembly occupies a fixed 32-column field.
    while out.len() < text_start + 32 {
        out.push(' ');
    }
    debug_assert!(out.len() - start >= 48);
    let (scanline, dot) = nes.ppu_position();
    let _ = write!(
        out,
        "A:{:02X} X:{:02X} Y:{:02X} P:{:02X} SP:{:02X} PPU:{:>3},{:>3} CYC:{}",
        cpu.a,
        cpu.x,
        cpu.y,
        cpu.p,
        cpu.sp,
        scanline,
        dot,
        nes.cpu_cycle()
    );
}

fn write_operand(nes: &Nes, name: &str, mode: Mode, pc: u16, b1: u8, b2: u8, out: &mut String) {
    let abs = u16::from_le_bytes([b1, b2]);
    let cpu = nes.cpu();
    // Jumps print their target without the memory value.
    let is_jump = name == "JMP" || name == "JSR";
    let _ = match mode {
        Mode::Implied => {
            out.pop();
            Ok(())
        }
        Mode::Accumulator => write!(out, "A"),
        Mode::Immediate => write!(out, "#${b1:02X}"),
        Mode::ZeroPage => write!(out, "${b1:02X} = {:02X}", memory_value(nes, u16::from(b1))),
        Mode::ZeroPageX | Mode::ZeroPageY => {
            let (reg, index) = if mode == Mode::ZeroPageX { ('X', cpu.x) } else { ('Y', cpu.y) };
            let addr = b1.wrapping_add(index);
            write!(out, "${b1:02X},{reg} @ {addr:02X} = {:02X}", memory_value(nes, u16::from(addr)))
        }
        Mode::Absolute if is_jump => write!(out, "${abs:04X}"),
        Mode::Absolute => write!(out, "${abs:04X} = {:02X}", memory_value(nes, abs)),
        Mode::AbsoluteX | Mode::AbsoluteY => {
            let (reg, index) = if mode == Mode::AbsoluteX { ('X', cpu.x) } else { ('Y', cpu.y) };
            let addr = abs.wrapping_add(u16::from(index));
            write!(out, "${abs:04X},{reg} @ {addr:04X} = {:02X}", memory_value(nes, addr))
        }
        Mode::Indirect => {
            let lo = memory_value(nes, abs);
            let hi = memory_value(nes, (abs & 0xFF00) | (abs.wrapping_add(1) & 0x00FF));
            write!(out, "(${abs:04X}) = {:04X}", u16::from_le_bytes([lo, hi]))
        }
        Mode::IndirectX => {
            let ptr = b1.wrapping_add(cpu.x);
            let target = peek_zp_word(nes, ptr);
            write!(out, "(${b1:02X},X) @ {ptr:02X} = {target:04X} = {:02X}", memory_value(nes, target))
        }
        Mode::IndirectY => {
            let base = peek_zp_word(nes, b1);
            let addr = base.wrapping_add(u16::from(cpu.y));
            write!(out, "(${b1:02X}),Y = {base:04X} @ {addr:04X} = {:02X}", memory_value(nes, addr))
        }
        Mode::Relative => {
            let target = pc.wrapping_add(2).wrapping_add(b1 as i8 as u16);
            write!(out, "${target:04X}")
        }
    };
}

fn peek_zp_word(nes: &Nes, ptr: u8) -> u16 {
    u16::from_le_bytes([nes.peek(u16::from(ptr)), nes.peek(u16::from(ptr.wrapping_add(1)))])
}

/// The memory value shown after `=`. I/O registers ($2000-$401F) are shown as `FF` without being
/// looked at, as in nestest.log (its tracer never touched registers with read side effects).
fn memory_value(nes: &Nes, addr: u16) -> u8 {
    if (0x2000..=0x401F).contains(&addr) { 0xFF } else { nes.peek(addr) }
}
