//! The NES view: two NES emulators compared by what their programs and a player see, not by their
//! internal states (which no two emulators lay out alike). A frame's view is the 2 KiB of system
//! RAM and the picture reduced to *colour classes*: each pixel replaced by the order in which its
//! colour first appears in the frame (row by row). Two pictures have equal classes exactly when a
//! one-to-one map between their colours turns one into the other, so the view compares pictures
//! drawn through two different palettes without knowing either (a palette that gives two NES
//! colours one RGB value merges their classes: give such a core a palette that keeps them apart,
//! e.g. Nestopia's `nestopia_palette=raw`).
//!
//! [`NesView`] is the anes console under this view; [`crate::RetroMachine::nes_view`] a libretro
//! NES core under it. Each side computes its own hash ([`view_hash`]), so two processes compare
//! without exchanging pictures.

use std::collections::BTreeMap;

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, StateHash};
use anes_lockstep::{Machine, MachineError, NesMachine, Probe};

use crate::whole_frames::{frame_probe, frame_record};

/// The view's RAM section (the name libretro cores' `RETRO_MEMORY_SYSTEM_RAM` has in [`crate::RetroMachine`]).
pub const SYSTEM_RAM: &str = "system_ram";
/// The view's picture section: one little-endian `u16` colour class per pixel, row by row.
pub const PICTURE_CLASSES: &str = "picture_classes";
/// The sections a view compares, in order.
pub const SECTIONS: [&str; 2] = [SYSTEM_RAM, PICTURE_CLASSES];
/// Pixels per row of the NES picture.
pub const WIDTH: usize = 256;

/// Replaces each colour of `pixels` by the order of its first appearance (0 for the first pixel's
/// colour), as little-endian `u16`s into `out` (replacing its contents). A frame with more than
/// 65,535 colours (no NES frame has more than 512) keeps counting modulo 65,536.
pub fn colour_classes(pixels: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) {
    out.clear();
    // A BTreeMap, not a HashMap: the order never matters here, but determinism rules out hashers
    // seeded per process anywhere near hashed state.
    let mut seen: BTreeMap<u32, u16> = BTreeMap::new();
    let mut last: Option<(u32, u16)> = None;
    for colour in pixels {
        let class = match last {
            Some((c, class)) if c == colour => class,
            _ => {
                let next = seen.len() as u16;
                let class = *seen.entry(colour).or_insert(next);
                last = Some((colour, class));
                class
            }
        };
        out.extend_from_slice(&class.to_le_bytes());
    }
}

/// The view's hash of one frame: RAM and colour classes (empty classes before the first frame).
pub fn view_hash(ram: &[u8], classes: &[u8]) -> StateHash {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"anes nes view v1\0");
    hasher.update(&(ram.len() as u64).to_le_bytes()).update(ram);
    hasher.update(&(classes.len() as u64).to_le_bytes()).update(classes);
    StateHash(*hasher.finalize().as_bytes())
}

/// Names byte `offset` of a view section the way reports show it: `ram[$0123]`, `pixel(x, y)`.
pub fn field_name(section: &str, offset: usize, out: &mut String) {
    use std::fmt::Write;
    let _ = match section {
        SYSTEM_RAM => write!(out, "ram[${offset:04X}]"),
        PICTURE_CLASSES => {
            let pixel = offset / 2;
            write!(out, "pixel({}, {}) colour class", pixel % WIDTH, pixel / WIDTH)
        }
        other => write!(out, "{other}[{offset:#06x}]"),
    };
}

/// Snapshot magic of [`NesView`].
const MAGIC: &[u8; 8] = b"ANESNV1\0";

/// The anes console under the NES view: frames only, compared by RAM and colour classes; its
/// record's frame and CPU cycle are both the frame count, as a libretro core's are.
#[derive(Debug)]
pub struct NesView {
    machine: NesMachine,
    frame: u64,
    classes: Vec<u8>,
    hash: StateHash,
}

impl NesView {
    /// Wraps a console; its frame count starts at 0 (the view has no picture before a frame).
    pub fn new(machine: NesMachine) -> NesView {
        let mut view = NesView { machine, frame: 0, classes: Vec::new(), hash: StateHash::default() };
        view.refresh();
        view
    }

    /// The console.
    pub fn machine(&self) -> &NesMachine {
        &self.machine
    }

    fn refresh(&mut self) {
        if self.frame == 0 {
            self.classes.clear();
        } else {
            // The PPU's pixels are palette indices with the emphasis bits: classes of those are
            // classes of any palette that keeps the 512 colours apart.
            let pixels = self.machine.nes().ppu().frame_buffer().iter().map(|&p| u32::from(p));
            colour_classes(pixels, &mut self.classes);
        }
        self.hash = view_hash(self.machine.nes().ram(), &self.classes);
    }
}

