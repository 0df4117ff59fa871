//! The pipeline's side of its workers: their messages, feeding both within the drift window, comparing
//! their records frame by frame, and verified checkpoints.

use std::sync::Arc;

use anes_core::state::FrameRecord;

use super::*;

impl Pipeline {
    pub(super) fn worker_message(&mut self, message: WorkerMessage) {
        let w = message.worker.index();
        // The fencing token: anything from an incarnation that was replaced is dropped unread.
        if message.incarnation != self.workers[w].incarnation {
            self.notice(Notice::StaleMessage { worker: message.worker, incarnation: message.incarnation });
            return;
        }
        self.workers[w].heard_at = self.now;
        match message.body {
            WorkerOutput::Replies(replies) => {
                for reply in replies {
                    // A worker cut off by one of these replies is done: the rest of its batch is
                    // dropped, and the slot may already hold its next incarnation.
                    let slot = &self.workers[w];
                    if slot.incarnation != message.incarnation || slot.phase == WorkerPhase::Exited {
                        break;
                    }
                    self.reply(message.worker, reply);
                }
                self.compare();
            }
            WorkerOutput::Exited { reason } => self.worker_exited(message.worker, reason),
        }
    }

    pub(super) fn reply(&mut self, worker: WorkerId, reply: Reply) {
        let now = self.now;
        let slot = &mut self.workers[worker.index()];
        match reply {
            Reply::Hello { build, .. } => {
                slot.build = Some(build.clone());
                let incarnation = slot.incarnation;
                self.notice(Notice::WorkerStarted { worker, incarnation, build });
            }
            Reply::Loaded { record, region, .. } => {
                if slot.phase != WorkerPhase::Starting {
                    return;
                }
                if let Some(expected) = self.settings.region
                    && region != Some(expected)
                {
                    let found = region.map_or("not named (a build older than regions)", |r| r.name());
                    let reason =
                        format!("refused: its console region is {found}, this pipeline's is {expected}");
                    return self.worker_exited(worker, reason);
                }
                self.counters.worker_up[worker.index()] = 1;
                let record: FrameRecord = record.into();
                slot.loaded = Some(record);
                match &self.phase {
                    Phase::RollingBack(r) if r.step == Step::Restore => {
                        match self.checkpoints.back().cloned() {
                            Some(cp) => self.send_restore(worker, &cp),
                            // Restoring to power-on: a fresh start is the restore.
                            None => {
                                let slot = &mut self.workers[worker.index()];
                                slot.phase = WorkerPhase::Running;
                                slot.restored = Some(record);
                                slot.reset_to(0);
                                self.check_restored();
                            }
                        }
                    }
                    Phase::RollingBack(_) | Phase::RetryWait { .. } | Phase::GaveUp { .. } => {
                        // Started during an attempt that has since failed: it waits for the next one.
                        self.workers[worker.index()].phase = WorkerPhase::Stopped;
                    }
                    Phase::Normal | Phase::Halted { .. } => {
                        slot.phase = WorkerPhase::Running;
                        slot.reset_to(0);
                        self.check_power_on();
                    }
                }
            }
            Reply::Record { seq, record } => {
                if slot.phase != WorkerPhase::Running {
                    return;
                }
                // Queued, it would grow the queue without bound and hide the worker's silence.
                if seq >= slot.next_to_send {
                    let problem =
                        format!("it sent a record for frame {seq}, but {}", sent_so_far(slot.next_to_send));
                    return self.broke_protocol(worker, problem);
                }
                if seq != slot.processed {
                    let expected = slot.processed;
                    self.notice(Notice::RecordOutOfOrder { worker, seq, expected });
                    return;
                }
                slot.processed += 1;
                slot.queue.push_back((seq, record.into(), now));
            }
            Reply::Snapshot { seq, state_hash, bytes } => {
                if slot.phase != WorkerPhase::Running {
                    return;
                }
                let bytes = Arc::new(bytes);
                if self.draining && self.drain_requested && seq == self.log.end() {
                    slot.drain_snapshot = Some((state_hash, Arc::clone(&bytes)));
                    self.check_drain();
                }
                self.offer_snapshot(seq, state_hash, bytes);
            }
            Reply::Restored { seq, record } => {
                if slot.phase != WorkerPhase::Restoring {
                    return;
                }
                slot.phase = WorkerPhase::Running;
                slot.restored = Some(record.into());
                slot.reset_to(seq);
                self.check_restored();
            }
            Reply::FaultFired { seq, spec, refused } => {
                // A fault fires once per injection sent, in a frame that was sent.
                let unsent = slot.phase == WorkerPhase::Running && seq >= slot.next_to_send;
                if slot.injects_outstanding == 0 || unsent {
                    let problem = if unsent {
                        format!("a fault fired in frame {seq}, but {}", sent_so_far(slot.next_to_send))
                    } else {
                        format!("a fault fired in frame {seq}, but no fault injection was outstanding")
                    };
                    return self.broke_protocol(worker, problem);
                }
                slot.injects_outstanding -= 1;
                if refused.is_none() {
                    slot.faults.push((seq, spec.clone()));
                }
                self.notice(Notice::FaultFired { worker, seq, spec, refused });
            }
            Reply::Error { message } => {
                let restoring = slot.phase == WorkerPhase::Restoring;
                self.notice(Notice::WorkerRefused { worker, reason: message.clone() });
                if restoring {
                    let reason = format!("worker {worker} could not restore the checkpoint: {message}");
                    self.verification_failed(&reason);
                }
            }
            // Pipelines never send inspection commands: an answer to one is a worker out of protocol.
            Reply::Probe { .. }
            | Reply::Stepped { .. }
            | Reply::Disassembly { .. }
            | Reply::Picture { .. } => {
                self.notice(Notice::UnaskedInspectionReply { worker });
            }
        }
    }

