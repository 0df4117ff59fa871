//! The service shell around the pipeline state machines, in the order its parts run: `bootstrap`
//! ([`start_pipelines`]) reads and opens what each pipeline needs and spawns its driver; `driver` is
//! one pipeline's thread, feeding events in and executing actions; `run` ([`run_service`]) hosts the
//! HTTP server on a small tokio runtime and runs the shutdown sequence on a signal. `handle` and
//! `error` are leaves that the others, and [`crate::http`], share: no module of the shell names one
//! that depends on it (`tests/module_cycles.rs`).

mod bootstrap;
mod driver;
mod error;
pub(crate) mod handle;
mod run;

pub use bootstrap::{Pipelines, ServiceOptions, jitter_seed, read_token, start_pipelines};
pub use driver::{DRAIN_TIMEOUT, PipelineReport};
pub use error::StartError;
pub use handle::{Control, PipelineHandle};
pub use run::run_service;
