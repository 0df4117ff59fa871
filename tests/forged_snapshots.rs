//! Forged snapshots: a section's checksum is anyone's to recompute, so a snapshot with valid framing
//! and checksums but any field values is bad input like any other. `Nes::load_state` must refuse it
//! with an error, or the machine it loads must run on (a frame, an instruction, a line, a soft reset)
//! without a panic; the dev profile's overflow checks are on in the core, so an overflow is one.
//!
//! The first bundled ROM under `roms/` of each mapper and submapper, snapshots four frames in (at
//! the frame's end and 120 lines into the next), and for every section with a field table (the
//! mapper's too) every field set to the extremes of its width (0, 1, the top, one under it, the top
//! bit alone) and a random value, one at a time; then every field of a section at once to each of a
//! few values (what takes two fields together: a mode and its counter); and the memory sections
//! filled whole. Arrays of more than four elements are sampled (first, second, last and one drawn
//! at random).

mod support;

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use anes::nes::movie::FrameInput;
use anes::nes::state::{FieldLayout, SNAPSHOT_HEADER_LEN};
use anes::nes::{Cartridge, Nes, Section};
use support::{boot, determinism_roms, for_each_rom_in_parallel, next_random};

/// Bytes of a section's header in a snapshot: tag (4), version (2), padding (2), length (4),
/// checksum (8, the first of the payload's blake3).
const SECTION_HEADER_LEN: usize = 20;

/// One forgeable unit of a section: `width` bytes at `offset`, named for the failure message.
struct Leaf {
    name: String,
    offset: usize,
    width: usize,
}

/// The scalars of `layout` (at `base` in the section), arrays of more than four elements sampled.
/// Elements wider than a `u64` (byte arrays inside arrays) are taken a byte at a time.
fn leaves(layout: &[FieldLayout], base: usize, prefix: &str, rng: &mut u64, out: &mut Vec<Leaf>) {
    for field in layout {
        let name = format!("{prefix}{}", field.name);
        let count = field.size / field.elem_size;
        let mut indices: BTreeSet<usize> = (0..count.min(2)).collect();
        indices.insert(count - 1);
        if count > 4 {
            indices.insert((next_random(rng) % count as u64) as usize);
        } else {
            indices.extend(0..count);
        }
        for index in indices {
            let at = base + field.offset + index * field.elem_size;
            let element = if count > 1 { format!("{name}[{index}]") } else { name.clone() };
            match field.inner {
                Some(inner) => leaves(inner, at, &format!("{element}."), rng, out),
                None if field.elem_size <= 8 => {
                    out.push(Leaf { name: element, offset: at, width: field.elem_size })
                }
                None => out.extend((0..field.elem_size).map(|byte| Leaf {
                    name: format!("{element}[{byte}]"),
                    offset: at + byte,
                    width: 1,
                })),
            }
        }
    }
}

/// Where each section's header starts in `snapshot` of `nes`, checked against the lengths it holds.
fn section_starts(nes: &Nes, snapshot: &[u8]) -> Vec<usize> {
    let mut at = SNAPSHOT_HEADER_LEN;
    let mut starts = Vec::new();
    for section in Section::ALL {
        let len = nes.section_bytes(section).len();
        let stored = u32::from_le_bytes(snapshot[at + 8..at + 12].try_into().unwrap());
        assert_eq!(stored as usize, len, "{}: the section length in the snapshot", section.name());
        starts.push(at);
        at += SECTION_HEADER_LEN + len;
    }
    assert_eq!(at, snapshot.len(), "the sections end where the snapshot does");
    starts
}

/// Recomputes the checksum of the section whose header starts at `start`, as anyone can.
fn reseal(snapshot: &mut [u8], start: usize) {
    let len = u32::from_le_bytes(snapshot[start + 8..start + 12].try_into().unwrap()) as usize;
    let payload = start + SECTION_HEADER_LEN;
    let checksum = blake3::hash(&snapshot[payload..payload + len]);
    snapshot[start + 12..start + 20].copy_from_slice(&checksum.as_bytes()[..8]);
}