    pub(super) fn check_power_on(&mut self) {
        let [a, b] = &self.workers;
        let (Some(ra), Some(rb)) = (a.loaded, b.loaded) else { return };
        if a.phase != WorkerPhase::Running || b.phase != WorkerPhase::Running {
            return;
        }
        if ra == rb {
            // The power-on state is the first checkpoint, once a snapshot of it arrives.
            self.boundaries.push_back((0, ra.state_hash.0, ra.cpu_cycle));
            self.match_snapshots();
        } else {
            self.notice(Notice::PowerOnMismatch);
            self.divergence(0, ra, rb);
        }
        self.feed_due = true;
    }

    pub(super) fn worker_exited(&mut self, worker: WorkerId, reason: String) {
        let slot = &mut self.workers[worker.index()];
        let expected = matches!(slot.phase, WorkerPhase::Stopping | WorkerPhase::Stopped);
        slot.last_exit = Some(reason.clone());
        self.counters.worker_up[worker.index()] = 0;
        if expected {
            return;
        }
        // Gone before it loaded: it could not be reached (or started); see `attempt_failed`.
        let unreachable = slot.phase == WorkerPhase::Starting;
        slot.phase = WorkerPhase::Exited;
        slot.queue.clear();
        self.notice(Notice::WorkerExited { worker, reason: reason.clone() });
        let id = self.open_incident("worker_exited", format!("worker {worker} exited: {reason}"), None);
        if let Some(i) = self.incident_mut(id) {
            i.suspects = Some(vec![worker]);
        }
        match self.phase.clone() {
            // Whatever the policy: a dead worker corrupts nothing, but waiting for the drift alert
            // could mean waiting forever when fewer than 51 records arrive after it died.
            Phase::Normal => self.start_rollback(Trigger::Detection, Some(id), vec![worker]),
            Phase::RollingBack(_) => self.attempt_failed(
                &format!("worker {worker} exited during the rollback: {reason}"),
                unreachable,
            ),
            Phase::Halted { .. } | Phase::RetryWait { .. } | Phase::GaveUp { .. } => {}
        }
    }

    /// A worker that answers what it was never asked is cut off as if it had exited: its replies
    /// cannot be trusted, and left running it would have the drift alert blame its twin.
    fn broke_protocol(&mut self, worker: WorkerId, problem: String) {
        let slot = &self.workers[worker.index()];
        // Already being isolated: what it still says changes nothing.
        if matches!(slot.phase, WorkerPhase::Stopping | WorkerPhase::Stopped | WorkerPhase::Exited) {
            return;
        }
        self.worker_exited(worker, format!("broke the protocol: {problem}"));
    }

    pub(super) fn worker_stopped(&mut self, worker: WorkerId, incarnation: u64) {
        let slot = &mut self.workers[worker.index()];
        if slot.incarnation != incarnation {
            return;
        }
        slot.phase = WorkerPhase::Stopped;
        slot.queue.clear();
        self.counters.worker_up[worker.index()] = 0;
        if let Phase::RollingBack(r) = &self.phase
            && r.step == Step::Isolate
            && r.suspects.iter().all(|s| self.workers[s.index()].phase == WorkerPhase::Stopped)
        {
            self.restore_step();
        }
    }

