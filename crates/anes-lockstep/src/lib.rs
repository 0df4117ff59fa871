//! anes-lockstep: runs two deterministic machines over one input stream and compares them at every
//! sync point; on the first difference it stops, localizes the first divergent instruction after the
//! last sync point where the machines agreed (replaying from the last verified checkpoint), names
//! every differing field and the instruction that last wrote it, and keeps the evidence as a bundle
//! (JSON, HTML, snapshots, inputs, pictures).
//!
//! - [`Machine`]: what a core provides (implemented for anes by [`NesMachine`]): its own input type
//!   ([`EvidenceInput`], read from an [`InputSource`]), whole frames and optionally instruction
//!   steps (without them a divergence is localized to the frame: [`FrameLocalization`]);
//! - [`assert_deterministic`] / [`check_deterministic`]: one line in a `cargo test` that runs two
//!   instances of any [`Machine`] in lockstep (see `docs/USING-LOCKSTEP.md`);
//! - [`Lockstep`]: the runner (same thread or two worker threads, frame/scanline/instruction sync),
//!   checkpoints and [`Lockstep::rollback`];
//! - [`FaultPlan`]: deliberate faults in machine B, to prove the harness catches what it claims to;
//! - [`Evidence`]: what is kept about a divergence, and [`Evidence::write_bundle`];
//! - [`shrink`]: the smallest input stream that still shows a divergence (ddmin over presses,
//!   buttons and console commands, trials from cached checkpoints, on `jobs` threads).
//!
//! Architecture invariants:
//! - a frame counts as verified only when both machines' records at its end are equal, and nothing
//!   after the first difference is ever counted;
//! - after `Lockstep::new`, running frames allocates nothing on one thread (checkpoint buffers and
//!   the checkpoint ring are preallocated); the threaded mode allocates only when a run starts (its
//!   workers and channels), never per frame;
//! - the evidence of a divergence is kept until the `Lockstep` is dropped, whatever rollbacks follow;
//! - every injected fault fires once; a localization replay re-applies it where it fired.
//!
//! ```
//! use anes_lockstep::{Lockstep, LockstepConfig, NesMachine, RunOutcome};
//! use anes_core::{movie::InputStream, NesConfig};
//! # let rom = anes_fixtures::tiny_rom();
//! let a = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
//! let b = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
//! let mut lockstep = Lockstep::new(a, b, LockstepConfig::default()).unwrap();
//! assert_eq!(lockstep.run(&InputStream::new(), 30), RunOutcome::Agreed { frames: 30 });
//! assert_eq!(lockstep.frames_verified(), 30);
//! ```

// The machine layer lives in `anes-machine`; these names keep the paths this crate always had.
use anes_machine::{fault, input, machine};

mod batch;
mod bundle;
mod checkpoint;
mod collect;
mod comparator;
mod config;
mod contract;
mod determinism;
mod diff;
mod evidence;
mod fate;
mod forward;
mod html;
mod localize;
mod localize_frame;
mod lockstep;
pub mod markup;
mod outcome;
mod program_view;
mod record_json;
mod schedule;
mod shrink;
mod side;
mod status;
mod summary;
mod threaded;

pub use config::{Granularity, GranularityError, LockstepConfig, Threading};
pub use contract::{ContractViolation, check_contract};
pub use determinism::{
    Deterministic, Nondeterminism, assert_deterministic, check_deterministic, check_deterministic_with,
};
pub use diff::{FieldDiff, LastWrite, WriteCause};
pub use evidence::{
    BUILD, BUNDLE_FILES, BuildIdentity, BundleError, DetectedJson, Evidence, Report, diff_image, encode_png,
};
pub use fate::{FaultFate, FaultOutcome};
pub use fault::{Fault, FaultPlan, FaultSpecError, MAX_STALL_CYCLES};
pub use input::{EvidenceInput, InputSource};
pub use localize::{Localization, LocalizeError};
pub use localize_frame::FrameLocalization;
pub use lockstep::Lockstep;
/// The types [`forward_machine!`] names, reachable whatever the calling crate depends on.
#[doc(hidden)]
pub mod __forward {
    pub use anes_core::state::{FrameRecord, StateHash};
}
pub use machine::{Machine, MachineError, NesMachine, Probe};
pub use outcome::{Divergence, DivergenceKind, LockstepError, Progress, Rollback, RollbackError, RunOutcome};
pub use program_view::ProgramView;
pub use record_json::RecordJson;
pub use schedule::{FaultPlanError, FiredFault};
pub use shrink::{
    Budget, CommandJson, Halt, Minimized, MinimizedStream, PhaseFrames, PressJson, RemovalOracle,
    ShrinkConfig, ShrinkError, ShrinkInput, ShrinkProgress, ShrinkReport, ShrinkStats, Shrunk, StartJson,
    StartSearch, StreamHalt, StreamJson, StreamLimits, TargetJson, ddmin, minimize_stream, shrink,
    shrink_pairs,
};
pub use status::LockstepStatus;
pub use summary::Summary;

/// The guide `docs/USING-LOCKSTEP.md`, whose examples run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/USING-LOCKSTEP.md")]
struct UsingLockstepGuide;
