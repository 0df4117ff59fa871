//! Import of FCEUX `.fm2` movies (text input log): header `key value` lines, then one
//! `|commands|port0|port1|port2|` line per frame with gamepad fields in `RLDUTSBA` order.

use thiserror::Error;

use super::{ConsoleCommand, FrameInput, InputStream, MAX_FRAMES};

/// Why an `.fm2` file could not be imported. Line numbers start at 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Fm2Error {
    /// Not UTF-8 text.
    #[error("fm2 is not text: invalid UTF-8 at byte {offset}")]
    NotText {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// The first key must be `version`, and it must be 3.
    #[error("line {line}: expected `version 3` as the first line of an fm2 movie, found {found:?}")]
    BadVersion {
        /// Line number.
        line: usize,
        /// The line's text.
        found: String,
    },
    /// A header feature anes cannot replay.
    #[error("line {line}: `{key} {value}` is not supported: {why}")]
    Unsupported {
        /// Line number.
        line: usize,
        /// Header key.
        key: String,
        /// Its value.
        value: String,
        /// What anes would need.
        why: &'static str,
    },
    /// A malformed header line or value.
    #[error("line {line}: malformed header line {found:?}: {why}")]
    BadHeader {
        /// Line number.
        line: usize,
        /// The line's text.
        found: String,
        /// What was expected.
        why: &'static str,
    },
    /// A malformed input-log line.
    #[error("line {line}: malformed input line {found:?}: {why}")]
    BadInputLine {
        /// Line number.
        line: usize,
        /// The line's text.
        found: String,
        /// What was expected.
        why: &'static str,
    },
}

/// Which device a port holds, from the `port0`/`port1` header keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Device {
    None,
    Gamepad,
}

/// What an `.fm2` movie's header says about the console it was recorded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fm2Header {
    /// `palFlag 1`: recorded on a PAL console; `None` when the movie does not say (`palFlag 0` or
    /// absent: FCEUX writes 0 for NTSC and for its Dendy mode alike).
    pub region: Option<crate::Region>,
}

impl InputStream {
    /// Imports an FCEUX `.fm2` movie recorded from power-on with standard gamepads (or nothing) on
    /// ports 1 and 2. Soft and hard resets in the command field become [`ConsoleCommand`]s.
    pub fn from_fm2(bytes: &[u8]) -> Result<InputStream, Fm2Error> {
        InputStream::from_fm2_with_header(bytes).map(|(stream, _)| stream)
    }

    /// [`InputStream::from_fm2`], and what the header says about the console ([`Fm2Header`]).
    pub fn from_fm2_with_header(bytes: &[u8]) -> Result<(InputStream, Fm2Header), Fm2Error> {
        let mut header = Fm2Header::default();
        let text = std::str::from_utf8(bytes).map_err(|e| Fm2Error::NotText { offset: e.valid_up_to() })?;
        let mut ports = [Device::Gamepad, Device::Gamepad];
        let mut length: Option<usize> = None;
        let mut frames = InputStream::new();
        // An empty file has no first line to be `version 3`: not a movie.
        if text.is_empty() {
            return Err(Fm2Error::BadVersion { line: 1, found: String::new() });
        }
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim_end_matches('\r');
            if index == 0 && line.trim() != "version 3" {
                return Err(Fm2Error::BadVersion { line: line_no, found: quote(line) });
            }
            if line.starts_with('|') {
                if frames.len() == MAX_FRAMES {
                    return Err(Fm2Error::BadInputLine {
                        line: line_no,
                        found: quote(line),
                        why: "an input stream holds at most 2^32 - 1 frames",
                    });
                }
                frames.push(parse_input_line(line, line_no, ports)?);
                continue;
            }
            if !frames.is_empty() && !line.trim().is_empty() {
                return Err(Fm2Error::BadInputLine {
                    line: line_no,
                    found: quote(line),
                    why: "input lines start with `|`; header keys must come before the input log",
                });
            }
            let Some((key, value)) = line.split_once(' ') else {
                if line.trim().is_empty() {
                    continue;
                }
                return Err(Fm2Error::BadHeader {
                    line: line_no,
                    found: quote(line),
                    why: "expected `key value`",
                });
            };
            let unsupported =
                |why| Fm2Error::Unsupported { line: line_no, key: quote(key), value: quote(value), why };
            let flag = value.trim() != "0";
            match key {
                "binary" if flag => {
                    return Err(unsupported("binary input logs cannot be imported; save as text"));
                }
                "palFlag" => match value.trim() {
                    "0" => {}
                    "1" => header.region = Some(crate::Region::Pal),
                    _ => return Err(unsupported("palFlag is 0 (NTSC) or 1 (PAL)")),
                },
                "FDS" if flag => return Err(unsupported("the Famicom Disk System is not emulated")),
                "fourscore" if flag => return Err(unsupported("the Four Score adapter is not emulated")),
                "savestate" => {
                    return Err(unsupported("movies that start from a savestate cannot be replayed"));
                }
                "port0" | "port1" => {
                    let slot = usize::from(key == "port1");
                    ports[slot] = match value.trim() {
                        "0" => Device::None,
                        "1" => Device::Gamepad,
                        _ => {
                            return Err(unsupported(
                                "only standard gamepads (1) or nothing (0) are supported",
                            ));
                        }
                    };
                }
                "port2" if value.trim() != "0" => {
                    return Err(unsupported("Famicom expansion-port devices are not emulated"));
                }
                "length" => {
                    length = Some(value.trim().parse().map_err(|_| Fm2Error::BadHeader {
                        line: line_no,
                        found: quote(line),
                        why: "length must be a non-negative integer",
                    })?);
                }
                _ => {}
            }
        }
        if let Some(length) = length {
            frames.truncate(length);
        }
        Ok((frames, header))
    }
}