    pub(super) fn drill(&mut self, worker: WorkerId, drill: Drill) {
        self.notice(Notice::Drill { worker, drill: drill.clone() });
        match drill {
            Drill::Fault(spec) => {
                // An injection the worker refuses stays counted: it allows one more `FaultFired`.
                let slot = &mut self.workers[worker.index()];
                slot.injects_outstanding = slot.injects_outstanding.saturating_add(1);
                self.actions
                    .push_back(Action::SendToWorker { worker, command: WorkerCommand::Inject { spec } })
            }
            Drill::Stall(d) => self.actions.push_back(Action::SendToWorker {
                worker,
                command: WorkerCommand::Stall { millis: d.as_millis().min(u128::from(u32::MAX)) as u32 },
            }),
            Drill::Crash => self.actions.push_back(Action::Crash { worker }),
        }
    }

    pub(super) fn feeding(&self) -> bool {
        match &self.phase {
            Phase::Normal => true,
            Phase::RollingBack(r) => r.step == Step::ReplayDlq,
            _ => false,
        }
    }

    pub(super) fn feed(&mut self) {
        if !self.feeding() {
            return;
        }
        let end = self.log.end();
        for w in WorkerId::BOTH {
            let other_processed = self.workers[w.other().index()].processed;
            let slot = &self.workers[w.index()];
            // Topped up at every report, as far as the window allows: a worker that waits to be fed
            // is a core idle. (Topping up only below half a window saved little, and starved workers
            // whenever the pipeline was busy elsewhere: checkpoints every 60 frames cost 9.6% instead
            // of 1.4% in the store bench.) A worker holds its replies while commands are queued, so small commands do not
            // each wake the pipeline.
            if slot.phase != WorkerPhase::Running {
                continue;
            }
            // Only committed records run: a record reaches a worker after it is journaled.
            let limit =
                end.min(other_processed.saturating_add(self.lead_allowed())).min(self.log.committed_end());
            let mut next = slot.next_to_send;
            // The wait on a worker that owed nothing starts now.
            if next == slot.processed && next < limit {
                self.workers[w.index()].heard_at = self.now;
            }
            while next < limit {
                let to = limit.min(next + MAX_FEED);
                let mut inputs = Vec::with_capacity((to - next) as usize);
                for seq in next..to {
                    if let Some(r) = self.log.get(seq) {
                        inputs.push(WireInput::from(r.input));
                    }
                }
                self.actions.push_back(Action::SendToWorker {
                    worker: w,
                    command: WorkerCommand::Frames { first_seq: next, inputs },
                });
                next = to;
            }
            self.workers[w.index()].next_to_send = next;
        }
    }

    /// How far a worker may run ahead of its twin. A replay (the dead-letter queue after a rollback,
    /// the journal after a restart: the records up to `replay_until`) feeds a backlog as fast as the
    /// workers go, so one of them is
    /// always ahead by whatever the window allows; with the full window (120 records by default) the
    /// drift gauge would sit at 90-120 for the whole replay and hold the drift alert up by itself. A
    /// replay lets a worker run at most the alert's threshold ahead instead, so the gauge exceeds it
    /// only when a worker falls behind what the feeding explains. A worker stuck during a replay
    /// fails the step by its deadline, and shows as a stall.
    pub(super) fn lead_allowed(&self) -> u64 {
        let replaying = self.verified_until < self.replay_until
            || matches!(&self.phase, Phase::RollingBack(r) if r.step == Step::ReplayDlq);
        if replaying {
            self.settings.drift_window.min(ALERT_DRIFT_THRESHOLD)
        } else {
            self.settings.drift_window
        }
    }

    pub(super) fn compare(&mut self) {
        while self.feeding() {
            let (Some(&(sa, ra, ta)), Some(&(sb, rb, tb))) =
                (self.workers[0].queue.front(), self.workers[1].queue.front())
            else {
                break;
            };
            self.workers[0].queue.pop_front();
            self.workers[1].queue.pop_front();
            self.counters.record_compare_latency(self.now.saturating_sub(ta.min(tb)).as_secs_f64());
            if sa != sb || ra != rb {
                self.divergence(sa.min(sb), ra, rb);
                break;
            }
            self.verified(sa, ra);
        }
        self.update_drift();
        self.feed_due = true;
    }

    pub(super) fn update_drift(&mut self) {
        let drift = self.workers[0].processed.abs_diff(self.workers[1].processed);
        self.counters.drift = drift.min(i64::MAX as u64) as i64;
    }

