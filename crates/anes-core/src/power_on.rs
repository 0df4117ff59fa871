//! What a console holds at power-on, where real hardware leaves it to chance or to the model: the
//! choices ([`RamInit`], [`PaletteInit`], [`VblankAtPowerOn`], [`PpuWarmUp`], and the CPU/PPU phase of
//! [`NesConfig`]) and the documented sets of them, [`PowerOnProfile`].
//!
//! Sources (nesdev wiki): "PPU power up state" (PPUSTATUS at power "+0+x xxxx", VBlank and sprite
//! overflow often set; writes to PPUCTRL, PPUMASK, PPUSCROLL and PPUADDR ignored until about 29658
//! CPU cycles after reset, when the internal reset signal is cleared at the end of the first VBlank;
//! after less than 20 s off, PPUSTATUS = $80 and writes ignored as after a reset; palette, OAM and
//! nametable RAM unspecified), "CPU power up state" (work RAM unreliable) and "Init code" (wait for
//! two VBlanks before using the PPU). blargg's `power_up_palette` test holds the palette RAM one
//! console powered on with ([`CONSOLE_PALETTE`]).

use thiserror::Error;

/// What a RAM (work RAM, OAM) holds at power-on. Real RAM powers on with a chip-dependent, partly
/// random pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum RamInit {
    /// All zeros (what the conformance ROMs expect).
    #[default]
    Zeros = 0,
    /// All $FF.
    Ones = 1,
    /// Pseudo-random bytes from the config's seed (splitmix64): different seeds model different power-ons.
    Seeded = 2,
}

impl RamInit {
    /// Decodes the stored byte.
    pub const fn from_u8(value: u8) -> Option<RamInit> {
        match value {
            0 => Some(RamInit::Zeros),
            1 => Some(RamInit::Ones),
            2 => Some(RamInit::Seeded),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            RamInit::Zeros => "$00",
            RamInit::Ones => "$FF",
            RamInit::Seeded => "seeded",
        }
    }
}

/// What palette RAM holds at power-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum PaletteInit {
    /// All $00 (a black-and-grey screen until the program writes it; anes before issue 49).
    #[default]
    Zeros = 0,
    /// [`CONSOLE_PALETTE`], read from one console.
    Console = 1,
}

impl PaletteInit {
    /// Decodes the stored byte.
    pub const fn from_u8(value: u8) -> Option<PaletteInit> {
        match value {
            0 => Some(PaletteInit::Zeros),
            1 => Some(PaletteInit::Console),
            _ => None,
        }
    }
}

/// PPUSTATUS's flags at power-on ("+0+x xxxx": VBlank and sprite overflow are often set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum VblankAtPowerOn {
    /// VBlank and sprite overflow set: a first `BIT $2002` / `BPL` wait ends at once (anes before
    /// issue 49, and every console powered on again less than 20 s after it was switched off).
    Set = 0,
    /// Both clear: the first wait ends when the first VBlank starts, about 27384 CPU cycles in.
    Clear = 1,
}

impl VblankAtPowerOn {
    /// Decodes the stored byte.
    pub const fn from_u8(value: u8) -> Option<VblankAtPowerOn> {
        match value {
            0 => Some(VblankAtPowerOn::Set),
            1 => Some(VblankAtPowerOn::Clear),
            _ => None,
        }
    }
}

/// Whether the PPU comes out of power-on in its reset state, which ignores writes to PPUCTRL,
/// PPUMASK, PPUSCROLL and PPUADDR until the pre-render line (about 29658 CPU cycles on NTSC).
/// A reset (the button) always starts one; this is only about power-on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PpuWarmUp {
    /// The warm-up ignores those writes (a PPU whose reset line is held at power-on; anes before
    /// issue 49).
    IgnoresWrites = 0,
    /// No warm-up: the registers take writes at once (a PPU whose reset line is not held at
    /// power-on, as on the Famicom, whose PPU is not wired to the reset signal).
    Off = 1,
}

impl PpuWarmUp {
    /// Decodes the stored byte.
    pub const fn from_u8(value: u8) -> Option<PpuWarmUp> {
        match value {
            0 => Some(PpuWarmUp::IgnoresWrites),
            1 => Some(PpuWarmUp::Off),
            _ => None,
        }
    }
}

