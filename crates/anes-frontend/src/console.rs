//! [`Console`]: a console as a frontend drives it, one frame at a time, with its picture, audio,
//! snapshots in fixed-size buffers, battery RAM and Game Genie codes.

use anes_core::cart::{GameGenieCode, GameGenieError, MAX_GAME_GENIE_CODES};
use anes_core::movie::FrameInput;
use anes_core::state::{SNAPSHOT_MAGIC, SnapshotError, StateHash};
use anes_core::{BatteryRamError, Cartridge, Nes, NesConfig, Region, RomError};
use thiserror::Error;

use crate::audio::{AudioRateError, StereoResampler, check_rate};
use crate::palette::{Palette, PictureError, PixelFormat};
use crate::timing::{Overscan, frames_per_second_of};

/// First bytes of a console snapshot.
pub const CONSOLE_STATE_MAGIC: [u8; 8] = *b"ANESCONS";
/// The console snapshot format version this build writes and reads.
pub const CONSOLE_STATE_VERSION: u16 = 1;
/// Bytes of one Game Genie slot in a console snapshot: address (u16 LE), value, 1 when a compare
/// byte follows, the compare byte, 3 reserved zero bytes.
const CODE_SLOT_LEN: usize = 8;
/// Bytes before the core snapshot: magic, version, code count, 5 reserved zero bytes, the slots.
pub const CONSOLE_STATE_HEADER_LEN: usize = 16 + MAX_GAME_GENIE_CODES * CODE_SLOT_LEN;

/// Audio rate a console starts with.
pub const DEFAULT_AUDIO_RATE: f64 = 48_000.0;

/// Why a console could not be built.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConsoleError {
    /// The ROM was refused.
    #[error(transparent)]
    Rom(#[from] RomError),
    /// The audio rate is out of range.
    #[error(transparent)]
    AudioRate(#[from] AudioRateError),
}

/// Why a console snapshot was refused. The console is left as it was.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConsoleStateError {
    /// The buffer is not the size of this console's snapshots ([`Console::snapshot_len`]).
    #[error("console snapshot is {len} bytes; this console's snapshots are {expected}")]
    Size {
        /// Bytes given.
        len: usize,
        /// This console's snapshot size.
        expected: usize,
    },
    /// Not a console snapshot.
    #[error("bad magic at offset 0: expected \"ANESCONS\", found {found:02X?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// Another version of the format.
    #[error(
        "console snapshot version {found} (offset 8) is not supported; this build reads version {CONSOLE_STATE_VERSION}"
    )]
    UnsupportedVersion {
        /// The version found.
        found: u16,
    },
    /// A malformed Game Genie table.
    #[error("console snapshot Game Genie table, byte {offset}: {why}")]
    Codes {
        /// Offset of the bad byte.
        offset: usize,
        /// What is wrong with it.
        why: String,
    },
    /// The machine snapshot inside was refused.
    #[error("machine snapshot at offset {CONSOLE_STATE_HEADER_LEN}: {0}")]
    Machine(#[from] SnapshotError),
    /// A bare machine snapshot (`ANESSNAP`, from [`Nes::save_state`]) was refused.
    #[error("machine snapshot: {0}")]
    Bare(SnapshotError),
}

/// The machine snapshot inside a console snapshot (the bytes after the header): what
/// [`Nes::load_state`] restores. The header is checked as [`Console::load_state`] checks it. A
/// machine snapshot taken with Game Genie codes plugged in carries them in its ROM identity, so a
/// [`Nes`] takes it only with the same codes plugged in ([`Nes::set_game_genie_codes`]).
///
/// The other way needs no conversion: [`Console::load_state`] also takes a bare machine snapshot,
/// and a console's machine snapshot is `console.nes().save_state_into(..)`.
///
/// ```
/// use anes_frontend::{Console, machine_snapshot};
/// # let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
/// let mut console = Console::new(&rom)?;
/// console.run_frame(Default::default());
/// let mut state = vec![0u8; console.snapshot_len()];
/// console.save_state_into(&mut state)?;
///
/// let mut nes = Console::new(&rom)?.nes().clone();
/// nes.load_state(machine_snapshot(&state)?)?;
/// assert_eq!(nes.state_hash(), console.state_hash());
///
/// let mut bare = vec![0u8; console.nes().snapshot_len()];
/// console.run_frame(Default::default());
/// console.nes().save_state_into(&mut bare)?;
/// let mut other = Console::new(&rom)?;
/// other.load_state(&bare)?;
/// assert_eq!(other.state_hash(), console.state_hash());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn machine_snapshot(console_snapshot: &[u8]) -> Result<&[u8], ConsoleStateError> {
    check_header(console_snapshot)?;
    Ok(&console_snapshot[CONSOLE_STATE_HEADER_LEN..])
}

