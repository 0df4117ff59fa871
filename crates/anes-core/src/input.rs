//! Standard controllers on $4016/$4017.

/// Button bits in the order the controller shifts them out (A first).
pub mod buttons {
    /// A.
    pub const A: u8 = 0x01;
    /// B.
    pub const B: u8 = 0x02;
    /// Select.
    pub const SELECT: u8 = 0x04;
    /// Start.
    pub const START: u8 = 0x08;
    /// Up.
    pub const UP: u8 = 0x10;
    /// Down.
    pub const DOWN: u8 = 0x20;
    /// Left.
    pub const LEFT: u8 = 0x40;
    /// Right.
    pub const RIGHT: u8 = 0x80;
}

crate::state::state_struct! {
    /// One standard controller (a 4021 shift register behind a strobe latch).
    pub struct ControllerState {
        /// Buttons currently held (see [`buttons`]).
        pub buttons: u8,
        /// The shift register; 1s shift in after the eight buttons.
        pub shift: u8,
        /// Strobe (bit 0 of the last $4016 write): while high the register reloads continuously.
        pub strobe: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

impl ControllerState {
    /// A $4016 write: bit 0 is the strobe, shared by both ports.
    #[inline]
    pub fn write_strobe(&mut self, value: u8) {
        self.strobe = value & 1;
        if self.strobe != 0 {
            self.shift = self.buttons;
        }
    }

    /// A read of the port: bit 0 is the next button.
    #[inline]
    pub fn read(&mut self) -> u8 {
        if self.strobe != 0 {
            return self.buttons & 1;
        }
        let bit = self.shift & 1;
        self.shift = (self.shift >> 1) | 0x80;
        bit
    }

    /// What a read would return, without side effects.
    #[inline]
    pub fn peek(&self) -> u8 {
        if self.strobe != 0 { self.buttons & 1 } else { self.shift & 1 }
    }
}