/// Palette RAM ($3F00-$3F1F) as one console (blargg's NES) powered on, the table the nesdev wiki
/// gives and blargg's `power_up_palette` test compares against. $3F10/$3F14/$3F18/$3F1C repeat
/// $3F00/$3F04/$3F08/$3F0C, whose addresses they mirror.
pub const CONSOLE_PALETTE: [u8; 32] = [
    0x09, 0x01, 0x00, 0x01, 0x00, 0x02, 0x02, 0x0D, 0x08, 0x10, 0x08, 0x24, 0x00, 0x00, 0x04, 0x2C, //
    0x09, 0x01, 0x34, 0x03, 0x00, 0x04, 0x00, 0x14, 0x08, 0x3A, 0x00, 0x02, 0x00, 0x20, 0x2C, 0x08,
];

/// How to power the console on. Everything that differs between two power-ons of real hardware is
/// chosen here, explicitly, and stored in the machine state ([`crate::state::MachineState`]:
/// hashed, snapshotted and restored with the rest), so two consoles with the same config run
/// identically and a power-cycle command repeats the same power-on, also after a snapshot of
/// another config was restored. [`PowerOnProfile`] names documented sets of these choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NesConfig {
    /// Seed for everything real hardware leaves to chance at power-on.
    pub seed: u64,
    /// Power-on contents of work RAM.
    pub ram_init: RamInit,
    /// CPU/PPU clock phase at power-on (0-3 master clocks of PPU lag); `None` derives it from the
    /// seed. Real consoles power on in one of four phases; 0 reproduces nestest.log's
    /// `PPU:  0, 21` at `CYC:7`.
    pub cpu_ppu_alignment: Option<u8>,
    /// Power-on contents of palette RAM.
    pub palette_init: PaletteInit,
    /// Power-on contents of OAM (a seeded pattern is drawn apart from work RAM's).
    pub oam_init: RamInit,
    /// PPUSTATUS's VBlank and sprite overflow flags at power-on.
    pub ppu_vblank: VblankAtPowerOn,
    /// Whether the PPU's power-on warm-up ignores register writes.
    pub ppu_warm_up: PpuWarmUp,
}

impl Default for NesConfig {
    /// Seed 0, zeroed RAM, palette and OAM, phase 0 (the power-on that test ROMs and nestest.log
    /// assume), PPUSTATUS clear and no warm-up: a program's first VBlank wait ends at the first
    /// VBlank and the PPU takes the writes that follow it (see [`PowerOnProfile`] for why).
    fn default() -> Self {
        NesConfig {
            seed: 0,
            ram_init: RamInit::Zeros,
            cpu_ppu_alignment: Some(0),
            palette_init: PaletteInit::Zeros,
            oam_init: RamInit::Zeros,
            ppu_vblank: VblankAtPowerOn::Clear,
            ppu_warm_up: PpuWarmUp::Off,
        }
    }
}

impl NesConfig {
    /// The CPU/PPU phase this config powers on with.
    pub fn alignment(&self) -> u8 {
        match self.cpu_ppu_alignment {
            Some(phase) => phase & 3,
            None => (splitmix64(self.seed ^ 0xA11C_0000) & 3) as u8,
        }
    }
}

