//! What the HTTP host holds of a running pipeline: its control channel and its latest status. A leaf
//! of the service shell, so the host and the driver share these types without naming each other.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use anes_core::movie::FrameInput;
use crossbeam_channel::Sender;

use crate::pipeline::{Event, PipelineStatus, PushOutcome, SequenceGap};

/// A message to a pipeline's driver thread.
#[derive(Debug)]
pub enum Control {
    /// An event for the state machine.
    Event(Event),
    /// A pushed batch; the answer goes back on `reply`.
    Push {
        /// Sequence number of the first record.
        first_seq: u64,
        /// The records.
        inputs: Vec<FrameInput>,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Result<PushOutcome, SequenceGap>>,
    },
}

/// A running pipeline as the HTTP side sees it.
#[derive(Debug, Clone)]
pub struct PipelineHandle {
    /// `pipeline_id`.
    pub id: String,
    /// Its control channel.
    pub control: Sender<Control>,
    /// Its latest status, replaced by the driver every 100 ms while it is busy (`driver::PUBLISH`),
    /// every second while it is quiet (`driver::QUIET`), and before it answers a push.
    pub status: Arc<Mutex<Arc<PipelineStatus>>>,
    /// True when it takes pushed records.
    pub accepts_push: bool,
    /// Its ROM file as configured (`None`: the bundled demo ROM), for the command the status page
    /// shows to shrink an incident.
    pub rom: Option<PathBuf>,
    /// Each state section's name and length in bytes on its consoles (the board's sections depend on
    /// the ROM): what a drill's bit flip may name.
    pub state_sections: Arc<[(&'static str, usize)]>,
}

impl PipelineHandle {
    /// The latest status.
    pub fn status(&self) -> Arc<PipelineStatus> {
        Arc::clone(&self.status.lock().unwrap_or_else(|p| p.into_inner()))
    }
}
