//! Fuzzing the parsers of everything anes reads from outside: ROMs (iNES / NES 2.0), snapshots
//! (`Nes::load_state`), input streams, `.fm2` movies and conformance manifests. Each gets arbitrary
//! bytes and mutations of valid files (see `fuzz/mutate.rs`); every case must end without a panic,
//! within a time limit, holding heap in proportion to its input, and what loads must make sense.
//!
//! `cargo test --test fuzz_parsers` runs 512 cases per property with a fixed seed (a few seconds);
//! `ANES_FUZZ_CASES=100000 ANES_FUZZ_SEED=random cargo test --release --test fuzz_parsers` runs longer.

mod fuzz;
mod support;

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use anes::conformance::Manifest;
use anes::nes::cart::{HeaderRegion, SUPPORTED_MAPPERS};
use anes::nes::movie::{ConsoleCommand, FrameInput, InputStream};
use anes::nes::state::SNAPSHOT_HEADER_LEN;
use anes::nes::{Cartridge, Nes, NesConfig, Region};
use fuzz::mutate::{BINARY, Mutation, Shape, TEXT, mutated, mutations, reseal_input_stream, reseal_snapshot};
use fuzz::{measured, measured_for, within};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use support::{random_input, repo_root};

/// Heap a ROM may take beyond its own size: PRG and CHR are copied (rounded up to whole banks) and
/// the RAM its header declares is allocated, up to 8 MiB in NES 2.0 (2 MiB in each of four fields)
/// plus four-screen VRAM.
const ROM_RAM_ALLOWANCE: usize = 8 << 20 | 64 << 10;
/// Heap for error messages and other small fixed costs.
const SMALL: usize = 8 << 10;

/// Valid files of every kind, made once.
struct Seeds {
    roms: Vec<Vec<u8>>,
    /// (ROM, a snapshot of it a few frames in).
    snapshots: Vec<(Vec<u8>, Vec<u8>)>,
    input_streams: Vec<Vec<u8>>,
    movies: Vec<Vec<u8>>,
    manifests: Vec<Vec<u8>>,
}

fn seeds() -> &'static Seeds {
    static SEEDS: OnceLock<Seeds> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let read = |path: &str| std::fs::read(repo_root().join(path)).expect("bundled file");
        // NES 2.0 MMC3 (with an expansion device), iNES MMC3, iNES NROM, NROM with CHR RAM, NES 2.0
        // MMC6 (whose header must declare its 1 KiB of RAM), and the boards below.
        let mut roms = vec![
            read("roms/demo/demo.nes"),
            read("roms/stress/mmc3_a12.nes"),
            read("roms/stress/ppu_race.nes"),
        ];
        let mut chr_ram = roms[2].clone();
        chr_ram[5] = 0;
        chr_ram.truncate(16 + 0x4000);
        // Boards whose construction reads the header beyond the mapper number: 185 (its open-bus
        // CHR page), 13 from iNES 1.0 (16 KiB of CHR RAM where the header implies 8), 34 without a
        // submapper (NINA-001 or BNROM by CHR size), and the VRC4 by NES 2.0 submapper.
        let as_mapper = |rom: &[u8], mapper: u8, nes20_submapper: Option<u8>| {
            let mut rom = rom.to_vec();
            rom[6] = (rom[6] & 0x0F) | mapper << 4;
            rom[7] = (mapper & 0xF0) | if nes20_submapper.is_some() { 0x08 } else { 0 };
            rom[8] = nes20_submapper.unwrap_or(0) << 4;
            rom
        };
        let nrom = roms[2].clone();
        roms.push(as_mapper(&nrom, 185, None));
        roms.push(as_mapper(&chr_ram, 13, None));
        roms.push(as_mapper(&nrom, 34, None));
        roms.push(as_mapper(&nrom, 23, Some(2)));
        // TQROM (119): CHR RAM after its CHR ROM, sized by NES 2.0 byte 11; TxSROM (118) and the
        // MMC1A (155), MMC3 and MMC1 inside.
        let mut tqrom = as_mapper(&nrom, 119, Some(0));
        tqrom[11] = 0x07;
        roms.push(tqrom);
        roms.push(as_mapper(&nrom, 118, None));
        roms.push(as_mapper(&chr_ram, 155, None));
        // GTROM (111): its RAM sized by the board, not the header.
        roms.push(as_mapper(&chr_ram, 111, None));
        roms.push(chr_ram);
        roms.push(read("roms/mmc6/mmc6.nes"));
        let snapshots = roms
            .iter()
            .map(|rom| {
                let mut nes = Nes::new(Cartridge::from_ines(rom).expect("seed ROM"), NesConfig::default());
                for frame in random_input(3, 3).frames() {
                    nes.run_frame(frame);
                }
                let mut snapshot = Vec::new();
                nes.save_state(&mut snapshot);
                (rom.clone(), snapshot)
            })
            .collect();
        let mut long_run = InputStream::new();
        long_run.push_repeated(FrameInput::buttons(0x80, 0), 200_000);
        long_run.push(FrameInput { pads: [0, 0], command: ConsoleCommand::PowerCycle });
        let input_streams = vec![
            read("roms/demo/demo.input"),
            random_input(9, 300).to_bytes(),
            InputStream::new().to_bytes(),
            long_run.to_bytes(),
        ];
        let mut manifests = vec![sample_manifest().into_bytes()];
        if let Some(dir) = support::shared_roms("fuzz_parsers: the conformance manifest as a seed") {
            if let Ok(text) = std::fs::read(dir.join("../manifest.toml")) {
                manifests.push(text);
            }
        }
        Seeds { roms, snapshots, input_streams, movies: sample_movies(), manifests }
    })
}

