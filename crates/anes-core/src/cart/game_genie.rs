//! The Game Genie: a pass-through device between the cartridge and the console that replaces the byte
//! a CPU read of $8000-$FFFF returns at chosen addresses, optionally only when the cartridge drives a
//! chosen byte there (the compare value, which picks one bank of a bank-switched ROM).
//!
//! Codes are six or eight letters of `APZLGITYEOXUKSVN` (values 0-15) whose bits are a scrambled
//! 15-bit address, a data byte and, for eight letters, a compare byte (nesdev "Game Genie").
//!
//! Determinism: the codes change what the CPU reads, so they are part of what a machine is. They are
//! folded into the machine's ROM identity ([`crate::Nes::rom_identity`]), which the state hash and
//! snapshot headers carry: two machines with different codes never hash alike, and a snapshot taken
//! with one set of codes is refused by a machine running another.

use thiserror::Error;

/// The sixteen letters, in value order.
const LETTERS: [u8; 16] = *b"APZLGITYEOXUKSVN";

/// The most codes one machine holds at once. The device itself takes three; frontends pass more.
pub const MAX_GAME_GENIE_CODES: usize = 16;

/// One decoded code: at CPU address `address` ($8000-$FFFF) a read returns `value`, when `compare`
/// is `None` or equals the byte the cartridge drives there.
///
/// ```
/// use anes_core::cart::GameGenieCode;
/// // Super Mario Bros.: SXIOPO, the published infinite-lives code.
/// let code: GameGenieCode = "SXIOPO".parse()?;
/// assert_eq!((code.address, code.value, code.compare), (0x91D9, 0xAD, None));
/// assert_eq!(code.to_string(), "SXIOPO");
/// # Ok::<(), anes_core::cart::GameGenieError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GameGenieCode {
    /// CPU address, $8000-$FFFF.
    pub address: u16,
    /// The byte the CPU reads instead.
    pub value: u8,
    /// Replace only when the cartridge drives this byte (eight-letter codes).
    pub compare: Option<u8>,
}

/// Why a Game Genie code was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum GameGenieError {
    /// Neither six nor eight letters.
    #[error("Game Genie code {code:?} has {len} letters; codes have 6 or 8")]
    Length {
        /// The code as given.
        code: String,
        /// Its length in characters.
        len: usize,
    },
    /// A character outside the code alphabet.
    #[error("Game Genie code {code:?}: {found:?} at position {position} is not one of APZLGITYEOXUKSVN")]
    Letter {
        /// The code as given.
        code: String,
        /// The character.
        found: char,
        /// Its position, from 1.
        position: usize,
    },
    /// An address outside $8000-$FFFF (only possible for codes built by hand, never decoded).
    #[error("Game Genie address ${address:04X} is outside $8000-$FFFF, where the device patches reads")]
    Address {
        /// The address.
        address: u16,
    },
    /// More codes than a machine holds.
    #[error("{count} Game Genie codes given; a machine holds at most {MAX_GAME_GENIE_CODES}")]
    TooMany {
        /// Codes given.
        count: usize,
    },
}

impl GameGenieCode {
    /// Decodes a six- or eight-letter code (case-insensitive, surrounding spaces ignored).
    pub fn decode(code: &str) -> Result<GameGenieCode, GameGenieError> {
        let trimmed = code.trim();
        let len = trimmed.chars().count();
        if len != 6 && len != 8 {
            return Err(GameGenieError::Length { code: code.to_owned(), len });
        }
        let mut n = [0u16; 8];
        for (i, ch) in trimmed.chars().enumerate() {
            let upper = ch.to_ascii_uppercase();
            let value = LETTERS.iter().position(|&l| char::from(l) == upper).ok_or_else(|| {
                GameGenieError::Letter { code: code.to_owned(), found: ch, position: i + 1 }
            })?;
            n[i] = value as u16;
        }
        // nesdev "Game Genie": the address bits are spread over letters 2-6; the data byte's bit 3
        // sits in the last letter, which for eight letters also carries the compare byte.
        let address = 0x8000
            | ((n[3] & 7) << 12)
            | ((n[5] & 7) << 8)
            | ((n[4] & 8) << 8)
            | ((n[2] & 7) << 4)
            | ((n[1] & 8) << 4)
            | (n[4] & 7)
            | (n[3] & 8);
        let last = if len == 8 { n[7] } else { n[5] };
        let value = (((n[1] & 7) << 4) | ((n[0] & 8) << 4) | (n[0] & 7) | (last & 8)) as u8;
        let compare =
            (len == 8).then(|| (((n[7] & 7) << 4) | ((n[6] & 8) << 4) | (n[6] & 7) | (n[5] & 8)) as u8);
        Ok(GameGenieCode { address, value, compare })
    }

