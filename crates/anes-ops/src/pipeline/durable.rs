//! The storage shell: executes a pipeline's journal actions and answers a commit with the events the
//! pipeline waits for.

use anes_core::movie::FrameInput;
use anes_pipeline::storage::{CommitFailure, JournalSink, execute_journal_action, is_journal_action};
use anes_pipeline::{Action, Event, StoreEvent};

use crate::journal::Journal;

/// A pipeline's journal, as the pipeline's actions write it.
#[derive(Debug)]
pub struct PipelineStorage {
    journal: Box<dyn Journal>,
}

impl PipelineStorage {
    /// The storage a pipeline writes through.
    pub fn new(journal: Box<dyn Journal>) -> PipelineStorage {
        PipelineStorage { journal }
    }

    /// True for the actions this shell executes.
    pub fn executes(action: &Action) -> bool {
        is_journal_action(action)
    }

    /// Executes `action` if it is a storage action (others are not this shell's), and returns the
    /// events that answer it, in order ([`execute_journal_action`]).
    pub fn execute(&mut self, action: &Action) -> Vec<Event> {
        execute_journal_action(self, action)
    }
}

impl JournalSink for PipelineStorage {
    fn append(&mut self, seq: u64, input: FrameInput) {
        self.journal.append(seq, input);
    }

    fn commit(&mut self) -> Result<(), CommitFailure> {
        self.journal.commit().map_err(|e| {
            let store = match e.fence() {
                Some((writer, current)) => Some(StoreEvent::Fenced { writer, current }),
                None if e.store_damaged() => Some(StoreEvent::Damaged),
                None => None,
            };
            CommitFailure { store, message: e.to_string() }
        })
    }

    fn release_before(&mut self, seq: u64) {
        self.journal.release_before(seq);
    }
}

/// A pipeline's storage on a thread of its own, so a commit (an fsync, a round trip to a shared store)
/// never holds up the pipeline's thread: actions go in, in order, and the events that answer them come
/// back through `answer`. One commit is in flight at a time anyway (the pipeline waits for its answer
/// before it starts the next), and records taken meanwhile go into the next one: group commit.
#[derive(Debug)]
pub struct StorageThread {
    actions: Option<crossbeam_channel::Sender<Action>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl StorageThread {
    /// Starts the thread for pipeline `id`.
    pub fn start(id: &str, mut storage: PipelineStorage, answer: Box<dyn Fn(Event) + Send>) -> StorageThread {
        let (tx, rx) = crossbeam_channel::unbounded::<Action>();
        let thread = std::thread::Builder::new()
            .name(format!("journal-{id}"))
            .spawn(move || {
                for action in rx {
                    for event in storage.execute(&action) {
                        answer(event);
                    }
                }
            })
            .expect("spawning the journal thread");
        StorageThread { actions: Some(tx), thread: Some(thread) }
    }

    /// Hands over a storage action ([`PipelineStorage::executes`]).
    pub fn send(&self, action: Action) {
        if let Some(tx) = &self.actions {
            let _ = tx.send(action);
        }
    }

    /// Executes what was handed over, then stops the thread.
    pub fn finish(mut self) {
        self.actions = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for StorageThread {
    fn drop(&mut self) {
        self.actions = None;
    }
}