fn sample_movies() -> Vec<Vec<u8>> {
    let mut movie = String::from(
        "version 3\nemuVersion 22020\nrerecordCount 7\npalFlag 0\nromFilename demo\n\
         romChecksum base64:AAAA\nguid 00000000-0000-0000-0000-000000000000\nfourscore 0\nport0 1\n\
         port1 1\nport2 0\ncomment author someone\n",
    );
    for i in 0..60 {
        let command = [0, 0, 0, 1, 0, 2][i % 6];
        let pad = if i % 7 < 3 { "R..U...A" } else { "........" };
        movie.push_str(&format!("|{command}|{pad}|.L...S..||\n"));
    }
    let one_port = movie.replace("port1 1", "port1 0").replace("|.L...S..||", "|||");
    vec![movie.into_bytes(), one_port.into_bytes()]
}

fn sample_manifest() -> String {
    let table = |name: &str, protocol: &str| {
        format!(
            "[[rom]]\npath = \"roms/{name}.nes\"\nsuite = \"s\"\nprotocol = \"{protocol}\"\nmapper = 4\n\
             needs_reset = true\nframe_budget = 3600\nexpected = \"either\"\nregion = \"ntsc\"\n\
             sha1 = \"0123456789abcdef0123456789abcdef01234567\"\nnotes = \"n\"\nexpected_note = \"e\"\n"
        )
    };
    format!(
        "# comment\n{}[rom.screen]\nresult_addr = 248\npass_value = 1\ntext_pass = [\"PASSED\"]\n\
         text_fail = [\"FAILED\"]\nhow = \"zero page\"\n\n{}",
        table("a", "screen"),
        table("b", "blargg6000")
    )
}

/// Parses a ROM and, when it loads, powers it on and runs a frame.
fn check_rom(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let len = bytes.len();
    let (parsed, cost) = measured("Cartridge::from_ines", move || Cartridge::from_ines(&bytes))?;
    within("Cartridge::from_ines", cost, len, 3 * len + ROM_RAM_ALLOWANCE)?;
    let Ok(cart) = parsed else { return Ok(()) };
    let info = cart.info();
    prop_assert!(info.prg_rom_size > 0 && info.prg_rom_size <= len, "{info:?}");
    prop_assert!(info.chr_rom_size <= len, "{info:?}");
    let (_, cost) = measured("power-on and one frame", move || {
        Nes::new(cart, NesConfig::default()).run_frame(FrameInput::default())
    })?;
    within("power-on and one frame", cost, len, usize::MAX)
}

/// The NES 2.0 header fields the boards read (nesdev "NES 2.0"), for [`nes20_file`].
#[derive(Debug, Clone)]
struct Nes20Fields {
    mapper: u16,
    submapper: u8,
    /// PRG ROM in 16 KiB units (byte 4; byte 9's low nibble stays 0).
    prg_banks: u8,
    /// CHR ROM in 8 KiB units (byte 5).
    chr_banks: u8,
    /// Byte 6's low nibble: mirroring, battery, trainer, four screens.
    flags6: u8,
    /// Byte 7's low two bits: the console type (0 the NES; others are refused).
    console_type: u8,
    /// Byte 10: PRG RAM (low nibble) and PRG NVRAM (high) shift counts.
    prg_ram_shifts: u8,
    /// Byte 11: CHR RAM (low) and CHR NVRAM (high) shift counts.
    chr_ram_shifts: u8,
    /// Byte 12: the timing (bits 0-1: NTSC, PAL, multi-region, Dendy), the rest of the byte as given.
    timing: u8,
    /// Byte 14: miscellaneous ROMs (bits 0-1).
    misc_roms: u8,
    /// Byte 15: the default expansion device.
    expansion: u8,
    /// Seeds the program's register writes and the CHR bytes.
    seed: u64,
}

