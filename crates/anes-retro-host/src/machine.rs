//! [`RetroMachine`]: a loaded libretro core as a lockstep [`Machine`] that runs whole frames.
//!
//! A frame's hash is blake3 over the frame counter and one digest per section: the serialized state
//! (`state`), each memory the core exposes (`system_ram`, `save_ram`, `video_ram`, `rtc`), each
//! writable block of its memory map (`map.NAME.START`), the picture (`picture`, in the core's pixel
//! format) and the frame's audio (`audio`, interleaved i16). So two machines whose serialized states
//! agree but whose RAM, picture or sound do not are told apart, and the comparison names the section
//! and byte where they differ. The core has no cycle counter the host can see: a record's
//! `cpu_cycle` is the frame count, and its raster position 0.

use std::ffi::c_uint;
use std::sync::{Mutex, PoisonError};

use anes_core::movie::{ConsoleCommand, FrameInput};
use anes_core::state::{FrameRecord, StateHash};
use anes_lockstep::{Machine, MachineError, Probe};

use crate::error::HostError;
use crate::ffi;
use crate::host::{MAX_PORTS, MapRegion, Picture, RetroCore};
use crate::snapshot;
use crate::whole_frames::{frame_probe, frame_record};

/// Where a section's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    State,
    Memory(c_uint),
    Map(usize),
    Picture,
    Audio,
    /// The picture's colour classes ([`crate::nes_view`]), in the NES view only.
    Classes,
}

/// The memories `retro_get_memory_data` may expose, with their section names.
const MEMORIES: [(c_uint, &str); 4] = [
    (ffi::MEMORY_SYSTEM_RAM, "system_ram"),
    (ffi::MEMORY_SAVE_RAM, "save_ram"),
    (ffi::MEMORY_VIDEO_RAM, "video_ram"),
    (ffi::MEMORY_RTC, "rtc"),
];

/// Section names live as long as the process (the trait hands out `&'static str`); each distinct
/// name is stored once, so their memory is bounded by the names cores declare.
pub fn intern(name: &str) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = names.iter().find(|n| **n == name) {
        return found;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.push(leaked);
    leaked
}

/// The RetroPad buttons of an NES-style pad byte (`anes_core::input::buttons`): A, B, Select,
/// Start and the D-pad are the RetroPad's buttons of the same names.
pub fn retropad_buttons(pad: u8) -> u16 {
    const MAP: [(u8, c_uint); 8] = [
        (0x01, ffi::joypad::A),
        (0x02, ffi::joypad::B),
        (0x04, ffi::joypad::SELECT),
        (0x08, ffi::joypad::START),
        (0x10, ffi::joypad::UP),
        (0x20, ffi::joypad::DOWN),
        (0x40, ffi::joypad::LEFT),
        (0x80, ffi::joypad::RIGHT),
    ];
    MAP.iter().filter(|(bit, _)| pad & bit != 0).fold(0, |held, (_, id)| held | 1 << id)
}

/// A libretro core as a lockstep machine (frames only).
#[derive(Debug)]
pub struct RetroMachine {
    core: RetroCore,
    frame: u64,
    names: Vec<&'static str>,
    sources: Vec<Source>,
    /// The memory map of the last load (read anew after each: a core may move its memory).
    maps: Vec<MapRegion>,
    state: Vec<u8>,
    /// Why the last serialization, a frame's or a snapshot's, failed. Behind a lock because a
    /// snapshot is taken through `&self`.
    state_error: Mutex<Option<String>>,
    /// Why the machine stopped: a power cycle left no game loaded. The core is not run again.
    failure: Option<String>,
    picture: Picture,
    audio: Vec<u8>,
    digests: Vec<[u8; 32]>,
    hash: StateHash,
    hash_audio: bool,
    /// The NES view: the hash covers `system_ram` and the colour classes only.
    nes_view: bool,
    classes: Vec<u8>,
}

impl RetroMachine {
    /// Wraps a core with its content loaded, at power-on (frame 0).
    pub fn new(core: RetroCore) -> RetroMachine {
        RetroMachine::with_audio_hashed(core, true)
    }

