//! Localization for machines that only run whole frames ([`crate::Machine::steps_instructions`] is
//! false): replay both machines from the last verified checkpoint frame by frame, comparing records,
//! and name the first frame whose end state differs and every field that differs there. There is no
//! instruction, cycle or program counter to report, so none is made up.

use serde::Serialize;

use crate::config::LockstepConfig;
use crate::diff::{FieldDiff, diff_fields};
use crate::input::InputSource;
use crate::localize::{Found, LocalizeError, Located, MAX_FIELDS, ReplayStart};
use crate::machine::Machine;
use crate::outcome::{Divergence, DivergenceKind};
use crate::record_json::RecordJson;
use crate::schedule::FaultSchedule;

/// The first frame whose end state differs, for machines that do not step instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FrameLocalization {
    /// State or cycle misalignment (the cycle counters differ at the end of the frame).
    pub kind: DivergenceKind,
    /// Input-stream index of the first frame after which the machines differ; when
    /// [`FrameLocalization::at_pairing`], the frame they were paired at (no frame had run).
    pub frame: u64,
    /// The machines already differed when they were paired, before running any frame (nothing to
    /// replay: the difference is in how they were built, e.g. randomised power-on state).
    pub at_pairing: bool,
    /// Input-stream index of the checkpoint the replay started from (none at the pairing).
    pub checkpoint_frame: Option<u64>,
    /// Frames replayed from the checkpoint, the divergent one included.
    pub frames_replayed: u64,
    /// Machine A's record at the end of the frame (at the pairing: where it started).
    pub a: RecordJson,
    /// Machine B's record there.
    pub b: RecordJson,
    /// Every differing field there, grouped by section in the machine's order (no write provenance:
    /// without instruction steps there is no instruction to name).
    pub fields: Vec<FieldDiff>,
    /// Differing fields beyond the listed ones.
    pub fields_omitted: usize,
}

impl FrameLocalization {
    /// The differences of two machines as they are now, where the comparator saw them differ when
    /// they were paired.
    pub(crate) fn from_pairing<A: Machine + ?Sized, B: Machine + ?Sized>(
        a: &A,
        b: &B,
        divergence: &Divergence,
    ) -> FrameLocalization {
        let (fields, fields_omitted) = diff_fields(a, b, MAX_FIELDS);
        FrameLocalization {
            kind: divergence.kind,
            frame: divergence.frame,
            at_pairing: true,
            checkpoint_frame: None,
            frames_replayed: 0,
            a: (&divergence.a).into(),
            b: (&divergence.b).into(),
            fields,
            fields_omitted,
        }
    }
}

/// Replays from `start` frame by frame until the records differ. Leaves the machines at the end of
/// the divergent frame.
pub(crate) fn localize_frame<A, B, S>(
    a: &mut A,
    b: &mut B,
    faults: &mut FaultSchedule,
    inputs: &S,
    start: ReplayStart<'_>,
    divergence: &Divergence,
    config: &LockstepConfig,
) -> Result<Found, LocalizeError>
where
    A: Machine + ?Sized,
    B: Machine<Input = A::Input> + ?Sized,
    S: InputSource<A::Input> + ?Sized,
{
    a.load_state(start.snapshot_a)?;
    b.load_state(start.snapshot_b)?;
    if a.state_hash() != start.state_hash || b.state_hash() != start.state_hash {
        return Err(LocalizeError::CheckpointMismatch { frame: start.frame });
    }
    let mut frame = start.frame;
    let (record_a, record_b) = loop {
        if frame > divergence.frame {
            return Err(LocalizeError::NotReproduced { from: start.frame, to: divergence.frame });
        }
        let input = inputs.input(frame);
        let record_a = a.run_frame(input);
        let input_b = faults.input_for(frame, input, &*b, 0);
        let mut record_b = b.run_frame(input_b);
        if faults.has_pending() && faults.due_before(record_b.cpu_cycle) {
            faults.fire_due(frame, &mut *b, 0);
            record_b = b.record();
        }
        if record_a != record_b {
            break (record_a, record_b);
        }
        frame += 1;
    };
    let (fields, fields_omitted) = diff_fields(&*a, &*b, MAX_FIELDS);
    let (mut snapshot_a, mut snapshot_b) = (Vec::new(), Vec::new());
    a.save_state(&mut snapshot_a);
    b.save_state(&mut snapshot_b);
    let picture_size = if config.pictures { a.picture_size() } else { None };
    let (mut picture_a, mut picture_b) = (Vec::new(), Vec::new());
    if picture_size.is_some() {
        a.picture_rgb(&mut picture_a);
        b.picture_rgb(&mut picture_b);
    }
    let kind = DivergenceKind::between(&record_a, &record_b);
    Ok(Found {
        localization: Located::Frame(FrameLocalization {
            kind,
            frame,
            at_pairing: false,
            checkpoint_frame: Some(start.frame),
            frames_replayed: frame - start.frame + 1,
            a: (&record_a).into(),
            b: (&record_b).into(),
            fields,
            fields_omitted,
        }),
        snapshot_a,
        snapshot_b,
        picture_size,
        picture_a,
        picture_b,
    })
}