/// A NES 2.0 file with `fields`. Every 8 KiB of PRG is the same program, so whatever a board maps
/// where, the CPU runs it on: writes of pseudo-random values to pseudo-random addresses in the
/// board's ranges ($4020-$FFFF), the PPU's and the APU's registers, and reads of them, in a loop
/// that the vectors restart.
fn nes20_file(f: &Nes20Fields) -> Vec<u8> {
    let mut state = f.seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut header = [0u8; 16];
    header[..4].copy_from_slice(b"NES\x1a");
    header[4] = f.prg_banks;
    header[5] = f.chr_banks;
    header[6] = (f.mapper as u8) << 4 | f.flags6 & 0x0F;
    header[7] = (f.mapper as u8 & 0xF0) | 0x08 | f.console_type & 3;
    header[8] = f.submapper << 4 | (f.mapper >> 8) as u8 & 0x0F;
    header[10] = f.prg_ram_shifts;
    header[11] = f.chr_ram_shifts;
    header[12] = f.timing;
    header[14] = f.misc_roms & 3;
    header[15] = f.expansion;
    let mut program = vec![0x78, 0xD8]; // sei, cld
    let start = 0xE000u16 + program.len() as u16;
    while program.len() < 0x1000 {
        let r = next();
        let address = match r % 8 {
            0 => 0x2000 | (r >> 8) as u16 & 7,
            1 => 0x4000 | (r >> 8) as u16 & 0x17,
            2 | 3 => 0x4020 + ((r >> 8) as u16 % 0x3FE0),
            _ => 0x8000 | (r >> 8) as u16,
        };
        let [low, high] = address.to_le_bytes();
        if r >> 40 & 3 == 0 {
            program.extend_from_slice(&[0xAD, low, high]); // lda abs
        } else {
            program.extend_from_slice(&[0xA9, (r >> 32) as u8, 0x8D, low, high]); // lda #, sta abs
        }
    }
    let [low, high] = start.to_le_bytes();
    program.extend_from_slice(&[0x4C, low, high]); // jmp to the first write
    let mut bank = vec![0xEAu8; 0x2000]; // nop
    bank[..program.len()].copy_from_slice(&program);
    for vector in [0x1FFA, 0x1FFC, 0x1FFE] {
        bank[vector..vector + 2].copy_from_slice(&0xE000u16.to_le_bytes());
    }
    let mut file = header.to_vec();
    if f.flags6 & 0x04 != 0 {
        file.extend((0..512).map(|_| next() as u8));
    }
    for _ in 0..usize::from(f.prg_banks) * 2 {
        file.extend_from_slice(&bank);
    }
    file.extend((0..usize::from(f.chr_banks) * 0x2000).map(|_| next() as u8));
    if f.misc_roms & 3 != 0 {
        file.extend((0..256).map(|_| next() as u8));
    }
    file
}

/// NES 2.0 headers of the supported boards (and now and then any mapper number), with every field
/// the boards read drawn whole: submapper, RAM and NVRAM shift counts, timing, battery, trainer.
fn nes20_fields() -> impl Strategy<Value = Nes20Fields> {
    (
        prop_oneof![15 => prop::sample::select(SUPPORTED_MAPPERS.to_vec()), 1 => 0u16..4096],
        0u8..16,
        (1u8..=8, 0u8..=8),
        0u8..16,
        prop::sample::select(vec![0u8, 0, 0, 0, 0, 0, 0, 1, 2, 3]),
        any::<u8>(),
        any::<u8>(),
        prop_oneof![3 => 0u8..4, 1 => any::<u8>()],
        0u8..4,
        any::<u8>(),
        any::<u64>(),
    )
        .prop_map(
            |(
                mapper,
                submapper,
                (prg_banks, chr_banks),
                flags6,
                console_type,
                prg_ram_shifts,
                chr_ram_shifts,
                timing,
                misc_roms,
                expansion,
                seed,
            )| Nes20Fields {
                mapper,
                submapper,
                prg_banks,
                chr_banks,
                flags6,
                console_type,
                prg_ram_shifts,
                chr_ram_shifts,
                timing,
                misc_roms,
                expansion,
                seed,
            },
        )
}

