//! The snapshot of a libretro machine: the core's serialized state with what the host holds beside
//! it (the frame counter, the last picture and audio, which `retro_unserialize` does not bring back)
//! and, for diffs only, each memory region as it was. Sections are named, so a parent process that
//! only sees snapshots over the worker protocol can name the region and offset of a difference.
//!
//! Layout (little-endian): magic `ANESRTRO`, format version (u16), section count (u16), zero (u32),
//! frame (u64), picture width, height and pixel format (u32 each), zero (u32); then per section its
//! name's length (u16), the name (UTF-8), its length (u32) and its bytes.

/// The snapshot's first bytes.
pub const MAGIC: &[u8; 8] = b"ANESRTRO";
/// The layout's version.
pub const VERSION: u16 = 1;
/// Bytes before the first section.
pub const HEADER_LEN: usize = 40;
/// Sections at most (a core's memory map has a few dozen at most).
pub const MAX_SECTIONS: usize = 1024;

/// Why bytes are not a snapshot of this layout.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// Shorter than the header, or a section cut off.
    #[error("snapshot cut off at byte {at} ({len} bytes): {what}")]
    Truncated {
        /// Where the missing bytes start.
        at: usize,
        /// The snapshot's length.
        len: usize,
        /// What was being read.
        what: &'static str,
    },
    /// Not this layout's magic.
    #[error("not a libretro machine snapshot (its first 8 bytes are not ANESRTRO)")]
    Magic,
    /// Another version of the layout.
    #[error("snapshot format version {0}, this build reads version {VERSION}")]
    Version(u16),
    /// More sections than any machine has.
    #[error("{0} sections, at most {MAX_SECTIONS}")]
    TooManySections(usize),
    /// A section's name is not UTF-8.
    #[error("section {index}'s name is not UTF-8")]
    Name {
        /// The section's index.
        index: usize,
    },
    /// Bytes after the last section.
    #[error("{0} bytes after the last section")]
    Trailing(usize),
    /// A section's name longer than its u16 length field holds (when writing).
    #[error("section {index}'s name is {len} bytes, at most {max}", max = u16::MAX)]
    NameTooLong {
        /// The section's index.
        index: usize,
        /// The name's length.
        len: usize,
    },
    /// A section longer than its u32 length field holds (when writing).
    #[error("section {name} is {len} bytes, at most {max}", max = u32::MAX)]
    SectionTooLarge {
        /// The section's name.
        name: String,
        /// Its length.
        len: usize,
    },
}

/// A parsed snapshot, borrowing its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot<'a> {
    /// Frames the machine had run.
    pub frame: u64,
    /// The last picture's width, height and `PIXEL_FORMAT_*`.
    pub picture: (u32, u32, u32),
    /// Each section's name and bytes, in order.
    pub sections: Vec<(&'a str, &'a [u8])>,
}

impl<'a> Snapshot<'a> {
    /// The bytes of the section named `name`.
    pub fn section(&self, name: &str) -> Option<&'a [u8]> {
        self.sections.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
}

/// The length fields of section `index`, if they hold its lengths.
fn length_fields(index: usize, name: &str, len: usize) -> Result<(u16, u32), SnapshotError> {
    let name_field =
        u16::try_from(name.len()).map_err(|_| SnapshotError::NameTooLong { index, len: name.len() })?;
    let len_field =
        u32::try_from(len).map_err(|_| SnapshotError::SectionTooLarge { name: name.into(), len })?;
    Ok((name_field, len_field))
}

/// Writes a snapshot into `out` (replacing its contents), or refuses, writing nothing, what
/// [`parse`] would not read back: more than [`MAX_SECTIONS`] sections, or a name or section too
/// long for its length field.
pub fn try_write(
    out: &mut Vec<u8>,
    frame: u64,
    picture: (u32, u32, u32),
    sections: &[(&str, &[u8])],
) -> Result<(), SnapshotError> {
    out.clear();
    if sections.len() > MAX_SECTIONS {
        return Err(SnapshotError::TooManySections(sections.len()));
    }
    for (index, (name, bytes)) in sections.iter().enumerate() {
        length_fields(index, name, bytes.len())?;
    }
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    // At most MAX_SECTIONS (checked above).
    out.extend_from_slice(&(sections.len() as u16).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&frame.to_le_bytes());
    for value in [picture.0, picture.1, picture.2, 0] {
        out.extend_from_slice(&value.to_le_bytes());
    }
    for (index, (name, bytes)) in sections.iter().enumerate() {
        let (name_len, len) = length_fields(index, name, bytes.len())?;
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(bytes);
    }
    Ok(())
}

/// [`try_write`], leaving `out` empty (which [`parse`] refuses) where it refuses.
pub fn write(out: &mut Vec<u8>, frame: u64, picture: (u32, u32, u32), sections: &[(&str, &[u8])]) {
    let _ = try_write(out, frame, picture, sections);
}

