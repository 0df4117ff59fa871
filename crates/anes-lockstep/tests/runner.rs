//! The runner's promises: modes and granularities agree, stalls are cycle misalignments, input faults
//! are caught at their frame, the evidence bundle holds everything, and the status getters tell the
//! truth.
//!
//! The promises about finding faults are checked on the NES core (nestest, or the synthetic ROM
//! without the conformance ROMs), which must keep the `Machine` contract or the test fails, and
//! again on `FakeMachine`, deliberately: the runner must not depend on anything NES-specific.
//! Tests about the runner alone (bundles, status, refusals) use `FakeMachine` only, as said there.

mod common;

use std::sync::Arc;

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_fixtures::{BrokenRestore, FakeMachine, tiny_rom};
use anes_lockstep::{
    DivergenceKind, Fault, FaultPlan, FaultPlanError, Granularity, Lockstep, LockstepConfig, LockstepError,
    Machine, NesMachine, Progress, RunOutcome, Threading,
};
use common::{keeping_contract, nes_subject};

fn inputs() -> InputStream {
    // Buttons change every few frames, so the input stream matters.
    InputStream::from_frames(
        (0..400u32).map(|i| FrameInput::buttons((i / 7) as u8, (i / 11) as u8)).collect(),
    )
}

/// CPU cycles of the machine's first frame.
fn frame_cycles<M: Machine<Input = FrameInput> + Clone>(machine: &M) -> u64 {
    let mut m = machine.clone();
    let start = m.probe().cpu_cycle;
    m.run_frame(FrameInput::default()).cpu_cycle - start
}

#[test]
fn nes_frames_stepped_instruction_by_instruction_equal_run_frame() {
    let rom = common::nestest().unwrap_or_else(tiny_rom);
    let mut whole = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
    let mut stepped = whole.clone();
    for (n, input) in inputs().frames().take(30).enumerate() {
        let record = whole.run_frame(input);
        stepped.begin_frame(input);
        while !stepped.step_instruction() {}
        assert_eq!(stepped.record(), record, "frame {n}");
        assert_eq!(record.frame, n as u64 + 1);
    }
}