/// A documented set of power-on choices (a [`NesConfig`]), selected by name, or `random:SEED`, which
/// draws every choice from its seed.
///
/// | name | work RAM | palette RAM | OAM | VBlank flag | warm-up | phase |
/// |---|---|---|---|---|---|---|
/// | `default` | $00 | $00 | $00 | clear | off | 0 |
/// | `vblank-set` | $00 | $00 | $00 | set | off | 0 |
/// | `warm-up` | $00 | $00 | $00 | clear | ignores writes | 0 |
/// | `quick-power-cycle` | $00 | $00 | $00 | set | ignores writes | 0 |
/// | `console-palette` | $00 | [`CONSOLE_PALETTE`] | $00 | clear | off | 0 |
/// | `ram-ff` | $FF | $00 | $FF | clear | off | 0 |
/// | `phase-1`, `phase-2`, `phase-3` | $00 | $00 | $00 | clear | off | 1, 2, 3 |
/// | `random:SEED` | drawn | drawn | drawn | drawn | drawn | drawn |
///
/// `default` is what software expects most: the first VBlank wait ends at the first VBlank and the
/// PPU takes the writes that follow it, as Nestopia (the anchor anes is compared with) powers on and
/// as on a Famicom, whose PPU is not wired to the reset signal. `quick-power-cycle` is
/// the least forgiving state the wiki documents (VBlank set and writes ignored: a console switched
/// back on within 20 s), which was anes's power-on before issue 49.
///
/// ```
/// use anes_core::{PowerOnProfile, PpuWarmUp, VblankAtPowerOn};
/// let strict: PowerOnProfile = "quick-power-cycle".parse()?;
/// assert_eq!(strict.config().ppu_vblank, VblankAtPowerOn::Set);
/// assert_eq!(strict.config().ppu_warm_up, PpuWarmUp::IgnoresWrites);
/// let random: PowerOnProfile = "random:7".parse()?;
/// assert_eq!(random.to_string(), "random:7");
/// assert_eq!(random.config(), PowerOnProfile::Random(7).config(), "the same seed, the same choices");
/// assert!("random:x".parse::<PowerOnProfile>().is_err());
/// # Ok::<(), anes_core::PowerOnError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PowerOnProfile {
    /// [`NesConfig::default`].
    #[default]
    Default,
    /// PPUSTATUS's VBlank and sprite overflow flags set.
    VblankSet,
    /// The PPU's warm-up ignores register writes until the pre-render line.
    WarmUp,
    /// Both: what a console switched back on within 20 s does.
    QuickPowerCycle,
    /// Palette RAM as [`CONSOLE_PALETTE`].
    ConsolePalette,
    /// Work RAM and OAM all $FF.
    RamFf,
    /// The CPU/PPU phase 1, 2 or 3 (the default's is 0), taken modulo 4: `Phase(0)` (or 4, 8...)
    /// makes the choices of `default`, and is shown as `default`.
    Phase(u8),
    /// Every choice drawn from the seed: RAM and OAM pattern (seeded ones from this seed too), palette,
    /// VBlank flag, warm-up and phase.
    Random(u64),
}

/// A power-on profile that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "power-on profile {value:?} is not one of default, vblank-set, warm-up, quick-power-cycle, console-palette, ram-ff, phase-1, phase-2, phase-3, or random:SEED (SEED a number, decimal or 0x-hex)"
)]
pub struct PowerOnError {
    /// The text given.
    pub value: String,
}

impl PowerOnProfile {
    /// Every named profile, `default` first (not `random:SEED`, which is one per seed).
    pub const NAMED: [PowerOnProfile; 9] = [
        PowerOnProfile::Default,
        PowerOnProfile::VblankSet,
        PowerOnProfile::WarmUp,
        PowerOnProfile::QuickPowerCycle,
        PowerOnProfile::ConsolePalette,
        PowerOnProfile::RamFf,
        PowerOnProfile::Phase(1),
        PowerOnProfile::Phase(2),
        PowerOnProfile::Phase(3),
    ];

    /// The choices this profile makes.
    pub fn config(self) -> NesConfig {
        let base = NesConfig::default();
        match self {
            PowerOnProfile::Default => base,
            PowerOnProfile::VblankSet => NesConfig { ppu_vblank: VblankAtPowerOn::Set, ..base },
            PowerOnProfile::WarmUp => NesConfig { ppu_warm_up: PpuWarmUp::IgnoresWrites, ..base },
            PowerOnProfile::QuickPowerCycle => {
                NesConfig { ppu_vblank: VblankAtPowerOn::Set, ppu_warm_up: PpuWarmUp::IgnoresWrites, ..base }
            }
            PowerOnProfile::ConsolePalette => NesConfig { palette_init: PaletteInit::Console, ..base },
            PowerOnProfile::RamFf => NesConfig { ram_init: RamInit::Ones, oam_init: RamInit::Ones, ..base },
            PowerOnProfile::Phase(phase) => NesConfig { cpu_ppu_alignment: Some(phase & 3), ..base },
            PowerOnProfile::Random(seed) => random_config(seed),
        }
    }
}

