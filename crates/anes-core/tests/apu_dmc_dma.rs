//! DMC DMA through the whole console: the cycles the sample fetches steal from a NOP sled (nesdev
//! "DMA": a load DMA halts on a get cycle and takes 3 cycles; reload DMAs halt on put cycles and take
//! 4 when the CPU is reading).

mod cart_support;

use anes_core::{Cartridge, Nes, NesConfig};

/// LDA #value / STA addr for each pair.
fn stores(setup: &[(u16, u8)]) -> Vec<u8> {
    let mut code = Vec::new();
    for &(addr, value) in setup {
        code.extend_from_slice(&[0xA9, value, 0x8D, addr as u8, (addr >> 8) as u8]);
    }
    code
}

/// An NROM image whose reset code is `code` followed by a NOP sled.
fn console(code: &[u8]) -> Nes {
    let rom = cart_support::nrom_running(code);
    let cart = Cartridge::from_ines(&rom).expect("valid test image");
    Nes::new(cart, NesConfig::default())
}

/// CPU cycles the DMC stole while `nops` NOPs ran after `instructions` instructions of `code`.
fn stolen_cycles(code: &[u8], instructions: usize, nops: u64) -> u64 {
    let mut nes = console(code);
    for _ in 0..instructions {
        nes.step_instruction();
    }
    let start = nes.cpu_cycle();
    for _ in 0..nops {
        nes.step_instruction();
    }
    nes.cpu_cycle() - start - 2 * nops
}

#[test]
fn no_dmc_no_stolen_cycles() {
    assert_eq!(stolen_cycles(&[], 0, 4000), 0);
}

#[test]
fn one_byte_sample_costs_one_load_dma() {
    // Rate 15, sample at $C000, 1 byte.
    let setup = stores(&[(0x4010, 0x0F), (0x4012, 0x00), (0x4013, 0x00), (0x4015, 0x10)]);
    assert_eq!(stolen_cycles(&setup, 8, 4000), 3);
}

#[test]
fn seventeen_byte_sample_costs_one_load_and_sixteen_reload_dmas() {
    // 17 bytes at 432 CPU cycles per byte: done within 8000 cycles.
    let setup = stores(&[(0x4010, 0x0F), (0x4012, 0x00), (0x4013, 0x01), (0x4015, 0x10)]);
    assert_eq!(stolen_cycles(&setup, 8, 4000), 3 + 16 * 4);
}

#[test]
fn disabling_right_after_enabling_aborts_the_load_dma() {
    // LDX #0; LDA #$10; STA $4015; STX $4015. The enabling write is on cycle 15 (a get cycle), so the
    // load DMA attempts to halt on cycle 19, which is the STX's write: the halt fails and goes
    // through on the next read, cycle 20 (put): halt, dummy (21), alignment (22). The disabling
    // write on get cycle 19 reaches the DMA unit three cycles later, at 22, so the get due on cycle
    // 23 never comes: three cycles stolen, no byte fetched (AccuracyCoin "Explicit DMA Abort").
    let mut code = vec![0xA2, 0x00, 0xA9, 0x10, 0x8D, 0x15, 0x40, 0x8E, 0x15, 0x40];
    let mut nes = console(&code);
    for _ in 0..4 + 10 {
        nes.step_instruction();
    }
    assert_eq!(nes.cpu_cycle(), 7 + 2 + 2 + 4 + 4 + 10 * 2 + 3);
    assert_eq!(nes.apu().state().dmc.buffer_full, 0);
    // With a 4-cycle NOP abs instead of the STX, the load DMA steals its 3 cycles and fills the buffer.
    code[7] = 0x0C;
    let mut nes = console(&code);
    for _ in 0..4 + 10 {
        nes.step_instruction();
    }
    assert_eq!(nes.cpu_cycle(), 7 + 2 + 2 + 4 + 4 + 10 * 2 + 3);
    assert_eq!(nes.apu().state().dmc.buffer_full, 1);
}