impl InputStream {
    /// Exports the stream as an FCEUX `.fm2` movie (text, version 3, from power-on, standard gamepads
    /// on ports 1 and 2) that [`InputStream::from_fm2`] reads back unchanged. `rom_filename` goes in
    /// the header as FCEUX's `romFilename`; no `romChecksum` is written (FCEUX's is an MD5 anes does
    /// not compute), so FCEUX may warn that it cannot check the ROM before it plays the movie. The
    /// movie says NTSC (`palFlag 0`); [`InputStream::to_fm2_of_region`] writes another region's.
    pub fn to_fm2(&self, rom_filename: &str) -> String {
        self.to_fm2_of_region(rom_filename, crate::Region::Ntsc)
    }

    /// [`InputStream::to_fm2`] for a run of a `region` console: `palFlag 1` for PAL, which
    /// [`InputStream::from_fm2_with_header`] and FCEUX read back as PAL. A Dendy run is written with
    /// `palFlag 0`, as FCEUX writes its own Dendy movies: the format has no Dendy flag, so a
    /// Dendy movie replays as Dendy only when the region is given again (`--region dendy`).
    pub fn to_fm2_of_region(&self, rom_filename: &str, region: crate::Region) -> String {
        let mut out = String::new();
        self.write_fm2_of_region(rom_filename, region, &mut out).expect("a String takes any text");
        out
    }

    /// [`InputStream::to_fm2_of_region`] written into `out` a block of lines at a time, in memory
    /// that does not grow with the stream (2^32 - 1 frames are some 99 GB of movie) and with no
    /// allocation per frame or run. `out`'s error ends the export.
    pub fn write_fm2_of_region(
        &self,
        rom_filename: &str,
        region: crate::Region,
        out: &mut impl core::fmt::Write,
    ) -> core::fmt::Result {
        // Lines of one run repeated, written as one piece: 178 frames a call.
        const BLOCK_BYTES: usize = 4096;
        let pal_flag = u8::from(region == crate::Region::Pal);
        write!(out, "version 3\nemuVersion 20604\nrerecordCount 0\npalFlag {pal_flag}\nromFilename ")?;
        // A name is one header line: line breaks would start another key.
        for c in rom_filename.chars() {
            out.write_char(if c.is_control() { '_' } else { c })?;
        }
        out.write_str(
            "\nguid 00000000-0000-0000-0000-000000000000\nfourscore 0\nmicrophone 0\nport0 1\nport1 1\n\
             port2 0\nFDS 0\nNewPPU 0\ncomment author anes\n",
        )?;
        let mut block = [0u8; BLOCK_BYTES];
        for run in self.runs() {
            let line = fm2_line(run.input);
            let per_block = (BLOCK_BYTES / line.len()).min(run.len);
            for slot in block.chunks_exact_mut(line.len()).take(per_block) {
                slot.copy_from_slice(&line);
            }
            // ASCII by construction.
            let lines =
                core::str::from_utf8(&block[..per_block * line.len()]).map_err(|_| core::fmt::Error)?;
            let mut left = run.len;
            while left >= per_block {
                out.write_str(lines)?;
                left -= per_block;
            }
            out.write_str(&lines[..left * line.len()])?;
        }
        Ok(())
    }
}

