//! The console's region (NTSC, PAL, Dendy): frame lengths against the nesdev wiki's figures, the
//! region chosen from the NES 2.0 header or overridden, snapshots that round-trip within a region and
//! are refused across regions, and state hashes that never agree across regions.

mod support;

use anes::harness::Harness;
use anes::nes::movie::FrameInput;
use anes::nes::state::SnapshotError;
use anes::nes::{Cartridge, Nes, NesConfig, Region};
use support::{CHECK_SEEN, describe_checks, failed_checks, random_input, repo_root, run_checks};

fn demo() -> Vec<u8> {
    std::fs::read(repo_root().join("roms/demo/demo.nes")).expect("the demo is committed")
}

fn console(rom: &[u8], region: Option<Region>) -> Nes {
    Nes::with_region(Cartridge::from_ines(rom).expect("ROM loads"), NesConfig::default(), region)
}

/// The master clock at which the PPU reached scanline 241, dot 0 (where a frame ends), from a console
/// stopped at a frame's end: the PPU stands `dot` dots into line 241 and lags the master clock by the
/// CPU/PPU phase and less than a dot, so this is exact to within a dot.
fn picture_end_master_clock(nes: &Nes) -> u64 {
    let timing = nes.region().timing();
    let (scanline, dot) = nes.ppu_position();
    assert_eq!(scanline, 241, "a frame ends on line 241");
    nes.master_clock() - u64::from(nes.config().alignment()) - u64::from(dot) * timing.master_per_dot
}

#[test]
fn frame_lengths_match_the_wiki() {
    // nesdev "Cycle reference chart": 29,780.5 CPU cycles per frame on NTSC (341 x 262 dots, the
    // odd-frame skip of a rendering PPU averaging half a dot per frame, 3 dots per cycle), 33,247.5
    // on PAL (341 x 312 dots, 3.2 dots per cycle), 35,464 on Dendy (341 x 312 dots, 3 per cycle).
    // The demo renders every frame from its first NMI on, so the NTSC skip happens every other frame.
    const FRAMES: u64 = 600;
    let rom = demo();
    for (region, twice_cycles_per_frame, master_per_cycle) in
        [(Region::Ntsc, 59_561u64, 12u64), (Region::Pal, 66_495, 16), (Region::Dendy, 70_928, 15)]
    {
        let mut nes = console(&rom, Some(region));
        let input = random_input(0x5E6, 100 + FRAMES as usize);
        for i in 0..100 {
            nes.run_frame(input.frame(i));
        }
        let (start_master, start_cycle) = (picture_end_master_clock(&nes), nes.cpu_cycle());
        for i in 100..100 + FRAMES as usize {
            nes.run_frame(input.frame(i));
        }
        let master = picture_end_master_clock(&nes) - start_master;
        let expected_master = FRAMES * twice_cycles_per_frame * master_per_cycle / 2;
        // Within one dot at each end (the PPU's lag behind the master clock).
        let dot = region.timing().master_per_dot;
        assert!(
            master.abs_diff(expected_master) < 2 * dot,
            "{region}: {FRAMES} frames took {master} master clocks, the wiki's figure is {expected_master}"
        );
        // In CPU cycles: the frame ends at the first instruction boundary after the picture, so each
        // end may be late by an instruction and a sprite DMA.
        let cycles = nes.cpu_cycle() - start_cycle;
        let expected_cycles = FRAMES * twice_cycles_per_frame / 2;
        assert!(
            cycles.abs_diff(expected_cycles) <= 2 * 520,
            "{region}: {FRAMES} frames took {cycles} CPU cycles, the wiki's figure is {expected_cycles}"
        );
    }
}

