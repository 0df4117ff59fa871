//! Fault injection: deliberate, named corruptions of one machine's state, so a lockstep harness can
//! prove it catches what it claims to (like hardware lockstep's injected mismatch).

use thiserror::Error;

use super::Section;
use crate::nes::Nes;

/// Why a fault could not be injected. The machine is left untouched.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FaultError {
    /// The offset is past the end of the section.
    #[error("offset {offset:#x} is outside section {section} ({len} bytes)")]
    OutOfRange {
        /// Section name.
        section: &'static str,
        /// Offset asked for.
        offset: usize,
        /// Section length.
        len: usize,
    },
    /// Bit number above 7.
    #[error("bit {bit} does not exist (bits are 0-7)")]
    BadBit {
        /// Bit asked for.
        bit: u8,
    },
    /// The flipped state would be impossible (e.g. a CPU/PPU phase outside 0-3).
    #[error("flipping bit {bit} of {section}[{offset:#x}] makes an impossible state: {why}")]
    Impossible {
        /// Section name.
        section: &'static str,
        /// Byte offset of the flip within the section.
        offset: usize,
        /// Bit flipped within that byte, 0 the least significant.
        bit: u8,
        /// Which rule of the state the flipped value breaks.
        why: String,
    },
}

impl Nes {
    /// The body of `Harness::flip_state_bit` (`harness.rs`).
    pub(crate) fn flip_state_bit(
        &mut self,
        section: Section,
        offset: usize,
        bit: u8,
    ) -> Result<(), FaultError> {
        if bit > 7 {
            return Err(FaultError::BadBit { bit });
        }
        let len = self.section_bytes(section).len();
        if offset >= len {
            return Err(FaultError::OutOfRange { section: section.name(), offset, len });
        }
        // Flipped in place and checked there; a refusal flips the bit back, leaving no trace.
        self.section_bytes_mut(section)[offset] ^= 1 << bit;
        if let Err(e) = self.check_contents(&|s| self.section_bytes(s)) {
            self.section_bytes_mut(section)[offset] ^= 1 << bit;
            return Err(FaultError::Impossible { section: section.name(), offset, bit, why: e.to_string() });
        }
        self.rebuild_caches();
        Ok(())
    }

    /// The body of `Harness::stall_cycles` (`harness.rs`).
    pub(crate) fn stall_cycles(&mut self, cycles: u32) {
        for _ in 0..cycles {
            crate::region::with_region_model!(self.region(), R => self.read::<R>(self.cpu.pc));
        }
        self.catch_up();
    }
}
