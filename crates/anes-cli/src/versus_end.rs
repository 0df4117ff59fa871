//! `anes lockstep ROM --versus CORE --at-end`: anes and another NES emulator compared once, at the
//! last frame, by what the program leaves behind (a test ROM's verdict on screen, its RAM), not at
//! every frame boundary, where two emulators that end their frames a few CPU cycles apart sample a
//! program in the middle of different instructions (docs/LIBRETRO.md, "anes against Nestopia").
//!
//! The stack page below anes's stack pointer is reported but not compared: it holds what earlier
//! pushes left there (return addresses and flags of interrupts that landed on different
//! instructions), which no later instruction reads before writing it again.

use std::io::Write;
use std::ops::RangeInclusive;
use std::path::Path;

use anes_core::movie::InputStream;
use anes_lockstep::{InputSource, Machine};
use anes_retro_host::nes_view::NesView;

use crate::output;

/// RAM bytes that differ: (address, anes's value, the other's).
pub(crate) type ByteDiffs = Vec<(u16, u8, u8)>;

/// What the last frame's comparison found.
#[derive(Debug, serde::Serialize)]
pub(crate) struct EndReport {
    /// Frames each machine ran.
    pub frames: u64,
    /// anes's blargg `$6000` status and text, when the ROM speaks that protocol.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anes_status: Option<String>,
    /// Pixels whose colour classes differ (0: the pictures agree under a one-to-one colour map);
    /// `None` when the pictures' sizes differ.
    pub picture_pixels_differing: Option<usize>,
    /// The first differing pixel (x, y).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_pixel: Option<(usize, usize)>,
    /// RAM bytes outside anes's free stack that differ: (address, anes, other).
    pub ram: ByteDiffs,
    /// anes's stack pointer at the end.
    pub anes_sp: u8,
    /// Bytes of the free stack ($0100 up to $0100 + S) that differ: reported, not compared.
    pub free_stack_differing: usize,
}

impl EndReport {
    /// The machines agree: the same picture and the same RAM outside anes's free stack.
    pub fn agrees(&self) -> bool {
        self.picture_pixels_differing == Some(0) && self.ram.is_empty()
    }
}

/// The stack bytes below anes's stack pointer `sp`: pushed before and popped since.
pub(crate) fn free_stack(sp: u8) -> RangeInclusive<u16> {
    0x0100..=0x0100 + u16::from(sp)
}

/// Compares two last frames' RAM and colour classes (a [`anes_retro_host::nes_view`] picture).
pub(crate) fn compare(
    frames: u64,
    anes_status: Option<String>,
    anes_sp: u8,
    ram: (&[u8], &[u8]),
    classes: (&[u8], &[u8]),
) -> EndReport {
    let free = free_stack(anes_sp);
    let mut differing = Vec::new();
    let mut free_stack_differing = 0;
    for (address, (&a, &b)) in ram.0.iter().zip(ram.1).enumerate() {
        let address = address as u16;
        if a == b {
            continue;
        }
        if free.contains(&address) {
            free_stack_differing += 1;
        } else {
            differing.push((address, a, b));
        }
    }
    let (picture_pixels_differing, first_pixel) = if classes.0.len() == classes.1.len() {
        let pixels = classes.0.chunks_exact(2).zip(classes.1.chunks_exact(2));
        let mut first = None;
        let mut count = 0;
        for (pixel, (a, b)) in pixels.enumerate() {
            if a != b {
                count += 1;
                first.get_or_insert((
                    pixel % anes_retro_host::nes_view::WIDTH,
                    pixel / anes_retro_host::nes_view::WIDTH,
                ));
            }
        }
        (Some(count), first)
    } else {
        (None, None)
    };
    EndReport {
        frames,
        anes_status,
        picture_pixels_differing,
        first_pixel,
        ram: differing,
        anes_sp,
        free_stack_differing,
    }
}

/// blargg's `$6000` protocol as anes's console holds it at the end: `$00 "text"`, or `None`
/// without the `DE B0 61` signature.
fn blargg_status(view: &NesView) -> Option<String> {
    let nes = view.machine().nes();
    if [nes.peek(0x6001), nes.peek(0x6002), nes.peek(0x6003)] != [0xDE, 0xB0, 0x61] {
        return None;
    }
    let bytes: Vec<u8> = (0x6004..=0x7FFFu16).map(|addr| nes.peek(addr)).take_while(|&b| b != 0).collect();
    Some(format!("${:02X} {:?}", nes.peek(0x6000), one_line(&bytes)))
}

