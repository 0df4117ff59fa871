//! Divergences, alerts and the six-step rollback procedure (what time passing does to it is in
//! `tick.rs`).

use std::sync::Arc;
use std::time::Duration;

use anes_core::state::FrameRecord;

use super::*;

/// How often a worker that could not be reached is tried again: between half of it and all of it.
pub const PROBE_INTERVAL: Duration = Duration::from_millis(500);

impl Pipeline {
    pub(super) fn divergence(&mut self, seq: u64, a: FrameRecord, b: FrameRecord) {
        let kind = DivergenceKind::between(&a, &b);
        match kind {
            DivergenceKind::State => self.counters.divergences_state += 1,
            DivergenceKind::CycleMisalignment => self.counters.divergences_cycle += 1,
        };
        self.diverged = true;
        self.counters.divergence_flag = 1;
        for slot in &mut self.workers {
            slot.queue.clear();
        }
        let message =
            anes_machine::Divergence { kind, frame: seq, at_frame_end: true, sync_point: seq + 1, a, b }
                .to_string()
                .replace(" A ", " worker A ")
                .replace(" B ", " worker B ");
        self.notice(Notice::Divergence { seq, kind, detail: message.clone() });
        let id = self.open_incident(kind.name(), message, Some(seq));
        let checkpoint = self.checkpoints.back().cloned();
        let from = checkpoint.as_ref().map_or(0, |c| c.seq);
        let mut inputs = Vec::new();
        self.log.inputs(from, seq + 1, &mut inputs);
        let faults = [0, 1].map(|w| {
            self.workers[w].faults.iter().filter(|(s, _)| *s >= from).map(|(_, spec)| spec.clone()).collect()
        });
        self.actions.push_back(Action::Investigate(Box::new(Investigation {
            incident: id,
            seq,
            records: [a, b],
            checkpoint,
            inputs,
            faults,
        })));
        match self.phase.clone() {
            Phase::Normal => {
                self.phase = Phase::Halted { incident: id, since: self.now };
                // An alert still firing from the last incident (the flag dropped for less than a
                // scrape, so it never resolved) will not be sent again: it covers this one.
                let (firing, resolved) = self.last_alert;
                if self.settings.policy == RollbackPolicy::Alert
                    && firing.is_some_and(|f| resolved.is_none_or(|r| f > r))
                {
                    self.alert_firing();
                }
            }
            Phase::RollingBack(_) => self.attempt_failed("the workers diverged again during recovery", false),
            _ => {}
        }
        self.publish_mode();
    }

    pub(super) fn verdict(&mut self, incident: u64, suspects: Vec<WorkerId>) {
        self.notice(Notice::Verdict { incident, suspects: suspects.clone() });
        if let Some(i) = self.incident_mut(incident) {
            i.suspects = Some(suspects.clone());
        }
        if let Phase::Halted { incident: halted, .. } = self.phase
            && halted == incident
            && self.settings.policy == RollbackPolicy::Immediate
        {
            self.start_rollback(Trigger::Detection, Some(incident), suspects);
        }
    }

