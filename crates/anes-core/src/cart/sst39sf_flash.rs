//! The SST39SF010A/020A/040 flash chip that UNROM 512 (self-flashable wiring) and GTROM carry as
//! their PRG ROM, which the game can program itself (nesdev "UNROM 512", "GTROM"; SST39SF010A/020A/040
//! datasheet). Its memory is the cartridge's PRG ROM (`Cartridge::prg_rom`, state on these boards);
//! this is its command state machine, inside the board's state.
//!
//! Commands are sequences of writes at chip addresses whose A14-A0 are $5555 and $2AAA (the higher
//! lines are don't-care; the board's bank register supplies them from the CPU address):
//! - byte program: $5555:AA, $2AAA:55, $5555:A0, then the data at its address; a program only
//!   clears bits (the byte becomes old AND data), so a byte must be erased to take new 1 bits;
//! - sector erase: $5555:AA, $2AAA:55, $5555:80, $5555:AA, $2AAA:55, then $30 anywhere in the 4 KiB
//!   sector, which becomes $FF; chip erase: the same with $10 at $5555 last;
//! - software ID entry: $5555:AA, $2AAA:55, $5555:90; reads then give the manufacturer ($BF) where A0
//!   is 0 and the device ($B5, $B6, $B7 for 128, 256, 512 KiB) where A0 is 1, at every address
//!   (the datasheet specifies A1 and up low; we do not decode them); exit: $F0 written anywhere, or
//!   $5555:AA, $2AAA:55, $5555:F0. In ID mode other commands are ignored (the datasheet leaves them
//!   undefined).
//!
//! A write that does not continue a sequence returns the chip to reading (and may start a new one).
//! Programs and erases complete at once: the datasheet's typical 14 µs per byte and 18 ms per sector
//! are not modelled, so the Data# polling and Toggle Bit reads games use to wait (DQ7 complemented,
//! DQ6 toggling while busy) always see the finished data, and any such loop exits at its first read.
//! Neither wiki page names a game that depends on the busy time.

crate::layout::state_struct! {
    /// The flash chip's command state machine.
    pub struct FlashState {
        /// Writes of the current command sequence seen so far (a `Step` as `u8`; unknown values
        /// read as the start).
        pub step: u8,
        /// 1 in software ID mode: reads return the chip's IDs, not its memory.
        pub id_mode: u8,
    }
}

const _: () = assert!(core::mem::size_of::<FlashState>() == 2);

/// Where a command sequence stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Step {
    /// Reading: no sequence started.
    Read = 0,
    /// $5555:AA seen.
    Unlock1 = 1,
    /// $5555:AA, $2AAA:55 seen.
    Unlock2 = 2,
    /// Byte program armed: the next write is the data.
    Program = 3,
    /// $80 (erase setup) seen.
    EraseSetup = 4,
    /// Erase setup, then $5555:AA.
    EraseUnlock1 = 5,
    /// Erase setup, then $5555:AA, $2AAA:55: the next write says sector or chip.
    EraseUnlock2 = 6,
}

impl Step {
    fn from_u8(value: u8) -> Step {
        match value {
            1 => Step::Unlock1,
            2 => Step::Unlock2,
            3 => Step::Program,
            4 => Step::EraseSetup,
            5 => Step::EraseUnlock1,
            6 => Step::EraseUnlock2,
            _ => Step::Read,
        }
    }
}

/// What a write made the chip do to its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FlashOp {
    /// Nothing beyond its command state.
    None,
    /// Program the byte at this chip address with this data (clearing bits only).
    Program(usize, u8),
    /// Erase the 4 KiB sector holding this chip address.
    EraseSector(usize),
    /// Erase the whole chip.
    EraseChip,
    /// Software ID mode was entered or left: what reads return changed.
    IdMode,
}

/// Bytes of an erase sector.
pub(super) const FLASH_SECTOR: usize = 0x1000;
/// The manufacturer ID (SST).
pub(super) const FLASH_MANUFACTURER_ID: u8 = 0xBF;

/// The device ID of the smallest SST39SF0x0 holding `len` bytes.
pub(super) fn flash_device_id(len: usize) -> u8 {
    match len {
        0..=0x2_0000 => 0xB5,
        0x2_0001..=0x4_0000 => 0xB6,
        _ => 0xB7,
    }
}

/// The byte a read in software ID mode returns at chip address `chip_addr`.
pub(super) fn flash_id_byte(chip_addr: usize, len: usize) -> u8 {
    if chip_addr & 1 == 0 { FLASH_MANUFACTURER_ID } else { flash_device_id(len) }
}

impl FlashState {
    /// True in software ID mode.
    pub(super) fn id_mode(&self) -> bool {
        self.id_mode != 0
    }

