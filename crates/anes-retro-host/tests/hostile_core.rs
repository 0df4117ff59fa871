//! The host against a core that hands it what a careless or hostile core might (tests/hostile/):
//! every case is a typed error or a recorded refusal, never a panic (inside a callback, an abort),
//! undefined behaviour or a read of memory the core has freed.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use anes_core::movie::{ConsoleCommand, FrameInput};
use anes_lockstep::Machine;
use anes_retro_host::{HostConfig, HostError, RetroCore, RetroMachine};

/// One core per process: the tests take turns.
fn turn() -> MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(PoisonError::into_inner)
}

fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // Under target/ (not TMPDIR, which the tests must leave empty): the compiled core and the
        // contents live as long as the test process, which has no end to remove them at.
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hostile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// The hostile core, compiled once per test process with the C compiler the build script uses.
fn hostile_core() -> &'static Path {
    static CORE: OnceLock<PathBuf> = OnceLock::new();
    CORE.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/hostile_core.c");
        let out = scratch().join("hostile_core_libretro.so");
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let status = std::process::Command::new(&compiler)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-o"])
            .arg(&out)
            .arg(&source)
            .status()
            .unwrap_or_else(|e| panic!("running {compiler}: {e}"));
        assert!(status.success(), "building {} failed", source.display());
        out
    })
}

fn load_with(words: &str, config: &HostConfig) -> Result<RetroCore, HostError> {
    let content = scratch().join(format!("{}.txt", words.replace(' ', "_")));
    std::fs::write(&content, words).unwrap();
    RetroCore::load(hostile_core(), &content, config)
}

fn load(words: &str) -> RetroCore {
    load_with(words, &HostConfig::default()).unwrap_or_else(|e| panic!("{words}: {e}"))
}

fn frame() -> FrameInput {
    FrameInput::default()
}

fn power_cycle() -> FrameInput {
    FrameInput { command: ConsoleCommand::PowerCycle, ..FrameInput::default() }
}

fn bugs(core: &RetroCore) -> Vec<String> {
    core.log().0.into_iter().map(|l| l.text).filter(|t| t.starts_with("BUG:")).collect()
}

#[test]
fn pictures_0_wide_or_0_high_are_dropped_and_counted() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("width0"));
    machine.run_frame(frame());
    machine.run_frame(frame());
    assert_eq!(machine.core().dropped().0, 4, "two pictures a frame, both dropped");
    assert_eq!(machine.picture().bytes.len(), 0);
}

#[test]
fn a_picture_whose_rows_are_2_pow_63_bytes_apart_is_dropped() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("hugepitch"));
    machine.run_frame(frame());
    assert_eq!(machine.core().dropped().0, 1);
}

#[test]
fn an_audio_flood_is_dropped_and_its_count_saturates() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("audioflood"));
    machine.run_frame(frame());
    machine.run_frame(frame());
    assert_eq!(machine.core().dropped().1, u64::MAX);
    assert!(machine.section_bytes(machine.section_index("audio").unwrap()).is_empty());
}

#[test]
fn memories_larger_than_the_limit_are_absent_and_the_reason_recorded() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("hugememory hugemap"));
    machine.run_frame(frame());
    assert_eq!(machine.section_index("system_ram"), None, "2^63 bytes");
    assert_eq!(machine.section_index("map.huge.10000"), None, "2^62 bytes");
    let ram = machine.section_index("map.ram.0").expect("the sane descriptor is kept");
    assert_eq!(machine.section_bytes(ram).len(), 4096);
    let ignored = machine.core().ignored_regions();
    assert!(
        ignored.iter().any(|r| r.contains("retro_get_memory_size(RETRO_MEMORY_SYSTEM_RAM)")),
        "{ignored:?}"
    );
    assert!(ignored.iter().any(|r| r.contains("map.huge.10000")), "{ignored:?}");
}

#[test]
fn a_map_of_more_descriptors_than_a_snapshot_holds_is_refused_and_snapshots_load() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("manymaps"));
    machine.run_frame(frame());
    assert!(machine.section_count() <= anes_retro_host::snapshot::MAX_SECTIONS);
    let ignored = machine.core().ignored_regions();
    assert!(ignored.iter().any(|r| r.contains("2000 descriptors")), "{ignored:?}");
    let mut snapshot = Vec::new();
    machine.save_state(&mut snapshot);
    let hash = machine.state_hash();
    machine.run_frame(frame());
    machine.load_state(&snapshot).unwrap();
    assert_eq!(machine.state_hash(), hash);
}

