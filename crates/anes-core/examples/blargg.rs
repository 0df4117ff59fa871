//! Development aid: runs a test ROM and prints what it reports through blargg's $6000 protocol, or the
//! zero-page result byte of older ROMs. `cargo run -p anes-core --example blargg -- ROM [FRAMES] [ZP]`.
//! (The real runner is `anes conformance`.)

use anes_core::{Cartridge, Nes, NesConfig};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("usage: blargg ROM [FRAMES] [ZP_ADDR_HEX]");
    let frames: u32 = args.get(2).map_or(3600, |f| f.parse().expect("FRAMES"));
    let zp = args.get(3).map(|a| u16::from_str_radix(a, 16).expect("ZP_ADDR_HEX"));
    let rom = std::fs::read(path).expect("read ROM");
    let mut nes = Nes::new(Cartridge::from_ines(&rom).expect("parse ROM"), NesConfig::default());
    let mut reset_at = None;
    for frame in 0..frames {
        nes.run_until_frame_end();
        let signature = [nes.peek(0x6001), nes.peek(0x6002), nes.peek(0x6003)];
        if signature == [0xDE, 0xB0, 0x61] {
            let status = nes.peek(0x6000);
            match status {
                0x80 => {}
                0x81 => match reset_at {
                    None => reset_at = Some(frame + 6),
                    Some(at) if frame >= at => {
                        reset_at = None;
                        nes.soft_reset();
                    }
                    Some(_) => {}
                },
                code => {
                    let mut text = String::new();
                    let mut addr = 0x6004;
                    while nes.peek(addr) != 0 && addr < 0x7000 {
                        text.push(nes.peek(addr) as char);
                        addr += 1;
                    }
                    println!(
                        "{} frame {frame}: code {code:#04x}\n{text}",
                        if code == 0 { "PASS" } else { "FAIL" }
                    );
                    std::process::exit(i32::from(code != 0));
                }
            }
        }
        if let Some(zp) = zp {
            let v = nes.peek(zp);
            if v != 0 && frame > 60 {
                // Older ROMs rewrite the byte while running; report the value at the end of the budget.
                if frame + 1 == frames || v == 1 {
                    println!(
                        "{} frame {frame}: zero page ${zp:02X} = {v}",
                        if v == 1 { "PASS" } else { "FAIL" }
                    );
                    std::process::exit(i32::from(v != 1));
                }
            }
        }
    }
    let (scanline, dot) = nes.ppu_position();
    println!(
        "TIMEOUT after {frames} frames: PC ${:04X} cycle {} ppu {scanline},{dot} jammed {} zp $F0={:02X} $F8={:02X}",
        nes.cpu().pc,
        nes.cpu_cycle(),
        nes.is_jammed(),
        nes.peek(0xF0),
        nes.peek(0xF8)
    );
    std::process::exit(2);
}
