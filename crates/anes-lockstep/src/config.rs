//! How a lockstep run is set up.

use core::fmt;
use core::str::FromStr;

use crate::fault::FaultPlan;

/// How often the two machines are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Granularity {
    /// At the end of every frame (fast path: machines run whole frames).
    #[default]
    Frame,
    /// At the first instruction boundary after every change of PPU scanline, and at frame ends.
    Scanline,
    /// After every instruction (slow: the full state is hashed after each one).
    Instruction,
}

impl Granularity {
    /// The name used on the command line and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            Granularity::Frame => "frame",
            Granularity::Scanline => "scanline",
            Granularity::Instruction => "instruction",
        }
    }
}

impl fmt::Display for Granularity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A granularity name that is not `frame`, `scanline` or `instruction`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown granularity {0:?} (expected frame, scanline or instruction)")]
pub struct GranularityError(pub String);

impl FromStr for Granularity {
    type Err = GranularityError;
    fn from_str(s: &str) -> Result<Granularity, GranularityError> {
        match s {
            "frame" => Ok(Granularity::Frame),
            "scanline" => Ok(Granularity::Scanline),
            "instruction" => Ok(Granularity::Instruction),
            other => Err(GranularityError(other.to_string())),
        }
    }
}

/// Where the two machines run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threading {
    /// Both machines on the calling thread, interleaved sync point by sync point.
    #[default]
    SameThread,
    /// One worker thread per machine, each handing its sync records to the comparator (the calling
    /// thread) in batches of a quarter of `window` records (at most 256) over a bounded channel of
    /// about `window` records. A worker runs ahead of the comparator by at most the channel's records
    /// plus three batches: the one it fills, the one it hands over, and the one the comparator is
    /// reading ([`crate::Lockstep::drift_frames`] reports the lead in frames). A window of thousands
    /// of records suits instruction granularity, where a frame has thousands of sync points.
    Threaded {
        /// Channel capacity in sync records (at least 1).
        window: usize,
    },
}

/// Configuration of a [`crate::Lockstep`].
#[derive(Debug, Clone)]
pub struct LockstepConfig {
    /// When the machines are compared.
    pub granularity: Granularity,
    /// Same thread or two worker threads.
    pub threading: Threading,
    /// A verified checkpoint every this many frames (at least 1).
    pub checkpoint_every: u64,
    /// At most this many verified checkpoints kept (at least 1).
    pub checkpoints_kept: usize,
    /// Localize the first divergent instruction automatically when a divergence is detected.
    pub localize: bool,
    /// While localizing: compare the full state hash every this many instructions (CPU cycle and
    /// registers are compared after every one), then replay the last window exactly.
    pub hash_every_instructions: u32,
    /// Keep both machines' pictures at the end of the divergent frame in the evidence (finishing that
    /// frame costs up to one more frame of emulation per machine).
    pub pictures: bool,
    /// Faults to inject into machine B.
    pub faults: FaultPlan,
}

impl Default for LockstepConfig {
    /// Frame granularity, same thread, a checkpoint every 60 frames, 8 kept, localization and
    /// pictures on.
    fn default() -> Self {
        LockstepConfig {
            granularity: Granularity::Frame,
            threading: Threading::SameThread,
            checkpoint_every: 60,
            checkpoints_kept: 8,
            localize: true,
            hash_every_instructions: 1024,
            pictures: true,
            faults: FaultPlan::new(),
        }
    }
}
