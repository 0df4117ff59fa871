//! The serial EEPROMs on Bandai's LZ93D50 boards (nesdev "INES Mapper 016", "INES Mapper 159"): a
//! 24C02 (256 bytes) on mapper 16, Xicor's X24C01 (128 bytes) on mapper 159, both I²C slaves whose
//! clock and data lines the CPU drives through $800D and whose data line it reads at $6000-$7FFF.
//!
//! The bus, as the chips see it: a fall of SDA while SCL is high is a START, a rise a STOP; otherwise
//! SDA changes only while SCL is low, and each rise of SCL moves one bit, most significant first
//! (the wiki: the X24C01 is a big-endian device, whatever Bandai's code assumed). After each byte the
//! receiver pulls SDA low for one clock to acknowledge it.
//! - 24C02: START, device byte `1010 000 R` (the board ties A2-A0 low), then for a write the word
//!   address and data bytes (page writes wrap within 8 bytes); for a read, data from the current
//!   address on, the master acknowledging each byte it wants more after. A random read writes the
//!   address, then a repeated START and a read device byte.
//! - X24C01: START, then one byte `AAAA AAA R`: the 7-bit address and the direction; write data
//!   follows (pages of 4 bytes), or read data from that address.
//!
//! A received data byte is stored when it is acknowledged; the chips' write cycle time (a few
//! milliseconds of NACKs after a STOP) is not modelled: no Bandai game polls for it.

crate::layout::state_struct! {
    /// The EEPROM's memory and its I²C state machine.
    pub struct EepromState {
        /// The memory in rows of 32 bytes (a 24C01 uses the first 128 bytes); see
        /// [`EepromState::memory`].
        pub rows: [[u8; 32]; 8],
        /// SCL as last driven by the board (0 or 1).
        pub scl: u8,
        /// SDA as last driven by the board (1 also when the board released it to read).
        pub sda: u8,
        /// What the chip is doing: an `EepromPhase` as `u8`.
        pub phase: u8,
        /// Bits of the current byte moved (0-7), 8 at the acknowledge clock, 9 after it.
        pub bit: u8,
        /// The byte being received or sent.
        pub shift: u8,
        /// The word address.
        pub address: u8,
        /// The chip's SDA driver: 0 pulls the line low, 1 releases it.
        pub output: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<EepromState>() == 264);

/// The two chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EepromChip {
    /// 128 bytes, address in the first byte (mapper 159).
    X24c01,
    /// 256 bytes, device select then word address (mapper 16).
    C24c02,
}

impl EepromChip {
    /// Memory size in bytes.
    pub fn len(self) -> usize {
        match self {
            EepromChip::X24c01 => 128,
            EepromChip::C24c02 => 256,
        }
    }

    /// Bytes of a page write (the address wraps within one).
    fn page(self) -> u8 {
        match self {
            EepromChip::X24c01 => 4,
            EepromChip::C24c02 => 8,
        }
    }
}

/// What the state machine does with the next clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum EepromPhase {
    /// Waiting for a START.
    Idle = 0,
    /// Receiving the first byte after a START (24C02: device select; X24C01: address and direction).
    Command = 1,
    /// Receiving the 24C02's word address.
    WordAddress = 2,
    /// Receiving data bytes to store.
    Write = 3,
    /// Sending data bytes.
    Read = 4,
}

impl EepromPhase {
    /// The phase stored in state; a byte no phase has (a damaged snapshot) reads as idle.
    fn from_u8(value: u8) -> Self {
        match value {
            1 => EepromPhase::Command,
            2 => EepromPhase::WordAddress,
            3 => EepromPhase::Write,
            4 => EepromPhase::Read,
            _ => EepromPhase::Idle,
        }
    }
}

impl EepromState {
    /// The power-on state: bus idle and released; `memory` keeps what the caller put there.
    pub(super) fn new() -> Self {
        EepromState { scl: 1, sda: 1, output: 1, ..EepromState::default() }
    }

    /// The memory, all 256 bytes.
    pub fn memory(&self) -> &[u8; 256] {
        bytemuck::cast_ref(&self.rows)
    }

    /// The memory, mutable.
    pub(super) fn memory_mut(&mut self) -> &mut [u8; 256] {
        bytemuck::cast_mut(&mut self.rows)
    }

