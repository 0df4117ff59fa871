//! Both threading modes produce the same evidence for the same divergence: the same report (the
//! differing sections included), snapshots, pictures and HTML page, byte for byte. Worker threads run
//! past the divergence, so the threaded mode must return to the sync point to look at it.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use anes_core::movie::{FrameInput, InputStream};
use anes_fixtures::FakeMachine;
use anes_lockstep::{FaultPlan, Granularity, Lockstep, LockstepConfig, Machine, RunOutcome, Threading};
use common::nes_subject;

fn inputs() -> InputStream {
    InputStream::from_frames((0..200u32).map(|i| FrameInput::buttons((i / 3) as u8, (i / 5) as u8)).collect())
}

/// CPU cycle at the start of input frame `frame`.
fn frame_start<M: Machine<Input = FrameInput> + Clone>(machine: &M, frame: usize) -> u64 {
    let mut m = machine.clone();
    for n in 0..frame {
        m.run_frame(inputs().frame(n));
    }
    m.probe().cpu_cycle
}

/// Every file of the bundle the run leaves, by name.
fn bundle<M: Machine<Input = FrameInput> + Clone + Send>(
    machine: &M,
    config: LockstepConfig,
    dir: &Path,
    context: &str,
) -> BTreeMap<String, Vec<u8>> {
    let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
    let outcome = lockstep.run(&inputs(), 60);
    assert!(matches!(outcome, RunOutcome::Diverged(_)), "{context}: {outcome:?}");
    let _ = std::fs::remove_dir_all(dir);
    lockstep.evidence().unwrap().write_bundle(dir).unwrap();
    let files = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap())
        })
        .collect();
    std::fs::remove_dir_all(dir).unwrap();
    files
}

fn same_bundle_in_both_modes<M: Machine<Input = FrameInput> + Clone + Send>(
    machine: M,
    name: &str,
    granularities: &[Granularity],
) {
    let faults = [
        format!("flip:ram:0x0021:5@{}", frame_start(&machine, 7) + 321),
        // Where the program is busy (nestest idles later, and an idle loop absorbs a stall).
        format!("stall:3@{}", frame_start(&machine, 1) * 2 / 5),
    ];
    let scratch = std::env::temp_dir().join(format!("anes-same-report-{name}-{}", std::process::id()));
    for fault in &faults {
        for &granularity in granularities {
            for localize in [true, false] {
                let config = |threading| LockstepConfig {
                    granularity,
                    threading,
                    localize,
                    checkpoint_every: 5,
                    faults: FaultPlan::parse([fault]).unwrap(),
                    ..LockstepConfig::default()
                };
                let context = format!("{name}, {fault}, {granularity}, localize {localize}");
                let same = bundle(&machine, config(Threading::SameThread), &scratch, &context);
                let threaded =
                    bundle(&machine, config(Threading::Threaded { window: 16 }), &scratch, &context);
                let report: serde_json::Value = serde_json::from_slice(&same["report.json"]).unwrap();
                let sections =
                    report["detected"]["sections"].as_array().unwrap_or_else(|| panic!("{context}"));
                assert!(!sections.is_empty(), "{context}: the differing sections are named");
                assert_eq!(same.keys().collect::<Vec<_>>(), threaded.keys().collect::<Vec<_>>(), "{context}");
                for (file, bytes) in &same {
                    assert!(threaded[file] == *bytes, "{context}: {file} differs between the modes");
                }
            }
        }
    }
}

#[test]
fn nes_bundles_are_the_same_in_both_modes() {
    same_bundle_in_both_modes(
        nes_subject("nes_bundles_are_the_same_in_both_modes"),
        "nes",
        &[Granularity::Frame, Granularity::Scanline],
    );
}

#[test]
fn fake_machine_bundles_are_the_same_in_both_modes() {
    // FakeMachine deliberately: the runner's own behaviour, with every granularity affordable.
    same_bundle_in_both_modes(
        FakeMachine::new(2),
        "fake",
        &[Granularity::Frame, Granularity::Scanline, Granularity::Instruction],
    );
}
