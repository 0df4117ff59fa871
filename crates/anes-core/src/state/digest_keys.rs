//! The sync digest's keys (see `digest.rs`): a leaf, so that the cartridge keeps its memory sum
//! without depending on the console.

use super::section::Section;

/// splitmix64's finalizer (a bijection of u64) of `x` plus a fixed offset.
#[inline(always)]
pub(super) const fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The odd key of byte (or word) `index` of `section`.
#[inline(always)]
pub(super) const fn key(section: Section, index: usize) -> u64 {
    mix(((section as u64) << 40) ^ index as u64) | 1
}

/// The change of a memory accumulator when byte `index` of `section` goes from `old` to `new`.
#[inline(always)]
pub(crate) fn memory_delta(section: Section, index: usize, old: u8, new: u8) -> u64 {
    key(section, index).wrapping_mul(u64::from(new).wrapping_sub(u64::from(old)))
}