    /// The level of SDA: low when either side pulls it low (0 or 1).
    #[inline]
    pub(super) fn line(&self) -> u8 {
        self.sda & self.output
    }

    /// The board drives SCL and SDA (`sda`: 1 also when it releases the line).
    pub(super) fn drive(&mut self, chip: EepromChip, scl: u8, sda: u8) {
        let (old_scl, old_sda) = (self.scl, self.sda);
        self.scl = scl;
        self.sda = sda;
        if old_scl == 1 && scl == 1 {
            if old_sda == 1 && sda == 0 {
                self.start();
            } else if old_sda == 0 && sda == 1 {
                self.stop();
            }
        } else if old_scl == 0 && scl == 1 {
            self.rise(chip);
        } else if old_scl == 1 && scl == 0 {
            self.fall(chip);
        }
    }

    fn phase(&self) -> EepromPhase {
        EepromPhase::from_u8(self.phase)
    }

    fn start(&mut self) {
        self.phase = EepromPhase::Command as u8;
        self.bit = 0;
        self.shift = 0;
        self.output = 1;
    }

    fn stop(&mut self) {
        self.phase = EepromPhase::Idle as u8;
        self.bit = 0;
        self.output = 1;
    }

    /// SCL rose: the receiver samples SDA.
    fn rise(&mut self, chip: EepromChip) {
        match (self.phase(), self.bit) {
            (EepromPhase::Idle, _) => {}
            (EepromPhase::Read, 8) => {
                // The master's acknowledge: low asks for the next byte, high ends the read.
                if self.line() == 0 {
                    self.address = self.wrap(chip, self.address.wrapping_add(1));
                    self.shift = self.memory()[usize::from(self.address)];
                    self.bit = 9;
                } else {
                    // The address counter still moves past the byte read: a current-address read
                    // goes on from there.
                    self.address = self.wrap(chip, self.address.wrapping_add(1));
                    self.phase = EepromPhase::Idle as u8;
                    self.bit = 0;
                }
            }
            (EepromPhase::Read, bit) if bit < 8 => self.bit += 1,
            (_, bit) if bit < 8 => {
                self.shift = self.shift << 1 | self.line();
                self.bit += 1;
            }
            _ => {}
        }
    }

    /// SCL fell: the transmitter may change SDA.
    fn fall(&mut self, chip: EepromChip) {
        match (self.phase(), self.bit) {
            (EepromPhase::Idle, _) => {}
            (EepromPhase::Read, 8) => self.output = 1,
            (EepromPhase::Read, 9) => {
                self.bit = 0;
                self.output = self.shift >> 7;
            }
            (EepromPhase::Read, bit) => self.output = (self.shift >> (7 - bit)) & 1,
            (_, 8) => {
                let ack = self.receive(chip);
                self.output = if ack { 0 } else { 1 };
                self.bit = if ack { 9 } else { 0 };
            }
            (_, 9) => {
                self.output = 1;
                self.bit = 0;
            }
            _ => {}
        }
    }

    /// A whole byte arrived; returns true when the chip acknowledges it.
    fn receive(&mut self, chip: EepromChip) -> bool {
        let byte = self.shift;
        let next = match (self.phase(), chip) {
            (EepromPhase::Command, EepromChip::C24c02) if byte & 0xFE == 0xA0 => {
                if byte & 1 != 0 {
                    EepromPhase::Read
                } else {
                    EepromPhase::WordAddress
                }
            }
            (EepromPhase::Command, EepromChip::X24c01) => {
                self.address = byte >> 1;
                if byte & 1 != 0 { EepromPhase::Read } else { EepromPhase::Write }
            }
            (EepromPhase::WordAddress, _) => {
                self.address = self.wrap(chip, byte);
                EepromPhase::Write
            }
            (EepromPhase::Write, _) => {
                let address = usize::from(self.address);
                self.memory_mut()[address] = byte;
                let page = chip.page();
                let within = (self.address.wrapping_add(1)) % page;
                self.address = self.address - self.address % page + within;
                EepromPhase::Write
            }
            _ => {
                // Another device's address: the chip ignores the bus until the next START.
                self.phase = EepromPhase::Idle as u8;
                return false;
            }
        };
        self.phase = next as u8;
        if next == EepromPhase::Read {
            self.shift = self.memory()[usize::from(self.address)];
        }
        true
    }

