//! The frame path skips the turns of spin loops (`crates/anes-core/src/spin/mod.rs`): waits that change
//! nothing but the clock and delay loops that count a register. Skipped or run, the machine must be
//! the same: random programs made of such loops (in ROM and in work RAM, across page boundaries,
//! with the NMI, the APU's frame IRQ and DMC DMA going on, a main loop that ends in `jmp *`) run in
//! the frame path and the line path of the lazy schedule and on the eager one, which has no fast
//! path and so never skips; the records (state hash included) and pictures agree after every frame,
//! and the lazy machines did skip.

mod support;

use anes::nes::movie::InputStream;
use anes::nes::{Cartridge, Nes, NesConfig, PpuCatchUp, Region};

/// Where the NMI handler counts ($10) and the IRQ handler counts ($11).
const NMI_COUNT: u8 = 0x10;
const IRQ_COUNT: u8 = 0x11;

/// A random NROM program: a main loop of spin and delay loops, PPU writes and a loop that writes
/// (so never skipped) in a random order, padded so that loops fall across page boundaries.
fn random_spin_program(seed: u64) -> Vec<u8> {
    let mut rng = seed;
    let mut next = |bound: u64| support::next_random(&mut rng) % bound;
    let frame_irq = next(2) == 0;
    let mut code: Vec<u8> = vec![0x78, 0xD8, 0xA2, 0xFF, 0x9A]; // SEI; CLD; LDX #$FF; TXS
    let store = |code: &mut Vec<u8>, value: u8, addr: u16| {
        code.extend([0xA9, value, 0x8D, addr as u8, (addr >> 8) as u8]); // LDA #value; STA addr
    };
    // The APU's frame IRQ on or off; the DMC looping a sample (its DMA steals cycles) half the time.
    store(&mut code, if frame_irq { 0x00 } else { 0x40 }, 0x4017);
    if next(2) == 0 {
        store(&mut code, 0x40 | next(16) as u8, 0x4010);
        store(&mut code, 0x00, 0x4012);
        store(&mut code, next(8) as u8, 0x4013);
        store(&mut code, 0x10, 0x4015);
    }
    // Two VBlanks (BIT $2002; BPL), then copy the wait routine below to $0300 and run from RAM too:
    // LDX #n; LDA $E000,X; STA $0300,X; DEX; BPL.
    code.extend([0x2C, 0x02, 0x20, 0x10, 0xFB, 0x2C, 0x02, 0x20, 0x10, 0xFB]);
    let routine_at = code.len() + 14;
    let routine = [0xA5, NMI_COUNT, 0xF0, 0xFC, 0x60]; // LDA $10; BEQ -4; RTS
    code.extend([0xA2, routine.len() as u8 - 1, 0xBD, 0, 0, 0x9D, 0x00, 0x03, 0xCA, 0x10, 0xF7]);
    let patch = code.len() - 8;
    code.extend([0x4C, 0, 0]); // JMP over the routine
    let jump = code.len() - 2;
    assert_eq!(code.len(), routine_at);
    code.extend(routine);
    let routine_addr = 0x8000 + routine_at as u16;
    code[patch..patch + 2].copy_from_slice(&routine_addr.to_le_bytes());
    let after = 0x8000 + code.len() as u16;
    code[jump..jump + 2].copy_from_slice(&after.to_le_bytes());
    store(&mut code, 0x80 | (next(2) as u8) << 4, 0x2000);
    store(&mut code, 0x1E, 0x2001);
    if frame_irq {
        code.push(0x58); // CLI
    }
    let loop_start = 0x8000 + code.len() as u16;
    let idle_forever = next(4) == 0;
    for _ in 0..24 {
        let n = next(256) as u8;
        match next(12) {
            // Wait for the NMI in ROM: LDA #0; STA $10; LDA $10; BEQ -4.
            0 | 1 => code.extend([0xA9, 0x00, 0x85, NMI_COUNT, 0xA5, NMI_COUNT, 0xF0, 0xFC]),
            // The same from work RAM: LDA #0; STA $10; JSR $0300.
            2 => code.extend([0xA9, 0x00, 0x85, NMI_COUNT, 0x20, 0x00, 0x03]),
            // Delays: LDX #n; DEX; BNE. LDY #n; DEY; BNE. LDX #n; INX; BNE. LDY #n; INY; BNE.
            3 => code.extend([0xA2, n, 0xCA, 0xD0, 0xFD]),
            4 => code.extend([0xA0, n, 0x88, 0xD0, 0xFD]),
            5 => code.extend([0xA2, n, 0xE8, 0xD0, 0xFD]),
            6 => code.extend([0xA0, n, 0xC8, 0xD0, 0xFD]),
            // Nested: LDY #o; LDX #i; DEX; BNE; DEY; BNE.
            7 => code.extend([0xA0, 1 + next(6) as u8, 0xA2, n, 0xCA, 0xD0, 0xFD, 0x88, 0xD0, 0xF8]),
            // Wait for the frame IRQ (without one, for the NMI): LDA #0; STA $11 (or $10); LDA; BEQ.
            8 => {
                let count = if frame_irq { IRQ_COUNT } else { NMI_COUNT };
                code.extend([0xA9, 0x00, 0x85, count, 0xA5, count, 0xF0, 0xFC]);
            }
            // A loop that writes on every turn: LDX #n; INC $12; DEX; BNE.
            9 => code.extend([0xA2, n, 0xE6, 0x12, 0xCA, 0xD0, 0xFB]),
            // Scroll: two $2005 writes.
            10 => {
                store(&mut code, n, 0x2005);
                store(&mut code, next(240) as u8, 0x2005);
            }
            // Padding: NOPs, so later loops sit at other addresses, across pages or not.
            _ => code.extend(std::iter::repeat_n(0xEA, next(64) as usize)),
        }
    }
    if idle_forever {
        // The rest happens in the NMI, as in many games: JMP * (the handler returns here).
        let here = 0x8000 + code.len() as u16;
        code.extend([0x4C, here as u8, (here >> 8) as u8]);
    } else {
        code.extend([0x4C, loop_start as u8, (loop_start >> 8) as u8]);
    }
    // NMI: INC $10; LDA $2002 (for the scroll latch), with A saved. IRQ: ack the frame IRQ, INC $11.
    let nmi = 0x8000 + code.len() as u16;
    code.extend([0x48, 0xE6, NMI_COUNT, 0xAD, 0x02, 0x20, 0x68, 0x40]);
    let irq = 0x8000 + code.len() as u16;
    code.extend([0x48, 0xAD, 0x15, 0x40, 0xE6, IRQ_COUNT, 0x68, 0x40]);
    assert!(code.len() < 0x7FFA, "the program fits");
    let mut prg = vec![0xEA; 0x8000];
    prg[..code.len()].copy_from_slice(&code);
    prg[0x7FFA..].copy_from_slice(&[nmi as u8, (nmi >> 8) as u8, 0x00, 0x80, irq as u8, (irq >> 8) as u8]);
    let mut chr = vec![0u8; 0x2000];
    for byte in &mut chr {
        *byte = next(256) as u8;
    }
    support::ines_image(0, &prg, &chr)
}

