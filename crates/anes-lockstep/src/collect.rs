//! Collecting the evidence of a divergence: the checkpoint snapshots, the input slice, the
//! localization replay and its snapshots and pictures.

use anes_core::movie::InputStream;

use crate::config::Threading;
use crate::evidence::Evidence;
use crate::localize::{self, ReplayStart};
use crate::lockstep::Lockstep;
use crate::machine::Machine;
use crate::outcome::Divergence;

impl<A: Machine, B: Machine> Lockstep<A, B> {
    /// Gathers everything kept about `divergence`. Moves the machines (the localization replays from
    /// the last verified checkpoint); a rollback restores them.
    pub(crate) fn collect_evidence(&mut self, inputs: &InputStream, divergence: &Divergence) -> Evidence {
        // On one thread the machines are still at the sync point: their section digests name the
        // sections that differ there. Worker threads may have run on, so they are not asked.
        let differing_sections = (self.config.threading == Threading::SameThread).then(|| {
            let (a, b) = (&self.a.machine, &self.b.machine);
            (0..a.section_count())
                .filter(|&i| a.section_digest(i) != b.section_digest(i))
                .map(|i| a.section_name(i))
                .collect()
        });
        let checkpoint = self.ring.verified.newest();
        let (checkpoint_a, checkpoint_b) = checkpoint
            .map(|c| {
                let (a, b) = self.ring.snapshots(&c);
                (a.to_vec(), b.to_vec())
            })
            .unwrap_or_default();
        // From frame 0, so the stream is indexed by frame number like the snapshots' frame counters.
        let input_slice =
            (0..=divergence.frame).map(|n| inputs.frame(usize::try_from(n).unwrap_or(usize::MAX))).collect();
        let mut localization = None;
        let mut localization_error = None;
        let mut snapshots = (Vec::new(), Vec::new());
        let mut pictures = (Vec::new(), Vec::new());
        let mut picture_size = None;
        match checkpoint {
            Some(c) if self.config.localize => {
                let start = ReplayStart {
                    frame: c.frame,
                    state_hash: c.state_hash,
                    snapshot_a: &checkpoint_a,
                    snapshot_b: &checkpoint_b,
                };
                let result = localize::localize(
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
                        snapshots = (found.snapshot_a.clone(), found.snapshot_b.clone());
                        pictures = (found.picture_a.clone(), found.picture_b.clone());
                        picture_size = found.picture_size;
                        localization = Some(found.localization);
                    }
                    Err(e) => localization_error = Some(e.to_string()),
                }
            }
            Some(_) => {}
            None => localization_error = Some("no verified checkpoint to replay from".to_string()),
        }
        if localization.is_none() {
            // Without a replay, the machines' current state is the best picture of the divergence
            // (exact on the same thread; in threaded mode the workers may have run a little further).
            self.a.machine.save_state(&mut snapshots.0);
            self.b.machine.save_state(&mut snapshots.1);
            if self.config.pictures {
                picture_size = self.a.machine.picture_size();
                self.a.machine.picture_rgb(&mut pictures.0);
                self.b.machine.picture_rgb(&mut pictures.1);
            }
        }
        Evidence {
            divergence: divergence.clone(),
            differing_sections,
            localization,
            localization_error,
            checkpoint_frame: checkpoint.map(|c| c.frame),
            checkpoint_a,
            checkpoint_b,
            divergence_a: snapshots.0,
            divergence_b: snapshots.1,
            inputs: input_slice,
            picture_size,
            picture_a: pictures.0,
            picture_b: pictures.1,
            faults: self.b.faults.fired().cloned().collect(),
            granularity: self.config.granularity,
        }
    }
}
