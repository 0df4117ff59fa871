//! What a divergence between two machines is: the kind, the sync point and both records there. The
//! lockstep runner finds one; the operations pipeline reports one from its workers' records.

use anes_core::state::FrameRecord;
use serde::Serialize;

/// What kind of difference was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The machines are at the same CPU cycle but their states differ.
    State,
    /// The machines are at different CPU cycles: one runs behind the other.
    CycleMisalignment,
}

impl DivergenceKind {
    /// The kind of difference between two records that differ: a machine at another CPU cycle runs
    /// behind or ahead of its twin (every later field differs for that reason alone), otherwise the
    /// states themselves differ. The one rule the comparator, the localizer and the pipelines use.
    pub fn between(a: &FrameRecord, b: &FrameRecord) -> Self {
        if a.cpu_cycle != b.cpu_cycle { DivergenceKind::CycleMisalignment } else { DivergenceKind::State }
    }

    /// `state` or `cycle_misalignment`.
    pub const fn name(self) -> &'static str {
        match self {
            DivergenceKind::State => "state",
            DivergenceKind::CycleMisalignment => "cycle_misalignment",
        }
    }
}

/// A difference seen at a sync point: the run stops there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// State or cycle misalignment.
    pub kind: DivergenceKind,
    /// Input-stream index of the frame the sync point belongs to (frames count from 0; the record at
    /// the end of frame `n` has `frame == n + 1` frames completed).
    pub frame: u64,
    /// True when the sync point was the end of the frame.
    pub at_frame_end: bool,
    /// Ordinal of the sync point since the Lockstep was created (1-based).
    pub sync_point: u64,
    /// Machine A's record there.
    pub a: FrameRecord,
    /// Machine B's record there.
    pub b: FrameRecord,
}

impl core::fmt::Display for Divergence {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let place = if self.at_frame_end { "at the end of frame" } else { "during frame" };
        match self.kind {
            DivergenceKind::CycleMisalignment => {
                let (behind, ahead, cycles) = if self.b.cpu_cycle < self.a.cpu_cycle {
                    ("B", "A", self.a.cpu_cycle - self.b.cpu_cycle)
                } else {
                    ("A", "B", self.b.cpu_cycle - self.a.cpu_cycle)
                };
                let unit = if cycles == 1 { "cycle" } else { "cycles" };
                write!(f, "{behind} is {cycles} CPU {unit} behind {ahead} {place} {}", self.frame)
            }
            DivergenceKind::State => write!(
                f,
                "state hashes differ {place} {} (CPU cycle {}): A {} vs B {}",
                self.frame, self.a.cpu_cycle, self.a.state_hash, self.b.state_hash
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use anes_core::state::StateHash;

    use super::*;

    #[test]
    fn cycle_misalignment_message_names_the_lagging_machine() {
        let record = |cpu_cycle| FrameRecord {
            frame: 813,
            cpu_cycle,
            ppu_scanline: 241,
            ppu_dot: 0,
            state_hash: StateHash::default(),
        };
        let divergence = Divergence {
            kind: DivergenceKind::CycleMisalignment,
            frame: 812,
            at_frame_end: true,
            sync_point: 813,
            a: record(100),
            b: record(97),
        };
        assert_eq!(divergence.to_string(), "B is 3 CPU cycles behind A at the end of frame 812");
    }

    #[test]
    fn records_at_other_cycles_are_misaligned_whatever_else_differs() {
        let record = |cpu_cycle, hash: u8| FrameRecord {
            frame: 9,
            cpu_cycle,
            ppu_scanline: 241,
            ppu_dot: 0,
            state_hash: StateHash([hash; 32]),
        };
        assert_eq!(DivergenceKind::between(&record(100, 1), &record(100, 2)), DivergenceKind::State);
        assert_eq!(
            DivergenceKind::between(&record(100, 1), &record(97, 1)),
            DivergenceKind::CycleMisalignment
        );
        assert_eq!(
            DivergenceKind::between(&record(100, 1), &record(97, 2)),
            DivergenceKind::CycleMisalignment
        );
    }
}