/// The ROM's text on one line: ANSI colour sequences (`ESC [ ... m`) and other control bytes
/// dropped, runs of white space made one space.
fn one_line(bytes: &[u8]) -> String {
    let mut text = String::new();
    let mut in_escape = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == 0x1B && bytes.get(i + 1) == Some(&b'[') {
            in_escape = true;
        } else if in_escape {
            // The sequence ends at its final byte ($40-$7E), after `[` and the parameters.
            in_escape = !((0x40..=0x7E).contains(&b) && b != b'[');
        } else if b.is_ascii_graphic() || b == b' ' || b == b'\n' {
            text.push(char::from(b));
        }
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The files a difference at the end writes into its evidence folder: anes's picture, the other's.
pub(crate) const VERSUS_END_PICTURES: [&str; 2] = ["anes.png", "other.png"];

/// Runs both machines `frames` frames (after the one the caller ran), compares the last, prints the
/// report and writes both pictures into `evidence` when they differ. Returns the report.
pub(crate) fn run(
    anes: &mut NesView,
    other: &mut impl Machine<Input = anes_core::movie::FrameInput>,
    inputs: &InputStream,
    frames: u64,
    evidence: impl FnOnce() -> anyhow::Result<std::path::PathBuf>,
    json: bool,
) -> anyhow::Result<EndReport> {
    // Frame 0 was run by the caller (the pairing); the rest here.
    for frame in 1..frames {
        anes.run_frame(inputs.input(frame));
        other.run_frame(inputs.input(frame));
    }
    let section = |m: &dyn SectionsOf, name: &str| m.named(name).to_vec();
    let ram_a = section(&*anes, anes_retro_host::nes_view::SYSTEM_RAM);
    let ram_b = section(&*other, anes_retro_host::nes_view::SYSTEM_RAM);
    if ram_b.len() != ram_a.len() {
        anyhow::bail!("the other core's system RAM is {} bytes, not {}", ram_b.len(), ram_a.len());
    }
    let classes_a = section(&*anes, anes_retro_host::nes_view::PICTURE_CLASSES);
    let classes_b = section(&*other, anes_retro_host::nes_view::PICTURE_CLASSES);
    let report = compare(
        frames,
        blargg_status(anes),
        anes.machine().nes().cpu().sp,
        (&ram_a, &ram_b),
        (&classes_a, &classes_b),
    );
    let mut pictures_written = None;
    if !report.agrees() {
        let dir = evidence()?;
        std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        for (name, machine) in
            VERSUS_END_PICTURES.into_iter().zip([&*anes as &dyn SectionsOf, &*other as &dyn SectionsOf])
        {
            if let Some(png) = machine.png() {
                let path = dir.join(name);
                anes_fs::write_output(&path, &png)?;
            }
        }
        pictures_written = Some(dir);
    }
    let mut out = output::stdout();
    if json {
        output::write_json(&mut out, &report)?;
    } else {
        print_report(&mut out, &report, pictures_written.as_deref())?;
    }
    out.flush()?;
    Ok(report)
}

fn print_report(out: &mut impl Write, report: &EndReport, pictures: Option<&Path>) -> anyhow::Result<()> {
    writeln!(out, "frames run        {} (compared at the last only: --at-end)", report.frames)?;
    if let Some(status) = &report.anes_status {
        writeln!(out, "anes $6000        {status}")?;
    }
    match (report.picture_pixels_differing, report.first_pixel) {
        (Some(0), _) => writeln!(out, "picture           agree (one-to-one colour map)")?,
        (Some(n), Some((x, y))) => {
            writeln!(out, "picture           {n} pixels differ, the first pixel({x}, {y})")?
        }
        _ => writeln!(out, "picture           sizes differ")?,
    }
    let free = free_stack(report.anes_sp);
    if report.ram.is_empty() {
        writeln!(out, "ram               agree outside the free stack")?;
    } else {
        let shown: Vec<String> = report
            .ram
            .iter()
            .take(8)
            .map(|(addr, a, b)| format!("ram[${addr:04X}]: ${a:02X} vs ${b:02X}"))
            .collect();
        let more = report.ram.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        writeln!(out, "ram               {} bytes differ: {}{more}", report.ram.len(), shown.join(", "))?;
    }
    writeln!(
        out,
        "free stack        ${:04X}-${:04X} (below anes's S=${:02X}): {} bytes differ, not compared",
        free.start(),
        free.end(),
        report.anes_sp,
        report.free_stack_differing
    )?;
    if let Some(dir) = pictures {
        writeln!(out, "evidence          {} (anes.png, other.png)", dir.display())?;
    }
    writeln!(out, "{}", if report.agrees() { "AGREE" } else { "DIFFER" })?;
    Ok(())
}

/// A machine's sections by name and its picture as PNG (both the view and a worker have them).
trait SectionsOf {
    fn named(&self, name: &str) -> &[u8];
    fn png(&self) -> Option<Vec<u8>>;
}

impl<M: Machine + ?Sized> SectionsOf for M {
    fn named(&self, name: &str) -> &[u8] {
        (0..self.section_count())
            .find(|&i| self.section_name(i) == name)
            .map_or(&[], |i| self.section_bytes(i))
    }

    fn png(&self) -> Option<Vec<u8>> {
        let (width, height) = self.picture_size()?;
        let mut rgb = Vec::new();
        if !self.picture_rgb(&mut rgb) {
            return None;
        }
        anes_lockstep::encode_png(width, height, &rgb).ok()
    }
}

/// Where in anes's run the other emulator's RAM of one frame is found: the instruction boundaries of
/// anes whose 2 KiB of RAM equal it, as CPU cycles from the end of anes's own frame (negative:
/// before it), searched over the [`SEARCH_FRAMES`] frames before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SamplingOffset {
    /// The frame count (from power-on) whose end is offset 0.
    pub frame: u64,
    /// Offsets whose RAM matches, nearest to 0 first.
    pub matches: Vec<i64>,
    /// Instruction boundaries searched.
    pub searched: u64,
    /// Without a match: the earliest boundary with the fewest differing bytes, and those bytes.
    pub closest: Option<(i64, ByteDiffs)>,
}

