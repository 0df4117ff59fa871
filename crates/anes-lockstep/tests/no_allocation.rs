//! Zero heap allocation per frame after warm-up, in both modes, counted by a global allocator over
//! 10,000 frames of the runner (on `FakeMachine`, so the count covers the runner alone) and 3,000
//! frames of two NES consoles (the core's own allocation freedom has its own test in the workspace),
//! and 300 frames of them compared at every scanline and at every instruction (the sync digest).
//! The count is process-wide, so this test has its own `main` (no libtest threads).

use anes_core::NesConfig;
use anes_core::movie::{FrameInput, InputStream};
use anes_fixtures::{FakeMachine, tiny_rom};
use anes_lockstep::{Granularity, Lockstep, LockstepConfig, Machine, NesMachine, RunOutcome, Threading};

#[global_allocator]
static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;

const FRAMES: u64 = 10_000;
const NES_FRAMES: u64 = 3_000;
const NES_FINE_FRAMES: u64 = 300;

fn allocations_during(f: impl FnOnce()) -> u64 {
    let before = anes_alloc_count::process_allocations();
    f();
    anes_alloc_count::process_allocations() - before
}

/// Allocations of a 10,000-frame run after a warm-up run, and of a 10-frame run.
fn measure<M: Machine<Input = FrameInput> + Clone + Send>(
    machine: M,
    threading: Threading,
    granularity: Granularity,
    inputs: &InputStream,
    frames: u64,
) -> (u64, u64) {
    let config = LockstepConfig { threading, granularity, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine.clone(), machine, config).unwrap();
    // Warm-up: past the first checkpoint ring wrap and every lazily grown buffer.
    assert_eq!(lockstep.run(inputs, 600), RunOutcome::Agreed { frames: 600 });
    let short =
        allocations_during(|| assert_eq!(lockstep.run(inputs, 10), RunOutcome::Agreed { frames: 10 }));
    let long = allocations_during(|| assert_eq!(lockstep.run(inputs, frames), RunOutcome::Agreed { frames }));
    (short, long)
}

fn main() {
    no_allocation_per_frame_in_either_mode();
    println!("no_allocation_per_frame_in_either_mode: 1 passed, 0 failed");
}

fn no_allocation_per_frame_in_either_mode() {
    let inputs = InputStream::from_frames(
        (0..20_000u32).map(|i| FrameInput::buttons((i / 5) as u8, (i / 3) as u8)).collect(),
    );
    let nes = NesMachine::from_ines(&tiny_rom(), NesConfig::default()).unwrap();
    for (name, threading) in
        [("same thread", Threading::SameThread), ("threaded", Threading::Threaded { window: 8 })]
    {
        let (short, long) = measure(FakeMachine::new(5), threading, Granularity::Frame, &inputs, FRAMES);
        eprintln!("FakeMachine, {name}: {short} allocations in 10 frames, {long} in {FRAMES}");
        let mut counts = vec![short, long];
        for (granularity, frames) in [
            (Granularity::Frame, NES_FRAMES),
            (Granularity::Scanline, NES_FINE_FRAMES),
            (Granularity::Instruction, NES_FINE_FRAMES),
        ] {
            // Inside frames, a window of a thousand records (`anes lockstep --threads` uses thousands): with
            // 8, every other instruction was a hand-off between threads, and on a busy machine each
            // wake-up waited its turn (8.5 minutes for 300 frames beside other builds).
            let threading = match threading {
                Threading::Threaded { .. } if granularity != Granularity::Frame => {
                    Threading::Threaded { window: 1024 }
                }
                other => other,
            };
            let (nes_short, nes_long) = measure(nes.clone(), threading, granularity, &inputs, frames);
            eprintln!(
                "NesMachine, {name}, {granularity}: {nes_short} allocations in 10 frames, {nes_long} in {frames}"
            );
            counts.extend([nes_short, nes_long]);
        }
        match threading {
            Threading::SameThread => {
                assert!(counts.iter().all(|&c| c == 0), "{name}: nothing allocates: {counts:?}");
            }
            Threading::Threaded { .. } => {
                // Each run spawns its two scoped workers and channels: a fixed cost per run that
                // must not grow with the number of frames.
                // (Measured: 17-25 with a window of 8, 33-37 with 1,024, whose batches are first
                // allocated in each run, either way: from thread spawns, channels and their wakers.)
                for count in counts {
                    assert!(count <= 48, "{name}: {count} allocations in one run");
                }
            }
        }
    }
}
