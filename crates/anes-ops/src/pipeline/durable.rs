//! The storage shell: executes a pipeline's storage actions on its durable journal and dead-letter
//! queue, and answers a commit with the event the pipeline waits for.

use anes_pipeline::{Action, Event};

use crate::dlq::DeadLetterQueue;
use crate::journal::Journal;

/// A pipeline's journal and dead-letter queue.
#[derive(Debug)]
pub struct PipelineStorage {
    journal: Box<dyn Journal>,
    dlq: Box<dyn DeadLetterQueue>,
    /// Records appended since the last commit, per store: a store with none is not committed.
    journal_pending: bool,
    dlq_pending: bool,
    /// A record the queue refused since the last commit: the commit reports it.
    dlq_refused: Option<String>,
}

impl PipelineStorage {
    /// The storage a pipeline writes through.
    pub fn new(journal: Box<dyn Journal>, dlq: Box<dyn DeadLetterQueue>) -> PipelineStorage {
        PipelineStorage { journal, dlq, journal_pending: false, dlq_pending: false, dlq_refused: None }
    }

    /// Executes `action` if it is a storage action (others are not this shell's), and returns the
    /// event that answers it, if any.
    pub fn execute(&mut self, action: &Action) -> Option<Event> {
        match action {
            Action::AppendJournal { first_seq, inputs } => {
                for (seq, &input) in (*first_seq..).zip(inputs) {
                    self.journal.append(seq, input);
                }
                self.journal_pending = true;
            }
            Action::EnqueueDlq { first_seq, inputs } => {
                for (seq, &input) in (*first_seq..).zip(inputs) {
                    if let Err(e) = self.dlq.push(seq, input) {
                        self.dlq_refused.get_or_insert(e.to_string());
                    }
                }
                self.dlq_pending = true;
            }
            Action::Commit => {
                let journal_error = if std::mem::take(&mut self.journal_pending) {
                    self.journal.commit().err().map(|e| e.to_string())
                } else {
                    None
                };
                let dlq_error = if std::mem::take(&mut self.dlq_pending) {
                    // A record the queue refused fails the commit: the pipeline counted it as taken.
                    let committed = self.dlq.commit().err().map(|e| e.to_string());
                    self.dlq_refused.take().or(committed)
                } else {
                    None
                };
                return Some(Event::Committed { journal_error, dlq_error });
            }
            Action::DiscardDlq { n } => {
                if let Err(e) = self.dlq.discard_front(*n as usize) {
                    tracing::error!(error = %e, "truncating the dead-letter queue failed; its records are journaled and will be skipped at the next start");
                }
            }
            Action::ReleaseJournal { seq } => self.journal.release_before(*seq),
            _ => {}
        }
        None
    }
}
