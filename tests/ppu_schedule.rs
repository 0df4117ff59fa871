//! The lazy PPU schedule (the default: the PPU runs only where the CPU could observe it) must give
//! exactly the machine the eager reference schedule gives (the PPU caught up at every point of every
//! CPU cycle): the same FrameRecord, state hash included, after every frame, on every ROM and at every
//! CPU/PPU phase, and after a restore in the middle of a frame; and the same picture. The
//! `..._after_every_instruction_...` tests compare the whole state after every instruction
//! (`ANES_PPU_SCHEDULE_FULL=1` runs them longer, at every phase).

mod support;

use std::path::{Path, PathBuf};

use anes::nes::movie::{ConsoleCommand, InputStream};
use anes::nes::{Cartridge, Nes, NesConfig, PpuCatchUp, Region, Section};
use support::{determinism_roms, for_each_rom_in_parallel, is_board_check_rom, random_input, shared_roms};

fn pair(rom: &[u8], alignment: u8) -> (Nes, Nes) {
    pair_in(rom, alignment, None)
}

/// [`pair`] with the consoles' region chosen (`None`: the header's).
fn pair_in(rom: &[u8], alignment: u8, region: Option<Region>) -> (Nes, Nes) {
    let config = NesConfig { cpu_ppu_alignment: Some(alignment), ..NesConfig::default() };
    let lazy = Nes::with_region(Cartridge::from_ines(rom).expect("ROM loads"), config, region);
    assert_eq!(lazy.ppu_catch_up(), PpuCatchUp::Lazy, "lazy is the default");
    let mut eager = Nes::with_region(Cartridge::from_ines(rom).expect("ROM loads"), config, region);
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    (lazy, eager)
}

fn assert_frames_agree(name: &str, alignment: u8, lazy: &mut Nes, eager: &mut Nes, input: &InputStream) {
    for (i, frame) in input.frames().enumerate() {
        let a = lazy.run_frame(frame);
        let b = eager.run_frame(frame);
        assert_eq!(a, b, "{name}, phase {alignment}: lazy and eager differ after frame {i}");
        // The picture is output, not state, so the hash does not cover it: compare it too.
        assert!(
            lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(),
            "{name}, phase {alignment}: the pictures differ after frame {i}"
        );
    }
}

/// Runs `input` on both machines one instruction at a time and compares them after every
/// instruction: the CPU cycle, the PPU position, whether the frame ended, and
/// [`Nes::state_digest`], which any changed byte of what the state hash covers changes (hashing
/// ~10,000 times a frame costs ~30 times the emulation; comparing the bytes took 43% of this test);
/// at each frame's end every byte, the records (state hashes included) and the pictures too. A mismatch names the
/// frame, the instruction, the CPU cycle and the first differing section.
fn assert_instructions_agree(
    name: &str,
    alignment: u8,
    lazy: &mut Nes,
    eager: &mut Nes,
    input: &InputStream,
) {
    for (frame_index, frame) in input.frames().enumerate() {
        lazy.begin_frame(frame);
        eager.begin_frame(frame);
        for instruction in 1u64.. {
            let lazy_done = lazy.step_in_frame();
            let eager_done = eager.step_in_frame();
            let bytes_differ = || {
                Section::ALL
                    .iter()
                    .any(|&section| lazy.section_bytes(section) != eager.section_bytes(section))
            };
            if lazy.cpu_cycle() != eager.cpu_cycle()
                || lazy.ppu_position() != eager.ppu_position()
                || lazy_done != eager_done
                || lazy.state_digest() != eager.state_digest()
                || (lazy_done && bytes_differ())
            {
                panic!(
                    "{name}, phase {alignment}: lazy and eager differ in frame {frame_index} after its instruction \
                     {instruction}: {}",
                    describe_difference(lazy, eager)
                );
            }
            if lazy_done {
                break;
            }
        }
        assert_eq!(
            lazy.frame_record(),
            eager.frame_record(),
            "{name}, phase {alignment}: the records differ at the end of frame {frame_index}"
        );
        assert!(
            lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(),
            "{name}, phase {alignment}: the pictures differ after frame {frame_index}"
        );
    }
}

