//! The canary gate (the design's post-incident step): before a new build takes traffic, replay a
//! recorded input stream through the baseline build and the candidate build in parallel, compare their
//! frame records as they arrive, stop at the first difference, even of one cycle, and explain it.
//!
//! Each build runs as an `anes worker` child speaking [`crate::worker::protocol`]; the baseline may
//! instead be a golden log of frame records ([`GoldenLog`]). A difference is explained by replaying both
//! builds from the last agreed checkpoint through the lockstep runner, whose machines are the two
//! workers ([`RemoteMachine`]): the first divergent instruction, the state fields it changed and the
//! same evidence bundle `anes lockstep` writes. The emulation epochs the builds name in their hello
//! tell a regression (same epoch) from an expected change (the candidate bumped it).
//!
//! A libretro core runs the same way, in `anes worker --libretro` children ([`RetroWorkerMachine`]):
//! two builds of one core are the baseline and the candidate, compared frame by frame.

mod client;
mod export;
mod log;
mod remote;
mod retro;
mod run;
mod status;

pub use client::{DEFAULT_REPLY_TIMEOUT, WorkerEnd, WorkerError, WorkerProcess};
pub use export::{MetricsServer, PushError, push};
pub use log::{GoldenLog, LogError};
pub use remote::{RemoteMachine, spawn_loaded};
pub use retro::{FailureWatch, RetroFailure, RetroWorkerMachine, RetroWorkerSpec};
pub use run::{
    Baseline, CanaryConfig, CanaryDivergence, CanaryError, CanaryOutcome, CanaryReport, EpochVerdict,
    run_canary,
};
pub use status::CanaryStatus;
