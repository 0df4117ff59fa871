//! The sync digest: a 64-bit digest of the whole machine state, cheap enough to compare after every
//! instruction ([`Nes::state_digest`]).
//!
//! It covers exactly what the blake3 state hash covers (the ROM identity and every byte of every
//! [`Section`]) but is derived data: never stored, hashed or snapshotted, so frame records, snapshots
//! and golden files are untouched. Two parts, added up modulo 2^64, then mixed:
//!
//! - The large memories (work RAM, CIRAM, cartridge PRG RAM and CHR RAM) contribute
//!   `Σ key(section, index) × byte`, maintained on every write in O(1) (add `key × (new − old)`):
//!   `Nes::ram_acc` for work RAM, the cartridge's accumulator for what its bus writes (PRG RAM, CHR
//!   RAM, four-screen VRAM and CIRAM, whose writes all go through [`crate::Cartridge::ppu_write`]).
//!   Whatever replaces memory wholesale (power-on, `load_state`, a flipped bit, a host's battery
//!   load) recomputes them from scratch; a host's `&mut` access marks them stale until the next
//!   frame, and a stale digest is computed from scratch.
//! - Every other section (CPU, bus, PPU registers and OAM, APU, mapper registers, controllers, the
//!   machine section) is read directly at each call, 8 bytes at a time: `Σ key(section, word) ×
//!   word`.
//!
//! Every key is odd, so a change of one byte (or one word) changes the sum by `key × delta`, which is
//! never 0 modulo 2^64, and the final mix is a bijection: any single changed byte changes the digest,
//! with certainty (`tests/state.rs` flips every snapshot byte). Keys are fixed constants (splitmix64's
//! finalizer of the position), so the digest is the same in every run, thread and build. Nothing
//! here allocates.

use super::Section;
use super::digest_keys::{key, mix};
use crate::nes::Nes;

/// `Σ key(section, index) × byte` over a whole memory, from scratch.
fn memory_sum(section: Section, bytes: &[u8]) -> u64 {
    let mut sum = 0u64;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte != 0 {
            sum = sum.wrapping_add(key(section, index).wrapping_mul(u64::from(byte)));
        }
    }
    sum
}

/// Words with a precomputed key per section (longer sections compute the rest).
const TABLE_WORDS: usize = 64;

const fn word_keys() -> [[u64; TABLE_WORDS]; Section::ALL.len()] {
    let mut keys = [[0u64; TABLE_WORDS]; Section::ALL.len()];
    let mut s = 0;
    while s < Section::ALL.len() {
        let mut w = 0;
        while w < TABLE_WORDS {
            // Word keys live above the byte keys' indexes (bit 39), so the two never coincide.
            keys[s][w] = key(Section::ALL[s], (1 << 39) | w);
            w += 1;
        }
        s += 1;
    }
    keys
}

const WORD_KEYS: [[u64; TABLE_WORDS]; Section::ALL.len()] = word_keys();

/// `Σ key(section, word) × word` over `bytes` as little-endian u64 words, the last zero-padded.
#[inline]
fn words_sum(section: Section, bytes: &[u8]) -> u64 {
    let table = &WORD_KEYS[section.index()];
    let mut sum = 0u64;
    let mut chunks = bytes.chunks_exact(8);
    for (w, chunk) in (&mut chunks).enumerate() {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let k = if w < TABLE_WORDS { table[w] } else { key(section, (1 << 39) | w) };
        sum = sum.wrapping_add(k.wrapping_mul(word));
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        let w = bytes.len() / 8;
        let k = if w < TABLE_WORDS { table[w] } else { key(section, (1 << 39) | w) };
        sum = sum.wrapping_add(k.wrapping_mul(u64::from_le_bytes(last)));
    }
    sum
}

/// [`words_sum`] over a section whose size, `N` bytes, is fixed at compile time: the loop unrolls and
/// its keys become constants (the general loop cost about 13 host instructions a word, and the
/// digest at every scanline or instruction reads about 90 words).
#[inline(always)]
fn fixed_words_sum<const N: usize>(section: Section, bytes: &[u8]) -> u64 {
    let Ok(bytes) = <&[u8; N]>::try_from(bytes) else {
        return words_sum_cold(section, bytes);
    };
    keyed_words_sum::<N>(&WORD_KEYS[section.index()], bytes)
}

/// [`words_sum`] where a section's size was not the one expected (never, in a consistent build):
/// out of line, so the unrolled sums keep their registers.
#[cold]
#[inline(never)]
fn words_sum_cold(section: Section, bytes: &[u8]) -> u64 {
    words_sum(section, bytes)
}