/// Frames a NES 2.0 case runs once loaded.
const NES20_FRAMES: usize = 2;

/// Parses a NES 2.0 file; when it loads, the header's fields read back as written, the console is
/// the region its timing byte names, and it runs [`NES20_FRAMES`] frames.
fn check_nes20(fields: &Nes20Fields) -> Result<bool, TestCaseError> {
    let bytes = nes20_file(fields);
    let len = bytes.len();
    let (parsed, cost) = measured("Cartridge::from_ines (NES 2.0)", move || Cartridge::from_ines(&bytes))?;
    within("Cartridge::from_ines (NES 2.0)", cost, len, 3 * len + ROM_RAM_ALLOWANCE)?;
    let Ok(cart) = parsed else { return Ok(false) };
    let info = cart.info();
    prop_assert_eq!((info.mapper, info.submapper), (fields.mapper, fields.submapper));
    prop_assert_eq!(info.battery, fields.flags6 & 0x02 != 0);
    let shift = |n: u8| if n == 0 { 0 } else { 64usize << n };
    // Boards with RAM of their own size (the MMC6's 1 KiB) must be declared so or refused.
    prop_assert_eq!(
        (info.prg_ram_size, info.prg_nvram_size),
        (shift(fields.prg_ram_shifts & 0x0F), shift(fields.prg_ram_shifts >> 4))
    );
    prop_assert_eq!(
        (info.chr_ram_size, info.chr_nvram_size),
        (shift(fields.chr_ram_shifts & 0x0F), shift(fields.chr_ram_shifts >> 4))
    );
    let region = match fields.timing & 3 {
        0 => HeaderRegion::Ntsc,
        1 => HeaderRegion::Pal,
        2 => HeaderRegion::Multi,
        _ => HeaderRegion::Dendy,
    };
    prop_assert_eq!(info.region, region);
    let console = region.console().unwrap_or(Region::Ntsc);
    // Bounded by its own limit (the frames run in `measured_for`'s time), not the parsers' second.
    let (nes_region, _) =
        measured_for("power-on and frames (NES 2.0)", Duration::from_secs(10), move || {
            let mut nes = Nes::new(cart, NesConfig::default());
            for _ in 0..NES20_FRAMES {
                nes.run_frame(FrameInput::default());
            }
            nes.region()
        })?;
    prop_assert_eq!(nes_region, console);
    Ok(true)
}

/// Loads `bytes` as a snapshot into a machine running `rom`: refused with the machine untouched, or
/// loaded and able to run a frame.
fn check_snapshot(rom: &[u8], bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let mut nes = Nes::new(Cartridge::from_ines(rom).expect("seed ROM"), NesConfig::default());
    let before = nes.state_hash();
    let (len, snapshot_len) = (bytes.len(), nes.snapshot_len());
    let ((mut nes, loaded), cost) = measured("Nes::load_state", move || {
        let loaded = nes.load_state(&bytes);
        (nes, loaded)
    })?;
    // The fallback copy of the machine is allocated on the first load that gets past framing.
    within("Nes::load_state", cost, len, len + 2 * snapshot_len + SMALL)?;
    match loaded {
        Err(_) => prop_assert_eq!(nes.state_hash(), before, "a refused snapshot changed the machine"),
        Ok(()) => {
            let (_, cost) =
                measured("a frame after load_state", move || nes.run_frame(FrameInput::default()))?;
            within("a frame after load_state", cost, len, usize::MAX)?;
        }
    }
    Ok(())
}

/// Parses an input stream.
fn check_input_stream(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let len = bytes.len();
    let (parsed, cost) = measured("InputStream::from_bytes", move || InputStream::from_bytes(&bytes))?;
    // Runs take 7 bytes in memory for 5 in the file.
    within("InputStream::from_bytes", cost, len, 2 * len + SMALL)?;
    check_loaded_stream(parsed)
}

/// Imports an `.fm2` movie.
fn check_fm2(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let len = bytes.len();
    let (parsed, cost) = measured("InputStream::from_fm2", move || InputStream::from_fm2(&bytes))?;
    // At most one run per input line of at least 6 bytes, in vectors that grow by doubling.
    within("InputStream::from_fm2", cost, len, 4 * len + SMALL)?;
    check_loaded_stream(parsed)
}

