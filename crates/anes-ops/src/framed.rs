//! Append-only files of framed records, the layout the journal (and the dead-letter queue files of
//! earlier versions) use. All little-endian:
//!
//! ```text
//! file header:  magic (8) | version u16 | id length u16 | pipeline id | [version 2: identity (16)] | blake3 of the preceding, first 8 bytes
//! each record:  marker "REC1" | payload length u32 | blake3 of the payload, first 8 bytes | payload
//! ```
//!
//! Version 2 headers carry the identity of the journal that wrote the file (chosen at random when the
//! journal was created), so a file copied in from another data directory is refused by name.
//!
//! Appending a record is one `write` at the end of the file, then an fsync by policy ([`FsyncPolicy`]).
//! What a crash leaves: the records completely written before it, then possibly a **torn tail**: the
//! start of the record being written, that is a prefix of a record's frame (part of its header, or a
//! whole header whose payload is cut short), and only that. [`scan`] reads the records in order,
//! verifying each. Anything else that fails is **damage** (a complete record whose checksum fails,
//! bytes where a record's marker should be): the scan reports the stretch and searches for the next
//! marker that starts a record that verifies, so one damaged record never takes the following ones
//! with it. The search takes linear time: a file salted with false markers that claim megabytes
//! exhausts a hashing budget and is reported as damage from there on. Whether a torn tail or damage
//! costs acknowledged records is the reader's question (the journal compares what it read with its
//! acknowledged mark); `scan` never changes a file.

use std::ops::Range;

use serde::{Deserialize, Serialize};

/// Starts every record.
pub const RECORD_MARKER: [u8; 4] = *b"REC1";
/// The largest record payload.
pub const MAX_RECORD_LEN: usize = 16 << 20;
const RECORD_HEADER_LEN: usize = 16;
/// Headers without an identity (files of earlier versions).
const VERSION_WITHOUT_IDENTITY: u16 = 1;
/// Headers with the writer's identity.
const VERSION_WITH_IDENTITY: u16 = 2;
/// The length of a writer identity.
pub const IDENTITY_LEN: usize = 16;

/// When appended records are fsynced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsyncPolicy {
    /// After every record.
    Always,
    /// Once per accepted batch, before the producer gets its answer (the default): an acknowledged
    /// record survives a power failure.
    #[default]
    Batch,
    /// Never (the OS writes back when it likes): survives a crash of the service, not of the machine.
    Never,
}

/// The file header's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    /// The file kind's magic.
    pub magic: [u8; 8],
    /// The pipeline whose file this is; a file of another pipeline is refused on open.
    pub pipeline_id: String,
    /// The identity of the journal that wrote it (`None` in files of earlier versions).
    pub identity: Option<[u8; IDENTITY_LEN]>,
}

impl FileHeader {
    /// The header's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + IDENTITY_LEN + self.pipeline_id.len());
        out.extend_from_slice(&self.magic);
        let version = if self.identity.is_some() { VERSION_WITH_IDENTITY } else { VERSION_WITHOUT_IDENTITY };
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&(self.pipeline_id.len() as u16).to_le_bytes());
        out.extend_from_slice(self.pipeline_id.as_bytes());
        if let Some(identity) = &self.identity {
            out.extend_from_slice(identity);
        }
        let sum = checksum(&out);
        out.extend_from_slice(&sum);
        out
    }
}

/// The first 8 bytes of blake3.
pub fn checksum(bytes: &[u8]) -> [u8; 8] {
    blake3::hash(bytes).as_bytes()[..8].try_into().expect("8 bytes")
}

/// One record's frame around `payload`.
pub fn encode_record(payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&RECORD_MARKER);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&checksum(payload));
    out.extend_from_slice(payload);
}

/// A stretch of the file that held no valid record (damage), skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Damage {
    /// Where it starts.
    pub offset: u64,
    /// How long it is.
    pub len: u64,
    /// What was wrong at its start.
    pub reason: String,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes at offset {}: {}", self.len, self.offset, self.reason)
    }
}

/// `list` as one plain log value: each item's text, separated by "; ".
pub fn describe_all<T: std::fmt::Display>(list: impl IntoIterator<Item = T>) -> String {
    list.into_iter().map(|item| item.to_string()).collect::<Vec<_>>().join("; ")
}

