//! Hot paths allocate nothing: stepping frames, hashing, saving into a reused buffer and loading,
//! proven with a counting global allocator.
#![allow(unsafe_code)]

mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use support::{boot, determinism_roms, random_input};

struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; only counts allocations made by
// the current thread (other test threads do not disturb the count).
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
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
