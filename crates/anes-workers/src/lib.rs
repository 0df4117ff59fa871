//! anes-workers: the workers of a pipeline. A worker is a console that runs the pipeline's input
//! records and reports a frame record for each, on a thread of this process or in an `anes worker`
//! child process, or `anes worker --listen` on another machine ([`remote`]). All speak [`protocol`]: the child over its stdin and stdout, the thread over
//! channels without encoding. Every transport's handle is a [`WorkerHandle`], started by a
//! [`WorkerLauncher`], and reports [`WorkerMessage`]s to the pipeline's driver.
//!
//! Every started worker gets an incarnation number, and everything it sends carries it: after a worker
//! is isolated and replaced, anything the old incarnation still had in flight is recognised and dropped
//! (a fencing token, checked before the payload is looked at).
//!
//! - [`protocol`]: the messages (`anes_pipeline::protocol`'s) and their codec: binary frames with
//!   checksums, JSON lines, the limits both share;
//! - [`engine`]: the console behind every transport, driven by commands;
//! - [`stdio`]: the worker's side of a byte stream (`anes worker`);
//! - `thread`, `process`, [`remote`], [`stream`]: the transports ([`ThreadWorker`]; [`ProcessWorker`]
//!   over [`WorkerChild`], the one child-process transport, also the canary's; [`remote::RemoteWorker`]
//!   over TCP).

/// The console behind the protocol lives with the protocol, in `anes-pipeline`.
pub use anes_pipeline::engine;
mod child_temp;
mod launcher;
mod process;
pub mod protocol;
pub mod remote;
pub mod retro_engine;
pub mod stdio;
pub mod stream;
mod thread;

pub use anes_pipeline::worker::{WorkerId, WorkerMessage, WorkerOutput};
pub(crate) use launcher::ReplyBatcher;
pub use launcher::{WorkerHandle, WorkerLauncher, WorkerMode};
pub use process::{ProcessWorker, WorkerChild};
pub use thread::ThreadWorker;