/// Loads `snapshot` into a copy of `base`; if it is taken, runs the machine on through every kind of
/// step. `Err` with the panic's message if anything panicked; `Ok(true)` when the load was taken.
fn load_and_run(base: &Nes, snapshot: &[u8]) -> Result<bool, String> {
    let mut nes = base.clone();
    catch_unwind(AssertUnwindSafe(|| {
        if nes.load_state(snapshot).is_err() {
            return false;
        }
        nes.run_frame(FrameInput::buttons(0x81, 0x42));
        nes.step_instruction();
        nes.step_to_next_line();
        nes.soft_reset();
        nes.step_to_next_line();
        true
    }))
    .map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

/// The values one `width`-byte field is forged to, little-endian in a `u64`.
fn values(width: usize, rng: &mut u64) -> Vec<u64> {
    let top = if width >= 8 { u64::MAX } else { (1u64 << (8 * width)) - 1 };
    let high_bit = top ^ (top >> 1);
    let mut values = vec![0, 1, top, top - 1, high_bit, next_random(rng)];
    for value in &mut values {
        *value &= top;
    }
    values.sort_unstable();
    values.dedup();
    values
}

/// The whole forging of one ROM, its snapshot taken `lines` lines into the fifth frame: every case
/// of the module comment. Returns the failures and the counts of cases tried and loads taken.
fn forge_every_field(name: &str, rom: &[u8], seed: u64, lines: usize) -> (Vec<String>, usize, usize) {
    let mut rng = seed;
    let mut nes = boot(rom);
    if lines > 0 {
        // Audio on: the channels' output paths read forged fields that the state alone never does.
        nes.set_audio_sample_rate(Some(48_000));
    }
    for frame in 0..4u8 {
        nes.run_frame(FrameInput::buttons(frame.wrapping_mul(0x35), 0));
    }
    for _ in 0..lines {
        nes.step_to_next_line();
    }
    let name = &format!("{name} (snapshot {lines} lines into frame 5)");
    let mut base = Vec::new();
    nes.save_state(&mut base);
    let starts = section_starts(&nes, &base);
    let (mut failures, mut tried, mut taken) = (Vec::new(), 0, 0);
    let mut try_one = |what: String, snapshot: &[u8]| {
        tried += 1;
        match load_and_run(&nes, snapshot) {
            Ok(loaded) => taken += usize::from(loaded),
            Err(message) => failures.push(format!("{name}: {what}: {message}")),
        }
    };
    for section in Section::ALL {
        let start = starts[section.index()];
        let payload = start + SECTION_HEADER_LEN;
        let len = nes.section_bytes(section).len();
        let Some(layout) = nes.section_layout(section) else {
            // Memory, named by address, not fields: filled whole.
            if len == 0 {
                continue;
            }
            for fill in [0x00u8, 0xFF, 0x5A] {
                let mut snapshot = base.clone();
                snapshot[payload..payload + len].fill(fill);
                reseal(&mut snapshot, start);
                try_one(format!("{} filled with ${fill:02X}", section.name()), &snapshot);
            }
            continue;
        };
        let mut fields = Vec::new();
        leaves(layout, 0, "", &mut rng, &mut fields);
        // Reserved bytes must be zero (a documented refusal): forged once each, not per value.
        let (reserved, fields): (Vec<Leaf>, Vec<Leaf>) =
            fields.into_iter().partition(|leaf| leaf.name.contains("reserved"));
        for leaf in &reserved {
            let mut snapshot = base.clone();
            snapshot[payload + leaf.offset] ^= 0x01;
            reseal(&mut snapshot, start);
            try_one(format!("{}.{} = 1", section.name(), leaf.name), &snapshot);
        }
        for leaf in &fields {
            for value in values(leaf.width, &mut rng) {
                let mut snapshot = base.clone();
                let at = payload + leaf.offset;
                snapshot[at..at + leaf.width].copy_from_slice(&value.to_le_bytes()[..leaf.width]);
                reseal(&mut snapshot, start);
                try_one(format!("{}.{} = {value:#x}", section.name(), leaf.name), &snapshot);
            }
        }
        // Every field at once: a value that is harmless alone may not be beside another's.
        for fill in [0x00u8, 0x01, 0x03, 0x07, 0x80, 0xFF] {
            let mut snapshot = base.clone();
            for leaf in &fields {
                snapshot[payload + leaf.offset..payload + leaf.offset + leaf.width].fill(fill);
            }
            reseal(&mut snapshot, start);
            try_one(format!("every field of {} filled with ${fill:02X}", section.name()), &snapshot);
        }
        let mut snapshot = base.clone();
        for leaf in &fields {
            let value = next_random(&mut rng).to_le_bytes();
            snapshot[payload + leaf.offset..payload + leaf.offset + leaf.width]
                .copy_from_slice(&value[..leaf.width]);
        }
        reseal(&mut snapshot, start);
        try_one(format!("every field of {} random", section.name()), &snapshot);
    }
    (failures, tried, taken)
}

/// The bundled ROMs, the first of each mapper (and submapper) in path order.
fn one_rom_per_mapper() -> Vec<(String, Vec<u8>)> {
    let mut seen = BTreeSet::new();
    determinism_roms()
        .into_iter()
        .filter(|(name, _)| name.starts_with("roms"))
        .filter(|(_, rom)| {
            let cart = Cartridge::from_ines(rom).expect("a bundled ROM loads");
            seen.insert((cart.info().mapper, cart.info().submapper))
        })
        .collect()
}

#[test]
fn forged_fields_are_refused_or_run_without_a_panic() {
    let roms = one_rom_per_mapper();
    let failures = std::sync::Mutex::new(Vec::new());
    let counts = std::sync::Mutex::new((0, 0));
    for_each_rom_in_parallel(&roms, |index, name, rom| {
        // At the frame's end and mid-picture: a field matters where the program reads what it
        // drives (PPUSTATUS's sprite flags, until the pre-render line clears them).
        for lines in [0, 120] {
            let seed = 0xF0_4CED ^ ((index as u64) << 32) ^ lines as u64;
            let (found, tried, taken) = forge_every_field(name, rom, seed, lines);
            failures.lock().unwrap().extend(found);
            let mut counts = counts.lock().unwrap();
            (counts.0, counts.1) = (counts.0 + tried, counts.1 + taken);
        }
    });
    let failures = failures.into_inner().unwrap();
    let (tried, taken) = counts.into_inner().unwrap();
    eprintln!("{} ROMs, {tried} forged snapshots, {taken} loaded and ran", roms.len());
    // Most forgeries load: if few did, the forging (offsets, checksums) would be wrong, not the core.
    assert!(taken > tried / 2, "only {taken} of {tried} forged snapshots loaded: is the forging right?");
    assert!(
        failures.is_empty(),
        "{} forged snapshots panicked:\n{}",
        failures.len(),
        failures.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