/// The magic and version of a console snapshot, then its Game Genie table: the codes and how many.
fn check_header(bytes: &[u8]) -> Result<([GameGenieCode; MAX_GAME_GENIE_CODES], usize), ConsoleStateError> {
    let Some(header) = bytes.get(..CONSOLE_STATE_HEADER_LEN) else {
        return Err(ConsoleStateError::Size { len: bytes.len(), expected: CONSOLE_STATE_HEADER_LEN });
    };
    let magic: [u8; 8] = header[..8].try_into().expect("8 bytes");
    if magic != CONSOLE_STATE_MAGIC {
        return Err(ConsoleStateError::BadMagic { found: magic });
    }
    let version = u16::from_le_bytes([header[8], header[9]]);
    if version != CONSOLE_STATE_VERSION {
        return Err(ConsoleStateError::UnsupportedVersion { found: version });
    }
    decode_codes(header)
}

/// A console as a frontend drives it.
///
/// Each [`Console::run_frame`] runs the core to the end of a frame and leaves that frame's picture
/// ([`Console::picture`], or converted by [`Console::write_picture`]) and audio ([`Console::audio`],
/// interleaved stereo `i16` at [`Console::audio_rate`]). Nothing here allocates per frame: not
/// running, converting, producing audio, saving into or loading from a fixed buffer
/// (`crates/anes-frontend/tests/alloc_free.rs` counts).
///
/// ```
/// use anes_frontend::{Console, Overscan, PixelFormat};
/// # let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
/// let mut console = Console::new(&rom)?;
/// let mut picture = vec![0u8; 256 * 224 * 4];
/// let mut state = vec![0u8; console.snapshot_len()];
/// console.run_frame(Default::default());
/// console.save_state_into(&mut state)?;
/// for _ in 0..3 {
///     console.run_frame(Default::default());
///     console.write_picture(PixelFormat::Rgba8888, Overscan::NTSC_TV, &mut picture)?;
///     assert!(console.audio().len() >= 2 * 790); // 48 kHz / 60.1 frames, two channels
/// }
/// let after_four = console.state_hash();
/// console.load_state(&state)?;
/// for _ in 0..3 {
///     console.run_frame(Default::default());
/// }
/// assert_eq!(console.state_hash(), after_four);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Console {
    nes: Nes,
    palette: Palette,
    /// `None` when audio is off (the APU then runs lazily, which is faster).
    resampler: Option<StereoResampler>,
    /// Mono samples drained from the core, reused every frame.
    core_audio: Vec<f32>,
    /// The last frame's audio, interleaved stereo.
    audio: Vec<i16>,
    /// The battery RAM as last saved or loaded, for [`Console::battery_ram_dirty`].
    battery_saved: Box<[u8]>,
}

/// Core samples a frame of a `region` console can produce at `rate` Hz, with slack for a frame that
/// runs long.
fn core_samples_per_frame(rate: f64, region: Region) -> usize {
    (rate / frames_per_second_of(region) * 1.5) as usize + 64
}

impl Console {
    /// Powers a console on with the ROM (iNES or NES 2.0 bytes), the default power-on
    /// ([`NesConfig::default`]), the built-in palette and audio at [`DEFAULT_AUDIO_RATE`].
    pub fn new(rom: &[u8]) -> Result<Console, ConsoleError> {
        Console::with_config(rom, NesConfig::default(), Some(DEFAULT_AUDIO_RATE))
    }

