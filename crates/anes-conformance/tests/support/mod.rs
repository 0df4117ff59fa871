//! Test support shared by the conformance and CLI tests: tiny NROM test ROMs assembled by hand, and a
//! scratch folder for manifests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The first instruction of every test ROM.
pub const CODE_START: u16 = 0x8000;

/// An NROM-128 iNES file (16 KiB PRG at $8000 mirrored at $C000, 8 KiB CHR RAM) holding `code` at
/// $8000, with every vector pointing at $8000.
pub fn nrom(code: &[u8]) -> Vec<u8> {
    let mut rom = vec![0u8; 16 + 0x4000];
    rom[..6].copy_from_slice(&[b'N', b'E', b'S', 0x1A, 1, 0]);
    rom[16..16 + code.len()].copy_from_slice(code);
    for vector in [0x3FFA, 0x3FFC, 0x3FFE] {
        rom[16 + vector..16 + vector + 2].copy_from_slice(&CODE_START.to_le_bytes());
    }
    rom
}

/// `LDA #value / STA addr`.
pub fn store(addr: u16, value: u8) -> Vec<u8> {
    let [lo, hi] = addr.to_le_bytes();
    vec![0xA9, value, 0x8D, lo, hi]
}

/// `JMP` to itself, for code assembled so far in `code` (which starts at $8000).
pub fn halt(code: &mut Vec<u8>) {
    let here = CODE_START + code.len() as u16;
    let [lo, hi] = here.to_le_bytes();
    code.extend([0x4C, lo, hi]);
}

/// blargg's `$6000` protocol: running, signature, `text` at $6004, then `status`.
pub fn blargg_report(text: &str, status: u8) -> Vec<u8> {
    let mut code = store(0x6000, 0x80);
    for (i, byte) in [0xDE, 0xB0, 0x61].into_iter().enumerate() {
        code.extend(store(0x6001 + i as u16, byte));
    }
    for (i, byte) in text.bytes().chain([0]).enumerate() {
        code.extend(store(0x6004 + i as u16, byte));
    }
    code.extend(store(0x6000, status));
    code
}

/// A ROM that reports `status` with `text` through blargg's protocol, then loops.
pub fn blargg_rom(text: &str, status: u8) -> Vec<u8> {
    let mut code = blargg_report(text, status);
    halt(&mut code);
    nrom(&code)
}

/// A ROM that asks for a reset (`$6000 = $81`) and passes only after one: PRG RAM at $6010 remembers
/// that it asked.
pub fn reset_rom() -> Vec<u8> {
    // LDA $6010 / CMP #$5A / BEQ after_reset (offset patched below)
    let mut code = vec![0xAD, 0x10, 0x60, 0xC9, 0x5A, 0xF0, 0x00];
    code.extend(blargg_report("", 0x80));
    code.extend(store(0x6010, 0x5A));
    code.extend(store(0x6000, 0x81));
    halt(&mut code);
    code[6] = u8::try_from(code.len() - 7).unwrap();
    code.extend(blargg_report("passed after reset", 0x00));
    halt(&mut code);
    nrom(&code)
}

/// A ROM that stores `value` in zero page `addr`, then loops.
pub fn zero_page_rom(addr: u8, value: u8) -> Vec<u8> {
    let mut code = vec![0xA9, value, 0x85, addr];
    halt(&mut code);
    nrom(&code)
}

/// A ROM that reads PPUSTATUS first thing and stores 1 (passed) in zero page `addr` when its VBlank
/// flag was set at power-on, 2 (failed) when it was clear.
pub fn vblank_at_power_on_rom(addr: u8) -> Vec<u8> {
    let mut code = vec![
        0xAD, 0x02, 0x20, // LDA $2002
        0x30, 0x05, // BMI $800A
        0xA9, 0x02, // LDA #2
        0x4C, 0x0C, 0x80, // JMP $800C
        0xA9, 0x01, // $800A: LDA #1
        0x85, addr, // $800C: STA addr
    ];
    halt(&mut code);
    nrom(&code)
}

/// A ROM that stores the failure code 2 in zero page `addr`, spends about 11 frames in a delay loop
/// (like a sub-test in progress), then stores 1 (passed): blargg_ppu_tests' pattern.
pub fn zero_page_subtest_rom(addr: u8) -> Vec<u8> {
    let mut code = vec![
        0xA9, 0x02, 0x85, addr, // LDA #2 / STA addr
        0xA2, 0x00, 0xA0, 0x00, // LDX #0 / LDY #0
        0x88, 0xD0, 0xFD, // $8008: DEY / BNE $8008
        0xCA, 0xD0, 0xFA, // DEX / BNE $8008
        0xA9, 0x01, 0x85, addr, // LDA #1 / STA addr
    ];
    halt(&mut code);
    nrom(&code)
}

