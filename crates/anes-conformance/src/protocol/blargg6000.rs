//! blargg's `$6000` protocol: once `$6001-$6003` hold `DE B0 61`, `$6000` is the status (`$80`
//! running, `$81` reset requested, `$00` passed, `$01-$7F` failure code) and `$6004` holds the ROM's
//! zero-terminated text.

use super::{Outcome, Progress, jammed, run_frame};
use crate::console::Console;
use crate::manifest::RomEntry;
use crate::report::Status;

const SIGNATURE: [u8; 3] = [0xDE, 0xB0, 0x61];
const STATUS_RUNNING: u8 = 0x80;
const STATUS_RESET_REQUESTED: u8 = 0x81;
/// The ROMs ask for at least 100 ms between the request and the reset press.
const FRAMES_BEFORE_RESET: u64 = 6;

pub(super) fn run(nes: &mut impl Console, rom: &RomEntry, progress: &mut Progress) -> Outcome {
    let mut reset_at_frame = None;
    for _ in 0..rom.frame_budget {
        run_frame(nes, progress);
        if let Some(pc) = nes.jammed_at() {
            return jammed(pc);
        }
        if !has_signature(nes) {
            continue;
        }
        match nes.peek(0x6000) {
            STATUS_RESET_REQUESTED => {
                let at = *reset_at_frame.get_or_insert(progress.frames + FRAMES_BEFORE_RESET);
                if progress.frames >= at {
                    reset_at_frame = None;
                    nes.soft_reset();
                }
            }
            0x00 => return Outcome::new(Status::Pass, Some(0), text(nes)),
            code @ 0x01..=0x7F => return Outcome::new(Status::Fail, Some(code), text(nes)),
            // $80 and anything the protocol does not define: still running.
            _ => reset_at_frame = None,
        }
    }
    let state = if has_signature(nes) {
        let status = nes.peek(0x6000);
        let meaning = if status == STATUS_RUNNING { "still running" } else { "unknown status" };
        format!("$6000 = ${status:02X} ({meaning}) after {} frames; {}", progress.frames, text(nes))
    } else {
        format!("no DE B0 61 signature at $6001 after {} frames", progress.frames)
    };
    Outcome::new(Status::Timeout, None, state.trim())
}

fn has_signature(nes: &impl Console) -> bool {
    [nes.peek(0x6001), nes.peek(0x6002), nes.peek(0x6003)] == SIGNATURE
}

/// The text at `$6004` up to its NUL, without ANSI escape sequences, trimmed.
fn text(nes: &impl Console) -> String {
    let bytes: Vec<u8> = (0x6004..=0x7FFF).map(|addr| nes.peek(addr)).take_while(|&b| b != 0).collect();
    strip_ansi(&bytes).trim().to_owned()
}

/// Drops `ESC [ parameters final-byte` sequences (the ROMs colour their text) and other control
/// characters except newlines.
fn strip_ansi(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            0x1B => {
                i += 1;
                if bytes.get(i) == Some(&b'[') {
                    i += 1;
                    // Parameter and intermediate bytes, then one final byte in $40-$7E.
                    while i < bytes.len() && !(0x40..=0x7E).contains(&bytes[i]) {
                        i += 1;
                    }
                }
                i += 1;
            }
            b'\n' => {
                out.push('\n');
                i += 1;
            }
            b @ 0x20..=0x7E => {
                out.push(char::from(b));
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::strip_ansi;

    #[test]
    fn strips_colour_escapes_and_control_bytes() {
        assert_eq!(strip_ansi(b"\x1b[0;37m04-brk\n\x1b[0;31mFailed #2\x07"), "04-brk\nFailed #2");
        assert_eq!(strip_ansi(b"plain\ttext\n"), "plaintext\n");
        assert_eq!(strip_ansi(b"cut\x1b[0;3"), "cut");
    }
}
