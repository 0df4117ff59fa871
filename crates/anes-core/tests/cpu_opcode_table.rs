//! `OPCODES` (used by the disassembler and the trace) against the CPU's execution (a separate `match`):
//! for every one of the 256 opcodes, the addressing mode, the length and the cycle count the table
//! states must be what running the opcode does.
//!
//! Each run is a tiny NROM program that copies a RAM image into work RAM, loads the registers and
//! jumps to the opcode under test; one `Nes::step_instruction` then runs it. The length is the PC
//! advance, the cycle count the `Nes::cpu_cycle` advance, and the addressing mode the memory touched:
//! the one RAM byte a store or read-modify-write changed, or, for reads, the value left on the data
//! bus by the instruction's last cycle (`Nes::peek` of $4000 is open bus), which the image makes
//! different at every address any mode could reach. Each opcode runs twice: once with indexes that
//! stay in their page and once with indexes that cross it (and wrap in zero page). Branches, jumps,
//! the stack instructions, BRK and JAM follow their own rules below.

use anes_core::cpu::{ExtraCycles, Mnemonic, Mode, OPCODES, OpcodeInfo, flags};
use anes_core::{Cartridge, Nes, NesConfig};

/// One run's starting point.
#[derive(Debug, Clone, Copy)]
struct Case {
    /// Registers (S is always [`STACK`]).
    a: u8,
    x: u8,
    y: u8,
    p: u8,
    /// Where `(zp),Y` points before indexing.
    indirect_y_base: u16,
    /// Where the opcode sits, and the two bytes after it.
    at: u16,
    operand: [u8; 2],
}

/// The operand bytes after the opcode: zero page $80, absolute $0380.
const OPERAND: [u8; 2] = [0x80, 0x03];
/// Where `(zp,X)` points.
const INDIRECT_X_TARGET: u16 = 0x0530;
/// Where the opcode under test sits, unless a branch case says otherwise.
const AT: u16 = 0xA000;
/// Where the program keeps the image it copies into work RAM.
const RAM_IMAGE: u16 = 0x9000;
/// The IRQ/BRK vector's target.
const IRQ_HANDLER: u16 = 0xB000;
/// The stack pointer every run starts with.
const STACK: u8 = 0xF0;

/// Every index stays inside its page.
const NEAR: Case =
    Case { a: 0x77, x: 0x05, y: 0x07, p: 0x25, indirect_y_base: 0x0640, at: AT, operand: OPERAND };

/// Every index crosses its page: $0380+X, $0380+Y, $06C0+Y, and $80+X / $80+Y wrap in zero page.
/// The SH* family replaces the high byte of a page-crossing address with the stored value
/// `reg & (H + 1)`; these registers keep every bit of H + 1 ($04 and $07) so that the replaced byte
/// is the carried one and the address stays the one the mode computes.
const FAR: Case =
    Case { a: 0x77, x: 0x87, y: 0x8D, p: 0x25, indirect_y_base: 0x06C0, at: AT, operand: OPERAND };

impl Case {
    fn zero_page(&self) -> u8 {
        self.operand[0]
    }

    fn absolute(&self) -> u16 {
        u16::from_le_bytes(self.operand)
    }

    /// The address `mode` reads or writes, by the 6502's rules, for this case and RAM image.
    fn effective_address(&self, mode: Mode, ram: &[u8]) -> Option<u16> {
        let zp = self.zero_page();
        let word_at =
            |lo: u8| u16::from_le_bytes([ram[usize::from(lo)], ram[usize::from(lo.wrapping_add(1))]]);
        Some(match mode {
            Mode::ZeroPage => u16::from(zp),
            Mode::ZeroPageX => u16::from(zp.wrapping_add(self.x)),
            Mode::ZeroPageY => u16::from(zp.wrapping_add(self.y)),
            Mode::Absolute => self.absolute(),
            Mode::AbsoluteX => self.absolute().wrapping_add(u16::from(self.x)),
            Mode::AbsoluteY => self.absolute().wrapping_add(u16::from(self.y)),
            Mode::IndirectX => word_at(zp.wrapping_add(self.x)),
            Mode::IndirectY => word_at(zp).wrapping_add(u16::from(self.y)),
            Mode::Implied | Mode::Accumulator | Mode::Immediate | Mode::Indirect | Mode::Relative => {
                return None;
            }
        })
    }