/// Draws every choice from `seed`, each from its own splitmix64 value.
fn random_config(seed: u64) -> NesConfig {
    let draw = |choice: u64| splitmix64(seed ^ choice.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    let ram = |value: u64| match value % 3 {
        0 => RamInit::Zeros,
        1 => RamInit::Ones,
        _ => RamInit::Seeded,
    };
    NesConfig {
        seed,
        ram_init: ram(draw(1)),
        cpu_ppu_alignment: Some((draw(2) & 3) as u8),
        palette_init: if draw(3) & 1 == 0 { PaletteInit::Zeros } else { PaletteInit::Console },
        oam_init: ram(draw(4)),
        ppu_vblank: if draw(5) & 1 == 0 { VblankAtPowerOn::Clear } else { VblankAtPowerOn::Set },
        ppu_warm_up: if draw(6) & 1 == 0 { PpuWarmUp::Off } else { PpuWarmUp::IgnoresWrites },
    }
}

impl core::fmt::Display for PowerOnProfile {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PowerOnProfile::Default => f.write_str("default"),
            PowerOnProfile::VblankSet => f.write_str("vblank-set"),
            PowerOnProfile::WarmUp => f.write_str("warm-up"),
            PowerOnProfile::QuickPowerCycle => f.write_str("quick-power-cycle"),
            PowerOnProfile::ConsolePalette => f.write_str("console-palette"),
            PowerOnProfile::RamFf => f.write_str("ram-ff"),
            // Phase 0 is the default's: its name, the one that parses back to these choices.
            PowerOnProfile::Phase(phase) if phase & 3 == 0 => f.write_str("default"),
            PowerOnProfile::Phase(phase) => write!(f, "phase-{}", phase & 3),
            PowerOnProfile::Random(seed) => write!(f, "random:{seed}"),
        }
    }
}

impl core::str::FromStr for PowerOnProfile {
    type Err = PowerOnError;

    fn from_str(text: &str) -> Result<PowerOnProfile, PowerOnError> {
        let refused = || PowerOnError { value: text.to_string() };
        if let Some(seed) = text.strip_prefix("random:") {
            let seed = match seed.strip_prefix("0x").or_else(|| seed.strip_prefix("0X")) {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => seed.parse(),
            };
            return seed.map(PowerOnProfile::Random).map_err(|_| refused());
        }
        PowerOnProfile::NAMED.into_iter().find(|profile| profile.to_string() == text).ok_or_else(refused)
    }
}

impl core::fmt::Display for NesConfig {
    /// The choices in one line: `RAM $00, palette $00, OAM $00, VBlank clear, warm-up off, phase 0`
    /// (a seeded pattern names its seed).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let memory = |f: &mut core::fmt::Formatter<'_>, name: &str, init: RamInit| match init {
            RamInit::Seeded => write!(f, "{name} seeded from {}", self.seed),
            other => write!(f, "{name} {}", other.name()),
        };
        memory(f, "RAM", self.ram_init)?;
        f.write_str(match self.palette_init {
            PaletteInit::Zeros => ", palette $00, ",
            PaletteInit::Console => ", palette console, ",
        })?;
        memory(f, "OAM", self.oam_init)?;
        f.write_str(match self.ppu_vblank {
            VblankAtPowerOn::Set => ", VBlank set",
            VblankAtPowerOn::Clear => ", VBlank clear",
        })?;
        f.write_str(match self.ppu_warm_up {
            PpuWarmUp::IgnoresWrites => ", warm-up ignores writes",
            PpuWarmUp::Off => ", warm-up off",
        })?;
        write!(f, ", phase {}", self.alignment())
    }
}