    pub(super) fn verified(&mut self, seq: u64, record: FrameRecord) {
        self.verified_until = seq + 1;
        self.last_activity = self.now;
        self.progressed();
        self.last_verified_cycle = record.cpu_cycle;
        if self.log.mark_verified(seq) {
            self.counters.frames_verified += 1;
        }
        if self.verified_until % self.settings.checkpoint_every == 0 {
            if self.boundaries.len() == 8 {
                self.boundaries.pop_front();
            }
            self.boundaries.push_back((self.verified_until, record.state_hash.0, record.cpu_cycle));
            self.match_snapshots();
        }
        if let Phase::RollingBack(r) = &mut self.phase {
            r.deadline = self.now + self.settings.step_timeout;
            if r.step == Step::ReplayDlq {
                self.replay_progress();
            }
        }
        if self.draining {
            self.check_drain();
        }
    }

    pub(super) fn offer_snapshot(&mut self, seq: u64, hash: [u8; 32], bytes: Arc<Vec<u8>>) {
        if self.checkpoints.back().is_some_and(|c| c.seq >= seq) || self.snapshots.iter().any(|s| s.0 == seq)
        {
            return;
        }
        let limit = (self.settings.drift_window / self.settings.checkpoint_every + 4) as usize;
        while self.snapshots.len() >= limit {
            self.snapshots.pop_front();
        }
        self.snapshots.push_back((seq, hash, bytes));
        self.match_snapshots();
    }

    pub(super) fn match_snapshots(&mut self) {
        while let Some(&(seq, hash, cpu_cycle)) = self.boundaries.front() {
            if let Some(i) = self.snapshots.iter().position(|s| s.0 == seq && s.1 == hash) {
                let (seq, state_hash, snapshot) = self.snapshots.remove(i).expect("found");
                self.snapshots.retain(|s| s.0 > seq);
                let checkpoint = Checkpoint { seq, cpu_cycle, state_hash, snapshot, taken_at: self.now };
                self.push_checkpoint(checkpoint, Durable::Periodic);
                self.boundaries.pop_front();
            } else if self.snapshots.iter().any(|s| s.0 > seq) || self.snapshots.iter().any(|s| s.0 == seq) {
                // Its snapshot was lost or does not match: it cannot become a checkpoint.
                self.boundaries.pop_front();
            } else {
                break;
            }
        }
    }

    pub(super) fn push_checkpoint(&mut self, checkpoint: Checkpoint, durable: Durable) {
        self.notice(Notice::CheckpointVerified { seq: checkpoint.seq });
        if self.checkpoints.len() >= self.settings.checkpoints_kept {
            self.checkpoints.pop_front();
        }
        let due = durable == Durable::Always
            || self.last_persisted.is_none_or(|last| checkpoint.seq >= last + self.settings.persist_every);
        if due && !checkpoint.snapshot.is_empty() && self.fence.is_none() {
            // Written off the hot path by the runtime's checkpoint writer.
            self.last_persisted = Some(checkpoint.seq);
            self.actions.push_back(Action::PersistCheckpoint(checkpoint.clone()));
        }
        self.checkpoints.push_back(checkpoint);
        self.counters.checkpoint_age = 0.0;
        let oldest = self.checkpoints.front().map_or(0, |c| c.seq);
        self.log.trim_before(oldest);
        for slot in &mut self.workers {
            slot.faults.retain(|(seq, _)| *seq >= oldest);
        }
    }
}