/// One frame's line of the input log: `|command|pad1|pad2||` and the newline.
fn fm2_line(input: FrameInput) -> [u8; 23] {
    let command = match input.command {
        ConsoleCommand::None => b'0',
        ConsoleCommand::SoftReset => b'1',
        ConsoleCommand::PowerCycle => b'2',
    };
    let mut line = *b"|0|........|........||\n";
    line[1] = command;
    line[3..11].copy_from_slice(&gamepad_field(input.pads[0]));
    line[12..20].copy_from_slice(&gamepad_field(input.pads[1]));
    line
}

/// A gamepad field in `RLDUTSBA` order, `.` for a released button (the inverse of `parse_gamepad`).
fn gamepad_field(pad: u8) -> [u8; 8] {
    let mut field = *b"........";
    for (i, (slot, &c)) in field.iter_mut().zip(b"RLDUTSBA").enumerate() {
        if pad & (0x80 >> i) != 0 {
            *slot = c;
        }
    }
    field
}

/// The most characters of a line an error message repeats.
const QUOTE_CHARS: usize = 80;

/// `text` for an error message, cut short when long (a line may be megabytes).
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

fn parse_input_line(line: &str, line_no: usize, ports: [Device; 2]) -> Result<FrameInput, Fm2Error> {
    let bad = |why| Fm2Error::BadInputLine { line: line_no, found: quote(line), why };
    // `|c|p0|p1|p2|`: splitting on `|` gives "", commands, port0, port1, port2, "".
    let mut split = line.split('|');
    let mut fields = [""; 5];
    for field in &mut fields {
        *field = split.next().ok_or_else(|| bad("expected `|commands|port0|port1|port2|`"))?;
    }
    let commands: u32 = fields[1].trim().parse().map_err(|_| bad("the command field must be an integer"))?;
    let command = if commands & 2 != 0 {
        ConsoleCommand::PowerCycle
    } else if commands & 1 != 0 {
        ConsoleCommand::SoftReset
    } else if commands & !3 != 0 {
        return Err(bad("FDS and VS System commands are not supported"));
    } else {
        ConsoleCommand::None
    };
    let mut pads = [0u8; 2];
    for (slot, device) in ports.into_iter().enumerate() {
        let field = fields[2 + slot];
        pads[slot] = match device {
            Device::None if field.is_empty() => 0,
            Device::None => return Err(bad("input for a port the header declares empty (port0/port1 0)")),
            Device::Gamepad => {
                parse_gamepad(field).ok_or_else(|| bad("a gamepad field is 8 characters, RLDUTSBA order"))?
            }
        };
    }
    Ok(FrameInput { pads, command })
}