/// splitmix64: a tiny, well-mixed generator; deterministic from its input.
pub(crate) const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The generator as a stream: the next value from `state`, which moves on (the unit tests' random
/// programs).
#[cfg(test)]
pub(crate) fn splitmix64_next(state: &mut u64) -> u64 {
    let value = splitmix64(*state);
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    value
}

/// Fills `memory` with the pattern `init` asks for; a seeded one draws from `seed`.
fn fill_power_on(memory: &mut [u8], init: RamInit, seed: u64) {
    match init {
        RamInit::Zeros => memory.fill(0),
        RamInit::Ones => memory.fill(0xFF),
        RamInit::Seeded => {
            for (i, chunk) in memory.chunks_exact_mut(8).enumerate() {
                chunk.copy_from_slice(&splitmix64(seed.wrapping_add(i as u64)).to_le_bytes());
            }
        }
    }
}

pub(crate) fn power_on_ram(config: &NesConfig) -> [u8; 0x800] {
    let mut ram = [0u8; 0x800];
    fill_power_on(&mut ram, config.ram_init, config.seed);
    ram
}

/// OAM at power-on: a seeded pattern comes from its own stream, not a copy of work RAM's first bytes.
pub(crate) fn power_on_oam(config: &NesConfig) -> [u8; 256] {
    let mut oam = [0u8; 256];
    fill_power_on(&mut oam, config.oam_init, splitmix64(config.seed ^ 0x0A11_0000));
    oam
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_back_to_its_profile() {
        for profile in PowerOnProfile::NAMED
            .into_iter()
            .chain([PowerOnProfile::Random(0), PowerOnProfile::Random(u64::MAX)])
        {
            assert_eq!(profile.to_string().parse::<PowerOnProfile>(), Ok(profile));
        }
        assert_eq!("random:0x10".parse::<PowerOnProfile>(), Ok(PowerOnProfile::Random(16)));
    }

    /// Every profile that can be built, `Phase` of any byte included, displays as a name that parses
    /// to a profile of the same choices and the same name.
    #[test]
    fn every_profile_displays_as_a_name_that_parses_back() {
        let phases = (0..=u8::MAX).map(PowerOnProfile::Phase);
        let seeds = [0, 1, 7, u64::MAX].map(PowerOnProfile::Random);
        for profile in PowerOnProfile::NAMED.into_iter().chain(phases).chain(seeds) {
            let name = profile.to_string();
            let back: PowerOnProfile = name.parse().unwrap_or_else(|e| panic!("{profile:?}: {e}"));
            assert_eq!((back.config(), back.to_string()), (profile.config(), name), "{profile:?}");
        }
        assert_eq!(PowerOnProfile::Phase(4).to_string(), "default");
        assert_eq!(PowerOnProfile::Phase(6).to_string(), "phase-2");
    }

    #[test]
    fn bad_text_is_refused_with_the_value_and_the_accepted_forms() {
        for text in [
            "",
            "Default",
            "phase-0",
            "phase-4",
            "random:",
            "random:-1",
            "random:18446744073709551616",
            "vblank",
        ] {
            let err = text.parse::<PowerOnProfile>().unwrap_err();
            assert_eq!(err.value, text);
            let message = err.to_string();
            assert!(message.contains(&format!("{text:?}")) && message.contains("random:SEED"), "{message}");
        }
    }

    #[test]
    fn named_profiles_are_all_different_choices() {
        let configs: Vec<NesConfig> = PowerOnProfile::NAMED.iter().map(|p| p.config()).collect();
        for (i, a) in configs.iter().enumerate() {
            for b in &configs[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn random_profiles_draw_every_choice_both_ways() {
        let configs: Vec<NesConfig> = (0..64).map(|seed| PowerOnProfile::Random(seed).config()).collect();
        let seen = |f: &dyn Fn(&NesConfig) -> u8, values: &[u8]| {
            values.iter().all(|&v| configs.iter().any(|c| f(c) == v))
        };
        assert!(seen(&|c| c.ram_init as u8, &[0, 1, 2]));
        assert!(seen(&|c| c.oam_init as u8, &[0, 1, 2]));
        assert!(seen(&|c| c.palette_init as u8, &[0, 1]));
        assert!(seen(&|c| c.ppu_vblank as u8, &[0, 1]));
        assert!(seen(&|c| c.ppu_warm_up as u8, &[0, 1]));
        assert!(seen(&|c| c.alignment(), &[0, 1, 2, 3]));
        assert!(configs.iter().all(|c| c.cpu_ppu_alignment.is_some()), "the phase drawn is recorded");
    }
}