#[test]
fn the_header_chooses_the_region_and_an_override_wins() {
    let mut rom = demo();
    assert_eq!(rom[7] & 0x0C, 0x08, "the demo has an NES 2.0 header");
    // nesdev "NES 2.0" byte 12: 0 NTSC, 1 PAL, 2 multi-region (NTSC unless told), 3 Dendy.
    for (byte12, from_header) in
        [(0u8, Region::Ntsc), (1, Region::Pal), (2, Region::Ntsc), (3, Region::Dendy)]
    {
        rom[12] = byte12;
        assert_eq!(console(&rom, None).region(), from_header, "byte 12 = {byte12}");
        for region in Region::ALL {
            assert_eq!(console(&rom, Some(region)).region(), region, "byte 12 = {byte12}, told {region}");
        }
    }
    // iNES 1.0 gives no reliable answer: NTSC.
    let mut ines = demo();
    ines[7] &= !0x0C;
    ines[8..16].fill(0);
    ines[9] = 1; // the iNES 1.0 text's PAL bit, which ROMs in the wild set at random
    let cart = Cartridge::from_ines(&ines).expect("the demo as an iNES 1.0 file loads");
    assert_eq!(Nes::new(cart, NesConfig::default()).region(), Region::Ntsc);
}

#[test]
fn snapshots_round_trip_within_a_region_and_are_refused_across_regions() {
    let rom = demo();
    let input = random_input(0x2E6, 240);
    let mut snapshots = Vec::new();
    for region in Region::ALL {
        let mut nes = console(&rom, Some(region));
        for i in 0..120 {
            nes.run_frame(input.frame(i));
        }
        // Mid-frame, where PAL's dot pattern is anywhere in its five-cycle period.
        for _ in 0..777 {
            nes.step_instruction();
        }
        let mut snapshot = Vec::new();
        nes.save_state(&mut snapshot);
        let mut restored = console(&rom, Some(region));
        restored.load_state(&snapshot).expect("a snapshot restores into a console of its region");
        assert_eq!(restored.state_hash(), nes.state_hash(), "{region}");
        for i in 120..240 {
            let frame: FrameInput = input.frame(i);
            assert_eq!(
                restored.run_frame(frame),
                nes.run_frame(frame),
                "{region}: frame {i} after the restore"
            );
        }
        snapshots.push((region, snapshot));
    }
    for (from, snapshot) in &snapshots {
        for into in Region::ALL {
            let mut nes = console(&rom, Some(into));
            let before = nes.state_hash();
            let result = nes.load_state(snapshot);
            if *from == into {
                assert_eq!(result, Ok(()));
            } else {
                assert_eq!(result, Err(SnapshotError::WrongRegion { found: *from, expected: into }));
                assert_eq!(nes.state_hash(), before, "a refused snapshot leaves the console untouched");
            }
        }
    }
}

#[test]
fn consoles_of_different_regions_never_hash_alike() {
    let rom = demo();
    let mut consoles: Vec<Nes> = Region::ALL.iter().map(|&region| console(&rom, Some(region))).collect();
    for frame in 0..3 {
        let hashes: Vec<_> = consoles.iter().map(Nes::state_hash).collect();
        for (a, hash_a) in hashes.iter().enumerate() {
            for hash_b in &hashes[a + 1..] {
                assert_ne!(hash_a, hash_b, "frame {frame}");
            }
        }
        for nes in &mut consoles {
            nes.run_frame(FrameInput::default());
        }
    }
}

#[test]
fn a_power_cycle_keeps_the_region() {
    let rom = demo();
    for region in Region::ALL {
        let mut nes = console(&rom, Some(region));
        let fresh = nes.state_hash();
        for _ in 0..30 {
            nes.run_frame(FrameInput::default());
        }
        nes.power_cycle();
        assert_eq!((nes.region(), nes.state_hash()), (region, fresh), "{region}");
    }
}

