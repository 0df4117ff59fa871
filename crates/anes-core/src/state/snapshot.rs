//! The snapshot format (version 1), little-endian:
//!
//! Header (48 bytes): magic `ANESSNAP` (8), format version `u16`, section count `u16`, region `u8`
//! (0 = NTSC), 3 reserved zero bytes, ROM identity (32, blake3 of PRG + CHR ROM and the header's wiring).
//! Then every section of [`Section::ALL`] in order: tag (4 ASCII bytes), section version `u16`,
//! 2 reserved zero bytes, payload length `u32`, checksum (the first 8 bytes of blake3 of the payload),
//! payload. Loading validates everything, framing and contents, before it changes anything.

use thiserror::Error;

use super::{MachineState, Section};
use crate::bus::sync::BusState;
use crate::clock::MAX_MASTER_CLOCK;
use crate::hex::to_hex;
use crate::nes::Nes;
use crate::power_on::NesConfig;
use crate::ppu::PpuRegs;

/// First bytes of every snapshot.
pub const SNAPSHOT_MAGIC: [u8; 8] = *b"ANESSNAP";
/// The snapshot format version this build writes and reads.
pub const SNAPSHOT_VERSION: u16 = 1;
/// Bytes before the first section.
pub const SNAPSHOT_HEADER_LEN: usize = 48;
const SECTION_HEADER_LEN: usize = 20;

/// Why a snapshot was refused. The running machine is left untouched.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SnapshotError {
    /// Ends before its header or a section does.
    #[error("snapshot truncated: {needed} bytes needed at offset {offset} ({what}) but only {len} present")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Byte offset in the snapshot where the read started.
        offset: usize,
        /// Bytes needed from there.
        needed: usize,
        /// Snapshot length.
        len: usize,
    },
    /// Not a snapshot.
    #[error("bad magic at offset 0: expected \"ANESSNAP\", found {found:02X?}")]
    BadMagic {
        /// The first eight bytes.
        found: [u8; 8],
    },
    /// Written by an incompatible version of the format.
    #[error(
        "snapshot format version {found} (offset 8) is not supported; this build reads version {supported}"
    )]
    UnsupportedVersion {
        /// Version found.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// The region byte (offset 12) names no region this build models (0 NTSC, 1 PAL, 2 Dendy).
    #[error(
        "snapshot region byte {found} (offset 12) is not a region; this build models NTSC (0), PAL (1) and Dendy (2)"
    )]
    UnsupportedRegion {
        /// Region byte found.
        found: u8,
    },
    /// A snapshot of another region's console: it never restores into this one.
    #[error(
        "snapshot of a {found} console (region byte at offset 12) cannot restore into a {expected} console"
    )]
    WrongRegion {
        /// The snapshot's region.
        found: crate::Region,
        /// This console's region.
        expected: crate::Region,
    },
    /// A byte the format reserves (always written as zero) is not zero: the file was not written by
    /// this format, or is damaged.
    #[error("reserved byte at offset {offset} ({what}) is {found:#04x}; the format requires zero")]
    ReservedByte {
        /// Where the byte is.
        offset: usize,
        /// Which header it belongs to.
        what: &'static str,
        /// Its value.
        found: u8,
    },
    /// Taken with another ROM (or with a header wiring it otherwise, or with other Game Genie codes,
    /// which are part of the identity).
    #[error(
        "snapshot belongs to another ROM: identity {found} (offset 16), this machine runs {expected} \
         (the identity covers the header's wiring and the Game Genie codes too)"
    )]
    WrongRom {
        /// Identity stored in the snapshot (hex).
        found: String,
        /// Identity of the running ROM (hex).
        expected: String,
    },
    /// Sections missing, extra or out of order.
    #[error("snapshot has {found} sections (offset 10), expected {expected}")]
    SectionCount {
        /// Count found.
        found: u16,
        /// Count expected.
        expected: u16,
    },
    /// An unexpected tag where a section should be.
    #[error("section {index} at offset {offset}: expected tag {expected:?}, found {found:?}")]
    UnexpectedSection {
        /// Index of the section.
        index: usize,
        /// Offset of its header.
        offset: usize,
        /// The tag expected there.
        expected: String,
        /// The tag found.
        found: String,
    },
    /// A section layout version this build cannot read.
    #[error(
        "section {section} at offset {offset}: version {found} is not supported (this build reads {supported})"
    )]
    SectionVersion {
        /// Section name.
        section: &'static str,
        /// Offset of its header.
        offset: usize,
        /// Version found.
        found: u16,
        /// Version this build reads.
        supported: u16,
    },
    /// A section of another size than this machine's.
    #[error("section {section} at offset {offset}: {found} bytes, but this machine's is {expected}")]
    SectionLength {
        /// Section name.
        section: &'static str,
        /// Offset of its header.
        offset: usize,
        /// Length found.
        found: usize,
        /// Length expected.
        expected: usize,
    },
    /// A damaged section.
    #[error("section {section} at offset {offset}: checksum mismatch, the snapshot is damaged")]
    Checksum {
        /// Section name.
        section: &'static str,
        /// Offset of its header.
        offset: usize,
    },
    /// Valid framing but impossible contents (e.g. a clock near the end of its range, a reserved field
    /// that is not zero).
    #[error("section {section}: invalid contents: {why}")]
    InvalidContents {
        /// Section name.
        section: &'static str,
        /// What is wrong.
        why: String,
    },
    /// Bytes after the last section.
    #[error("snapshot has {extra} unexpected bytes after the last section (offset {offset})")]
    TrailingBytes {
        /// Where they start.
        offset: usize,
        /// How many.
        extra: usize,
    },
}

