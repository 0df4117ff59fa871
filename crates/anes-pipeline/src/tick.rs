//! What time passing does ([`Event::Tick`]): a rollback step's deadline, the retry after a backoff, the
//! verdict's timeout under the immediate policy, the checkpoint's age and the stall rule.

use super::*;

impl Pipeline {
    /// When [`Event::Tick`] next has something to do: the earliest of the rollback step's deadline,
    /// the end of a retry's or probe's wait, the end of a failed journal commit's backoff (intake
    /// takes records again), the verdict's timeout, a silent worker's isolation and the stall rule's.
    /// `None`: nothing happens with time alone, only with events. A shell sleeps until then (or an
    /// event), instead of ticking on a fixed period.
    pub fn poll_timeout(&self) -> Option<Duration> {
        let phase = match &self.phase {
            // The queue's replay moves on with each commit's answer, not with time.
            Phase::RollingBack(r) => Some(r.deadline),
            Phase::RetryWait { until, .. } => Some(*until),
            Phase::Halted { since, .. } if self.settings.policy == RollbackPolicy::Immediate => {
                Some(since.saturating_add(self.settings.verdict_timeout))
            }
            Phase::Halted { .. } | Phase::Normal | Phase::GaveUp { .. } => None,
        };
        let stall = (!self.stalled && self.stall_watched())
            .then(|| self.last_progress.saturating_add(self.settings.stall_after));
        let silence = if matches!(self.phase, Phase::Normal) {
            self.workers
                .iter()
                .filter(|s| s.phase == WorkerPhase::Running && s.next_to_send > s.processed)
                .map(|s| s.heard_at.saturating_add(self.settings.step_timeout))
                .min()
        } else {
            None
        };
        [phase, stall, silence, self.journal_retry_at].into_iter().flatten().min()
    }

    pub(super) fn tick(&mut self) {
        if self.journal_retry_at.is_some_and(|at| self.now >= at) {
            // Intake may try the journal again; no deadline left to wake for.
            self.journal_retry_at = None;
        }
        if let Some(age) = self.checkpoint_age() {
            self.counters.checkpoint_age = age.as_secs_f64();
        }
        self.check_stall();
        self.check_silent_workers();
        match self.phase.clone() {
            Phase::RollingBack(r) if r.step == Step::ReplayDlq && self.now < r.deadline => {
                self.replay_progress()
            }
            Phase::RollingBack(r) if self.now >= r.deadline => {
                // A worker still starting when the restore step times out was not reached.
                let unreachable =
                    r.step == Step::Restore && self.workers.iter().any(|s| s.phase == WorkerPhase::Starting);
                self.attempt_failed(
                    &format!("step {} made no progress for {:?}", r.step.name(), self.settings.step_timeout),
                    unreachable,
                );
            }
            Phase::RetryWait { until, incident, attempt } if self.now >= until => {
                self.start_attempt(Trigger::Retry, incident, attempt + 1, Vec::new());
            }
            Phase::Halted { incident, since }
                if self.settings.policy == RollbackPolicy::Immediate
                    && self.now.saturating_sub(since) >= self.settings.verdict_timeout =>
            {
                self.start_rollback(Trigger::Detection, Some(incident), Vec::new());
            }
            _ => {}
        }
        if self.draining {
            self.check_drain();
        }
    }

    /// The silence rule, in normal mode (a rollback's steps have their own deadline): a running
    /// worker that owes records and sent nothing for the step timeout is isolated as if it had
    /// exited. A partition or a hung host looks like this; TCP may not say so for many minutes.
    fn check_silent_workers(&mut self) {
        if !matches!(self.phase, Phase::Normal) {
            return;
        }
        for w in WorkerId::BOTH {
            let slot = &self.workers[w.index()];
            let silent = self.now.saturating_sub(slot.heard_at);
            if slot.phase != WorkerPhase::Running
                || slot.next_to_send <= slot.processed
                || silent < self.settings.step_timeout
            {
                continue;
            }
            let owed = slot.next_to_send - slot.processed;
            self.notice(Notice::WorkerSilent { worker: w, owed, silent });
            let message =
                format!("worker {w} owes {owed} records and sent nothing for {:.1} s", silent.as_secs_f64());
            let id = self.open_incident("worker_silent", message, None);
            if let Some(i) = self.incident_mut(id) {
                i.suspects = Some(vec![w]);
            }
            self.counters.worker_up[w.index()] = 0;
            self.start_rollback(Trigger::Detection, Some(id), vec![w]);
            return;
        }
    }

    /// Seconds of activity since the newest verified checkpoint: from it to the last record taken or
    /// frame verified. An idle pipeline's checkpoint covers everything it did, so its age stops
    /// growing instead of alarming an operator about a pipeline with nothing to do.
    pub(super) fn checkpoint_age(&self) -> Option<Duration> {
        self.checkpoints.back().map(|c| self.last_activity.saturating_sub(c.taken_at))
    }

    pub(super) fn progressed(&mut self) {
        self.last_progress = self.now;
        if self.stalled {
            self.stalled = false;
            self.counters.stalled = 0;
            self.notice(Notice::NoLongerStalled);
        }
    }

    /// The stall rule: work waits (records unverified or dead-lettered, or a source that should be
    /// producing) and no frame was verified for `stall_after`. A halted pipeline waits on purpose
    /// (its divergence flag is up and alerting), a fenced one stopped on purpose, a draining one
    /// takes nothing more: their clocks restart instead.
    pub(super) fn check_stall(&mut self) {
        if !self.stall_watched() {
            self.progressed();
            return;
        }
        let idle = self.now.saturating_sub(self.last_progress);
        if !self.stalled && idle >= self.settings.stall_after {
            self.stalled = true;
            self.counters.stalled = 1;
            self.notice(Notice::Stalled {
                mode: self.mode(),
                unverified: self.log.unverified(),
                in_dlq: self.dlq.len(),
                input_expected: self.input_expected,
                idle,
            });
        }
    }

    /// While nothing is watched, the stall clock follows the time: called as each event or record
    /// arrives, before it changes anything, so the clock starts when work starts waiting, not at the
    /// last tick (a shell that sleeps until [`Pipeline::poll_timeout`] may not tick for a long while).
    pub(super) fn follow_stall_clock(&mut self) {
        if !self.stalled && !self.stall_watched() {
            self.last_progress = self.now;
        }
    }

    /// True when the stall rule applies: work waits and nothing excuses the wait.
    fn stall_watched(&self) -> bool {
        let waiting =
            self.log.unverified() > 0 || !self.dlq.is_empty() || (self.input_expected && !self.draining);
        let excused = self.fence.is_some() || matches!(self.phase, Phase::Halted { .. });
        waiting && !excused
    }
}
