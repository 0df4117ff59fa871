//! Game Genie codes and the lockstep guarantee: the codes are part of the machine's identity, so two
//! machines agree only if they run the same codes, and a code that changes no read at all is still
//! reported (its machines are not the same machine).

use anes::lockstep::{Lockstep, LockstepConfig, NesMachine, RunOutcome};
use anes::nes::cart::GameGenieCode;
use anes::nes::movie::InputStream;
use anes::nes::{Cartridge, Nes, NesConfig};

fn demo_with(codes: &[GameGenieCode]) -> NesMachine {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/roms/demo/demo.nes")).unwrap();
    let mut nes = Nes::new(Cartridge::from_ines(&rom).unwrap(), NesConfig::default());
    nes.set_game_genie_codes(codes).unwrap();
    NesMachine::new(nes)
}

/// A code on the operand after the reset vector whose compare byte never matches: it changes no
/// read, only the identity.
fn inert_code() -> GameGenieCode {
    let plain = demo_with(&[]);
    let nes = plain.nes();
    let address = u16::from_le_bytes([nes.peek(0xFFFC), nes.peek(0xFFFD)]) + 1;
    GameGenieCode { address, value: 0, compare: Some(!nes.peek(address)) }
}

fn demo_input() -> InputStream {
    let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/roms/demo/demo.input")).unwrap();
    InputStream::from_bytes(&bytes).unwrap()
}

#[test]
fn machines_with_the_same_codes_agree() {
    let code = inert_code();
    let config = LockstepConfig::default();
    let mut lockstep = Lockstep::new(demo_with(&[code]), demo_with(&[code]), config).unwrap();
    assert!(matches!(lockstep.run(&demo_input(), 120), RunOutcome::Agreed { frames: 120 }));
}

#[test]
fn machines_with_other_codes_are_reported_at_once() {
    let config = LockstepConfig::default();
    let mut lockstep = Lockstep::new(demo_with(&[]), demo_with(&[inert_code()]), config).unwrap();
    match lockstep.run(&demo_input(), 120) {
        RunOutcome::Diverged(divergence) => {
            assert!(divergence.frame <= 1, "reported at frame {}", divergence.frame)
        }
        RunOutcome::Agreed { .. } => panic!("machines with different Game Genie codes agreed"),
    }
}
