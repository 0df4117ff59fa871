//! A bundle's picture size may come from a peer (a remote worker's `Picture`): one whose byte count
//! overflows is not a picture, and the bundle is written without it instead of failing or panicking.

use anes_core::movie::{FrameInput, InputStream};
use anes_fixtures::FakeMachine;
use anes_lockstep::{FaultPlan, Lockstep, LockstepConfig, RunOutcome};

#[test]
fn a_picture_size_whose_byte_count_overflows_is_left_out_of_the_bundle() {
    let machine = FakeMachine::new(9);
    let faults = FaultPlan::parse(["flip:ram:0x0011:2@1000"]).unwrap();
    let config = LockstepConfig { checkpoint_every: 2, faults, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    let inputs = InputStream::from_frames((0..40u32).map(|i| FrameInput::buttons(i as u8, 0)).collect());
    assert!(matches!(lockstep.run(&inputs, 20), RunOutcome::Diverged(_)));
    let mut evidence = lockstep.evidence().unwrap().clone();
    // 0x8000_0000 * 2 * 3 wraps to 0 in u32: empty pictures would pass an unchecked size test.
    evidence.picture_size = Some((0x8000_0000, 2));
    evidence.picture_a.clear();
    evidence.picture_b.clear();
    let dir = std::env::temp_dir().join(format!("anes-lockstep-bundle-picture-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let written = evidence.write_bundle(&dir);
    let found = ["a.png", "b.png", "diff.png"].map(|name| dir.join(name).exists());
    let _ = std::fs::remove_dir_all(&dir);
    written.expect("the bundle is written without the pictures");
    assert_eq!(found, [false; 3]);
}
