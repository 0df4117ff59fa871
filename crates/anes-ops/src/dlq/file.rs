//! Dead-letter queue files of earlier versions (`<data_dir>/<id>/dlq/queue.adlq`): one append-only
//! file of framed records ([`crate::framed`], magic `ANESDLQ1`), each record's payload its sequence
//! number (u64), both ports and the console command (11 bytes). The queue's records are journaled now
//! (the journal is their durable copy); such a file is read once at start-up, its records after the
//! journal's end journaled, and set aside ([`crate::recovery`]); `anes dlq inspect` reads one.

use std::path::Path;

use anes_core::movie::{ConsoleCommand, FrameInput};
use serde::Serialize;

use super::DlqError;
use crate::framed::{self, Damage};

/// The queue file's magic.
pub const DLQ_MAGIC: [u8; 8] = *b"ANESDLQ1";
const PAYLOAD_LEN: usize = 11;
/// The largest queue file read (far above any capacity's worth of records).
const MAX_FILE_LEN: u64 = 1 << 30;

fn io(path: &Path, e: impl std::fmt::Display) -> DlqError {
    DlqError::Io(format!("{}: {e}", path.display()))
}

#[cfg(test)]
fn encode(seq: u64, input: FrameInput) -> [u8; PAYLOAD_LEN] {
    let mut out = [0u8; PAYLOAD_LEN];
    out[..8].copy_from_slice(&seq.to_le_bytes());
    out[8] = input.pads[0];
    out[9] = input.pads[1];
    out[10] = input.command as u8;
    out
}

fn decode(payload: &[u8]) -> Result<(u64, FrameInput), String> {
    if payload.len() != PAYLOAD_LEN {
        return Err(format!("a record of {} bytes, not {PAYLOAD_LEN}", payload.len()));
    }
    let seq = u64::from_le_bytes(payload[..8].try_into().expect("8 bytes"));
    // The journal's end would be seq + 1: no input reaches this number, so the record is damage.
    if seq == u64::MAX {
        return Err(format!("sequence number {seq}, past any pipeline's input"));
    }
    let command = ConsoleCommand::from_u8(payload[10])
        .ok_or_else(|| format!("unknown command byte {:#04x}", payload[10]))?;
    Ok((seq, FrameInput { pads: [payload[8], payload[9]], command }))
}

/// One record as `anes dlq inspect` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InspectedRecord {
    /// The record's input sequence number (its frame in the pipeline's input).
    pub seq: u64,
    /// Port 1 and port 2 buttons.
    pub pads: [u8; 2],
    /// 0 none, 1 soft reset, 2 power cycle.
    pub command: u8,
}

/// What a queue file holds, read without changing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlqInspection {
    /// The queue file inspected, as given.
    pub path: String,
    /// The queue file's size in bytes, torn tail and damage included.
    pub file_bytes: u64,
    /// The pipeline it belongs to.
    pub pipeline_id: String,
    /// The records that verify, in order.
    pub records: Vec<InspectedRecord>,
    /// Stretches that did not verify (records lost in the middle).
    pub damage: Vec<Damage>,
    /// Bytes of an incomplete last record (a write torn by a crash), cut off at the next start.
    pub torn_tail_bytes: u64,
    /// True when the sequence numbers run without a gap.
    pub contiguous: bool,
}

fn read_capped(path: &Path) -> Result<Vec<u8>, DlqError> {
    anes_fs::read_capped(path, MAX_FILE_LEN, "dead-letter queue").map_err(|e| DlqError::Read(e.to_string()))
}

/// Reads a queue file without changing it (`anes dlq inspect`, and the journaling of an earlier
/// version's queue at start-up). A 0-byte file (a crash while it was created) holds nothing.
pub fn inspect(path: &Path) -> Result<DlqInspection, DlqError> {
    let bytes = read_capped(path)?;
    if bytes.is_empty() {
        return Ok(DlqInspection {
            path: path.display().to_string(),
            file_bytes: 0,
            pipeline_id: String::new(),
            records: Vec::new(),
            damage: Vec::new(),
            torn_tail_bytes: 0,
            contiguous: true,
        });
    }
    let scan = framed::scan(&bytes, &DLQ_MAGIC, PAYLOAD_LEN).map_err(|e| io(path, e))?;
    let mut damage = scan.damage.clone();
    let mut records = Vec::new();
    for range in &scan.records {
        match decode(&bytes[range.clone()]) {
            Ok((seq, input)) => {
                records.push(InspectedRecord { seq, pads: input.pads, command: input.command as u8 })
            }
            Err(reason) => {
                damage.push(Damage { offset: range.start as u64 - 16, len: range.len() as u64 + 16, reason })
            }
        }
    }
    let contiguous = records.windows(2).all(|w| w[0].seq.checked_add(1) == Some(w[1].seq));
    Ok(DlqInspection {
        path: path.display().to_string(),
        file_bytes: bytes.len() as u64,
        pipeline_id: scan.header.pipeline_id,
        records,
        damage,
        torn_tail_bytes: scan.torn_tail.map_or(0, |t| (bytes.len() - t) as u64),
        contiguous,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framed::FileHeader;

    fn queue(records: &[(u64, FrameInput)]) -> Vec<u8> {
        let mut bytes = FileHeader { magic: DLQ_MAGIC, pipeline_id: "p".into(), identity: None }.encode();
        for &(seq, input) in records {
            framed::encode_record(&encode(seq, input), &mut bytes);
        }
        bytes
    }

    #[test]
    fn a_queue_file_reads_back_with_its_damage_and_gaps_and_an_empty_file_is_empty() {
        let dir = std::env::temp_dir().join(format!("anes-dlq-inspect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("queue.adlq");
        let records: Vec<(u64, FrameInput)> =
            (10..15).map(|s| (s, FrameInput::buttons(s as u8, 1))).collect();
        let mut bytes = queue(&records);
        let header_len = bytes.len() - 5 * 27;
        bytes[header_len + 27 * 2 + 20] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let q = inspect(&path).unwrap();
        assert_eq!(q.records.iter().map(|r| r.seq).collect::<Vec<_>>(), [10, 11, 13, 14]);
        assert_eq!((q.damage.len(), q.contiguous, q.pipeline_id.as_str()), (1, false, "p"));
        // A record numbered u64::MAX is damage naming the number; the ones around it still read.
        let max = u64::MAX;
        let input = FrameInput::buttons(1, 0);
        std::fs::write(&path, queue(&[(max - 1, input), (max, input), (0, input)])).unwrap();
        let q = inspect(&path).unwrap();
        assert_eq!(q.records.iter().map(|r| r.seq).collect::<Vec<_>>(), [max - 1, 0]);
        assert_eq!(q.damage.len(), 1);
        assert!(q.damage[0].reason.contains("sequence number 18446744073709551615"), "{:?}", q.damage);
        assert!(!q.contiguous);
        std::fs::write(&path, b"").unwrap();
        let q = inspect(&path).unwrap();
        assert!(q.records.is_empty() && q.contiguous);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