/// Where the two machines stand, and the first section whose digest differs with the offset of its
/// first differing byte.
fn describe_difference(lazy: &Nes, eager: &Nes) -> String {
    let first_section =
        lazy.section_digests().into_iter().zip(eager.section_digests()).find(|(a, b)| a != b).map_or(
            "none".to_owned(),
            |((section, _), _)| {
                let (a, b) = (lazy.section_bytes(section), eager.section_bytes(section));
                let offset = a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
                format!("{} (byte {offset})", section.name())
            },
        );
    format!(
        "CPU cycle {} (eager {}), PPU at {:?} (eager {:?}), PC ${:04X} (eager ${:04X}); first differing section: \
         {first_section}",
        lazy.cpu_cycle(),
        eager.cpu_cycle(),
        lazy.ppu_position(),
        eager.ppu_position(),
        lazy.cpu().pc,
        eager.cpu().pc,
    )
}

/// How long the per-instruction comparison runs: by default each ROM runs `frames` frames at one
/// phase, rotating through the four across the ROMs (both tests together: ~22 s of CPU in the dev
/// profile); with `ANES_PPU_SCHEDULE_FULL=1` every ROM runs 600 frames at every phase.
fn every_instruction_plan(rom_index: usize, frames: usize) -> (usize, Vec<u8>) {
    if anes_fs::env_flag("ANES_PPU_SCHEDULE_FULL") {
        (600, vec![0, 1, 2, 3])
    } else {
        (frames, vec![(rom_index % 4) as u8])
    }
}

/// Every ROM at one CPU/PPU phase for `frames` frames; a board's check ROM (see [`is_board_check_rom`])
/// for at most 60, its checks being done by then.
fn check_all(alignment: u8, frames: usize) {
    for_each_rom_in_parallel(&determinism_roms(), |seed, name, rom| {
        let (mut lazy, mut eager) = pair(rom, alignment);
        let frames = if is_board_check_rom(name) { frames.min(60) } else { frames };
        let input = random_input(seed as u64 ^ u64::from(alignment) << 32, frames);
        assert_frames_agree(name, alignment, &mut lazy, &mut eager, &input);
    });
}

#[test]
fn lazy_equals_eager_at_phase_0() {
    check_all(0, 240);
}

#[test]
fn lazy_equals_eager_at_phase_1() {
    check_all(1, 90);
}

#[test]
fn lazy_equals_eager_at_phases_2_and_3() {
    // A dot falls between the read and the write access points here: the MMC3's M2 edges, which
    // both schedules place at the read access point whatever the access, are replayed all the same.
    check_all(2, 60);
    check_all(3, 60);
}

#[test]
fn lazy_equals_eager_in_pal_and_dendy() {
    // PAL's 3.2 dots per CPU cycle put the CPU's access points at five different places in the dot
    // across five cycles; Dendy keeps NTSC's three dots but 50 more post-render lines. Every ROM, at
    // two phases, frame by frame, then instruction by instruction on a rotating subset.
    // A board's test ROM (`roms/<family>/`) checks its registers in its first frames and then idles:
    // one phase, 30 frames, in each of these regions (every phase runs in NTSC above); the ROMs that
    // work the PPU and the CPU's timing throughout (the demo, the stress ROMs, the region ROM, the
    // conformance ROMs) run both phases for 60 frames.
    for region in [Region::Pal, Region::Dendy] {
        for_each_rom_in_parallel(&determinism_roms(), |seed, name, rom| {
            let board_check = is_board_check_rom(name);
            let (alignments, frames) =
                if board_check { (&[(seed % 2) as u8][..], 30) } else { (&[0, 1][..], 60) };
            for &alignment in alignments {
                let (mut lazy, mut eager) = pair_in(rom, alignment, Some(region));
                assert_eq!(lazy.region(), region);
                let input = random_input(seed as u64 ^ 0x9A1 << 40 ^ u64::from(alignment), frames);
                assert_frames_agree(&format!("{name} ({region})"), alignment, &mut lazy, &mut eager, &input);
            }
            if seed % if board_check { 6 } else { 3 } == 0 {
                let alignment = (seed % 4) as u8;
                let input = random_input(seed as u64 ^ 0xD3D << 40, 40);
                assert_instructions_agree_in(name, rom, alignment, region, &input);
            }
        });
    }
}

