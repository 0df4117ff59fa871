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
//!   machine section) is summed 8 bytes at a time: `Σ key(section, word) × word`. The PPU's four
//!   sections, the APU's and the board's registers are summed when their chip has run or been
//!   accessed since the last sum, and the sum is kept otherwise: each chip marks itself stale in
//!   every `&mut` method reachable from outside its module ([`crate::ppu::Ppu`]'s and
//!   [`crate::apu::Apu`]'s fields are private, so those are the only ways in; the cartridge's
//!   board sits in a `TrackedBoard`, whose every mutable access marks it), and the lagging steps
//!   end by keeping fresh sums ([`Nes::keep_chip_sums`]). A lagging machine's chips stand still
//!   between catch-ups and board writes, so most instructions' digests read only the CPU, the bus,
//!   the controllers and the machine section (14 words).
//!
//! Every key is odd, so a change of one byte (or one word) changes the sum by `key × delta`, which is
//! never 0 modulo 2^64, and the final mix is a bijection: any single changed byte changes the digest,
//! with certainty (`tests/state.rs` flips every snapshot byte). Keys are fixed constants (splitmix64's
//! finalizer of the position), so the digest is the same in every run, thread and build. Nothing
//! here allocates.

use super::Section;
use super::digest_keys::{key, mix};
use crate::cart::StateVisitor;
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
    let (head, rest) = bytes.split_at(bytes.len().min(8 * TABLE_WORDS));
    let mut words = head.chunks_exact(8);
    let mut sum = 0u64;
    for (word, &k) in (&mut words).zip(table) {
        let word: [u8; 8] = word.try_into().expect("chunks_exact yields 8 bytes");
        sum = sum.wrapping_add(k.wrapping_mul(u64::from_le_bytes(word)));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        // Byte by byte: a copy into a zeroed word was a call to memcpy on every digest.
        let word = tail.iter().rev().fold(0u64, |word, &byte| word << 8 | u64::from(byte));
        sum = sum.wrapping_add(table[head.len() / 8].wrapping_mul(word));
    }
    if rest.is_empty() { sum } else { sum.wrapping_add(words_sum_beyond_table(section, rest)) }
}

/// [`words_sum`] of the words past the key table's (boards with more than 512 bytes of registers),
/// whose keys are computed: `rest` starts at word [`TABLE_WORDS`].
#[cold]
#[inline(never)]
fn words_sum_beyond_table(section: Section, rest: &[u8]) -> u64 {
    let mut sum = 0u64;
    for (w, chunk) in (TABLE_WORDS..).zip(rest.chunks(8)) {
        let mut last = [0u8; 8];
        last[..chunk.len()].copy_from_slice(chunk);
        sum = sum.wrapping_add(key(section, (1 << 39) | w).wrapping_mul(u64::from_le_bytes(last)));
    }
    sum
}

/// [`words_sum`] over the bytes of a plain-data value: its size is a constant where this is
/// inlined, so the loop unrolls and its keys become constants (the general loop cost about 13 host
/// instructions a word, and the digest at every scanline or instruction reads dozens of words).
#[inline(always)]
fn pod_words_sum<T: bytemuck::NoUninit>(section: Section, value: &T) -> u64 {
    bytes_words_sum(section, bytemuck::bytes_of(value))
}

/// [`words_sum`] for callers whose `bytes` have a length known at compile time (see
/// [`pod_words_sum`]); longer than the key table, the general loop.
#[inline(always)]
fn bytes_words_sum(section: Section, bytes: &[u8]) -> u64 {
    if bytes.len() > 8 * TABLE_WORDS {
        return words_sum_cold(section, bytes);
    }
    keyed_words_sum(&WORD_KEYS[section.index()], bytes)
}

/// [`words_sum`] where a section is longer than the key table (never, in a consistent build): out of
/// line, so the unrolled sums keep their registers.
#[cold]
#[inline(never)]
fn words_sum_cold(section: Section, bytes: &[u8]) -> u64 {
    words_sum(section, bytes)
}