#[test]
fn memory_the_core_reallocates_on_a_power_cycle_is_read_where_it_now_is() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("remap"));
    for _ in 0..3 {
        machine.run_frame(frame());
    }
    // The core unmaps its RAM on unload: reading it through the first load's pointers faults.
    machine.run_frame(power_cycle());
    machine.run_frame(frame());
    assert_eq!(machine.state_error(), None);
    let map = machine.section_bytes(machine.section_index("map.ram.0").unwrap()).to_vec();
    let ram = machine.section_bytes(machine.section_index("system_ram").unwrap()).to_vec();
    assert_eq!(&map[..2], [2, 2], "frame 2 of the second load");
    assert_eq!(map, ram);
    let region = machine.core().map_regions().remove(0);
    assert_eq!(machine.core().map_bytes(&region)[..2], [2, 2]);
    machine.core_mut().power_cycle().unwrap();
    assert!(machine.core().map_bytes(&region).is_empty(), "a region from before the last load is not read");
}

#[test]
fn a_memory_map_declared_again_during_a_frame_is_the_one_read() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("runmap"));
    machine.run_frame(frame());
    assert!(machine.section_index("map.ram.0").is_some());
    machine.run_frame(frame());
    assert_eq!(machine.section_index("map.ram.0"), None, "the first map's block is gone");
    let other = machine.section_index("map.other.0").expect("the new map's block is a section");
    assert_eq!(machine.section_bytes(other)[0], 2);
}

#[test]
fn a_failed_power_cycle_fails_the_machine_and_the_core_is_not_run_without_a_game() {
    let _turn = turn();
    let mut machine = RetroMachine::new(load("failreload"));
    machine.run_frame(frame());
    machine.run_frame(power_cycle());
    for _ in 0..3 {
        machine.run_frame(frame());
    }
    let mut snapshot = Vec::new();
    machine.save_state(&mut snapshot);
    assert!(machine.load_state(&snapshot).is_err());
    let error = machine.state_error().expect("the failure stays visible");
    assert!(error.contains("power cycle") && error.contains("retro_load_game returned false"), "{error}");
    assert!(bugs(machine.core()).is_empty(), "{:?}", bugs(machine.core()));
    assert_eq!(machine.frame(), 5);

    let core = machine.core_mut();
    let run = core.try_run_frame().unwrap_err().to_string();
    assert!(run.contains("retro_run") && run.contains("no game"), "{run}");
    let serialize = core.serialize(&mut Vec::new()).unwrap_err().to_string();
    assert!(serialize.contains("retro_serialize") && serialize.contains("no game"), "{serialize}");
    assert!(core.unserialize(&[0; 64]).is_err());
    assert!(core.memory(2).is_none());
    core.run_frame();
    assert!(bugs(core).is_empty(), "{:?}", bugs(core));
}

#[test]
fn a_failed_serialization_stays_visible() {
    let _turn = turn();
    // Every second retro_serialize fails: the frame's succeeds, the snapshot's does not.
    let machine = RetroMachine::new(load("flakyserialize"));
    assert_eq!(machine.state_error(), None);
    let mut snapshot = Vec::new();
    machine.save_state(&mut snapshot);
    let error = machine.state_error().expect("the snapshot's failure is kept");
    assert!(error.contains("retro_serialize of 64 bytes failed"), "{error}");
    drop(machine);

    let config = HostConfig { max_state_len: 16, ..HostConfig::default() };
    let machine = RetroMachine::new(load_with("small", &config).unwrap());
    let error = machine.state_error().expect("a state over the limit is an error, not no state");
    assert!(error.contains("more than the 16-byte limit"), "{error}");
}

#[test]
fn a_core_refusing_its_content_says_what_it_asked_for_and_logged() {
    let _turn = turn();
    let error = load_with("hwrender", &HostConfig::default()).unwrap_err();
    assert!(matches!(error, HostError::LoadGame { .. }), "{error}");
    let text = error.to_string();
    assert!(text.contains("SET_HW_RENDER"), "{text}");
    assert!(text.contains("no hardware rendering context"), "{text}");
}