#[test]
fn lazy_equals_eager_on_the_timing_suites() {
    // The ROMs that probe the PPU and the MMC3 counter cycle by cycle.
    let Some(dir) = shared_roms("lazy_equals_eager_on_the_timing_suites") else { return };
    for suite in ["mmc3_test_2/rom_singles", "ppu_vbl_nmi/rom_singles", "sprite_hit_tests_2005.10.05"] {
        for (path, rom) in nes_files(&dir.join(suite)) {
            let (mut lazy, mut eager) = pair(&rom, 0);
            let input = InputStream::from_frames(vec![Default::default(); 150]);
            assert_frames_agree(&path.display().to_string(), 0, &mut lazy, &mut eager, &input);
        }
    }
}

/// The `.nes` files directly in `dir`, sorted, with their bytes; a missing or empty folder is an error.
fn nes_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|err| panic!("{}: {err}", dir.display()));
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "nes"));
    paths.sort();
    assert!(!paths.is_empty(), "{}: no .nes files", dir.display());
    paths
        .into_iter()
        .map(|path| {
            let rom = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
            (path, rom)
        })
        .collect()
}

#[test]
fn resets_and_power_cycles_agree() {
    // The console commands re-run the CPU's reset sequence and rebuild the PPU or the whole machine.
    // The MMC6 ROM counts its boots in battery-backed RAM, which a power cycle keeps.
    for rom in
        ["roms/demo/demo.nes", "roms/stress/mmc3_a12.nes", "roms/stress/ppu_race.nes", "roms/mmc6/mmc6.nes"]
    {
        let bytes = std::fs::read(support::repo_root().join(rom)).expect("bundled ROM");
        let mut input = random_input(11, 200);
        let mut frames: Vec<_> = input.frames().collect();
        frames[37].command = ConsoleCommand::SoftReset;
        frames[90].command = ConsoleCommand::PowerCycle;
        frames[91].command = ConsoleCommand::SoftReset;
        frames[150].command = ConsoleCommand::SoftReset;
        input = InputStream::from_frames(frames);
        let (mut lazy, mut eager) = pair(&bytes, 0);
        assert_frames_agree(rom, 0, &mut lazy, &mut eager, &input);
    }
}

#[test]
fn a_restore_mid_frame_continues_exactly_as_eager() {
    let demo = std::fs::read(support::repo_root().join("roms/demo/demo.nes")).expect("bundled demo ROM");
    let input = random_input(7, 40);
    let (mut lazy, mut eager) = pair(&demo, 0);
    for frame in input.frames().take(20) {
        eager.run_frame(frame);
    }
    // Into the middle of the next frame, instruction by instruction.
    eager.begin_frame(input.frame(20));
    for _ in 0..3_000 {
        eager.step_instruction();
    }
    let mut snapshot = Vec::new();
    eager.save_state(&mut snapshot);
    lazy.load_state(&snapshot).expect("same ROM");
    assert_eq!(lazy.state_hash(), eager.state_hash());
    let a_done = {
        while !lazy.step_in_frame() {}
        lazy.frame_record()
    };
    let b_done = {
        while !eager.step_in_frame() {}
        eager.frame_record()
    };
    assert_eq!(a_done, b_done, "the rest of the restored frame");
    let rest: InputStream = input.frames().skip(21).collect();
    assert_frames_agree("demo after restore", 0, &mut lazy, &mut eager, &rest);
}

/// [`random_irq_board_program`] on the MMC3.
fn random_mmc3_program(seed: u64) -> Vec<u8> {
    random_irq_board_program(seed, &MMC3)
}