    /// [`RetroMachine::new`]; with `hash_audio` false the frame's hash leaves the audio out (it
    /// stays a section of snapshots and diffs). Many cores resample their sound into a buffer that
    /// no state holds, so the number of samples a frame hands over can differ after a load while
    /// the emulated machine does not: this tells the two apart.
    pub fn with_audio_hashed(core: RetroCore, hash_audio: bool) -> RetroMachine {
        RetroMachine::build(core, hash_audio, false)
    }

    fn build(core: RetroCore, hash_audio: bool, nes_view: bool) -> RetroMachine {
        let mut machine = RetroMachine {
            core,
            frame: 0,
            names: Vec::new(),
            sources: Vec::new(),
            maps: Vec::new(),
            state: Vec::new(),
            state_error: Mutex::new(None),
            failure: None,
            picture: Picture::default(),
            audio: Vec::new(),
            digests: Vec::new(),
            hash: StateHash::default(),
            hash_audio,
            nes_view,
            classes: Vec::new(),
        };
        machine.build_sections();
        machine.refresh();
        machine
    }

    /// The sections of the game loaded now: the memories the core exposes and its memory map, as
    /// of this load (a map region of an earlier one may point at memory the core has freed).
    fn build_sections(&mut self) {
        self.names.clear();
        self.sources.clear();
        self.names.push("state");
        self.sources.push(Source::State);
        for (id, name) in MEMORIES {
            if self.core.memory(id).is_some() {
                self.names.push(name);
                self.sources.push(Source::Memory(id));
            }
        }
        self.maps = self.core.map_regions();
        for (index, map) in self.maps.iter().enumerate() {
            self.names.push(intern(&map.name));
            self.sources.push(Source::Map(index));
        }
        self.names.extend(["picture", "audio"]);
        self.sources.extend([Source::Picture, Source::Audio]);
        if self.nes_view {
            self.names.push(crate::nes_view::PICTURE_CLASSES);
            self.sources.push(Source::Classes);
        }
        self.digests.clear();
        self.digests.resize(self.names.len(), [0; 32]);
    }

    /// A NES core under the NES view ([`crate::nes_view`]): a frame's hash covers the 2 KiB of
    /// `system_ram` and the picture's colour classes (section `picture_classes`), so the core
    /// compares with another NES emulator ([`crate::nes_view::NesView`]) whatever its palette and
    /// state layout. The other sections stay in snapshots for restores and evidence.
    pub fn nes_view(core: RetroCore) -> RetroMachine {
        RetroMachine::build(core, false, true)
    }

    /// The core.
    pub fn core(&self) -> &RetroCore {
        &self.core
    }

    /// The core, mutably (options, direct memory access).
    pub fn core_mut(&mut self) -> &mut RetroCore {
        &mut self.core
    }

    /// Frames run since power-on (or as the loaded snapshot says).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The serialized state taken at the end of the last frame (empty when serializing failed).
    pub fn state_bytes(&self) -> &[u8] {
        &self.state
    }

    /// Why the machine failed (a power cycle whose `retro_load_game` failed: the core is not run
    /// or serialized again, and the hash covers an empty state), else why the last serialization,
    /// a frame's or a snapshot's, failed (the hash or the snapshot then has an empty state).
    pub fn state_error(&self) -> Option<String> {
        self.failure
            .clone()
            .or_else(|| self.state_error.lock().unwrap_or_else(PoisonError::into_inner).clone())
    }

    fn set_state_error(&self, error: Option<String>) {
        *self.state_error.lock().unwrap_or_else(PoisonError::into_inner) = error;
    }

