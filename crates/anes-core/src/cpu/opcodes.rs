//! The 2A03 opcode table: all 256 opcodes, official and unofficial, with their addressing modes and
//! cycle counts (nesdev "6502 cycle times" and "CPU unofficial opcodes"). The disassembler and the
//! trace read it; `tests/cpu_opcode_table.rs` checks every entry against what execution does.

use ExtraCycles::{Branch, Never, PageCross};

/// Addressing modes of the 6502.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No operand.
    Implied,
    /// Operates on A.
    Accumulator,
    /// `#$nn`.
    Immediate,
    /// `$nn`.
    ZeroPage,
    /// `$nn,X` (wraps in page 0).
    ZeroPageX,
    /// `$nn,Y` (wraps in page 0).
    ZeroPageY,
    /// `$nnnn`.
    Absolute,
    /// `$nnnn,X`.
    AbsoluteX,
    /// `$nnnn,Y`.
    AbsoluteY,
    /// `($nnnn)` (JMP only; the pointer's high byte does not carry into the next page).
    Indirect,
    /// `($nn,X)`.
    IndirectX,
    /// `($nn),Y`.
    IndirectY,
    /// Branch offset.
    Relative,
}

impl Mode {
    /// Instruction length in bytes, opcode included.
    pub const fn byte_len(self) -> u16 {
        match self {
            Mode::Implied | Mode::Accumulator => 1,
            Mode::Absolute | Mode::AbsoluteX | Mode::AbsoluteY | Mode::Indirect => 3,
            _ => 2,
        }
    }
}

/// Instruction names. Unofficial ones use the names nestest.log prints where it has them (`ISB`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Mnemonic {
    Adc,
    Alr,
    Anc,
    And,
    Ane,
    Arr,
    Asl,
    Bcc,
    Bcs,
    Beq,
    Bit,
    Bmi,
    Bne,
    Bpl,
    Brk,
    Bvc,
    Bvs,
    Clc,
    Cld,
    Cli,
    Clv,
    Cmp,
    Cpx,
    Cpy,
    Dcp,
    Dec,
    Dex,
    Dey,
    Eor,
    Inc,
    Inx,
    Iny,
    Isb,
    Jam,
    Jmp,
    Jsr,
    Las,
    Lax,
    Lda,
    Ldx,
    Ldy,
    Lsr,
    Lxa,
    Nop,
    Ora,
    Pha,
    Php,
    Pla,
    Plp,
    Rla,
    Rol,
    Ror,
    Rra,
    Rti,
    Rts,
    Sax,
    Sbc,
    Sbx,
    Sec,
    Sed,
    Sei,
    Sha,
    Shx,
    Shy,
    Slo,
    Sre,
    Sta,
    Stx,
    Sty,
    Tas,
    Tax,
    Tay,
    Tsx,
    Txa,
    Txs,
    Tya,
}

