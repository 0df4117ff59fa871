//! The threaded runner's batches of sync records and how a window is split into them (the runner
//! keeps its batch vectors between runs, so the runner and its threads share these).

use anes_core::state::{FrameRecord, StateHash};

use crate::side::SyncRecord;

/// Records a batch holds at most.
const MAX_BATCH: usize = 256;

/// A sync point inside a frame where the machine stepped lagging (the common one at instruction
/// and scanline granularity): all the comparator compares there (`Lockstep::run_lagging_in_frame`
/// compares the same two numbers in place).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LaggingSync {
    /// [`crate::Machine::lagging_sync_record`]'s digest.
    pub digest: u64,
    pub cpu_cycle: u64,
}

/// A worker's sync records, in order. The lagging ones inside frames (thousands a frame at
/// instruction granularity) are kept as their digest and cycle, 16 bytes where a [`SyncRecord`]
/// takes 80: the worker writes and the comparator reads a fifth of the memory, across cores.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// One entry per record; a whole record's is a placeholder.
    lagging: Vec<LaggingSync>,
    /// The records kept whole (frame ends, and every record of a side that does not step lagging),
    /// with their positions among `lagging`'s entries, in order.
    whole: Vec<(usize, SyncRecord)>,
}

impl Batch {
    /// An empty batch with room for `records` of either kind (filling it allocates nothing).
    pub(crate) fn with_capacity(records: usize) -> Batch {
        Batch { lagging: Vec::with_capacity(records), whole: Vec::with_capacity(records) }
    }

    /// True once the vectors were allocated (a batch that never received any is not worth keeping).
    pub(crate) fn is_allocated(&self) -> bool {
        self.lagging.capacity() > 0
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.lagging.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lagging.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.lagging.clear();
        self.whole.clear();
    }

    #[inline]
    pub(crate) fn push_lagging(&mut self, sync: LaggingSync) {
        self.lagging.push(sync);
    }

    pub(crate) fn push_whole(&mut self, record: SyncRecord) {
        self.whole.push((self.lagging.len(), record));
        self.lagging.push(LaggingSync::default());
    }
}

/// The comparator's reading position in a worker's current batch, and the frame that worker's
/// records belong to there.
#[derive(Debug, Default)]
pub(crate) struct BatchReader {
    /// The next record's position.
    next: usize,
    /// The next whole record's index in `whole`.
    next_whole: usize,
    /// Input-stream index of the frame the next lagging record belongs to.
    frame: u64,
}

impl BatchReader {
    /// A reader of the records of a side whose frame in progress (or next) is `frame`.
    pub(crate) fn new(frame: u64) -> BatchReader {
        BatchReader { next: 0, next_whole: 0, frame }
    }

    /// Starts on a new batch (the frame goes on).
    pub(crate) fn restart(&mut self) {
        self.next = 0;
        self.next_whole = 0;
    }

    /// True when every record of `batch` was read.
    pub(crate) fn at_end(&self, batch: &Batch) -> bool {
        self.next == batch.len()
    }

    /// The lagging records from the next one up to the next whole record (or the batch's end).
    pub(crate) fn lagging_run<'b>(&self, batch: &'b Batch) -> &'b [LaggingSync] {
        let end = batch.whole.get(self.next_whole).map_or(batch.len(), |&(at, _)| at);
        &batch.lagging[self.next..end]
    }

    /// Skips `records` lagging records (read in place).
    pub(crate) fn skip(&mut self, records: usize) {
        self.next += records;
    }

    /// The next record, whole: a lagging one as the record the comparator would have been handed
    /// inside that frame, but with the PPU's position unknown (0; the digest covers it) and the
    /// frame counter taken as the stream's (a power cycle restarts the console's). A divergence
    /// found at one is replayed to before its evidence is collected, which fills in both records.
    pub(crate) fn take(&mut self, batch: &Batch) -> SyncRecord {
        let at = self.next;
        self.next += 1;
        if let Some(&(position, record)) = batch.whole.get(self.next_whole)
            && position == at
        {
            self.next_whole += 1;
            if record.frame_end {
                self.frame = record.frame + 1;
            }
            return record;
        }
        let LaggingSync { digest, cpu_cycle } = batch.lagging[at];
        let record = FrameRecord {
            frame: self.frame,
            cpu_cycle,
            ppu_scanline: 0,
            ppu_dot: 0,
            state_hash: StateHash::default(),
        };
        SyncRecord::inside_frame((record, digest), self.frame)
    }
}