#[test]
fn every_mode_and_granularity_reaches_the_same_state() {
    let rom = tiny_rom();
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
    let inputs = inputs();
    let mut finals = Vec::new();
    for (granularity, threading, frames) in [
        (Granularity::Frame, Threading::SameThread, 120),
        (Granularity::Frame, Threading::Threaded { window: 4 }, 120),
        (Granularity::Scanline, Threading::SameThread, 120),
        (Granularity::Scanline, Threading::Threaded { window: 64 }, 120),
        (Granularity::Instruction, Threading::SameThread, 3),
    ] {
        let config =
            LockstepConfig { granularity, threading, checkpoint_every: 10, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        assert_eq!(
            lockstep.run(&inputs, frames),
            RunOutcome::Agreed { frames },
            "{granularity} {threading:?}"
        );
        assert_eq!(lockstep.frames_verified(), frames);
        assert_eq!(lockstep.machine_a().record(), lockstep.machine_b().record());
        let sync_points = lockstep.sync_points();
        match granularity {
            Granularity::Frame => assert_eq!(sync_points, frames + 1, "one per frame, plus the start"),
            _ => assert!(sync_points > 200 * frames, "{granularity}: {sync_points} sync points"),
        }
        finals.push((frames, lockstep.machine_a().record()));
    }
    let mut reference = machine.clone();
    let mut at = 0;
    for (frames, record) in finals {
        if frames < at {
            reference = machine.clone();
            at = 0;
        }
        while at < frames {
            reference.run_frame(inputs.frame(at as usize));
            at += 1;
        }
        assert_eq!(record, reference.record(), "lockstep runs end where a lone machine does");
    }
}

#[test]
fn a_stalled_machine_is_a_cycle_misalignment() {
    stall(nes_subject("a_stalled_machine_is_a_cycle_misalignment"));
    stall(FakeMachine::new(3));
}

fn stall<M: Machine<Input = FrameInput> + Clone + Send>(machine: M) {
    // Inside the first frame, while the program is busy (a stall inside a loop whose iteration takes
    // as long as the stall would be absorbed by it, and rightly go unseen).
    let cycle = frame_cycles(&machine) * 2 / 5;
    let faults = FaultPlan::parse([format!("stall:3@{cycle}")]).unwrap();
    let config = LockstepConfig { checkpoint_every: 1, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let RunOutcome::Diverged(divergence) = lockstep.run(&inputs(), 10) else {
        panic!("a stall must be seen")
    };
    assert_eq!(divergence.frame, 0, "{divergence}");
    let report = lockstep.evidence().unwrap().report();
    assert_eq!(report.kind, DivergenceKind::CycleMisalignment, "{}", report.message);
    let found = lockstep.evidence().unwrap().localization.as_ref().expect("localized");
    assert!(found.cpu_cycle < cycle && cycle <= found.end_cpu_cycle);
    assert_eq!(found.end_cpu_cycle_b, found.end_cpu_cycle + 3, "B lost 3 cycles to the stall");
    assert!(lockstep.rollback().is_ok());
    assert_eq!(lockstep.run(&inputs(), 5), RunOutcome::Agreed { frames: 5 });
}

#[test]
fn threaded_mode_finds_the_same_divergence_and_bounds_the_lead() {
    threaded(nes_subject("threaded_mode_finds_the_same_divergence"));
    threaded(FakeMachine::new(3));
}

fn threaded<M: Machine<Input = FrameInput> + Clone + Send>(machine: M) {
    let mut probe = machine.clone();
    for n in 0..37 {
        probe.run_frame(inputs().frame(n));
    }
    let cycle = probe.probe().cpu_cycle + 123;
    let faults = FaultPlan::parse([format!("flip:ram:0x0021:5@{cycle}")]).unwrap();
    let mut found = Vec::new();
    for threading in [Threading::SameThread, Threading::Threaded { window: 3 }] {
        let config = LockstepConfig {
            threading,
            checkpoint_every: 10,
            faults: faults.clone(),
            ..LockstepConfig::default()
        };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        let status = lockstep.status();
        let mut max_drift = 0;
        let outcome =
            lockstep.run_with(&inputs(), 100, &mut |p: Progress| max_drift = max_drift.max(p.drift_frames));
        let RunOutcome::Diverged(divergence) = outcome else { panic!("{threading:?}: not seen") };
        assert_eq!(divergence.frame, 37, "{threading:?}");
        assert_eq!(lockstep.frames_verified(), 37, "nothing after the last verified frame counts");
        assert!(status.is_diverged() && lockstep.is_diverged());
        assert!(max_drift <= 4, "{threading:?}: a worker led by {max_drift} frames with a window of 3");
        let evidence = lockstep.evidence().unwrap();
        found.push(evidence.report());
        // Intake has stopped: another run does nothing until a rollback.
        assert!(matches!(lockstep.run(&inputs(), 10), RunOutcome::Diverged(_)));
        assert_eq!(lockstep.frames_verified(), 37);
        lockstep.rollback().unwrap();
        assert!(!status.is_diverged());
        assert_eq!(status.rollbacks(), 1);
        assert_eq!(lockstep.run(&inputs(), 20), RunOutcome::Agreed { frames: 20 });
    }
    let (same, threaded) = (&found[0], &found[1]);
    assert!(same.detected.sections.as_ref().is_some_and(|s| s.contains(&"ram")), "{:?}", same.detected);
    assert_eq!(same, threaded, "the same report in both modes");
}

#[test]
fn a_corrupted_input_bit_is_caught_in_its_frame() {
    corrupted_input(nes_subject("a_corrupted_input_bit_is_caught_in_its_frame"));
    corrupted_input(FakeMachine::new(3));
}

fn corrupted_input<M: Machine<Input = FrameInput> + Clone + Send>(machine: M) {
    let faults = FaultPlan::parse(["input:0:6@12"]).unwrap();
    let config = LockstepConfig { checkpoint_every: 5, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let RunOutcome::Diverged(divergence) = lockstep.run(&inputs(), 30) else { panic!("not seen") };
    assert_eq!(divergence.frame, 12);
    let found = lockstep.evidence().unwrap().localization.as_ref().expect("localized");
    assert_eq!(found.frame, 12);
    assert!(found.fields.iter().any(|f| f.name == "input[0].buttons"), "{:?}", found.fields);
}

#[test]
fn the_evidence_bundle_holds_report_snapshots_inputs_and_pictures() {
    // About the bundle the runner writes: FakeMachine's small state keeps the field list exact.
    let machine = FakeMachine::new(9);
    let faults = FaultPlan::parse(["flip:ram:0x0011:2@1000"]).unwrap();
    let config = LockstepConfig { checkpoint_every: 2, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    assert!(matches!(lockstep.run(&inputs(), 20), RunOutcome::Diverged(_)));
    let evidence = lockstep.evidence().unwrap();
    let dir = std::env::temp_dir().join(format!("anes-lockstep-bundle-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let html = evidence.write_bundle(&dir).unwrap();
    for file in anes_lockstep::BUNDLE_FILES {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    // BUNDLE_FILES names exactly what a bundle holds (`anes lockstep --force` replaces those).
    let mut written: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut listed: Vec<String> = anes_lockstep::BUNDLE_FILES.iter().map(|f| f.to_string()).collect();
    written.sort();
    listed.sort();
    assert_eq!(written, listed);
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
    for key in ["frame", "cpu_cycle", "scanline", "dot", "pc", "instruction", "kind", "fields"] {
        assert!(report.get(key).is_some(), "report.json lacks {key}");
    }
    assert_eq!(report["kind"], "state");
    let field = &report["fields"][0];
    assert_eq!(field["name"], "ram[$11]");
    for key in ["name", "a", "b", "last_write_a", "last_write_b"] {
        assert!(field.get(key).is_some(), "field lacks {key}");
    }
    assert_eq!(field["last_write_b"]["cause"], "fault");
    assert_eq!(report["detected"]["sections"], serde_json::json!(["ram"]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("ram[$11]") && page.contains("data:image/png;base64,"));
    assert!(!page.contains("<script"), "the page needs no scripts");
    let inputs_slice = std::fs::read(dir.join("inputs.input")).unwrap();
    let slice = InputStream::from_bytes(&inputs_slice).unwrap();
    assert_eq!(
        slice.len() as u64,
        report["detected"]["frame"].as_u64().unwrap() + 1,
        "frames 0 to the divergence"
    );
    assert!(slice.frames().eq(inputs().frames().take(slice.len())), "the slice is the stream's first frames");
    let png = std::fs::read(dir.join("diff.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn status_is_shared_and_live() {
    // About the runner's status only: any machine will do, FakeMachine is the cheapest.
    let machine = FakeMachine::new(1);
    let config = LockstepConfig { threading: Threading::Threaded { window: 2 }, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let status: Arc<anes_lockstep::LockstepStatus> = lockstep.status();
    assert_eq!(lockstep.run(&inputs(), 50), RunOutcome::Agreed { frames: 50 });
    assert_eq!((status.frames_verified(), status.sync_points(), status.drift_frames()), (50, 51, 0));
    assert!(!status.is_diverged());
}

#[test]
fn bad_plans_and_configs_are_refused() {
    // About the runner's refusals: FakeMachine's two sections make the messages predictable.
    let machine = FakeMachine::new(1);
    let plan = |spec: &str| LockstepConfig {
        faults: FaultPlan::parse([spec]).unwrap(),
        ..LockstepConfig::default()
    };
    let err = Lockstep::new(machine.clone(), machine.clone(), plan("flip:vram:0:0@1")).unwrap_err();
    assert!(err.to_string().contains("no section \"vram\"") && err.to_string().contains("cpu, ram"), "{err}");
    let err = Lockstep::new(machine.clone(), machine.clone(), plan("flip:ram:64:0@1")).unwrap_err();
    assert!(err.to_string().contains("outside section ram"), "{err}");
    // A stall built directly, past the parser's bound, is refused too (it would cost its length in
    // bus cycles: 2^32 of them take minutes).
    let config = LockstepConfig {
        faults: FaultPlan::new().with(Fault::Stall { cycles: u32::MAX, cpu_cycle: 100 }),
        ..LockstepConfig::default()
    };
    let err = Lockstep::new(machine.clone(), machine.clone(), config).unwrap_err();
    assert!(
        matches!(err, LockstepError::FaultPlan(FaultPlanError::StallOutOfRange { cycles: u32::MAX, .. })),
        "{err}"
    );
    assert!(err.to_string().contains("1 to 29781"), "{err}");
    let config = LockstepConfig { checkpoint_every: 0, ..LockstepConfig::default() };
    assert!(Lockstep::new(machine.clone(), machine, config).is_err());
}

#[test]
fn finer_granularity_sees_what_a_frame_end_misses() {
    // FakeMachine deliberately: its latch is overwritten by every instruction: a flip there is gone by the frame end.
    let machine = FakeMachine::new(4);
    let faults = FaultPlan::parse(["flip:cpu:20:1@1000"]).unwrap();
    let run = |granularity| {
        let config = LockstepConfig { granularity, faults: faults.clone(), ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        let outcome = lockstep.run(&inputs(), 10);
        (outcome, lockstep.evidence().and_then(|e| e.localization.clone()))
    };
    assert_eq!(run(Granularity::Frame).0, RunOutcome::Agreed { frames: 10 }, "masked at frame granularity");
    let (outcome, found) = run(Granularity::Instruction);
    assert!(matches!(outcome, RunOutcome::Diverged(_)));
    let found = found.expect("localized");
    assert_eq!(found.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["cpu.latch"]);
    assert!(found.cpu_cycle < 1000 && 1000 <= found.end_cpu_cycle);
}

#[test]
fn without_localization_the_report_says_where_the_comparator_saw_it() {
    // About the runner's report without a replay: FakeMachine is the cheapest subject.
    let machine = FakeMachine::new(6);
    let faults = FaultPlan::parse(["flip:ram:3:0@2000"]).unwrap();
    let config = LockstepConfig { localize: false, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let RunOutcome::Diverged(divergence) = lockstep.run(&inputs(), 30) else { panic!("not seen") };
    let report = lockstep.evidence().unwrap().report();
    assert_eq!((report.frame, report.cpu_cycle, report.pc), (divergence.frame, divergence.a.cpu_cycle, None));
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["pc"].is_null() && json["instruction"].is_null());
}

#[test]
fn the_demo_rom_agrees_with_itself_in_both_modes() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let machine = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
    let mut hashes = Vec::new();
    for threading in [Threading::SameThread, Threading::Threaded { window: 8 }] {
        let config = LockstepConfig { threading, ..LockstepConfig::default() };
        let mut lockstep = Lockstep::new(machine.clone(), machine.clone(), config).unwrap();
        assert_eq!(lockstep.run(&inputs(), 300), RunOutcome::Agreed { frames: 300 });
        assert_eq!(lockstep.checkpoint_frames().collect::<Vec<_>>(), [0, 60, 120, 180, 240, 300]);
        hashes.push(lockstep.last_verified_record());
    }
    assert_eq!(hashes[0], hashes[1]);
}

#[test]
fn nes_pictures_are_rgb_frames() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    let mut machine = NesMachine::from_ines(&rom, NesConfig::default()).unwrap();
    for _ in 0..120 {
        machine.run_frame(FrameInput::default());
    }
    let mut rgb = Vec::new();
    assert!(machine.picture_rgb(&mut rgb));
    assert_eq!(machine.picture_size(), Some((256, 240)));
    assert_eq!(rgb.len(), 256 * 240 * 3);
    let colours: std::collections::BTreeSet<&[u8]> = rgb.chunks_exact(3).collect();
    assert!(colours.len() > 4, "the demo draws a picture ({} colours)", colours.len());
    let png = anes_lockstep::encode_png(256, 240, &rgb).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
}

#[test]
fn scanline_granularity_sees_a_fault_within_its_scanline() {
    scanline_fault(nes_subject("scanline_granularity_sees_a_fault_within_its_scanline"), 0x0123);
    scanline_fault(FakeMachine::new(3), 0x23);
}

fn scanline_fault<M: Machine<Input = FrameInput> + Clone + Send>(machine: M, offset: usize) {
    let cycle = frame_cycles(&machine) + frame_cycles(&machine) / 3;
    let faults = FaultPlan::parse([format!("flip:ram:{offset}:6@{cycle}")]).unwrap();
    let ram = (0..machine.section_count()).find(|&i| machine.section_name(i) == "ram").unwrap();
    let mut name = String::new();
    machine.field_name(ram, offset, &mut name);
    let config = LockstepConfig { granularity: Granularity::Scanline, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let RunOutcome::Diverged(divergence) = lockstep.run(&inputs(), 5) else { panic!("not seen") };
    assert!(!divergence.at_frame_end, "seen at the scanline sync point, within the frame");
    assert!(divergence.a.cpu_cycle >= cycle && divergence.a.cpu_cycle < cycle + 700, "{divergence}");
    let found = lockstep.evidence().unwrap().localization.as_ref().expect("localized");
    assert!(found.cpu_cycle < cycle && cycle <= found.end_cpu_cycle);
    assert_eq!(found.fields[0].name, name);
}

#[test]
#[should_panic(expected = "breaks the Machine contract")]
fn a_machine_that_breaks_the_contract_fails_the_test() {
    // The subjects above go through this check: a broken contract must fail, never fall back.
    // Restored snapshots one instruction off break the contract.
    keeping_contract(BrokenRestore {
        inner: FakeMachine::new(1),
        after_restore: |_, restored| {
            restored.step_instruction();
        },
    });
}

#[test]
fn the_nes_core_keeps_the_machine_contract() {
    keeping_contract(nes_subject("the_nes_core_keeps_the_machine_contract"));
    keeping_contract(NesMachine::from_ines(&tiny_rom(), NesConfig::default()).unwrap());
}

#[test]
fn under_ci_missing_conformance_roms_fail_instead_of_skipping() {
    // Rerun a test that uses nestest in a child process of this test binary, with the conformance
    // folder pointed somewhere empty: skipped (on the synthetic ROM) normally, a failure under CI.
    let missing = std::env::temp_dir().join(format!("anes-no-conformance-{}", std::process::id()));
    let rerun = |ci: Option<&str>| {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command
            .args(["--exact", "nes_frames_stepped_instruction_by_instruction_equal_run_frame"])
            .env("ANES_CONFORMANCE_DIR", &missing)
            .env_remove("CI");
        if let Some(value) = ci {
            command.env("CI", value);
        }
        command.output().unwrap()
    };
    let text = |output: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    };
    let fresh_clone = rerun(None);
    assert!(fresh_clone.status.success(), "without CI the test skips: {}", text(&fresh_clone));
    assert!(text(&fresh_clone).contains("1 passed"), "{}", text(&fresh_clone));
    let not_ci = rerun(Some("false"));
    assert!(not_ci.status.success(), "CI=false is not CI: {}", text(&not_ci));
    let ci = rerun(Some("true"));
    assert!(!ci.status.success(), "under CI a missing folder fails: {}", text(&ci));
    let looked = missing.join("roms").display().to_string();
    assert!(
        text(&ci).contains("conformance ROMs are missing") && text(&ci).contains(&looked),
        "{}",
        text(&ci)
    );
}

#[test]
fn a_bundle_error_names_the_file_and_leaves_the_cause_to_its_source() {
    // About the bundle writer: FakeMachine is the cheapest way to a divergence.
    let machine = FakeMachine::new(9);
    let config = LockstepConfig {
        faults: FaultPlan::parse(["flip:ram:0x0011:2@1000"]).unwrap(),
        ..LockstepConfig::default()
    };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    assert!(matches!(lockstep.run(&inputs(), 20), RunOutcome::Diverged(_)));
    let file = std::env::temp_dir().join(format!("anes-lockstep-bundle-file-{}", std::process::id()));
    std::fs::write(&file, b"not a folder").unwrap();
    let err = lockstep.evidence().unwrap().write_bundle(&file).unwrap_err();
    let cause = std::error::Error::source(&err).expect("the OS error is the source").to_string();
    assert_eq!(err.to_string(), format!("{}: cannot write the evidence bundle", file.display()));
    assert!(!err.to_string().contains(&cause), "the cause is said once, by the source: {err} / {cause}");
    std::fs::remove_file(&file).unwrap();
}