/// `Σ keys[w] × word w` over `N` bytes as little-endian u64 words, the last zero-padded.
#[inline(always)]
fn keyed_words_sum<const N: usize>(keys: &[u64; TABLE_WORDS], bytes: &[u8; N]) -> u64 {
    const { assert!(N.div_ceil(8) <= TABLE_WORDS, "every word's key is in the table") };
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut sum = 0u64;
    for (word, &k) in words.zip(keys) {
        let word: [u8; 8] = word.try_into().expect("chunks_exact yields 8 bytes");
        sum = sum.wrapping_add(k.wrapping_mul(u64::from_le_bytes(word)));
    }
    if !tail.is_empty() {
        let mut last = [0u8; 8];
        last[..tail.len()].copy_from_slice(tail);
        sum = sum.wrapping_add(keys[N / 8].wrapping_mul(u64::from_le_bytes(last)));
    }
    sum
}

/// The ROM identity's word keys: apart from every section's byte and word keys (bit 38).
const ROM_IDENTITY_KEYS: [u64; TABLE_WORDS] = {
    let mut keys = [0u64; TABLE_WORDS];
    let mut w = 0;
    while w < TABLE_WORDS {
        keys[w] = key(Section::Machine, (1 << 38) | w);
        w += 1;
    }
    keys
};

/// Work RAM's byte keys, looked up on every CPU write to it (cheaper than computing the key).
static RAM_KEYS: [u64; 0x800] = {
    let mut keys = [0u64; 0x800];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = key(Section::Ram, i);
        i += 1;
    }
    keys
};

/// True for the sections maintained incrementally on every write.
const fn is_tracked(section: Section) -> bool {
    matches!(section, Section::Ram | Section::Vram | Section::PrgRam | Section::ChrRam)
}

impl Nes {
    /// A 64-bit digest of the whole machine state: any change of any byte the state hash covers
    /// changes it. Costs a few hundred nanoseconds whatever the machine's memory size, so the
    /// lockstep runner compares it at every scanline or instruction; the blake3
    /// [`Nes::state_hash`] stays the canonical hash of records and snapshots. Deterministic across
    /// runs, threads and builds; allocation-free. Derived data: not part of the state.
    pub fn state_digest(&self) -> u64 {
        self.finish_digest(self.memory_sums())
    }

    /// The body of `Harness::lagging_digest` (`harness.rs`).
    pub(crate) fn lagging_digest(&self) -> u64 {
        // Keys apart from every section's and the ROM identity's (bit 39).
        let lag = key(Section::Machine, 1 << 39)
            .wrapping_mul(self.apu.ticked())
            .wrapping_add(key(Section::Machine, (1 << 39) | 1).wrapping_mul(self.cart.ticked()));
        self.finish_digest(self.memory_sums().wrapping_add(lag))
    }

    /// [`Nes::state_digest`] computed from scratch, without the incrementally kept sums (tests
    /// check that both agree).
    pub fn state_digest_from_scratch(&self) -> u64 {
        self.finish_digest(self.memory_sums_from_scratch())
    }

    fn finish_digest(&self, memories: u64) -> u64 {
        // The board's registers first, by the general loop (their size depends on the board): a
        // call in the middle made the unrolled sums below keep their words on the stack across it.
        let mut sum = memories.wrapping_add(words_sum(Section::Mapper, self.cart.mapper_state_bytes()));
        sum = sum.wrapping_add(keyed_words_sum::<32>(&ROM_IDENTITY_KEYS, &self.rom_identity));
        // Every other section that is not tracked, unrolled.
        let [ppu, oam, secondary_oam, palette] = self.ppu.state_bytes();
        let parts = [
            fixed_words_sum::<{ size_of::<crate::state::MachineState>() }>(
                Section::Machine,
                bytemuck::bytes_of(&self.machine),
            ),
            fixed_words_sum::<{ size_of::<crate::CpuState>() }>(Section::Cpu, bytemuck::bytes_of(&self.cpu)),
            fixed_words_sum::<{ size_of::<crate::bus::sync::BusState>() }>(
                Section::Bus,
                bytemuck::bytes_of(&self.bus),
            ),
            fixed_words_sum::<{ size_of::<crate::ppu::PpuRegs>() }>(Section::Ppu, ppu),
            fixed_words_sum::<256>(Section::Oam, oam),
            fixed_words_sum::<32>(Section::SecondaryOam, secondary_oam),
            fixed_words_sum::<32>(Section::Palette, palette),
            fixed_words_sum::<{ size_of::<crate::apu::ApuState>() }>(Section::Apu, self.apu.state_bytes()),
            fixed_words_sum::<{ 2 * size_of::<crate::input::ControllerState>() }>(
                Section::Input,
                bytemuck::cast_slice(&self.pads),
            ),
        ];
        for part in parts {
            sum = sum.wrapping_add(part);
        }
        mix(sum)
    }

    /// The part of [`Nes::finish_digest`] that reads sections, section by section through
    /// [`Nes::section_bytes`] (what the unrolled sums must equal).
    #[cfg(test)]
    fn untracked_sections_sum(&self) -> u64 {
        let mut sum = 0u64;
        for section in Section::ALL {
            if !is_tracked(section) {
                sum = sum.wrapping_add(words_sum(section, self.section_bytes(section)));
            }
        }
        sum
    }

