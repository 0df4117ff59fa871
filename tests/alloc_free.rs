//! Hot paths allocate nothing: stepping frames, hashing, saving into a reused buffer and loading,
//! proven with a counting global allocator.

mod support;

use support::{boot, determinism_roms, for_each_rom_in_parallel, random_input};

#[global_allocator]
static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;

fn allocations() -> u64 {
    anes_alloc_count::thread_allocations()
}

#[test]
fn frames_hashes_and_snapshots_allocate_nothing() {
    for (name, rom) in determinism_roms() {
        let input = random_input(42, 400);
        let mut nes = boot(&rom);
        let mut snapshot = Vec::with_capacity(nes.snapshot_len());
        let before = allocations();
        nes.run_frame(input.frame(0));
        nes.save_state(&mut snapshot);
        nes.load_state(&snapshot).unwrap();
        for i in 1..input.len() {
            let record = nes.run_frame(input.frame(i));
            std::hint::black_box(record);
            std::hint::black_box(nes.state_hash());
            std::hint::black_box(nes.section_digests());
            std::hint::black_box(nes.state_digest());
            std::hint::black_box(nes.step_to_next_line());
            std::hint::black_box(nes.state_digest());
            if i % 50 == 0 {
                nes.save_state(&mut snapshot);
                nes.load_state(&snapshot).unwrap();
            }
        }
        let count = allocations() - before;
        assert_eq!(count, 0, "{name}: {count} heap allocations in 400 frames");
    }
}

/// The same on every region's console, with audio output on (the APU's and any expansion chip's
/// samples drained every frame into a buffer made beforehand).
#[test]
fn frames_allocate_nothing_in_every_region_with_audio_on() {
    use anes::nes::{Cartridge, Nes, NesConfig, Region};
    for region in Region::ALL {
        for_each_rom_in_parallel(&determinism_roms(), |seed, name, rom| {
            let input = random_input(seed as u64, 30);
            let cart = Cartridge::from_ines(rom).expect("ROM loads");
            let mut nes = Nes::with_region(cart, NesConfig::default(), Some(region));
            nes.set_audio_sample_rate(Some(48_000));
            let mut samples = vec![0.0f32; 4096];
            let mut snapshot = Vec::with_capacity(nes.snapshot_len());
            nes.run_frame(input.frame(0));
            nes.drain_audio(&mut samples);
            let before = allocations();
            for i in 1..input.len() {
                std::hint::black_box(nes.run_frame(input.frame(i)));
                std::hint::black_box(nes.drain_audio(&mut samples));
                std::hint::black_box(nes.state_hash());
                if i % 10 == 0 {
                    nes.save_state(&mut snapshot);
                    nes.load_state(&snapshot).unwrap();
                }
            }
            let count = allocations() - before;
            assert_eq!(count, 0, "{name} ({region}): {count} heap allocations in 30 frames");
        });
    }
}