/// A caller's buffer is too small for a snapshot ([`Nes::save_state_into`]); nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("snapshot needs {needed} bytes but the buffer has {len}")]
pub struct SnapshotBufferError {
    /// The snapshot's length ([`Nes::snapshot_len`]).
    pub needed: usize,
    /// The buffer's length.
    pub len: usize,
}

fn checksum(payload: &[u8]) -> [u8; 8] {
    let hash = blake3::hash(payload);
    hash.as_bytes()[..8].try_into().expect("8 bytes")
}

/// Refuses a non-zero byte in `range` of `bytes`, which the format reserves.
fn reserved_zero(
    bytes: &[u8],
    range: core::ops::Range<usize>,
    what: &'static str,
) -> Result<(), SnapshotError> {
    let start = range.start;
    match bytes[range].iter().position(|&b| b != 0) {
        Some(at) => Err(SnapshotError::ReservedByte { offset: start + at, what, found: bytes[start + at] }),
        None => Ok(()),
    }
}

impl Nes {
    /// The size of this machine's snapshots in bytes (fixed for a given ROM).
    pub fn snapshot_len(&self) -> usize {
        SNAPSHOT_HEADER_LEN
            + Section::ALL.iter().map(|&s| SECTION_HEADER_LEN + self.section_bytes(s).len()).sum::<usize>()
    }

