//! The one place where what a pipeline reports ([`Notice`]) becomes the service's log lines: the
//! level, message and fields of each. Operators and `anes-cli/tests/serve_logs.rs` read these lines:
//! a message or a field name changes only on purpose.

use anes_core::hex::to_hex;
use anes_pipeline::worker::WorkerId;
use anes_pipeline::{Fence, Notice};

/// Writes `notice` of pipeline `pipeline` as its log line.
pub(super) fn log_notice(pipeline: &str, notice: &Notice) {
    match notice {
        Notice::Recovering { checkpoint_seq, journaled } => tracing::warn!(
            pipeline,
            checkpoint_seq,
            journaled,
            "recovering: both workers load the checkpoint and re-run the journaled records after it"
        ),
        Notice::AlertResolved { mode } => tracing::info!(
            pipeline,
            mode = mode.name(),
            "alert resolved: noted; a resolved alert never re-admits a worker by itself"
        ),
        Notice::Draining => {
            tracing::info!(pipeline, "draining: intake stopped, taking a final verified checkpoint")
        }
        Notice::Fenced(Fence::TakenOver { ours: writer, current }) => {
            tracing::error!(
                pipeline,
                writer,
                current,
                "fenced: another service took this pipeline over; intake is refused from now on and no checkpoint is written"
            )
        }
        Notice::Fenced(Fence::StoreLost { ours: writer, current }) => {
            tracing::error!(
                pipeline,
                writer,
                current,
                "fenced: the checkpoint store lost this pipeline's data (its epoch is below ours; emptied or restarted without persistence), which is not a takeover; intake is refused from now on and no checkpoint is written"
            )
        }
        Notice::Fenced(Fence::StoreDamaged { ours: writer }) => {
            tracing::error!(
                pipeline,
                writer,
                "fenced: the store's record of this pipeline is damaged (its epoch or the journal's end is not a number, the epoch is at its maximum, or the journal lost records this service journaled), which is not a takeover; intake is refused from now on and no checkpoint is written"
            )
        }
        Notice::StorageFailed { records, error, failed_commits, retry_in } => tracing::error!(
            pipeline,
            records,
            %error,
            failed_commits,
            retry_in_seconds = retry_in.as_secs_f64(),
            "records could not be stored durably: refused"
        ),
        Notice::StorageRecovered { failed_commits } => {
            tracing::info!(pipeline, failed_commits, "records stored durably again")
        }
        Notice::Divergence { seq, kind, detail } => {
            tracing::error!(pipeline, seq, kind = kind.name(), %detail, "divergence: the pipeline is read-only")
        }
        Notice::Verdict { incident, suspects } => {
            tracing::info!(pipeline, incident, suspects = %worker_names(suspects), "referee's verdict")
        }
        Notice::AlertDuringRollback { step } => {
            tracing::info!(pipeline, step = step.name(), "alert firing: a rollback is already in progress")
        }
        Notice::AlertWhileRunning { suspects, kind } => tracing::warn!(
            pipeline,
            suspects = %worker_names(suspects),
            kind,
            "alert firing while the pipeline runs: rolling back"
        ),
        Notice::RollbackInProgress { step } => {
            tracing::info!(pipeline, step = step.name(), "rollback already in progress")
        }
        Notice::RollbackStarted { trigger, attempt, suspects } => tracing::warn!(
            pipeline,
            trigger = trigger.name(),
            attempt,
            suspects = %worker_names(suspects),
            "rollback started"
        ),
        Notice::StepDone { step, what } => tracing::warn!(
            pipeline,
            step = step.name(),
            "rollback step {}/6 {}: {what}",
            step.number(),
            step.name()
        ),
        Notice::CheckpointDiscarded { seq, reason } => {
            tracing::error!(pipeline, seq, %reason, "checkpoint failed verification: discarded")
        }
        Notice::ReplayingDlq { records } => {
            tracing::info!(pipeline, records, "replaying records from the dead-letter queue")
        }
        Notice::RecoveredFromPreviousRun => {
            tracing::info!(pipeline, "recovered from the previous run: normal mode")
        }
        Notice::RollbackGaveUp { attempt, reason } => {
            tracing::error!(pipeline, attempt, %reason, "rollback failed; out of attempts: the pipeline stays read-only until an operator acts or the alert fires again")
        }
        Notice::WorkerUnreachable { probes, reason, retry_in } => tracing::warn!(
            pipeline,
            probes,
            %reason,
            retry_in_seconds = retry_in.as_secs_f64(),
            "a worker cannot be reached; probing again (logged at the first probe and every power of two)"
        ),
        Notice::RollbackRetrying { attempt, reason, retry_in } => tracing::error!(
            pipeline,
            attempt,
            %reason,
            retry_in_seconds = retry_in.as_secs_f64(),
            "rollback attempt failed; retrying"
        ),
        Notice::FinalCheckpoint { seq, state_hash } => {
            tracing::info!(pipeline, seq, state_hash = %to_hex(state_hash), "final verified checkpoint")
        }
        Notice::FinalCheckpointNotStored { seq, state_hash, fence } => tracing::warn!(
            pipeline,
            seq,
            state_hash = %to_hex(state_hash),
            store_epoch = fence.current(),
            "final checkpoint verified by both workers but not stored: {}",
            fence.describe()
        ),
        Notice::FinalSnapshotsDiffer { seq } => {
            tracing::error!(pipeline, seq, "the workers' final snapshots differ: no final checkpoint")
        }
        Notice::Stalled { mode, unverified, in_dlq, input_expected, idle } => tracing::error!(
            pipeline,
            mode = mode.name(),
            unverified,
            in_dlq,
            input_expected,
            idle_seconds = idle.as_secs_f64(),
            "stalled: no frame verified while work waits"
        ),
        Notice::NoLongerStalled => tracing::info!(pipeline, "progress again: no longer stalled"),
        Notice::StaleMessage { worker, incarnation } => tracing::debug!(
            pipeline,
            %worker,
            incarnation,
            "dropped a message of a replaced incarnation"
        ),
        Notice::WorkerStarted { worker, incarnation, build } => tracing::info!(
            pipeline,
            %worker,
            incarnation,
            version = %build.version,
            git_commit = build.git_commit.as_deref(),
            emulation_epoch = build.emulation_epoch,
            "worker started"
        ),
        Notice::RecordOutOfOrder { worker, seq, expected } => tracing::error!(
            pipeline,
            %worker,
            seq,
            expected,
            "worker reported a record out of order; ignored"
        ),
        Notice::FaultFired { worker, seq, spec, refused } => tracing::warn!(
            pipeline,
            %worker,
            seq,
            %spec,
            refused = refused.as_deref(),
            "injected fault fired"
        ),
        Notice::WorkerRefused { worker, reason } => {
            tracing::error!(pipeline, %worker, %reason, "worker refused a command")
        }
        Notice::UnaskedInspectionReply { worker } => {
            tracing::error!(pipeline, %worker, "worker sent an inspection reply nobody asked for")
        }
        Notice::PowerOnMismatch => {
            tracing::error!(pipeline, "the workers disagree at power-on: different builds or ROMs")
        }
        Notice::WorkerExited { worker, reason } => {
            tracing::error!(pipeline, %worker, %reason, "worker exited unexpectedly")
        }
        Notice::WorkerSilent { worker, owed, silent } => tracing::error!(
            pipeline,
            %worker,
            owed,
            silent_seconds = silent.as_secs_f64(),
            "worker silent past the step timeout: isolated"
        ),
        Notice::Drill { worker, drill } => tracing::warn!(pipeline, %worker, %drill, "drill"),
        Notice::CheckpointVerified { seq } => tracing::debug!(pipeline, seq, "verified checkpoint"),
    }
}

/// Says that `dropped` notices of pipeline `pipeline` were lost: a shell took them too rarely.
pub(super) fn log_dropped(pipeline: &str, dropped: u64) {
    tracing::warn!(pipeline, dropped, "log lines of the pipeline were dropped: too many between two rounds");
}

/// `a,b` for a log field (a debug-formatted list would read `[A, B]`).
fn worker_names(workers: &[WorkerId]) -> String {
    workers.iter().map(|w| w.name()).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests;
