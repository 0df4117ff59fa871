//! Standard controllers on $4016/$4017.

/// Button bits in the order the controller shifts them out (A first).
pub mod buttons {
    /// The A button: the first bit $4016/$4017 shift out.
    pub const A: u8 = 0x01;
    /// The B button: the second bit read.
    pub const B: u8 = 0x02;
    /// Select: the third bit read.
    pub const SELECT: u8 = 0x04;
    /// Start: the fourth bit read.
    pub const START: u8 = 0x08;
    /// Up on the D-pad: the fifth bit read.
    pub const UP: u8 = 0x10;
    /// Down on the D-pad: the sixth bit read.
    pub const DOWN: u8 = 0x20;
    /// Left on the D-pad: the seventh bit read.
    pub const LEFT: u8 = 0x40;
    /// Right on the D-pad: the eighth bit read.
    pub const RIGHT: u8 = 0x80;
}

/// A controller port the console does not have (it has 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("controller port {port} does not exist; the console has ports 0 and 1")]
pub struct NoSuchPort {
    /// The port asked for.
    pub port: usize,
}

crate::layout::state_struct! {
    /// One standard controller (a 4021 shift register behind a strobe latch).
    pub struct ControllerState {
        /// Buttons currently held (see [`buttons`]).
        pub buttons: u8,
        /// The shift register; 1s shift in after the eight buttons.
        pub shift: u8,
        /// Strobe: the console's OUT0 pin (bit 0 of a $4016 write, once it reached the pin). While
        /// high the register reloads continuously.
        pub strobe: u8,
        /// The bit on the data line since the register was last clocked (what further reads of the
        /// same contiguous set return).
        pub output: u8,
    }
}

const _: () = assert!(core::mem::size_of::<ControllerState>() == 4);

impl ControllerState {
    /// The strobe pin takes bit 0 of `value`. While it is high the register loads the buttons
    /// continuously, so it holds the buttons of the moment the strobe falls.
    #[inline]
    pub fn write_strobe(&mut self, value: u8) {
        if self.strobe != 0 || value & 1 != 0 {
            self.shift = self.buttons;
        }
        self.strobe = value & 1;
    }

    /// A read of the port: bit 0 is the data line. The controller's clock is the port's /OE, which
    /// stays asserted across reads of the same port on consecutive CPU cycles, so only the first read
    /// of such a `contiguous` set clocks the register; the others see the same bit (nesdev "DMA",
    /// register conflicts: "controllers only see a single read for each contiguous set of reads", the
    /// NES-001 and AV Famicom behaviour; AccuracyCoin "Controller Clocking").
    #[inline]
    pub fn read(&mut self, contiguous: bool) -> u8 {
        if self.strobe != 0 {
            self.output = self.buttons & 1;
        } else if !contiguous {
            self.output = self.shift & 1;
            self.shift = (self.shift >> 1) | 0x80;
        }
        self.output
    }

    /// What a read starting a new set would return, without side effects.
    #[inline]
    pub fn peek(&self) -> u8 {
        if self.strobe != 0 { self.buttons & 1 } else { self.shift & 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_reads_clock_once_and_repeat_the_bit() {
        let mut pad = ControllerState { buttons: buttons::A | buttons::SELECT, ..ControllerState::default() };
        pad.write_strobe(1);
        pad.write_strobe(0);
        // A, then B read twice in a row (one clock), then Select.
        assert_eq!([pad.read(false), pad.read(false), pad.read(true), pad.read(false)], [1, 0, 0, 1]);
        // Eight clocks in all shift 1s in.
        for _ in 0..5 {
            pad.read(false);
        }
        assert_eq!(pad.read(false), 1);
    }

    #[test]
    fn strobe_high_reads_button_a_without_clocking() {
        let mut pad = ControllerState { buttons: buttons::A, ..ControllerState::default() };
        pad.write_strobe(1);
        assert_eq!([pad.read(false), pad.read(false)], [1, 1]);
        pad.buttons = 0;
        assert_eq!(pad.read(false), 0, "the register follows the buttons while strobed");
    }
}
