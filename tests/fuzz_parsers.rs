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

use anes::conformance::Manifest;
use anes::core::movie::{ConsoleCommand, FrameInput, InputStream};
use anes::core::state::SNAPSHOT_HEADER_LEN;
use anes::core::{Cartridge, Nes, NesConfig};
use fuzz::mutate::{BINARY, Mutation, Shape, TEXT, mutated, mutations, reseal_input_stream, reseal_snapshot};
use fuzz::{measured, within};
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
