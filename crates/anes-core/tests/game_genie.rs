//! Game Genie codes change what the CPU reads, so they are part of what a machine is: the state hash
//! and snapshots carry them through the machine identity.

use anes_core::cart::GameGenieCode;
use anes_core::state::{Section, SnapshotError};
use anes_core::{Cartridge, Nes, NesConfig};

fn demo() -> Nes {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes")).unwrap();
    Nes::new(Cartridge::from_ines(&rom).unwrap(), NesConfig::default())
}

/// A code that flips bit 0 of the second byte of the program at the reset vector (an operand), found
/// by reading the ROM so the test does not hard-code the program; its compare byte matches the ROM
/// or not.
fn code_at_reset(nes: &Nes, compare_matches: bool) -> GameGenieCode {
    let reset = u16::from_le_bytes([nes.peek(0xFFFC), nes.peek(0xFFFD)]);
    let address = reset + 1;
    let original = nes.peek(address);
    let compare = if compare_matches { original } else { original ^ 0xFF };
    GameGenieCode { address, value: original ^ 0x01, compare: Some(compare) }
}

#[test]
fn a_code_changes_reads_identity_and_hash() {
    let plain = demo();
    let mut patched = demo();
    let code = code_at_reset(&plain, true);
    patched.set_game_genie_codes(&[code]).unwrap();
    assert_eq!(patched.peek(code.address), code.value);
    assert_ne!(patched.rom_identity(), plain.rom_identity());
    assert_ne!(patched.state_hash(), plain.state_hash(), "the identity is hashed");
    assert_eq!(patched.game_genie_codes().copied().collect::<Vec<_>>(), vec![code]);
}

#[test]
fn a_code_whose_compare_fails_changes_no_read() {
    let mut plain = demo();
    let mut gated = demo();
    let code = code_at_reset(&plain, false);
    gated.set_game_genie_codes(&[code]).unwrap();
    for _ in 0..120 {
        plain.run_frame(Default::default());
        gated.run_frame(Default::default());
    }
    // Same program, same state bytes; only the identity (and so the hash) tells them apart.
    for section in Section::ALL {
        assert_eq!(plain.section_bytes(section), gated.section_bytes(section), "{}", section.name());
    }
    assert_ne!(plain.state_hash(), gated.state_hash());
}

#[test]
fn snapshots_do_not_cross_code_sets() {
    let mut plain = demo();
    plain.run_frame(Default::default());
    let mut snapshot = Vec::new();
    plain.save_state(&mut snapshot);
    let mut patched = demo();
    patched.set_game_genie_codes(&[code_at_reset(&plain, true)]).unwrap();
    let before = patched.state_hash();
    assert!(matches!(patched.load_state(&snapshot), Err(SnapshotError::WrongRom { .. })));
    assert_eq!(patched.state_hash(), before, "a refused snapshot changes nothing");
    patched.set_game_genie_codes(&[]).unwrap();
    patched.load_state(&snapshot).unwrap();
    assert_eq!(patched.state_hash(), plain.state_hash());
}

#[test]
fn snapshot_into_a_slice_is_the_same_bytes() {
    let mut nes = demo();
    for _ in 0..30 {
        nes.run_frame(Default::default());
    }
    let mut vec = Vec::new();
    nes.save_state(&mut vec);
    let mut buffer = vec![0xAAu8; nes.snapshot_len() + 7];
    assert_eq!(nes.save_state_into(&mut buffer).unwrap(), vec.len());
    assert_eq!(&buffer[..vec.len()], &vec[..]);
    assert_eq!(&buffer[vec.len()..], &[0xAA; 7], "bytes past the snapshot untouched");
    let short = nes.save_state_into(&mut buffer[..vec.len() - 1]).unwrap_err();
    assert_eq!((short.needed, short.len), (vec.len(), vec.len() - 1));
}

#[test]
fn ram_pokes_are_state() {
    let mut nes = demo();
    let before = nes.state_hash();
    nes.ram_mut()[0x0300] ^= 0x5A;
    assert_eq!(nes.ram()[0x0300], nes.peek(0x1300), "mirrored at $1300");
    assert_ne!(nes.state_hash(), before);
    assert!(nes.battery_ram_mut().is_none(), "the demo has no battery");
}