/// What [`scan`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The file header.
    pub header: FileHeader,
    /// Where it ends.
    pub header_len: usize,
    /// The payloads of the records that verify, in file order.
    pub records: Vec<Range<usize>>,
    /// Damaged stretches skipped (records lost in the middle of the file).
    pub damage: Vec<Damage>,
    /// Offset where an incomplete last record starts (what a torn write leaves), if there is one.
    pub torn_tail: Option<usize>,
    /// The end of the last record that verifies (or of the header): where appending resumes.
    pub good_end: usize,
}

/// Why a file cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramedError {
    /// Not this kind of file.
    #[error("bad magic at offset 0: expected {expected:?}, found {found:02X?}")]
    BadMagic {
        /// The magic this file kind starts with, as text.
        expected: String,
        /// The file's first bytes in its place.
        found: Vec<u8>,
    },
    /// The header is short or damaged.
    #[error("the file header is {0}")]
    BadHeader(&'static str),
}

/// The record whose header is at `pos`, checked without its checksum: its marker, and a payload length
/// within `max_payload_len` and the file.
fn record_frame(bytes: &[u8], pos: usize, max_payload_len: usize) -> Result<Range<usize>, String> {
    let Some(head) = bytes.get(pos..pos + RECORD_HEADER_LEN) else {
        return Err("an incomplete record header".into());
    };
    if head[0..4] != RECORD_MARKER {
        return Err(format!("no record marker (found {:02X?})", &head[0..4]));
    }
    let len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize;
    if len > max_payload_len {
        return Err(format!("record length {len} beyond the {max_payload_len}-byte limit"));
    }
    let start = pos + RECORD_HEADER_LEN;
    if bytes.len() - start < len {
        return Err(format!("a record of {len} bytes cut short"));
    }
    Ok(start..start + len)
}

/// True when the bytes from `pos` to the end are the start of a record's frame that the end of the
/// file cut short, as a crash in the middle of an append leaves: part of the marker, or a whole
/// header whose payload is incomplete. Anything else there is damage.
fn is_cut_frame(bytes: &[u8], pos: usize, max_payload_len: usize) -> bool {
    let rest = &bytes[pos..];
    if rest.len() < RECORD_MARKER.len() {
        return RECORD_MARKER.starts_with(rest);
    }
    if rest[..4] != RECORD_MARKER {
        return false;
    }
    if rest.len() < RECORD_HEADER_LEN {
        return true;
    }
    let len = u32::from_le_bytes(rest[4..8].try_into().expect("4 bytes")) as usize;
    len <= max_payload_len && rest.len() - RECORD_HEADER_LEN < len
}

fn checksum_matches(bytes: &[u8], payload: &Range<usize>) -> bool {
    checksum(&bytes[payload.clone()]) == bytes[payload.start - 8..payload.start]
}

/// Bytes of record payloads a scan may hash, per byte of the file: every checksum counts, the
/// records read in turn as well as the candidates of a resynchronisation. Each record of a file this
/// service wrote is hashed at most twice (found by a resynchronisation, then read); a file salted
/// with false headers that each claim megabytes would otherwise cost the file's length times the
/// claims (a 12 MiB file with a marker every 16 bytes claiming 4 MiB: hours), whether the false
/// headers follow damage or each follow a good record.
const HASH_BUDGET_PER_BYTE: usize = 4;

/// Where the search for the next record after damage ended.
enum Resync {
    /// A record that verifies starts here.
    Found(usize),
    /// No record verifies before the end.
    NotFound,
    /// The hashing budget ran out at this offset.
    GaveUp(usize),
}

/// The first offset from `from` where a record that verifies starts. Each offset is looked at once,
/// and only a candidate whose frame fits is hashed, against `budget`.
fn resync(bytes: &[u8], from: usize, max_payload_len: usize, budget: &mut usize) -> Resync {
    let last = bytes.len().saturating_sub(RECORD_HEADER_LEN - 1);
    for pos in from..last {
        if bytes[pos..pos + 4] != RECORD_MARKER {
            continue;
        }
        let Ok(payload) = record_frame(bytes, pos, max_payload_len) else { continue };
        if payload.len() > *budget {
            return Resync::GaveUp(pos);
        }
        *budget -= payload.len();
        if checksum_matches(bytes, &payload) {
            return Resync::Found(pos);
        }
    }
    Resync::NotFound
}

