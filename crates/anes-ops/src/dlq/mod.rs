//! The dead-letter queue: where a read-only pipeline puts the input records it may not run yet, to
//! replay them in order once it is verified again.
//!
//! [`DeadLetterQueue`] is the seam; [`FileDlq`] is the durable queue the service uses (an append-only
//! file of framed records, `file.rs`), [`MemoryDlq`] keeps them in memory (tests, and what a crash
//! loses). Records are pushed, then committed together ([`DeadLetterQueue::commit`], once per accepted
//! batch, before the producer is answered); a failed commit drops what was pushed since the last one,
//! so the pipeline can refuse exactly those records.

mod file;

pub use file::{DLQ_MAGIC, DlqInspection, DlqOpenReport, FileDlq, InspectedRecord, inspect};

pub use anes_pipeline::storage::{DeadLetterQueue, DlqError, MemoryDlq};
