//! The emulator a result protocol drives.

use anes_core::Nes;

/// Builds a console from the parsed cartridge (its header already checked against the manifest) and
/// the file's bytes, or says why it cannot.
pub type PowerOn<'a, C> = &'a dyn Fn(anes_core::Cartridge, &[u8]) -> Result<C, String>;

/// What the result protocols need from an emulator: frames, side-effect-free reads of both address
/// spaces, the reset button, and whether the CPU jammed. Implemented for anes's [`Nes`]; implement it
/// for another emulator to score that one on the same manifest with the same protocols
/// ([`crate::run_rom_on`]; `benches/peer` does so for tetanes-core).
///
/// ```
/// use anes_conformance::Console;
/// /// A console that never finishes a test: every protocol reports it as a timeout.
/// struct Idle(u64);
/// impl Console for Idle {
///     fn run_frame(&mut self) -> u64 {
///         self.0 += 1;
///         self.0
///     }
///     fn peek(&self, _addr: u16) -> u8 {
///         0
///     }
///     fn ppu_peek(&self, _addr: u16) -> u8 {
///         0
///     }
///     fn soft_reset(&mut self) {}
///     fn jammed_at(&self) -> Option<u16> {
///         None
///     }
/// }
/// assert_eq!(Idle(0).run_frame(), 1);
/// ```
pub trait Console {
    /// Runs to the end of the next frame; returns the frames completed since power-on.
    fn run_frame(&mut self) -> u64;
    /// What a CPU read of `addr` would return, without side effects.
    fn peek(&self, addr: u16) -> u8;
    /// What a PPU read of `addr` ($0000-$3EFF: pattern tables and nametables) would return.
    fn ppu_peek(&self, addr: u16) -> u8;
    /// Presses the reset button.
    fn soft_reset(&mut self);
    /// The program counter if the CPU halted on a JAM opcode (a test ROM never does on hardware).
    fn jammed_at(&self) -> Option<u16>;
    /// Holds `buttons` on controller `port` (0 or 1) from now on, bits in the order the controller
    /// shifts them out (A = bit 0 ... Right = bit 7, as in [`anes_core::input::buttons`]). Returns
    /// false when this console cannot press buttons; protocols that need input then report an error.
    fn set_buttons(&mut self, port: usize, buttons: u8) -> bool {
        let _ = (port, buttons);
        false
    }
    /// The anes machine behind this console, for protocols only anes supports (`nestest-log`
    /// compares anes's own trace format); `None` for other emulators.
    fn as_nes(&mut self) -> Option<&mut Nes> {
        None
    }
}

impl Console for Nes {
    fn run_frame(&mut self) -> u64 {
        self.run_until_frame_end();
        self.ppu().frames_completed()
    }

    fn peek(&self, addr: u16) -> u8 {
        Nes::peek(self, addr)
    }

    fn ppu_peek(&self, addr: u16) -> u8 {
        Nes::ppu_peek(self, addr)
    }

    fn soft_reset(&mut self) {
        Nes::soft_reset(self)
    }

    fn jammed_at(&self) -> Option<u16> {
        self.is_jammed().then(|| self.cpu().pc)
    }

    fn set_buttons(&mut self, port: usize, buttons: u8) -> bool {
        Nes::set_buttons(self, port, buttons).is_ok()
    }

    fn as_nes(&mut self) -> Option<&mut Nes> {
        Some(self)
    }
}
