//! The shared journal: a pipeline's journal kept in its checkpoint store (Redis, PostgreSQL, S3) when
//! other coordinators can reach that store. Each commit is one batch appended under the store epoch
//! this service holds ([`crate::store::HeldEpoch`]), atomically with the fencing check and with the
//! journal's end (its acknowledged mark): PostgreSQL in one transaction under the epoch row's lock,
//! Redis in one script, S3 by a conditional write of the epoch object after the batch's object. So a
//! producer's answer waits for a batch every later owner will read, and a coordinator that was taken
//! over is refused from its next append on: it can never acknowledge again.
//!
//! A commit whose answer was lost (the store may or may not have taken it) counts as failed: its
//! records are refused and offered again from the same sequence number, and that append replaces
//! them. Only this epoch's own unacknowledged tail can be there: every earlier owner's records are
//! below the end this owner started from.

use anes_core::movie::{FrameInput, InputStream};

use super::{Batch, JournalContents, JournalError, Problem, decode_batch, encode_batch};
use crate::store::{HeldEpoch, JournalStore, StoreError};

/// The [`super::Journal`] of a pipeline whose store is shared.
#[derive(Debug)]
pub struct SharedJournal {
    store: Box<dyn JournalStore>,
    held: HeldEpoch,
    /// The end of what the journal holds (the next sequence number expected).
    end: u64,
    pending: Vec<FrameInput>,
    pending_first: u64,
}

impl SharedJournal {
    /// A journal appending to `store` from `end` (where the records recovery read end) with the
    /// epoch `held`.
    pub fn new(store: Box<dyn JournalStore>, held: HeldEpoch, end: u64) -> SharedJournal {
        SharedJournal { store, held, end, pending: Vec::new(), pending_first: end }
    }

    /// A gap whose store end is below the end this journal committed: the store lost acknowledged
    /// records (a store whose conditional writes are not atomic, or one restored from an older copy).
    /// No later append can mend it, and a later owner would not know the records were ever there, so
    /// it is reported as the store's damage, which fences the pipeline; any other error as it is.
    fn lost_records(&self, e: StoreError) -> StoreError {
        let StoreError::JournalGap { pipeline, end, .. } = &e else { return e };
        if *end >= self.end {
            return e;
        }
        let (epoch, committed, store) = (*self.held.lock(), self.end, self.store.describe());
        let message = format!(
            "pipeline {pipeline}: the journal in {store} ends at {end}, before the {committed} this service journaled there under store epoch {epoch}: records {end}..{committed}, acknowledged to their producers, are no longer in the store (one whose conditional writes are not atomic, or one restored from an older copy, loses them); intake stops until the store is restored (docs/OPERATIONS.md, fenced pipelines)"
        );
        tracing::error!(backend = self.store.backend(), lost_from = *end, lost_to = committed, %message, "the store lost acknowledged records");
        StoreError::Damaged(message)
    }

    fn append_pending(&mut self) -> Result<u64, StoreError> {
        let count = self.pending.len() as u64;
        let payload = encode_batch(self.pending_first, &InputStream::from_frames(self.pending.clone()));
        let end = self.pending_first + count;
        let mut attempt = 0;
        loop {
            // Held for the append: a rollback's new epoch is taken before or after it, never during.
            let epoch = self.held.lock();
            let result = self.store.append_batch(*epoch, self.pending_first, end, &payload);
            drop(epoch);
            match result {
                // One more try on a fresh connection: a store that restarted, a connection the server
                // closed. Longer outages refuse the records; producers retry.
                Err(e) if e.is_retryable() && attempt == 0 => {
                    attempt += 1;
                    tracing::warn!(backend = self.store.backend(), error = %e, "journal append failed; reconnecting and trying once more");
                    let _ = self.store.reconnect();
                }
                other => return other.map(|()| end),
            }
        }
    }
}

impl super::Journal for SharedJournal {
    fn append(&mut self, seq: u64, input: FrameInput) {
        if self.pending.is_empty() {
            self.pending_first = seq;
        }
        self.pending.push(input);
    }

    fn commit(&mut self) -> Result<(), JournalError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let result = self.append_pending();
        self.pending.clear();
        match result {
            Ok(end) => {
                self.end = end;
                self.pending_first = end;
                Ok(())
            }
            Err(e) => {
                self.pending_first = self.end;
                Err(JournalError::Store(self.lost_records(e)))
            }
        }
    }

    fn release_before(&mut self, seq: u64) {
        if let Err(e) = self.store.release_journal_before(seq) {
            tracing::warn!(backend = self.store.backend(), seq, error = %e, "removing journal batches before the oldest kept checkpoint failed; retried at the next checkpoint");
        }
    }
}

/// Reads a shared journal from `from` on (the batches that hold records at or after it) with its end,
/// verifying each batch, without changing anything.
pub fn read_shared(store: &mut dyn JournalStore, from: u64) -> Result<JournalContents, StoreError> {
    let stored = store.read_journal(from)?;
    let mut contents = JournalContents {
        source: store.describe(),
        acknowledged_end: Some(stored.end),
        ..JournalContents::default()
    };
    for batch in stored.batches {
        contents.places.push((batch.name.clone(), batch.first_seq));
        let decoded = batch.payload.and_then(|payload| decode_batch(&payload)).and_then(|b| {
            if b.first_seq == batch.first_seq {
                Ok(b)
            } else {
                Err(format!(
                    "it says it starts at sequence number {}, its key at {}",
                    b.first_seq, batch.first_seq
                ))
            }
        });
        match decoded {
            Ok(b) => {
                // Records past the store's end were never acknowledged: an append whose answer was lost.
                if b.first_seq < stored.end {
                    let keep = (stored.end.min(b.end()) - b.first_seq) as usize;
                    contents.add(Batch { first_seq: b.first_seq, inputs: b.inputs.slice(0..keep) }, u64::MAX);
                }
            }
            Err(reason) => contents.problems.push(Problem {
                place: batch.name,
                bytes: None,
                after_seq: batch.first_seq,
                reason,
                torn: false,
            }),
        }
    }
    Ok(contents)
}
