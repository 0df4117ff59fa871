//! The file journal's acknowledged mark (`<journal>/acknowledged`): the end of what the pipeline
//! acknowledged, and the journal's identity, which every segment's header repeats. Layout, all
//! little-endian:
//!
//! ```text
//! header:  magic "ANESMARK" | version u16 = 1 | id length u16 | pipeline id | identity (16) | blake3 of the preceding, first 8 bytes
//! slot 0:  generation u64 | acknowledged end u64 | blake3 of identity, generation and end, first 8 bytes
//! slot 1:  the same
//! ```
//!
//! A commit writes the slot its generation selects (generation modulo 2) in place, then fsyncs; the
//! slot with the higher generation that verifies is the mark. A crash while a slot is written leaves
//! the other slot, one commit older: still a mark every acknowledged record is below, since the answer
//! to a producer waits for the fsync. A commit whose write or fsync fails puts the slot's old bytes
//! back, so the page cache flushed later cannot make the failed commit the mark.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::framed::{IDENTITY_LEN, checksum};

const MAGIC: [u8; 8] = *b"ANESMARK";
const VERSION: u16 = 1;
const SLOT_LEN: usize = 24;
/// The largest mark file read (a header with the longest pipeline id and two slots).
pub(super) const MAX_MARK_LEN: u64 = 4096;

/// What a mark file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct MarkState {
    pub identity: [u8; IDENTITY_LEN],
    pub generation: u64,
    pub end: u64,
}

fn header(pipeline: &str, identity: &[u8; IDENTITY_LEN]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(pipeline.len() as u16).to_le_bytes());
    out.extend_from_slice(pipeline.as_bytes());
    out.extend_from_slice(identity);
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    out
}

fn slot(identity: &[u8; IDENTITY_LEN], generation: u64, end: u64) -> [u8; SLOT_LEN] {
    let mut out = [0u8; SLOT_LEN];
    out[..8].copy_from_slice(&generation.to_le_bytes());
    out[8..16].copy_from_slice(&end.to_le_bytes());
    let mut summed = identity.to_vec();
    summed.extend_from_slice(&out[..16]);
    out[16..].copy_from_slice(&checksum(&summed));
    out
}

/// Reads a mark file's bytes: its pipeline id and state, or what is wrong with it.
pub(super) fn decode(bytes: &[u8]) -> Result<(String, MarkState), String> {
    if bytes.len() < 12 || bytes[..8] != MAGIC {
        return Err("not an acknowledged mark (magic \"ANESMARK\")".into());
    }
    if u16::from_le_bytes([bytes[8], bytes[9]]) != VERSION {
        return Err("an acknowledged mark of an unsupported version".into());
    }
    let id_len = usize::from(u16::from_le_bytes([bytes[10], bytes[11]]));
    let header_len = 12 + id_len + IDENTITY_LEN + 8;
    if bytes.len() < header_len {
        return Err("its header is truncated".into());
    }
    if checksum(&bytes[..header_len - 8]) != bytes[header_len - 8..header_len] {
        return Err("its header is damaged (checksum mismatch)".into());
    }
    let pipeline = String::from_utf8_lossy(&bytes[12..12 + id_len]).into_owned();
    let identity: [u8; IDENTITY_LEN] =
        bytes[12 + id_len..12 + id_len + IDENTITY_LEN].try_into().expect("16 bytes");
    let newest = (0..2)
        .filter_map(|i| bytes.get(header_len + i * SLOT_LEN..header_len + (i + 1) * SLOT_LEN))
        .filter_map(|s| {
            let generation = u64::from_le_bytes(s[..8].try_into().expect("8 bytes"));
            let end = u64::from_le_bytes(s[8..16].try_into().expect("8 bytes"));
            (slot(&identity, generation, end) == s).then_some((generation, end))
        })
        .max_by_key(|&(generation, _)| generation);
    match newest {
        // No commit can follow the largest generation (the next would wrap to slot 0's generation 0,
        // which the read after it would take for the older slot): not a count any journal reaches.
        Some((u64::MAX, _)) => {
            Err(format!("its newest slot's generation is {}, past any count of commits (damaged)", u64::MAX))
        }
        Some((generation, end)) => Ok((pipeline, MarkState { identity, generation, end })),
        None => Err("neither of its two slots verifies (damaged)".into()),
    }
}