    /// The index of the section named `name`.
    pub fn section_index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| *n == name)
    }

    /// The last picture.
    pub fn picture(&self) -> &Picture {
        &self.picture
    }

    /// Serializes again, takes the picture and audio from the core and rehashes.
    fn refresh(&mut self) {
        let error = self.core.serialize(&mut self.state).err().map(|e| e.to_string());
        self.set_state_error(error);
        self.core.picture_into(&mut self.picture);
        self.audio.clear();
        self.core.audio_bytes_into(&mut self.audio);
        if self.nes_view {
            self.refresh_view();
            return;
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.frame.to_le_bytes());
        for index in 0..self.names.len() {
            let digest = *blake3::hash(self.section_bytes(index)).as_bytes();
            self.digests[index] = digest;
            if self.sources[index] == Source::Audio && !self.hash_audio {
                continue;
            }
            hasher.update(self.names[index].as_bytes()).update(&digest);
        }
        if self.sources.contains(&Source::Picture) {
            let (w, h, f) = (self.picture.width, self.picture.height, self.picture.format);
            hasher.update(&w.to_le_bytes()).update(&h.to_le_bytes()).update(&f.to_le_bytes());
        }
        self.hash = StateHash(*hasher.finalize().as_bytes());
    }

    /// The NES view's hash: `system_ram` and the colour classes (none before the first frame, as
    /// [`crate::nes_view::NesView`] has none).
    fn refresh_view(&mut self) {
        let bpp = Picture::bytes_per_pixel(self.picture.format);
        if self.frame == 0 {
            self.classes.clear();
        } else {
            let pixels = self.picture.bytes.chunks_exact(bpp).map(|p| match p {
                [b, g, r, _] => u32::from_le_bytes([*b, *g, *r, 0]),
                _ => u32::from(u16::from_le_bytes([p[0], p[1]])),
            });
            crate::nes_view::colour_classes(pixels, &mut self.classes);
        }
        let ram = self.core.memory(ffi::MEMORY_SYSTEM_RAM).unwrap_or(&[]);
        self.hash = crate::nes_view::view_hash(ram, &self.classes);
        for index in 0..self.names.len() {
            self.digests[index] = *blake3::hash(self.section_bytes(index)).as_bytes();
        }
    }

    fn apply(&mut self, input: FrameInput) {
        match input.command {
            ConsoleCommand::None => {}
            ConsoleCommand::SoftReset => self.core.reset(),
            ConsoleCommand::PowerCycle if self.failure.is_none() => {
                if let Err(e) = self.core.power_cycle() {
                    self.failure = Some(format!("power cycle: {e}"));
                }
                self.build_sections();
            }
            ConsoleCommand::PowerCycle => {}
        }
        let mut pads = [0u16; MAX_PORTS];
        for (held, pad) in pads.iter_mut().zip(input.pads) {
            *held = retropad_buttons(pad);
        }
        self.core.set_joypads(pads);
    }
}

impl Machine for RetroMachine {
    type Input = FrameInput;

    fn steps_instructions(&self) -> bool {
        false
    }

    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.apply(input);
        // Without a game the core refuses (and runs nothing); the frame still counts, so the
        // failed machine's records stay in step with its peer's.
        if let (Err(e), None) = (self.core.try_run_frame(), &self.failure) {
            self.failure = Some(format!("retro_run: {e}"));
        }
        // A core that declared another memory map during the frame: its sections, read anew.
        if self.maps.iter().any(|region| self.core.map_bytes(region).is_empty()) {
            self.build_sections();
        }
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

    fn section_count(&self) -> usize {
        self.names.len()
    }

