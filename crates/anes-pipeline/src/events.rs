//! What goes into a pipeline (events, store reports, drills) and what comes out (actions, the answer
//! to a push, refusals), with the checkpoints and investigations they carry.

use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::FrameInput;
use anes_core::state::FrameRecord;
use serde::Serialize;
use thiserror::Error;

use crate::protocol::WorkerCommand;
use crate::worker::{WorkerId, WorkerMessage};

/// A verified checkpoint: both workers had this state hash before frame `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Sequence number of the next frame.
    pub seq: u64,
    /// CPU cycle at that frame boundary.
    pub cpu_cycle: u64,
    /// The state hash both workers reported.
    pub state_hash: [u8; 32],
    /// A snapshot with that hash.
    pub snapshot: Arc<Vec<u8>>,
    /// When it was verified.
    pub taken_at: Duration,
}

/// What to find out about a divergence: who diverged (the referee replays the checkpoint on a third
/// console) and the lockstep runner's evidence bundle.
#[derive(Debug, Clone)]
pub struct Investigation {
    /// The incident.
    pub incident: u64,
    /// Sequence number of the frame whose records differ.
    pub seq: u64,
    /// Both workers' records of it.
    pub records: [FrameRecord; 2],
    /// The last verified checkpoint, if any.
    pub checkpoint: Option<Checkpoint>,
    /// Inputs from the checkpoint through frame `seq`.
    pub inputs: Vec<FrameInput>,
    /// Faults that fired in each worker since the checkpoint (lockstep fault specs).
    pub faults: [Vec<String>; 2],
}

/// What the pipeline asks its runtime to do.
#[derive(Debug, Clone)]
pub enum Action {
    /// Start a worker (it loads the ROM and answers `loaded`).
    Start {
        /// Which.
        worker: WorkerId,
        /// Its new incarnation.
        incarnation: u64,
    },
    /// Send a command to a worker.
    SendToWorker {
        /// Which.
        worker: WorkerId,
        /// What.
        command: WorkerCommand,
    },
    /// Stop a worker for good (isolation), then report [`Event::WorkerStopped`].
    Stop {
        /// Which.
        worker: WorkerId,
        /// The incarnation to stop.
        incarnation: u64,
    },
    /// Make a worker die abruptly (a drill).
    Crash {
        /// Which.
        worker: WorkerId,
    },
    /// Find out who diverged and keep the evidence; answer with [`Event::Verdict`].
    Investigate(Box<Investigation>),
    /// Shutdown: intake is stopped and this is the final verified checkpoint (`None` when none could
    /// be verified).
    Drained(Option<Checkpoint>),
    /// Write this verified checkpoint to the durable store (off the hot path; answer with
    /// [`Event::Store`]).
    PersistCheckpoint(Checkpoint),
    /// A recovery began: take a new store epoch, so writes of the old lineage are fenced.
    BumpStoreEpoch,
    /// Append these records, from sequence number `first_seq` on, to the journal (pending until
    /// [`Action::Commit`]): every record taken, those the dead-letter queue holds too. `first_seq` is
    /// the end of what the journal took before; it is below that end only after a commit that
    /// failed, whose records (never acknowledged) these replace.
    AppendJournal {
        /// The first record's sequence number.
        first_seq: u64,
        /// The records, in order.
        inputs: Vec<FrameInput>,
    },
    /// Make what was appended durable (fsync by the journal's policy, or the shared store's commit
    /// under the store epoch) and answer with [`Event::Committed`]. Until then none of it reaches a
    /// worker or a producer.
    Commit,
    /// The journal's records before `seq` are no longer needed for recovery (the store keeps no
    /// checkpoint older than it); old segments may go.
    ReleaseJournal {
        /// The oldest frame the store keeps.
        seq: u64,
    },
    /// Answer the producer of the oldest push not answered yet ([`Pipeline::push_batch`](crate::Pipeline::push_batch)): what it
    /// counts as accepted is durable.
    Acknowledge(PushOutcome),
}

/// What the checkpoint store's writer reports back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreEvent {
    /// The epoch the writer writes with.
    Epoch(u64),
    /// A checkpoint is durable; the store keeps checkpoints from `oldest_kept_seq` on.
    Persisted {
        /// Its frame.
        seq: u64,
        /// Its epoch.
        epoch: u64,
        /// The oldest frame the store keeps.
        oldest_kept_seq: u64,
    },
    /// The store refused this writer's epoch (another writer took over, or the store lost its data;
    /// [`Fence::classify`](crate::Fence::classify) tells which): stop taking records.
    Fenced {
        /// This service's epoch.
        writer: u64,
        /// The store's.
        current: u64,
    },
    /// What the store holds about the pipeline itself (its epoch, the journal's end) is damaged: not a
    /// number, or an epoch at its maximum. Nothing vouches for this service as the owner: stop taking
    /// records.
    Damaged,
}