    pub(super) fn alert_firing(&mut self) {
        match self.phase.clone() {
            Phase::RollingBack(r) => {
                self.notice(Notice::AlertDuringRollback { step: r.step });
            }
            Phase::Halted { incident, .. } => {
                let suspects = self.incident_suspects(incident);
                self.start_rollback(Trigger::Alert, Some(incident), suspects);
            }
            Phase::RetryWait { incident, attempt, .. } => {
                let suspects = incident.map(|i| self.incident_suspects(i)).unwrap_or_default();
                self.start_attempt(Trigger::Alert, incident, attempt + 1, suspects);
            }
            Phase::GaveUp { incident } => {
                let suspects = incident.map(|i| self.incident_suspects(i)).unwrap_or_default();
                self.start_rollback(Trigger::Alert, incident, suspects);
            }
            Phase::Normal => {
                // The pipeline has not seen a divergence: the alert saw drift, or a dead worker.
                let [a, b] = &self.workers;
                let drift = a.processed.abs_diff(b.processed);
                let dead: Vec<WorkerId> =
                    self.workers.iter().filter(|s| s.phase == WorkerPhase::Exited).map(|s| s.id).collect();
                let (kind, message, suspects) = if !dead.is_empty() {
                    let names: Vec<String> = dead.iter().map(ToString::to_string).collect();
                    (
                        "worker_exited",
                        format!("alert fired; worker {} is not running", names.join(", ")),
                        dead,
                    )
                } else if drift > ALERT_DRIFT_THRESHOLD {
                    let (laggard, leader) = if a.processed < b.processed { (a, b) } else { (b, a) };
                    let message = format!(
                        "alert fired: worker {} is {drift} records behind worker {} ({} / {} processed)",
                        laggard.id, leader.id, laggard.processed, leader.processed
                    );
                    ("drift", message, vec![laggard.id])
                } else if self.stalled {
                    let message = format!(
                        "alert fired: no frame verified for {:.0} s with work waiting",
                        self.now.saturating_sub(self.last_progress).as_secs_f64()
                    );
                    ("stall", message, Vec::new())
                } else {
                    (
                        "alert",
                        format!("alert fired with drift {drift} and no divergence seen here"),
                        Vec::new(),
                    )
                };
                self.notice(Notice::AlertWhileRunning { suspects: suspects.clone(), kind });
                let id = self.open_incident(kind, message, None);
                if !suspects.is_empty()
                    && let Some(i) = self.incident_mut(id)
                {
                    i.suspects = Some(suspects.clone());
                }
                self.start_rollback(Trigger::Alert, Some(id), suspects);
            }
        }
    }

    pub(super) fn incident_suspects(&self, incident: u64) -> Vec<WorkerId> {
        self.incidents.iter().find(|i| i.id == incident).and_then(|i| i.suspects.clone()).unwrap_or_default()
    }

    pub(super) fn start_rollback(
        &mut self,
        trigger: Trigger,
        incident: Option<u64>,
        suspects: Vec<WorkerId>,
    ) {
        if let Phase::RollingBack(r) = &self.phase {
            self.notice(Notice::RollbackInProgress { step: r.step });
            return;
        }
        self.start_attempt(trigger, incident, 1, suspects);
    }

    pub(super) fn start_attempt(
        &mut self,
        trigger: Trigger,
        incident: Option<u64>,
        attempt: u32,
        suspects: Vec<WorkerId>,
    ) {
        // Who to isolate: the referee's suspects, the dead, or (not knowing) both.
        let mut suspects = suspects;
        for slot in &self.workers {
            if matches!(slot.phase, WorkerPhase::Exited | WorkerPhase::Stopped)
                && !suspects.contains(&slot.id)
            {
                suspects.push(slot.id);
            }
        }
        if suspects.is_empty() || self.checkpoints.is_empty() {
            // Not knowing who, or going back to power-on: both start again.
            suspects = WorkerId::BOTH.to_vec();
        }
        suspects.sort();
        if attempt == 1 {
            self.attempts_unreachable = 0;
        }
        self.notice(Notice::RollbackStarted { trigger, attempt, suspects: suspects.clone() });
        let rollback = Rollback {
            incident,
            attempt,
            step: Step::CutIntake,
            deadline: self.now + self.settings.step_timeout,
            started_at: self.now,
            suspects: suspects.clone(),
            startup: false,
        };
        self.phase = Phase::RollingBack(rollback);
        self.step_done(Step::CutIntake, "new records go to the dead-letter queue; the pipeline is read-only");
        self.publish_mode();
        self.set_step(Step::Isolate);
        for w in suspects {
            let slot = &mut self.workers[w.index()];
            match slot.phase {
                WorkerPhase::Stopped => {}
                WorkerPhase::Exited => slot.phase = WorkerPhase::Stopped,
                _ => {
                    slot.phase = WorkerPhase::Stopping;
                    self.actions.push_back(Action::Stop { worker: w, incarnation: slot.incarnation });
                }
            }
        }
        self.step_done(Step::Isolate, "suspect workers are being stopped");
        let all_stopped = match &self.phase {
            Phase::RollingBack(r) => {
                r.suspects.iter().all(|s| self.workers[s.index()].phase == WorkerPhase::Stopped)
            }
            _ => false,
        };
        if all_stopped {
            self.restore_step();
        }
    }