/// A stream that loaded reads the input of its runs at their first and last frames (in order and
/// backwards), nothing past its end, and re-encodes to itself.
fn check_loaded_stream<E>(parsed: Result<InputStream, E>) -> Result<(), TestCaseError> {
    let Ok(stream) = parsed else { return Ok(()) };
    let runs: Vec<_> = stream.runs().take(64).collect();
    for run in runs.iter().chain(runs.iter().rev()) {
        prop_assert_eq!(stream.frame(run.start), run.input);
        prop_assert_eq!(stream.frame(run.start + run.len - 1), run.input);
    }
    prop_assert_eq!(stream.frame(stream.len()), FrameInput::default());
    prop_assert_eq!(InputStream::from_bytes(&stream.to_bytes()), Ok(stream));
    Ok(())
}

/// Parses a conformance manifest.
fn check_manifest(bytes: Vec<u8>) -> Result<(), TestCaseError> {
    let len = bytes.len();
    let (parsed, cost) = measured("Manifest::parse", move || {
        Manifest::parse(&String::from_utf8_lossy(&bytes), Path::new("fuzz/manifest.toml"))
    })?;
    // The TOML document tree, then the typed manifest.
    within("Manifest::parse", cost, len, 64 * len + 64 * SMALL)?;
    if let Ok(manifest) = parsed {
        for rom in &manifest.roms {
            // Relative ROM paths resolve inside the manifest's folder; absolute ones stand as written
            // (`RomEntry::file`).
            if Path::new(&rom.path).is_absolute() {
                prop_assert_eq!(&rom.file, Path::new(&rom.path));
            } else {
                prop_assert!(rom.file.starts_with("fuzz"), "{:?}", rom.file);
            }
        }
    }
    Ok(())
}

/// Arbitrary bytes, half the time behind `magic` so they reach the checks after it.
fn bytes_behind(magic: &'static [u8], max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..max_len)).prop_map(
        move |(behind, mut bytes)| {
            if behind {
                bytes.splice(0..0, magic.iter().copied());
            }
            bytes
        },
    )
}

/// A seed index and mutations; mostly with checksums resealed.
fn mutations_of(seeds: usize, shape: Shape) -> impl Strategy<Value = (usize, Vec<Mutation>, bool)> {
    (0..seeds, mutations(shape), prop::bool::weighted(0.8))
}

/// Snapshots: past the 48-byte header, whose ROM identity and region only ever match or not, to the
/// section headers and payloads.
const SNAPSHOT_SHAPE: Shape = Shape { fields_at: SNAPSHOT_HEADER_LEN, text: false };

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn roms_arbitrary(bytes in bytes_behind(b"NES\x1a", 4096)) {
        check_rom(bytes)?;
    }

    #[test]
    fn roms_mutated((seed, changes, _) in mutations_of(seeds().roms.len(), BINARY)) {
        check_rom(mutated(&seeds().roms[seed], &changes))?;
    }

    #[test]
    fn snapshots_arbitrary(bytes in bytes_behind(b"ANESSNAP\x01\x00\x0e\x00", 4096)) {
        check_snapshot(&seeds().roms[0], bytes)?;
    }

    #[test]
    fn snapshots_mutated((seed, changes, reseal) in mutations_of(seeds().snapshots.len(), SNAPSHOT_SHAPE)) {
        let (rom, snapshot) = &seeds().snapshots[seed];
        let mut bytes = mutated(snapshot, &changes);
        if reseal {
            reseal_snapshot(&mut bytes, SNAPSHOT_HEADER_LEN);
        }
        check_snapshot(rom, bytes)?;
    }

    #[test]
    fn input_streams_arbitrary(bytes in bytes_behind(b"ANESINPT\x01\x00\x00\x00", 1024), reseal: bool) {
        let mut bytes = bytes;
        if reseal {
            reseal_input_stream(&mut bytes);
        }
        check_input_stream(bytes)?;
    }

    #[test]
    fn input_streams_mutated((seed, changes, reseal) in mutations_of(seeds().input_streams.len(), BINARY)) {
        let mut bytes = mutated(&seeds().input_streams[seed], &changes);
        if reseal {
            reseal_input_stream(&mut bytes);
        }
        check_input_stream(bytes)?;
    }

    #[test]
    fn fm2_arbitrary(text in "(version 3\n)?([|.0-9RLDUTSBA \r\n]|port[0-2] [0-2]\n|length [0-9]{1,12}\n){0,400}") {
        check_fm2(text.into_bytes())?;
    }

    #[test]
    fn fm2_mutated((seed, changes, _) in mutations_of(seeds().movies.len(), TEXT)) {
        check_fm2(mutated(&seeds().movies[seed], &changes))?;
    }

    #[test]
    fn manifests_arbitrary(text in "([\\[\\]=\"#.a-z_0-9 \n]|\\[\\[rom\\]\\]\n|path = \"x\"\n){0,300}") {
        check_manifest(text.into_bytes())?;
    }

    #[test]
    fn manifests_mutated((seed, changes, _) in mutations_of(seeds().manifests.len(), TEXT)) {
        check_manifest(mutated(&seeds().manifests[seed], &changes))?;
    }
}