    fn section_name(&self, index: usize) -> &'static str {
        self.names.get(index).copied().unwrap_or("none")
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        match self.sources.get(index) {
            Some(Source::State) => &self.state,
            Some(Source::Memory(id)) => self.core.memory(*id).unwrap_or(&[]),
            Some(Source::Map(i)) => self.maps.get(*i).map_or(&[], |region| self.core.map_bytes(region)),
            Some(Source::Picture) => &self.picture.bytes,
            Some(Source::Audio) => &self.audio,
            Some(Source::Classes) => &self.classes,
            None => &[],
        }
    }

    fn section_digest(&self, index: usize) -> StateHash {
        StateHash(self.digests.get(index).copied().unwrap_or_default())
    }

    fn snapshot_len(&self) -> usize {
        snapshot::HEADER_LEN
            + (0..self.names.len())
                .map(|i| 6 + self.names[i].len() + self.section_bytes(i).len())
                .sum::<usize>()
    }

    /// Serializes the core anew (not the state taken at the end of the frame), so two snapshots in
    /// a row show whether `retro_serialize` repeats itself.
    ///
    /// A failed serialization leaves the snapshot's state empty (`load_state` refuses it) and its
    /// reason in [`RetroMachine::state_error`].
    fn save_state(&self, out: &mut Vec<u8>) {
        let mut fresh = Vec::with_capacity(self.state.len());
        if let Err(e) = self.core.serialize(&mut fresh) {
            self.set_state_error(Some(format!("snapshot: {e}")));
        }
        let sections: Vec<(&str, &[u8])> = (0..self.names.len())
            .map(|i| {
                (self.names[i], if self.sources[i] == Source::State { &fresh } else { self.section_bytes(i) })
            })
            .collect();
        let picture = (self.picture.width, self.picture.height, self.picture.format);
        if let Err(e) = snapshot::try_write(out, self.frame, picture, &sections) {
            // An empty snapshot: `load_state` refuses it as cut off.
            out.clear();
            self.set_state_error(Some(format!("snapshot: {e}")));
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        let parsed = snapshot::parse(bytes).map_err(|e| MachineError::Snapshot(e.to_string()))?;
        let state =
            parsed.section("state").ok_or_else(|| MachineError::Snapshot("no state section".into()))?;
        if state.is_empty() {
            // A core that serializes at all never writes 0 bytes (`retro_serialize_size` 0 is an
            // error): the state could not be taken.
            return Err(MachineError::Snapshot(
                "its state section is empty: the core's state could not be serialized when it was taken"
                    .into(),
            ));
        }
        self.core.unserialize(state).map_err(|e| MachineError::Snapshot(e.to_string()))?;
        let (width, height, format) = parsed.picture;
        let picture_bytes = parsed.section("picture").unwrap_or(&[]);
        self.core.set_picture(&Picture { width, height, format, bytes: picture_bytes.to_vec() });
        self.core.set_audio_bytes(parsed.section("audio").unwrap_or(&[]));
        self.frame = parsed.frame;
        self.refresh();
        Ok(())
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        (self.picture.width > 0 && self.picture.height > 0)
            .then_some((self.picture.width, self.picture.height))
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        self.picture.to_rgb(out);
        !out.is_empty()
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        let count = self.names.len();
        let source = *self.sources.get(index).ok_or(MachineError::NoSuchSection { index, count })?;
        if bit > 7 {
            return Err(MachineError::Fault(format!("bit {bit} of a byte")));
        }
        let len = self.section_bytes(index).len();
        if offset >= len {
            return Err(MachineError::Fault(format!(
                "offset {offset:#x} is outside section {} ({len} bytes)",
                self.names[index]
            )));
        }
        let mask = 1u8 << bit;
        match source {
            Source::State => {
                let mut state = self.state.clone();
                state[offset] ^= mask;
                self.core.unserialize(&state).map_err(|e: HostError| MachineError::Fault(e.to_string()))?;
            }
            // The core's lengths may change between two calls: indexed with `get_mut`.
            Source::Memory(id) => {
                if let Some(byte) = self.core.memory_mut(id).and_then(|m| m.get_mut(offset)) {
                    *byte ^= mask;
                }
            }
            Source::Map(i) => {
                let region = self.maps[i].clone();
                if let Some(byte) = self.core.map_bytes_mut(&region).get_mut(offset) {
                    *byte ^= mask;
                }
            }
            Source::Picture => {
                self.picture.bytes[offset] ^= mask;
                let picture = self.picture.clone();
                self.core.set_picture(&picture);
            }
            Source::Classes => {
                return Err(MachineError::Fault(
                    "picture_classes is derived from the picture, not state".into(),
                ));
            }
            Source::Audio => {
                self.audio[offset] ^= mask;
                let audio = self.audio.clone();
                self.core.set_audio_bytes(&audio);
            }
        }
        self.refresh();
        Ok(())
    }
}