/// Frames searched on each side of the frame end that differs: a program that missed a VBlank flag
/// in one emulator runs a frame behind there.
pub(crate) const SEARCH_FRAMES: u64 = 2;

/// Runs `anes` (at power-on) to the end of frame `frame - SEARCH_FRAMES` (frames counted from 1
/// here), then steps it instruction by instruction up to the end of frame `frame + SEARCH_FRAMES`,
/// comparing its RAM with `other_ram` (the other emulator's at the end of frame `frame`) after each
/// instruction. Frame `c` runs with `input(c - 1)`.
pub(crate) fn sampling_offset(
    anes: &mut anes_lockstep::NesMachine,
    input: impl Fn(u64) -> anes_core::movie::FrameInput,
    frame: u64,
    other_ram: &[u8],
) -> SamplingOffset {
    let first = frame.saturating_sub(SEARCH_FRAMES - 1).max(1);
    for c in 1..first {
        anes.run_frame(input(c - 1));
    }
    let mut hits = Vec::new();
    let mut searched = 0;
    let mut end_cycle = None;
    // (differing bytes, cycle, those bytes)
    let mut closest: Option<(usize, u64, ByteDiffs)> = None;
    for c in first..=frame + SEARCH_FRAMES {
        anes.begin_frame(input(c - 1));
        loop {
            let done = anes.step_instruction();
            searched += 1;
            let ram = anes.nes().ram();
            let cycle = anes.nes().cpu_cycle();
            if ram == other_ram {
                hits.push(cycle);
            } else if hits.is_empty() {
                let differing = ram.iter().zip(other_ram).filter(|(a, b)| a != b).count();
                if closest.as_ref().is_none_or(|(best, ..)| differing < *best) {
                    let bytes = ram
                        .iter()
                        .zip(other_ram)
                        .enumerate()
                        .filter(|(_, (a, b))| a != b)
                        .map(|(addr, (&a, &b))| (addr as u16, a, b))
                        .collect();
                    closest = Some((differing, cycle, bytes));
                }
            }
            if done {
                break;
            }
        }
        if c == frame {
            end_cycle = Some(anes.nes().cpu_cycle());
        }
    }
    let end = end_cycle.unwrap_or_default() as i64;
    let mut matches: Vec<i64> = hits.into_iter().map(|cycle| cycle as i64 - end).collect();
    matches.sort_by_key(|offset| offset.abs());
    let closest =
        if matches.is_empty() { closest.map(|(_, cycle, bytes)| (cycle as i64 - end, bytes)) } else { None };
    SamplingOffset { frame, matches, searched, closest }
}