    /// The large memories' part of the digest: the kept sums, or from scratch while they are stale.
    #[inline]
    fn memory_sums(&self) -> u64 {
        if self.digest.stale {
            self.memory_sums_from_scratch()
        } else {
            self.digest.ram.wrapping_add(self.cart.memory_digest())
        }
    }

    fn memory_sums_from_scratch(&self) -> u64 {
        let mut sum = 0u64;
        for section in Section::ALL {
            if is_tracked(section) {
                sum = sum.wrapping_add(memory_sum(section, self.section_bytes(section)));
            }
        }
        sum
    }

    /// Recomputes the memory sums from scratch, after the memories changed wholesale.
    pub(crate) fn refresh_digest(&mut self) {
        self.digest.ram = memory_sum(Section::Ram, &self.ram);
        let cart = memory_sum(Section::Vram, &self.ciram)
            .wrapping_add(memory_sum(Section::PrgRam, self.cart.prg_ram()))
            .wrapping_add(memory_sum(Section::ChrRam, self.cart.chr_ram()));
        self.cart.set_memory_digest(cart);
        self.digest.stale = false;
    }

    /// Recomputes the memory sums if a host's `&mut` access may have changed the memories.
    #[inline]
    pub(crate) fn refresh_digest_if_stale(&mut self) {
        if self.digest.stale {
            self.refresh_digest();
        }
    }

    /// A CPU write to work RAM.
    #[inline(always)]
    pub(crate) fn write_ram(&mut self, index: usize, value: u8) {
        let index = index & 0x7FF;
        let old = self.ram[index];
        let delta = RAM_KEYS[index].wrapping_mul(u64::from(value).wrapping_sub(u64::from(old)));
        self.digest.ram = self.digest.ram.wrapping_add(delta);
        self.ram[index] = value;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_key_table_holds_the_ram_keys() {
        for (index, &k) in RAM_KEYS.iter().enumerate() {
            assert_eq!(k, key(Section::Ram, index), "RAM byte {index}");
        }
    }

    #[test]
    fn keys_are_odd_and_distinct() {
        let mut seen = std::collections::BTreeSet::new();
        for section in Section::ALL {
            for index in 0..4096 {
                let k = key(section, index);
                assert_eq!(k & 1, 1);
                assert!(seen.insert(k));
            }
            for &k in &WORD_KEYS[section.index()] {
                assert_eq!(k & 1, 1);
                assert!(seen.insert(k));
            }
        }
    }

    /// The sections the digest reads directly, unrolled per section, sum to what the general loop
    /// over [`Nes::section_bytes`] gives, on a machine whose every untracked byte is set.
    #[test]
    fn the_unrolled_section_sums_are_the_general_ones() {
        // A 16 KiB NROM program that turns rendering on and loops (reset vector $8000).
        let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut prg = vec![0xEA; 0x4000];
        prg[..8].copy_from_slice(&[0xA9, 0x1E, 0x8D, 0x01, 0x20, 0x4C, 0x05, 0x80]);
        prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
        rom.extend(prg);
        rom.extend(vec![0x55; 0x2000]);
        let mut nes = Nes::new(crate::Cartridge::from_ines(&rom).unwrap(), crate::NesConfig::default());
        for _ in 0..3 {
            nes.run_frame(Default::default());
        }
        let identity = |nes: &Nes| {
            let mut sum = 0u64;
            for (w, chunk) in nes.rom_identity.chunks_exact(8).enumerate() {
                let word = u64::from_le_bytes(chunk.try_into().unwrap());
                sum = sum.wrapping_add(key(Section::Machine, (1 << 38) | w).wrapping_mul(word));
            }
            sum
        };
        let expected = |nes: &Nes| mix(identity(nes).wrapping_add(nes.untracked_sections_sum()));
        assert_eq!(nes.finish_digest(0), expected(&nes));
        let mut seed = 0x5EC7_1045;
        for section in Section::ALL.into_iter().filter(|&s| !is_tracked(s)) {
            for byte in nes.section_bytes_mut(section) {
                *byte = crate::nes::splitmix64_next(&mut seed) as u8;
            }
            assert_eq!(nes.finish_digest(0), expected(&nes), "{}", section.name());
        }
    }

    #[test]
    fn the_digest_is_a_known_answer() {
        // Pinned: a change here changes every digest ever compared across builds.
        assert_eq!(mix(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(key(Section::Ram, 0x342), mix((3 << 40) ^ 0x342) | 1);
        assert_eq!(
            words_sum(Section::Cpu, &[1, 0, 0, 0, 0, 0, 0, 0, 2]),
            WORD_KEYS[1][0].wrapping_add(2 * WORD_KEYS[1][1])
        );
    }
}
