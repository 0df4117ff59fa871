//! The machine section: how the console was powered on, and its frame count.

crate::layout::state_struct! {
    /// The power-on config and the frame counter: the machine-level part of the state. The config is
    /// state so that a power cycle after a restore repeats the power-on of the machine that was saved,
    /// whatever config the restoring console was built with.
    pub struct MachineState {
        /// Frames completed since power-on (see [`Nes::run_until_frame_end`](crate::Nes::run_until_frame_end)).
        pub frame: u64,
        /// [`crate::NesConfig::seed`].
        pub seed: u64,
        /// [`crate::NesConfig::ram_init`] ([`crate::RamInit`] as u8).
        pub ram_init: u8,
        /// [`crate::NesConfig::cpu_ppu_alignment`]: the phase 0-3, or [`ALIGNMENT_FROM_SEED`] for `None`.
        /// (Formerly a reserved zero byte: snapshots from before read as phase 0, and are refused if their
        /// bus disagrees.)
        pub cpu_ppu_alignment: u8,
        /// The console's region ([`crate::Region`] as u8: 0 NTSC, 1 PAL, 2 Dendy). Formerly a
        /// reserved zero byte, so snapshots from before read as NTSC, which they are.
        pub region: u8,
        /// [`crate::NesConfig::palette_init`] ([`crate::PaletteInit`] as u8).
        pub palette_init: u8,
        /// [`crate::NesConfig::oam_init`] ([`crate::RamInit`] as u8).
        pub oam_init: u8,
        /// [`crate::NesConfig::ppu_vblank`] ([`crate::VblankAtPowerOn`] as u8).
        pub ppu_vblank: u8,
        /// [`crate::NesConfig::ppu_warm_up`] ([`crate::PpuWarmUp`] as u8).
        /// (These four were reserved zero bytes, and 0 is each one's power-on before they existed:
        /// palette and OAM $00, VBlank set, the warm-up ignoring writes.)
        pub ppu_warm_up: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 1],
    }
}

/// [`MachineState::cpu_ppu_alignment`] of a config that derives the phase from its seed.
pub const ALIGNMENT_FROM_SEED: u8 = 0xFF;

const _: () = assert!(core::mem::size_of::<MachineState>() == 24);