    /// Powers a console on with `config`, audio at `audio_rate` Hz (`None`: no audio). A
    /// [`anes_core::PowerOnProfile`] names documented configs: the default, the least forgiving
    /// `quick-power-cycle`, `random:SEED`, ...; the choices are the console's state, so its hash,
    /// snapshots and power cycles carry them.
    ///
    /// ```
    /// use anes_frontend::Console;
    /// use anes_frontend::anes_core::{Nes, Cartridge, PowerOnProfile};
    /// # let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    /// let profile: PowerOnProfile = "quick-power-cycle".parse()?;
    /// let console = Console::with_config(&rom, profile.config(), None)?;
    /// assert_eq!(console.config(), profile.config());
    /// let nes = Nes::new(Cartridge::from_ines(&rom)?, profile.config());
    /// assert_eq!(console.state_hash(), nes.state_hash(), "the same machine as the core's");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_config(
        rom: &[u8],
        config: NesConfig,
        audio_rate: Option<f64>,
    ) -> Result<Console, ConsoleError> {
        Console::with_region(rom, config, None, audio_rate)
    }

    /// [`Console::with_config`] for a console of `region` (`None`: the ROM header's, NTSC for iNES
    /// 1.0 and multi-region ROMs). Audio is resampled from the region's CPU clock.
    pub fn with_region(
        rom: &[u8],
        config: NesConfig,
        region: Option<Region>,
        audio_rate: Option<f64>,
    ) -> Result<Console, ConsoleError> {
        let nes = Nes::with_region(Cartridge::from_ines(rom)?, config, region);
        let battery_saved = nes.cartridge().battery_ram().unwrap_or_default().into();
        let mut console = Console {
            nes,
            palette: Palette::builtin(),
            resampler: None,
            core_audio: Vec::new(),
            audio: Vec::new(),
            battery_saved,
        };
        console.set_audio_rate(audio_rate)?;
        Ok(console)
    }

    /// Runs one frame with `input` (both pads' buttons, and a reset or power cycle command) and
    /// collects its audio.
    pub fn run_frame(&mut self, input: FrameInput) {
        self.nes.begin_frame(input);
        self.nes.run_until_frame_end();
        self.audio.clear();
        if let Some(resampler) = &mut self.resampler {
            loop {
                let n = self.nes.drain_audio(&mut self.core_audio);
                resampler.process(&self.core_audio[..n], &mut self.audio);
                if n < self.core_audio.len() {
                    break;
                }
            }
        }
    }

    /// The last frame's picture as the core made it: 256x240 pixels, palette index in bits 0-5 and
    /// emphasis in bits 6-8.
    pub fn picture(&self) -> &[u16] {
        self.nes.ppu().frame_buffer()
    }

    /// Writes the last frame's picture cropped by `crop` in `format` into `out` through the
    /// console's palette (see [`Palette::write`]).
    pub fn write_picture(
        &self,
        format: PixelFormat,
        crop: Overscan,
        out: &mut [u8],
    ) -> Result<(), PictureError> {
        self.palette.write(format, self.picture(), crop, out)
    }

    /// The palette pictures are written through.
    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    /// Replaces the palette (e.g. one from a `.pal` file, [`Palette::load`]).
    pub fn set_palette(&mut self, palette: Palette) {
        self.palette = palette;
    }

    /// The last frame's audio: interleaved stereo `i16` (left = right; the NES is mono) at
    /// [`Console::audio_rate`]. Empty when audio is off.
    pub fn audio(&self) -> &[i16] {
        &self.audio
    }

    /// The audio output rate in Hz, `None` when audio is off.
    pub fn audio_rate(&self) -> Option<f64> {
        self.resampler.as_ref().map(StereoResampler::output_rate)
    }

    /// Sets the audio output rate (any rate from 8 kHz to 384 kHz, fractional included), or turns
    /// audio off with `None`. A frontend keeping audio and video in sync nudges the rate every few
    /// frames: a change of up to [`crate::audio::MAX_RATE_ADJUSTMENT`] from the rate last set
    /// beyond it allocates nothing. Beyond that the core's decimator is set to the nearest whole Hz
    /// and the resampler rebuilt (allocates). Audio is output, never state: the rate does not affect
    /// the emulation, its hash or snapshots.
    pub fn set_audio_rate(&mut self, rate: Option<f64>) -> Result<(), AudioRateError> {
        let Some(rate) = rate else {
            self.nes.set_audio_sample_rate(None);
            self.resampler = None;
            self.audio.clear();
            return Ok(());
        };
        let rate = check_rate(rate)?;
        let region = self.nes.region();
        if let Some(resampler) = &mut self.resampler {
            if (rate / resampler.input_rate() - 1.0).abs() <= crate::audio::MAX_RATE_ADJUSTMENT {
                return resampler.set_output_rate(rate);
            }
        }
        // The core emits whole hertz, counted against the region's CPU clock; the resampler takes
        // them to the exact `rate`.
        let asked = rate.round() as u32;
        let core_rate = f64::from(asked);
        let per_frame = core_samples_per_frame(core_rate, region);
        self.nes.set_audio_sample_rate(Some(asked));
        self.resampler = Some(StereoResampler::with_input_rate_hz(core_rate, rate, per_frame)?);
        self.core_audio = vec![0.0; per_frame];
        // Room for a frame at the highest rate the resampler serves without rebuilding.
        let out_per_frame = core_samples_per_frame(rate * (1.0 + crate::audio::MAX_RATE_ADJUSTMENT), region);
        self.audio = Vec::with_capacity(2 * out_per_frame);
        Ok(())
    }

    /// The size of this console's snapshots in bytes: fixed for a given ROM, whatever the codes.
    pub fn snapshot_len(&self) -> usize {
        CONSOLE_STATE_HEADER_LEN + self.nes.snapshot_len()
    }

    /// Writes a snapshot (the Game Genie codes, then the machine's snapshot) into the first
    /// [`Console::snapshot_len`] bytes of `out`; returns that length. Allocation-free.
    pub fn save_state_into(&self, out: &mut [u8]) -> Result<usize, anes_core::state::SnapshotBufferError> {
        let len = self.snapshot_len();
        if out.len() < len {
            return Err(anes_core::state::SnapshotBufferError { needed: len, len: out.len() });
        }
        let (header, machine) = out[..len].split_at_mut(CONSOLE_STATE_HEADER_LEN);
        header.fill(0);
        header[..8].copy_from_slice(&CONSOLE_STATE_MAGIC);
        header[8..10].copy_from_slice(&CONSOLE_STATE_VERSION.to_le_bytes());
        let mut count = 0u8;
        for (slot, code) in header[16..].chunks_exact_mut(CODE_SLOT_LEN).zip(self.nes.game_genie_codes()) {
            slot[..2].copy_from_slice(&code.address.to_le_bytes());
            slot[2] = code.value;
            slot[3] = u8::from(code.compare.is_some());
            slot[4] = code.compare.unwrap_or(0);
            count += 1;
        }
        header[10] = count;
        self.nes.save_state_into(machine)?;
        Ok(len)
    }

    /// Restores a snapshot written by [`Console::save_state_into`] on a console running the same
    /// ROM, Game Genie codes included (a snapshot is the whole machine: the codes it ran with come
    /// back with it). A bare machine snapshot ([`Nes::save_state`], `ANESSNAP`) is taken too, with
    /// the codes plugged in now (see [`machine_snapshot`]). The audio rate and the palette are this
    /// console's, kept whatever the snapshot: they are output, not state. Everything is checked
    /// before anything changes; on error the console is as it was. Allocation-free.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<(), ConsoleStateError> {
        if bytes.starts_with(&SNAPSHOT_MAGIC) {
            return self.nes.load_state(bytes).map_err(ConsoleStateError::Bare);
        }
        let expected = self.snapshot_len();
        if bytes.len() != expected {
            return Err(ConsoleStateError::Size { len: bytes.len(), expected });
        }
        let (codes, count) = check_header(bytes)?;
        let codes = &codes[..count];
        let machine = &bytes[CONSOLE_STATE_HEADER_LEN..];
        if self.nes.game_genie_codes().eq(codes.iter()) {
            return Ok(self.nes.load_state(machine)?);
        }
        // The machine snapshot's identity check needs the snapshot's codes plugged in first; if the
        // snapshot is then refused, the codes the console had go back in.
        let (previous, previous_count) = self.codes_array();
        self.nes
            .set_game_genie_codes(codes)
            .map_err(|error| ConsoleStateError::Codes { offset: 10, why: error.to_string() })?;
        if let Err(error) = self.nes.load_state(machine) {
            self.nes.set_game_genie_codes(&previous[..previous_count]).expect("the codes it had are valid");
            return Err(error.into());
        }
        Ok(())
    }

    /// The plugged-in codes copied into an array (no allocation), and how many there are.
    fn codes_array(&self) -> ([GameGenieCode; MAX_GAME_GENIE_CODES], usize) {
        let mut codes = [GameGenieCode { address: 0x8000, value: 0, compare: None }; MAX_GAME_GENIE_CODES];
        let mut count = 0;
        for (slot, code) in codes.iter_mut().zip(self.nes.game_genie_codes()) {
            *slot = *code;
            count += 1;
        }
        (codes, count)
    }

    /// The power-on choices this console's state holds: those it was built with, or those of the
    /// last snapshot loaded (its next power cycle repeats them).
    pub fn config(&self) -> NesConfig {
        self.nes.config()
    }

    /// blake3 of the whole machine state and identity, Game Genie codes included (see
    /// [`Nes::state_hash`]): what two consoles fed the same inputs agree on.
    pub fn state_hash(&self) -> StateHash {
        self.nes.state_hash()
    }

    /// Plugs in these Game Genie codes, replacing any before (see [`Nes::set_game_genie_codes`]).
    pub fn set_game_genie_codes(&mut self, codes: &[GameGenieCode]) -> Result<(), GameGenieError> {
        self.nes.set_game_genie_codes(codes)
    }

    /// The battery-backed RAM, to write to a save file; `None` when the cartridge has none.
    pub fn battery_ram(&self) -> Option<&[u8]> {
        self.nes.cartridge().battery_ram()
    }

    /// True when the battery RAM differs from what was last saved ([`Console::mark_battery_ram_saved`])
    /// or loaded: time to write the save file. Always false without a battery.
    pub fn battery_ram_dirty(&self) -> bool {
        self.battery_ram().is_some_and(|ram| ram != &self.battery_saved[..])
    }

    /// Records the battery RAM as saved (the frontend wrote [`Console::battery_ram`] to its file).
    pub fn mark_battery_ram_saved(&mut self) {
        if let Some(ram) = self.nes.cartridge().battery_ram() {
            self.battery_saved.copy_from_slice(ram);
        }
    }

    /// Loads a save file into the battery RAM (see [`Nes::load_battery_ram`]); it then counts as
    /// saved.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), BatteryRamError> {
        self.nes.load_battery_ram(data)?;
        self.mark_battery_ram_saved();
        Ok(())
    }

    /// The console's 2 KiB of work RAM, for achievement and cheat tools.
    pub fn system_ram(&self) -> &[u8; 0x800] {
        self.nes.ram()
    }

    /// The work RAM, writable (a poke is a state change like any other).
    pub fn system_ram_mut(&mut self) -> &mut [u8; 0x800] {
        self.nes.ram_mut()
    }

    /// Presses the reset button now (between frames).
    pub fn reset(&mut self) {
        self.nes.soft_reset();
    }

    /// Switches the console off and on again now (battery RAM and Game Genie codes stay).
    pub fn power_cycle(&mut self) {
        self.nes.power_cycle();
    }

    /// The machine, for everything else (peeks, records, the state sections).
    pub fn nes(&self) -> &Nes {
        &self.nes
    }

    /// The machine, mutable.
    pub fn nes_mut(&mut self) -> &mut Nes {
        &mut self.nes
    }
}