/// A board with a scanline counter clocked by PPU A12, as the random programs drive it: its mapper
/// and the registers they write. The MMC3's, the TC0690's and the RAMBO-1's differ in where the
/// registers sit and when /IRQ rises (at the A12 clock, four and two M2 edges later).
struct IrqBoard {
    mapper: u8,
    /// The latch, written as `latch_xor` ^ the value (the TC0690's is written inverted).
    latch: u16,
    latch_xor: u8,
    /// Reload at the next clock (the RAMBO-1's bit 0 also picks the mode: 1 counts CPU cycles).
    reload: u16,
    enable: u16,
    /// Disables and acknowledges.
    disable: u16,
    mirroring: u16,
    /// Two bank register writes (address, value), from a random value and more random numbers.
    bank: BankWrites,
    /// Where the sprite table also goes, as an offset in the 32 KiB of PRG: the bank the board
    /// maps at $D000 at power-on, when it is not the fixed one.
    table_copy: Option<usize>,
}

/// See [`IrqBoard::bank`]: the random numbers come from a draw below a bound.
type BankWrites = fn(u8, &mut dyn FnMut(u64) -> u64) -> [(u16, u8); 2];

const MMC3: IrqBoard = IrqBoard {
    mapper: 4,
    latch: 0xC000,
    latch_xor: 0,
    reload: 0xC001,
    enable: 0xE001,
    disable: 0xE000,
    mirroring: 0xA000,
    bank: |value, next| [(0x8000, value & 0xC7), (0x8001, next(256) as u8)],
    table_copy: None,
};

const TC0690: IrqBoard = IrqBoard {
    mapper: 48,
    latch: 0xC000,
    latch_xor: 0xFF,
    reload: 0xC001,
    enable: 0xC002,
    disable: 0xC003,
    mirroring: 0xE000,
    // Any of the six CHR registers or the $8000/$A000 PRG banks (the code runs from the fixed $E000).
    bank: |value, next| {
        let register = |n: u64| [0x8000, 0x8001, 0x8002, 0x8003, 0xA000, 0xA001, 0xA002, 0xA003][n as usize];
        [(register(u64::from(value) % 8), value), (register(next(8)), next(256) as u8)]
    },
    table_copy: None,
};

/// The RAMBO-1 on mapper 64 (`tengen` 158 is the same chip: [`TENGEN_800037`]).
const RAMBO1: IrqBoard = IrqBoard {
    mapper: 64,
    latch: 0xC000,
    latch_xor: 0,
    reload: 0xC001,
    enable: 0xE001,
    disable: 0xE000,
    mirroring: 0xA000,
    // Every register R0-RF, the 1 KiB mode, the PRG swap and the CHR inversion.
    bank: |value, next| [(0x8000, value & 0xEF), (0x8001, next(256) as u8)],
    // R6 (0 at power-on) at $C000.
    table_copy: Some(0x1000),
};

const TENGEN_800037: IrqBoard = IrqBoard { mapper: 158, ..RAMBO1 };

