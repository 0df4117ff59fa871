//! The harness's face of the console: hooks a test or lockstep harness needs and an embedder does
//! not. They are methods of the [`Harness`] trait, not of [`Nes`] itself, so the console's own
//! methods stay those a program running games calls; `use anes_core::harness::Harness;` brings
//! them in scope.
//!
//! - fault injection ([`Harness::flip_state_bit`], [`Harness::stall_cycles`]): deliberate
//!   corruptions that prove a lockstep harness catches what it claims to;
//! - lagging steps ([`Harness::step_in_frame_lagging`], [`Harness::step_to_next_line_lagging`],
//!   [`Harness::settle`], [`Harness::lagging_digest`], [`Harness::lag_signature`]): the frame
//!   path's machine between two instructions, for lockstep at instruction and scanline granularity;
//! - [`Harness::set_pc`]: test ROMs with an automation entry point (nestest at $C000).

use crate::nes::Nes;
use crate::state::{FaultError, Section};

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::Nes {}
}

/// The harness's hooks into a [`Nes`] (see the [module](self)). Implemented for [`Nes`] only.
pub trait Harness: sealed::Sealed {
    /// Flips bit `bit` of byte `offset` of `section`, in place. A flip that would make an impossible
    /// state (one a snapshot with it would be refused for) is refused and leaves no trace.
    ///
    /// ```
    /// use anes_core::harness::Harness;
    /// use anes_core::{Cartridge, Nes, NesConfig, Section};
    /// # let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// # let mut prg = vec![0xEA; 0x4000];
    /// # prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// # rom.extend(prg);
    /// # rom.extend(vec![0x55; 0x2000]);
    /// let clean = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
    /// let mut faulty = clean.clone();
    /// faulty.flip_state_bit(Section::Ram, 0x10, 3).expect("any RAM bit may flip");
    /// assert_ne!(faulty.state_hash(), clean.state_hash());
    /// assert!(faulty.flip_state_bit(Section::Ram, 0x800, 0).is_err(), "RAM is 2 KiB");
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    fn flip_state_bit(&mut self, section: Section, offset: usize, bit: u8) -> Result<(), FaultError>;

    /// Stalls the CPU for `cycles` bus cycles (it re-reads PC, as when a DMA halts it): the machine
    /// falls that many CPU cycles behind an unstalled twin.
    fn stall_cycles(&mut self, cycles: u32);

    /// [`Nes::step_in_frame`] without the catch-up inside a frame: the PPU, the APU and a board's
    /// cycle counter stay where the lazy schedule left them (the frame path's state between its
    /// instructions). Until [`Harness::settle`], only another lagging step,
    /// [`Harness::lagging_digest`], [`Nes::cpu_cycle`] and [`Nes::frame`] are meaningful: a
    /// snapshot, hash or fault of a lagging machine would take the lagging chips as they stand. A
    /// frame's end is settled, as in [`Nes::step_in_frame`]. Lockstep at instruction granularity
    /// compares lagging digests.
    ///
    /// ```
    /// use anes_core::harness::Harness;
    /// use anes_core::{Cartridge, Nes, NesConfig};
    /// // A 16 KiB NROM program that turns rendering on and loops (reset vector $8000).
    /// let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// let mut prg = vec![0xEA; 0x4000];
    /// prg[..8].copy_from_slice(&[0xA9, 0x1E, 0x8D, 0x01, 0x20, 0x4C, 0x05, 0x80]);
    /// prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// rom.extend(prg);
    /// rom.extend(vec![0x55; 0x2000]);
    /// let mut stepped = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
    /// let mut lagging = stepped.clone();
    /// lagging.settle();
    /// for _ in 0..5_000 {
    ///     stepped.step_in_frame();
    ///     lagging.step_in_frame_lagging();
    /// }
    /// lagging.settle();
    /// assert_eq!(lagging.frame_record(), stepped.frame_record());
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    fn step_in_frame_lagging(&mut self) -> bool;

    /// [`Nes::step_to_next_line`] without the catch-up inside a frame, as
    /// [`Harness::step_in_frame_lagging`] is to [`Nes::step_in_frame`]: the PPU stays where the end
    /// of the line caught it up, the APU and a board's counters where they were, until
    /// [`Harness::settle`]. A frame's end is settled. Lockstep at scanline granularity compares
    /// lagging digests.
    fn step_to_next_line_lagging(&mut self) -> bool;

    /// Brings the chips a lagging step left behind up to the CPU (the machine every other entry
    /// point shows) and predicts their schedule afresh from the state: a prediction kept from
    /// earlier is valid but depends on the machine's history (a restored machine predicts anew
    /// where one that ran kept its own), so two machines in equal states lag alike only from a
    /// fresh one.
    fn settle(&mut self);

    /// [`Nes::state_digest`] of the machine as a lagging step left it, with where the lagging chips
    /// stand: the PPU's master clock is state (the bus section), the APU's and the board's ticked
    /// cycles are added here. Equal lagging digests of two machines of one build at one CPU cycle
    /// mean equal settled machines (what is left to run is a function of what is digested);
    /// unequal ones only mean their chips may stand at different places. It is the keyed sum
    /// without `state_digest`'s final mix (a bijection, which would change no comparison).
    fn lagging_digest(&self) -> u64;

    /// How this machine lags in [`Harness::step_in_frame_lagging`]: the PPU's and the APU's
    /// schedules and whether audio is produced (the APU and a board's sound chip then run every
    /// cycle). Two machines lag alike from equal settled states only when these are equal.
    fn lag_signature(&self) -> u64;

    /// Sets the program counter (nestest's automation mode starts at $C000).
    fn set_pc(&mut self, pc: u16);
}

// Each hook forwards to the crate-private method beside the code it belongs with (fault injection
// in `state/fault.rs`, the frame path in `nes.rs`, digests in `state/digest.rs`).
impl Harness for Nes {
    fn flip_state_bit(&mut self, section: Section, offset: usize, bit: u8) -> Result<(), FaultError> {
        Nes::flip_state_bit(self, section, offset, bit)
    }

    fn stall_cycles(&mut self, cycles: u32) {
        Nes::stall_cycles(self, cycles)
    }

    #[inline(always)]
    fn step_in_frame_lagging(&mut self) -> bool {
        Nes::step_in_frame_lagging(self)
    }

    fn step_to_next_line_lagging(&mut self) -> bool {
        Nes::step_to_next_line_lagging(self)
    }

    fn settle(&mut self) {
        Nes::settle(self)
    }

    #[inline(always)]
    fn lagging_digest(&self) -> u64 {
        Nes::lagging_digest(self)
    }

    fn lag_signature(&self) -> u64 {
        Nes::lag_signature(self)
    }

    fn set_pc(&mut self, pc: u16) {
        self.cpu.pc = pc;
    }
}
