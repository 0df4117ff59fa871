//! The pipeline's rules live in the `anes-pipeline` crate, which can do no I/O; this module names them
//! where the service always found them, and adds the storage shell that executes their journal
//! actions ([`PipelineStorage`], on a thread of its own in the service: [`StorageThread`]). The rest of the service's side (the driver that
//! executes the other actions) is in [`crate::service`], and [`PipelineObserver`] turns the counters
//! into the series of [`crate::metrics`]; the simulator that drives the rules with real consoles,
//! the referee and the durable storage is this module's test.

mod durable;
mod log;
mod observer;

pub use anes_pipeline::*;
pub use durable::{PipelineStorage, StorageThread};
pub use observer::PipelineObserver;

#[cfg(test)]
mod tests;