/// The mark of a journal being written.
#[derive(Debug)]
pub(super) struct Mark {
    path: PathBuf,
    file: File,
    header_len: u64,
    state: MarkState,
    sync: bool,
    /// What each slot holds on disk as far as this mark knows: what a failed commit puts back.
    slots: [[u8; SLOT_LEN]; 2],
    /// Tests: the next commit's fsync fails after its write, as a failing disk's does.
    #[cfg(test)]
    fail_next_sync: bool,
}

impl Mark {
    /// Creates the mark of a new journal (or one adopted from an earlier version): both slots, fsynced.
    pub fn create(
        path: &Path,
        pipeline: &str,
        identity: [u8; IDENTITY_LEN],
        end: u64,
        sync: bool,
    ) -> std::io::Result<Mark> {
        let mut bytes = header(pipeline, &identity);
        let header_len = bytes.len() as u64;
        // Slot i holds the generations i modulo 2: the next write (generation 2) leaves generation 1.
        bytes.extend_from_slice(&slot(&identity, 0, end));
        bytes.extend_from_slice(&slot(&identity, 1, end));
        // Written whole under a temporary name and renamed, so a crash leaves no half mark.
        let tmp = path.with_extension("tmp");
        let mut file = File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent() {
            crate::store::fs::sync_dir(dir)?;
        }
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Mark {
            path: path.to_path_buf(),
            file,
            header_len,
            state: MarkState { identity, generation: 1, end },
            sync,
            slots: [slot(&identity, 0, end), slot(&identity, 1, end)],
            #[cfg(test)]
            fail_next_sync: false,
        })
    }

    /// Opens an existing mark for writing; `state` is what [`decode`] read from it.
    pub fn open(path: &Path, pipeline: &str, state: MarkState, sync: bool) -> std::io::Result<Mark> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let header_len = header(pipeline, &state.identity).len() as u64;
        let mut slots = [[0u8; SLOT_LEN]; 2];
        for (i, slot) in slots.iter_mut().enumerate() {
            file.read_exact_at(slot, header_len + (i * SLOT_LEN) as u64)?;
        }
        Ok(Mark {
            path: path.to_path_buf(),
            file,
            header_len,
            state,
            sync,
            slots,
            #[cfg(test)]
            fail_next_sync: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn end(&self) -> u64 {
        self.state.end
    }

    pub fn identity(&self) -> [u8; IDENTITY_LEN] {
        self.state.identity
    }

    /// Moves the mark to `end`: the next slot in place, fsynced by policy.
    pub fn set(&mut self, end: u64) -> std::io::Result<()> {
        if end == self.state.end {
            return Ok(());
        }
        let generation = self.state.generation.checked_add(1).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("the mark's generation {} cannot advance (damaged)", self.state.generation),
            )
        })?;
        let index = (generation % 2) as usize;
        let offset = self.header_len + (index * SLOT_LEN) as u64;
        let new_slot = slot(&self.state.identity, generation, end);
        if let Err(error) = self.write_slot(offset, &new_slot) {
            // The commit failed, so no producer hears of `end`; but the slot's new bytes may be in
            // the page cache, and a later flush would make a start take them for the mark and
            // report records missing that were never acknowledged. The slot's old bytes go back:
            // even if their fsync fails too, they are what a flush then writes.
            let old_slot = self.slots[index];
            let _ = self.write_slot(offset, &old_slot);
            return Err(error);
        }
        self.slots[index] = new_slot;
        self.state.generation = generation;
        self.state.end = end;
        Ok(())
    }

    /// Writes `bytes` at `offset` and fsyncs them by policy.
    fn write_slot(&mut self, offset: u64, bytes: &[u8; SLOT_LEN]) -> std::io::Result<()> {
        self.file.write_all_at(bytes, offset)?;
        #[cfg(test)]
        if std::mem::take(&mut self.fail_next_sync) {
            return Err(std::io::Error::other("fsync failed (test)"));
        }
        if self.sync {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

/// A new identity for a journal: 16 bytes from the operating system's entropy (std's `RandomState`
/// keys come from it) and the time, different for every journal ever created.
pub(super) fn new_identity() -> [u8; IDENTITY_LEN] {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let a = std::collections::hash_map::RandomState::new().hash_one((now, std::process::id(), 1u8));
    let b = std::collections::hash_map::RandomState::new().hash_one((now, std::process::id(), 2u8));
    let mut out = [0u8; IDENTITY_LEN];
    out[..8].copy_from_slice(&a.to_le_bytes());
    out[8..].copy_from_slice(&b.to_le_bytes());
    out
}

/// Writes the journal's witness (`file::witness_path`): its identity in hex, created whole under a
/// temporary name and renamed, as the mark is.
pub(crate) fn write_witness(path: &Path, identity: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("identity.tmp");
    let mut file = File::create(&tmp)?;
    file.write_all(format!("{}\n", anes_core::hex::to_hex(identity)).as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)?;
    match path.parent() {
        Some(dir) => crate::store::fs::sync_dir(dir),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_slot_that_verifies_is_the_mark() {
        let dir = std::env::temp_dir().join(format!("anes-mark-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("acknowledged");
        let identity = new_identity();
        let mut mark = Mark::create(&path, "p", identity, 0, false).unwrap();
        for end in [10, 25, 40] {
            mark.set(end).unwrap();
        }
        let bytes = std::fs::read(&path).unwrap();
        let (pipeline, state) = decode(&bytes).unwrap();
        assert_eq!((pipeline.as_str(), state.end, state.identity), ("p", 40, identity));
        // A torn write of the newest slot leaves the one before it.
        let header_len = header("p", &identity).len();
        let newest = header_len + (state.generation as usize % 2) * SLOT_LEN;
        let mut torn = bytes.clone();
        torn[newest + 9] ^= 0xff;
        assert_eq!(decode(&torn).unwrap().1.end, 25);
        let mut both = torn.clone();
        both[header_len + ((state.generation as usize + 1) % 2) * SLOT_LEN + 3] ^= 1;
        assert!(decode(&both).unwrap_err().contains("neither of its two slots"));
        assert!(decode(&bytes[..header_len - 1]).unwrap_err().contains("truncated"));
        assert_ne!(new_identity(), identity);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A commit whose fsync fails leaves the slot as it was, so a later flush of the page cache
    /// cannot make the failed commit's end the mark; the next commit writes that slot again.
    #[test]
    fn a_failed_commit_puts_the_slot_back() {
        let dir = std::env::temp_dir().join(format!("anes-mark-failed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("acknowledged");
        let identity = new_identity();
        let mut mark = Mark::create(&path, "p", identity, 0, false).unwrap();
        mark.set(10).unwrap();
        mark.set(25).unwrap();
        let before = std::fs::read(&path).unwrap();
        mark.fail_next_sync = true;
        assert!(mark.set(40).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before, "the file as before the failed commit");
        assert_eq!((mark.end(), decode(&before).unwrap().1.end), (25, 25));
        mark.set(50).unwrap();
        assert_eq!(decode(&std::fs::read(&path).unwrap()).unwrap().1.end, 50);
        // Reopened, it puts back what the file held.
        let state = decode(&std::fs::read(&path).unwrap()).unwrap().1;
        let mut reopened = Mark::open(&path, "p", state, false).unwrap();
        let before = std::fs::read(&path).unwrap();
        reopened.fail_next_sync = true;
        assert!(reopened.set(60).is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A slot whose generation is u64::MAX (it verifies: written so, not torn) is refused naming the
    /// value, and a mark at that generation is never moved: the next generation would wrap to 0 in
    /// slot 0, and the next read would keep the stale slot 1.
    #[test]
    fn the_largest_generation_is_refused_not_wrapped() {
        let dir = std::env::temp_dir().join(format!("anes-mark-max-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("acknowledged");
        let identity = new_identity();
        let mut bytes = header("p", &identity);
        bytes.extend_from_slice(&slot(&identity, 4, 10));
        bytes.extend_from_slice(&slot(&identity, u64::MAX, 30));
        std::fs::write(&path, &bytes).unwrap();
        let problem = decode(&bytes).unwrap_err();
        assert!(problem.contains("generation is 18446744073709551615"), "{problem}");
        let state = MarkState { identity, generation: u64::MAX, end: 30 };
        let mut mark = Mark::open(&path, "p", state, false).unwrap();
        let err = mark.set(40).unwrap_err();
        assert!(err.to_string().contains("generation 18446744073709551615 cannot advance"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing written");
        assert_eq!(mark.end(), 30);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
