//! The lazy APU schedule (`ApuCatchUp::Lazy`, the default) produces exactly the machine of the eager
//! reference schedule (`ApuCatchUp::Eager`: every unit ticked every CPU cycle): the same frame records
//! at every frame end, and the same CPU registers, CPU cycle and APU state after every instruction,
//! across soft resets, power cycles and restores. The APU reaches the CPU only through its IRQ line,
//! the DMC's DMA requests and $4015, so a lazy APU that showed a stale value would show up here as a
//! different instruction stream or cycle count.

mod support;

use anes::nes::movie::{ConsoleCommand, FrameInput};
use anes::nes::{ApuCatchUp, Cartridge, Nes, NesConfig, Region};
use support::{boot, conformance_roms, for_each_rom_in_parallel, random_input, repo_root};

/// The APU-heavy ROMs: ours (the demo plays all five channels with DMC samples; the stress ROMs
/// collide DMA with everything) and, when present, the APU and interrupt timing suites.
fn apu_roms() -> Vec<(String, Vec<u8>)> {
    let mut roms = Vec::new();
    for rel in [
        "roms/demo/demo.nes",
        "roms/stress/dma_collide.nes",
        "roms/stress/frame_irq.nes",
        "roms/regions/timing.nes",
    ] {
        roms.push((rel.to_string(), std::fs::read(repo_root().join(rel)).expect("bundled ROM")));
    }
    roms.extend(conformance_roms(
        "APU timing suites for the APU schedule tests",
        &[
            "apu_test/rom_singles/1-len_ctr.nes",
            "apu_test/rom_singles/3-irq_flag.nes",
            "apu_test/rom_singles/4-jitter.nes",
            "apu_test/rom_singles/5-len_timing.nes",
            "apu_test/rom_singles/6-irq_flag_timing.nes",
            "apu_test/rom_singles/7-dmc_basics.nes",
            "apu_test/rom_singles/8-dmc_rates.nes",
            "cpu_interrupts_v2/rom_singles/4-irq_and_dma.nes",
            "cpu_interrupts_v2/rom_singles/3-nmi_and_irq.nes",
            "cpu_exec_space/test_cpu_exec_space_apu.nes",
        ],
    ));
    roms
}

fn pair(rom: &[u8], alignment: u8) -> (Nes, Nes) {
    pair_in(rom, alignment, None)
}

/// [`pair`] with the consoles' region chosen (`None`: the header's).
fn pair_in(rom: &[u8], alignment: u8, region: Option<Region>) -> (Nes, Nes) {
    let config = NesConfig { cpu_ppu_alignment: Some(alignment), ..NesConfig::default() };
    let lazy = Nes::with_region(Cartridge::from_ines(rom).expect("ROM loads"), config, region);
    let mut eager = lazy.clone();
    eager.set_apu_catch_up(ApuCatchUp::Eager);
    assert_eq!(lazy.apu_catch_up(), ApuCatchUp::Lazy);
    (lazy, eager)
}

/// Frame records agree at every frame end over long runs with random input, soft resets, power cycles
/// and a restore of a mid-frame snapshot into the lazy machine.
#[test]
fn lazy_apu_equals_eager_at_every_frame() {
    for_each_region_pair(None, 600);
}

/// The same in PAL (its own frame counter steps, noise and DMC tables) and Dendy consoles.
#[test]
fn lazy_apu_equals_eager_at_every_frame_in_pal_and_dendy() {
    for region in [Region::Pal, Region::Dendy] {
        for_each_region_pair(Some(region), 500);
    }
}

fn for_each_region_pair(region: Option<Region>, frames: usize) {
    for_each_rom_in_parallel(&apu_roms(), |_, name, rom| {
        for alignment in [0, 3] {
            let (mut lazy, mut eager) = pair_in(rom, alignment, region);
            let name = format!("{name} ({})", lazy.region());
            let input = random_input(0xA9 + u64::from(alignment), frames);
            for i in 0..input.len() {
                let mut frame = input.frame(i);
                frame.command = match i {
                    200 => ConsoleCommand::SoftReset,
                    450 => ConsoleCommand::PowerCycle,
                    _ => ConsoleCommand::None,
                };
                if i == 320 {
                    // Restore a snapshot taken mid-frame by the eager machine into the lazy one.
                    for _ in 0..1234 {
                        eager.step_instruction();
                        lazy.step_instruction();
                    }
                    let mut snapshot = Vec::new();
                    eager.save_state(&mut snapshot);
                    lazy.load_state(&snapshot).unwrap();
                }
                let a = lazy.run_frame(frame);
                let b = eager.run_frame(frame);
                assert_eq!(a, b, "{name}, phase {alignment}: frame {i} differs");
            }
        }
    });
}

