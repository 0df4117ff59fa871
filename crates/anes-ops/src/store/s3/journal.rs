//! The S3 store's side of the shared journal. An append uploads the batch's object
//! (`journal/<first>-<epoch>.ajb`), then moves `journal_end` in the epoch object by a conditional PUT
//! whose rule is checked on the version it replaces (the fencing rule, and no gap after the end): the
//! batch counts only once that PUT succeeds, and the producer is answered only then. A takeover in
//! between changes the version: the PUT fails, the epoch object is read again, and the append is
//! refused as fenced (its object removed).
//!
//! Reading follows the chain from the batch holding the first record asked for: at each sequence
//! number the object of the highest epoch not above the store's (the one an append of that epoch
//! published: an object a fenced writer left is of an older epoch, or beyond the end), then from that
//! batch's end, up to `journal_end`.

use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::{EpochRead, MAX_CONFLICTS, S3Store, unavailable};
use crate::store::{JournalStore, StoreError, StoredBatch, StoredJournal, fence};

/// The largest batch object read: a framed record's largest payload.
const MAX_BATCH_OBJECT_LEN: u64 = crate::framed::MAX_RECORD_LEN as u64;

impl S3Store {
    fn journal_path(&self, first_seq: u64, epoch: u64) -> ObjectPath {
        self.path(&format!("journal/{first_seq:020}-{epoch:020}.ajb"))
    }

    /// Every batch object: (first sequence number, epoch, key), in order.
    fn journal_objects(&self) -> Result<Vec<(u64, u64, ObjectPath)>, StoreError> {
        let (client, prefix) = (Arc::clone(&self.client), self.path("journal"));
        let listed = self
            .runtime
            .block_on(async move { client.list_with_delimiter(Some(&prefix)).await })
            .map_err(|e| unavailable("LIST of the journal", e))?;
        let mut out: Vec<(u64, u64, ObjectPath)> = listed
            .objects
            .into_iter()
            .filter_map(|meta| {
                let name = meta.location.filename()?.strip_suffix(".ajb")?.to_string();
                let (first, epoch) = name.split_once('-')?;
                Some((first.parse().ok()?, epoch.parse().ok()?, meta.location))
            })
            .collect();
        out.sort_by_key(|(first, epoch, _)| (*first, *epoch));
        Ok(out)
    }

    fn put_object(&self, path: &ObjectPath, body: Vec<u8>) -> Result<(), StoreError> {
        let (client, path) = (Arc::clone(&self.client), path.clone());
        self.runtime
            .block_on(async move { client.put(&path, PutPayload::from(body)).await })
            .map(|_| ())
            .map_err(|e| unavailable("PUT of a journal batch", e))
    }
}

impl JournalStore for S3Store {
    fn describe(&self) -> String {
        format!("s3 bucket {} {}", self.location.bucket, self.path("journal/"))
    }

    fn append_batch(
        &mut self,
        epoch: u64,
        first_seq: u64,
        end: u64,
        payload: &[u8],
    ) -> Result<(), StoreError> {
        let pipeline = self.pipeline.clone();
        let key = self.journal_path(first_seq, epoch);
        let mut uploaded = false;
        let mut cached = self.journal_head.take();
        for _ in 0..MAX_CONFLICTS {
            let fresh = cached.is_none();
            let read = match cached.take() {
                Some(read) => read,
                None => self.read_epoch_object()?,
            };
            let checked = fence::check(&pipeline, epoch, read.object.epoch).and_then(|()| {
                if first_seq > read.object.journal_end {
                    Err(super::super::journal_gap(&pipeline, first_seq, read.object.journal_end))
                } else {
                    Ok(())
                }
            });
            if let Err(e) = checked {
                if !fresh {
                    // The cached version may be old: decide on the object as it is now.
                    continue;
                }
                if uploaded && e.is_fenced() {
                    self.delete(key.clone());
                }
                return Err(e);
            }
            if !uploaded {
                // Invariant: the batch's object is complete before the epoch object counts it.
                self.put_object(&key, payload.to_vec())?;
                uploaded = true;
            }
            let mut object = read.object.clone();
            object.journal_end = end;
            if let Some(version) = self.write_epoch_object(&read, &object)? {
                self.journal_head = Some(EpochRead { object, version: Some(version) });
                return Ok(());
            }
        }
        Err(unavailable(
            "the epoch object",
            format!("{MAX_CONFLICTS} conditional PUTs lost to other writers"),
        ))
    }

    fn read_journal(&mut self, from: u64) -> Result<StoredJournal, StoreError> {
        let head = self.read_epoch_object()?.object;
        let objects: Vec<(u64, u64, ObjectPath)> =
            self.journal_objects()?.into_iter().filter(|(_, e, _)| *e <= head.epoch).collect();
        let mut batches = Vec::new();
        // The chain starts at the batch holding `from`.
        let mut at = objects.iter().map(|o| o.0).filter(|&first| first <= from).max().unwrap_or(from);
        while at < head.journal_end {
            let Some((first, _, path)) = objects.iter().rev().find(|o| o.0 == at) else {
                // Nothing starts here: the reader reports the gap; the chain resumes at the next batch.
                match objects.iter().map(|o| o.0).find(|&first| first > at) {
                    Some(next) => {
                        at = next;
                        continue;
                    }
                    None => break,
                }
            };
            let payload = match self.get(path, MAX_BATCH_OBJECT_LEN) {
                Ok(Some((bytes, _))) => Ok(bytes),
                Ok(None) => Err("listed but gone when read".to_string()),
                Err(e) => return Err(e),
            };
            let next =
                payload.as_ref().ok().and_then(|p| crate::journal::decode_batch(p).ok()).map(|b| b.end());
            batches.push(StoredBatch { name: path.to_string(), first_seq: *first, payload });
            at = match next {
                Some(end) if end > at => end,
                // Unreadable: its end is unknown; the chain resumes at the next batch.
                _ => match objects.iter().map(|o| o.0).find(|&f| f > at) {
                    Some(next) => next,
                    None => break,
                },
            };
        }
        Ok(StoredJournal { end: head.journal_end, batches })
    }

    fn release_journal_before(&mut self, seq: u64) -> Result<(), StoreError> {
        let objects = self.journal_objects()?;
        let Some(holding) = objects.iter().map(|o| o.0).filter(|&first| first <= seq).max() else {
            return Ok(());
        };
        for (first, _, path) in objects {
            if first < holding {
                self.delete(path);
            }
        }
        Ok(())
    }

    fn move_journal_end(&mut self, epoch: u64, end: u64) -> Result<u64, StoreError> {
        let pipeline = self.pipeline.clone();
        self.journal_head = None;
        let old = self.update_epoch_object(self.read_epoch_object()?, |object| {
            fence::check(&pipeline, epoch, object.epoch)?;
            let old = object.journal_end;
            object.journal_end = end;
            Ok(old)
        })?;
        for (first, _, path) in self.journal_objects()? {
            if first >= end {
                self.delete(path);
            }
        }
        Ok(old)
    }
}
