//! Determinism suite: same ROM + same input stream gives bit-identical state, every frame, in any
//! instance, thread, or after any save/restore.

mod support;

use anes::nes::movie::InputStream;
use anes::nes::{FrameRecord, Nes, Section};
use proptest::prelude::*;
use support::{boot, determinism_roms, next_random, random_input};

fn run_records(nes: &mut Nes, input: &InputStream) -> Vec<FrameRecord> {
    input.frames().map(|frame| nes.run_frame(frame)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Two instances in one process, fed the same stream, agree on every FrameRecord.
    #[test]
    fn two_instances_agree(rom_pick in any::<usize>(), seed in any::<u64>(), frames in 20usize..90) {
        let roms = determinism_roms();
        let (name, rom) = &roms[rom_pick % roms.len()];
        let input = random_input(seed, frames);
        let a = run_records(&mut boot(rom), &input);
        let b = run_records(&mut boot(rom), &input);
        prop_assert_eq!(a, b, "{} diverged", name);
    }

    /// An instance on another thread agrees with one on this thread.
    #[test]
    fn other_thread_agrees(rom_pick in any::<usize>(), seed in any::<u64>(), frames in 20usize..90) {
        let roms = determinism_roms();
        let (name, rom) = roms[rom_pick % roms.len()].clone();
        let input = random_input(seed, frames);
        let here = run_records(&mut boot(&rom), &input);
        let thread_input = input.clone();
        let there = std::thread::spawn(move || run_records(&mut boot(&rom), &thread_input)).join().unwrap();
        prop_assert_eq!(here, there, "{} diverged across threads", name);
    }
}

/// GGPO-style sync test: at every frame, save, run k frames, load, rerun the same k frames, and
/// compare all k records.
#[test]
fn sync_test_save_run_load_rerun() {
    let mut rng = 0x5EED_0001;
    for (name, rom) in determinism_roms() {
        let k = 1 + (next_random(&mut rng) % 6) as usize;
        let input = random_input(next_random(&mut rng), 60 + k);
        let mut nes = boot(&rom);
        let mut snapshot = Vec::with_capacity(nes.snapshot_len());
        for frame in 0..60 {
            nes.save_state(&mut snapshot);
            let first: Vec<_> = (0..k).map(|i| nes.run_frame(input.frame(frame + i))).collect();
            nes.load_state(&snapshot).expect("own snapshot loads");
            let second: Vec<_> = (0..k).map(|i| nes.run_frame(input.frame(frame + i))).collect();
            assert_eq!(first, second, "{name}: rerun of frames {frame}..{} after restore differs", frame + k);
            nes.load_state(&snapshot).unwrap();
            nes.run_frame(input.frame(frame));
        }
    }
}

/// Three passes: uninterrupted; restored into a fresh instance; restored again from the restored
/// one's own snapshot. Compared section by section, so state missing from the snapshot is named.
#[test]
fn three_pass_hidden_state_check() {
    let mut rng = 0x5EED_0002;
    for (name, rom) in determinism_roms() {
        let input = random_input(next_random(&mut rng), 120);
        let split = 30 + (next_random(&mut rng) % 60) as usize;
        let mut uninterrupted = boot(&rom);
        let mut snapshot = Vec::new();
        for i in 0..split {
            uninterrupted.run_frame(input.frame(i));
        }
        uninterrupted.save_state(&mut snapshot);
        let mut restored = boot(&rom);
        restored.load_state(&snapshot).unwrap();
        let mut restored_again = boot(&rom);
        let mut second = Vec::new();
        restored.save_state(&mut second);
        restored_again.load_state(&second).unwrap();
        for i in split..input.len() {
            let frame = input.frame(i);
            let records =
                [uninterrupted.run_frame(frame), restored.run_frame(frame), restored_again.run_frame(frame)];
            if records[0] != records[1] || records[0] != records[2] {
                let digests = [
                    uninterrupted.section_digests(),
                    restored.section_digests(),
                    restored_again.section_digests(),
                ];
                let differing: Vec<&str> = Section::ALL
                    .iter()
                    .enumerate()
                    .filter(|&(s, _)| {
                        digests[0][s].1 != digests[1][s].1 || digests[0][s].1 != digests[2][s].1
                    })
                    .map(|(_, section)| section.name())
                    .collect();
                panic!("{name}: frame {i} after restoring at {split}: sections differ: {differing:?}");
            }
        }
    }
}

/// Restoring at hundreds of random points (between frames and mid-frame, after a random number of
/// instructions) and running on is bit-identical to never having stopped.
#[test]
fn restore_at_random_points_is_bit_identical() {
    let mut rng = 0x5EED_0003;
    let roms = determinism_roms();
    let points_per_rom = 300 / roms.len() + 1;
    let mut checked = 0;
    for (name, rom) in &roms {
        let frames = 150;
        let input = random_input(next_random(&mut rng), frames);
        let reference: Vec<FrameRecord> = run_records(&mut boot(rom), &input);
        let mut points: Vec<(usize, u32)> = (0..points_per_rom)
            .map(|_| {
                (
                    (next_random(&mut rng) % (frames as u64 - 10)) as usize,
                    (next_random(&mut rng) % 4000) as u32,
                )
            })
            .collect();
        points.sort();
        // One probe walks through all points in order; at each it is snapshotted, and a second machine
        // restored from the snapshot must reproduce the reference records from there on.
        let mut probe = boot(rom);
        let (mut probe_frame, mut probe_steps) = (0usize, 0u32);
        let mut restored = boot(rom);
        let mut snapshot = Vec::new();
        for (frame, instructions) in points {
            while probe_frame < frame {
                if probe_steps > 0 {
                    probe.run_until_frame_end();
                } else {
                    probe.run_frame(input.frame(probe_frame));
                }
                probe_frame += 1;
                probe_steps = 0;
            }
            if probe_steps == 0 {
                let pending = input.frame(frame);
                probe.set_buttons(0, pending.pads[0]).expect("port 0");
                probe.set_buttons(1, pending.pads[1]).expect("port 1");
            }
            let pictures_before = probe.ppu().frames_completed();
            while probe_steps < instructions && probe.ppu().frames_completed() == pictures_before {
                probe.step_instruction();
                probe_steps += 1;
            }
            // 4,000 instructions of at most 7 cycles plus one sprite DMA stay inside a 29,780-cycle frame.
            assert_eq!(
                probe.ppu().frames_completed(),
                pictures_before,
                "{name}: the probe left frame {frame}"
            );
            probe.save_state(&mut snapshot);
            restored.load_state(&snapshot).unwrap();
            // Finish the interrupted frame with its input already latched, then run on.
            restored.run_until_frame_end();
            let mut got = vec![restored.frame_record()];
            for i in frame + 1..(frame + 6).min(frames) {
                got.push(restored.run_frame(input.frame(i)));
            }
            assert_eq!(
                got,
                reference[frame..frame + got.len()],
                "{name}: restore at frame {frame} + {probe_steps} instructions diverges"
            );
            checked += 1;
        }
    }
    assert!(checked >= 300, "only {checked} restore points");
}