/// A random program for `board`: an endless loop of PPU and mapper register writes, reads and delays
/// in a random order, with random values, at random moments; the IRQ handler acknowledges and
/// reloads the counter with a random latch, and the loop re-enables it. Built from instruction
/// templates so it runs rather than jams.
fn random_irq_board_program(seed: u64, board: &IrqBoard) -> Vec<u8> {
    let mut rng = seed;
    let mut next = |bound: u64| support::next_random(&mut rng) % bound;
    let mut code: Vec<u8> = vec![0x78, 0xA2, 0xFF, 0x9A]; // SEI; LDX #$FF; TXS
    let store = |code: &mut Vec<u8>, value: u8, addr: u16| {
        code.extend([0xA9, value, 0x8D, addr as u8, (addr >> 8) as u8]); // LDA #value; STA addr
    };
    // No APU frame IRQ (the handler only acknowledges the MMC3); scanline IRQs on from the start.
    store(&mut code, 0x40, 0x4017);
    store(&mut code, next(8) as u8 ^ board.latch_xor, board.latch);
    store(&mut code, 0, board.reload);
    store(&mut code, 0, board.enable);
    // Random OAM (Y crowded into bands half the time, tiles from both tables as 8x16 sprites) from a
    // table at $D000 into page 2, then to OAM: LDX #0; LDA $D000,X; STA $0200,X; INX; BNE; DMA.
    code.extend([0xA2, 0x00, 0xBD, 0x00, 0xD0, 0x9D, 0x00, 0x02, 0xE8, 0xD0, 0xF7]);
    store(&mut code, 0x02, 0x4014);
    // Rendering on after the power-on write lockout (two VBlanks: BIT $2002; BPL), tables and sprite
    // size at random.
    code.extend([0x2C, 0x02, 0x20, 0x10, 0xFB, 0x2C, 0x02, 0x20, 0x10, 0xFB]);
    store(&mut code, 0x80 | (next(8) as u8) << 3, 0x2000);
    store(&mut code, 0x1E, 0x2001);
    code.push(0x58); // CLI
    let loop_start = 0xE000 + code.len() as u16;
    for _ in 0..48 {
        let value = next(256) as u8;
        match next(16) {
            0 => store(&mut code, value | 0x80, 0x2000),
            1 | 2 => store(&mut code, value, 0x2001),
            3 => code.extend([0xAD, 0x02, 0x20]), // LDA $2002
            4 => {
                store(&mut code, value, 0x2005);
                store(&mut code, next(256) as u8, 0x2005);
            }
            5 => {
                store(&mut code, value & 0x3F, 0x2006);
                store(&mut code, next(256) as u8, 0x2006);
            }
            6 => {
                // A palette entry or a read through PPUDATA.
                store(&mut code, 0x3F, 0x2006);
                store(&mut code, value & 0x1F, 0x2006);
                if next(2) == 0 {
                    store(&mut code, next(64) as u8, 0x2007);
                } else {
                    code.extend([0xAD, 0x07, 0x20]); // LDA $2007
                }
            }
            7 => store(&mut code, 0x02, 0x4014), // sprite DMA from page 2
            8 => {
                for (addr, value) in (board.bank)(value, &mut next) {
                    store(&mut code, value, addr);
                }
            }
            9 => store(&mut code, value, board.mirroring),
            10 => store(&mut code, (value & 0x0F) ^ board.latch_xor, board.latch),
            11 => store(&mut code, value, [board.reload, board.disable, board.enable][next(3) as usize]),
            12 => store(&mut code, value & 0x1E, 0x2001), // rendering often off, then on again
            13 => {
                // Fill a byte of shadow OAM: LDA #v; STA $0200 + n.
                code.extend([0xA9, value, 0x8D, next(256) as u8, 0x02]);
            }
            _ => {
                // A delay of up to ~3,000 cycles: LDY #n; LDX #m; DEX; BNE; DEY; BNE.
                let (outer, inner) = (1 + next(8) as u8, next(256) as u8);
                code.extend([0xA0, outer, 0xA2, inner, 0xCA, 0xD0, 0xFD, 0x88, 0xD0, 0xF8]);
            }
        }
    }
    code.extend([0x4C, loop_start as u8, (loop_start >> 8) as u8]); // JMP loop
    let nmi = 0xE000 + code.len() as u16;
    code.push(0x40); // RTI
    let irq = 0xE000 + code.len() as u16;
    let latch = next(8) as u8;
    // PHA; STA disable; LDA #latch; STA latch; STA reload; PLA; RTI. The loop's enable writes
    // re-enable.
    let [disable, latch_at, reload] = [board.disable, board.latch, board.reload].map(u16::to_le_bytes);
    code.extend([0x48, 0x8D, disable[0], disable[1], 0xA9, latch ^ board.latch_xor]);
    code.extend([0x8D, latch_at[0], latch_at[1], 0x8D, reload[0], reload[1], 0x68, 0x40]);
    assert!(code.len() < 0x1FFA, "the program fits the fixed bank");
    let mut prg = vec![0xEA; 0x8000];
    prg[0x6000..0x6000 + code.len()].copy_from_slice(&code);
    for sprite in prg[0x5000..0x5100].chunks_exact_mut(4) {
        let y = if next(2) == 0 { 64 + (next(4) as u8) * 40 + next(12) as u8 } else { next(256) as u8 };
        sprite.copy_from_slice(&[y, next(256) as u8, next(256) as u8, next(256) as u8]);
    }
    if let Some(copy) = board.table_copy {
        prg.copy_within(0x5000..0x5100, copy);
    }
    prg[0x7FFA..].copy_from_slice(&[nmi as u8, (nmi >> 8) as u8, 0x00, 0xE0, irq as u8, (irq >> 8) as u8]);
    let mut chr = vec![0u8; 0x2000];
    for byte in &mut chr {
        *byte = next(256) as u8;
    }
    let mut rom = support::ines_image(board.mapper << 4, &prg, &chr);
    rom[7] = board.mapper & 0xF0;
    rom
}