/// What a worker was sent, for a protocol violation's reason.
fn sent_so_far(next_to_send: u64) -> String {
    match next_to_send {
        0 => "no frame was sent to it".to_string(),
        n => format!("it was sent frames up to {} only", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use anes_core::movie::FrameInput;

    use super::*;
    use crate::protocol::WireRecord;
    use crate::worker::WorkerId::{A, B};

    fn record(frame: u64) -> WireRecord {
        WireRecord { frame, cpu_cycle: frame * 29_781, scanline: 0, dot: 0, state_hash: [frame as u8; 32] }
    }

    fn send(p: &mut Pipeline, worker: WorkerId, replies: Vec<Reply>) {
        let incarnation = p.workers[worker.index()].incarnation;
        let message = WorkerMessage { worker, incarnation, body: WorkerOutput::Replies(replies) };
        p.handle(Duration::from_secs(1), Event::Worker(message));
        while p.poll_action(Duration::from_secs(1)).is_some() {}
    }

    /// Both workers loaded and `frames` records sent to each.
    fn running(frames: u64) -> Pipeline {
        let mut p = Pipeline::new(PipelineSettings::new("p"));
        while p.poll_action(Duration::ZERO).is_some() {}
        for w in WorkerId::BOTH {
            let hello = Reply::Hello { protocol_version: 2, build: BuildInfo::current() };
            let loaded = Reply::Loaded { rom_identity: [0; 32], record: record(0), region: None };
            send(&mut p, w, vec![hello, loaded]);
        }
        for _ in 0..frames {
            p.offer_input(Duration::from_secs(1), FrameInput::buttons(1, 0)).unwrap();
        }
        p.commit_input();
        while p.poll_action(Duration::from_secs(1)).is_some() {}
        p.handle(Duration::from_secs(1), Event::Committed { journal_error: None });
        while p.poll_action(Duration::from_secs(1)).is_some() {}
        for w in WorkerId::BOTH {
            assert_eq!(p.workers[w.index()].phase, WorkerPhase::Running);
            assert_eq!(p.workers[w.index()].next_to_send, frames);
        }
        p
    }

    fn cut_off(p: &Pipeline, worker: WorkerId) -> Option<String> {
        let slot = &p.workers[worker.index()];
        (slot.phase != WorkerPhase::Running).then(|| slot.last_exit.clone().unwrap_or_default())
    }

    #[test]
    fn records_for_frames_never_sent_cut_the_worker_off() {
        let mut p = running(3);
        let records = (0..1000).map(|seq| Reply::Record { seq, record: record(seq + 1) }).collect();
        send(&mut p, A, records);
        let reason = cut_off(&p, A).expect("worker a sent records for frames it was never sent");
        assert!(reason.contains("frame 3") && reason.contains("up to 2"), "{reason}");
        assert!(p.workers[A.index()].queue.len() <= 3);
        // The honest worker is not blamed: the incident suspects worker a alone.
        assert_eq!(p.workers[B.index()].last_exit, None);
        assert!(p.status().incidents.iter().any(|i| i.suspects.as_deref() == Some(&[A][..])));
    }

    #[test]
    fn records_for_frames_sent_are_compared() {
        let mut p = running(3);
        for w in WorkerId::BOTH {
            send(&mut p, w, (0..3).map(|seq| Reply::Record { seq, record: record(seq + 1) }).collect());
        }
        assert_eq!((cut_off(&p, A), cut_off(&p, B)), (None, None));
        assert_eq!(p.verified_until, 3);
    }

    #[test]
    fn a_fault_fired_without_an_injection_cuts_the_worker_off() {
        let mut p = running(3);
        let fired = (0..1000).map(|_| Reply::FaultFired { seq: 0, spec: "stall:1".into(), refused: None });
        send(&mut p, B, fired.collect());
        let reason = cut_off(&p, B).expect("no fault was injected into worker b");
        assert!(reason.contains("frame 0") && reason.contains("no fault injection"), "{reason}");
        assert!(p.workers[B.index()].faults.is_empty());
    }

    #[test]
    fn each_injection_answers_one_fault_in_a_frame_sent() {
        let mut p = running(3);
        p.handle(Duration::from_secs(1), Event::Drill { worker: A, drill: Drill::Fault("stall:1".into()) });
        while p.poll_action(Duration::from_secs(1)).is_some() {}
        let fired = |seq| Reply::FaultFired { seq, spec: "stall:1@5".into(), refused: None };
        send(&mut p, A, vec![fired(1)]);
        assert_eq!(cut_off(&p, A), None);
        assert_eq!(p.workers[A.index()].faults, vec![(1, "stall:1@5".to_string())]);
        send(&mut p, A, vec![fired(2)]);
        let reason = cut_off(&p, A).expect("one injection, two faults fired");
        assert!(reason.contains("no fault injection"), "{reason}");
        assert_eq!(p.workers[A.index()].faults.len(), 1);
    }

    #[test]
    fn a_fault_fired_in_a_frame_never_sent_cuts_the_worker_off() {
        let mut p = running(3);
        p.handle(Duration::from_secs(1), Event::Drill { worker: A, drill: Drill::Fault("stall:1".into()) });
        while p.poll_action(Duration::from_secs(1)).is_some() {}
        send(&mut p, A, vec![Reply::FaultFired { seq: u64::MAX, spec: "stall:1".into(), refused: None }]);
        let reason = cut_off(&p, A).expect("the fault fired in a frame never sent");
        assert!(reason.contains(&format!("frame {}", u64::MAX)) && reason.contains("up to 2"), "{reason}");
        assert!(p.workers[A.index()].faults.is_empty());
    }
}
