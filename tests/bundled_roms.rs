//! Every bundled ROM loads, keeps changing its state (it is not idle) and responds to input.

mod support;

use anes::nes::StateHash;
use anes::nes::movie::{FrameInput, InputStream};
use support::{boot, random_input, repo_root};

fn bundled() -> Vec<(String, Vec<u8>)> {
    let mut roms = Vec::new();
    for dir in ["roms/demo", "roms/stress"] {
        let mut paths: Vec<_> = std::fs::read_dir(repo_root().join(dir))
            .expect("roms/ is part of the repository")
            .map(|e| e.expect("readable entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "nes"))
            .collect();
        paths.sort();
        for path in paths {
            roms.push((path.display().to_string(), std::fs::read(&path).expect("read ROM")));
        }
    }
    assert!(roms.len() >= 8, "the demo and seven stress ROMs are bundled");
    roms
}

fn hashes(rom: &[u8], input: &InputStream, frames: usize) -> Vec<StateHash> {
    let mut nes = boot(rom);
    (0..frames).map(|i| nes.run_frame(input.frame(i)).state_hash).collect()
}

#[test]
fn bundled_roms_run_change_state_and_respond_to_input() {
    let demo_input =
        InputStream::from_bytes(&std::fs::read(repo_root().join("roms/demo/demo.input")).unwrap())
            .expect("the bundled input stream is valid");
    assert_eq!(demo_input.len(), 5_000);
    let other_input = random_input(0xB0B, 600);
    for (name, rom) in bundled() {
        let with_demo_input = hashes(&rom, &demo_input, 600);
        // Not idle: over the last 100 frames, no state repeats from one frame to the next.
        for window in with_demo_input[500..].windows(2) {
            assert_ne!(window[0], window[1], "{name}: state stopped changing");
        }
        let mut distinct = with_demo_input.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), 600, "{name}: a state repeats within 600 frames");
        // Input matters: another stream (and no input at all) leads elsewhere by frame 600.
        let with_other_input = hashes(&rom, &other_input, 600);
        let idle = hashes(&rom, &InputStream::from_frames(vec![FrameInput::default(); 600]), 600);
        assert_ne!(with_demo_input[599], with_other_input[599], "{name}: ignores input");
        assert_ne!(with_demo_input[599], idle[599], "{name}: ignores input");
    }
}
