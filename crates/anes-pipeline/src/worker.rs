//! What the pipeline knows of a worker: its name and the messages it sends, tagged with the
//! incarnation that sent them (the fencing token, checked before the payload is looked at).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::protocol::Reply;

/// One of the pipeline's two workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerId {
    /// Worker A.
    A,
    /// Worker B.
    B,
}

impl WorkerId {
    /// Both, in order.
    pub const BOTH: [WorkerId; 2] = [WorkerId::A, WorkerId::B];

    /// 0 for A, 1 for B.
    pub const fn index(self) -> usize {
        match self {
            WorkerId::A => 0,
            WorkerId::B => 1,
        }
    }

    /// The other worker.
    pub const fn other(self) -> WorkerId {
        match self {
            WorkerId::A => WorkerId::B,
            WorkerId::B => WorkerId::A,
        }
    }

    /// `a` or `b` (metric labels, URLs).
    pub const fn name(self) -> &'static str {
        match self {
            WorkerId::A => "a",
            WorkerId::B => "b",
        }
    }
}

impl fmt::Display for WorkerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a worker sent, tagged with who sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerMessage {
    /// Which worker.
    pub worker: WorkerId,
    /// Its incarnation (the fencing token).
    pub incarnation: u64,
    /// What it sent.
    pub body: WorkerOutput,
}

/// The payload of a [`WorkerMessage`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerOutput {
    /// Replies, in the order the worker sent them.
    Replies(Vec<Reply>),
    /// The worker is gone: stopped, crashed, or it broke the protocol.
    Exited {
        /// What happened, for a person.
        reason: String,
    },
}