/// Our ROM `roms/regions/timing.nes` measures the frame length, the NMI line (VBlank after NMI), the
/// APU frame IRQ period, the PAL PPU's forced OAM refresh (OAMADDR counting through late VBlank) and
/// the DMC IRQ period at rates 15 and 0 (the region's DMC period table) with CPU loops, recognizes the region by its frame length and checks the
/// rest against the nesdev wiki's figures for that region (written in its source).
#[test]
fn the_timing_rom_recognizes_each_region_and_passes_its_checks() {
    const CHECKS: [&str; 6] = [
        "frame length is a region's",
        "NMI line (VBlank after NMI)",
        "frame IRQ period",
        "OAM refresh",
        "DMC rate 15 period",
        "DMC rate 0 period",
    ];
    let rom =
        std::fs::read(repo_root().join("roms/regions/timing.nes")).expect("the region ROM is committed");
    for (index, region) in Region::ALL.into_iter().enumerate() {
        let mut nes = console(&rom, Some(region));
        run_checks(&mut nes);
        let failed = failed_checks(&nes, &CHECKS);
        let counts: Vec<u16> = (0..6)
            .map(|i| u16::from_le_bytes([nes.peek(0x0760 + 2 * i), nes.peek(0x0761 + 2 * i)]))
            .collect();
        assert!(failed.is_empty(), "{region}: counts {counts:?}{}", describe_checks(&failed, &CHECKS));
        assert_eq!(
            usize::from(nes.peek(CHECK_SEEN)),
            index,
            "{region}: the ROM recognized region {} (0 NTSC, 1 PAL, 2 Dendy); counts {counts:?}",
            nes.peek(CHECK_SEEN)
        );
    }
}

#[test]
fn a_flipped_machine_section_bit_never_changes_the_region_nor_panics() {
    // The fault campaign flips random state bits; one in the region byte used to make the console
    // read an invalid region out of its own state and panic. The region is fixed at power-on: a
    // flip of it is refused as impossible, every other flip leaves it as it was.
    use anes::nes::Section;
    use anes::nes::state::FaultError;
    let rom = demo();
    for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
        let mut nes = console(&rom, Some(region));
        nes.run_frame(FrameInput::default());
        let mut refused = 0;
        for offset in 0.. {
            let mut out_of_range = false;
            for bit in 0..8 {
                match nes.flip_state_bit(Section::Machine, offset, bit) {
                    Ok(()) => {
                        nes.flip_state_bit(Section::Machine, offset, bit).expect("flipping back is possible");
                    }
                    Err(FaultError::Impossible { .. }) => refused += 1,
                    Err(FaultError::OutOfRange { .. }) => out_of_range = true,
                    Err(e) => panic!("{region}: byte {offset} bit {bit}: {e}"),
                }
                assert_eq!(nes.region(), region, "byte {offset} bit {bit}");
            }
            if out_of_range {
                break;
            }
        }
        assert!(refused >= 8, "{region}: each bit of the region byte is refused, {refused} refusals in all");
        nes.run_frame(FrameInput::default());
        assert_eq!(nes.region(), region);
    }
}

/// `../shared/regions/nmi_sync/` (Shay Green's NMI synchronization demos, public test input): each
/// syncs to the PPU to the cycle at power-on, then every frame writes `$2001` twice at a fixed CPU
/// cycle of the frame, greying a short stretch of one line (monochrome on a black backdrop turns it
/// white) between two sprite reference lines. Its readme: the stretch's left edge flickers by a pixel
/// on NTSC and "a pixel or two" on PAL, where a frame is 33,247.5 CPU cycles and the CPU's cycles fall
/// at five places of the 3.2-dot pattern, but never moves. The dot pattern carried frame to frame and
/// through a snapshot is what keeps it still: a lost phase would move the edge by up to 3 dots a
/// frame. (Known deviation, issue 27: the edge shows 2 pixels right of the readme's reference
/// position on NTSC, x 82/83 where the readme draws 80/81; not asserted here.)
#[test]
fn the_nmi_sync_demos_keep_their_timed_line_still() {
    let dir = repo_root().join("../shared/regions/nmi_sync");
    if !dir.join("demo_pal.nes").is_file() {
        assert!(!anes_fs::ci_is_set(), "no {}: the region test ROMs are part of CI", dir.display());
        eprintln!("skipped: no {}", dir.display());
        return;
    }
    for (file, region, flicker) in [("demo_ntsc.nes", Region::Ntsc, 1), ("demo_pal.nes", Region::Pal, 2)] {
        let rom = std::fs::read(dir.join(file)).expect("readable demo");
        let mut nes = console(&rom, Some(region));
        let mut edges = Vec::new();
        for frame in 0..240 {
            if frame == 120 {
                // Mid-frame: a restored console must carry the dot pattern's phase on.
                for _ in 0..777 {
                    nes.step_instruction();
                }
                let mut snapshot = Vec::new();
                nes.save_state(&mut snapshot);
                nes = console(&rom, Some(region));
                nes.load_state(&snapshot).expect("the snapshot restores");
            }
            nes.run_frame(FrameInput::default());
            if frame < 20 {
                continue; // the demo syncs over its first frames
            }
            let picture = nes.ppu().frame_buffer();
            let first_white =
                |row: usize, below: usize| (0..below).find(|&x| picture[row * 256 + x] & 0x3F == 0x30);
            let upper =
                first_white(119, 256).unwrap_or_else(|| panic!("{file} frame {frame}: no upper line"));
            // The timed stretch, left of the sprites' right-hand column (tile 1 at x + 16).
            let timed: Vec<(usize, usize)> =
                (120..=122).filter_map(|row| first_white(row, upper + 16).map(|x| (row, x))).collect();
            let [(_, left)] = timed[..] else {
                panic!("{file} ({region}) frame {frame}: timed stretch on rows {timed:?}, expected one row");
            };
            edges.push(left);
        }
        let (min, max) = (*edges.iter().min().unwrap(), *edges.iter().max().unwrap());
        assert!(max - min <= flicker, "{file} ({region}): the left edge moved between x {min} and {max}");
    }
}

