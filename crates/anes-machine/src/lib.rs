//! The vocabulary the lockstep runner (`anes-lockstep`) and the operations pipeline (`anes-pipeline`)
//! share, with nothing that runs on its own: the [`Machine`] trait and its [`Probe`], the anes core as
//! one ([`NesMachine`]), the [`Fault`]s that can be injected, a frame's input ([`EvidenceInput`]),
//! what a [`Divergence`] is, and the [`BUILD`] identity. `anes-lockstep` re-exports all of it under
//! the same names; most users want that crate.

mod build;
mod divergence;
pub mod fault;
pub mod input;
pub mod machine;

pub use build::{BUILD, BuildIdentity};
pub use divergence::{Divergence, DivergenceKind};
pub use fault::{Fault, FaultPlan, FaultSpecError, MAX_STALL_CYCLES};
pub use input::{EvidenceInput, InputSource};
pub use machine::{Machine, MachineError, NesMachine, Probe};
