//! The lockstep runner on tetanes-core (see `examples/tetanes_lockstep/`): two instances with its
//! default configuration differ before the first frame (random power-on RAM); with RAM fixed they
//! agree, stepped by instruction or by whole frames, and a flipped bit is localized to the instruction.

#[path = "../examples/tetanes_lockstep/machine.rs"]
mod machine;

use anes_core::movie::InputStream;
use anes_lockstep::check_contract;
use anes_lockstep::{
    FaultPlan, LockstepConfig, Machine, assert_deterministic, check_deterministic, check_deterministic_with,
};
use machine::{TetanesFrames, TetanesInput, TetanesMachine};
use tetanes_core::memory::RamState;

const FRAMES: u64 = 600;

fn demo() -> (Vec<u8>, Vec<TetanesInput>) {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let rom = std::fs::read(repo.join("roms/demo/demo.nes")).unwrap();
    let stream = InputStream::from_bytes(&std::fs::read(repo.join("roms/demo/demo.input")).unwrap()).unwrap();
    (rom, (0..stream.len()).map(|n| stream.frame(n).into()).collect())
}

fn zeroed(rom: &[u8]) -> TetanesMachine {
    TetanesMachine::new(rom, Some(RamState::AllZeros)).unwrap()
}

fn differs_at_pairing<M: Machine<Input = TetanesInput>>(make: impl Fn() -> M, inputs: &[TetanesInput]) {
    let (a, b) = (make(), make());
    let differing = a.section_bytes(1).iter().zip(b.section_bytes(1)).filter(|(x, y)| x != y).count();
    // 2 KiB of work RAM, 1/256 of it equal by chance.
    assert!(differing > 1900, "wram: {differing} bytes differ");
    let err = check_deterministic(make, inputs, FRAMES).unwrap_err();
    let found = err.evidence().unwrap().frame_localization.clone().unwrap();
    assert!(found.at_pairing && found.frame == 0, "{err}");
    assert_eq!(found.fields[0].section, "wram", "{err}");
}

#[test]
fn default_config_differs_before_the_first_frame() {
    let (rom, inputs) = demo();
    let power_on = || TetanesMachine::new(&rom, None).unwrap();
    differs_at_pairing(power_on, &inputs);
    differs_at_pairing(|| TetanesFrames(power_on()), &inputs);
}

#[test]
fn with_ram_fixed_it_is_deterministic_by_instruction_and_by_frame() {
    let (rom, inputs) = demo();
    check_contract(&zeroed(&rom), 2).unwrap();
    let stepped = assert_deterministic(|| zeroed(&rom), &inputs, FRAMES);
    let whole = assert_deterministic(|| TetanesFrames(zeroed(&rom)), &inputs, FRAMES);
    assert_eq!(stepped.state_hash, whole.state_hash, "clock_instr + clock_sync is clock_frame");
}

#[test]
fn a_flipped_bit_is_localized_to_the_instruction() {
    let (rom, inputs) = demo();
    let faults = FaultPlan::parse(["flip:wram:0x07F0:3@100000"]).unwrap();
    let config = LockstepConfig { checkpoint_every: 10, faults, ..LockstepConfig::default() };
    let err = check_deterministic_with(|| zeroed(&rom), &inputs, FRAMES, config).unwrap_err();
    let evidence = err.evidence().unwrap();
    let found = evidence.localization.as_ref().unwrap_or_else(|| panic!("{err}"));
    assert!(found.cpu_cycle <= 100_000 && 100_000 <= found.end_cpu_cycle, "{err}");
    assert!(found.fields.iter().any(|f| f.name == "wram[$07F0]"), "{err}");
}
