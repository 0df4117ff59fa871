//! Bus-level CPU behaviour pinned by the nesdev wiki: sprite DMA length by alignment, JAM, open bus,
//! dummy reads, reset.

use anes_core::{Cartridge, Nes, NesConfig};

/// 32 KiB NROM with `program` at $8000 (reset vector), NMI/IRQ vectors at $9000 (an RTI).
fn machine(program: &[u8]) -> Nes {
    let mut rom = vec![0x4E, 0x45, 0x53, 0x1A, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut prg = vec![0xEA; 0x8000];
    prg[..program.len()].copy_from_slice(program);
    prg[0x1000] = 0x40; // RTI
    prg[0x7FFA..].copy_from_slice(&[0x00, 0x90, 0x00, 0x80, 0x00, 0x90]);
    rom.extend_from_slice(&prg);
    rom.extend_from_slice(&[0u8; 0x2000]);
    Nes::new(Cartridge::from_ines(&rom).unwrap(), NesConfig::default())
}

/// Cycles taken by the instruction at PC.
fn step_cycles(nes: &mut Nes) -> u64 {
    let before = nes.cpu_cycle();
    nes.step_instruction();
    nes.cpu_cycle() - before
}

#[test]
fn sprite_dma_takes_513_or_514_cycles_by_alignment() {
    // STA $4014, and LDA $00 (3 cycles); STA $4014: the same store on both cycle parities.
    let mut even = machine(&[0x8D, 0x14, 0x40]);
    let mut odd = machine(&[0xA5, 0x00, 0x8D, 0x14, 0x40]);
    assert_eq!(step_cycles(&mut odd), 3);
    assert_ne!(even.cpu_cycle() % 2, odd.cpu_cycle() % 2);
    // STA abs is 4 cycles; the DMA halts the CPU on the next read (the following instruction's fetch).
    let a = step_cycles(&mut even) + step_cycles(&mut even);
    let b = step_cycles(&mut odd) + step_cycles(&mut odd);
    let mut totals = [a - 4 - 2, b - 4 - 2];
    totals.sort();
    assert_eq!(totals, [513, 514], "DMA lengths on the two parities");
}

#[test]
fn jam_halts_the_cpu_visibly_and_time_still_passes() {
    let mut nes = machine(&[0xEA, 0x02, 0xEA]);
    nes.step_instruction();
    assert!(!nes.is_jammed());
    nes.step_instruction();
    assert!(nes.is_jammed());
    let pc = nes.cpu().pc;
    let cycle = nes.cpu_cycle();
    nes.run_until_frame_end();
    assert!(nes.is_jammed());
    assert_eq!(nes.cpu().pc, pc);
    assert!(nes.cpu_cycle() > cycle);
    nes.soft_reset();
    assert!(!nes.is_jammed());
    assert_eq!(nes.cpu().pc, 0x8000);
}

#[test]
fn unmapped_reads_return_the_last_bus_value() {
    // LDA $5000 (no device: the data bus still holds the operand's high byte, $50).
    let mut nes = machine(&[0xAD, 0x00, 0x50]);
    nes.step_instruction();
    assert_eq!(nes.cpu().a, 0x50);
}

#[test]
fn reset_keeps_registers_and_drops_sp_by_three() {
    // LDA #$12; LDX #$34; LDY #$56; then loop.
    let mut nes = machine(&[0xA9, 0x12, 0xA2, 0x34, 0xA0, 0x56, 0x4C, 0x06, 0x80]);
    for _ in 0..4 {
        nes.step_instruction();
    }
    let sp = nes.cpu().sp;
    nes.soft_reset();
    let cpu = nes.cpu();
    assert_eq!((cpu.a, cpu.x, cpu.y), (0x12, 0x34, 0x56));
    assert_eq!(cpu.sp, sp.wrapping_sub(3));
    assert_ne!(cpu.p & 0x04, 0, "reset sets I");
}

#[test]
fn absolute_indexed_reads_cost_one_more_cycle_across_a_page() {
    // LDX #$01; LDA $80FF,X (crosses); LDA $8000,X (does not).
    let mut nes = machine(&[0xA2, 0x01, 0xBD, 0xFF, 0x80, 0xBD, 0x00, 0x80]);
    assert_eq!(step_cycles(&mut nes), 2);
    assert_eq!(step_cycles(&mut nes), 5);
    assert_eq!(step_cycles(&mut nes), 4);
}
