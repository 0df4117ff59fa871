//! What became of each injected fault: detected, masked, refused or never reached. A fault plan
//! that did not do what it asked for (refused, never reached) must not pass for a clean run.

use core::fmt;

use serde::Serialize;

/// The fate of one injected fault, as far as the runs so far have settled it.
///
/// A fault that fired is judged at the first sync point after it: the machines differ there
/// (detected) or their full state hashes are equal (masked, and confirmed so by the hashes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "fate", rename_all = "snake_case")]
pub enum FaultFate {
    /// Applied to machine B, and the machines differed at the next sync point: the fault is (one of)
    /// the causes of the divergence found there.
    Detected {
        /// Input-stream index of the frame it was applied in.
        frame: u64,
        /// B's CPU cycle where it was applied.
        cpu_cycle: u64,
        /// Ordinal of the sync point where the difference was seen.
        sync_point: u64,
    },
    /// Applied to machine B, but both machines' state hashes were equal at the next sync point: the
    /// program overwrote it before it could be seen there.
    Masked {
        /// Input-stream index of the frame it was applied in.
        frame: u64,
        /// B's CPU cycle where it was applied.
        cpu_cycle: u64,
        /// Ordinal of the sync point where the machines agreed.
        sync_point: u64,
    },
    /// Machine B refused it when it came due; nothing was changed.
    Refused {
        /// Input-stream index of the frame it came due in.
        frame: u64,
        /// B's CPU cycle there.
        cpu_cycle: u64,
        /// Why (e.g. the flipped state would be impossible).
        reason: String,
    },
    /// The runs so far ended before machine B reached its cycle (or its frame).
    NotReached,
}

impl FaultFate {
    /// `detected`, `masked`, `refused` or `not_reached`, as in JSON.
    pub const fn name(&self) -> &'static str {
        match self {
            FaultFate::Detected { .. } => "detected",
            FaultFate::Masked { .. } => "masked",
            FaultFate::Refused { .. } => "refused",
            FaultFate::NotReached => "not_reached",
        }
    }

    /// True when the fault did what it was injected for, or was shown harmless: detected or masked.
    /// A refused or never reached fault tested nothing.
    pub const fn was_applied(&self) -> bool {
        matches!(self, FaultFate::Detected { .. } | FaultFate::Masked { .. })
    }
}

impl fmt::Display for FaultFate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultFate::Detected { frame, cpu_cycle, sync_point } => write!(
                f,
                "detected: applied in frame {frame} at CPU cycle {cpu_cycle}; the machines differed at the next sync point ({sync_point})"
            ),
            FaultFate::Masked { frame, cpu_cycle, sync_point } => write!(
                f,
                "masked: applied in frame {frame} at CPU cycle {cpu_cycle}, but both state hashes were equal at the next sync point ({sync_point})"
            ),
            FaultFate::Refused { frame, cpu_cycle, reason } => {
                write!(f, "refused in frame {frame} at CPU cycle {cpu_cycle}: {reason}")
            }
            FaultFate::NotReached => f.write_str("not reached: the run ended before it came due"),
        }
    }
}

/// One fault of the plan and its fate (in JSON, `{"spec": ..., "fate": ..., ...}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultOutcome {
    /// The fault, as a spec string.
    pub spec: String,
    /// What became of it.
    #[serde(flatten)]
    pub fate: FaultFate,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_one_flat_object_per_fault() {
        let outcome = FaultOutcome {
            spec: "stall:3@50".into(),
            fate: FaultFate::Masked { frame: 0, cpu_cycle: 52, sync_point: 2 },
        };
        assert_eq!(
            serde_json::to_value(&outcome).unwrap(),
            serde_json::json!({"spec": "stall:3@50", "fate": "masked", "frame": 0, "cpu_cycle": 52, "sync_point": 2})
        );
        let outcome = FaultOutcome { spec: "input:0:1@9".into(), fate: FaultFate::NotReached };
        assert_eq!(
            serde_json::to_value(&outcome).unwrap(),
            serde_json::json!({"spec": "input:0:1@9", "fate": "not_reached"})
        );
    }
}