    /// `address` within the chip's memory.
    fn wrap(&self, chip: EepromChip, address: u8) -> u8 {
        (usize::from(address) % chip.len()) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An I²C master driving `EepromState` as the LZ93D50's $800D does.
    struct Master<'a> {
        chip: EepromChip,
        e: &'a mut EepromState,
    }

    impl Master<'_> {
        fn start(&mut self) {
            self.e.drive(self.chip, 0, 1);
            self.e.drive(self.chip, 1, 1);
            self.e.drive(self.chip, 1, 0);
            self.e.drive(self.chip, 0, 0);
        }
        fn stop(&mut self) {
            self.e.drive(self.chip, 0, 0);
            self.e.drive(self.chip, 1, 0);
            self.e.drive(self.chip, 1, 1);
        }
        /// Sends `byte`; returns the acknowledge (true = ACK).
        fn send(&mut self, byte: u8) -> bool {
            for bit in (0..8).rev() {
                let sda = (byte >> bit) & 1;
                self.e.drive(self.chip, 0, sda);
                self.e.drive(self.chip, 1, sda);
                self.e.drive(self.chip, 0, sda);
            }
            self.e.drive(self.chip, 0, 1);
            self.e.drive(self.chip, 1, 1);
            let ack = self.e.line() == 0;
            self.e.drive(self.chip, 0, 1);
            ack
        }
        /// Reads a byte, then acknowledges it when `more`.
        fn receive(&mut self, more: bool) -> u8 {
            let mut byte = 0;
            for _ in 0..8 {
                self.e.drive(self.chip, 0, 1);
                self.e.drive(self.chip, 1, 1);
                byte = byte << 1 | self.e.line();
            }
            let ack = if more { 0 } else { 1 };
            self.e.drive(self.chip, 0, ack);
            self.e.drive(self.chip, 1, ack);
            self.e.drive(self.chip, 0, ack);
            byte
        }
    }

    #[test]
    fn c24c02_page_write_random_and_sequential_read() {
        let mut e = EepromState::new();
        let mut m = Master { chip: EepromChip::C24c02, e: &mut e };
        m.start();
        assert!(m.send(0xA0), "device select, write");
        assert!(m.send(0x44));
        for byte in [0x11, 0x22, 0x33, 0x44] {
            assert!(m.send(byte));
        }
        m.stop();
        assert_eq!(&m.e.memory()[0x44..0x48], &[0x11, 0x22, 0x33, 0x44]);
        // Random read of $45: address, repeated START, read; then the sequence continues.
        m.start();
        assert!(m.send(0xA0));
        assert!(m.send(0x45));
        m.start();
        assert!(m.send(0xA1));
        assert_eq!([m.receive(true), m.receive(true), m.receive(false)], [0x22, 0x33, 0x44]);
        m.stop();
        // Another device address is not acknowledged.
        m.start();
        assert!(!m.send(0xA2));
        m.stop();
        // A page write wraps within its 8 bytes: $4E, $4F, then $48.
        let mut e = EepromState::new();
        let mut m = Master { chip: EepromChip::C24c02, e: &mut e };
        m.start();
        m.send(0xA0);
        m.send(0x4E);
        for byte in [1, 2, 3] {
            m.send(byte);
        }
        m.stop();
        assert_eq!([m.e.memory()[0x4E], m.e.memory()[0x4F], m.e.memory()[0x48]], [1, 2, 3]);
    }

    #[test]
    fn x24c01_takes_the_address_in_its_first_byte() {
        let mut e = EepromState::new();
        let mut m = Master { chip: EepromChip::X24c01, e: &mut e };
        m.start();
        assert!(m.send(0x12 << 1));
        assert!(m.send(0xA5));
        assert!(m.send(0x5A));
        m.stop();
        assert_eq!(&m.e.memory()[0x12..0x14], &[0xA5, 0x5A]);
        m.start();
        assert!(m.send(0x12 << 1 | 1));
        assert_eq!([m.receive(true), m.receive(false)], [0xA5, 0x5A]);
        m.stop();
        // Sequential reads wrap at 128 bytes.
        m.e.memory_mut()[0x7F] = 0x77;
        m.e.memory_mut()[0] = 0x66;
        m.start();
        m.send(0x7F << 1 | 1);
        assert_eq!([m.receive(true), m.receive(false)], [0x77, 0x66]);
    }
}