    pub(super) fn set_step(&mut self, step: Step) {
        if let Phase::RollingBack(r) = &mut self.phase {
            r.step = step;
            r.deadline = self.now + self.settings.step_timeout;
        }
        self.publish_mode();
    }

    pub(super) fn step_done(&mut self, step: Step, what: &str) {
        self.counters.steps[step as usize] += 1;
        self.notice(Notice::StepDone { step, what: what.to_string() });
    }

    pub(super) fn restore_step(&mut self) {
        let Some(checkpoint) = self.checkpoints.back().cloned() else {
            return self.restore_power_on();
        };
        self.set_step(Step::Restore);
        for w in WorkerId::BOTH {
            let slot = &mut self.workers[w.index()];
            slot.restored = None;
            if slot.phase == WorkerPhase::Stopped {
                slot.incarnation += 1;
                slot.restarts += 1;
                slot.phase = WorkerPhase::Starting;
                slot.reset_to(checkpoint.seq);
                self.counters.restarts[w.index()] += 1;
                self.actions.push_back(Action::Start { worker: w, incarnation: slot.incarnation });
            } else {
                self.send_restore(w, &checkpoint);
            }
        }
        self.step_done(
            Step::Restore,
            &format!(
                "both workers load the checkpoint before frame {} (state hash {})",
                checkpoint.seq,
                anes_core::hex::to_hex(&checkpoint.state_hash)
            ),
        );
    }

    /// Before the first checkpoint is verified (a worker died or diverged while starting), the last
    /// state both workers shared is power-on: both start afresh, and the log runs from its first record.
    fn restore_power_on(&mut self) {
        if self.log.verified_high() > 0 {
            return self.attempt_failed("no verified checkpoint to restore", false);
        }
        self.set_step(Step::Restore);
        for w in WorkerId::BOTH {
            let slot = &mut self.workers[w.index()];
            slot.restored = None;
            if slot.phase != WorkerPhase::Stopped {
                // Only reached with both isolated (no checkpoint makes both suspects).
                return self.attempt_failed("a worker to restart from power-on was not stopped", false);
            }
            slot.incarnation += 1;
            slot.restarts += 1;
            slot.phase = WorkerPhase::Starting;
            slot.reset_to(0);
            self.counters.restarts[w.index()] += 1;
            self.actions.push_back(Action::Start { worker: w, incarnation: slot.incarnation });
        }
        self.step_done(Step::Restore, "no checkpoint verified yet: both workers start again from power-on");
    }

    pub(super) fn send_restore(&mut self, worker: WorkerId, checkpoint: &Checkpoint) {
        let slot = &mut self.workers[worker.index()];
        slot.phase = WorkerPhase::Restoring;
        slot.restored = None;
        slot.reset_to(checkpoint.seq);
        self.actions.push_back(Action::SendToWorker {
            worker,
            command: WorkerCommand::Restore { seq: checkpoint.seq, snapshot: checkpoint.snapshot.to_vec() },
        });
    }