    /// True when `mode`'s index carries into the next page.
    fn crosses_page(&self, mode: Mode, ram: &[u8]) -> bool {
        let zp = usize::from(self.zero_page());
        let (base, index) = match mode {
            Mode::AbsoluteX => (self.absolute(), self.x),
            Mode::AbsoluteY => (self.absolute(), self.y),
            Mode::IndirectY => (u16::from_le_bytes([ram[zp], ram[(zp + 1) & 0xFF]]), self.y),
            _ => return false,
        };
        (base & 0xFF) + u16::from(index) > 0xFF
    }

    /// Work RAM for the run: both pointers in place, and every address a memory mode could reach
    /// holding a value no other such address holds, none equal to the operand byte (which the
    /// implied and immediate modes leave on the bus).
    fn ram_image(&self) -> [u8; 0x800] {
        let mut ram = [0u8; 0x800];
        for (i, byte) in ram.iter_mut().enumerate() {
            *byte = 0xA0 + (i * 7 % 0x50) as u8;
        }
        let zp = self.zero_page();
        let put_word = |ram: &mut [u8; 0x800], at: u8, word: u16| {
            let [lo, hi] = word.to_le_bytes();
            ram[usize::from(at)] = lo;
            ram[usize::from(at.wrapping_add(1))] = hi;
        };
        put_word(&mut ram, zp.wrapping_add(self.x), INDIRECT_X_TARGET);
        put_word(&mut ram, zp, self.indirect_y_base);
        // Zero page and zero page,X hold the pointers; every other mode's address gets a marker.
        for (i, mode) in MEMORY_MODES[2..].iter().copied().enumerate() {
            let addr = self.effective_address(mode, &ram).expect("a memory mode");
            ram[usize::from(addr)] = 0xC1 + 2 * i as u8;
        }
        let mut seen = vec![zp];
        for mode in MEMORY_MODES {
            let value = ram[usize::from(self.effective_address(mode, &ram).expect("a memory mode"))];
            assert!(!seen.contains(&value), "fixture: {mode:?} reaches a value another mode reaches too");
            seen.push(value);
        }
        ram
    }
}

const MEMORY_MODES: [Mode; 8] = [
    Mode::ZeroPage,
    Mode::ZeroPageX,
    Mode::ZeroPageY,
    Mode::Absolute,
    Mode::AbsoluteX,
    Mode::AbsoluteY,
    Mode::IndirectX,
    Mode::IndirectY,
];

/// An NROM-128 image: at $8000 the program that sets the machine up and jumps to `case.at`, where
/// `opcode` and the operand bytes sit; the RAM image at $9000.
fn rom(opcode: u8, case: &Case, ram: &[u8; 0x800]) -> Vec<u8> {
    let mut prg = vec![0xEAu8; 0x4000];
    let offset = |addr: u16| usize::from(addr - 0x8000) & 0x3FFF;
    // SEI; LDA #$40; STA $4017 (no APU frame IRQ); LDX #0
    let mut code = vec![0x78, 0xA9, 0x40, 0x8D, 0x17, 0x40, 0xA2, 0x00];
    let copy_loop = code.len();
    for page in 0..8u8 {
        let [lo, hi] = (RAM_IMAGE + u16::from(page) * 0x100).to_le_bytes();
        code.extend([0xBD, lo, hi, 0x9D, 0x00, page]); // LDA image,X; STA page,X
    }
    let back = u8::try_from(copy_loop + 256 - (code.len() + 3)).expect("short loop");
    code.extend([0xE8, 0xD0, back]); // INX; BNE copy_loop
    // LDX #STACK; TXS; LDA #p; PHA; LDA #a; LDX #x; LDY #y; PLP; JMP at
    let [at_lo, at_hi] = case.at.to_le_bytes();
    code.extend([0xA2, STACK, 0x9A, 0xA9, case.p, 0x48, 0xA9, case.a, 0xA2, case.x, 0xA0, case.y, 0x28]);
    code.extend([0x4C, at_lo, at_hi]);
    prg[..code.len()].copy_from_slice(&code);
    prg[offset(RAM_IMAGE)..offset(RAM_IMAGE) + 0x800].copy_from_slice(ram);
    let at = offset(case.at);
    prg[at..at + 3].copy_from_slice(&[opcode, case.operand[0], case.operand[1]]);
    let [irq_lo, irq_hi] = IRQ_HANDLER.to_le_bytes();
    prg[0x3FFA..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80, irq_lo, irq_hi]);
    let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    rom.extend(prg);
    rom
}