#[test]
fn random_register_programs_agree() {
    // Whatever a program does to the PPU and the MMC3, at whatever moment, the two schedules agree.
    for seed in 0..40u64 {
        let rom = random_mmc3_program(seed);
        for alignment in [0, 1] {
            let (mut lazy, mut eager) = pair(&rom, alignment);
            let input = InputStream::from_frames(vec![Default::default(); 24]);
            assert_frames_agree(&format!("random program {seed}"), alignment, &mut lazy, &mut eager, &input);
        }
        // PAL and Dendy replay the MMC3's M2 edges too, at every phase (PAL's 3.2-dot cycle puts
        // the edge at five places in the dot): a quarter of the programs in each, rotating phases.
        for (region, residue) in [(Region::Dendy, 0), (Region::Pal, 2)] {
            if seed % 4 == residue {
                let alignment = (seed / 4 % 4) as u8;
                let (mut lazy, mut eager) = pair_in(&rom, alignment, Some(region));
                let input = InputStream::from_frames(vec![Default::default(); 24]);
                let name = format!("random program {seed} ({region})");
                assert_frames_agree(&name, alignment, &mut lazy, &mut eager, &input);
            }
        }
    }
}

#[test]
fn lazy_equals_eager_after_every_instruction_on_the_determinism_roms() {
    for_each_rom_in_parallel(&determinism_roms(), |index, name, rom| {
        let (frames, phases) = every_instruction_plan(index, if is_board_check_rom(name) { 60 } else { 200 });
        for alignment in phases {
            let (mut lazy, mut eager) = pair(rom, alignment);
            let input = random_input(index as u64 ^ 0xE5E5 << 32 ^ u64::from(alignment), frames);
            assert_instructions_agree(name, alignment, &mut lazy, &mut eager, &input);
        }
    });
}

#[test]
fn lazy_equals_eager_after_every_instruction_on_the_mmc3_suite() {
    let Some(dir) = shared_roms("lazy_equals_eager_after_every_instruction_on_the_mmc3_suite") else {
        return;
    };
    for (index, (path, rom)) in nes_files(&dir.join("mmc3_test_2/rom_singles")).into_iter().enumerate() {
        let (frames, phases) = every_instruction_plan(index, 300);
        for alignment in phases {
            let (mut lazy, mut eager) = pair(&rom, alignment);
            let input = InputStream::from_frames(vec![Default::default(); frames]);
            assert_instructions_agree(&path.display().to_string(), alignment, &mut lazy, &mut eager, &input);
        }
    }
}

#[test]
fn lazy_equals_eager_after_every_instruction_with_the_mmc3_in_pal_and_dendy() {
    // Mid-line, the MMC3's count of M2 edges since A12 fell (in the state) tells on which side of
    // each dot an edge landed, so comparing after every instruction catches an edge replayed a dot
    // off, which a low run's length (4 dots, or 12 and more, while rendering) would not show at the
    // end of a frame. Every phase: PAL's cycle puts the read access point at five places in the dot.
    bundled_roms_agree_after_every_instruction(
        &["roms/demo/demo.nes", "roms/stress/mmc3_a12.nes", "roms/stress/mmc3_irq.nes"],
        &[Region::Pal, Region::Dendy],
        0x9A1,
        12,
    );
}