impl Mnemonic {
    /// The upper-case three-letter name.
    pub const fn name(self) -> &'static str {
        match self {
            Mnemonic::Adc => "ADC",
            Mnemonic::Alr => "ALR",
            Mnemonic::Anc => "ANC",
            Mnemonic::And => "AND",
            Mnemonic::Ane => "ANE",
            Mnemonic::Arr => "ARR",
            Mnemonic::Asl => "ASL",
            Mnemonic::Bcc => "BCC",
            Mnemonic::Bcs => "BCS",
            Mnemonic::Beq => "BEQ",
            Mnemonic::Bit => "BIT",
            Mnemonic::Bmi => "BMI",
            Mnemonic::Bne => "BNE",
            Mnemonic::Bpl => "BPL",
            Mnemonic::Brk => "BRK",
            Mnemonic::Bvc => "BVC",
            Mnemonic::Bvs => "BVS",
            Mnemonic::Clc => "CLC",
            Mnemonic::Cld => "CLD",
            Mnemonic::Cli => "CLI",
            Mnemonic::Clv => "CLV",
            Mnemonic::Cmp => "CMP",
            Mnemonic::Cpx => "CPX",
            Mnemonic::Cpy => "CPY",
            Mnemonic::Dcp => "DCP",
            Mnemonic::Dec => "DEC",
            Mnemonic::Dex => "DEX",
            Mnemonic::Dey => "DEY",
            Mnemonic::Eor => "EOR",
            Mnemonic::Inc => "INC",
            Mnemonic::Inx => "INX",
            Mnemonic::Iny => "INY",
            Mnemonic::Isb => "ISB",
            Mnemonic::Jam => "JAM",
            Mnemonic::Jmp => "JMP",
            Mnemonic::Jsr => "JSR",
            Mnemonic::Las => "LAS",
            Mnemonic::Lax => "LAX",
            Mnemonic::Lda => "LDA",
            Mnemonic::Ldx => "LDX",
            Mnemonic::Ldy => "LDY",
            Mnemonic::Lsr => "LSR",
            Mnemonic::Lxa => "LXA",
            Mnemonic::Nop => "NOP",
            Mnemonic::Ora => "ORA",
            Mnemonic::Pha => "PHA",
            Mnemonic::Php => "PHP",
            Mnemonic::Pla => "PLA",
            Mnemonic::Plp => "PLP",
            Mnemonic::Rla => "RLA",
            Mnemonic::Rol => "ROL",
            Mnemonic::Ror => "ROR",
            Mnemonic::Rra => "RRA",
            Mnemonic::Rti => "RTI",
            Mnemonic::Rts => "RTS",
            Mnemonic::Sax => "SAX",
            Mnemonic::Sbc => "SBC",
            Mnemonic::Sbx => "SBX",
            Mnemonic::Sec => "SEC",
            Mnemonic::Sed => "SED",
            Mnemonic::Sei => "SEI",
            Mnemonic::Sha => "SHA",
            Mnemonic::Shx => "SHX",
            Mnemonic::Shy => "SHY",
            Mnemonic::Slo => "SLO",
            Mnemonic::Sre => "SRE",
            Mnemonic::Sta => "STA",
            Mnemonic::Stx => "STX",
            Mnemonic::Sty => "STY",
            Mnemonic::Tas => "TAS",
            Mnemonic::Tax => "TAX",
            Mnemonic::Tay => "TAY",
            Mnemonic::Tsx => "TSX",
            Mnemonic::Txa => "TXA",
            Mnemonic::Txs => "TXS",
            Mnemonic::Tya => "TYA",
        }
    }
}

/// When an instruction takes more cycles than [`OpcodeInfo::cycles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraCycles {
    /// Never: the count is fixed.
    Never,
    /// One more when indexing carries into the next page (reads through `abs,X`, `abs,Y` and
    /// `(zp),Y`; writes and read-modify-writes always spend that cycle, so their count includes it).
    PageCross,
    /// One more when the branch is taken, and another when it lands on another page.
    Branch,
}

/// What an opcode is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// The instruction's mnemonic (official or unofficial).
    pub mnemonic: Mnemonic,
    /// Addressing mode.
    pub mode: Mode,
    /// Documented by MOS; unofficial opcodes are marked `*` in traces.
    pub official: bool,
    /// CPU cycles it takes at the least, dummy accesses included. For JAM, the cycles before the CPU
    /// locks up (each later step spends one).
    pub cycles: u8,
    /// When it takes more.
    pub extra_cycles: ExtraCycles,
}

const fn op(
    mnemonic: Mnemonic,
    mode: Mode,
    official: bool,
    cycles: u8,
    extra_cycles: ExtraCycles,
) -> OpcodeInfo {
    OpcodeInfo { mnemonic, mode, official, cycles, extra_cycles }
}