    /// The code's letters (six, or eight with a compare byte); `decode` of them gives the code back
    /// when the address is in $8000-$FFFF. The letters hold 15 address bits: for an address below
    /// $8000 (a code built by hand, which no machine takes) they are those of `address | $8000`.
    pub fn letters(&self) -> ([u8; 8], usize) {
        let a = self.address;
        let d = u16::from(self.value);
        let c = u16::from(self.compare.unwrap_or(0));
        let long = self.compare.is_some();
        let n: [u16; 8] = [
            (d & 7) | ((d >> 4) & 8),
            ((d >> 4) & 7) | ((a >> 4) & 8),
            ((a >> 4) & 7) | if long { 8 } else { 0 },
            ((a >> 12) & 7) | (a & 8),
            (a & 7) | ((a >> 8) & 8),
            ((a >> 8) & 7) | if long { c & 8 } else { d & 8 },
            (c & 7) | ((c >> 4) & 8),
            ((c >> 4) & 7) | (d & 8),
        ];
        let mut out = [0u8; 8];
        for (letter, value) in out.iter_mut().zip(n) {
            *letter = LETTERS[usize::from(value)];
        }
        (out, if long { 8 } else { 6 })
    }

    /// What a read of `address` returns through this code when the cartridge drives `cart_value`.
    #[inline]
    fn patch(&self, address: u16, cart_value: u8) -> Option<u8> {
        (address == self.address && self.compare.is_none_or(|c| c == cart_value)).then_some(self.value)
    }
}

impl core::str::FromStr for GameGenieCode {
    type Err = GameGenieError;

    fn from_str(code: &str) -> Result<Self, Self::Err> {
        GameGenieCode::decode(code)
    }
}

impl core::fmt::Display for GameGenieCode {
    /// The letters; a code whose address is below $8000, which no letters encode, as its fields
    /// `AAAA:VV` or `AAAA?CC:VV` (hex) instead, so it is never shown as another address's code.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.address < 0x8000 {
            return match self.compare {
                Some(compare) => write!(f, "{:04X}?{compare:02X}:{:02X}", self.address, self.value),
                None => write!(f, "{:04X}:{:02X}", self.address, self.value),
            };
        }
        let (letters, len) = self.letters();
        f.write_str(core::str::from_utf8(&letters[..len]).expect("letters are ASCII"))
    }
}

/// The codes plugged into one cartridge slot, in the order given (the first matching code wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct GameGenie {
    codes: [Option<GameGenieCode>; MAX_GAME_GENIE_CODES],
    count: usize,
}

impl GameGenie {
    /// The codes, checked: at most [`MAX_GAME_GENIE_CODES`], addresses in $8000-$FFFF.
    pub(crate) fn new(codes: &[GameGenieCode]) -> Result<GameGenie, GameGenieError> {
        if codes.len() > MAX_GAME_GENIE_CODES {
            return Err(GameGenieError::TooMany { count: codes.len() });
        }
        let mut genie = GameGenie::default();
        for (slot, code) in genie.codes.iter_mut().zip(codes) {
            if code.address < 0x8000 {
                return Err(GameGenieError::Address { address: code.address });
            }
            *slot = Some(*code);
        }
        genie.count = codes.len();
        Ok(genie)
    }

