//! Intake: records offered or pushed, refused or taken, and made durable before anything else
//! happens to them. Every record taken is journaled, whether it goes to the log (normal mode) or
//! waits in the dead-letter queue (read-only): the pipeline asks the service to write it with
//! [`Action::AppendJournal`] and [`Action::Commit`] and waits for [`Event::Committed`]; only then may
//! a record reach a worker, only then is a producer answered ([`Action::Acknowledge`]). So the journal
//! holds every acknowledged record in sequence order, and the queue needs no durable copy of its own.
//! One commit is in flight at a time. A commit that fails refuses what it covered, and intake then
//! refuses everything for a backoff ([`PipelineSettings::journal_retry`], full jitter, doubling per
//! failure in a row) before the journal is tried again. Also the replay source's flow control
//! ([`Pipeline::offer_from`]).

use std::time::Duration;

use anes_core::movie::FrameInput;

use super::*;

/// Records a replay at `max` pace offers at once.
pub const MAX_OFFER: u64 = 4096;
/// A replay at `max` pace keeps at most this many drift windows of records unverified.
pub const MAX_AHEAD_WINDOWS: u64 = 4;

impl Pipeline {
    /// Counts `n` records from sequence number `first` as refused for `reason`, each at most once.
    pub(crate) fn count_refused(&mut self, reason: Refusal, first: u64, n: u64) {
        let end = first.saturating_add(n);
        let fresh = end.saturating_sub(first.max(self.refused_from));
        if fresh == 0 {
            return;
        }
        self.refused_from = end;
        let counter = match reason {
            Refusal::Stopping => &mut self.counters.refused_stopping,
            Refusal::BacklogFull { .. } => &mut self.counters.refused_backlog,
            Refusal::DlqFull { .. } => &mut self.counters.refused_dlq,
            Refusal::Storage => &mut self.counters.refused_storage,
            Refusal::Fenced { .. } => &mut self.counters.refused_fenced,
            Refusal::StoreLost { .. } => &mut self.counters.refused_store_lost,
        };
        *counter += fresh;
    }

    /// Takes one input record (from a replay, or one of a pushed batch), pending until the next
    /// commit. `anes_records_received_total` counts it once the commit made it durable; a refusal
    /// counts in `anes_records_refused_total` unless this record was refused before.
    pub fn offer_input(&mut self, now: Duration, input: FrameInput) -> Result<(), Refusal> {
        self.now = self.now.max(now);
        self.follow_stall_clock();
        let seq = self.received;
        let refusal = self.admit(input);
        if let Err(refusal) = refusal {
            self.count_refused(refusal, seq, 1);
        }
        refusal
    }

    fn admit(&mut self, input: FrameInput) -> Result<(), Refusal> {
        if self.draining {
            return Err(Refusal::Stopping);
        }
        match self.fence {
            Some(Fence::TakenOver { current, .. }) => return Err(Refusal::Fenced { current }),
            Some(Fence::StoreLost { current, ours }) => return Err(Refusal::StoreLost { current, ours }),
            Some(Fence::StoreDamaged { ours }) => return Err(Refusal::StoreLost { current: 0, ours }),
            None => {}
        }
        if self.journal_backing_off() {
            return Err(Refusal::Storage);
        }
        let seq = self.received;
        if self.mode() == Mode::Normal {
            if self.log.unverified() >= self.settings.backlog_capacity {
                return Err(Refusal::BacklogFull { capacity: self.settings.backlog_capacity });
            }
            self.log.push(LogRecord { input, via_dlq: false });
        } else {
            if self.dlq.push(seq, input).is_err() {
                return Err(Refusal::DlqFull { capacity: self.settings.dlq_capacity });
            }
            self.dead_lettered += 1;
            self.counters.dlq_enqueued += 1;
            self.counters.dlq_records = self.dlq.len() as i64;
        }
        self.received += 1;
        self.last_activity = self.now;
        Ok(())
    }

