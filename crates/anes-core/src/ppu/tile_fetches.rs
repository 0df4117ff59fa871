//! A rendered run's background fetches (see `Ppu::run_visible_tiles`), all of them before any of
//! its pixels: the pixels never touch the bus, nor the fetches the pixel pipeline. Where the fetches
//! are peeks, a run reads its nametable and attribute rows and its pattern table's 1 KiB windows
//! once, not each tile's bytes through the bus.

use super::background::{attribute_address, attribute_bits, increment_coarse_x, nametable_address};
use super::{PpuBus, PpuBusPeek};

/// What observes a run's background fetches (see [`PpuBus::fetches_observed`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Fetches {
    /// Nothing: the fetches are peeks.
    Unobserved,
    /// Only A12 (see [`PpuBus::only_a12_observed`]).
    A12,
    /// Only the reads' addresses (see [`PpuBus::only_reads_observed`]).
    Reads,
    /// Every access, on its dot.
    Every,
}

impl Fetches {
    /// What observes `bus`'s fetches; no CPU access falls inside a stretch, so it stays so for one.
    #[inline(always)]
    pub(super) fn of(bus: &impl PpuBus) -> Fetches {
        if !bus.fetches_observed() {
            Fetches::Unobserved
        } else if bus.only_a12_observed() {
            Fetches::A12
        } else if bus.only_reads_observed() {
            Fetches::Reads
        } else {
            Fetches::Every
        }
    }
}

/// `n` coarse X increments at once (`n` up to 32, so that the nametable switches at most once).
#[inline(always)]
pub(super) fn increment_coarse_x_by(v: u16, n: u16) -> u16 {
    let coarse_x = (v & 0x001F) + n;
    ((v & !0x001F) ^ ((coarse_x & 0x20) << 5)) | (coarse_x & 0x001F)
}

/// What observes only A12 (see [`PpuBus::only_a12_observed`]) of a tile's or a sprite slot's eight
/// dots: `nametable` (A12 low) on dots 1-4, `pattern` on dots 5-8; only the accesses that change
/// A12.
#[inline(always)]
pub(super) fn drive_a12_runs(bus: &mut impl PpuBus, nametable: u16, pattern: u16) {
    if bus.a12_high() {
        bus.set_address(nametable);
    }
    bus.advance_dots(4);
    if pattern & 0x1000 != 0 {
        bus.set_address(pattern);
    }
    bus.advance_dots(4);
}

/// The fetches of `latches.len()` tiles (up to 32) of eight dots each from `v` on, coarse X
/// incrementing after each, with the background pattern table at `table`: each tile's latches
/// (nametable byte, attribute bits, pattern low and high planes), on the bus as `fetches` says.
#[inline(always)]
pub(super) fn fetch_tiles(
    bus: &mut impl PpuBus,
    fetches: Fetches,
    v: u16,
    table: u16,
    latches: &mut [[u8; 4]],
) {
    let pattern_address = |v: u16, nametable: u8| table | (u16::from(nametable) << 4) | ((v >> 12) & 7);
    if fetches == Fetches::Every {
        let mut fetch = |addr: u16| {
            bus.set_address(addr);
            bus.advance_dots(1);
            let data = bus.read(addr);
            bus.advance_dots(1);
            data
        };
        let mut v = v;
        for latch in latches {
            let tile = fetch(nametable_address(v));
            let attribute = attribute_bits(v, fetch(attribute_address(v)));
            let pattern = pattern_address(v, tile);
            let lo = fetch(pattern);
            *latch = [tile, attribute, lo, fetch(pattern | 8)];
            v = increment_coarse_x(v);
        }
        return;
    }
    // An observer's accesses never change what a peek returns (`PpuBus::only_a12_observed`,
    // `PpuBus::only_reads_observed`): the run's data first, then what the observer is owed.
    peek_tiles(bus, v, table, latches);
    let mut v = v;
    match fetches {
        Fetches::A12 => {
            for &[tile, ..] in latches.iter() {
                // Dots 1-4 fetch the nametable and attribute bytes, 5-8 the pattern planes.
                drive_a12_runs(bus, nametable_address(v), pattern_address(v, tile));
                v = increment_coarse_x(v);
            }
        }
        Fetches::Reads => {
            for &[tile, ..] in latches.iter() {
                let pattern = pattern_address(v, tile);
                bus.hear_reads([nametable_address(v), attribute_address(v), pattern, pattern | 8]);
                v = increment_coarse_x(v);
            }
        }
        _ => {}
    }
}

/// [`fetch_tiles`]'s latches from peeks: the rows of both horizontal nametables (coarse X runs
/// into the second one at most once) and the pattern table's four 1 KiB windows, each looked up
/// once.
#[inline(always)]
fn peek_tiles(bus: &impl PpuBusPeek, v: u16, table: u16, latches: &mut [[u8; 4]]) {
    let coarse_y = usize::from((v >> 5) & 31);
    let (name_row, attribute_row) = (32 * coarse_y, 0x3C0 + 8 * (coarse_y >> 2));
    // Index coarse X + 32 for the second nametable, coarse X / 4 + 8 for its attributes.
    let (mut names, mut attributes) = ([0u8; 64], [0u8; 16]);
    for (half, nametable) in [v, v ^ 0x0400].into_iter().enumerate() {
        let window = bus.peek_window(0x2000 | (nametable & 0x0C00));
        names[32 * half..][..32].copy_from_slice(&window[name_row..][..32]);
        attributes[8 * half..][..8].copy_from_slice(&window[attribute_row..][..8]);
    }
    let patterns: [&[u8; 0x400]; 4] = core::array::from_fn(|k| bus.peek_window(table | (k as u16) << 10));
    let (fine_y, quadrant_y) = (usize::from((v >> 12) & 7), (v >> 4) & 4);
    let start = usize::from(v & 0x001F);
    for (k, latch) in latches.iter_mut().enumerate() {
        let column = (start + k) & 63;
        let tile = names[column];
        // `attribute_bits`: the quadrant's bits 1 of coarse Y and X pick the shift.
        let attribute = (attributes[column >> 2] >> (quadrant_y | (column as u16 & 2))) & 3;
        let window = patterns[usize::from(tile >> 6)];
        let row = (usize::from(tile & 63) << 4) | fine_y;
        *latch = [tile, attribute, window[row], window[row | 8]];
    }
}

#[cfg(test)]
mod tests {
    use super::{increment_coarse_x, increment_coarse_x_by};

    #[test]
    fn increments_by_n_are_n_increments() {
        for v in (0..0x8000u16).step_by(7) {
            let mut expected = v;
            for n in 0..=32 {
                assert_eq!(increment_coarse_x_by(v, n), expected, "{v:#x} + {n}");
                expected = increment_coarse_x(expected);
            }
        }
    }
}