/// A ROM that behaves like AccuracyCoin's menu (see the `accuracycoin` protocol): boot counter $EC
/// = $0A, cursor $16 = $FF and an NMI trampoline at $0700 at once; then, polling the VBlank flag,
/// it counts frames in $10 and reads controller 1 until Start is held. It then runs its three
/// "tests" ($35 = 1 meanwhile): $0400 passes, $0401 fails with code 2, $0402 passes with success
/// code 1 when Start came on an even frame count and fails with code 3 on an odd one; waits 3
/// frames, stores its tallies ($37 tests, $38 passes) and points the trampoline elsewhere.
pub fn accuracycoin_like_rom() -> Vec<u8> {
    accuracycoin_like(&[0x01, 0x0A], true)
}

/// The same with one test, which always passes.
pub fn accuracycoin_like_rom_passing() -> Vec<u8> {
    accuracycoin_like(&[0x01], false)
}

fn accuracycoin_like(fixed: &[u8], parity_test: bool) -> Vec<u8> {
    let mut code = Vec::new();
    code.extend(store(0x00EC, 0x0A));
    code.extend(store(0x0016, 0xFF));
    code.extend(store(0x0700, 0x4C));
    code.extend(store(0x0701, 0x34));
    code.extend(store(0x0702, 0x12));
    let wait = CODE_START + code.len() as u16;
    let [wait_lo, wait_hi] = wait.to_le_bytes();
    code.extend([0x2C, 0x02, 0x20, 0x10, 0xFB]); // BIT $2002 / BPL -5
    code.extend([0xE6, 0x10]); // INC $10
    code.extend(store(0x4016, 1));
    code.extend(store(0x4016, 0));
    for _ in 0..4 {
        code.extend([0xAD, 0x16, 0x40]); // LDA $4016: A, B, Select, Start
    }
    code.extend([0x29, 0x01, 0xD0, 0x03]); // AND #1 / BNE +3
    code.extend([0x4C, wait_lo, wait_hi]); // JMP wait
    code.extend(store(0x0035, 1));
    let mut tests = fixed.len() as u8;
    for (i, &result) in fixed.iter().enumerate() {
        code.extend(store(0x0400 + i as u16, result));
    }
    // Passes: the fixed results' bit 0, plus the parity test's when the count is even.
    let fixed_passes = fixed.iter().filter(|&&r| r & 1 != 0).count() as u8;
    if parity_test {
        tests += 1;
        let table = CODE_START + 0x3F00;
        let [lo, hi] = table.to_le_bytes();
        code.extend([0xA5, 0x10, 0x29, 0x01, 0xAA]); // LDA $10 / AND #1 / TAX
        code.extend([0xBD, lo, hi, 0x8D, 0x02, 0x04]); // LDA table,X / STA $0402
        code.extend([0x8A, 0x49, 0x01, 0x18, 0x69, fixed_passes, 0x85, 0x38]); // TXA / EOR #1 / CLC / ADC / STA $38
    } else {
        code.extend(store(0x0038, fixed_passes));
    }
    code.extend([0xA2, 0x03]); // LDX #3
    code.extend([0x2C, 0x02, 0x20, 0x10, 0xFB, 0xCA, 0xD0, 0xF8]); // BIT $2002 / BPL / DEX / BNE
    code.extend(store(0x0037, tests));
    code.extend(store(0x0035, 0));
    code.extend(store(0x0701, 0x6A));
    halt(&mut code);
    let mut rom = nrom(&code);
    rom[16 + 0x3F00..16 + 0x3F02].copy_from_slice(&[0x05, 0x0E]);
    rom
}

/// A ROM that loops forever without reporting.
pub fn silent_rom() -> Vec<u8> {
    let mut code = Vec::new();
    halt(&mut code);
    nrom(&code)
}

/// A ROM whose first instruction is JAM ($02).
pub fn jam_rom() -> Vec<u8> {
    nrom(&[0x02])
}

/// Lowercase hex SHA-1, as the manifest writes it.
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// A folder under the system's temp folder, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("anes-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch { dir }
    }

    /// Writes `bytes` to `name` inside the folder and returns its path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Writes `rom` as `name` and returns its `[[rom]]` table with the right SHA-1; `extra` adds or
    /// overrides keys (TOML lines).
    pub fn rom_entry(&self, name: &str, rom: &[u8], protocol: &str, budget: u64, extra: &str) -> String {
        self.write(name, rom);
        let defaults = [
            ("path", format!("{name:?}")),
            ("suite", "\"synthetic\"".to_owned()),
            ("protocol", format!("{protocol:?}")),
            ("mapper", "0".to_owned()),
            ("needs_reset", "false".to_owned()),
            ("frame_budget", budget.to_string()),
            ("expected", "\"pass\"".to_owned()),
            ("region", "\"ntsc\"".to_owned()),
            ("sha1", format!("{:?}", sha1_hex(rom))),
        ];
        let overridden = |key: &str| extra.lines().any(|line| line.starts_with(&format!("{key} =")));
        let mut table = "[[rom]]\n".to_owned();
        for (key, value) in defaults.iter().filter(|(key, _)| !overridden(key)) {
            table.push_str(&format!("{key} = {value}\n"));
        }
        table.push_str(extra);
        table.push('\n');
        table
    }

    /// Writes `manifest.toml` from `tables` and returns its path.
    pub fn manifest(&self, tables: &[String]) -> PathBuf {
        self.write("manifest.toml", tables.concat())
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
