//! Cheat codes as libretro frontends send them (`retro_cheat_set`): Game Genie letters, or the
//! decoded form `AAAA:VV` / `AAAA?CC:VV` (hex address, value, compare), several joined by `+`.
//! All of them patch CPU reads of $8000-$FFFF through the core's Game Genie, so they are part of the
//! machine's identity and of its snapshots.

use std::collections::BTreeMap;

use anes_frontend::{GameGenieCode, MAX_GAME_GENIE_CODES};

/// Parses one cheat string; the error names the part that is not a code.
pub fn parse(code: &str) -> Result<Vec<GameGenieCode>, String> {
    code.split('+').map(str::trim).filter(|part| !part.is_empty()).map(parse_one).collect()
}

fn parse_one(part: &str) -> Result<GameGenieCode, String> {
    if let Some((target, value)) = part.split_once(':') {
        let (address, compare) = match target.split_once('?') {
            Some((address, compare)) => (address, Some(hex_byte(compare, part)?)),
            None => (target, None),
        };
        let address = u16::from_str_radix(address.trim_start_matches("0x"), 16)
            .map_err(|_| format!("{part:?}: address {address:?} is not hex"))?;
        if address < 0x8000 {
            return Err(format!(
                "{part:?}: address ${address:04X} is below $8000; this core patches ROM reads only \
                 (RAM cheats go through the frontend's memory map)"
            ));
        }
        return Ok(GameGenieCode { address, value: hex_byte(value, part)?, compare });
    }
    GameGenieCode::decode(part).map_err(|error| error.to_string())
}

fn hex_byte(text: &str, part: &str) -> Result<u8, String> {
    u8::from_str_radix(text.trim().trim_start_matches("0x"), 16)
        .map_err(|_| format!("{part:?}: {text:?} is not a hex byte"))
}

/// The frontend's cheat list: index to codes, enabled ones only.
#[derive(Debug, Default, Clone)]
pub struct CheatTable {
    enabled: BTreeMap<u32, Vec<GameGenieCode>>,
}

impl CheatTable {
    /// Forgets every cheat.
    pub fn clear(&mut self) {
        self.enabled.clear();
    }

    /// Sets cheat `index` (a disabled one is dropped); returns what it held, for
    /// [`CheatTable::put_back`].
    pub fn set(
        &mut self,
        index: u32,
        enabled: bool,
        codes: Vec<GameGenieCode>,
    ) -> Option<Vec<GameGenieCode>> {
        if enabled { self.enabled.insert(index, codes) } else { self.enabled.remove(&index) }
    }

    /// Undoes a [`CheatTable::set`] of `index` that returned `previous`.
    pub fn put_back(&mut self, index: u32, previous: Option<Vec<GameGenieCode>>) {
        match previous {
            Some(codes) => self.enabled.insert(index, codes),
            None => self.enabled.remove(&index),
        };
    }

    /// Every enabled code in index order; an error when there are more than the machine holds.
    pub fn codes(&self) -> Result<Vec<GameGenieCode>, String> {
        let codes: Vec<GameGenieCode> = self.enabled.values().flatten().copied().collect();
        if codes.len() > MAX_GAME_GENIE_CODES {
            return Err(format!(
                "{} codes enabled; at most {MAX_GAME_GENIE_CODES} can be active at once",
                codes.len()
            ));
        }
        Ok(codes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_raw_and_joined_codes() {
        let sxiopo = GameGenieCode { address: 0x91D9, value: 0xAD, compare: None };
        assert_eq!(parse("SXIOPO").unwrap(), vec![sxiopo]);
        assert_eq!(parse("91D9:AD").unwrap(), vec![sxiopo]);
        assert_eq!(
            parse(" 91d9?12:ad + SXIOPO ").unwrap(),
            vec![GameGenieCode { compare: Some(0x12), ..sxiopo }, sxiopo]
        );
        assert!(parse("0300:09").unwrap_err().contains("below $8000"));
        assert!(parse("SXIOPB").unwrap_err().contains("APZLGITYEOXUKSVN"));
        assert!(parse("91D9:ZZ").unwrap_err().contains("not a hex byte"));
    }

    #[test]
    fn the_table_keeps_enabled_codes_in_index_order() {
        let a = GameGenieCode { address: 0x8000, value: 1, compare: None };
        let b = GameGenieCode { address: 0x8001, value: 2, compare: None };
        let mut table = CheatTable::default();
        table.set(5, true, vec![b]);
        table.set(1, true, vec![a]);
        assert_eq!(table.codes().unwrap(), vec![a, b]);
        table.set(5, false, vec![b]);
        assert_eq!(table.codes().unwrap(), vec![a]);
        let held = table.set(2, true, vec![a; MAX_GAME_GENIE_CODES]);
        assert!(table.codes().is_err());
        table.put_back(2, held);
        assert_eq!(table.codes().unwrap(), vec![a]);
        let held = table.set(1, false, Vec::new());
        table.put_back(1, held);
        assert_eq!(table.codes().unwrap(), vec![a], "a disabled cheat comes back");
        table.clear();
        assert!(table.codes().unwrap().is_empty());
    }
}