    /// A write of `value` at chip address `chip_addr`.
    pub(super) fn write(&mut self, chip_addr: usize, value: u8) -> FlashOp {
        let command = chip_addr & 0x7FFF;
        let step = Step::from_u8(self.step);
        self.step = Step::Read as u8;
        if self.id_mode() {
            return self.write_in_id_mode(step, command, value);
        }
        match (step, command, value) {
            (Step::Unlock1, 0x2AAA, 0x55) => self.step = Step::Unlock2 as u8,
            (Step::Unlock2, 0x5555, 0xA0) => self.step = Step::Program as u8,
            (Step::Unlock2, 0x5555, 0x80) => self.step = Step::EraseSetup as u8,
            (Step::Unlock2, 0x5555, 0x90) => {
                self.id_mode = 1;
                return FlashOp::IdMode;
            }
            (Step::Program, _, _) => return FlashOp::Program(chip_addr, value),
            (Step::EraseSetup, 0x5555, 0xAA) => self.step = Step::EraseUnlock1 as u8,
            (Step::EraseUnlock1, 0x2AAA, 0x55) => self.step = Step::EraseUnlock2 as u8,
            (Step::EraseUnlock2, _, 0x30) => return FlashOp::EraseSector(chip_addr),
            (Step::EraseUnlock2, 0x5555, 0x10) => return FlashOp::EraseChip,
            (_, 0x5555, 0xAA) => self.step = Step::Unlock1 as u8,
            _ => {}
        }
        FlashOp::None
    }

    /// A write in software ID mode: only the exits count.
    fn write_in_id_mode(&mut self, step: Step, command: usize, value: u8) -> FlashOp {
        match (step, command, value) {
            (_, _, 0xF0) => {
                self.id_mode = 0;
                return FlashOp::IdMode;
            }
            (Step::Unlock1, 0x2AAA, 0x55) => self.step = Step::Unlock2 as u8,
            (_, 0x5555, 0xAA) => self.step = Step::Unlock1 as u8,
            _ => {}
        }
        FlashOp::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sequence(flash: &mut FlashState, writes: &[(usize, u8)]) -> Vec<FlashOp> {
        writes.iter().map(|&(addr, value)| flash.write(addr, value)).collect()
    }

    #[test]
    fn the_datasheet_sequences_program_erase_and_identify() {
        let mut flash = FlashState::default();
        // A15 and up are don't-care: $1D555 is $5555 to the command decoder.
        let ops = sequence(&mut flash, &[(0x1D555, 0xAA), (0x2AAA, 0x55), (0x5555, 0xA0), (0x4_1234, 0x5A)]);
        assert_eq!(ops.last(), Some(&FlashOp::Program(0x4_1234, 0x5A)));
        assert_eq!(flash, FlashState::default(), "back to reading after the data");
        let erase = [(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0x80), (0x5555, 0xAA), (0x2AAA, 0x55)];
        let mut writes = erase.to_vec();
        writes.push((0x3_7001, 0x30));
        assert_eq!(sequence(&mut flash, &writes).last(), Some(&FlashOp::EraseSector(0x3_7001)));
        let mut writes = erase.to_vec();
        writes.push((0x5555, 0x10));
        assert_eq!(sequence(&mut flash, &writes).last(), Some(&FlashOp::EraseChip));
        let ops = sequence(&mut flash, &[(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0x90)]);
        assert_eq!((ops[2], flash.id_mode()), (FlashOp::IdMode, true));
        assert_eq!((flash_id_byte(0x8000, 0x8_0000), flash_id_byte(0x8001, 0x8_0000)), (0xBF, 0xB7));
        assert_eq!((flash_device_id(0x2_0000), flash_device_id(0x4_0000)), (0xB5, 0xB6));
        // In ID mode a program sequence does nothing; $F0 anywhere leaves it.
        let ops = sequence(&mut flash, &[(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0xA0), (0x100, 0x00)]);
        assert!(ops.iter().all(|&op| op == FlashOp::None) && flash.id_mode());
        assert_eq!(flash.write(0x1234, 0xF0), FlashOp::IdMode);
        assert!(!flash.id_mode());
        // And the three-write exit.
        sequence(&mut flash, &[(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0x90)]);
        let ops = sequence(&mut flash, &[(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0xF0)]);
        assert_eq!((ops[2], flash.id_mode()), (FlashOp::IdMode, false));
    }

    #[test]
    fn a_broken_sequence_returns_to_reading() {
        let mut flash = FlashState::default();
        // $2AAA:55 at the wrong address ($2AAB), then the command: nothing armed.
        let ops = sequence(&mut flash, &[(0x5555, 0xAA), (0x2AAB, 0x55), (0x5555, 0xA0), (0x100, 0x00)]);
        assert!(ops.iter().all(|&op| op == FlashOp::None));
        // A stray write between the unlock writes; a new $5555:AA restarts the sequence.
        let ops = sequence(
            &mut flash,
            &[(0x5555, 0xAA), (0x0000, 0x00), (0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0xA0), (7, 1)],
        );
        assert_eq!(ops.last(), Some(&FlashOp::Program(7, 1)));
        // Sector erase needs $30; chip erase needs $5555.
        let erase = [(0x5555, 0xAA), (0x2AAA, 0x55), (0x5555, 0x80), (0x5555, 0xAA), (0x2AAA, 0x55)];
        let mut writes = erase.to_vec();
        writes.push((0x1234, 0x10));
        assert!(sequence(&mut flash, &writes).iter().all(|&op| op == FlashOp::None));
        // An unknown step byte (from a forged snapshot) reads as the start.
        flash.step = 0xEE;
        assert_eq!(flash.write(0x100, 0x00), FlashOp::None);
        assert_eq!(flash.step, Step::Read as u8);
    }
}
