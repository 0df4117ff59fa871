//! The dead-letter queue: where a read-only pipeline puts the input records it may not run yet, to
//! replay them in order once it is verified again. The pipeline keeps it in memory
//! ([`MemoryDlq`]); its durable copy is the journal, which takes every record before it is
//! acknowledged, queued or not ([`crate::journal`]). `file.rs` reads the queue files earlier
//! versions kept beside the journal.

mod file;

use thiserror::Error;

pub use anes_pipeline::storage::MemoryDlq;
pub use file::{DLQ_MAGIC, DlqInspection, InspectedRecord, inspect};

/// Why a queue file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DlqError {
    /// The queue's file is not a queue.
    #[error("the dead-letter queue's file: {0}")]
    Io(String),
    /// The queue's file could not be read: missing, not a regular file, or larger than any queue (an
    /// [`anes_fs::ReadError`]'s message, which names the file).
    #[error("{0}")]
    Read(String),
}
