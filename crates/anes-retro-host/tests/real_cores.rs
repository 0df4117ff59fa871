//! Debian's mGBA, which frees its memory in `retro_unload_game` and allocates it anew on load: after
//! a power cycle the machine reads the new load's memory map, not the freed one.

use std::path::{Path, PathBuf};

use anes_core::movie::{ConsoleCommand, FrameInput};
use anes_lockstep::Machine;
use anes_retro_host::{HostConfig, RetroCore, RetroMachine};

const DEBIAN_CORES: &str = "/usr/lib/x86_64-linux-gnu/libretro";

/// A core and a ROM under the shared libretro folder; fails naming what is missing.
fn core_and(core: &str, rom: &str) -> (PathBuf, PathBuf) {
    let core = Path::new(DEBIAN_CORES).join(core);
    assert!(core.is_file(), "needs {}: bash scripts/install-libretro-cores.sh installs it", core.display());
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/libretro");
    let rom = shared.join(rom);
    assert!(rom.is_file(), "needs {}", rom.display());
    (core, rom)
}

#[test]
fn mgba_after_a_power_cycle_is_read_through_its_new_memory_map() {
    let (core, rom) = core_and("mgba_libretro.so", "gba/arm/arm.gba");
    let loaded = RetroCore::load(&core, &rom, &HostConfig::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut machine = RetroMachine::new(loaded);
    let before = machine.core().map_regions();
    assert!(!before.is_empty(), "mGBA declares a memory map");
    for _ in 0..30 {
        machine.run_frame(FrameInput::default());
    }
    machine.run_frame(FrameInput { command: ConsoleCommand::PowerCycle, ..FrameInput::default() });
    for _ in 0..30 {
        machine.run_frame(FrameInput::default());
    }
    assert_eq!(machine.state_error(), None);
    let after = machine.core().map_regions();
    assert_eq!(
        before.iter().map(|r| (&r.name, r.len)).collect::<Vec<_>>(),
        after.iter().map(|r| (&r.name, r.len)).collect::<Vec<_>>(),
        "the same regions, read where they are now"
    );
    for region in &before {
        assert!(machine.core().map_bytes(region).is_empty(), "{} of the first load is not read", region.name);
    }
    for region in &after {
        let index = machine.section_index(&region.name).unwrap();
        assert_eq!(machine.section_bytes(index), machine.core().map_bytes(region), "{}", region.name);
    }
    let mut snapshot = Vec::new();
    machine.save_state(&mut snapshot);
    let hash = machine.state_hash();
    machine.run_frame(FrameInput::default());
    machine.load_state(&snapshot).unwrap();
    assert_eq!(machine.state_hash(), hash);
}