    /// Writes a snapshot into `out`, replacing its contents. Reusing a buffer with enough capacity
    /// (see [`Nes::snapshot_len`]) allocates nothing.
    pub fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        self.write_snapshot(|bytes| out.extend_from_slice(bytes));
    }

    /// Writes a snapshot into the first [`Nes::snapshot_len`] bytes of `out` (a caller's fixed-size
    /// buffer, e.g. a libretro frontend's) and returns that length; the rest of `out` is untouched.
    /// The bytes are those [`Nes::save_state`] writes. Allocation-free.
    ///
    /// ```
    /// # let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// # let mut prg = vec![0xEA; 0x4000];
    /// # prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// # rom.extend(prg);
    /// # rom.extend(vec![0x55; 0x2000]);
    /// let nes = anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom)?, Default::default());
    /// let mut buffer = [0u8; 16 * 1024];
    /// let len = nes.save_state_into(&mut buffer).expect("16 KiB holds an NROM machine");
    /// let mut vec = Vec::new();
    /// nes.save_state(&mut vec);
    /// assert_eq!(&buffer[..len], &vec[..]);
    /// assert!(nes.save_state_into(&mut buffer[..100]).is_err());
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn save_state_into(&self, out: &mut [u8]) -> Result<usize, SnapshotBufferError> {
        let len = self.snapshot_len();
        let Some(target) = out.get_mut(..len) else {
            return Err(SnapshotBufferError { needed: len, len: out.len() });
        };
        let mut at = 0;
        self.write_snapshot(|bytes| {
            target[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        });
        debug_assert_eq!(at, len, "snapshot_len matches what write_snapshot writes");
        Ok(len)
    }

    /// The snapshot's bytes in order, in pieces: the one writer behind both save methods.
    fn write_snapshot(&self, mut put: impl FnMut(&[u8])) {
        put(&SNAPSHOT_MAGIC);
        put(&SNAPSHOT_VERSION.to_le_bytes());
        put(&(Section::ALL.len() as u16).to_le_bytes());
        put(&[self.region() as u8, 0, 0, 0]);
        put(&self.rom_identity);
        for section in Section::ALL {
            let payload = self.section_bytes(section);
            put(&section.tag());
            put(&section.version().to_le_bytes());
            put(&[0, 0]);
            put(&(payload.len() as u32).to_le_bytes());
            put(&checksum(payload));
            put(payload);
        }
    }

    /// Restores a snapshot taken with [`Nes::save_state`] on a machine running the same ROM. Framing,
    /// checksums and contents are all validated against the snapshot's bytes before anything is
    /// copied: on error the machine is untouched. Allocation-free.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let payloads = self.validate_snapshot(bytes)?;
        let payload = |section: Section| &bytes[payloads[section.index()].clone()];
        self.check_contents(&payload)?;
        for section in Section::ALL {
            self.section_bytes_mut(section).copy_from_slice(payload(section));
        }
        self.rebuild_caches();
        Ok(())
    }

    /// The invariants a state must satisfy beyond framing and checksums, checked on the section bytes
    /// `section_bytes` returns (a snapshot's, or this machine's own). Every component tolerates any
    /// other byte values without panicking; these are the values that would make the machine lie
    /// (a clock that could wrap, a config that does not exist, reserved bytes that feed the hash).
    pub(crate) fn check_contents<'a>(
        &self,
        section_bytes: &dyn Fn(Section) -> &'a [u8],
    ) -> Result<(), SnapshotError> {
        let invalid =
            |section: Section, why: String| SnapshotError::InvalidContents { section: section.name(), why };
        let machine: MachineState = bytemuck::pod_read_unaligned(section_bytes(Section::Machine));
        let bus: BusState = bytemuck::pod_read_unaligned(section_bytes(Section::Bus));
        let ppu: PpuRegs = bytemuck::pod_read_unaligned(section_bytes(Section::Ppu));
        let config = NesConfig::from_state(&machine).map_err(|why| invalid(Section::Machine, why))?;
        // The region is fixed at power-on: the section must agree with the console (and the header).
        if machine.region != self.region() as u8 {
            return Err(invalid(
                Section::Machine,
                format!(
                    "machine.region {} is not this console's region {} ({})",
                    machine.region,
                    self.region() as u8,
                    self.region()
                ),
            ));
        }
        let clocks = self.region().timing();
        if bus.ppu_offset > 3 {
            return Err(invalid(
                Section::Bus,
                format!("bus.ppu_offset {} is not a phase (0-3)", bus.ppu_offset),
            ));
        }
        // The phase chosen at power-on never changes afterwards.
        if config.alignment() != bus.ppu_offset {
            return Err(invalid(
                Section::Machine,
                format!(
                    "machine.cpu_ppu_alignment {} gives phase {} at power-on, but bus.ppu_offset is {}",
                    machine.cpu_ppu_alignment,
                    config.alignment(),
                    bus.ppu_offset
                ),
            ));
        }
        if bus.master_clock > MAX_MASTER_CLOCK {
            return Err(invalid(
                Section::Bus,
                format!(
                    "bus.master_clock {} is beyond the largest supported {MAX_MASTER_CLOCK}",
                    bus.master_clock
                ),
            ));
        }
        // Snapshots are taken between instructions: every cycle is complete and the PPU has caught up.
        if bus.cpu_cycle.checked_mul(clocks.master_per_cpu_cycle) != Some(bus.master_clock) {
            return Err(invalid(
                Section::Bus,
                format!(
                    "bus.master_clock {} is not {} x bus.cpu_cycle {}",
                    bus.master_clock, clocks.master_per_cpu_cycle, bus.cpu_cycle
                ),
            ));
        }
        let ppu_target = bus.master_clock.saturating_sub(u64::from(bus.ppu_offset));
        if bus.ppu_clock > ppu_target || ppu_target - bus.ppu_clock >= clocks.master_per_dot {
            return Err(invalid(
                Section::Bus,
                format!(
                    "bus.ppu_clock {} is not caught up with bus.master_clock {}",
                    bus.ppu_clock, bus.master_clock
                ),
            ));
        }
        // Counters of events that each take at least one CPU cycle cannot exceed the cycle count.
        if machine.frame > bus.cpu_cycle {
            return Err(invalid(
                Section::Machine,
                format!("machine.frame {} exceeds bus.cpu_cycle {}", machine.frame, bus.cpu_cycle),
            ));
        }
        if ppu.frames_completed > bus.cpu_cycle {
            return Err(invalid(
                Section::Ppu,
                format!(
                    "ppu.frames_completed {} exceeds bus.cpu_cycle {}",
                    ppu.frames_completed, bus.cpu_cycle
                ),
            ));
        }
        if bus.oam_dma_count >= 512 {
            return Err(invalid(
                Section::Bus,
                format!("bus.oam_dma_count {} is not a sprite DMA byte count (0-511)", bus.oam_dma_count),
            ));
        }
        for section in Section::ALL {
            if let Some(layout) = self.section_layout(section) {
                if let Some(offset) = super::fields::nonzero_reserved_byte(layout, section_bytes(section)) {
                    let mut name = String::new();
                    self.field_name(section, offset, &mut name);
                    return Err(invalid(section, format!("{name} is reserved and must be zero")));
                }
            }
        }
        Ok(())
    }

    /// Checks framing, versions, identity, lengths and checksums; returns each section's payload range.
    fn validate_snapshot(
        &self,
        bytes: &[u8],
    ) -> Result<[core::ops::Range<usize>; Section::ALL.len()], SnapshotError> {
        let need = |what, offset: usize, needed: usize| {
            if bytes.len() < offset + needed {
                Err(SnapshotError::Truncated { what, offset, needed, len: bytes.len() })
            } else {
                Ok(())
            }
        };
        need("header", 0, SNAPSHOT_HEADER_LEN)?;
        let magic: [u8; 8] = bytes[0..8].try_into().expect("8 bytes");
        if magic != SNAPSHOT_MAGIC {
            return Err(SnapshotError::BadMagic { found: magic });
        }
        let version = u16::from_le_bytes([bytes[8], bytes[9]]);
        if version != SNAPSHOT_VERSION {
            return Err(SnapshotError::UnsupportedVersion { found: version, supported: SNAPSHOT_VERSION });
        }
        let count = u16::from_le_bytes([bytes[10], bytes[11]]);
        if usize::from(count) != Section::ALL.len() {
            return Err(SnapshotError::SectionCount { found: count, expected: Section::ALL.len() as u16 });
        }
        let region =
            crate::Region::from_u8(bytes[12]).ok_or(SnapshotError::UnsupportedRegion { found: bytes[12] })?;
        if region != self.region() {
            return Err(SnapshotError::WrongRegion { found: region, expected: self.region() });
        }
        reserved_zero(bytes, 13..16, "snapshot header")?;
        if bytes[16..48] != self.rom_identity {
            return Err(SnapshotError::WrongRom {
                found: to_hex(&bytes[16..48]),
                expected: to_hex(&self.rom_identity),
            });
        }
        let mut offset = SNAPSHOT_HEADER_LEN;
        let mut ranges: [core::ops::Range<usize>; Section::ALL.len()] = Default::default();
        for (index, section) in Section::ALL.into_iter().enumerate() {
            need("section header", offset, SECTION_HEADER_LEN)?;
            let header = &bytes[offset..offset + SECTION_HEADER_LEN];
            if header[0..4] != section.tag() {
                return Err(SnapshotError::UnexpectedSection {
                    index,
                    offset,
                    expected: String::from_utf8_lossy(&section.tag()).into_owned(),
                    found: String::from_utf8_lossy(&header[0..4]).into_owned(),
                });
            }
            reserved_zero(bytes, offset + 6..offset + 8, "section header")?;
            let found_version = u16::from_le_bytes([header[4], header[5]]);
            if found_version != section.version() {
                return Err(SnapshotError::SectionVersion {
                    section: section.name(),
                    offset,
                    found: found_version,
                    supported: section.version(),
                });
            }
            let len = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")) as usize;
            let expected = self.section_bytes(section).len();
            if len != expected {
                return Err(SnapshotError::SectionLength {
                    section: section.name(),
                    offset,
                    found: len,
                    expected,
                });
            }
            let start = offset + SECTION_HEADER_LEN;
            need(section.name(), start, len)?;
            if checksum(&bytes[start..start + len]) != header[12..20] {
                return Err(SnapshotError::Checksum { section: section.name(), offset });
            }
            ranges[index] = start..start + len;
            offset = start + len;
        }
        if offset != bytes.len() {
            return Err(SnapshotError::TrailingBytes { offset, extra: bytes.len() - offset });
        }
        Ok(ranges)
    }
}