impl Machine for NesView {
    type Input = FrameInput;

    fn steps_instructions(&self) -> bool {
        false
    }

    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.machine.run_frame(input);
        self.frame += 1;
        self.refresh();
        self.record()
    }

    fn record(&self) -> FrameRecord {
        frame_record(self.frame, self.hash)
    }

    fn probe(&self) -> Probe {
        frame_probe(self.frame)
    }

    fn state_hash(&self) -> StateHash {
        self.hash
    }

    fn whole_state_hash(&self) -> Option<StateHash> {
        Some(self.machine.state_hash())
    }

    fn section_count(&self) -> usize {
        SECTIONS.len()
    }

    fn section_name(&self, index: usize) -> &'static str {
        SECTIONS.get(index).copied().unwrap_or("none")
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        match index {
            0 => self.machine.nes().ram(),
            1 => &self.classes,
            _ => &[],
        }
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        field_name(self.section_name(index), offset, out);
    }

    fn snapshot_len(&self) -> usize {
        MAGIC.len() + 8 + 4 + self.classes.len() + self.machine.snapshot_len()
    }

    /// The frame count, the classes (the console's snapshot holds no picture) and the console's
    /// snapshot.
    fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.frame.to_le_bytes());
        out.extend_from_slice(&(self.classes.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.classes);
        let mut inner = Vec::new();
        self.machine.save_state(&mut inner);
        out.extend_from_slice(&inner);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        let bad = |what: &str| MachineError::Snapshot(format!("NES view snapshot: {what}"));
        let rest = bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(|| bad("wrong magic"))?;
        let (frame, rest) = rest.split_first_chunk::<8>().ok_or_else(|| bad("truncated frame count"))?;
        let (len, rest) = rest.split_first_chunk::<4>().ok_or_else(|| bad("truncated class length"))?;
        let len = u32::from_le_bytes(*len) as usize;
        if rest.len() < len {
            return Err(bad("truncated classes"));
        }
        let (classes, inner) = rest.split_at(len);
        self.machine.load_state(inner)?;
        self.frame = u64::from_le_bytes(*frame);
        self.classes.clear();
        self.classes.extend_from_slice(classes);
        self.hash = view_hash(self.machine.nes().ram(), &self.classes);
        Ok(())
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        self.machine.picture_size()
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        self.machine.picture_rgb(out)
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        // Only RAM is state of the console; the classes are derived from its picture.
        if index != 0 {
            return Err(MachineError::Fault(format!("{} is derived, not state", self.section_name(index))));
        }
        let count = self.machine.section_count();
        let ram = (0..count)
            .find(|&i| self.machine.section_name(i) == "ram")
            .ok_or(MachineError::NoSuchSection { index, count })?;
        self.machine.flip_state_bit(ram, offset, bit)?;
        self.hash = view_hash(self.machine.nes().ram(), &self.classes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(pixels: &[u32]) -> Vec<u16> {
        let mut out = Vec::new();
        colour_classes(pixels.iter().copied(), &mut out);
        out.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()
    }

    #[test]
    fn classes_number_colours_by_first_appearance() {
        assert_eq!(classes(&[7, 7, 3, 7, 9, 3]), [0, 0, 1, 0, 2, 1]);
    }

    #[test]
    fn a_one_to_one_recolouring_keeps_the_classes_and_a_merge_does_not() {
        let picture = [0x0F, 0x30, 0x30, 0x16, 0x0F, 0x16];
        let recoloured: Vec<u32> = picture.iter().map(|c| 0x00FF_FFFF - c * 3).collect();
        assert_eq!(classes(&picture), classes(&recoloured));
        // Two colours of one picture are one colour of the other: not one-to-one.
        let merged = [0x0F, 0x30, 0x30, 0x30, 0x0F, 0x30];
        assert_ne!(classes(&picture), classes(&merged));
        // And the other way round.
        assert_ne!(classes(&merged), classes(&picture));
    }

    #[test]
    fn the_hash_covers_ram_and_classes() {
        let ram = [0u8; 0x800];
        let mut ram_b = ram;
        ram_b[0x123] = 1;
        assert_ne!(view_hash(&ram, &[]), view_hash(&ram_b, &[]));
        assert_ne!(view_hash(&ram, &[0, 0]), view_hash(&ram, &[]));
    }

    #[test]
    fn fields_are_named_by_address_and_pixel() {
        let mut name = String::new();
        field_name(SYSTEM_RAM, 0x1f5, &mut name);
        assert_eq!(name, "ram[$01F5]");
        name.clear();
        field_name(PICTURE_CLASSES, 2 * (3 * 256 + 5), &mut name);
        assert_eq!(name, "pixel(5, 3) colour class");
    }
}
