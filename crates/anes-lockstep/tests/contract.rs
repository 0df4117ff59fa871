//! The contract checker catches what it claims to: a machine that keeps the contract passes, one whose
//! snapshot forgets a byte fails.

use anes_fixtures::{BrokenRestore, FakeMachine};
use anes_lockstep::{ContractViolation, check_contract};

#[test]
fn fake_machine_keeps_the_contract() {
    check_contract(&FakeMachine::new(1), 3).unwrap();
}

#[test]
fn an_incomplete_snapshot_breaks_the_contract() {
    // The restore keeps the accumulator the machine had before: the snapshot "forgets" it.
    let forgetful = BrokenRestore {
        inner: FakeMachine::new(1),
        after_restore: |before, restored| restored.cpu[18] = before.cpu[18],
    };
    let err = check_contract(&forgetful, 2).unwrap_err();
    assert!(matches!(err, ContractViolation::SnapshotIncomplete { .. }), "{err}");
}