    pub(super) fn check_restored(&mut self) {
        let Phase::RollingBack(r) = &self.phase else { return };
        if r.step != Step::Restore {
            return;
        }
        let (Some(ra), Some(rb)) = (self.workers[0].restored, self.workers[1].restored) else { return };
        let checkpoint = match self.checkpoints.back().cloned() {
            Some(c) => c,
            None if ra == rb => {
                // Power-on: it becomes the first checkpoint once a snapshot of it arrives.
                self.boundaries.push_back((0, ra.state_hash.0, ra.cpu_cycle));
                Checkpoint {
                    seq: 0,
                    cpu_cycle: ra.cpu_cycle,
                    state_hash: ra.state_hash.0,
                    snapshot: Arc::default(),
                    taken_at: self.now,
                }
            }
            None => return self.attempt_failed("the workers disagree at power-on", false),
        };
        self.set_step(Step::Verify);
        if ra.state_hash.0 == checkpoint.state_hash && rb.state_hash.0 == checkpoint.state_hash && ra == rb {
            self.step_done(Step::Verify, "recovery mode: both state hashes equal the checkpoint's");
            if matches!(&self.phase, Phase::RollingBack(r) if !r.startup) {
                // The rollback restored: the store's epoch moves on, once (the service's takeover at
                // start already did for a start's). Attempts that reached no worker move nothing.
                self.actions.push_back(Action::BumpStoreEpoch);
            }
            self.diverged = false;
            self.counters.divergence_flag = 0;
            self.verified_until = checkpoint.seq;
            self.snapshots.retain(|s| s.0 == 0 && checkpoint.seq == 0);
            self.boundaries.retain(|b| b.0 == 0 && checkpoint.seq == 0);
            self.match_snapshots();
            for slot in &mut self.workers {
                slot.reset_to(checkpoint.seq);
            }
            self.update_drift();
            self.set_step(Step::ReplayDlq);
            let waiting = self.dlq.len();
            self.step_done(
                Step::ReplayDlq,
                &format!("{waiting} records from the dead-letter queue run in order"),
            );
            self.replay_progress();
            self.feed_due = true;
        } else {
            self.verification_failed(&format!(
                "restored hashes {} / {} differ from the checkpoint's {}",
                ra.state_hash,
                rb.state_hash,
                anes_core::hex::to_hex(&checkpoint.state_hash)
            ));
        }
    }

    pub(super) fn verification_failed(&mut self, reason: &str) {
        let discarded = self.checkpoints.pop_back();
        self.notice(Notice::CheckpointDiscarded {
            seq: discarded.as_ref().map(|c| c.seq),
            reason: reason.to_string(),
        });
        if self.checkpoints.is_empty() {
            return self.attempt_failed(&format!("no verified checkpoint is left ({reason})"), false);
        }
        // Workers that failed to restore get a fresh start; the others just load the older one.
        self.restore_step();
    }

    /// Replays the dead-letter queue into the log and resumes normal mode once the queue is empty.
    /// The workers are verified against the checkpoint by then, so the queue's records (journaled
    /// when they were taken, so they enter the log committed) join the log behind what it holds, in
    /// order, and intake goes to the log again at once: how long the replay takes to verify no longer
    /// keeps the pipeline out of normal mode. Records still waiting for their commit follow when it
    /// is answered. Until the replayed records are verified, a worker may run only the alert's
    /// threshold ahead of its twin ([`Pipeline::lead_allowed`]).
    pub(super) fn replay_progress(&mut self) {
        let mut batch = Vec::new();
        self.dlq.front(usize::MAX, &mut batch);
        if !batch.is_empty() {
            let n = batch.len() as u64;
            // Only a log with nothing pending takes the queue's records (they follow it): records
            // offered in normal mode are committed before any record is dead-lettered.
            debug_assert_eq!(self.log.committed_end(), self.log.end());
            for &(seq, input) in &batch {
                debug_assert_eq!(seq, self.log.end(), "the queue continues the log");
                self.log.push(LogRecord { input, via_dlq: true });
            }
            self.log.commit();
            self.dlq.discard_front(batch.len());
            self.replayed_from_dlq += n;
            self.counters.dlq_replayed += n;
            self.counters.dlq_records = self.dlq.len() as i64;
            self.notice(Notice::ReplayingDlq { records: n });
            self.feed_due = true;
        }
        self.replay_until = self.replay_until.max(self.log.end());
        if self.dlq.is_empty() {
            self.resume();
        }
    }

