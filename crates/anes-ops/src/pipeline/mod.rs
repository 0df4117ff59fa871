//! The pipeline's rules live in the `anes-pipeline` crate, which can do no I/O; this module names them
//! where the service always found them. The service's side of them (the driver that executes the
//! actions, the observer that turns the counters into metrics) is in [`crate::runtime`] and
//! [`crate::metrics`]; the simulator that drives them with real consoles, the referee and the durable
//! storage is this module's test.

pub use anes_pipeline::*;

#[cfg(test)]
mod tests;
