//! Collecting the evidence of a divergence: the state at the sync point where the comparator saw it
//! (the differing sections, and the snapshots and pictures when there is no localization), the
//! checkpoint snapshots, the input slice, and the localization replay.
//!
//! Both threading modes produce the same evidence for the same divergence. On one thread the machines
//! are still at the sync point; worker threads may have run past it, so in threaded mode both machines
//! are first brought back there: restored from the last verified checkpoint, they replay the same
//! number of sync records they produced from it (B's faults re-applied where they fired).

use crate::checkpoint::CheckpointMeta;
use crate::config::LockstepConfig;
use crate::evidence::Evidence;
use crate::input::{EvidenceInput, InputSource};
use crate::localize::{Found, LocalizeError, Located, ReplayStart, localize_instruction};
use crate::localize_frame::{FrameLocalization, localize_frame};
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::Divergence;
use crate::schedule::FaultSchedule;

/// Both machines' state at the sync point where the comparator saw the divergence.
#[derive(Debug, Default)]
struct AtSyncPoint {
    sections: Vec<&'static str>,
    snapshots: (Vec<u8>, Vec<u8>),
    picture_size: Option<(u32, u32)>,
    pictures: (Vec<u8>, Vec<u8>),
}

impl<A: Machine, B: Machine<Input = A::Input>> Lockstep<A, B> {
    /// Gathers everything kept about `divergence`. `at_sync_point` says the machines are still where
    /// the comparator saw it (one thread, or no run since they were paired). Moves the machines (to
    /// the sync point, then through the localization replay); a rollback restores them.
    pub(crate) fn collect_evidence<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        divergence: &mut Divergence,
        at_sync_point: bool,
    ) -> Evidence {
        let checkpoint = self.ring.verified.newest();
        let reached = match checkpoint {
            _ if at_sync_point => Ok(()),
            Some(c) => self.replay_to_sync_point(inputs, c, divergence),
            // Without a checkpoint nothing has run since the pairing: the machines are there.
            None => Ok(()),
        };
        if reached.is_ok() {
            // Lagging steps compared lagging records: the machines the evidence shows are settled.
            self.a.settle();
            self.b.settle();
            // Inside a frame the comparator saw digests: the records get their full state hashes
            // here, where both machines are back at the sync point (at a frame end they already
            // have them, and these are the same records).
            divergence.a = self.a.machine.record();
            divergence.b = self.b.machine.record();
        }
        let sync_state = reached.is_ok().then(|| self.at_sync_point());
        let (checkpoint_a, checkpoint_b) = checkpoint
            .map(|c| {
                let (a, b) = self.ring.snapshots(&c);
                (a.to_vec(), b.to_vec())
            })
            .unwrap_or_default();
        // From frame 0, so the stream is indexed by frame number like the snapshots' frame counters.
        let input_slice: Vec<A::Input> = (0..=divergence.frame).map(|n| inputs.input(n)).collect();
        let mut inputs_file = Vec::new();
        A::Input::encode_inputs(&input_slice, &mut inputs_file);
        let mut localization = None;
        let mut frame_localization = None;
        let mut localization_error = None;
        let AtSyncPoint { sections, mut snapshots, mut picture_size, mut pictures } =
            sync_state.unwrap_or_default();
        match checkpoint {
            Some(c) if self.config.localize => {
                let start = ReplayStart {
                    frame: c.frame,
                    state_hash: c.state_hash,
                    snapshot_a: &checkpoint_a,
                    snapshot_b: &checkpoint_b,
                };
                let result = localize(
                    &mut self.a.machine,
                    &mut self.b.machine,
                    &mut self.b.faults,
                    inputs,
                    start,
                    divergence,
                    &self.config,
                );
                match result {
                    Ok(found) => {
                        snapshots = (found.snapshot_a, found.snapshot_b);
                        pictures = (found.picture_a, found.picture_b);
                        picture_size = found.picture_size;
                        match found.localization {
                            Located::Instruction(l) => localization = Some(l),
                            Located::Frame(l) => frame_localization = Some(l),
                        }
                    }
                    Err(e) => localization_error = Some(e.to_string()),
                }
            }
            Some(_) => {}
            None => {
                localization_error = Some("no verified checkpoint to replay from".to_string());
                // Without a checkpoint the machines differed when paired: nothing ran, so what differs
                // now is the whole finding (e.g. a randomised power-on state).
                if self.config.localize && reached.is_ok() {
                    let (a, b) = (&self.a.machine, &self.b.machine);
                    frame_localization = Some(FrameLocalization::from_pairing(a, b, divergence));
                }
            }
        }
        if let (Err(e), None) = (&reached, &localization_error) {
            localization_error = Some(format!("the sync point could not be reached again: {e}"));
        }
        Evidence {
            divergence: divergence.clone(),
            differing_sections: reached.is_ok().then_some(sections),
            localization,
            frame_localization,
            localization_error,
            checkpoint_frame: checkpoint.map(|c| c.frame),
            checkpoint_a,
            checkpoint_b,
            divergence_a: snapshots.0,
            divergence_b: snapshots.1,
            inputs_file,
            picture_size,
            picture_a: pictures.0,
            picture_b: pictures.1,
            faults: self.b.faults.fired().cloned().collect(),
            granularity: self.config.granularity,
        }
    }

    /// The sections that differ, both snapshots and both pictures, as the machines are now.
    fn at_sync_point(&self) -> AtSyncPoint {
        let (a, b) = (&self.a.machine, &self.b.machine);
        let mut state = AtSyncPoint {
            sections: (0..a.section_count())
                .filter(|&i| a.section_digest(i) != b.section_digest(i))
                .map(|i| a.section_name(i))
                .collect(),
            ..AtSyncPoint::default()
        };
        a.save_state(&mut state.snapshots.0);
        b.save_state(&mut state.snapshots.1);
        if self.config.pictures {
            state.picture_size = a.picture_size();
            a.picture_rgb(&mut state.pictures.0);
            b.picture_rgb(&mut state.pictures.1);
        }
        state
    }

    /// Restores `checkpoint` and runs both machines through the sync records they produced from it,
    /// up to the one the comparator found different.
    fn replay_to_sync_point<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        checkpoint: CheckpointMeta,
        divergence: &Divergence,
    ) -> Result<(), LocalizeError> {
        let (snapshot_a, snapshot_b) = self.ring.snapshots(&checkpoint);
        self.a.machine.load_state(snapshot_a)?;
        self.b.machine.load_state(snapshot_b)?;
        if self.a.machine.state_hash() != checkpoint.state_hash
            || self.b.machine.state_hash() != checkpoint.state_hash
        {
            return Err(LocalizeError::CheckpointMismatch { frame: checkpoint.frame });
        }
        for side_frame in [&mut self.a.frame, &mut self.b.frame] {
            *side_frame = checkpoint.frame;
        }
        self.a.in_frame = false;
        self.b.in_frame = false;
        let granularity = self.config.granularity;
        self.b.faults.begin_replay(checkpoint.frame);
        for _ in checkpoint.sync_point..divergence.sync_point {
            self.a.next_sync(inputs, granularity);
            self.b.next_sync(inputs, granularity);
        }
        self.b.faults.end_replay();
        Ok(())
    }
}

/// Replays from `start` and localizes the divergence: to the instruction when both machines step
/// instructions, else to the frame. Leaves the machines at the end of the divergent frame (for the
/// pictures).
fn localize<A, B, S>(
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
    faults.begin_replay(start.frame);
    let result = if a.steps_instructions() && b.steps_instructions() {
        localize_instruction(a, b, faults, inputs, start, divergence, config)
    } else {
        localize_frame(a, b, faults, inputs, start, divergence, config)
    };
    faults.end_replay();
    result
}