#[test]
fn skipped_spin_loops_leave_the_machine_as_running_them() {
    let mut skipped = 0;
    for seed in 0..32u64 {
        let rom = random_spin_program(seed);
        let alignment = (seed % 4) as u8;
        let region = [None, None, Some(Region::Pal), Some(Region::Dendy)][(seed / 4 % 4) as usize];
        let config = NesConfig { cpu_ppu_alignment: Some(alignment), ..NesConfig::default() };
        let mut lazy = Nes::with_region(Cartridge::from_ines(&rom).expect("ROM loads"), config, region);
        let mut eager = Nes::with_region(Cartridge::from_ines(&rom).expect("ROM loads"), config, region);
        eager.set_ppu_catch_up(PpuCatchUp::Eager);
        let mut by_line = lazy.clone();
        let input = InputStream::from_frames(vec![Default::default(); 40]);
        for (i, frame) in input.frames().enumerate() {
            let context = format!("program {seed} ({region:?}, phase {alignment}), frame {i}");
            let a = lazy.run_frame(frame);
            let b = eager.run_frame(frame);
            assert_eq!(a, b, "{context}: the frame path and the eager schedule differ");
            assert!(
                lazy.ppu().frame_buffer() == eager.ppu().frame_buffer(),
                "{context}: the pictures differ"
            );
            by_line.begin_frame(frame);
            while !by_line.step_to_next_line() {}
            assert_eq!(by_line.frame_record(), b, "{context}: the line path and the eager schedule differ");
        }
        assert_eq!(eager.skipped_spin_turns(), 0, "the eager schedule has no fast path");
        assert!(lazy.skipped_spin_turns() > 0, "program {seed}: the frame path skipped no turn");
        assert!(by_line.skipped_spin_turns() > 0, "program {seed}: the line path skipped no turn");
        skipped += lazy.skipped_spin_turns();
    }
    eprintln!("{skipped} turns skipped in all");
}

/// An outer loop around a delay is neither a wait nor a delay itself, and is passed over; the delay
/// inside goes on being skipped on every run of it (a memo of the outer loop once kept the inner one
/// from being skipped again in the frame).
#[test]
fn a_delay_inside_another_loop_is_skipped_on_every_run() {
    // LDX #0; outer: LDY #200; inner: DEY; BNE inner; DEX; BNE outer; JMP $8000.
    let code = [0xA2, 0x00, 0xA0, 200, 0x88, 0xD0, 0xFD, 0xCA, 0xD0, 0xF8, 0x4C, 0x00, 0x80];
    let mut prg = vec![0xEA; 0x8000];
    prg[..code.len()].copy_from_slice(&code);
    prg[0x7FFA..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80, 0x00, 0x80]);
    let rom = support::ines_image(0, &prg, &[0; 0x2000]);
    let mut lazy = Nes::new(Cartridge::from_ines(&rom).expect("ROM loads"), NesConfig::default());
    let mut eager = lazy.clone();
    eager.set_ppu_catch_up(PpuCatchUp::Eager);
    let frames = 10;
    for _ in 0..frames {
        assert_eq!(lazy.run_frame(Default::default()), eager.run_frame(Default::default()));
    }
    // A run of the delay is 200 turns of 5 cycles, 197 of them skippable (the first two are watched,
    // the last falls through); the outer loop adds 5 cycles and 2 for LDY: about 29 runs a frame.
    // Nearly every run is skipped, but where the APU's frame counter or the VBlank cuts one short.
    let per_frame = lazy.skipped_spin_turns() / frames;
    assert!(per_frame > 25 * 190, "{per_frame} turns skipped a frame");
}