    /// Takes a pushed batch whose first record has sequence number `first_seq` (the number of records
    /// the pipeline received before it). Records it already has are skipped, so a producer may resend.
    /// The answer comes as [`Action::Acknowledge`] once what it counts is durable.
    pub fn push_batch(
        &mut self,
        now: Duration,
        first_seq: u64,
        inputs: &[FrameInput],
    ) -> Result<(), SequenceGap> {
        // A fenced pipeline says so whatever the batch: the producer must go to the new owner, and
        // the sequence numbers this one expects no longer matter.
        if first_seq > self.received && self.fence.is_none() {
            return Err(SequenceGap { first_seq, expected: self.received });
        }
        let duplicates = self.received.saturating_sub(first_seq).min(inputs.len() as u64);
        let mut outcome = PushOutcome { accepted: 0, duplicates, next_seq: self.received, refused: None };
        let fresh = &inputs[duplicates as usize..];
        for &input in fresh {
            if let Err(refusal) = self.offer_input(now, input) {
                // The rest of the batch is turned away with it.
                let rest = (fresh.len() as u64).saturating_sub(outcome.accepted + 1);
                self.count_refused(refusal, self.received + 1, rest);
                outcome.refused = Some(refusal);
                break;
            }
            outcome.accepted += 1;
        }
        outcome.next_seq = self.received;
        // Invariant: the answer (the acknowledgement) follows the commit: what it counts is durable.
        // The next commit to start covers this batch (one in flight covers only earlier records).
        self.pushes.push_back((self.commits_started + 1, outcome));
        self.commit_input();
        Ok(())
    }

    /// Asks for the records accepted since the last commit to be journaled ([`Action::AppendJournal`]
    /// then [`Action::Commit`]): the log's and the dead-letter queue's, which follow each other in
    /// sequence order. Call after every offered batch; only committed records reach the workers.
    pub fn commit_input(&mut self) {
        if self.commit_in_flight.is_some() {
            // The next commit takes these records too.
            return;
        }
        let first = self.log.committed_end();
        let journal = self.log.end() - first;
        let dlq = self.dlq.uncommitted().count() as u64;
        if journal == 0 && dlq == 0 {
            // Nothing waits for a commit: every push waiting is answered.
            self.acknowledge_pushes(u64::MAX, 0);
            return;
        }
        let mut inputs = Vec::with_capacity((journal + dlq) as usize);
        self.log.inputs(first, self.log.end(), &mut inputs);
        let first_seq =
            if journal > 0 { first } else { self.dlq.uncommitted().next().map_or(first, |r| r.0) };
        for (seq, input) in self.dlq.uncommitted() {
            debug_assert_eq!(seq, first_seq + inputs.len() as u64, "the queue continues the log");
            inputs.push(input);
        }
        self.actions.push_back(Action::AppendJournal { first_seq, inputs });
        self.actions.push_back(Action::Commit);
        self.commit_in_flight = Some(Commit { journal, dlq });
        self.commits_started += 1;
        if self.journal_failures > 0 {
            self.counters.journal_retries += 1;
        }
    }

    /// True while the backoff after a failed commit runs: intake refuses every record without
    /// trying the journal. Without it a replay offered the refused records again at once: 8,000
    /// failed commits (new connections, error lines) a second while PostgreSQL was stopped.
    pub(crate) fn journal_backing_off(&self) -> bool {
        self.journal_retry_at.is_some_and(|at| self.now < at)
    }

    /// The service journaled what the commit in flight covers, or failed to.
    pub(crate) fn committed(&mut self, journal_error: Option<String>) {
        if let Some(Commit { journal, dlq }) = self.commit_in_flight.take() {
            self.intake_committed(journal, dlq, journal_error);
        }
        // The next commit, or, with nothing pending, the answer to pushes that took nothing new.
        self.commit_input();
    }