/// How the threaded runner splits a window of `window` sync records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchPlan {
    /// Records per batch: a quarter of the window, 1 to [`MAX_BATCH`].
    pub batch_len: usize,
    /// Batches the channel holds (together about `window` records).
    pub channel_batches: usize,
}

impl BatchPlan {
    pub(crate) fn new(window: usize) -> BatchPlan {
        let batch_len = (window / 4).clamp(1, MAX_BATCH);
        BatchPlan { batch_len, channel_batches: (window / batch_len).max(1) }
    }

    /// The most sync records a worker can be ahead of the comparator: a full channel, the batch it is
    /// filling, the one it is handing over and the one the comparator has not finished reading.
    pub(crate) fn max_lead(self) -> usize {
        (self.channel_batches + 3) * self.batch_len
    }

    /// Batch vectors a worker can have in use at once: the channel's, its own, the one being handed
    /// over and the one the comparator reads.
    pub(crate) fn batches_per_worker(self) -> usize {
        self.channel_batches + 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_end(frame: u64, cpu_cycle: u64) -> SyncRecord {
        let record = FrameRecord {
            frame: frame + 1,
            cpu_cycle,
            ppu_scanline: 241,
            ppu_dot: 1,
            state_hash: StateHash([7; 32]),
        };
        SyncRecord { frame, record, frame_end: true, digest: 0 }
    }

    #[test]
    fn a_reader_runs_to_each_whole_record_and_follows_the_frames() {
        let mut batch = Batch::with_capacity(8);
        batch.push_lagging(LaggingSync { digest: 11, cpu_cycle: 100 });
        batch.push_lagging(LaggingSync { digest: 12, cpu_cycle: 102 });
        batch.push_whole(frame_end(5, 104));
        batch.push_lagging(LaggingSync { digest: 13, cpu_cycle: 107 });
        assert_eq!(batch.len(), 4);

        let mut reader = BatchReader::new(5);
        assert_eq!(
            reader.lagging_run(&batch),
            &[LaggingSync { digest: 11, cpu_cycle: 100 }, LaggingSync { digest: 12, cpu_cycle: 102 }]
        );
        reader.skip(1);
        let second = reader.take(&batch);
        assert_eq!((second.frame, second.record.frame, second.record.cpu_cycle), (5, 5, 102));
        assert_eq!((second.digest, second.frame_end), (12, false));
        assert!(reader.lagging_run(&batch).is_empty(), "the frame's end is next");
        assert_eq!(reader.take(&batch), frame_end(5, 104));
        assert_eq!(reader.lagging_run(&batch), &[LaggingSync { digest: 13, cpu_cycle: 107 }]);
        let next = reader.take(&batch);
        assert_eq!((next.frame, next.record.frame, next.digest), (6, 6, 13), "the next frame's record");
        assert!(reader.at_end(&batch));

        batch.clear();
        reader.restart();
        assert!(batch.is_empty() && reader.at_end(&batch));
        batch.push_lagging(LaggingSync { digest: 14, cpu_cycle: 110 });
        assert_eq!(reader.take(&batch).frame, 6, "a new batch goes on in the same frame");
    }

    #[test]
    fn a_batch_of_whole_records_reads_them_in_order() {
        let mut batch = Batch::with_capacity(2);
        batch.push_whole(frame_end(0, 29_781));
        batch.push_whole(frame_end(1, 59_562));
        let mut reader = BatchReader::new(0);
        assert!(reader.lagging_run(&batch).is_empty());
        assert_eq!(reader.take(&batch), frame_end(0, 29_781));
        assert!(reader.lagging_run(&batch).is_empty());
        assert_eq!(reader.take(&batch), frame_end(1, 59_562));
        assert!(reader.at_end(&batch));
    }
}