/// The stack address `offset` bytes from where the stack pointer starts.
fn stack_address(offset: i8) -> u16 {
    0x100 + u16::from(STACK.wrapping_add_signed(offset))
}

/// What one instruction did.
struct Run {
    case: Case,
    /// Work RAM before and after.
    before: Vec<u8>,
    after: Vec<u8>,
    cycles: u64,
    nes: Nes,
}

impl Run {
    fn new(opcode: u8, case: Case) -> Run {
        let ram = case.ram_image();
        let cart = Cartridge::from_ines(&rom(opcode, &case, &ram)).expect("test ROM loads");
        let mut nes = Nes::new(cart, NesConfig::default());
        for _ in 0..10_000 {
            if nes.cpu().pc == case.at {
                break;
            }
            nes.step_instruction();
        }
        assert_eq!(nes.cpu().pc, case.at, "the set-up program never reached the opcode");
        let before: Vec<u8> = (0..0x800).map(|addr| nes.peek(addr)).collect();
        let mut expected = ram;
        expected[0x100 + usize::from(STACK)] = case.p; // left there by the PHA/PLP that set P
        assert!(before == expected, "work RAM holds the image");
        let start = nes.cpu_cycle();
        nes.step_instruction();
        let cycles = nes.cpu_cycle() - start;
        let after = (0..0x800).map(|addr| nes.peek(addr)).collect();
        Run { case, before, after, cycles, nes }
    }

    fn pc(&self) -> u16 {
        self.nes.cpu().pc
    }

    /// The value on the data bus after the instruction's last cycle.
    fn data_bus(&self) -> u8 {
        self.nes.peek(0x4000)
    }

    /// The work RAM addresses whose bytes changed.
    fn changed(&self) -> Vec<u16> {
        (0..0x800u16)
            .filter(|&addr| self.before[usize::from(addr)] != self.after[usize::from(addr)])
            .collect()
    }

    /// The byte `offset` from the stack pointer before the instruction.
    fn stack(&self, offset: i8) -> u8 {
        self.before[usize::from(stack_address(offset))]
    }
}

/// Collects what one opcode got wrong.
struct Check<'a> {
    opcode: u8,
    info: OpcodeInfo,
    problems: &'a mut Vec<String>,
}

