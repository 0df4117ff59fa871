//! What time passing does ([`Event::Tick`]): a rollback step's deadline, the retry after a backoff, the
//! verdict's timeout under the immediate policy, the checkpoint's age and the stall rule.

use super::*;

impl Pipeline {
    pub(super) fn tick(&mut self) {
        if let Some(age) = self.checkpoint_age() {
            self.counters.checkpoint_age = age.as_secs_f64();
        }
        self.check_stall();
        match self.phase.clone() {
            Phase::RollingBack(r) if r.step == Step::ReplayDlq && self.now < r.deadline => {
                self.replay_progress()
            }
            Phase::RollingBack(r) if self.now >= r.deadline => {
                self.attempt_failed(&format!(
                    "step {} made no progress for {:?}",
                    r.step.name(),
                    self.settings.step_timeout
                ));
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
        let waiting =
            self.log.unverified() > 0 || !self.dlq.is_empty() || (self.input_expected && !self.draining);
        let excused = self.fence.is_some() || matches!(self.phase, Phase::Halted { .. });
        if !waiting || excused {
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
}
