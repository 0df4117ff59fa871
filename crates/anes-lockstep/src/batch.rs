//! The threaded runner's batches of sync records and how a window is split into them (the runner
//! keeps its batch vectors between runs, so the runner and its threads share these).

use crate::side::SyncRecord;

/// Records a batch holds at most.
const MAX_BATCH: usize = 256;

/// A worker's sync records, in order.
pub(crate) type Batch = Vec<SyncRecord>;

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