/// `RLDUTSBA`: a space or `.` is released, any other character pressed. Right is the first character
/// and the highest bit of the shift order (A, B, Select, Start, Up, Down, Left, Right).
fn parse_gamepad(field: &str) -> Option<u8> {
    let bytes = field.as_bytes();
    if bytes.len() != 8 {
        return None;
    }
    Some(
        bytes
            .iter()
            .enumerate()
            .fold(0u8, |acc, (i, &c)| if c == b' ' || c == b'.' { acc } else { acc | (0x80 >> i) }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::buttons;

    const MOVIE: &str = "version 3\nemuVersion 22020\nport0 1\nport1 1\nport2 0\n\
        |0|........|........||\n|0|R..U...A|.L...S..||\n|1|........|........||\n|2|....T...|........||\n";

    #[test]
    fn exported_movies_import_unchanged() {
        let mut stream = InputStream::new();
        stream.push(FrameInput::default());
        stream.push(FrameInput::buttons(buttons::UP | buttons::A, buttons::RIGHT | buttons::SELECT));
        stream.push(FrameInput { pads: [0, buttons::B], command: ConsoleCommand::SoftReset });
        stream.push(FrameInput {
            pads: [buttons::START | buttons::LEFT | buttons::DOWN, 0],
            command: ConsoleCommand::PowerCycle,
        });
        stream.push(FrameInput::default());
        let text = stream.to_fm2("game\n.nes");
        assert!(text.contains("\nromFilename game_.nes\n"), "{text}");
        // Fields by hand from FCEUX's documented RLDUTSBA order.
        assert!(text.contains("\n|0|...U...A|R....S..||\n|1|........|......B.||\n"), "{text}");
        assert!(text.contains("\n|2|.LD.T...|........||\n"), "{text}");
        assert_eq!(InputStream::from_fm2(text.as_bytes()).unwrap(), stream);
    }

    #[test]
    fn a_pal_run_exports_pal_flag_1_and_imports_as_pal() {
        use crate::Region;
        let stream: InputStream =
            [FrameInput::buttons(buttons::A, 0), FrameInput::default()].into_iter().collect();
        for (region, flag, read_back) in
            [(Region::Ntsc, "0", None), (Region::Pal, "1", Some(Region::Pal)), (Region::Dendy, "0", None)]
        {
            let text = stream.to_fm2_of_region("game.nes", region);
            assert_eq!(
                text.lines().filter(|l| l.starts_with("palFlag ")).collect::<Vec<_>>(),
                [format!("palFlag {flag}")]
            );
            let (back, header) = InputStream::from_fm2_with_header(text.as_bytes()).unwrap();
            assert_eq!((back, header.region), (stream.clone(), read_back), "{region}");
        }
        assert_eq!(stream.to_fm2("game.nes"), stream.to_fm2_of_region("game.nes", Region::Ntsc));
    }

    #[test]
    fn imports_buttons_and_commands() {
        let stream = InputStream::from_fm2(MOVIE.as_bytes()).unwrap();
        assert_eq!(stream.len(), 4);
        assert_eq!(
            stream.frame(1).pads,
            [buttons::RIGHT | buttons::UP | buttons::A, buttons::LEFT | buttons::SELECT]
        );
        assert_eq!(stream.frame(2).command, ConsoleCommand::SoftReset);
        assert_eq!(stream.frame(3).command, ConsoleCommand::PowerCycle);
        assert_eq!(stream.frame(3).pads[0], buttons::START);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = MOVIE.replace("|0|R..U...A|", "|0|R..U..A|");
        let err = InputStream::from_fm2(bad.as_bytes()).unwrap_err();
        assert!(matches!(err, Fm2Error::BadInputLine { line: 7, .. }), "{err}");
        let err = InputStream::from_fm2(b"version 2\n").unwrap_err();
        assert!(matches!(err, Fm2Error::BadVersion { line: 1, .. }));
        // No first line at all is no `version 3` either, like an empty first line.
        for empty in [&b""[..], b"\n", b"\r\n"] {
            let err = InputStream::from_fm2(empty).unwrap_err();
            assert_eq!(err, Fm2Error::BadVersion { line: 1, found: String::new() }, "{empty:?}");
        }
        let err = InputStream::from_fm2(MOVIE.replace("port0 1", "port0 2").as_bytes()).unwrap_err();
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn the_length_key_cuts_the_log() {
        let movie = MOVIE.replace("port2 0\n", "port2 0\nlength 2\n");
        let stream = InputStream::from_fm2(movie.as_bytes()).unwrap();
        assert_eq!(stream, InputStream::from_fm2(MOVIE.as_bytes()).unwrap().frames().take(2).collect());
    }

    #[test]
    fn errors_quote_long_lines_briefly() {
        let long = format!("{MOVIE}|0|{}|........||\n", "R".repeat(100_000));
        let err = InputStream::from_fm2(long.as_bytes()).unwrap_err();
        assert!(matches!(err, Fm2Error::BadInputLine { line: 10, .. }), "{err}");
        assert!(err.to_string().len() < 300, "{err}");
    }
}