/// Reads a framed file whose magic must be `magic` and whose record payloads are at most
/// `max_payload_len` bytes (at most [`MAX_RECORD_LEN`]; the dead-letter queue's are 11). Takes time
/// linear in the file's length and never panics, whatever the bytes.
pub fn scan(bytes: &[u8], magic: &[u8; 8], max_payload_len: usize) -> Result<Scan, FramedError> {
    let max_payload_len = max_payload_len.min(MAX_RECORD_LEN);
    if bytes.len() < 12 {
        return Err(FramedError::BadHeader("truncated"));
    }
    if &bytes[0..8] != magic {
        return Err(FramedError::BadMagic {
            expected: String::from_utf8_lossy(magic).into(),
            found: bytes[0..8].to_vec(),
        });
    }
    let identity_len = match u16::from_le_bytes([bytes[8], bytes[9]]) {
        VERSION_WITHOUT_IDENTITY => 0,
        VERSION_WITH_IDENTITY => IDENTITY_LEN,
        _ => return Err(FramedError::BadHeader("of an unsupported version")),
    };
    let id_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
    let header_len = 12 + id_len + identity_len + 8;
    if bytes.len() < header_len {
        return Err(FramedError::BadHeader("truncated"));
    }
    if checksum(&bytes[..header_len - 8]) != bytes[header_len - 8..header_len] {
        return Err(FramedError::BadHeader("damaged (checksum mismatch)"));
    }
    let header = FileHeader {
        magic: *magic,
        pipeline_id: String::from_utf8_lossy(&bytes[12..12 + id_len]).into_owned(),
        identity: (identity_len > 0)
            .then(|| bytes[12 + id_len..12 + id_len + IDENTITY_LEN].try_into().expect("16 bytes")),
    };
    let mut scan = Scan {
        header,
        header_len,
        records: Vec::new(),
        damage: Vec::new(),
        torn_tail: None,
        good_end: header_len,
    };
    let full_budget = bytes.len().saturating_mul(HASH_BUDGET_PER_BYTE);
    let mut budget = full_budget;
    let gave_up = |pos: usize, at: usize, reason: String, budget: usize| Damage {
        offset: pos as u64,
        len: (bytes.len() - pos) as u64,
        reason: format!(
            "{reason}; the search for the next record stopped at offset {at}, after hashing {} bytes of record payloads (the rest of the file is skipped)",
            full_budget - budget
        ),
    };
    let mut pos = header_len;
    while pos < bytes.len() {
        let reason = match record_frame(bytes, pos, max_payload_len) {
            Ok(payload) if payload.len() > budget => {
                let reason = format!("a record of {} bytes", payload.len());
                scan.damage.push(gave_up(pos, pos, reason, budget));
                break;
            }
            Ok(payload) => {
                budget -= payload.len();
                if checksum_matches(bytes, &payload) {
                    pos = payload.end;
                    scan.good_end = pos;
                    scan.records.push(payload);
                    continue;
                }
                "record checksum mismatch".to_string()
            }
            Err(reason) => reason,
        };
        // Resynchronize: the next marker that starts a record that verifies.
        match resync(bytes, pos + 1, max_payload_len, &mut budget) {
            Resync::Found(next) => {
                scan.damage.push(Damage { offset: pos as u64, len: (next - pos) as u64, reason });
                pos = next;
            }
            Resync::NotFound if is_cut_frame(bytes, pos, max_payload_len) => {
                scan.torn_tail = Some(pos);
                break;
            }
            Resync::NotFound => {
                scan.damage.push(Damage { offset: pos as u64, len: (bytes.len() - pos) as u64, reason });
                break;
            }
            Resync::GaveUp(at) => {
                scan.damage.push(gave_up(pos, at, reason, budget));
                break;
            }
        }
    }
    Ok(scan)
}

#[cfg(test)]
mod tests {
    #[test]
    fn damage_reads_as_plain_text_in_logs() {
        let damage = |offset, reason: &str| Damage { offset, len: 16, reason: reason.to_string() };
        assert_eq!(
            describe_all([damage(32, "bad checksum"), damage(80, "length 4194304 over the limit")]),
            "16 bytes at offset 32: bad checksum; 16 bytes at offset 80: length 4194304 over the limit"
        );
    }

    use super::*;
    use proptest::prelude::*;

    const MAGIC: [u8; 8] = *b"ANESTEST";