/// The Game Genie table of a console snapshot header: every byte checked.
fn decode_codes(header: &[u8]) -> Result<([GameGenieCode; MAX_GAME_GENIE_CODES], usize), ConsoleStateError> {
    let bad = |offset: usize, why: String| ConsoleStateError::Codes { offset, why };
    let count = usize::from(header[10]);
    if count > MAX_GAME_GENIE_CODES {
        return Err(bad(10, format!("{count} codes; at most {MAX_GAME_GENIE_CODES}")));
    }
    if let Some(at) = header[11..16].iter().position(|&b| b != 0) {
        return Err(bad(11 + at, "reserved byte is not zero".into()));
    }
    let mut codes = [GameGenieCode { address: 0x8000, value: 0, compare: None }; MAX_GAME_GENIE_CODES];
    for (index, slot) in header[16..].chunks_exact(CODE_SLOT_LEN).enumerate() {
        let offset = 16 + index * CODE_SLOT_LEN;
        if index >= count {
            if let Some(at) = slot.iter().position(|&b| b != 0) {
                return Err(bad(
                    offset + at,
                    format!("slot {index} is past the {count} codes and must be zero"),
                ));
            }
            continue;
        }
        let address = u16::from_le_bytes([slot[0], slot[1]]);
        if address < 0x8000 {
            return Err(bad(offset, format!("address ${address:04X} is outside $8000-$FFFF")));
        }
        let compare = match slot[3] {
            0 if slot[4] == 0 => None,
            0 => return Err(bad(offset + 4, "compare byte set without its flag".into())),
            1 => Some(slot[4]),
            flag => return Err(bad(offset + 3, format!("compare flag {flag} is neither 0 nor 1"))),
        };
        if let Some(at) = slot[5..].iter().position(|&b| b != 0) {
            return Err(bad(offset + 5 + at, "reserved byte is not zero".into()));
        }
        codes[index] = GameGenieCode { address, value: slot[2], compare };
    }
    Ok((codes, count))
}
