//! The host with the test core in this process. A core keeps its state in globals, so a process
//! holds one core at a time: everything runs in one test, in order.

use std::path::{Path, PathBuf};

use anes_core::movie::FrameInput;
use anes_lockstep::Machine;
use anes_retro_host::{HostConfig, HostError, RetroCore, RetroMachine, TEST_CORE_A};

/// The test's folder, removed with what is in it when dropped, also when the test panics.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch() -> Scratch {
    let dir = std::env::temp_dir().join(format!("anes-retro-host-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

fn load(core: &Path, content: &Path, options: &[(&str, &str)]) -> Result<RetroCore, HostError> {
    let config = HostConfig {
        options: options.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
        ..HostConfig::default()
    };
    RetroCore::load(core, content, &config)
}

#[test]
fn the_host_with_the_test_core() {
    let scratch = scratch();
    let dir = scratch.0.as_path();
    let content = dir.join("content.bin");
    std::fs::write(&content, b"some content").unwrap();
    let core = Path::new(TEST_CORE_A);

    // Bad input is a typed error naming the file, never a panic.
    assert!(matches!(load(&dir.join("none.so"), &content, &[]), Err(HostError::CoreNotFound { .. })));
    assert!(matches!(load(dir, &content, &[]), Err(HostError::CoreNotAFile { .. })));
    assert!(matches!(load(&content, &content, &[]), Err(HostError::Open { .. })));
    match load(core, &dir.join("none.bin"), &[]) {
        Err(HostError::Content { path, .. }) => assert_eq!(path, dir.join("none.bin")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(load(core, dir, &[]), Err(HostError::Content { .. })));
    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").unwrap();
    assert!(
        matches!(load(core, &empty, &[]), Err(HostError::LoadGame { .. })),
        "the test core refuses no bytes"
    );
    match load(core, &content, &[("anestest_fault", "sometimes")]) {
        Err(HostError::Option { key, problem, .. }) => {
            assert_eq!(key, "anestest_fault");
            assert!(problem.contains("none, timestamp, random, leak, forget, grow"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(load(core, &content, &[("no_such_option", "1")]), Err(HostError::Option { .. })));

    // One core per process.
    let mut first = load(core, &content, &[("anestest_step", "3")]).expect("the test core loads");
    assert!(matches!(load(core, &content, &[]), Err(HostError::Busy)));
    assert_eq!(first.name(), "anes test core 1.0-a");
    let options = first.options();
    let step = options.iter().find(|o| o.key == "anestest_step").unwrap();
    assert_eq!((step.default.as_str(), step.value.as_str()), ("1", "3"));
    assert!(first.set_option("anestest_step", "2").is_err(), "2 is not a listed value");
    let maps: Vec<(String, usize, usize)> =
        first.map_regions().iter().map(|m| (m.name.clone(), m.start, m.len)).collect();
    assert_eq!(maps, [("map.ram.0".to_owned(), 0, 256), ("map.sram.6000".to_owned(), 0x6000, 64)]);
    first.run_frame();
    let log = first.log().0;
    assert!(log.iter().any(|l| l.text.contains("fault 0, step 3, 12 bytes of content")), "{log:?}");
    drop(first);

    // The machine: the map and system RAM are one block of the core's; the frame's hash sees a
    // byte flipped through either, and leaves the audio out only when asked.
    let mut machine = RetroMachine::new(load(core, &content, &[]).unwrap());
    for _ in 0..10 {
        machine.run_frame(FrameInput::default());
    }
    let map = machine.section_index("map.ram.0").unwrap();
    let ram = machine.section_index("system_ram").unwrap();
    let audio = machine.section_index("audio").unwrap();
    let before = machine.state_hash();
    machine.flip_state_bit(map, 0x44, 2).unwrap();
    assert_ne!(machine.state_hash(), before);
    machine.flip_state_bit(ram, 0x44, 2).unwrap();
    assert_eq!(machine.state_hash(), before, "flipped back through the other view");
    machine.flip_state_bit(audio, 3, 0).unwrap();
    assert_ne!(machine.state_hash(), before, "the audio is hashed by default");
    drop(machine);

    let mut quiet = RetroMachine::with_audio_hashed(load(core, &content, &[]).unwrap(), false);
    quiet.run_frame(FrameInput::default());
    let before = quiet.state_hash();
    let audio = quiet.section_index("audio").unwrap();
    quiet.flip_state_bit(audio, 3, 0).unwrap();
    assert_eq!(quiet.state_hash(), before, "audio left out of the hash");
    let picture = quiet.section_index("picture").unwrap();
    quiet.flip_state_bit(picture, 3, 0).unwrap();
    assert_ne!(quiet.state_hash(), before, "the picture is still hashed");

    // A snapshot loads back into the same machine with the same hash.
    let mut snapshot = Vec::new();
    quiet.save_state(&mut snapshot);
    let hash = quiet.state_hash();
    quiet.run_frame(FrameInput::default());
    quiet.load_state(&snapshot).unwrap();
    assert_eq!(quiet.state_hash(), hash);
    assert!(quiet.load_state(&snapshot[..20]).is_err(), "a cut snapshot is refused");
}
