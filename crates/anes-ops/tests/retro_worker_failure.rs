//! The savestate audit of libretro workers that fail outright mid-run. A worker that crashed or hung
//! leaves its machine answering every later call with placeholders (a zero hash, an empty
//! snapshot); the audit must end with an error naming the core, the call and the frame instead of
//! measuring them. The workers are stand-ins for `anes worker` (this crate has no `anes` executable):
//! shell scripts that send recorded replies to the first three commands, read those commands, and
//! then exit or fall silent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anes_ops::canary::{RetroWorkerMachine, RetroWorkerSpec, WorkerError};
use anes_retro_host::audit::{AuditConfig, AuditError, audit};
use anes_workers::protocol::{
    BuildInfo, PROTOCOL_VERSION, Reply, WireRecord, WorkerCommand, encode_command, encode_reply,
};

/// The test's folder, removed with what is in it when dropped, also when the test panics.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("anes-ops-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

const CONTENT: &[u8] = b"stand-in content";

/// A stand-in worker in `dir`: it answers hello, `load` (loaded and its snapshot), the audit's first
/// `snapshot` and its `restore` of that snapshot, waits until it has read those three commands,
/// then runs `then` (`exit 0`: it dies; `exec sleep 60`: it hangs).
fn stand_in(dir: &Path, then: &str) -> PathBuf {
    let mut state = Vec::new();
    anes_retro_host::snapshot::write(&mut state, 0, (0, 0, 0), &[("state", b"power-on state")]);
    let record = WireRecord { frame: 0, cpu_cycle: 0, scanline: 0, dot: 0, state_hash: [1; 32] };
    let mut replies = Vec::new();
    for reply in [
        Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() },
        Reply::Loaded { rom_identity: *blake3::hash(CONTENT).as_bytes(), record, region: None },
        Reply::Snapshot { seq: 0, state_hash: [1; 32], bytes: state.clone() },
        Reply::Snapshot { seq: 0, state_hash: [1; 32], bytes: state.clone() },
        Reply::Restored { seq: 0, record },
    ] {
        encode_reply(&reply, &mut replies);
    }
    let mut commands = Vec::new();
    for command in [
        WorkerCommand::Load {
            rom: CONTENT.to_vec(),
            checkpoint_every: u64::MAX,
            region: None,
            power_on: None,
        },
        WorkerCommand::Snapshot,
        WorkerCommand::Restore { seq: 0, snapshot: state },
    ] {
        encode_command(&command, &mut commands);
    }
    let replies_file = dir.join("replies.bin");
    std::fs::write(&replies_file, replies).unwrap();
    let script = dir.join("worker.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat '{}'\nhead -c {} >/dev/null\n{then}\n",
            replies_file.display(),
            commands.len()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// Audits 60 frames of stand-ins started from `program`; the core is named `core` and never loaded.
fn audit_stand_ins(program: &Path, core: &Path, content: &Path) -> Result<String, AuditError> {
    let spec = RetroWorkerSpec {
        program: program.to_owned(),
        core: core.to_owned(),
        content: content.to_owned(),
        options: Vec::new(),
        reply_timeout: Duration::from_secs(2),
        ignore_audio: false,
        nes_view: false,
    };
    let mut make = || {
        // Another test thread forking while the script was open for writing keeps it busy a moment.
        for _ in 0..50 {
            match RetroWorkerMachine::spawn(&spec) {
                Err(WorkerError::Spawn { reason, .. }) if reason.contains("busy") => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                other => return other.map_err(|e| e.to_string()),
            }
        }
        Err("the stand-in stayed busy".to_owned())
    };
    let config = AuditConfig { frames: 60, ..AuditConfig::default() };
    audit(&mut make, &[], &config, &mut |_, _| {}).map(|report| format!("{report:?}"))
}

fn assert_failed_at_the_first_window(result: Result<String, AuditError>, core: &Path, why: &str) {
    match result {
        Err(AuditError::Failed { core: named, instance, command, frame, reason }) => {
            assert_eq!(named, core.display().to_string());
            assert_eq!((instance, command, frame), ("A", "save_state", 0), "{reason}");
            assert!(reason.contains(why), "{reason}");
        }
        Ok(report) => panic!("a dead worker's placeholders were measured: {report}"),
        Err(other) => panic!("{other}"),
    }
}

/// Without the check, its empty snapshots fail "constant size" and the audit gives a verdict.
#[test]
fn a_worker_that_dies_mid_audit_is_an_error_naming_the_core_call_and_frame() {
    let dir = scratch("audit-dies");
    let content = dir.0.join("content.bin");
    std::fs::write(&content, CONTENT).unwrap();
    let core = dir.0.join("stand_in_libretro.so");
    let program = stand_in(&dir.0, "exit 0");
    let result = audit_stand_ins(&program, &core, &content);
    // The parent sees the end of its output, or its input closed, whichever comes first.
    let why = match &result {
        Err(AuditError::Failed { reason, .. }) if reason.contains("stopped reading its input") => {
            "stopped reading its input"
        }
        _ => "its output ended",
    };
    assert_failed_at_the_first_window(result.clone(), &core, why);
    let message = result.unwrap_err().to_string();
    assert!(
        message.starts_with(&format!(
            "{}: instance A of the audit failed outright at save_state, frame 0: ",
            core.display()
        )),
        "{message}"
    );
}

/// The reply timeout names the command that hung and the frame.
#[test]
fn a_worker_that_hangs_mid_audit_is_an_error_naming_the_command_that_hung() {
    let dir = scratch("audit-hangs");
    let content = dir.0.join("content.bin");
    std::fs::write(&content, CONTENT).unwrap();
    let core = dir.0.join("stand_in_libretro.so");
    let program = stand_in(&dir.0, "exec sleep 60");
    let result = audit_stand_ins(&program, &core, &content);
    assert_failed_at_the_first_window(result, &core, "no reply to snapshot (frame 0) for 2 s: it hangs");
}
