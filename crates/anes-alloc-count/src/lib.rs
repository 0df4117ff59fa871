//! A global allocator that counts, for the tests that prove a hot path allocates nothing.
//!
//! It forwards every call to the system allocator unchanged and counts each allocation and
//! reallocation twice: for the calling thread (so other test threads do not disturb a count taken
//! under libtest) and for the whole process (for tests with their own `main` that run threads of
//! their own). A test binary installs it in two lines:
//!
//! ```
//! #[global_allocator]
//! static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;
//!
//! let before = anes_alloc_count::thread_allocations();
//! let sum: u64 = (0..100u64).sum();
//! assert_eq!(anes_alloc_count::thread_allocations(), before, "{sum}");
//! let grown = vec![sum; 4];
//! assert_eq!(anes_alloc_count::thread_allocations(), before + 1, "{grown:?}");
//! ```
// Implementing `GlobalAlloc` is unsafe by definition; the impl only forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// The counting allocator. Install it with `#[global_allocator]`; counting costs one thread-local
/// increment and one relaxed atomic increment per allocation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    static THREAD: Cell<u64> = const { Cell::new(0) };
}

static PROCESS: AtomicU64 = AtomicU64::new(0);

fn count() {
    // `try_with`: during a thread's teardown its local may be gone; the process count still sees it.
    let _ = THREAD.try_with(|c| c.set(c.get() + 1));
    PROCESS.fetch_add(1, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator with the caller's arguments unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `alloc`'s contract, which `System.alloc` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Allocations (and reallocations) made so far by the calling thread. Only counts while
/// [`Counting`] is the global allocator.
pub fn thread_allocations() -> u64 {
    THREAD.with(Cell::get)
}

/// Allocations (and reallocations) made so far by every thread of the process.
pub fn process_allocations() -> u64 {
    PROCESS.load(Ordering::Relaxed)
}
