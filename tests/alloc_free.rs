//! Hot paths allocate nothing: stepping frames, hashing, saving into a reused buffer and loading,
//! proven with a counting global allocator.

mod support;

use support::{boot, determinism_roms, random_input};

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