proptest! {
    // Each case runs frames, so fewer of them (an eighth of the others' count).
    #![proptest_config(ProptestConfig { cases: (fuzz::config().cases / 8).max(1), ..fuzz::config() })]

    #[test]
    fn roms_nes20_headers(fields in nes20_fields()) {
        check_nes20(&fields)?;
    }
}

/// Every supported board from two NES 2.0 headers: one with CHR ROM and submapper 0, one with CHR
/// RAM (byte 11) and another submapper, their timings two apart (so the boards share out all four),
/// battery-backed and volatile PRG RAM (byte 10): at least one of each board's headers loads, and
/// each that loads runs its frames on the console its timing names.
#[test]
fn every_supported_board_runs_from_nes20_headers() {
    let mut never = Vec::new();
    for (i, &mapper) in SUPPORTED_MAPPERS.iter().enumerate() {
        let mut loads = 0;
        for chr_ram in [false, true] {
            let timing = (i as u8 + if chr_ram { 2 } else { 0 }) % 4;
            let submapper = if chr_ram { ((i * 5 + 1) % 16) as u8 } else { 0 };
            let fields = Nes20Fields {
                mapper,
                submapper,
                prg_banks: 8,
                chr_banks: if chr_ram { 0 } else { 8 },
                flags6: if timing % 2 == 1 { 0x03 } else { 0x00 },
                console_type: 0,
                prg_ram_shifts: 0x77,
                chr_ram_shifts: if chr_ram { 0x07 } else { 0 },
                timing,
                misc_roms: 0,
                expansion: 0,
                seed: u64::from(mapper) << 8 | u64::from(timing),
            };
            match check_nes20(&fields) {
                Ok(true) => loads += 1,
                Ok(false) => {}
                Err(e) => panic!("mapper {mapper} submapper {submapper} timing {timing}: {e}"),
            }
        }
        if loads == 0 {
            never.push(mapper);
        }
    }
    assert!(never.is_empty(), "no NES 2.0 header of these boards loaded: {never:?}");
}

/// A CI run's random-seed finding, pinned: NES 2.0 CHR RAM of 2 MiB + 1 MiB with four-screen VRAM
/// after it grew by doubling and held 9 MiB of heap at its peak (limit 8.5 MiB).
#[test]
fn declared_chr_ram_grows_by_exactly_what_it_needs() {
    let fields = Nes20Fields {
        mapper: 0,
        submapper: 0,
        prg_banks: 1,
        chr_banks: 0,
        flags6: 0x08,
        console_type: 0,
        prg_ram_shifts: 0,
        chr_ram_shifts: 0xEF,
        timing: 0,
        misc_roms: 0,
        expansion: 0,
        seed: 0,
    };
    if let Err(e) = check_nes20(&fields) {
        panic!("{e}");
    }
}

/// The fuzzing pass's input-stream finding, pinned: a frame count rewritten (and the checksum
/// resealed) must not make the parser allocate for frames the runs do not hold.
#[test]
fn declared_frame_counts_never_drive_allocation() {
    let seed = random_input(9, 300).to_bytes();
    for declared in [300u32, 301, 0x10_0000, 0x7FFF_FFFF, u32::MAX] {
        let mut bytes = seed.clone();
        bytes[12..16].copy_from_slice(&declared.to_le_bytes());
        reseal_input_stream(&mut bytes);
        let len = bytes.len();
        let (parsed, cost) = measured("from_bytes", move || InputStream::from_bytes(&bytes)).unwrap();
        assert_eq!(parsed.is_ok(), declared == 300, "declared {declared}");
        within("from_bytes", cost, len, 2 * len + SMALL).unwrap();
    }
}