    /// True when no code is active (the read path's fast case).
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The active codes.
    pub(crate) fn codes(&self) -> impl Iterator<Item = &GameGenieCode> {
        self.codes[..self.count].iter().flatten()
    }

    /// What a CPU read of `address` ($8000-$FFFF) returns when the cartridge drives `cart_value`.
    #[inline(never)]
    pub(crate) fn patch(&self, address: u16, cart_value: u8) -> u8 {
        self.codes().find_map(|code| code.patch(address, cart_value)).unwrap_or(cart_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_six_letter_code_decodes() {
        // SXIOPO (Super Mario Bros., infinite lives) is documented as $91D9 <- $AD.
        let code = GameGenieCode::decode("sxiopo").unwrap();
        assert_eq!(code, GameGenieCode { address: 0x91D9, value: 0xAD, compare: None });
    }

    #[test]
    fn every_letter_pattern_round_trips() {
        // Every address, value and compare bit moves through the letters and back.
        for bit in 0..31 {
            let bits = 1u32 << bit;
            let code = GameGenieCode {
                address: 0x8000 | (bits & 0x7FFF) as u16,
                value: (bits >> 15) as u8,
                compare: Some((bits >> 23) as u8),
            };
            assert_eq!(GameGenieCode::decode(&code.to_string()).unwrap(), code, "bit {bit}");
            let short = GameGenieCode { compare: None, ..code };
            assert_eq!(GameGenieCode::decode(&short.to_string()).unwrap(), short, "bit {bit}");
        }
    }

    /// A hand-built code below $8000 has no letters: it shows its own address, never the letters
    /// of `address | $8000`, and that text does not decode as a code.
    #[test]
    fn a_code_below_8000_shows_its_fields_not_another_codes_letters() {
        let low = GameGenieCode { address: 0x1234, value: 5, compare: None };
        assert_eq!(low.to_string(), "1234:05");
        assert_eq!(GameGenieCode { compare: Some(0xAB), ..low }.to_string(), "1234?AB:05");
        for code in [low, GameGenieCode { address: 0x7FFF, value: 0xFF, compare: Some(0) }] {
            assert!(GameGenieCode::decode(&code.to_string()).is_err(), "{code}");
        }
        let high = GameGenieCode { address: 0x9234, value: 5, compare: None };
        assert_eq!(GameGenieCode::decode(&high.to_string()), Ok(high));
    }

    #[test]
    fn bad_codes_are_refused_with_the_reason() {
        assert_eq!(
            GameGenieCode::decode("SXIOP"),
            Err(GameGenieError::Length { code: "SXIOP".into(), len: 5 })
        );
        assert_eq!(
            GameGenieCode::decode("SXIOPB"),
            Err(GameGenieError::Letter { code: "SXIOPB".into(), found: 'B', position: 6 })
        );
        let low = GameGenieCode { address: 0x6000, value: 1, compare: None };
        assert_eq!(GameGenie::new(&[low]), Err(GameGenieError::Address { address: 0x6000 }));
        let ok = GameGenieCode { address: 0x8000, value: 1, compare: None };
        assert_eq!(
            GameGenie::new(&[ok; MAX_GAME_GENIE_CODES + 1]),
            Err(GameGenieError::TooMany { count: MAX_GAME_GENIE_CODES + 1 })
        );
    }

    #[test]
    fn compare_selects_the_bank() {
        let genie =
            GameGenie::new(&[GameGenieCode { address: 0x8123, value: 0x42, compare: Some(0x10) }]).unwrap();
        assert_eq!(genie.patch(0x8123, 0x10), 0x42);
        assert_eq!(genie.patch(0x8123, 0x11), 0x11);
        assert_eq!(genie.patch(0x8124, 0x10), 0x10);
    }
}