    pub(super) fn resume(&mut self) {
        let Phase::RollingBack(r) = self.phase.clone() else { return };
        self.phase = Phase::Normal;
        if r.startup {
            self.notice(Notice::RecoveredFromPreviousRun);
        } else {
            self.rollbacks.0 += 1;
            self.counters.rollbacks_success += 1;
        }
        let took = self.now.saturating_sub(r.started_at).as_secs_f64();
        self.step_done(Step::Resume, &format!("normal mode after {took:.2} s (attempt {})", r.attempt));
        if let Some(id) = r.incident {
            let now = self.now;
            if let Some(i) = self.incident_mut(id) {
                i.rollback = Some("success".into());
                i.healed_after_seconds = Some(now.as_secs_f64() - i.detected_at_seconds);
            }
        }
        self.publish_mode();
        self.feed_due = true;
        if self.draining {
            self.check_drain();
        }
    }

    /// `unreachable`: the attempt failed because a worker could not be reached or started. Such
    /// attempts do not count toward `max_attempts` nor grow the backoff: the pipeline probes again
    /// every [`PROBE_INTERVAL`] (jittered) until the worker is back (read-only, `anes_worker_up` 0,
    /// `AnesWorkerDown` firing), where a divergence that every attempt reproduces gives up after
    /// `max_attempts`.
    pub(super) fn attempt_failed(&mut self, reason: &str, unreachable: bool) {
        let Phase::RollingBack(r) = self.phase.clone() else { return };
        self.retry_unreachable = unreachable;
        if unreachable {
            // A probe, not a failed rollback: a worker that could not be reached is tried again
            // within a second, whatever the attempt, so it is back within about a second of listening
            // again however long it was gone. The backoff and the failures count only attempts that
            // reached both workers.
            self.attempts_unreachable += 1;
            self.counters.reconnect_probes += 1;
            let delay = self.backoff.probe(PROBE_INTERVAL);
            if self.attempts_unreachable.is_power_of_two() {
                self.notice(Notice::WorkerUnreachable {
                    probes: self.attempts_unreachable,
                    reason: reason.to_string(),
                    retry_in: delay,
                });
            }
            self.phase =
                Phase::RetryWait { until: self.now + delay, incident: r.incident, attempt: r.attempt };
            self.publish_mode();
            return;
        }
        self.rollbacks.1 += 1;
        self.counters.rollbacks_failed += 1;
        if let Some(id) = r.incident
            && let Some(i) = self.incident_mut(id)
        {
            i.rollback = Some("failed".into());
        }
        if r.attempt.saturating_sub(self.attempts_unreachable) >= self.settings.max_attempts {
            self.counters.rollback_give_ups += 1;
            self.notice(Notice::RollbackGaveUp { attempt: r.attempt, reason: reason.to_string() });
            self.phase = Phase::GaveUp { incident: r.incident };
        } else {
            // Attempts count from 1 and the backoff's retries from 0: the first retry's ceiling is
            // the base (0.5 s by default), as docs/OPERATIONS.md says.
            let counted = r.attempt.saturating_sub(self.attempts_unreachable);
            let delay = self.backoff.delay(counted.saturating_sub(1));
            self.counters.rollback_retries += 1;
            self.notice(Notice::RollbackRetrying {
                attempt: r.attempt,
                reason: reason.to_string(),
                retry_in: delay,
            });
            self.phase =
                Phase::RetryWait { until: self.now + delay, incident: r.incident, attempt: r.attempt };
        }
        self.publish_mode();
    }

    pub(super) fn publish_mode(&mut self) {
        self.counters.mode = self.mode();
    }

    pub(super) fn open_incident(&mut self, kind: &str, message: String, seq: Option<u64>) -> u64 {
        let id = self.next_incident;
        self.next_incident += 1;
        if self.incidents.len() == INCIDENTS_KEPT {
            self.incidents.pop_back();
        }
        self.incidents.push_front(Incident {
            id,
            kind: kind.to_string(),
            message,
            seq,
            detected_at_seconds: self.now.as_secs_f64(),
            suspects: None,
            evidence: None,
            rollback: None,
            healed_after_seconds: None,
        });
        id
    }

    pub(super) fn incident_mut(&mut self, id: u64) -> Option<&mut Incident> {
        self.incidents.iter_mut().find(|i| i.id == id)
    }
}