    fn file(records: &[&[u8]]) -> Vec<u8> {
        let mut out = FileHeader { magic: MAGIC, pipeline_id: "p".into(), identity: None }.encode();
        for r in records {
            encode_record(r, &mut out);
        }
        out
    }

    #[test]
    fn a_crash_at_every_byte_leaves_a_prefix_of_records() {
        let records: Vec<Vec<u8>> = (0..6u8).map(|i| vec![i; 5 + usize::from(i) * 3]).collect();
        let refs: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let bytes = file(&refs);
        let header_len = FileHeader { magic: MAGIC, pipeline_id: "p".into(), identity: None }.encode().len();
        for len in header_len..=bytes.len() {
            let scan = scan(&bytes[..len], &MAGIC, MAX_RECORD_LEN).unwrap();
            let got: Vec<&[u8]> = scan.records.iter().map(|r| &bytes[r.clone()]).collect();
            assert_eq!(got, refs[..got.len()], "cut at {len}");
            assert!(scan.damage.is_empty(), "cut at {len}: {:?}", scan.damage);
            assert_eq!(scan.torn_tail.is_some(), scan.good_end < len, "cut at {len}");
        }
    }

    #[test]
    fn a_damaged_record_in_the_middle_loses_only_itself() {
        let bytes = file(&[b"first", b"second", b"third"]);
        let second = bytes.windows(6).position(|w| w == b"second").unwrap();
        let mut damaged = bytes.clone();
        damaged[second + 2] ^= 0x40;
        let scan = scan(&damaged, &MAGIC, MAX_RECORD_LEN).unwrap();
        let got: Vec<&[u8]> = scan.records.iter().map(|r| &damaged[r.clone()]).collect();
        assert_eq!(got, [&b"first"[..], b"third"]);
        assert_eq!(scan.damage.len(), 1);
        assert!(scan.damage[0].reason.contains("checksum"));
        assert_eq!(scan.torn_tail, None);
    }

    /// Issue 44: a complete last record whose bytes changed is damage, not a torn write; only a frame
    /// the end of the file cut short is a torn tail.
    #[test]
    fn a_changed_last_record_is_damage_and_only_a_cut_frame_is_torn() {
        let bytes = file(&[b"first", b"second", b"last one"]);
        let last = bytes.windows(8).position(|w| w == b"last one").unwrap();
        for at in [last - 16, last - 12, last - 8, last + 3] {
            // The marker, the length made smaller, the checksum, the payload.
            let mut changed = bytes.clone();
            changed[at] ^= if at == last - 12 { 0x08 } else { 0x40 };
            let scan = scan(&changed, &MAGIC, MAX_RECORD_LEN).unwrap();
            assert_eq!(scan.records.len(), 2, "byte {at}");
            assert_eq!(scan.torn_tail, None, "byte {at}: {scan:?}");
            assert_eq!(scan.damage.len(), 1, "byte {at}");
            assert_eq!(scan.damage[0].offset as usize, last - 16, "byte {at}");
            assert_eq!(scan.damage[0].offset + scan.damage[0].len, changed.len() as u64, "byte {at}");
        }
        for cut in 1..(16 + 8) {
            let scan = scan(&bytes[..bytes.len() - cut], &MAGIC, MAX_RECORD_LEN).unwrap();
            assert_eq!((scan.records.len(), scan.damage.len()), (2, 0), "cut {cut}");
            assert_eq!(scan.torn_tail, Some(last - 16), "cut {cut}");
        }
    }

    #[test]
    fn a_header_names_its_writer_s_identity() {
        let identity = [7u8; IDENTITY_LEN];
        let mut bytes =
            FileHeader { magic: MAGIC, pipeline_id: "p".into(), identity: Some(identity) }.encode();
        encode_record(b"x", &mut bytes);
        let scan = scan(&bytes, &MAGIC, MAX_RECORD_LEN).unwrap();
        assert_eq!(scan.header.identity, Some(identity));
        assert_eq!(scan.records.len(), 1);
        let mut changed = bytes.clone();
        changed[14] ^= 1;
        assert_eq!(
            super::scan(&changed, &MAGIC, MAX_RECORD_LEN),
            Err(FramedError::BadHeader("damaged (checksum mismatch)"))
        );
    }