/// After every instruction: the CPU (registers, interrupt latches), the cycle count and the APU
/// state agree. The APU state is compared as the public API shows it, caught up.
#[test]
fn lazy_apu_equals_eager_after_every_instruction() {
    let frames: usize =
        std::env::var("ANES_APU_SCHEDULE_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    for (name, rom) in apu_roms() {
        let (mut lazy, mut eager) = pair(&rom, 1);
        let input = random_input(7, frames);
        for i in 0..frames {
            let mut frame = input.frame(i);
            if i == frames / 2 {
                frame.command = ConsoleCommand::SoftReset;
            }
            lazy.begin_frame(frame);
            eager.begin_frame(frame);
            let mut instructions = 0u64;
            loop {
                let done = lazy.step_in_frame();
                assert_eq!(done, eager.step_in_frame(), "{name}: frame {i} ends differently");
                instructions += 1;
                assert_eq!(
                    (lazy.cpu_cycle(), lazy.cpu(), lazy.apu().state()),
                    (eager.cpu_cycle(), eager.cpu(), eager.apu().state()),
                    "{name}: frame {i}, instruction {instructions} differs"
                );
                if done {
                    break;
                }
            }
            assert_eq!(lazy.state_hash(), eager.state_hash(), "{name}: frame {i}");
        }
    }
}

/// Audio output forces every cycle to be ticked (the mixer wants every level): the machine and the
/// samples are the same on either schedule, and switching schedules mid-run changes nothing.
#[test]
fn audio_output_and_schedule_switches_keep_the_machine_exact() {
    let rom = std::fs::read(repo_root().join("roms/demo/demo.nes")).unwrap();
    let mut lazy = boot(&rom);
    let mut eager = boot(&rom);
    eager.set_apu_catch_up(ApuCatchUp::Eager);
    lazy.set_audio_sample_rate(Some(48_000));
    eager.set_audio_sample_rate(Some(48_000));
    let input = random_input(3, 200);
    let (mut a, mut b) = (vec![0.0f32; 4096], vec![0.0f32; 4096]);
    for i in 0..200 {
        if i == 100 {
            lazy.set_apu_catch_up(ApuCatchUp::Eager);
            eager.set_apu_catch_up(ApuCatchUp::Lazy);
        }
        if i == 150 {
            lazy.set_audio_sample_rate(None);
            lazy.set_apu_catch_up(ApuCatchUp::Lazy);
        }
        assert_eq!(lazy.run_frame(input.frame(i)), eager.run_frame(input.frame(i)), "frame {i}");
        let (n, m) = (lazy.drain_audio(&mut a), eager.drain_audio(&mut b));
        if i < 150 {
            assert_eq!(a[..n], b[..m], "frame {i}: audio differs");
        }
    }
    // A power cycle keeps audio on and the chosen schedule.
    eager.run_frame(FrameInput { pads: [0, 0], command: ConsoleCommand::PowerCycle });
    assert_eq!(eager.apu_catch_up(), ApuCatchUp::Lazy);
    eager.run_frame(FrameInput::default());
    assert!(eager.drain_audio(&mut b) > 700, "audio continues after a power cycle");
}

/// A board's sound chip runs lazily with audio output off and every cycle with it on (its level
/// feeds each sample): the machines agree at every frame and, while the VRC6 plays all three
/// channels, after every instruction.
#[test]
fn the_vrc6_sound_runs_the_same_lazy_and_every_cycle() {
    let rom = std::fs::read(repo_root().join("roms/vrc6/vrc6b.nes")).unwrap();
    let mut lazy = boot(&rom);
    let mut every_cycle = boot(&rom);
    every_cycle.set_audio_sample_rate(Some(44_100));
    let mut buffer = vec![0.0f32; 4096];
    for i in 0..80 {
        assert_eq!(
            lazy.run_frame(FrameInput::default()),
            every_cycle.run_frame(FrameInput::default()),
            "frame {i}"
        );
        every_cycle.drain_audio(&mut buffer);
    }
    for step in 0..20_000 {
        lazy.step_instruction();
        every_cycle.step_instruction();
        assert_eq!(lazy.state_hash(), every_cycle.state_hash(), "instruction {step} after frame 80");
    }
}