/// A drill: a fault put into one worker on purpose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drill {
    /// A lockstep fault spec (`flip:ram:0x0010:3`, `stall:5`, `input:0:7`), optionally `@CYCLE`.
    Fault(String),
    /// The worker answers nothing for this long.
    Stall(Duration),
    /// The worker dies.
    Crash,
}

impl std::fmt::Display for Drill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drill::Fault(spec) => write!(f, "fault {spec}"),
            Drill::Stall(duration) => write!(f, "stall {} s", duration.as_secs_f64()),
            Drill::Crash => f.write_str("crash"),
        }
    }
}

/// Something that happened.
#[derive(Debug, Clone)]
pub enum Event {
    /// Time passed.
    Tick,
    /// A worker said something.
    Worker(WorkerMessage),
    /// A worker asked to stop has stopped.
    WorkerStopped {
        /// Which.
        worker: WorkerId,
        /// The incarnation that stopped.
        incarnation: u64,
    },
    /// The referee's finding on an incident.
    Verdict {
        /// The incident.
        incident: u64,
        /// Workers whose record differs from the referee's (empty: it did not reproduce).
        suspects: Vec<WorkerId>,
    },
    /// The evidence of an incident is written.
    EvidenceWritten {
        /// The incident.
        incident: u64,
        /// Where (relative to the evidence directory).
        path: String,
    },
    /// The alert fired for this pipeline.
    AlertFiring,
    /// The alert resolved for this pipeline (information only).
    AlertResolved,
    /// A drill.
    Drill {
        /// Target.
        worker: WorkerId,
        /// What.
        drill: Drill,
    },
    /// Stop intake, take a final verified checkpoint.
    Drain,
    /// The checkpoint store's writer reported.
    Store(StoreEvent),
    /// The answer to [`Action::Commit`]: `None` where the write succeeded, else what went wrong. On
    /// an error the records appended since the last commit are lost (refused). A journal refused by
    /// the store's fence reports [`StoreEvent::Fenced`] first.
    Committed {
        /// The journal's write.
        journal_error: Option<String>,
    },
}

/// Why a record was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Refusal {
    /// The service is stopping.
    #[error("the pipeline is stopping and takes no more records")]
    Stopping,
    /// Too many records wait for verification.
    #[error("the pipeline's backlog is full ({capacity} records wait for verification); retry later")]
    BacklogFull {
        /// Capacity.
        capacity: u64,
    },
    /// The dead-letter queue is full.
    #[error("the pipeline is read-only and its dead-letter queue is full ({capacity} records); retry later")]
    DlqFull {
        /// Capacity.
        capacity: usize,
    },
    /// The journal or the dead-letter queue could not be written: nothing of this was kept.
    #[error(
        "the records could not be stored durably (journal or dead-letter queue: see the service's log); retry later"
    )]
    Storage,
    /// Another service took this pipeline over (a newer store epoch).
    #[error("another service took this pipeline over (store epoch {current}); send records there")]
    Fenced {
        /// The store's epoch.
        current: u64,
    },
    /// The store lost the pipeline's data (its epoch fell below this service's, or cannot be read):
    /// nothing vouches for this service as the owner, so it takes nothing more.
    #[error(
        "the checkpoint store lost or damaged this pipeline's data (store epoch {current}, this service's {ours}); nothing more is taken until an operator restarts the service (docs/OPERATIONS.md)"
    )]
    StoreLost {
        /// The store's epoch.
        current: u64,
        /// This service's.
        ours: u64,
    },
}

/// The answer to a pushed batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PushOutcome {
    /// Records taken.
    pub accepted: u64,
    /// Records already received before (the batch overlapped what was sent earlier).
    pub duplicates: u64,
    /// The sequence number the pipeline expects next.
    pub next_seq: u64,
    /// Why the rest of the batch was not taken, if it was not.
    pub refused: Option<Refusal>,
}

/// A pushed batch that does not continue the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("sequence gap: the batch starts at {first_seq} but the pipeline expects {expected} next")]
pub struct SequenceGap {
    /// Where the batch starts.
    pub first_seq: u64,
    /// What the pipeline expects.
    pub expected: u64,
}
