//! The 2A03 opcode table: all 256 opcodes, official and unofficial.

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

/// What an opcode is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// Instruction.
    pub mnemonic: Mnemonic,
    /// Addressing mode.
    pub mode: Mode,
    /// Documented by MOS; unofficial opcodes are marked `*` in traces.
    pub official: bool,
}

const fn op(mnemonic: Mnemonic, mode: Mode, official: bool) -> OpcodeInfo {
    OpcodeInfo { mnemonic, mode, official }
}

/// All 256 opcodes of the 2A03.
pub static OPCODES: [OpcodeInfo; 256] = [
    op(Mnemonic::Brk, Mode::Implied, true),     // 00
    op(Mnemonic::Ora, Mode::IndirectX, true),   // 01
    op(Mnemonic::Jam, Mode::Implied, false),    // 02
    op(Mnemonic::Slo, Mode::IndirectX, false),  // 03
    op(Mnemonic::Nop, Mode::ZeroPage, false),   // 04
    op(Mnemonic::Ora, Mode::ZeroPage, true),    // 05
    op(Mnemonic::Asl, Mode::ZeroPage, true),    // 06
    op(Mnemonic::Slo, Mode::ZeroPage, false),   // 07
    op(Mnemonic::Php, Mode::Implied, true),     // 08
    op(Mnemonic::Ora, Mode::Immediate, true),   // 09
    op(Mnemonic::Asl, Mode::Accumulator, true), // 0A
    op(Mnemonic::Anc, Mode::Immediate, false),  // 0B
    op(Mnemonic::Nop, Mode::Absolute, false),   // 0C
    op(Mnemonic::Ora, Mode::Absolute, true),    // 0D
    op(Mnemonic::Asl, Mode::Absolute, true),    // 0E
    op(Mnemonic::Slo, Mode::Absolute, false),   // 0F
    op(Mnemonic::Bpl, Mode::Relative, true),    // 10
    op(Mnemonic::Ora, Mode::IndirectY, true),   // 11
    op(Mnemonic::Jam, Mode::Implied, false),    // 12
    op(Mnemonic::Slo, Mode::IndirectY, false),  // 13
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // 14
    op(Mnemonic::Ora, Mode::ZeroPageX, true),   // 15
    op(Mnemonic::Asl, Mode::ZeroPageX, true),   // 16
    op(Mnemonic::Slo, Mode::ZeroPageX, false),  // 17
    op(Mnemonic::Clc, Mode::Implied, true),     // 18
    op(Mnemonic::Ora, Mode::AbsoluteY, true),   // 19
    op(Mnemonic::Nop, Mode::Implied, false),    // 1A
    op(Mnemonic::Slo, Mode::AbsoluteY, false),  // 1B
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // 1C
    op(Mnemonic::Ora, Mode::AbsoluteX, true),   // 1D
    op(Mnemonic::Asl, Mode::AbsoluteX, true),   // 1E
    op(Mnemonic::Slo, Mode::AbsoluteX, false),  // 1F
    op(Mnemonic::Jsr, Mode::Absolute, true),    // 20
    op(Mnemonic::And, Mode::IndirectX, true),   // 21
    op(Mnemonic::Jam, Mode::Implied, false),    // 22
    op(Mnemonic::Rla, Mode::IndirectX, false),  // 23
    op(Mnemonic::Bit, Mode::ZeroPage, true),    // 24
    op(Mnemonic::And, Mode::ZeroPage, true),    // 25
    op(Mnemonic::Rol, Mode::ZeroPage, true),    // 26
    op(Mnemonic::Rla, Mode::ZeroPage, false),   // 27
    op(Mnemonic::Plp, Mode::Implied, true),     // 28
    op(Mnemonic::And, Mode::Immediate, true),   // 29
    op(Mnemonic::Rol, Mode::Accumulator, true), // 2A
    op(Mnemonic::Anc, Mode::Immediate, false),  // 2B
    op(Mnemonic::Bit, Mode::Absolute, true),    // 2C
    op(Mnemonic::And, Mode::Absolute, true),    // 2D
    op(Mnemonic::Rol, Mode::Absolute, true),    // 2E
    op(Mnemonic::Rla, Mode::Absolute, false),   // 2F
    op(Mnemonic::Bmi, Mode::Relative, true),    // 30
    op(Mnemonic::And, Mode::IndirectY, true),   // 31
    op(Mnemonic::Jam, Mode::Implied, false),    // 32
    op(Mnemonic::Rla, Mode::IndirectY, false),  // 33
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // 34
    op(Mnemonic::And, Mode::ZeroPageX, true),   // 35
    op(Mnemonic::Rol, Mode::ZeroPageX, true),   // 36
    op(Mnemonic::Rla, Mode::ZeroPageX, false),  // 37
    op(Mnemonic::Sec, Mode::Implied, true),     // 38
    op(Mnemonic::And, Mode::AbsoluteY, true),   // 39
    op(Mnemonic::Nop, Mode::Implied, false),    // 3A
    op(Mnemonic::Rla, Mode::AbsoluteY, false),  // 3B
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // 3C
    op(Mnemonic::And, Mode::AbsoluteX, true),   // 3D
    op(Mnemonic::Rol, Mode::AbsoluteX, true),   // 3E
    op(Mnemonic::Rla, Mode::AbsoluteX, false),  // 3F
    op(Mnemonic::Rti, Mode::Implied, true),     // 40
    op(Mnemonic::Eor, Mode::IndirectX, true),   // 41
    op(Mnemonic::Jam, Mode::Implied, false),    // 42
    op(Mnemonic::Sre, Mode::IndirectX, false),  // 43
    op(Mnemonic::Nop, Mode::ZeroPage, false),   // 44
    op(Mnemonic::Eor, Mode::ZeroPage, true),    // 45
    op(Mnemonic::Lsr, Mode::ZeroPage, true),    // 46
    op(Mnemonic::Sre, Mode::ZeroPage, false),   // 47
    op(Mnemonic::Pha, Mode::Implied, true),     // 48
    op(Mnemonic::Eor, Mode::Immediate, true),   // 49
    op(Mnemonic::Lsr, Mode::Accumulator, true), // 4A
    op(Mnemonic::Alr, Mode::Immediate, false),  // 4B
    op(Mnemonic::Jmp, Mode::Absolute, true),    // 4C
    op(Mnemonic::Eor, Mode::Absolute, true),    // 4D
    op(Mnemonic::Lsr, Mode::Absolute, true),    // 4E
    op(Mnemonic::Sre, Mode::Absolute, false),   // 4F
    op(Mnemonic::Bvc, Mode::Relative, true),    // 50
    op(Mnemonic::Eor, Mode::IndirectY, true),   // 51
    op(Mnemonic::Jam, Mode::Implied, false),    // 52
    op(Mnemonic::Sre, Mode::IndirectY, false),  // 53
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // 54
    op(Mnemonic::Eor, Mode::ZeroPageX, true),   // 55
    op(Mnemonic::Lsr, Mode::ZeroPageX, true),   // 56
    op(Mnemonic::Sre, Mode::ZeroPageX, false),  // 57
    op(Mnemonic::Cli, Mode::Implied, true),     // 58
    op(Mnemonic::Eor, Mode::AbsoluteY, true),   // 59
    op(Mnemonic::Nop, Mode::Implied, false),    // 5A
    op(Mnemonic::Sre, Mode::AbsoluteY, false),  // 5B
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // 5C
    op(Mnemonic::Eor, Mode::AbsoluteX, true),   // 5D
    op(Mnemonic::Lsr, Mode::AbsoluteX, true),   // 5E
    op(Mnemonic::Sre, Mode::AbsoluteX, false),  // 5F
    op(Mnemonic::Rts, Mode::Implied, true),     // 60
    op(Mnemonic::Adc, Mode::IndirectX, true),   // 61
    op(Mnemonic::Jam, Mode::Implied, false),    // 62
    op(Mnemonic::Rra, Mode::IndirectX, false),  // 63
    op(Mnemonic::Nop, Mode::ZeroPage, false),   // 64
    op(Mnemonic::Adc, Mode::ZeroPage, true),    // 65
    op(Mnemonic::Ror, Mode::ZeroPage, true),    // 66
    op(Mnemonic::Rra, Mode::ZeroPage, false),   // 67
    op(Mnemonic::Pla, Mode::Implied, true),     // 68
    op(Mnemonic::Adc, Mode::Immediate, true),   // 69
    op(Mnemonic::Ror, Mode::Accumulator, true), // 6A
    op(Mnemonic::Arr, Mode::Immediate, false),  // 6B
    op(Mnemonic::Jmp, Mode::Indirect, true),    // 6C
    op(Mnemonic::Adc, Mode::Absolute, true),    // 6D
    op(Mnemonic::Ror, Mode::Absolute, true),    // 6E
    op(Mnemonic::Rra, Mode::Absolute, false),   // 6F
    op(Mnemonic::Bvs, Mode::Relative, true),    // 70
    op(Mnemonic::Adc, Mode::IndirectY, true),   // 71
    op(Mnemonic::Jam, Mode::Implied, false),    // 72
    op(Mnemonic::Rra, Mode::IndirectY, false),  // 73
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // 74
    op(Mnemonic::Adc, Mode::ZeroPageX, true),   // 75
    op(Mnemonic::Ror, Mode::ZeroPageX, true),   // 76
    op(Mnemonic::Rra, Mode::ZeroPageX, false),  // 77
    op(Mnemonic::Sei, Mode::Implied, true),     // 78
    op(Mnemonic::Adc, Mode::AbsoluteY, true),   // 79
    op(Mnemonic::Nop, Mode::Implied, false),    // 7A
    op(Mnemonic::Rra, Mode::AbsoluteY, false),  // 7B
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // 7C
    op(Mnemonic::Adc, Mode::AbsoluteX, true),   // 7D
    op(Mnemonic::Ror, Mode::AbsoluteX, true),   // 7E
    op(Mnemonic::Rra, Mode::AbsoluteX, false),  // 7F
    op(Mnemonic::Nop, Mode::Immediate, false),  // 80
    op(Mnemonic::Sta, Mode::IndirectX, true),   // 81
    op(Mnemonic::Nop, Mode::Immediate, false),  // 82
    op(Mnemonic::Sax, Mode::IndirectX, false),  // 83
    op(Mnemonic::Sty, Mode::ZeroPage, true),    // 84
    op(Mnemonic::Sta, Mode::ZeroPage, true),    // 85
    op(Mnemonic::Stx, Mode::ZeroPage, true),    // 86
    op(Mnemonic::Sax, Mode::ZeroPage, false),   // 87
    op(Mnemonic::Dey, Mode::Implied, true),     // 88
    op(Mnemonic::Nop, Mode::Immediate, false),  // 89
    op(Mnemonic::Txa, Mode::Implied, true),     // 8A
    op(Mnemonic::Ane, Mode::Immediate, false),  // 8B
    op(Mnemonic::Sty, Mode::Absolute, true),    // 8C
    op(Mnemonic::Sta, Mode::Absolute, true),    // 8D
    op(Mnemonic::Stx, Mode::Absolute, true),    // 8E
    op(Mnemonic::Sax, Mode::Absolute, false),   // 8F
    op(Mnemonic::Bcc, Mode::Relative, true),    // 90
    op(Mnemonic::Sta, Mode::IndirectY, true),   // 91
    op(Mnemonic::Jam, Mode::Implied, false),    // 92
    op(Mnemonic::Sha, Mode::IndirectY, false),  // 93
    op(Mnemonic::Sty, Mode::ZeroPageX, true),   // 94
    op(Mnemonic::Sta, Mode::ZeroPageX, true),   // 95
    op(Mnemonic::Stx, Mode::ZeroPageY, true),   // 96
    op(Mnemonic::Sax, Mode::ZeroPageY, false),  // 97
    op(Mnemonic::Tya, Mode::Implied, true),     // 98
    op(Mnemonic::Sta, Mode::AbsoluteY, true),   // 99
    op(Mnemonic::Txs, Mode::Implied, true),     // 9A
    op(Mnemonic::Tas, Mode::AbsoluteY, false),  // 9B
    op(Mnemonic::Shy, Mode::AbsoluteX, false),  // 9C
    op(Mnemonic::Sta, Mode::AbsoluteX, true),   // 9D
    op(Mnemonic::Shx, Mode::AbsoluteY, false),  // 9E
    op(Mnemonic::Sha, Mode::AbsoluteY, false),  // 9F
    op(Mnemonic::Ldy, Mode::Immediate, true),   // A0
    op(Mnemonic::Lda, Mode::IndirectX, true),   // A1
    op(Mnemonic::Ldx, Mode::Immediate, true),   // A2
    op(Mnemonic::Lax, Mode::IndirectX, false),  // A3
    op(Mnemonic::Ldy, Mode::ZeroPage, true),    // A4
    op(Mnemonic::Lda, Mode::ZeroPage, true),    // A5
    op(Mnemonic::Ldx, Mode::ZeroPage, true),    // A6
    op(Mnemonic::Lax, Mode::ZeroPage, false),   // A7
    op(Mnemonic::Tay, Mode::Implied, true),     // A8
    op(Mnemonic::Lda, Mode::Immediate, true),   // A9
    op(Mnemonic::Tax, Mode::Implied, true),     // AA
    op(Mnemonic::Lxa, Mode::Immediate, false),  // AB
    op(Mnemonic::Ldy, Mode::Absolute, true),    // AC
    op(Mnemonic::Lda, Mode::Absolute, true),    // AD
    op(Mnemonic::Ldx, Mode::Absolute, true),    // AE
    op(Mnemonic::Lax, Mode::Absolute, false),   // AF
    op(Mnemonic::Bcs, Mode::Relative, true),    // B0
    op(Mnemonic::Lda, Mode::IndirectY, true),   // B1
    op(Mnemonic::Jam, Mode::Implied, false),    // B2
    op(Mnemonic::Lax, Mode::IndirectY, false),  // B3
    op(Mnemonic::Ldy, Mode::ZeroPageX, true),   // B4
    op(Mnemonic::Lda, Mode::ZeroPageX, true),   // B5
    op(Mnemonic::Ldx, Mode::ZeroPageY, true),   // B6
    op(Mnemonic::Lax, Mode::ZeroPageY, false),  // B7
    op(Mnemonic::Clv, Mode::Implied, true),     // B8
    op(Mnemonic::Lda, Mode::AbsoluteY, true),   // B9
    op(Mnemonic::Tsx, Mode::Implied, true),     // BA
    op(Mnemonic::Las, Mode::AbsoluteY, false),  // BB
    op(Mnemonic::Ldy, Mode::AbsoluteX, true),   // BC
    op(Mnemonic::Lda, Mode::AbsoluteX, true),   // BD
    op(Mnemonic::Ldx, Mode::AbsoluteY, true),   // BE
    op(Mnemonic::Lax, Mode::AbsoluteY, false),  // BF
    op(Mnemonic::Cpy, Mode::Immediate, true),   // C0
    op(Mnemonic::Cmp, Mode::IndirectX, true),   // C1
    op(Mnemonic::Nop, Mode::Immediate, false),  // C2
    op(Mnemonic::Dcp, Mode::IndirectX, false),  // C3
    op(Mnemonic::Cpy, Mode::ZeroPage, true),    // C4
    op(Mnemonic::Cmp, Mode::ZeroPage, true),    // C5
    op(Mnemonic::Dec, Mode::ZeroPage, true),    // C6
    op(Mnemonic::Dcp, Mode::ZeroPage, false),   // C7
    op(Mnemonic::Iny, Mode::Implied, true),     // C8
    op(Mnemonic::Cmp, Mode::Immediate, true),   // C9
    op(Mnemonic::Dex, Mode::Implied, true),     // CA
    op(Mnemonic::Sbx, Mode::Immediate, false),  // CB
    op(Mnemonic::Cpy, Mode::Absolute, true),    // CC
    op(Mnemonic::Cmp, Mode::Absolute, true),    // CD
    op(Mnemonic::Dec, Mode::Absolute, true),    // CE
    op(Mnemonic::Dcp, Mode::Absolute, false),   // CF
    op(Mnemonic::Bne, Mode::Relative, true),    // D0
    op(Mnemonic::Cmp, Mode::IndirectY, true),   // D1
    op(Mnemonic::Jam, Mode::Implied, false),    // D2
    op(Mnemonic::Dcp, Mode::IndirectY, false),  // D3
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // D4
    op(Mnemonic::Cmp, Mode::ZeroPageX, true),   // D5
    op(Mnemonic::Dec, Mode::ZeroPageX, true),   // D6
    op(Mnemonic::Dcp, Mode::ZeroPageX, false),  // D7
    op(Mnemonic::Cld, Mode::Implied, true),     // D8
    op(Mnemonic::Cmp, Mode::AbsoluteY, true),   // D9
    op(Mnemonic::Nop, Mode::Implied, false),    // DA
    op(Mnemonic::Dcp, Mode::AbsoluteY, false),  // DB
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // DC
    op(Mnemonic::Cmp, Mode::AbsoluteX, true),   // DD
    op(Mnemonic::Dec, Mode::AbsoluteX, true),   // DE
    op(Mnemonic::Dcp, Mode::AbsoluteX, false),  // DF
    op(Mnemonic::Cpx, Mode::Immediate, true),   // E0
    op(Mnemonic::Sbc, Mode::IndirectX, true),   // E1
    op(Mnemonic::Nop, Mode::Immediate, false),  // E2
    op(Mnemonic::Isb, Mode::IndirectX, false),  // E3
    op(Mnemonic::Cpx, Mode::ZeroPage, true),    // E4
    op(Mnemonic::Sbc, Mode::ZeroPage, true),    // E5
    op(Mnemonic::Inc, Mode::ZeroPage, true),    // E6
    op(Mnemonic::Isb, Mode::ZeroPage, false),   // E7
    op(Mnemonic::Inx, Mode::Implied, true),     // E8
    op(Mnemonic::Sbc, Mode::Immediate, true),   // E9
    op(Mnemonic::Nop, Mode::Implied, true),     // EA
    op(Mnemonic::Sbc, Mode::Immediate, false),  // EB
    op(Mnemonic::Cpx, Mode::Absolute, true),    // EC
    op(Mnemonic::Sbc, Mode::Absolute, true),    // ED
    op(Mnemonic::Inc, Mode::Absolute, true),    // EE
    op(Mnemonic::Isb, Mode::Absolute, false),   // EF
    op(Mnemonic::Beq, Mode::Relative, true),    // F0
    op(Mnemonic::Sbc, Mode::IndirectY, true),   // F1
    op(Mnemonic::Jam, Mode::Implied, false),    // F2
    op(Mnemonic::Isb, Mode::IndirectY, false),  // F3
    op(Mnemonic::Nop, Mode::ZeroPageX, false),  // F4
    op(Mnemonic::Sbc, Mode::ZeroPageX, true),   // F5
    op(Mnemonic::Inc, Mode::ZeroPageX, true),   // F6
    op(Mnemonic::Isb, Mode::ZeroPageX, false),  // F7
    op(Mnemonic::Sed, Mode::Implied, true),     // F8
    op(Mnemonic::Sbc, Mode::AbsoluteY, true),   // F9
    op(Mnemonic::Nop, Mode::Implied, false),    // FA
    op(Mnemonic::Isb, Mode::AbsoluteY, false),  // FB
    op(Mnemonic::Nop, Mode::AbsoluteX, false),  // FC
    op(Mnemonic::Sbc, Mode::AbsoluteX, true),   // FD
    op(Mnemonic::Inc, Mode::AbsoluteX, true),   // FE
    op(Mnemonic::Isb, Mode::AbsoluteX, false),  // FF
];
