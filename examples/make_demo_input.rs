//! Writes the bundled 5,000-frame input stream of the demo ROM, `roms/demo/demo.input`.
//!
//! `cargo run --example make_demo_input` regenerates it; the output is a pure function of this file,
//! so review the diff of both together. The script plays like a person: it holds directions for a
//! while, taps buttons, switches songs, uses the second controller, and presses reset once.

use anes::nes::input::buttons;
use anes::nes::movie::{ConsoleCommand, FrameInput, InputStream};

const FRAMES: usize = 5_000;

fn main() -> std::io::Result<()> {
    let mut stream = InputStream::new();
    let mut rng: u64 = 0xDE30_1A7E;
    let mut hold = [0u8; 2];
    let mut hold_left = [0u32; 2];
    for frame in 0..FRAMES {
        for port in 0..2 {
            if hold_left[port] == 0 {
                let r = next(&mut rng);
                let direction = [
                    0,
                    buttons::RIGHT,
                    buttons::LEFT,
                    buttons::UP,
                    buttons::DOWN,
                    buttons::RIGHT | buttons::UP,
                ][(r % 6) as usize];
                // Player 2 joins after a while and plays less.
                let active = port == 0 || frame > 1_200;
                hold[port] = if active { direction } else { 0 };
                hold_left[port] = 10 + (r >> 8) as u32 % 90;
            }
            hold_left[port] -= 1;
        }
        let r = next(&mut rng);
        let mut pads = hold;
        // Taps: A and B every so often, Select rarely; Start switches songs twice.
        if r % 11 == 0 {
            pads[0] |= buttons::A;
        }
        if r % 37 == 0 {
            pads[0] |= buttons::B;
        }
        if r % 173 == 0 {
            pads[0] |= buttons::SELECT;
        }
        if frame > 1_200 && (r >> 16) % 13 == 0 {
            pads[1] |= buttons::A;
        }
        if frame == 900 || frame == 2_600 {
            pads[0] |= buttons::START;
        }
        let command = if frame == 3_500 { ConsoleCommand::SoftReset } else { ConsoleCommand::None };
        stream.push(FrameInput { pads, command });
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/roms/demo/demo.input");
    std::fs::write(path, stream.to_bytes())?;
    println!("wrote {FRAMES} frames to {path}");
    Ok(())
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