/// All 256 opcodes of the 2A03.
pub static OPCODES: [OpcodeInfo; 256] = [
    op(Mnemonic::Brk, Mode::Implied, true, 7, Never),        // 00
    op(Mnemonic::Ora, Mode::IndirectX, true, 6, Never),      // 01
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 02
    op(Mnemonic::Slo, Mode::IndirectX, false, 8, Never),     // 03
    op(Mnemonic::Nop, Mode::ZeroPage, false, 3, Never),      // 04
    op(Mnemonic::Ora, Mode::ZeroPage, true, 3, Never),       // 05
    op(Mnemonic::Asl, Mode::ZeroPage, true, 5, Never),       // 06
    op(Mnemonic::Slo, Mode::ZeroPage, false, 5, Never),      // 07
    op(Mnemonic::Php, Mode::Implied, true, 3, Never),        // 08
    op(Mnemonic::Ora, Mode::Immediate, true, 2, Never),      // 09
    op(Mnemonic::Asl, Mode::Accumulator, true, 2, Never),    // 0A
    op(Mnemonic::Anc, Mode::Immediate, false, 2, Never),     // 0B
    op(Mnemonic::Nop, Mode::Absolute, false, 4, Never),      // 0C
    op(Mnemonic::Ora, Mode::Absolute, true, 4, Never),       // 0D
    op(Mnemonic::Asl, Mode::Absolute, true, 6, Never),       // 0E
    op(Mnemonic::Slo, Mode::Absolute, false, 6, Never),      // 0F
    op(Mnemonic::Bpl, Mode::Relative, true, 2, Branch),      // 10
    op(Mnemonic::Ora, Mode::IndirectY, true, 5, PageCross),  // 11
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 12
    op(Mnemonic::Slo, Mode::IndirectY, false, 8, Never),     // 13
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // 14
    op(Mnemonic::Ora, Mode::ZeroPageX, true, 4, Never),      // 15
    op(Mnemonic::Asl, Mode::ZeroPageX, true, 6, Never),      // 16
    op(Mnemonic::Slo, Mode::ZeroPageX, false, 6, Never),     // 17
    op(Mnemonic::Clc, Mode::Implied, true, 2, Never),        // 18
    op(Mnemonic::Ora, Mode::AbsoluteY, true, 4, PageCross),  // 19
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // 1A
    op(Mnemonic::Slo, Mode::AbsoluteY, false, 7, Never),     // 1B
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // 1C
    op(Mnemonic::Ora, Mode::AbsoluteX, true, 4, PageCross),  // 1D
    op(Mnemonic::Asl, Mode::AbsoluteX, true, 7, Never),      // 1E
    op(Mnemonic::Slo, Mode::AbsoluteX, false, 7, Never),     // 1F
    op(Mnemonic::Jsr, Mode::Absolute, true, 6, Never),       // 20
    op(Mnemonic::And, Mode::IndirectX, true, 6, Never),      // 21
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 22
    op(Mnemonic::Rla, Mode::IndirectX, false, 8, Never),     // 23
    op(Mnemonic::Bit, Mode::ZeroPage, true, 3, Never),       // 24
    op(Mnemonic::And, Mode::ZeroPage, true, 3, Never),       // 25
    op(Mnemonic::Rol, Mode::ZeroPage, true, 5, Never),       // 26
    op(Mnemonic::Rla, Mode::ZeroPage, false, 5, Never),      // 27
    op(Mnemonic::Plp, Mode::Implied, true, 4, Never),        // 28
    op(Mnemonic::And, Mode::Immediate, true, 2, Never),      // 29
    op(Mnemonic::Rol, Mode::Accumulator, true, 2, Never),    // 2A
    op(Mnemonic::Anc, Mode::Immediate, false, 2, Never),     // 2B
    op(Mnemonic::Bit, Mode::Absolute, true, 4, Never),       // 2C
    op(Mnemonic::And, Mode::Absolute, true, 4, Never),       // 2D
    op(Mnemonic::Rol, Mode::Absolute, true, 6, Never),       // 2E
    op(Mnemonic::Rla, Mode::Absolute, false, 6, Never),      // 2F
    op(Mnemonic::Bmi, Mode::Relative, true, 2, Branch),      // 30
    op(Mnemonic::And, Mode::IndirectY, true, 5, PageCross),  // 31
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 32
    op(Mnemonic::Rla, Mode::IndirectY, false, 8, Never),     // 33
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // 34
    op(Mnemonic::And, Mode::ZeroPageX, true, 4, Never),      // 35
    op(Mnemonic::Rol, Mode::ZeroPageX, true, 6, Never),      // 36
    op(Mnemonic::Rla, Mode::ZeroPageX, false, 6, Never),     // 37
    op(Mnemonic::Sec, Mode::Implied, true, 2, Never),        // 38
    op(Mnemonic::And, Mode::AbsoluteY, true, 4, PageCross),  // 39
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // 3A
    op(Mnemonic::Rla, Mode::AbsoluteY, false, 7, Never),     // 3B
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // 3C
    op(Mnemonic::And, Mode::AbsoluteX, true, 4, PageCross),  // 3D
    op(Mnemonic::Rol, Mode::AbsoluteX, true, 7, Never),      // 3E
    op(Mnemonic::Rla, Mode::AbsoluteX, false, 7, Never),     // 3F
    op(Mnemonic::Rti, Mode::Implied, true, 6, Never),        // 40
    op(Mnemonic::Eor, Mode::IndirectX, true, 6, Never),      // 41
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 42
    op(Mnemonic::Sre, Mode::IndirectX, false, 8, Never),     // 43
    op(Mnemonic::Nop, Mode::ZeroPage, false, 3, Never),      // 44
    op(Mnemonic::Eor, Mode::ZeroPage, true, 3, Never),       // 45
    op(Mnemonic::Lsr, Mode::ZeroPage, true, 5, Never),       // 46
    op(Mnemonic::Sre, Mode::ZeroPage, false, 5, Never),      // 47
    op(Mnemonic::Pha, Mode::Implied, true, 3, Never),        // 48
    op(Mnemonic::Eor, Mode::Immediate, true, 2, Never),      // 49
    op(Mnemonic::Lsr, Mode::Accumulator, true, 2, Never),    // 4A
    op(Mnemonic::Alr, Mode::Immediate, false, 2, Never),     // 4B
    op(Mnemonic::Jmp, Mode::Absolute, true, 3, Never),       // 4C
    op(Mnemonic::Eor, Mode::Absolute, true, 4, Never),       // 4D
    op(Mnemonic::Lsr, Mode::Absolute, true, 6, Never),       // 4E
    op(Mnemonic::Sre, Mode::Absolute, false, 6, Never),      // 4F
    op(Mnemonic::Bvc, Mode::Relative, true, 2, Branch),      // 50
    op(Mnemonic::Eor, Mode::IndirectY, true, 5, PageCross),  // 51
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 52
    op(Mnemonic::Sre, Mode::IndirectY, false, 8, Never),     // 53
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // 54
    op(Mnemonic::Eor, Mode::ZeroPageX, true, 4, Never),      // 55
    op(Mnemonic::Lsr, Mode::ZeroPageX, true, 6, Never),      // 56
    op(Mnemonic::Sre, Mode::ZeroPageX, false, 6, Never),     // 57
    op(Mnemonic::Cli, Mode::Implied, true, 2, Never),        // 58
    op(Mnemonic::Eor, Mode::AbsoluteY, true, 4, PageCross),  // 59
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // 5A
    op(Mnemonic::Sre, Mode::AbsoluteY, false, 7, Never),     // 5B
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // 5C
    op(Mnemonic::Eor, Mode::AbsoluteX, true, 4, PageCross),  // 5D
    op(Mnemonic::Lsr, Mode::AbsoluteX, true, 7, Never),      // 5E
    op(Mnemonic::Sre, Mode::AbsoluteX, false, 7, Never),     // 5F
    op(Mnemonic::Rts, Mode::Implied, true, 6, Never),        // 60
    op(Mnemonic::Adc, Mode::IndirectX, true, 6, Never),      // 61
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 62
    op(Mnemonic::Rra, Mode::IndirectX, false, 8, Never),     // 63
    op(Mnemonic::Nop, Mode::ZeroPage, false, 3, Never),      // 64
    op(Mnemonic::Adc, Mode::ZeroPage, true, 3, Never),       // 65
    op(Mnemonic::Ror, Mode::ZeroPage, true, 5, Never),       // 66
    op(Mnemonic::Rra, Mode::ZeroPage, false, 5, Never),      // 67
    op(Mnemonic::Pla, Mode::Implied, true, 4, Never),        // 68
    op(Mnemonic::Adc, Mode::Immediate, true, 2, Never),      // 69
    op(Mnemonic::Ror, Mode::Accumulator, true, 2, Never),    // 6A
    op(Mnemonic::Arr, Mode::Immediate, false, 2, Never),     // 6B
    op(Mnemonic::Jmp, Mode::Indirect, true, 5, Never),       // 6C
    op(Mnemonic::Adc, Mode::Absolute, true, 4, Never),       // 6D
    op(Mnemonic::Ror, Mode::Absolute, true, 6, Never),       // 6E
    op(Mnemonic::Rra, Mode::Absolute, false, 6, Never),      // 6F
    op(Mnemonic::Bvs, Mode::Relative, true, 2, Branch),      // 70
    op(Mnemonic::Adc, Mode::IndirectY, true, 5, PageCross),  // 71
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 72
    op(Mnemonic::Rra, Mode::IndirectY, false, 8, Never),     // 73
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // 74
    op(Mnemonic::Adc, Mode::ZeroPageX, true, 4, Never),      // 75
    op(Mnemonic::Ror, Mode::ZeroPageX, true, 6, Never),      // 76
    op(Mnemonic::Rra, Mode::ZeroPageX, false, 6, Never),     // 77
    op(Mnemonic::Sei, Mode::Implied, true, 2, Never),        // 78
    op(Mnemonic::Adc, Mode::AbsoluteY, true, 4, PageCross),  // 79
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // 7A
    op(Mnemonic::Rra, Mode::AbsoluteY, false, 7, Never),     // 7B
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // 7C
    op(Mnemonic::Adc, Mode::AbsoluteX, true, 4, PageCross),  // 7D
    op(Mnemonic::Ror, Mode::AbsoluteX, true, 7, Never),      // 7E
    op(Mnemonic::Rra, Mode::AbsoluteX, false, 7, Never),     // 7F
    op(Mnemonic::Nop, Mode::Immediate, false, 2, Never),     // 80
    op(Mnemonic::Sta, Mode::IndirectX, true, 6, Never),      // 81
    op(Mnemonic::Nop, Mode::Immediate, false, 2, Never),     // 82
    op(Mnemonic::Sax, Mode::IndirectX, false, 6, Never),     // 83
    op(Mnemonic::Sty, Mode::ZeroPage, true, 3, Never),       // 84
    op(Mnemonic::Sta, Mode::ZeroPage, true, 3, Never),       // 85
    op(Mnemonic::Stx, Mode::ZeroPage, true, 3, Never),       // 86
    op(Mnemonic::Sax, Mode::ZeroPage, false, 3, Never),      // 87
    op(Mnemonic::Dey, Mode::Implied, true, 2, Never),        // 88
    op(Mnemonic::Nop, Mode::Immediate, false, 2, Never),     // 89
    op(Mnemonic::Txa, Mode::Implied, true, 2, Never),        // 8A
    op(Mnemonic::Ane, Mode::Immediate, false, 2, Never),     // 8B
    op(Mnemonic::Sty, Mode::Absolute, true, 4, Never),       // 8C
    op(Mnemonic::Sta, Mode::Absolute, true, 4, Never),       // 8D
    op(Mnemonic::Stx, Mode::Absolute, true, 4, Never),       // 8E
    op(Mnemonic::Sax, Mode::Absolute, false, 4, Never),      // 8F
    op(Mnemonic::Bcc, Mode::Relative, true, 2, Branch),      // 90
    op(Mnemonic::Sta, Mode::IndirectY, true, 6, Never),      // 91
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // 92
    op(Mnemonic::Sha, Mode::IndirectY, false, 6, Never),     // 93
    op(Mnemonic::Sty, Mode::ZeroPageX, true, 4, Never),      // 94
    op(Mnemonic::Sta, Mode::ZeroPageX, true, 4, Never),      // 95
    op(Mnemonic::Stx, Mode::ZeroPageY, true, 4, Never),      // 96
    op(Mnemonic::Sax, Mode::ZeroPageY, false, 4, Never),     // 97
    op(Mnemonic::Tya, Mode::Implied, true, 2, Never),        // 98
    op(Mnemonic::Sta, Mode::AbsoluteY, true, 5, Never),      // 99
    op(Mnemonic::Txs, Mode::Implied, true, 2, Never),        // 9A
    op(Mnemonic::Tas, Mode::AbsoluteY, false, 5, Never),     // 9B
    op(Mnemonic::Shy, Mode::AbsoluteX, false, 5, Never),     // 9C
    op(Mnemonic::Sta, Mode::AbsoluteX, true, 5, Never),      // 9D
    op(Mnemonic::Shx, Mode::AbsoluteY, false, 5, Never),     // 9E
    op(Mnemonic::Sha, Mode::AbsoluteY, false, 5, Never),     // 9F
    op(Mnemonic::Ldy, Mode::Immediate, true, 2, Never),      // A0
    op(Mnemonic::Lda, Mode::IndirectX, true, 6, Never),      // A1
    op(Mnemonic::Ldx, Mode::Immediate, true, 2, Never),      // A2
    op(Mnemonic::Lax, Mode::IndirectX, false, 6, Never),     // A3
    op(Mnemonic::Ldy, Mode::ZeroPage, true, 3, Never),       // A4
    op(Mnemonic::Lda, Mode::ZeroPage, true, 3, Never),       // A5
    op(Mnemonic::Ldx, Mode::ZeroPage, true, 3, Never),       // A6
    op(Mnemonic::Lax, Mode::ZeroPage, false, 3, Never),      // A7
    op(Mnemonic::Tay, Mode::Implied, true, 2, Never),        // A8
    op(Mnemonic::Lda, Mode::Immediate, true, 2, Never),      // A9
    op(Mnemonic::Tax, Mode::Implied, true, 2, Never),        // AA
    op(Mnemonic::Lxa, Mode::Immediate, false, 2, Never),     // AB
    op(Mnemonic::Ldy, Mode::Absolute, true, 4, Never),       // AC
    op(Mnemonic::Lda, Mode::Absolute, true, 4, Never),       // AD
    op(Mnemonic::Ldx, Mode::Absolute, true, 4, Never),       // AE
    op(Mnemonic::Lax, Mode::Absolute, false, 4, Never),      // AF
    op(Mnemonic::Bcs, Mode::Relative, true, 2, Branch),      // B0
    op(Mnemonic::Lda, Mode::IndirectY, true, 5, PageCross),  // B1
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // B2
    op(Mnemonic::Lax, Mode::IndirectY, false, 5, PageCross), // B3
    op(Mnemonic::Ldy, Mode::ZeroPageX, true, 4, Never),      // B4
    op(Mnemonic::Lda, Mode::ZeroPageX, true, 4, Never),      // B5
    op(Mnemonic::Ldx, Mode::ZeroPageY, true, 4, Never),      // B6
    op(Mnemonic::Lax, Mode::ZeroPageY, false, 4, Never),     // B7
    op(Mnemonic::Clv, Mode::Implied, true, 2, Never),        // B8
    op(Mnemonic::Lda, Mode::AbsoluteY, true, 4, PageCross),  // B9
    op(Mnemonic::Tsx, Mode::Implied, true, 2, Never),        // BA
    op(Mnemonic::Las, Mode::AbsoluteY, false, 4, PageCross), // BB
    op(Mnemonic::Ldy, Mode::AbsoluteX, true, 4, PageCross),  // BC
    op(Mnemonic::Lda, Mode::AbsoluteX, true, 4, PageCross),  // BD
    op(Mnemonic::Ldx, Mode::AbsoluteY, true, 4, PageCross),  // BE
    op(Mnemonic::Lax, Mode::AbsoluteY, false, 4, PageCross), // BF
    op(Mnemonic::Cpy, Mode::Immediate, true, 2, Never),      // C0
    op(Mnemonic::Cmp, Mode::IndirectX, true, 6, Never),      // C1
    op(Mnemonic::Nop, Mode::Immediate, false, 2, Never),     // C2
    op(Mnemonic::Dcp, Mode::IndirectX, false, 8, Never),     // C3
    op(Mnemonic::Cpy, Mode::ZeroPage, true, 3, Never),       // C4
    op(Mnemonic::Cmp, Mode::ZeroPage, true, 3, Never),       // C5
    op(Mnemonic::Dec, Mode::ZeroPage, true, 5, Never),       // C6
    op(Mnemonic::Dcp, Mode::ZeroPage, false, 5, Never),      // C7
    op(Mnemonic::Iny, Mode::Implied, true, 2, Never),        // C8
    op(Mnemonic::Cmp, Mode::Immediate, true, 2, Never),      // C9
    op(Mnemonic::Dex, Mode::Implied, true, 2, Never),        // CA
    op(Mnemonic::Sbx, Mode::Immediate, false, 2, Never),     // CB
    op(Mnemonic::Cpy, Mode::Absolute, true, 4, Never),       // CC
    op(Mnemonic::Cmp, Mode::Absolute, true, 4, Never),       // CD
    op(Mnemonic::Dec, Mode::Absolute, true, 6, Never),       // CE
    op(Mnemonic::Dcp, Mode::Absolute, false, 6, Never),      // CF
    op(Mnemonic::Bne, Mode::Relative, true, 2, Branch),      // D0
    op(Mnemonic::Cmp, Mode::IndirectY, true, 5, PageCross),  // D1
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // D2
    op(Mnemonic::Dcp, Mode::IndirectY, false, 8, Never),     // D3
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // D4
    op(Mnemonic::Cmp, Mode::ZeroPageX, true, 4, Never),      // D5
    op(Mnemonic::Dec, Mode::ZeroPageX, true, 6, Never),      // D6
    op(Mnemonic::Dcp, Mode::ZeroPageX, false, 6, Never),     // D7
    op(Mnemonic::Cld, Mode::Implied, true, 2, Never),        // D8
    op(Mnemonic::Cmp, Mode::AbsoluteY, true, 4, PageCross),  // D9
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // DA
    op(Mnemonic::Dcp, Mode::AbsoluteY, false, 7, Never),     // DB
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // DC
    op(Mnemonic::Cmp, Mode::AbsoluteX, true, 4, PageCross),  // DD
    op(Mnemonic::Dec, Mode::AbsoluteX, true, 7, Never),      // DE
    op(Mnemonic::Dcp, Mode::AbsoluteX, false, 7, Never),     // DF
    op(Mnemonic::Cpx, Mode::Immediate, true, 2, Never),      // E0
    op(Mnemonic::Sbc, Mode::IndirectX, true, 6, Never),      // E1
    op(Mnemonic::Nop, Mode::Immediate, false, 2, Never),     // E2
    op(Mnemonic::Isb, Mode::IndirectX, false, 8, Never),     // E3
    op(Mnemonic::Cpx, Mode::ZeroPage, true, 3, Never),       // E4
    op(Mnemonic::Sbc, Mode::ZeroPage, true, 3, Never),       // E5
    op(Mnemonic::Inc, Mode::ZeroPage, true, 5, Never),       // E6
    op(Mnemonic::Isb, Mode::ZeroPage, false, 5, Never),      // E7
    op(Mnemonic::Inx, Mode::Implied, true, 2, Never),        // E8
    op(Mnemonic::Sbc, Mode::Immediate, true, 2, Never),      // E9
    op(Mnemonic::Nop, Mode::Implied, true, 2, Never),        // EA
    op(Mnemonic::Sbc, Mode::Immediate, false, 2, Never),     // EB
    op(Mnemonic::Cpx, Mode::Absolute, true, 4, Never),       // EC
    op(Mnemonic::Sbc, Mode::Absolute, true, 4, Never),       // ED
    op(Mnemonic::Inc, Mode::Absolute, true, 6, Never),       // EE
    op(Mnemonic::Isb, Mode::Absolute, false, 6, Never),      // EF
    op(Mnemonic::Beq, Mode::Relative, true, 2, Branch),      // F0
    op(Mnemonic::Sbc, Mode::IndirectY, true, 5, PageCross),  // F1
    op(Mnemonic::Jam, Mode::Implied, false, 2, Never),       // F2
    op(Mnemonic::Isb, Mode::IndirectY, false, 8, Never),     // F3
    op(Mnemonic::Nop, Mode::ZeroPageX, false, 4, Never),     // F4
    op(Mnemonic::Sbc, Mode::ZeroPageX, true, 4, Never),      // F5
    op(Mnemonic::Inc, Mode::ZeroPageX, true, 6, Never),      // F6
    op(Mnemonic::Isb, Mode::ZeroPageX, false, 6, Never),     // F7
    op(Mnemonic::Sed, Mode::Implied, true, 2, Never),        // F8
    op(Mnemonic::Sbc, Mode::AbsoluteY, true, 4, PageCross),  // F9
    op(Mnemonic::Nop, Mode::Implied, false, 2, Never),       // FA
    op(Mnemonic::Isb, Mode::AbsoluteY, false, 7, Never),     // FB
    op(Mnemonic::Nop, Mode::AbsoluteX, false, 4, PageCross), // FC
    op(Mnemonic::Sbc, Mode::AbsoluteX, true, 4, PageCross),  // FD
    op(Mnemonic::Inc, Mode::AbsoluteX, true, 7, Never),      // FE
    op(Mnemonic::Isb, Mode::AbsoluteX, false, 7, Never),     // FF
];
