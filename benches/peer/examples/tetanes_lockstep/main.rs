//! tetanes-core in lockstep against itself through anes-lockstep's public API: the runner on a second,
//! independent emulator. Four runs on one ROM and input stream (default: the bundled demo and its
//! 5,000 frames):
//!
//! 1. tetanes' default configuration, instruction stepping (`clock_instr`);
//! 2. the same, whole frames only (`clock_frame`): the runner's frame-only path;
//! 3. power-on RAM fixed (`RamState::AllZeros`), instruction stepping;
//! 4. the same, whole frames only;
//! 5. and 6. runs 3 and 4 with a bit of B's work RAM flipped at CPU cycle 100,000 (the harness's
//!    check that it catches and localizes a difference on this core).
//!
//! ```sh
//! cargo run --release --manifest-path benches/peer/Cargo.toml --example tetanes_lockstep \
//!     [-- ROM INPUT FRAMES [EVIDENCE_DIR]]
//! ```
//!
//! Each run prints its outcome and, on a divergence, the finding; with `EVIDENCE_DIR`, each
//! divergence's bundle is written to `EVIDENCE_DIR/<run>/`. Exit status 0 whatever the runs find:
//! they are measurements (`tests/tetanes_lockstep.rs` asserts them).

mod machine;

use std::path::PathBuf;
use std::time::Instant;

use anes_core::movie::InputStream;
use anes_lockstep::{Evidence, FaultPlan, Lockstep, LockstepConfig, Machine, RunOutcome};
use machine::{TetanesFrames, TetanesInput, TetanesMachine};
use tetanes_core::memory::RamState;

fn report<M: Machine<Input = TetanesInput> + Send>(
    name: &str,
    make: impl Fn() -> M,
    inputs: &[TetanesInput],
    (frames, faults): (u64, &[&str]),
    evidence_dir: Option<&PathBuf>,
) {
    let faults = FaultPlan::parse(faults.iter().copied()).expect("valid fault specs");
    let config = LockstepConfig { checkpoint_every: 10, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(make(), make(), config).expect("a valid configuration");
    let started = Instant::now();
    let outcome = lockstep.run(inputs, frames);
    let seconds = started.elapsed().as_secs_f64();
    println!("== {name}");
    match outcome {
        RunOutcome::Agreed { frames } => println!(
            "   no divergence: {frames} frames verified in {seconds:.1} s, final state hash {}",
            lockstep.last_verified_record().state_hash
        ),
        RunOutcome::Diverged(_) => {
            let evidence = lockstep.evidence().expect("a divergence keeps its evidence");
            describe(evidence, lockstep.frames_verified());
            if let Some(dir) = evidence_dir {
                let dir = dir.join(name.split_whitespace().collect::<Vec<_>>().join("-"));
                match evidence.write_bundle(&dir) {
                    Ok(path) => println!("   evidence: {}", path.display()),
                    Err(e) => println!("   evidence not written: {e}"),
                }
            }
        }
    }
}

fn describe(evidence: &Evidence, verified: u64) {
    let report = evidence.report();
    println!("   DIVERGED after {verified} verified frames: {}", report.message);
    if let Some(sections) = &report.detected.sections {
        println!("   differing sections: {}", sections.join(", "));
    }
    let total = report.fields.len() + report.fields_omitted;
    println!("   {total} differing fields ({} listed in the report); the first:", report.fields.len());
    for field in report.fields.iter().take(12) {
        println!("     {:<16} A {:<6} B {}", field.name, field.a, field.b);
    }
}

/// Bytes that differ between two machines, per section (`name differing/length`).
fn section_differences<M: Machine>(a: &M, b: &M) -> String {
    (0..a.section_count())
        .map(|i| {
            let (x, y) = (a.section_bytes(i), b.section_bytes(i));
            let differing = x.iter().zip(y).filter(|(p, q)| p != q).count();
            format!("{} {differing}/{}", a.section_name(i), x.len())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rom_path = args.first().map_or_else(|| repo.join("roms/demo/demo.nes"), PathBuf::from);
    let input_path = args.get(1).map_or_else(|| repo.join("roms/demo/demo.input"), PathBuf::from);
    let rom = std::fs::read(&rom_path).unwrap_or_else(|e| panic!("{}: {e}", rom_path.display()));
    let stream = InputStream::from_bytes(
        &std::fs::read(&input_path).unwrap_or_else(|e| panic!("{}: {e}", input_path.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", input_path.display()));
    let frames: u64 = args.get(2).map_or(stream.len() as u64, |n| n.parse().expect("FRAMES is a number"));
    let evidence_dir = args.get(3).map(PathBuf::from);
    let inputs: Vec<TetanesInput> = (0..stream.len()).map(|n| stream.frame(n).into()).collect();
    println!("tetanes-core in lockstep with itself: {}, {frames} frames", rom_path.display());

    let power_on = |ram: Option<RamState>| {
        let rom = &rom;
        move || TetanesMachine::new(rom, ram).expect("tetanes-core loads the ROM")
    };
    let dir = evidence_dir.as_ref();
    println!(
        "two power-ons, default config: bytes differing per section: {}",
        section_differences(&power_on(None)(), &power_on(None)())
    );
    let run = (frames, &[][..]);
    report("default config, instruction steps", power_on(None), &inputs, run, dir);
    report("default config, whole frames", || TetanesFrames(power_on(None)()), &inputs, run, dir);
    let zeros = Some(RamState::AllZeros);
    report("RAM zeroed, instruction steps", power_on(zeros), &inputs, run, dir);
    report("RAM zeroed, whole frames", || TetanesFrames(power_on(zeros)()), &inputs, run, dir);
    // The harness's own check on this core: a bit flipped in B's work RAM at CPU cycle 100,000.
    let flip = (frames, &["flip:wram:0x07F0:3@100000"][..]);
    report("RAM zeroed, instruction steps, flip", power_on(zeros), &inputs, flip, dir);
    report("RAM zeroed, whole frames, flip", || TetanesFrames(power_on(zeros)()), &inputs, flip, dir);
}
