//! The drain ([`Event::Drain`]): intake stops, both workers settle on the last record, and their
//! snapshots at that frame become the final verified checkpoint ([`Action::Drained`]).

use super::*;

impl Pipeline {
    pub(super) fn check_drain(&mut self) {
        if !self.draining || self.drained || !matches!(self.phase, Phase::Normal) {
            return;
        }
        let end = self.log.end();
        let settled = self.workers.iter().all(|s| s.phase == WorkerPhase::Running && s.processed == end);
        if self.verified_until != end || !settled {
            return;
        }
        if !self.drain_requested {
            self.drain_requested = true;
            for w in WorkerId::BOTH {
                self.workers[w.index()].drain_snapshot = None;
                self.actions.push_back(Action::SendToWorker { worker: w, command: WorkerCommand::Snapshot });
            }
            return;
        }
        let (Some((ha, bytes)), Some((hb, _))) =
            (self.workers[0].drain_snapshot.clone(), self.workers[1].drain_snapshot.clone())
        else {
            return;
        };
        self.drained = true;
        if ha == hb {
            let checkpoint = Checkpoint {
                seq: end,
                cpu_cycle: self.last_verified_cycle,
                state_hash: ha,
                snapshot: bytes,
                taken_at: self.now,
            };
            if let Some(fence) = self.fence {
                // Verified by both workers, but no store takes it from a fenced service: the owner
                // since the newer epoch continues from its own checkpoints and the shared journal.
                self.notice(Notice::FinalCheckpointNotStored { seq: end, state_hash: ha, fence });
            } else {
                self.notice(Notice::FinalCheckpoint { seq: end, state_hash: ha });
                self.push_checkpoint(checkpoint.clone(), Durable::Always);
            }
            self.actions.push_back(Action::Drained(Some(checkpoint)));
        } else {
            self.notice(Notice::FinalSnapshotsDiffer { seq: end });
            self.actions.push_back(Action::Drained(None));
        }
    }

    /// Gives up draining: reports the newest checkpoint verified so far.
    pub fn abandon_drain(&mut self) -> Option<Checkpoint> {
        self.drained = true;
        self.checkpoints.back().cloned()
    }
}
