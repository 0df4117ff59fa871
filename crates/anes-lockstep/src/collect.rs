//! Collecting the evidence of a divergence: the state at the sync point where the comparator saw it
//! (the differing sections, and the snapshots and pictures when there is no localization), the
//! checkpoint snapshots, the input slice, and the localization replay. The replay runs both machines
//! from the checkpoint through the sync records they produced, as the run did, to the last sync point
//! the comparator saw agree, and the search for the first divergent instruction starts there.
//!
//! Both threading modes produce the same evidence for the same divergence. On one thread the machines
//! are still at the sync point; worker threads may have run past it, so in threaded mode both machines
//! are first brought back there: restored from the last verified checkpoint, they replay the same
//! number of sync records they produced from it (B's faults re-applied where they fired).

use crate::checkpoint::CheckpointMeta;
use crate::evidence::Evidence;
use crate::input::{EvidenceInput, InputSource};
use crate::localize::{Found, LastAgreement, LocalizeError, Located, ReplayStart, localize_instruction};
use crate::localize_frame::{FrameLocalization, localize_frame};
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::Divergence;

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
                match self.localize(inputs, c, (&checkpoint_a, &checkpoint_b), divergence) {
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
        self.b.faults.begin_replay(checkpoint.frame);
        let reached = self.replay_through(inputs, checkpoint, divergence.sync_point);
        self.b.faults.end_replay();
        reached
    }

    /// Restores `checkpoint` into both machines and runs each through the sync records it produced
    /// from it, up to sync point `sync_point`, exactly as the run stepped them (B's faults re-applied
    /// where they fired: the caller brackets this with the schedule's `begin_replay` / `end_replay`).
    fn replay_through<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        checkpoint: CheckpointMeta,
        sync_point: u64,
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
        for _ in checkpoint.sync_point..sync_point {
            self.a.next_sync(inputs, granularity);
            self.b.next_sync(inputs, granularity);
        }
        Ok(())
    }

    /// `replay_through` to the sync point where `frame` starts (the end of the frame
    /// before it, or the checkpoint); returns its ordinal.
    fn replay_to_frame_start<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        checkpoint: CheckpointMeta,
        frame: u64,
    ) -> Result<u64, LocalizeError> {
        self.replay_through(inputs, checkpoint, checkpoint.sync_point)?;
        let mut sync_point = checkpoint.sync_point;
        let granularity = self.config.granularity;
        while self.a.frame < frame {
            self.a.next_sync(inputs, granularity);
            self.b.next_sync(inputs, granularity);
            sync_point += 1;
        }
        Ok(sync_point)
    }

    /// Where both machines are, sync point `sync_point` of the replay, as the start of the search for
    /// the first divergent instruction: `None` when their whole states differ there.
    fn agreement(&mut self, sync_point: u64) -> Option<LastAgreement> {
        // Lagging steps may have reached it: the search steps settled machines.
        self.a.settle();
        self.b.settle();
        let (a, b) = (&self.a, &self.b);
        let (probe, state_hash) = (a.machine.probe(), a.machine.state_hash());
        (b.machine.probe() == probe && b.machine.state_hash() == state_hash).then_some(LastAgreement {
            sync_point,
            frame: a.frame,
            in_frame: a.in_frame,
            probe,
            state_hash,
        })
    }

    /// Replays from `checkpoint` (whose snapshots are `snapshots`) and localizes `divergence`: to the
    /// instruction when both machines step instructions, else to the frame. Leaves the machines at
    /// the end of the divergent frame (for the pictures).
    fn localize<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        checkpoint: CheckpointMeta,
        (snapshot_a, snapshot_b): (&[u8], &[u8]),
        divergence: &Divergence,
    ) -> Result<Found, LocalizeError> {
        self.b.faults.begin_replay(checkpoint.frame);
        let mut fault_marks = Vec::new();
        self.b.faults.replay_marks(&mut fault_marks);
        let start = ReplayStart {
            frame: checkpoint.frame,
            state_hash: checkpoint.state_hash,
            snapshot_a,
            snapshot_b,
            fault_marks: &fault_marks,
        };
        let result = if self.a.machine.steps_instructions() && self.b.machine.steps_instructions() {
            self.localize_instruction(inputs, checkpoint, start, divergence)
        } else {
            // Machines that run whole frames are compared at frame ends only, as the replay compares
            // them: the first frame end that differs is the one the comparator saw.
            let (a, b) = (&mut self.a, &mut self.b);
            localize_frame(
                &mut a.machine,
                &mut b.machine,
                &mut b.faults,
                inputs,
                start,
                divergence,
                &self.config,
            )
        };
        self.b.faults.end_replay();
        result
    }

    /// Brings both machines from `checkpoint` to the last sync point the comparator saw agree, checks
    /// that they agree there, and finds the first divergent instruction after it. Searching from the
    /// checkpoint instead would find a difference that healed before that sync point (a masked fault),
    /// which is not the divergence that was detected, and which one depended on the checkpoint interval.
    fn localize_instruction<S: InputSource<A::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        checkpoint: CheckpointMeta,
        start: ReplayStart<'_>,
        divergence: &Divergence,
    ) -> Result<Found, LocalizeError> {
        // The comparator stops at the first difference: every sync point before it agreed.
        let last_agreed = divergence.sync_point.saturating_sub(1).max(checkpoint.sync_point);
        self.replay_through(inputs, checkpoint, last_agreed)?;
        let agreed = match self.agreement(last_agreed) {
            Some(agreed) => agreed,
            // Inside a frame the comparator compared digests, which a difference of several bytes may
            // slip past: the detected divergence then began before, after the frame's start, where
            // the comparator compared full state hashes.
            None if self.a.in_frame => {
                let frame = self.a.frame;
                self.b.faults.restore_replay_marks(start.fault_marks);
                let frame_start = self.replay_to_frame_start(inputs, checkpoint, frame)?;
                self.agreement(frame_start)
                    .ok_or(LocalizeError::LastAgreementNotReproduced { sync_point: frame_start, frame })?
            }
            None => {
                let frame = self.a.frame;
                return Err(LocalizeError::LastAgreementNotReproduced { sync_point: last_agreed, frame });
            }
        };
        let (a, b) = (&mut self.a, &mut self.b);
        localize_instruction(
            &mut a.machine,
            &mut b.machine,
            &mut b.faults,
            inputs,
            start,
            &agreed,
            divergence,
            &self.config,
        )
    }
}