#[test]
fn lazy_equals_eager_after_every_instruction_on_the_delayed_irq_boards() {
    // The TC0690's /IRQ rises on the fourth M2 edge after the A12 clock, the RAMBO-1's on the second
    // (in its cycle mode, one edge after the clock that reaches 0): the lazy schedule catches the PPU
    // up through the clock and then by that edge's cycle, replaying the edges between. Their ROMs
    // time the delays to the cycle (clocks by PPUADDR, the IRQ taken during a run of INX), in every
    // region, at every phase.
    bundled_roms_agree_after_every_instruction(
        &["roms/asic/m048_tc0690.nes", "roms/tengen/m064_rambo1.nes"],
        &[Region::Ntsc, Region::Pal, Region::Dendy],
        0xDE1A,
        16,
    );
}

/// A lazy and an eager console of `rom` in `region` at `alignment`, compared after every instruction
/// of `input` (`name` with the region in the failure message).
fn assert_instructions_agree_in(name: &str, rom: &[u8], alignment: u8, region: Region, input: &InputStream) {
    let (mut lazy, mut eager) = pair_in(rom, alignment, Some(region));
    assert_instructions_agree(&format!("{name} ({region})"), alignment, &mut lazy, &mut eager, input);
}

/// Lazy and eager consoles of each bundled ROM in `roms`, in each of `regions` and at every phase,
/// compared after every instruction of `frames` frames of random input (drawn from `seed`, the ROM's
/// index and the phase).
fn bundled_roms_agree_after_every_instruction(roms: &[&str], regions: &[Region], seed: u64, frames: usize) {
    let roms: Vec<(String, Vec<u8>)> = roms
        .iter()
        .map(|rom| (rom.to_string(), std::fs::read(support::repo_root().join(rom)).expect("bundled ROM")))
        .collect();
    for_each_rom_in_parallel(&roms, |index, name, rom| {
        for &region in regions {
            for alignment in 0..4 {
                let input = random_input(index as u64 ^ seed << 36 ^ u64::from(alignment), frames);
                assert_instructions_agree_in(name, rom, alignment, region, &input);
            }
        }
    });
}

#[test]
fn random_programs_agree_on_the_delayed_irq_boards() {
    // Random programs on the TC0690, the RAMBO-1 and the Tengen 800037 (the RAMBO-1 again, other
    // nametable wiring): the counters re-armed with small latches by every IRQ, sprites and tables
    // at random, rendering switched off and on. The RAMBO-1's $C001 writes take random values, so
    // about half of its programs count CPU cycles at times. Every region, the phases rotating; a
    // quarter of them compared after every instruction too.
    let mut programs = Vec::new();
    for board in [&TC0690, &RAMBO1, &TENGEN_800037] {
        for seed in 0..12u64 {
            let rom = random_irq_board_program(seed ^ u64::from(board.mapper) << 32, board);
            programs.push((format!("random program {seed} on mapper {}", board.mapper), rom));
        }
    }
    for_each_rom_in_parallel(&programs, |index, name, rom| {
        let region = [Region::Ntsc, Region::Pal, Region::Dendy][index % 3];
        let alignment = (index / 3 % 4) as u8;
        let (mut lazy, mut eager) = pair_in(rom, alignment, Some(region));
        let name = format!("{name} ({region})");
        let input = InputStream::from_frames(vec![Default::default(); 24]);
        assert_frames_agree(&name, alignment, &mut lazy, &mut eager, &input);
        if index % 4 == 0 {
            let (mut lazy, mut eager) = pair_in(rom, alignment, Some(region));
            let input = InputStream::from_frames(vec![Default::default(); 8]);
            assert_instructions_agree(&name, alignment, &mut lazy, &mut eager, &input);
        }
    });
}