    #[test]
    fn another_kind_of_file_is_refused() {
        let bytes = file(&[b"x"]);
        assert!(matches!(scan(&bytes, b"ANESOTHR", MAX_RECORD_LEN), Err(FramedError::BadMagic { .. })));
        let mut bad = bytes.clone();
        bad[12] ^= 1;
        assert_eq!(
            scan(&bad, &MAGIC, MAX_RECORD_LEN),
            Err(FramedError::BadHeader("damaged (checksum mismatch)"))
        );
    }

    /// A 12 MiB stretch with a marker every 16 bytes, each claiming 4 MiB: hashing every claim would
    /// take about 3 TB of blake3 (hours; the unbounded search took over 30 s at 2 MiB claims).
    fn salted(records_before: &[&[u8]], records_after: &[&[u8]]) -> Vec<u8> {
        let mut bytes = file(records_before);
        let salt_end = bytes.len() + (12 << 20);
        while bytes.len() < salt_end {
            bytes.extend_from_slice(&RECORD_MARKER);
            bytes.extend_from_slice(&(4u32 << 20).to_le_bytes());
            bytes.extend_from_slice(&[0; 8]);
        }
        for r in records_after {
            encode_record(r, &mut bytes);
        }
        bytes
    }

    #[test]
    fn false_markers_claiming_megabytes_are_searched_in_linear_time() {
        let bytes = salted(&[b"first"], &[b"after"]);
        let started = std::time::Instant::now();
        let scan = scan(&bytes, &MAGIC, MAX_RECORD_LEN).unwrap();
        let elapsed = started.elapsed();
        assert!(elapsed < std::time::Duration::from_secs(10), "{elapsed:?}");
        let got: Vec<&[u8]> = scan.records.iter().map(|r| &bytes[r.clone()]).collect();
        assert_eq!(got, [&b"first"[..]]);
        assert_eq!(scan.damage.len(), 1, "{:?}", scan.damage);
        assert_eq!(scan.damage[0].offset + scan.damage[0].len, bytes.len() as u64, "the rest is skipped");
        assert!(scan.damage[0].reason.contains("stopped at offset"), "{}", scan.damage[0].reason);
        assert_eq!(scan.torn_tail, None);
    }

    #[test]
    fn false_headers_each_after_a_good_record_are_charged_too() {
        // Each false header claims 32 KiB and is followed by a good empty record: read in turn, not
        // found by a resynchronisation, every claim was once hashed (the file's length times the
        // claims). The scan gives up when its budget, 4 bytes per byte of the file, is spent.
        let mut bytes = file(&[b"first"]);
        for _ in 0..2048 {
            bytes.extend_from_slice(&RECORD_MARKER);
            bytes.extend_from_slice(&(32u32 << 10).to_le_bytes());
            bytes.extend_from_slice(&[0; 8]);
            encode_record(b"", &mut bytes);
        }
        encode_record(&[7; 40 << 10], &mut bytes);
        let scan = scan(&bytes, &MAGIC, MAX_RECORD_LEN).unwrap();
        assert_eq!(&bytes[scan.records[0].clone()], b"first");
        let last = scan.damage.last().expect("damage");
        assert!(last.reason.contains("stopped at offset"), "{last:?}");
        assert_eq!(last.offset + last.len, bytes.len() as u64, "the rest is skipped");
        let hashed: usize =
            last.reason.split("after hashing ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        assert!(hashed <= 4 * bytes.len(), "{hashed} bytes hashed for a file of {}", bytes.len());
    }

    #[test]
    fn with_payloads_capped_false_markers_cost_nothing_and_the_next_record_is_found() {
        let bytes = salted(&[b"first"], &[b"after"]);
        let started = std::time::Instant::now();
        let scan = scan(&bytes, &MAGIC, 5).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
        let got: Vec<&[u8]> = scan.records.iter().map(|r| &bytes[r.clone()]).collect();
        assert_eq!(got, [&b"first"[..], b"after"]);
        assert_eq!(scan.damage.len(), 1);
        assert!(scan.damage[0].reason.contains("beyond the 5-byte limit"), "{}", scan.damage[0].reason);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = scan(&bytes, &MAGIC, MAX_RECORD_LEN);
        }

        #[test]
        fn arbitrary_bytes_after_a_valid_header_never_panic(tail in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut bytes = file(&[]);
            bytes.extend_from_slice(&tail);
            let scan = scan(&bytes, &MAGIC, MAX_RECORD_LEN).unwrap();
            prop_assert!(scan.good_end <= bytes.len());
        }
    }
}