    fn intake_committed(&mut self, journal: u64, dlq: u64, journal_error: Option<String>) {
        let Some(error) = journal_error else {
            if self.journal_failures > 0 {
                self.notice(Notice::StorageRecovered { failed_commits: self.journal_failures });
                self.journal_failures = 0;
            }
            // Only what this commit covered: records taken since it started wait for the next one.
            self.log.commit_to(self.log.committed_end() + journal);
            self.dlq.commit_first(dlq as usize);
            // Received means accepted for good: records the storage dropped count as refused instead.
            self.counters.records_received += journal + dlq;
            self.feed_due = true;
            self.acknowledge_pushes(self.commits_started, 0);
            if self.mode() != Mode::Normal
                && matches!(&self.phase, Phase::RollingBack(r) if r.step == Step::ReplayDlq)
            {
                self.replay_progress();
            }
            return;
        };
        let mut dropped = self.log.rollback_uncommitted();
        let lost = self.dlq.drop_uncommitted();
        dropped += lost;
        self.dead_lettered -= lost;
        self.counters.dlq_records = self.dlq.len() as i64;
        self.received -= dropped;
        self.count_refused(self.storage_refusal(), self.received, dropped);
        // A replay source takes the dropped records back before it offers again.
        self.rewind_source += dropped;
        // A fenced pipeline refuses everything anyway: no retry to wait for.
        if self.fence.is_none() {
            let retry_in = self.journal_backoff.delay(self.journal_failures);
            self.journal_failures = self.journal_failures.saturating_add(1);
            self.journal_retry_at = Some(self.now.saturating_add(retry_in));
            self.notice(Notice::StorageFailed {
                records: dropped,
                error,
                failed_commits: self.journal_failures,
                retry_in,
            });
        }
        // The dropped records were everything not durable: every push waiting lost its share.
        self.acknowledge_pushes(u64::MAX, dropped);
    }

    /// Why records the journal did not take are refused. A journal that refused the append because
    /// another coordinator took the pipeline over has reported the fence first: those records are
    /// refused as fenced, not as a storage failure.
    fn storage_refusal(&self) -> Refusal {
        match self.fence {
            Some(Fence::TakenOver { current, .. }) => Refusal::Fenced { current },
            Some(Fence::StoreLost { current, ours }) => Refusal::StoreLost { current, ours },
            Some(Fence::StoreDamaged { ours }) => Refusal::StoreLost { current: 0, ours },
            None => Refusal::Storage,
        }
    }

    /// Answers the pushes covered by commits up to `through`; `dropped` records at the end of what
    /// they took were lost (the newest first).
    fn acknowledge_pushes(&mut self, through: u64, mut dropped: u64) {
        let answered = self.pushes.iter().take_while(|(generation, _)| *generation <= through).count();
        let mut outcomes: Vec<PushOutcome> = self.pushes.drain(..answered).map(|(_, o)| o).collect();
        let refusal = self.storage_refusal();
        for outcome in outcomes.iter_mut().rev() {
            let lost = dropped.min(outcome.accepted);
            if lost > 0 {
                outcome.accepted -= lost;
                outcome.refused = Some(refusal);
                dropped -= lost;
            }
            outcome.next_seq = outcome.next_seq.min(self.received);
        }
        self.actions.extend(outcomes.into_iter().map(Action::Acknowledge));
    }

    /// Offers what a replay source has due now, as much as fits: in real time what its clock says, at
    /// `max` pace only a few drift windows ahead of verification (enough to keep both workers busy,
    /// refilled in large steps so the service does not wake for every record). Then commits.
    pub fn offer_from(&mut self, now: Duration, source: &mut ReplaySource) {
        // `room` reads the time: a journal's backoff ends by it.
        self.now = self.now.max(now);
        if self.rewind_source > 0 {
            source.rewind(self.rewind_source);
            self.rewind_source = 0;
        }
        let mut room = self.room();
        if !source.is_real_time() {
            let window = self.settings.drift_window;
            let backlog = self.unverified();
            room = if backlog > 2 * window { 0 } else { room.min(MAX_AHEAD_WINDOWS * window - backlog) };
        }
        let due = source.due(now, room.min(MAX_OFFER)).min(room);
        for _ in 0..due {
            let input = source.next_record();
            if self.offer_input(now, input).is_err() {
                source.rewind(1);
                break;
            }
        }
        self.commit_input();
        self.input_expected = !self.draining && !source.finished();
    }
}