/// `Σ keys[w] × word w` over `bytes` (at most `8 × TABLE_WORDS`) as little-endian u64 words, the
/// last zero-padded.
#[inline(always)]
fn keyed_words_sum(keys: &[u64; TABLE_WORDS], bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 8 * TABLE_WORDS, "every word's key is in the table");
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let mut sum = 0u64;
    for (word, &k) in words.zip(keys) {
        let word: [u8; 8] = word.try_into().expect("chunks_exact yields 8 bytes");
        sum = sum.wrapping_add(k.wrapping_mul(u64::from_le_bytes(word)));
    }
    if !tail.is_empty() {
        // Byte by byte: a copy into a zeroed word can be a call to memcpy.
        let word = tail.iter().rev().fold(0u64, |word, &byte| word << 8 | u64::from(byte));
        sum = sum.wrapping_add(keys[bytes.len() / 8].wrapping_mul(word));
    }
    sum
}

/// The board's registers' part of the digest, summed as the board's own state type.
struct MapperWordsSum;

impl StateVisitor for MapperWordsSum {
    type Output = u64;

    #[inline(always)]
    fn visit<S: bytemuck::Pod>(self, state: &S) -> u64 {
        pod_words_sum(Section::Mapper, state)
    }
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

/// Whether a digest may take the chips' kept section sums ([`Nes::keep_chip_sums`]) where their
/// chips say they still hold.
#[derive(Clone, Copy)]
enum Kept {
    Used,
    Ignored,
}

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
        self.finish_digest(self.memory_sums(), Kept::Used)
    }

    /// The body of `Harness::lagging_digest` (`harness.rs`).
    #[inline(always)]
    pub(crate) fn lagging_digest(&self) -> u64 {
        // The board's counters move only with the board, whose kept sum then goes stale: while it
        // holds, where they stand was kept with it (no dispatch to the board).
        let board_ticked =
            if self.cart.mapper_digest_stale() { self.cart.ticked() } else { self.digest.board_ticked };
        // Keys apart from every section's and the ROM identity's (bit 39).
        let lag = key(Section::Machine, 1 << 39)
            .wrapping_mul(self.apu.ticked())
            .wrapping_add(key(Section::Machine, (1 << 39) | 1).wrapping_mul(board_ticked));
        // Unmixed: the mix is a bijection, so it changes no comparison of two digests, and this
        // one is only compared (at every instruction of a lockstep run).
        self.digest_sum(self.memory_sums().wrapping_add(lag), Kept::Used)
    }

    /// [`Nes::state_digest`] computed from scratch, without the incrementally kept sums (tests
    /// check that both agree).
    pub fn state_digest_from_scratch(&self) -> u64 {
        self.finish_digest(self.memory_sums_from_scratch(), Kept::Ignored)
    }

    #[inline(always)]
    fn finish_digest(&self, memories: u64, kept: Kept) -> u64 {
        mix(self.digest_sum(memories, kept))
    }

    /// `Σ key × word` over every section, with `memories` (the large memories' sums): the digest
    /// before its final mix.
    #[inline(always)]
    fn digest_sum(&self, memories: u64, kept: Kept) -> u64 {
        // The chips first, out of line: after the words below were loaded, the calls made them wait
        // on the stack.
        let mut sum = memories.wrapping_add(self.chip_sums(kept));
        sum = sum.wrapping_add(match kept {
            Kept::Used => self.digest.rom_identity,
            Kept::Ignored => self.rom_identity_sum(),
        });
        debug_assert_eq!(self.digest.rom_identity, self.rom_identity_sum(), "the ROM identity's sum is kept");
        // The sections that change with every instruction, unrolled.
        let parts = [
            pod_words_sum(Section::Machine, &self.machine),
            pod_words_sum(Section::Cpu, &self.cpu),
            pod_words_sum(Section::Bus, &self.bus),
            pod_words_sum(Section::Input, &self.pads),
        ];
        for part in parts {
            sum = sum.wrapping_add(part);
        }
        sum
    }

    /// The PPU's, the APU's and the board's part of the digest. Their sections (55, 18 and up to
    /// 24 words of about 110) change only when those chips run or are accessed, OAM and palette
    /// RAM (36 of the PPU's words) only when written: between catch-ups of a lagging machine and
    /// writes to the board, and while those tables stand, the sums [`Nes::keep_chip_sums`] kept are
    /// taken. Inline while all four hold (a lagging instruction step's common case); out of line,
    /// each sum on its own.
    #[inline(always)]
    fn chip_sums(&self, kept: Kept) -> u64 {
        if matches!(kept, Kept::Used)
            && !(self.ppu.digest_stale()
                || self.ppu.tables_digest_stale()
                || self.apu.digest_stale()
                || self.cart.mapper_digest_stale())
        {
            debug_assert_eq!(
                self.digest.chips,
                self.digest
                    .ppu
                    .wrapping_add(self.digest.ppu_tables)
                    .wrapping_add(self.digest.apu)
                    .wrapping_add(self.digest.mapper),
                "the chips' sum is the sum of the kept ones"
            );
            return self.digest.chips;
        }
        self.chip_sums_each(kept)
    }

    /// [`Nes::chip_sums`] section by section.
    #[inline(never)]
    fn chip_sums_each(&self, kept: Kept) -> u64 {
        debug_assert!(
            self.ppu.digest_stale() || self.digest.ppu == self.ppu_registers_sum(),
            "a PPU that is not marked stale has the sum kept for it"
        );
        debug_assert!(
            self.ppu.tables_digest_stale() || self.digest.ppu_tables == self.ppu_tables_sum(),
            "OAM and palette RAM not marked stale have the sum kept for them"
        );
        debug_assert!(
            self.apu.digest_stale() || self.digest.apu == self.apu_section_sum(),
            "an APU that is not marked stale has the sum kept for it"
        );
        debug_assert!(
            self.cart.mapper_digest_stale() || self.digest.mapper == self.mapper_section_sum(),
            "a board that is not marked stale has the sum kept for it"
        );
        let ppu = match kept {
            Kept::Used if !self.ppu.digest_stale() => self.digest.ppu,
            _ => self.ppu_registers_sum(),
        };
        let tables = match kept {
            Kept::Used if !self.ppu.tables_digest_stale() => self.digest.ppu_tables,
            _ => self.ppu_tables_sum(),
        };
        let apu = match kept {
            Kept::Used if !self.apu.digest_stale() => self.digest.apu,
            _ => self.apu_section_sum(),
        };
        let mapper = match kept {
            Kept::Used if !self.cart.mapper_digest_stale() => self.digest.mapper,
            _ => self.mapper_section_sum(),
        };
        ppu.wrapping_add(tables).wrapping_add(apu).wrapping_add(mapper)
    }

    /// `Σ key × word` over the PPU's registers and secondary OAM. Out of line: inlined, the digest
    /// loaded every word before knowing whether it needed them.
    #[inline(never)]
    fn ppu_registers_sum(&self) -> u64 {
        let [ppu, _, secondary_oam, _] = self.ppu.state_bytes();
        bytes_words_sum(Section::Ppu, ppu).wrapping_add(bytes_words_sum(Section::SecondaryOam, secondary_oam))
    }

    /// `Σ key × word` over primary OAM and palette RAM (out of line, as the registers').
    #[inline(never)]
    fn ppu_tables_sum(&self) -> u64 {
        let [_, oam, _, palette] = self.ppu.state_bytes();
        bytes_words_sum(Section::Oam, oam).wrapping_add(bytes_words_sum(Section::Palette, palette))
    }

    /// `Σ key × word` over the APU's section (out of line, as the PPU's).
    #[inline(never)]
    fn apu_section_sum(&self) -> u64 {
        pod_words_sum(Section::Apu, self.apu.state())
    }

    /// `Σ key × word` over the board's registers, summed as the board's own state type (out of
    /// line, as the PPU's).
    #[inline(never)]
    fn mapper_section_sum(&self) -> u64 {
        self.cart.visit_mapper_state(MapperWordsSum)
    }

    /// Keeps the PPU's, the APU's and the board's section sums for the digests that follow,
    /// recomputing those whose chip (or tables) may have changed since they were kept. The lagging steps end with it:
    /// between their catch-ups the chips stand still, and a digest after every instruction then
    /// reads a fifth of the words; at every line, the PPU's registers move but OAM and palette RAM
    /// rarely do.
    #[inline(always)]
    pub(crate) fn keep_chip_sums(&mut self) {
        if self.ppu.digest_stale()
            || self.ppu.tables_digest_stale()
            || self.apu.digest_stale()
            || self.cart.mapper_digest_stale()
        {
            self.keep_stale_chip_sums();
        }
    }

    /// [`Nes::keep_chip_sums`] where a sum is stale (out of line: most lagging instruction steps
    /// leave every chip as it was).
    #[inline(never)]
    fn keep_stale_chip_sums(&mut self) {
        if self.ppu.digest_stale() {
            self.digest.ppu = self.ppu_registers_sum();
        }
        if self.ppu.tables_digest_stale() {
            self.digest.ppu_tables = self.ppu_tables_sum();
        }
        self.ppu.mark_digest_fresh();
        if self.apu.digest_stale() {
            self.digest.apu = self.apu_section_sum();
            self.apu.mark_digest_fresh();
        }
        if self.cart.mapper_digest_stale() {
            self.digest.mapper = self.mapper_section_sum();
            self.digest.board_ticked = self.cart.ticked();
            self.cart.mark_mapper_digest_fresh();
        }
        self.digest.chips = self
            .digest
            .ppu
            .wrapping_add(self.digest.ppu_tables)
            .wrapping_add(self.digest.apu)
            .wrapping_add(self.digest.mapper);
    }

    /// The ROM identity's part of the digest (kept in `digest.rom_identity` while it stands).
    fn rom_identity_sum(&self) -> u64 {
        keyed_words_sum(&ROM_IDENTITY_KEYS, &self.rom_identity)
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

    #[cold]
    #[inline(never)]
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
        self.digest.rom_identity = self.rom_identity_sum();
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
        assert_eq!(nes.finish_digest(0, Kept::Ignored), expected(&nes));
        nes.keep_chip_sums();
        assert_eq!(nes.finish_digest(0, Kept::Used), expected(&nes));
        let mut seed = 0x5EC7_1045;
        for section in Section::ALL.into_iter().filter(|&s| !is_tracked(s)) {
            for byte in nes.section_bytes_mut(section) {
                *byte = crate::nes::splitmix64_next(&mut seed) as u8;
            }
            // A kept sum is not taken for a chip changed since (the edit marked it stale).
            assert_eq!(nes.finish_digest(0, Kept::Used), expected(&nes), "{}", section.name());
            nes.keep_chip_sums();
            assert_eq!(nes.finish_digest(0, Kept::Used), expected(&nes), "{} kept", section.name());
        }
    }

    /// Over lagging steps, whose digests take the kept chip sums wherever the chips stand still,
    /// the digest equals the one that sums every section afresh, at every instruction of frames
    /// with rendering, $2002 polls, NMIs, OAM and APU writes.
    #[test]
    fn kept_chip_sums_are_the_fresh_ones_after_every_lagging_step() {
        // NROM: enable NMI and rendering; the main loop polls $2002 and writes $4000/$4015; the NMI
        // handler writes OAM through $2004 and returns.
        let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut prg = vec![0xEA; 0x4000];
        let main = [
            0xA9, 0x80, 0x8D, 0x00, 0x20, // LDA #$80, STA $2000
            0xA9, 0x1E, 0x8D, 0x01, 0x20, // LDA #$1E, STA $2001
            0xAD, 0x02, 0x20, // loop: LDA $2002
            0x8D, 0x00, 0x40, 0x8D, 0x15, 0x40, // STA $4000, STA $4015
            0xA2, 0x40, 0xCA, 0xD0, 0xFD, // LDX #$40, DEX, BNE -3
            0x4C, 0x0A, 0x80, // JMP loop
        ];
        prg[..main.len()].copy_from_slice(&main);
        let nmi = [0xE6, 0x10, 0xA5, 0x10, 0x8D, 0x04, 0x20, 0x40]; // INC $10, LDA $10, STA $2004, RTI
        prg[0x100..0x100 + nmi.len()].copy_from_slice(&nmi);
        prg[0x3FFA..].copy_from_slice(&[0x00, 0x81, 0x00, 0x80, 0x00, 0x80]);
        rom.extend(prg);
        rom.extend(vec![0x55; 0x2000]);
        let mut nes = Nes::new(crate::Cartridge::from_ines(&rom).unwrap(), crate::NesConfig::default());
        for _ in 0..4 {
            nes.begin_frame(Default::default());
            nes.settle();
            loop {
                let done = nes.step_in_frame_lagging();
                let memories = nes.memory_sums();
                assert_eq!(
                    nes.finish_digest(memories, Kept::Used),
                    nes.finish_digest(memories, Kept::Ignored),
                    "frame {} cycle {}",
                    nes.frame(),
                    nes.cpu_cycle()
                );
                if done {
                    break;
                }
            }
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
