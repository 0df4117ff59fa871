//! PPUDATA ($2007) reads that come close together, through the whole console: the page-crossing
//! dummy read of `LDA abs,X` and the halted reads a DMC DMA repeats (nesdev "DMA": "DMC DMA can
//! corrupt joypad and PPUDATA ($2007) reads"; "PPU registers", PPUDATA: a read returns the buffer,
//! which the PPU fills a few dots later). Rendering is off throughout.

mod cart_support;

use anes_core::{Cartridge, Nes, NesConfig, Region};

const NOP: u8 = 0xEA;
/// JAM: the CPU halts (as state), so a test can step until it is reached.
const JAM: u8 = 0x02;

/// LDA #value / STA addr.
fn store(code: &mut Vec<u8>, addr: u16, value: u8) {
    code.extend_from_slice(&[0xA9, value, 0x8D, addr as u8, (addr >> 8) as u8]);
}

/// Nametable bytes $2000-$2006 = $11, $22, .. $77, then `v` = $2001 and one read to fill the buffer
/// (the buffer holds $22, `v` = $2002), as blargg's dmc_dma_during_read4 sets up its reads.
fn fill_vram_and_prime(code: &mut Vec<u8>) {
    store(code, 0x2006, 0x20);
    store(code, 0x2006, 0x00);
    for i in 1..=7u8 {
        store(code, 0x2007, 0x11 * i);
    }
    store(code, 0x2006, 0x20);
    store(code, 0x2006, 0x01);
    code.extend_from_slice(&[0xAD, 0x07, 0x20]); // LDA $2007
}

/// LDA $2007 / STA zp for each of `slots`.
fn read_into(code: &mut Vec<u8>, slots: std::ops::Range<u8>) {
    for slot in slots {
        code.extend_from_slice(&[0xAD, 0x07, 0x20, 0x85, slot]);
    }
}

/// An NROM image whose reset code is `code` followed by JAM.
fn console(code: &[u8], region: Region) -> Nes {
    let rom = cart_support::nrom_running(&[code, &[JAM]].concat());
    let cart = Cartridge::from_ines(&rom).expect("valid test image");
    Nes::with_region(cart, NesConfig::default(), Some(region))
}

/// Runs to the JAM and returns zero page bytes `$00..len`.
fn run(code: &[u8], region: Region, len: u16) -> Vec<u8> {
    let mut nes = console(code, region);
    for _ in 0..10_000 {
        if nes.is_jammed() {
            return (0..len).map(|addr| nes.peek(addr)).collect();
        }
        nes.step_instruction();
    }
    panic!("the program never reached its JAM");
}

#[test]
fn single_read_returns_the_buffer_and_refills_it() {
    // LDA $20F7,X with X = 0 reads $2007 once.
    let mut code = Vec::new();
    fill_vram_and_prime(&mut code);
    code.extend_from_slice(&[0xA2, 0x00, 0xBD, 0xF7, 0x20, 0x85, 0x00]); // LDX #0; LDA $20F7,X; STA $00
    read_into(&mut code, 1..5);
    for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
        assert_eq!(run(&code, region, 5), [0x22, 0x33, 0x44, 0x55, 0x66], "{region:?}");
    }
}

#[test]
fn back_to_back_reads_return_the_buffer_before_the_first_fill_lands() {
    // LDA $20F7,X with X = $10 reads $2007 on two consecutive cycles (the dummy read of the
    // uncorrected address, then the real one at $2107). The PPU fills the buffer a few dots after a
    // read, so the second read (3 or 3.2 dots later) still finds $22; both reads move `v`, and the
    // buffer ends with the byte of the second read's address, $44: blargg's double_2007_read lists
    // "22 44 55 66 77" among the outputs of real consoles (with "22 33 44 55 66" and two more that
    // depend on the CPU-PPU alignment); a second read served at once, "33 44 55 66 77", is not.
    let mut code = Vec::new();
    fill_vram_and_prime(&mut code);
    code.extend_from_slice(&[0xA2, 0x10, 0xBD, 0xF7, 0x20, 0x85, 0x00]); // LDX #$10; LDA $20F7,X; STA $00
    read_into(&mut code, 1..5);
    for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
        assert_eq!(run(&code, region, 5), [0x22, 0x44, 0x55, 0x66, 0x77], "{region:?}");
    }
}

#[test]
fn a_read_just_before_a_write_behaves_normally() {
    // STA $2007,X with X = 0 reads $2007 (the dummy read), then writes it on the next cycle:
    // the read moved `v` before the write lands, and its buffer fill still lands (blargg's
    // read_write_2007: "Read of $2007 just before write behaves normally", the dump
    // 33 11 22 33 09 55 66 77).
    let mut code = Vec::new();
    fill_vram_and_prime(&mut code);
    code.extend_from_slice(&[0xA2, 0x00, 0xA9, 0x09, 0x9D, 0x07, 0x20]); // LDX #0; LDA #9; STA $2007,X
    store(&mut code, 0x2006, 0x20);
    store(&mut code, 0x2006, 0x00);
    read_into(&mut code, 0..8);
    for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
        assert_eq!(run(&code, region, 8), [0x33, 0x11, 0x22, 0x33, 0x09, 0x55, 0x66, 0x77], "{region:?}");
    }
}

/// `cycles` CPU cycles of straight-line code (NOPs, and LDA zp for an odd count).
fn delay(code: &mut Vec<u8>, cycles: usize) {
    let mut left = cycles;
    if left % 2 == 1 {
        assert!(left >= 3, "one cycle cannot be spent alone");
        code.extend_from_slice(&[0xA5, 0x80]); // LDA $80: 3 cycles
        left -= 3;
    }
    code.extend(std::iter::repeat_n(NOP, left / 2));
}

/// The DMC playing a long sample at its fastest rate (a reload DMA every 432 NTSC cycles), the
/// buffer primed, `wait` cycles, then two reads of $2007 into $00 and $01.
fn dma_during_reads(region: Region, wait: usize) -> (u8, u8) {
    let mut code = Vec::new();
    for (addr, value) in [(0x4010, 0x0F), (0x4012, 0x00), (0x4013, 0xFF), (0x4015, 0x10)] {
        store(&mut code, addr, value);
    }
    fill_vram_and_prime(&mut code);
    delay(&mut code, wait);
    read_into(&mut code, 0..2);
    let ram = run(&code, region, 2);
    (ram[0], ram[1])
}

#[test]
fn dmc_dma_during_a_read_repeats_it() {
    // A reload DMA halts on a put cycle: the halt, dummy and alignment cycles repeat the CPU's
    // read of $2007 (three extra reads, each moving `v`), then the get, then the real read, by
    // which the last extra read's fill has landed (blargg's dma_2007_read: "2-3 extra $2007 reads
    // before real read", "44 55" after its priming read; AccuracyCoin "DMA + $2007 Read"). Over 500
    // starting points the DMA lands once on the first read and once on the second.
    let normal = (0x22, 0x33);
    let on_first = (0x55, 0x66);
    let on_second = (0x22, 0x66);
    for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
        let mut seen = std::collections::BTreeMap::new();
        for wait in 400..900 {
            *seen.entry(dma_during_reads(region, wait)).or_insert(0) += 1;
        }
        let expected = [(normal, 498), (on_first, 1), (on_second, 1)].into_iter().collect();
        assert_eq!(seen, expected, "{region:?}");
    }
}