/// Reads a snapshot; every length is checked against the bytes there are.
pub fn parse(bytes: &[u8]) -> Result<Snapshot<'_>, SnapshotError> {
    let len = bytes.len();
    let take = |at: usize, n: usize, what: &'static str| -> Result<&[u8], SnapshotError> {
        at.checked_add(n).and_then(|end| bytes.get(at..end)).ok_or(SnapshotError::Truncated { at, len, what })
    };
    let header = take(0, HEADER_LEN, "the header")?;
    if &header[..8] != MAGIC {
        return Err(SnapshotError::Magic);
    }
    let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]);
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let version = u16_at(header, 8);
    if version != VERSION {
        return Err(SnapshotError::Version(version));
    }
    let count = usize::from(u16_at(header, 10));
    if count > MAX_SECTIONS {
        return Err(SnapshotError::TooManySections(count));
    }
    let frame = u64::from_le_bytes(header[16..24].try_into().expect("8 bytes"));
    let picture = (u32_at(header, 24), u32_at(header, 28), u32_at(header, 32));
    let mut at = HEADER_LEN;
    let mut sections = Vec::with_capacity(count);
    for index in 0..count {
        let name_len = usize::from(u16_at(take(at, 2, "a section's name length")?, 0));
        at += 2;
        let name = std::str::from_utf8(take(at, name_len, "a section's name")?)
            .map_err(|_| SnapshotError::Name { index })?;
        at += name_len;
        let body_len = u32_at(take(at, 4, "a section's length")?, 0) as usize;
        at += 4;
        let body = take(at, body_len, "a section's bytes")?;
        at += body_len;
        sections.push((name, body));
    }
    if at != len {
        return Err(SnapshotError::Trailing(len - at));
    }
    Ok(Snapshot { frame, picture, sections })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_written_snapshot_reads_back() {
        let mut out = Vec::new();
        write(&mut out, 7, (64, 48, 1), &[("state", &[1, 2, 3]), ("system_ram", &[9; 5])]);
        let snapshot = parse(&out).unwrap();
        assert_eq!(snapshot.frame, 7);
        assert_eq!(snapshot.picture, (64, 48, 1));
        assert_eq!(snapshot.section("state"), Some(&[1u8, 2, 3][..]));
        assert_eq!(snapshot.section("system_ram"), Some(&[9u8; 5][..]));
        out.push(0);
        assert_eq!(parse(&out), Err(SnapshotError::Trailing(1)));
        assert!(matches!(parse(&out[..50]), Err(SnapshotError::Truncated { .. })));
    }

    #[test]
    fn what_the_parser_would_refuse_is_not_written() {
        let mut out = vec![1];
        let empty: &[u8] = &[];
        let sections = vec![("s", empty); MAX_SECTIONS];
        try_write(&mut out, 0, (0, 0, 0), &sections).unwrap();
        assert_eq!(parse(&out).unwrap().sections.len(), MAX_SECTIONS, "the most the parser reads");
        let sections = vec![("s", empty); MAX_SECTIONS + 1];
        assert_eq!(
            try_write(&mut out, 0, (0, 0, 0), &sections),
            Err(SnapshotError::TooManySections(MAX_SECTIONS + 1))
        );
        assert!(out.is_empty(), "nothing written");
        // 65536 sections: a u16 count would wrap to 0.
        let sections = vec![("s", empty); 1 << 16];
        assert_eq!(
            try_write(&mut out, 0, (0, 0, 0), &sections),
            Err(SnapshotError::TooManySections(1 << 16))
        );
        let long = "n".repeat(1 << 16);
        assert_eq!(
            try_write(&mut out, 0, (0, 0, 0), &[("state", &[1]), (&long, &[2])]),
            Err(SnapshotError::NameTooLong { index: 1, len: 1 << 16 })
        );
        assert!(out.is_empty());
        // A section of 4 GiB is not allocated here: its length check, with the lengths alone.
        assert_eq!(
            length_fields(3, "map.ram.0", 1 << 32),
            Err(SnapshotError::SectionTooLarge { name: "map.ram.0".into(), len: 1 << 32 })
        );
        assert_eq!(length_fields(3, "map.ram.0", u32::MAX as usize), Ok((9, u32::MAX)));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn damaged_snapshots_never_panic(cut in 0usize..200, flip in 0usize..200, bit in 0u8..8) {
            let mut out = Vec::new();
            write(&mut out, 3, (2, 2, 1), &[("state", &[7; 40]), ("audio", &[1; 30]), ("picture", &[0; 16])]);
            if flip < out.len() {
                out[flip] ^= 1 << bit;
            }
            out.truncate(cut.min(out.len()));
            let _ = parse(&out);
        }
    }
}
