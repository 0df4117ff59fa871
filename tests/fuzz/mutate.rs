//! Mutations of valid inputs. Arbitrary bytes rarely get past a magic number or a checksum; a valid
//! file with a few bytes changed, cut short or a declared length rewritten reaches the checks behind
//! them, and resealing its checksums reaches the ones behind those.

use proptest::prelude::*;

/// One change to a file. Positions are taken modulo the file's length, so any value applies to any
/// file.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// Flips one bit.
    FlipBit { at: usize, bit: u8 },
    /// Overwrites one byte.
    SetByte { at: usize, value: u8 },
    /// Overwrites four bytes with a little-endian number: how declared lengths and counts change.
    SetU32 { at: usize, value: u32 },
    /// Cuts the file short.
    Truncate { at: usize },
    /// Inserts bytes.
    Insert { at: usize, bytes: Vec<u8> },
    /// Removes up to `len` bytes.
    Remove { at: usize, len: usize },
}

/// What a kind of file looks like, for choosing mutations that get far into its parser.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Where the interesting fields start: the first 64 bytes from here get half the mutations.
    pub fields_at: usize,
    /// Text: mutations mostly write printable characters and line breaks, so the file stays text.
    pub text: bool,
}

/// Binary formats whose header and declared lengths sit at the start.
pub const BINARY: Shape = Shape { fields_at: 0, text: false };
/// Text formats.
pub const TEXT: Shape = Shape { fields_at: 0, text: true };

/// A position: half the time among the fields, otherwise anywhere.
fn position(shape: Shape) -> impl Strategy<Value = usize> {
    prop_oneof![shape.fields_at..shape.fields_at + 64, any::<usize>()]
}

/// A byte to write.
fn byte(shape: Shape) -> BoxedStrategy<u8> {
    if shape.text {
        prop_oneof![8 => 0x20..0x7Fu8, 2 => Just(b'\n'), 1 => any::<u8>()].boxed()
    } else {
        any::<u8>().boxed()
    }
}

/// Numbers that sit on the edges of length and count checks.
fn edgy_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(0xFF),
        Just(0xFFFF),
        Just(0x1_0000),
        Just(0x7FFF_FFFF),
        Just(u32::MAX - 1),
        Just(u32::MAX),
        any::<u32>(),
    ]
}

/// Any one mutation of a file of this shape. Changes in place are likelier than changes of length,
/// which most formats refuse at their first length check.
pub fn mutation(shape: Shape) -> impl Strategy<Value = Mutation> {
    let (in_place, binary_numbers) = if shape.text { (3, 1) } else { (3, 3) };
    prop_oneof![
        in_place => (position(shape), 0..8u8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        in_place => (position(shape), byte(shape)).prop_map(|(at, value)| Mutation::SetByte { at, value }),
        binary_numbers => (position(shape), edgy_u32()).prop_map(|(at, value)| Mutation::SetU32 { at, value }),
        1 => any::<usize>().prop_map(|at| Mutation::Truncate { at }),
        2 => (position(shape), proptest::collection::vec(byte(shape), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        1 => (position(shape), 1..64usize).prop_map(|(at, len)| Mutation::Remove { at, len }),
    ]
}

/// One to four mutations.
pub fn mutations(shape: Shape) -> impl Strategy<Value = Vec<Mutation>> {
    proptest::collection::vec(mutation(shape), 1..5)
}

/// Applies `mutation` to `bytes`.
pub fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let len = bytes.len();
    let spot = |at: usize| if len == 0 { 0 } else { at % len };
    match mutation {
        Mutation::FlipBit { at, bit } if len > 0 => bytes[spot(*at)] ^= 1 << bit,
        Mutation::SetByte { at, value } if len > 0 => bytes[spot(*at)] = *value,
        Mutation::SetU32 { at, value } if len >= 4 => {
            let at = *at % (len - 3);
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        }
        Mutation::Truncate { at } => bytes.truncate(at % (len + 1)),
        Mutation::Insert { at, bytes: new } => {
            let at = at % (len + 1);
            bytes.splice(at..at, new.iter().copied());
        }
        Mutation::Remove { at, len: count } if len > 0 => {
            let at = spot(*at);
            bytes.drain(at..(at + count).min(len));
        }
        _ => {}
    }
}

/// `seed` with `mutations` applied.
pub fn mutated(seed: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for mutation in mutations {
        apply(&mut bytes, mutation);
    }
    bytes
}

/// Rewrites an input stream's trailing blake3 checksum to match its (mutated) body.
pub fn reseal_input_stream(bytes: &mut [u8]) {
    if let Some(body_end) = bytes.len().checked_sub(32) {
        let checksum = blake3::hash(&bytes[..body_end]);
        bytes[body_end..].copy_from_slice(checksum.as_bytes());
    }
}

/// Rewrites the checksum of every snapshot section whose framing is still intact (docs/state-format.md:
/// tag 4, version 2, reserved 2, length `u32`, checksum 8, payload), so a changed payload or length
/// is judged on its contents.
pub fn reseal_snapshot(bytes: &mut [u8], header_len: usize) {
    const SECTION_HEADER_LEN: usize = 20;
    let mut offset = header_len;
    while let Some(length_field) = bytes.get(offset + 8..offset + 12) {
        let len = u32::from_le_bytes(length_field.try_into().expect("4 bytes")) as usize;
        let payload = offset + SECTION_HEADER_LEN;
        let Some(end) = payload.checked_add(len).filter(|&end| end <= bytes.len()) else { break };
        let checksum = blake3::hash(&bytes[payload..end]);
        bytes[offset + 12..payload].copy_from_slice(&checksum.as_bytes()[..8]);
        offset = end;
    }
}
