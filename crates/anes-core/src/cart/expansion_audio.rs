//! The path by which a board's sound chip reaches the console's audio output.
//!
//! A chip is emulated state of its board (integers in the board's Pod state, so hashed and
//! snapshotted with the mapper section) and runs on CPU cycles like the board's other counters: lazily,
//! caught up in closed form at the board's register writes and at the console's catch-up points. Its
//! analog side is two numbers: [`ExpansionChip`], which names the chip's DAC scale, and the DAC's
//! integer level now (`Board::expansion_level`). While audio output is on, the cartridge runs the
//! board every CPU cycle before the APU's tick of that cycle, and the console hands the level to the
//! APU's output stage, which adds it, times the chip's gain (`apu::mixer::expansion_gain`), to the
//! APU's nonlinear mix. With output off nothing of this runs per cycle. A new chip adds a variant
//! here with its gain from the nesdev wiki, and answers `Board::expansion_chip` and
//! `Board::expansion_level`.

/// An expansion sound chip on a board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpansionChip {
    /// Konami VRC6: two pulses (0-15 each) and a sawtooth (0-31) summed by a linear 6-bit DAC (0-61).
    Vrc6,
    /// Konami VRC7: six two-operator FM channels, each up to +/-4096, summed (+/-24,576).
    Vrc7,
    /// Nintendo MMC5: two pulses (0-15 each) and an 8-bit PCM DAC, summed linearly, the level in
    /// quarter PCM steps (a pulse step is 9, a PCM step 4: 0-1290).
    Mmc5,
    /// Sunsoft 5B: three channels on a logarithmic DAC, summed (0-24573, `m069_sunsoft5b_audio.rs`).
    Sunsoft5B,
    /// Namco 163: up to eight wavetable channels, time-multiplexed on one DAC (-120 to 105), mixed at
    /// the level of the board's mixing resistor.
    Namco163(Namco163Mix),
}

/// How much louder than the APU a Namco 163 board mixes its sound: the NES 2.0 submapper's
/// resistor (nesdev "INES Mapper 019", submapper table), at the middle of each measured range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namco163Mix {
    /// Submapper 3 (11.0-13.0 dB), and submapper 0, which leaves it unspecified.
    Db12,
    /// Submapper 4 (16.0-17.0 dB).
    Db16_5,
    /// Submapper 5 (18.0-19.5 dB).
    Db18_75,
}

impl Namco163Mix {
    /// The level in hundredths of a decibel.
    pub fn decibels_x100(self) -> i32 {
        match self {
            Namco163Mix::Db12 => 1200,
            Namco163Mix::Db16_5 => 1650,
            Namco163Mix::Db18_75 => 1875,
        }
    }
}
