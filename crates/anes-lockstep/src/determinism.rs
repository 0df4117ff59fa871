//! Determinism checks for test suites: build two machines the same way, run them in lockstep over
//! the same inputs, and fail with the localized divergence report if they ever differ.
//!
//! [`check_deterministic`] returns a `Result`; [`assert_deterministic`] panics with the report.

use core::fmt;

use anes_core::state::StateHash;
use thiserror::Error;

use crate::config::LockstepConfig;
use crate::evidence::{Evidence, describe_write};
use crate::input::InputSource;
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::{LockstepError, RunOutcome};

/// Differing fields a [`Nondeterminism`] message lists at most (the evidence has them all).
const FIELDS_LISTED: usize = 16;

/// Two machines built the same way agreed on every frame asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Deterministic {
    /// Frames both machines ran and agreed on, from power-on.
    pub frames: u64,
    /// The state hash both machines had at the end of the last frame.
    pub state_hash: StateHash,
}

/// Why [`check_deterministic`] failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Nondeterminism {
    /// The machines diverged; the evidence holds the localized finding (its `Display` is the report:
    /// where it was seen, the first divergent instruction or frame, and the differing fields).
    #[error("{}", Report(.0))]
    Diverged(Box<Evidence>),
    /// The lockstep runner refused the configuration (or the machines: e.g. a finer granularity than
    /// a machine that does not step instructions supports).
    #[error(transparent)]
    Lockstep(#[from] LockstepError),
}

impl Nondeterminism {
    /// The evidence of the divergence, when the machines diverged.
    pub fn evidence(&self) -> Option<&Evidence> {
        match self {
            Nondeterminism::Diverged(evidence) => Some(evidence),
            Nondeterminism::Lockstep(_) => None,
        }
    }
}

/// The report text of a divergence: the summary line, then one line per differing field.
struct Report<'e>(&'e Evidence);

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let report = self.0.report();
        write!(f, "the machines diverged: {}", report.message)?;
        if let Some(error) = &report.localization_error {
            write!(f, "\n  not localized: {error}")?;
        }
        if let Some(sections) = &report.detected.sections {
            write!(f, "\n  differing sections: {}", sections.join(", "))?;
        }
        for field in report.fields.iter().take(FIELDS_LISTED) {
            write!(f, "\n  {}: A {} vs B {}", field.name, field.a, field.b)?;
            if field.last_write_a.is_some() || field.last_write_b.is_some() {
                let (a, b) = (
                    describe_write(field.last_write_a.as_ref()),
                    describe_write(field.last_write_b.as_ref()),
                );
                write!(f, " (last written: A {a}, B {b})")?;
            }
        }
        let more = report.fields.len().saturating_sub(FIELDS_LISTED) + report.fields_omitted;
        if more > 0 {
            write!(f, "\n  ... and {more} more differing fields")?;
        }
        Ok(())
    }
}

/// Builds two machines with `make_machine`, runs them in lockstep for `frames` frames over `inputs`
/// (frame `n` gets `inputs`' frame `n`; past its end, the default input) on the calling thread, and
/// returns what they agreed on, or the localized divergence.
///
/// Uses [`LockstepConfig::default`] (compared at every frame end, a checkpoint every 60 frames,
/// localization on); [`check_deterministic_with`] takes another configuration.
///
/// ```
/// use anes_lockstep::check_deterministic;
/// # use anes_fixtures::FakeMachine; // stands in for your own Machine
/// use anes_core::movie::FrameInput;
///
/// let inputs = vec![FrameInput::default(); 100];
/// let verified = check_deterministic(|| FakeMachine::new(7), &inputs, 100).unwrap();
/// assert_eq!(verified.frames, 100);
///
/// // Two machines seeded differently are caught at once, with the fields that differ.
/// let mut seed = 0;
/// let err = check_deterministic(|| { seed += 1; FakeMachine::new(seed) }, &inputs, 100).unwrap_err();
/// assert!(err.to_string().contains("ram[$00]: A $01 vs B $02"), "{err}");
/// ```
pub fn check_deterministic<M, F, S>(
    make_machine: F,
    inputs: &S,
    frames: u64,
) -> Result<Deterministic, Nondeterminism>
where
    M: Machine,
    F: FnMut() -> M,
    S: InputSource<M::Input> + ?Sized,
{
    check_deterministic_with(make_machine, inputs, frames, LockstepConfig::default())
}

/// [`check_deterministic`] with a configuration (granularity, checkpoint interval, pictures; faults
/// go into machine B, which makes the check fail on purpose).
pub fn check_deterministic_with<M, F, S>(
    mut make_machine: F,
    inputs: &S,
    frames: u64,
    config: LockstepConfig,
) -> Result<Deterministic, Nondeterminism>
where
    M: Machine,
    F: FnMut() -> M,
    S: InputSource<M::Input> + ?Sized,
{
    let a = make_machine();
    let b = make_machine();
    let mut lockstep = Lockstep::new(a, b, config)?;
    match lockstep.run_interleaved(inputs, frames) {
        RunOutcome::Agreed { frames } => {
            Ok(Deterministic { frames, state_hash: lockstep.last_verified_record().state_hash })
        }
        RunOutcome::Diverged(_) => {
            let evidence = lockstep.evidence().cloned().expect("a divergence keeps its evidence");
            Err(Nondeterminism::Diverged(Box::new(evidence)))
        }
    }
}

/// Panics with the localized divergence report unless two machines built by `make_machine` agree
/// on every one of `frames` frames over `inputs` (see [`check_deterministic`]).
///
/// ```
/// use anes_lockstep::{assert_deterministic, NesMachine};
/// use anes_core::{movie::InputStream, NesConfig};
/// # let rom = anes_fixtures::tiny_rom();
/// assert_deterministic(|| NesMachine::from_ines(&rom, NesConfig::default()).unwrap(), &InputStream::new(), 120);
/// ```
///
/// ```should_panic
/// use anes_lockstep::assert_deterministic;
/// # use anes_fixtures::FakeMachine; // stands in for your own Machine
/// use anes_core::movie::FrameInput;
/// use std::sync::atomic::{AtomicU8, Ordering};
///
/// // A counter shared between instances makes every machine different.
/// static BUILT: AtomicU8 = AtomicU8::new(0);
/// let inputs: &[FrameInput] = &[];
/// assert_deterministic(|| FakeMachine::new(BUILT.fetch_add(1, Ordering::Relaxed)), inputs, 10);
/// ```
#[track_caller]
pub fn assert_deterministic<M, F, S>(make_machine: F, inputs: &S, frames: u64) -> Deterministic
where
    M: Machine,
    F: FnMut() -> M,
    S: InputSource<M::Input> + ?Sized,
{
    match check_deterministic(make_machine, inputs, frames) {
        Ok(verified) => verified,
        Err(e) => panic!("{e}"),
    }
}