impl Check<'_> {
    fn expect<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, table: T, executed: T) {
        if table != executed {
            let (opcode, info) = (self.opcode, self.info);
            self.problems.push(format!(
                "${opcode:02X} {} {:?}: {what}: the table implies {table:X?}, execution gives {executed:X?} (hex)",
                info.mnemonic.name(),
                info.mode
            ));
        }
    }

    fn fail(&mut self, why: &str) {
        let (opcode, info) = (self.opcode, self.info);
        self.problems.push(format!("${opcode:02X} {} {:?}: {why}", info.mnemonic.name(), info.mode));
    }

    /// The base count plus one for a page crossing where the table says reads pay for it.
    fn cycles(&mut self, run: &Run) {
        let info = self.info;
        let crossed = run.case.crosses_page(info.mode, &run.before);
        let extra = u64::from(info.extra_cycles == ExtraCycles::PageCross && crossed);
        let what = if crossed { "cycles (index crossing a page)" } else { "cycles" };
        self.expect(what, u64::from(info.cycles) + extra, run.cycles);
        if info.extra_cycles == ExtraCycles::Branch {
            self.fail("branch extra cycles on an instruction that does not branch");
        }
    }

    fn length(&mut self, run: &Run) {
        self.expect("length (PC advance)", self.info.mode.byte_len(), run.pc().wrapping_sub(run.case.at));
    }

    /// Loads, stores, read-modify-writes, ALU operations, transfers, flag operations and NOPs.
    fn plain(&mut self) {
        for case in [NEAR, FAR] {
            let run = Run::new(self.opcode, case);
            self.length(&run);
            self.cycles(&run);
            let changed = run.changed();
            match self.info.mode {
                Mode::Implied | Mode::Accumulator | Mode::Immediate => {
                    self.expect("RAM bytes written", vec![], changed);
                    // The operand byte: fetched by immediates, read and dropped by one-byte instructions.
                    self.expect("last byte read", case.zero_page(), run.data_bus());
                    let a_changed = run.nes.cpu().a != case.a;
                    let writes_a = matches!(self.info.mnemonic, Mnemonic::Txa | Mnemonic::Tya);
                    match self.info.mode {
                        Mode::Accumulator => self.expect("A shifted or rotated", true, a_changed),
                        Mode::Implied if a_changed && !writes_a => {
                            self.fail("A changed by an implied instruction")
                        }
                        _ => {}
                    }
                }
                mode => match case.effective_address(mode, &run.before) {
                    None => self.fail("a mode this instruction cannot use"),
                    Some(addr) if changed.is_empty() => self.expect(
                        "last byte read (identifies the address)",
                        run.before[usize::from(addr)],
                        run.data_bus(),
                    ),
                    Some(addr) => self.expect("RAM bytes written", vec![addr], changed),
                },
            }
        }
    }

    /// Taken or not by the flags, two or three cycles more when taken, within or across a page.
    fn branch(&mut self) {
        let Some((flag, taken_when_set)) = branch_condition(self.info.mnemonic) else {
            return self.fail("Relative mode on an instruction that does not branch");
        };
        for (at, offset) in [(0xA0F0, 0x04), (0xA0F0, 0x20), (0xA102, 0xF0)] {
            for p in [0x24, 0x24 | flags::N | flags::V | flags::Z | flags::C] {
                let case = Case { p, at, operand: [offset, OPERAND[1]], ..NEAR };
                let run = Run::new(self.opcode, case);
                let next = at.wrapping_add(self.info.mode.byte_len());
                let target = next.wrapping_add_signed(i16::from(offset as i8));
                let taken = (p & flag != 0) == taken_when_set;
                self.expect("PC after the branch", if taken { target } else { next }, run.pc());
                let extra = match (self.info.extra_cycles, taken) {
                    (ExtraCycles::Branch, true) => 1 + u64::from(target & 0xFF00 != next & 0xFF00),
                    _ => 0,
                };
                self.expect("cycles", u64::from(self.info.cycles) + extra, run.cycles);
                self.expect("RAM bytes written", vec![], run.changed());
            }
        }
    }

    /// JMP, JSR, RTS, RTI and BRK: where the PC goes, what is pushed, how long it takes.
    fn control(&mut self) {
        let run = Run::new(self.opcode, NEAR);
        self.cycles(&run);
        let return_address = NEAR.at.wrapping_add(self.info.mode.byte_len());
        let word = |lo: u8, hi: u8| u16::from_le_bytes([lo, hi]);
        let pushed = |run: &Run, offset: i8| run.after[usize::from(stack_address(offset))];
        match (self.info.mnemonic, self.info.mode) {
            (Mnemonic::Jmp, Mode::Absolute) => self.expect("PC", NEAR.absolute(), run.pc()),
            (Mnemonic::Jmp, Mode::Indirect) => {
                // The pointer's high byte comes from the same page (no carry).
                let ptr = NEAR.absolute();
                let (lo, hi) = (ptr, (ptr & 0xFF00) | (ptr.wrapping_add(1) & 0xFF));
                let target = word(run.before[usize::from(lo)], run.before[usize::from(hi)]);
                self.expect("PC", target, run.pc());
            }
            (Mnemonic::Jsr, Mode::Absolute) => {
                self.expect("PC", NEAR.absolute(), run.pc());
                // JSR pushes the address of its own last byte.
                self.expect(
                    "pushed return address",
                    return_address - 1,
                    word(pushed(&run, -1), pushed(&run, 0)),
                );
                self.expect("RAM bytes written", vec![stack_address(-1), stack_address(0)], run.changed());
            }
            (Mnemonic::Rts, Mode::Implied) => {
                self.expect("PC", word(run.stack(1), run.stack(2)).wrapping_add(1), run.pc());
                self.expect("RAM bytes written", vec![], run.changed());
            }
            (Mnemonic::Rti, Mode::Implied) => {
                self.expect("PC", word(run.stack(2), run.stack(3)), run.pc());
                self.expect("P", (run.stack(1) & !flags::B) | flags::U, run.nes.cpu().p);
                self.expect("RAM bytes written", vec![], run.changed());
            }
            (Mnemonic::Brk, Mode::Implied) => {
                self.expect("PC", IRQ_HANDLER, run.pc());
                // BRK skips the byte after it (its signature byte): the return address is one further.
                self.expect(
                    "pushed return address",
                    return_address + 1,
                    word(pushed(&run, -1), pushed(&run, 0)),
                );
                self.expect("pushed P", NEAR.p | flags::B | flags::U, pushed(&run, -2));
                self.expect(
                    "RAM bytes written",
                    vec![stack_address(-2), stack_address(-1), stack_address(0)],
                    run.changed(),
                );
            }
            _ => self.fail("a mode this instruction cannot use"),
        }
    }

    /// PHA, PHP, PLA and PLP: one byte, the stack moved by one.
    fn stack_op(&mut self) {
        let run = Run::new(self.opcode, NEAR);
        self.length(&run);
        self.cycles(&run);
        let stack_top = stack_address(0);
        let cpu = *run.nes.cpu();
        match self.info.mnemonic {
            Mnemonic::Pha | Mnemonic::Php => {
                let value =
                    if self.info.mnemonic == Mnemonic::Pha { NEAR.a } else { NEAR.p | flags::B | flags::U };
                self.expect("RAM bytes written", vec![stack_top], run.changed());
                self.expect("pushed byte", value, run.after[usize::from(stack_top)]);
                self.expect("S", STACK.wrapping_sub(1), cpu.sp);
            }
            _ => {
                let pulled = run.stack(1);
                let (expected, got) = if self.info.mnemonic == Mnemonic::Pla {
                    (pulled, cpu.a)
                } else {
                    ((pulled & !flags::B) | flags::U, cpu.p)
                };
                self.expect("pulled byte", expected, got);
                self.expect("RAM bytes written", vec![], run.changed());
                self.expect("S", STACK.wrapping_add(1), cpu.sp);
            }
        }
    }

    /// JAM: fetches its opcode, spends its cycles and locks the CPU up.
    fn jam(&mut self) {
        let run = Run::new(self.opcode, NEAR);
        self.length(&run);
        self.cycles(&run);
        self.expect("jammed", true, run.nes.is_jammed());
    }
}