/// Frames counted from 0, as the lockstep's report counts them.
impl std::fmt::Display for SamplingOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.matches.first() {
            Some(nearest) => {
                let others: Vec<String> =
                    self.matches.iter().skip(1).take(3).map(|o| format!("{o:+}")).collect();
                let others =
                    if others.is_empty() { String::new() } else { format!(" (also {})", others.join(", ")) };
                write!(
                    f,
                    "anes's RAM equals the other's at the end of frame {} at {nearest:+} CPU cycles from anes's end of it{others}",
                    self.frame - 1
                )
            }
            None => {
                write!(
                    f,
                    "anes's RAM equals the other's at the end of frame {} at none of {} instruction boundaries within {SEARCH_FRAMES} frames of it",
                    self.frame - 1,
                    self.searched,
                )?;
                if let Some((offset, bytes)) = &self.closest {
                    let shown: Vec<String> = bytes
                        .iter()
                        .take(8)
                        .map(|(addr, a, b)| format!("ram[${addr:04X}]: ${a:02X} vs ${b:02X}"))
                        .collect();
                    write!(
                        f,
                        "; the closest, at {offset:+} cycles, differs in {} bytes: {}",
                        bytes.len(),
                        shown.join(", ")
                    )?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_free_stack_is_reported_and_the_rest_compared() {
        let mut a = vec![0u8; 0x800];
        let mut b = a.clone();
        // S = $F0: $0100-$01F0 is free, $01F1-$01FF live.
        b[0x1A0] = 1; // free: not compared
        b[0x1F0] = 1; // free (the next push goes here)
        b[0x1F1] = 1; // live stack: compared
        b[0x0E] = 1; // zero page: compared
        a[0x700] = 2;
        let classes = [0u8, 0, 1, 0];
        let report = compare(10, None, 0xF0, (&a, &b), (&classes, &classes));
        assert_eq!(report.free_stack_differing, 2);
        assert_eq!(report.ram, vec![(0x000E, 0, 1), (0x01F1, 0, 1), (0x0700, 2, 0)]);
        assert!(!report.agrees());
    }

    /// The bundled demo's console at power-on.
    fn demo() -> anes_lockstep::NesMachine {
        let config = anes_core::PowerOnProfile::default().config();
        anes_lockstep::NesMachine::from_ines_with_region(crate::bundled::DEMO_ROM, config, None).unwrap()
    }

    #[test]
    fn the_sampling_offset_finds_the_instant_that_holds_the_other_ram() {
        let input = |_| anes_core::movie::FrameInput::default();
        // The "other" emulator is anes itself, sampled 40 instructions after the end of frame 30.
        let mut other = demo();
        for _ in 0..30 {
            other.run_frame(input(0));
        }
        let frame_end = other.nes().cpu_cycle() as i64;
        other.begin_frame(input(0));
        for _ in 0..40 {
            other.step_instruction();
        }
        let ram = other.nes().ram().to_vec();
        let offset = other.nes().cpu_cycle() as i64 - frame_end;
        let found = sampling_offset(&mut demo(), input, 30, &ram);
        assert!(found.matches.contains(&offset), "{offset} in {:?}", found.matches);
        // At the frame end itself: 0.
        let mut at_end = demo();
        for _ in 0..30 {
            at_end.run_frame(input(0));
        }
        let found = sampling_offset(&mut demo(), input, 30, at_end.nes().ram());
        assert_eq!(found.matches.first(), Some(&0));
        // RAM the demo never holds: no match, and the search covered the frames around.
        let mut near = at_end.nes().ram().to_vec();
        near[0x7FF] ^= 0xA5;
        let found = sampling_offset(&mut demo(), input, 30, &near);
        assert!(found.matches.is_empty());
        let (offset, bytes) = found.closest.expect("the closest instant");
        assert_eq!(bytes.len(), 1, "at {offset}: {bytes:?}");
        assert_eq!(bytes[0].0, 0x7FF);
        let found = sampling_offset(&mut demo(), input, 30, &[0x5A; 0x800]);
        assert!(found.matches.is_empty());
        assert!(found.searched > 4 * 1000, "{}", found.searched);
    }

    #[test]
    fn the_roms_text_loses_its_colour_codes_and_line_breaks() {
        assert_eq!(one_line(b"\x1b[0;37mTEST: x\n\x1b[0;33mPassed\x1b[0m\n"), "TEST: x Passed");
        assert_eq!(one_line(b"NMI BRK\n00 27\n"), "NMI BRK 00 27");
    }

    #[test]
    fn pictures_are_compared_by_class() {
        let ram = vec![0u8; 0x800];
        let a = [0u8, 0, 1, 0, 0, 0];
        let b = [0u8, 0, 0, 0, 0, 0];
        let report = compare(10, None, 0xFF, (&ram, &ram), (&a, &b));
        assert_eq!(report.picture_pixels_differing, Some(1));
        assert_eq!(report.first_pixel, Some((1, 0)));
        assert!(!report.agrees());
        let same = compare(10, None, 0xFF, (&ram, &ram), (&a, &a));
        assert!(same.agrees());
        let sizes = compare(10, None, 0xFF, (&ram, &ram), (&a, &a[..4]));
        assert_eq!(sizes.picture_pixels_differing, None);
        assert!(!sizes.agrees());
    }
}