/// Our ROM `roms/regions/dots.nes` syncs the CPU to the VBlank flag to the cycle (a `$2002` read
/// once a frame, a third, half or whole cycle later each frame) and then reads the flag once a
/// frame for 12 frames at the cycles the region's frame lengths predict (nesdev "Cycle reference
/// chart", "PPU frame timing", "Consistent frame synchronization"): NTSC 29781, 29781, 29780 with
/// rendering off and 29781, 29780 with it on (the odd frames' skipped dot), PAL 33248, 33247 either
/// way (33,247.5 on average: the half cycle alternates), Dendy 35464. The first six reads must see
/// the flag, the last six, a cycle earlier each, must not.
#[test]
fn the_dot_pattern_rom_sees_each_regions_pattern_across_frames() {
    const CHECKS: [&str; 5] = [
        "frame length is a region's",
        "rendering off: flag seen at the predicted cycle (frames 1-6)",
        "rendering off: flag not seen a cycle earlier (frames 7-12)",
        "rendering on: flag seen at the predicted cycle (frames 1-6)",
        "rendering on: flag not seen a cycle earlier (frames 7-12)",
    ];
    let rom =
        std::fs::read(repo_root().join("roms/regions/dots.nes")).expect("the dot pattern ROM is committed");
    for (index, region) in Region::ALL.into_iter().enumerate() {
        let mut nes = console(&rom, Some(region));
        // The syncs take up to 25 frames each (NTSC), the reads 12.
        let frames = (0..200)
            .position(|_| {
                nes.run_frame(FrameInput::default());
                nes.peek(support::CHECK_STATUS) != 0x80 && nes.peek(support::CHECK_COUNT) != 0
            })
            .unwrap_or_else(|| panic!("{region}: the ROM did not report within 200 frames"));
        let failed = failed_checks(&nes, &CHECKS);
        let word = |i: u16| u16::from_le_bytes([nes.peek(0x0760 + 2 * i), nes.peek(0x0761 + 2 * i)]);
        let (count, off, on) = (word(0), word(1), word(2));
        let seen = format!(
            "NMI-to-NMI count {count}, flag seen in frames 1-12: rendering off {off:016b}, on {on:016b} \
             (frame 1 in bit 11; expected 0000111111000000), after {frames} frames"
        );
        assert!(failed.is_empty(), "{region}: {seen}{}", describe_checks(&failed, &CHECKS));
        assert_eq!(
            usize::from(nes.peek(CHECK_SEEN)),
            index,
            "{region}: the ROM recognized another region; {seen}"
        );
        assert_eq!(nes.peek(0x0010), 1, "{region}: the screen protocol's verdict byte");
    }
}