/// The flag a branch tests and whether it branches when the flag is set.
fn branch_condition(mnemonic: Mnemonic) -> Option<(u8, bool)> {
    Some(match mnemonic {
        Mnemonic::Bpl => (flags::N, false),
        Mnemonic::Bmi => (flags::N, true),
        Mnemonic::Bvc => (flags::V, false),
        Mnemonic::Bvs => (flags::V, true),
        Mnemonic::Bcc => (flags::C, false),
        Mnemonic::Bcs => (flags::C, true),
        Mnemonic::Bne => (flags::Z, false),
        Mnemonic::Beq => (flags::Z, true),
        _ => return None,
    })
}

#[test]
fn every_opcode_table_entry_matches_execution() {
    let mut problems = Vec::new();
    for opcode in 0..=255u8 {
        let info = OPCODES[usize::from(opcode)];
        let mut check = Check { opcode, info, problems: &mut problems };
        match (info.mnemonic, info.mode) {
            (_, Mode::Relative) => check.branch(),
            (Mnemonic::Jmp | Mnemonic::Jsr | Mnemonic::Rts | Mnemonic::Rti | Mnemonic::Brk, _) => {
                check.control()
            }
            (Mnemonic::Pha | Mnemonic::Php | Mnemonic::Pla | Mnemonic::Plp, _) => check.stack_op(),
            (Mnemonic::Jam, _) => check.jam(),
            _ => check.plain(),
        }
    }
    assert!(problems.is_empty(), "{} disagreements:\n{}", problems.len(), problems.join("\n"));
}
