//! The lazy PPU schedule (the default: the PPU runs only where the CPU could observe it) must give
//! exactly the machine the eager reference schedule gives (the PPU caught up at every point of every
//! CPU cycle): the same FrameRecord, state hash included, after every frame, on every ROM and at every
//! CPU/PPU phase, and after a restore in the middle of a frame; and the same picture.

mod support;

use anes::core::movie::{Command, InputStream};
use anes::core::{Cartridge, Nes, NesConfig, PpuCatchUp};
use support::{determinism_roms, random_input, shared_roms};

fn pair(rom: &[u8], alignment: u8) -> (Nes, Nes) {
    let config = NesConfig { cpu_ppu_alignment: Some(alignment), ..NesConfig::default() };
    let lazy = Nes::new(Cartridge::from_ines(rom).expect("ROM loads"), config);
    assert_eq!(lazy.ppu_catch_up(), PpuCatchUp::Lazy, "lazy is the default");
    let mut eager = Nes::new(Cartridge::from_ines(rom).expect("ROM loads"), config);
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    (lazy, eager)
}

fn assert_frames_agree(name: &str, alignment: u8, lazy: &mut Nes, eager: &mut Nes, input: &InputStream) {
    for (i, &frame) in input.frames().iter().enumerate() {
        let a = lazy.run_frame(frame);
        let b = eager.run_frame(frame);
        assert_eq!(a, b, "{name}, phase {alignment}: lazy and eager differ after frame {i}");
        // The picture is output, not state, so the hash does not cover it: compare it too.
        assert!(
            lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(),
            "{name}, phase {alignment}: the pictures differ after frame {i}"
        );
    }
}

fn check_all(alignment: u8, frames: usize) {
    for (seed, (name, rom)) in determinism_roms().into_iter().enumerate() {
        let (mut lazy, mut eager) = pair(&rom, alignment);
        let input = random_input(seed as u64 ^ u64::from(alignment) << 32, frames);
        assert_frames_agree(&name, alignment, &mut lazy, &mut eager, &input);
    }
}

#[test]
fn lazy_equals_eager_at_phase_0() {
    check_all(0, 240);
}

#[test]
fn lazy_equals_eager_at_phase_1() {
    check_all(1, 90);
}

#[test]
fn lazy_equals_eager_at_phases_2_and_3() {
    // MMC3 boards fall back to the eager schedule at these phases; the others stay lazy.
    check_all(2, 60);
    check_all(3, 60);
}

#[test]
fn lazy_equals_eager_on_the_timing_suites() {
    // The ROMs that probe the PPU and the MMC3 counter cycle by cycle.
    let Some(dir) = shared_roms() else {
        eprintln!("note: ../shared/conformance not present: timing-suite comparison skipped");
        return;
    };
    for suite in ["mmc3_test_2/rom_singles", "ppu_vbl_nmi/rom_singles", "sprite_hit_tests_2005.10.05"] {
        let Ok(entries) = std::fs::read_dir(dir.join(suite)) else { continue };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths.iter().filter(|p| p.extension().is_some_and(|e| e == "nes")) {
            let rom = std::fs::read(path).expect("read ROM");
            let (mut lazy, mut eager) = pair(&rom, 0);
            let input = InputStream::from_frames(vec![Default::default(); 150]);
            assert_frames_agree(&path.display().to_string(), 0, &mut lazy, &mut eager, &input);
        }
    }
}

#[test]
fn resets_and_power_cycles_agree() {
    // The console commands re-run the CPU's reset sequence and rebuild the PPU or the whole machine.
    for rom in ["roms/demo/demo.nes", "roms/stress/mmc3_a12.nes", "roms/stress/ppu_race.nes"] {
        let bytes = std::fs::read(support::repo_root().join(rom)).expect("bundled ROM");
        let mut input = random_input(11, 200);
        let mut frames = input.frames().to_vec();
        frames[37].command = Command::SoftReset;
        frames[90].command = Command::PowerCycle;
        frames[91].command = Command::SoftReset;
        frames[150].command = Command::SoftReset;
        input = InputStream::from_frames(frames);
        let (mut lazy, mut eager) = pair(&bytes, 0);
        assert_frames_agree(rom, 0, &mut lazy, &mut eager, &input);
    }
}

#[test]
fn a_restore_mid_frame_continues_exactly_as_eager() {
    let demo = std::fs::read(support::repo_root().join("roms/demo/demo.nes")).expect("bundled demo ROM");
    let input = random_input(7, 40);
    let (mut lazy, mut eager) = pair(&demo, 0);
    for &frame in input.frames().iter().take(20) {
        eager.run_frame(frame);
    }
    // Into the middle of the next frame, instruction by instruction.
    eager.begin_frame(input.frame(20));
    for _ in 0..3_000 {
        eager.step_instruction();
    }
    let mut snapshot = Vec::new();
    eager.save_state(&mut snapshot);
    lazy.load_state(&snapshot).expect("same ROM");
    assert_eq!(lazy.state_hash(), eager.state_hash());
    let a_done = {
        while !lazy.step_in_frame() {}
        lazy.frame_record()
    };
    let b_done = {
        while !eager.step_in_frame() {}
        eager.frame_record()
    };
    assert_eq!(a_done, b_done, "the rest of the restored frame");
    let rest: InputStream = InputStream::from_frames(input.frames()[21..].to_vec());
    assert_frames_agree("demo after restore", 0, &mut lazy, &mut eager, &rest);
}
