//! Bank switching of every supported board, with synthetic ROMs whose banks hold their own numbers.

mod cart_support;

use anes_core::cart::Mmc3Revision;
use cart_support::{Cycles, RomBuilder, chr_banks, mmc1_write, nametable_pages, prg_banks};

const H: [u8; 4] = [0, 0, 1, 1];
const V: [u8; 4] = [0, 1, 0, 1];
const SCREEN_A: [u8; 4] = [0; 4];
const SCREEN_B: [u8; 4] = [1; 4];

#[test]
fn nrom_16k_is_mirrored_and_32k_is_linear() {
    let cart = RomBuilder::new(0, 1, 1).cartridge();
    assert_eq!(prg_banks(&cart), [0, 1, 0, 1]);
    assert_eq!(chr_banks(&cart), [0, 1, 2, 3, 4, 5, 6, 7]);
    let cart = RomBuilder::new(0, 2, 1).cartridge();
    assert_eq!(prg_banks(&cart), [0, 1, 2, 3]);
}

#[test]
fn nrom_has_8k_prg_ram_and_open_bus_below_it() {
    let mut cart = RomBuilder::new(0, 1, 1).cartridge();
    assert_eq!(cart.prg_ram().len(), 0x2000);
    cart.cpu_write(0x6000, 0x12, 1);
    cart.cpu_write(0x7FFF, 0x34, 3);
    assert_eq!((cart.cpu_peek(0x6000, 0), cart.cpu_read(0x7FFF, 0)), (0x12, 0x34));
    assert_eq!(cart.cpu_read(0x5000, 0x47), 0x47);
    assert_eq!(cart.cpu_read(0x4020, 0x99), 0x99);
    // Writes to ROM change nothing.
    cart.cpu_write(0x8000, 0xFF, 5);
    assert_eq!(prg_banks(&cart), [0, 1, 0, 1]);
}

#[test]
fn wired_mirroring_and_chr_ram() {
    let mut cart = RomBuilder::new(0, 1, 0).flags6(0x01).cartridge();
    assert_eq!(nametable_pages(&mut cart), V);
    let mut cart = RomBuilder::new(0, 1, 0).cartridge();
    assert_eq!(nametable_pages(&mut cart), H);
    let mut ciram = [0u8; 0x800];
    cart.ppu_write(0x1234, 0x77, &mut ciram);
    assert_eq!(cart.ppu_read(0x1234, &mut ciram), 0x77);
    assert_eq!(cart.chr_ram()[0x1234], 0x77);
    // CHR ROM ignores writes and exposes no CHR RAM.
    let mut cart = RomBuilder::new(0, 1, 1).cartridge();
    cart.ppu_write(0x0000, 0x77, &mut ciram);
    assert_eq!(cart.ppu_peek(0x0000, &ciram), 0);
    assert!(cart.chr_ram().is_empty());
}

#[test]
fn four_screen_uses_cartridge_vram() {
    let mut cart = RomBuilder::new(4, 2, 1).flags6(0x08).cartridge();
    assert_eq!(cart.extra_vram().len(), 0x800);
    assert_eq!(nametable_pages(&mut cart), [0, 1, 2, 3]);
    // MMC3 mirroring control cannot undo four-screen wiring.
    cart.cpu_write(0xA000, 1, 1);
    assert_eq!(nametable_pages(&mut cart), [0, 1, 2, 3]);
}

#[test]
fn mmc1_power_on_fixes_last_bank_and_prg_modes_switch() {
    let mut cart = RomBuilder::new(1, 8, 2).cartridge();
    let mut cycles = Cycles::default();
    assert_eq!(prg_banks(&cart)[2..], [14, 15]);
    // Mode 3: switch $8000, last bank fixed at $C000.
    mmc1_write(&mut cart, &mut cycles, 0xE000, 2);
    assert_eq!(prg_banks(&cart), [4, 5, 14, 15]);
    // Mode 2: first bank fixed at $8000, switch $C000.
    mmc1_write(&mut cart, &mut cycles, 0x8000, 0x08);
    assert_eq!(prg_banks(&cart), [0, 1, 4, 5]);
    // Modes 0/1: 32 KiB, low bit of the bank ignored.
    mmc1_write(&mut cart, &mut cycles, 0x8000, 0x00);
    mmc1_write(&mut cart, &mut cycles, 0xE000, 3);
    assert_eq!(prg_banks(&cart), [4, 5, 6, 7]);
}

#[test]
fn mmc1_chr_modes_and_mirroring() {
    let mut cart = RomBuilder::new(1, 2, 4).cartridge();
    let mut cycles = Cycles::default();
    // 8 KiB mode: CHR bank 0 with its low bit ignored.
    mmc1_write(&mut cart, &mut cycles, 0x8000, 0x0C);
    mmc1_write(&mut cart, &mut cycles, 0xA000, 3);
    assert_eq!(chr_banks(&cart), [8, 9, 10, 11, 12, 13, 14, 15]);
    // 4 KiB mode.
    mmc1_write(&mut cart, &mut cycles, 0x8000, 0x1C);
    mmc1_write(&mut cart, &mut cycles, 0xC000, 6);
    assert_eq!(chr_banks(&cart), [12, 13, 14, 15, 24, 25, 26, 27]);
    for (control, pages) in [(0, SCREEN_A), (1, SCREEN_B), (2, V), (3, H)] {
        mmc1_write(&mut cart, &mut cycles, 0x8000, 0x0C | control);
        assert_eq!(nametable_pages(&mut cart), pages, "control {control}");
    }
}

#[test]
fn mmc1_ignores_the_second_of_two_back_to_back_writes() {
    let mut cart = RomBuilder::new(1, 8, 2).cartridge();
    // INC $FFFF-style: dummy write of the old value on cycle 10, new value on cycle 11 (ignored).
    for (i, bit) in [1u8, 0, 1, 0, 0].into_iter().enumerate() {
        let cycle = 100 + 10 * i as u64;
        cart.cpu_write(0xE000, bit, cycle);
        cart.cpu_write(0xE000, bit ^ 1, cycle + 1);
    }
    assert_eq!(prg_banks(&cart)[..2], [10, 11], "bank 5 from the first writes only");
    // A reset write on the cycle after another write is ignored too.
    cart.cpu_write(0xE000, 1, 200);
    cart.cpu_write(0xE000, 0x80, 201);
    for cycle in [203, 205, 207, 209] {
        cart.cpu_write(0xE000, 0, cycle);
    }
    assert_eq!(prg_banks(&cart)[..2], [2, 3], "shift register kept the bit written on cycle 200");
}

#[test]
fn mmc1_reset_bit_clears_shift_register_and_sets_prg_mode_3() {
    let mut cart = RomBuilder::new(1, 8, 2).cartridge();
    let mut cycles = Cycles::default();
    mmc1_write(&mut cart, &mut cycles, 0x8000, 0x00);
    assert_eq!(prg_banks(&cart), [0, 1, 2, 3]);
    cart.cpu_write(0x8000, 1, cycles.next());
    cart.cpu_write(0x8000, 1, cycles.next());
    cart.cpu_write(0x8000, 0x80, cycles.next());
    assert_eq!(prg_banks(&cart), [0, 1, 14, 15]);
    mmc1_write(&mut cart, &mut cycles, 0xE000, 1);
    assert_eq!(prg_banks(&cart), [2, 3, 14, 15]);
}

#[test]
fn mmc1_prg_ram_disable_bit() {
    let mut cart = RomBuilder::new(1, 2, 2).cartridge();
    let mut cycles = Cycles::default();
    cart.cpu_write(0x6000, 0x42, cycles.next());
    mmc1_write(&mut cart, &mut cycles, 0xE000, 0x10);
    assert_eq!(cart.cpu_peek(0x6000, 0xEE), 0xEE, "disabled RAM reads open bus");
    cart.cpu_write(0x6000, 0x99, cycles.next());
    mmc1_write(&mut cart, &mut cycles, 0xE000, 0x00);
    assert_eq!(cart.cpu_peek(0x6000, 0xEE), 0x42, "disabled RAM ignored the write");
}

#[test]
fn mmc1_surom_outer_bank_from_chr_bit_4() {
    let mut cart = RomBuilder::new(1, 32, 0).cartridge();
    let mut cycles = Cycles::default();
    assert_eq!(prg_banks(&cart)[2..], [30, 31]);
    mmc1_write(&mut cart, &mut cycles, 0xA000, 0x10);
    assert_eq!(prg_banks(&cart), [32, 33, 62, 63]);
    mmc1_write(&mut cart, &mut cycles, 0xE000, 3);
    assert_eq!(prg_banks(&cart), [38, 39, 62, 63]);
}

#[test]
fn mmc1_sorom_and_sxrom_prg_ram_banks() {
    // NES 2.0 PRG-NVRAM 8 KiB (shift 7) + PRG-RAM 8 KiB (shift 7) = 16 KiB, like SOROM.
    let mut cart = RomBuilder::new(1, 8, 0).nes20(0, 0x77, 0x07).flags6(0x02).cartridge();
    let mut cycles = Cycles::default();
    assert_eq!(cart.prg_ram().len(), 0x4000);
    cart.cpu_write(0x6000, 0x11, cycles.next());
    mmc1_write(&mut cart, &mut cycles, 0xA000, 0x08);
    cart.cpu_write(0x6000, 0x22, cycles.next());
    assert_eq!((cart.prg_ram()[0], cart.prg_ram()[0x2000]), (0x11, 0x22));
    assert_eq!(cart.battery_ram().map(<[u8]>::len), Some(0x2000));
    // 32 KiB (shift 9), like SXROM: CHR bits 2-3 select the bank.
    let mut cart = RomBuilder::new(1, 8, 0).nes20(0, 0x09, 0x07).cartridge();
    for bank in 0..4u8 {
        mmc1_write(&mut cart, &mut cycles, 0xA000, bank << 2);
        cart.cpu_write(0x7000, 0x30 + bank, cycles.next());
    }
    let ram = cart.prg_ram();
    assert_eq!([ram[0x1000], ram[0x3000], ram[0x5000], ram[0x7000]], [0x30, 0x31, 0x32, 0x33]);
}

#[test]
fn uxrom_switches_16k_at_8000_and_fixes_last() {
    let mut cart = RomBuilder::new(2, 8, 0).cartridge();
    assert_eq!(prg_banks(&cart), [0, 1, 14, 15]);
    cart.cpu_write(0x8000, 3, 1);
    assert_eq!(prg_banks(&cart), [6, 7, 14, 15]);
    cart.cpu_write(0xFFFF, 9, 3);
    assert_eq!(prg_banks(&cart), [2, 3, 14, 15], "bank wraps modulo the ROM size");
}

#[test]
fn uxrom_bus_conflicts_only_when_declared() {
    // Submapper 2: the written value is ANDed with the ROM byte (bank 0 at $8000 holds 0).
    let mut cart = RomBuilder::new(2, 8, 0).nes20(2, 0x07, 0x07).cartridge();
    cart.cpu_write(0x8000, 3, 1);
    assert_eq!(prg_banks(&cart)[0], 0);
    cart.cpu_write(0x8000 + cart_support::FF_OFFSET, 3, 3);
    assert_eq!(prg_banks(&cart)[0], 6);
    let mut cart = RomBuilder::new(2, 8, 0).cartridge();
    cart.cpu_write(0x8000, 3, 1);
    assert_eq!(prg_banks(&cart)[0], 6);
}

#[test]
fn cnrom_switches_8k_chr() {
    let mut cart = RomBuilder::new(3, 2, 4).cartridge();
    cart.cpu_write(0x8000, 2, 1);
    assert_eq!(chr_banks(&cart), [16, 17, 18, 19, 20, 21, 22, 23]);
    assert_eq!(prg_banks(&cart), [0, 1, 2, 3]);
    // iNES 1.0 CNROM still gets PRG RAM (conformance ROMs report through $6000).
    cart.cpu_write(0x6000, 0x80, 3);
    assert_eq!(cart.cpu_peek(0x6000, 0), 0x80);
}

#[test]
fn axrom_switches_32k_and_single_screen() {
    let mut cart = RomBuilder::new(7, 16, 0).cartridge();
    assert_eq!(nametable_pages(&mut cart), SCREEN_A);
    cart.cpu_write(0x8000, 0x13, 1);
    assert_eq!(prg_banks(&cart), [12, 13, 14, 15]);
    assert_eq!(nametable_pages(&mut cart), SCREEN_B);
}

fn mmc3_select(cart: &mut anes_core::Cartridge, bank_select: u8, value: u8) {
    cart.cpu_write(0x8000, bank_select, 1);
    cart.cpu_write(0x8001, value, 3);
}

#[test]
fn mmc3_prg_modes() {
    let mut cart = RomBuilder::new(4, 16, 8).cartridge();
    mmc3_select(&mut cart, 6, 5);
    mmc3_select(&mut cart, 7, 9);
    assert_eq!(prg_banks(&cart), [5, 9, 30, 31]);
    mmc3_select(&mut cart, 0x46, 5);
    assert_eq!(prg_banks(&cart), [30, 9, 5, 31]);
}

#[test]
fn mmc3_chr_modes() {
    let mut cart = RomBuilder::new(4, 16, 32).cartridge();
    for (reg, value) in [(0, 0x11), (1, 0x20), (2, 40), (3, 41), (4, 50), (5, 60)] {
        mmc3_select(&mut cart, reg, value);
    }
    assert_eq!(chr_banks(&cart), [0x10, 0x11, 0x20, 0x21, 40, 41, 50, 60]);
    mmc3_select(&mut cart, 0x80, 0x11);
    assert_eq!(chr_banks(&cart), [40, 41, 50, 60, 0x10, 0x11, 0x20, 0x21]);
}

#[test]
fn mmc3_mirroring_and_prg_ram_protect() {
    let mut cart = RomBuilder::new(4, 2, 1).cartridge();
    cart.cpu_write(0xA000, 0, 1);
    assert_eq!(nametable_pages(&mut cart), V);
    cart.cpu_write(0xA000, 1, 1);
    assert_eq!(nametable_pages(&mut cart), H);
    cart.cpu_write(0x6000, 1, 1);
    cart.cpu_write(0xA001, 0xC0, 1);
    cart.cpu_write(0x6000, 2, 1);
    assert_eq!(cart.cpu_peek(0x6000, 0xEE), 1, "write-protected RAM kept its value");
    cart.cpu_write(0xA001, 0x00, 1);
    assert_eq!(cart.cpu_peek(0x6000, 0xEE), 0xEE, "disabled RAM reads open bus");
    cart.cpu_write(0xA001, 0x80, 1);
    cart.cpu_write(0x6000, 3, 1);
    assert_eq!(cart.cpu_peek(0x6000, 0xEE), 3);
}

/// A12 low for `low_cycles` M2 cycles, then a rising edge (as a pattern fetch from $1000 would).
fn a12_pulse(cart: &mut anes_core::Cartridge, low_cycles: u32) {
    cart.ppu_address(0x0FF0);
    for _ in 0..low_cycles {
        cart.cpu_cycle();
    }
    let mut ciram = [0u8; 0x800];
    cart.ppu_read(0x1000, &mut ciram);
}

/// The IRQ line after each of `clocks` filtered A12 edges.
fn irq_after_clocks(cart: &mut anes_core::Cartridge, clocks: usize) -> Vec<bool> {
    (0..clocks)
        .map(|_| {
            a12_pulse(cart, 4);
            let line = cart.irq_line();
            cart.cpu_write(0xE000, 0, 1);
            cart.cpu_write(0xE001, 0, 1);
            line
        })
        .collect()
}

fn mmc3_with_latch(revision: Mmc3Revision, latch: u8) -> anes_core::Cartridge {
    let mut cart = RomBuilder::new(4, 2, 1).cartridge();
    assert!(cart.set_mmc3_revision(revision));
    cart.cpu_write(0xC000, latch, 1);
    cart.cpu_write(0xC001, 0, 1);
    cart.cpu_write(0xE001, 0, 1);
    cart
}

#[test]
fn mmc3_counter_counts_down_from_latch_and_asserts_irq_at_zero() {
    for revision in [Mmc3Revision::A, Mmc3Revision::B] {
        let mut cart = mmc3_with_latch(revision, 3);
        // Reload to 3, then 2, 1, 0 (IRQ), then reload to 3 ...
        assert_eq!(irq_after_clocks(&mut cart, 8), [false, false, false, true, false, false, false, true]);
    }
}

#[test]
fn mmc3_irq_stays_asserted_until_e000() {
    let mut cart = mmc3_with_latch(Mmc3Revision::B, 1);
    a12_pulse(&mut cart, 4);
    a12_pulse(&mut cart, 4);
    assert!(cart.irq_line());
    cart.cpu_write(0xE001, 0, 1);
    assert!(cart.irq_line(), "$E001 does not acknowledge");
    cart.cpu_write(0xE000, 0, 1);
    assert!(!cart.irq_line());
}

#[test]
fn mmc3_latch_zero_differs_between_revisions() {
    // Revision B: the counter is 0 after every clock, so every clock asserts IRQ.
    let mut cart = mmc3_with_latch(Mmc3Revision::B, 0);
    assert_eq!(irq_after_clocks(&mut cart, 3), [true, true, true]);
    // Revision A: only the reload requested through $C001 asserts it.
    let mut cart = mmc3_with_latch(Mmc3Revision::A, 0);
    assert_eq!(irq_after_clocks(&mut cart, 3), [true, false, false]);
    cart.cpu_write(0xC001, 0, 1);
    assert_eq!(irq_after_clocks(&mut cart, 2), [true, false]);
}

#[test]
fn mmc3_disabled_irq_still_counts() {
    let mut cart = mmc3_with_latch(Mmc3Revision::B, 2);
    cart.cpu_write(0xE000, 0, 1);
    a12_pulse(&mut cart, 4);
    a12_pulse(&mut cart, 4);
    a12_pulse(&mut cart, 4);
    assert!(!cart.irq_line());
    cart.cpu_write(0xE001, 0, 1);
    // The counter was at 0 after three clocks: the next clock reloads 2.
    assert_eq!(irq_after_clocks(&mut cart, 3), [false, false, true]);
}

#[test]
fn mmc3_a12_filter_needs_three_m2_edges_low() {
    let mut cart = mmc3_with_latch(Mmc3Revision::B, 1);
    a12_pulse(&mut cart, 4); // reload to 1
    // Sprite fetches: A12 low for only 1-2 M2 edges between rises does not clock the counter.
    a12_pulse(&mut cart, 2);
    a12_pulse(&mut cart, 1);
    a12_pulse(&mut cart, 0);
    assert!(!cart.irq_line());
    a12_pulse(&mut cart, 3);
    assert!(cart.irq_line());
    // Staying high (repeated $1xxx fetches) is not an edge.
    cart.cpu_write(0xE000, 0, 1);
    cart.cpu_write(0xE001, 0, 1);
    let mut ciram = [0u8; 0x800];
    for _ in 0..10 {
        cart.cpu_cycle();
        cart.ppu_read(0x1FF0, &mut ciram);
    }
    assert!(!cart.irq_line());
    // Nametable fetches ($2xxx) have A12 low: reload to 1, then decrement to 0.
    for expected in [false, true] {
        cart.ppu_address(0x2000);
        for _ in 0..3 {
            cart.cpu_cycle();
        }
        cart.ppu_address(0x1000);
        assert_eq!(cart.irq_line(), expected);
    }
}

#[test]
fn mmc3_revision_from_submapper() {
    let cart = RomBuilder::new(4, 2, 1).nes20(4, 0x07, 0).cartridge();
    assert_eq!(cart.mmc3_revision(), Some(Mmc3Revision::A));
    let cart = RomBuilder::new(4, 2, 1).cartridge();
    assert_eq!(cart.mmc3_revision(), Some(Mmc3Revision::B));
    let mut cart = RomBuilder::new(0, 2, 1).cartridge();
    assert_eq!(cart.mmc3_revision(), None);
    assert!(!cart.set_mmc3_revision(Mmc3Revision::A));
}

/// An MMC6 board as StarTropics has it: NES 2.0 mapper 4 submapper 1, 1 KiB of battery-backed
/// PRG RAM.
fn mmc6(prg_16k: usize, chr_8k: usize) -> anes_core::Cartridge {
    RomBuilder::new(4, prg_16k, chr_8k).nes20(1, 0x40, 0).flags6(0x02).cartridge()
}

#[test]
fn mmc6_banks_and_mirrors_like_the_mmc3() {
    let mut cart = mmc6(16, 8);
    // $8000 bit 5 (the MMC6's RAM enable) leaves the bank registers' meaning alone.
    mmc3_select(&mut cart, 0x26, 5);
    mmc3_select(&mut cart, 0x27, 9);
    assert_eq!(prg_banks(&cart), [5, 9, 30, 31]);
    mmc3_select(&mut cart, 0x66, 5);
    assert_eq!(prg_banks(&cart), [30, 9, 5, 31]);
    mmc3_select(&mut cart, 0xA2, 40);
    assert_eq!(chr_banks(&cart)[0], 40, "R2 at $0000 with the CHR inversion");
    cart.cpu_write(0xA000, 1, 1);
    assert_eq!(nametable_pages(&mut cart), H);
}

#[test]
fn mmc6_prg_ram_through_the_cpu_bus() {
    let mut cart = mmc6(2, 1);
    assert_eq!(cart.prg_ram().len(), 0x400);
    assert_eq!(cart.battery_ram().map(<[u8]>::len), Some(0x400));
    // Disabled at power-on: open bus, and the write is lost.
    cart.cpu_write(0x7000, 0x11, 1);
    assert_eq!(cart.cpu_read(0x7000, 0x70), 0x70);
    cart.cpu_write(0x8000, 0x20, 3);
    cart.cpu_write(0xA001, 0xF0, 5);
    assert_eq!(cart.cpu_read(0x7000, 0x70), 0, "the write while disabled was lost");
    cart.cpu_write(0x7000, 0x11, 7);
    cart.cpu_write(0x73FF, 0x22, 9);
    // Each KiB of $7000-$7FFF is the same RAM; $6000-$6FFF is open bus and takes no writes.
    for base in [0x7000u16, 0x7400, 0x7800, 0x7C00] {
        assert_eq!((cart.cpu_peek(base, 0xEE), cart.cpu_peek(base + 0x3FF, 0xEE)), (0x11, 0x22));
    }
    for addr in [0x6000u16, 0x6400, 0x6FFF] {
        cart.cpu_write(addr, 0x33, 11);
        assert_eq!(cart.cpu_peek(addr, 0x60), 0x60, "${addr:04X}");
    }
    assert_eq!((cart.prg_ram()[0], cart.prg_ram()[0x3FF]), (0x11, 0x22));
    // Only the upper half readable: the lower reads 0; without its write bit, the upper takes no
    // writes.
    cart.cpu_write(0xA001, 0x80, 13);
    assert_eq!((cart.cpu_peek(0x7000, 0xEE), cart.cpu_peek(0x73FF, 0xEE)), (0, 0x22));
    cart.cpu_write(0x73FF, 0x44, 15);
    assert_eq!(cart.prg_ram()[0x3FF], 0x22);
    cart.cpu_write(0xA001, 0xC0, 17);
    cart.cpu_write(0x77FF, 0x44, 19);
    assert_eq!(cart.prg_ram()[0x3FF], 0x44, "written through a mirror");
    // A write bit without its read bit does nothing.
    cart.cpu_write(0xA001, 0x10, 21);
    cart.cpu_write(0x7000, 0x55, 23);
    assert_eq!((cart.cpu_peek(0x7000, 0xEE), cart.prg_ram()[0]), (0xEE, 0x11));
    // Clearing $8000 bit 5 disables the RAM and clears $A001 for good.
    cart.cpu_write(0xA001, 0xF0, 25);
    cart.cpu_write(0x8000, 0x00, 27);
    cart.cpu_write(0x8000, 0x20, 29);
    assert_eq!(cart.cpu_peek(0x7000, 0xEE), 0xEE);
}

#[test]
fn mmc6_irq_has_the_old_latch_zero_behaviour() {
    let mut cart = mmc6(2, 1);
    assert_eq!(cart.mmc3_revision(), Some(Mmc3Revision::A));
    cart.cpu_write(0xC000, 0, 1);
    cart.cpu_write(0xC001, 0, 3);
    cart.cpu_write(0xE001, 0, 5);
    assert_eq!(irq_after_clocks(&mut cart, 4), [true, false, false, false]);
}

#[test]
fn mmc2_latches_switch_after_the_triggering_read() {
    let mut cart = RomBuilder::new(9, 8, 16).cartridge();
    let mut ciram = [0u8; 0x800];
    assert_eq!(prg_banks(&cart), [0, 13, 14, 15]);
    cart.cpu_write(0xA000, 5, 1);
    assert_eq!(prg_banks(&cart), [5, 13, 14, 15]);
    for (addr, bank) in [(0xB000, 1), (0xC000, 2), (0xD000, 3), (0xE000, 4)] {
        cart.cpu_write(addr, bank, 1);
    }
    // Power-on latches are $FD.
    assert_eq!(chr_banks(&cart), [4, 5, 6, 7, 12, 13, 14, 15]);
    // The read of $0FE8 returns the $FD bank's byte, then the $FE bank is mapped.
    assert_eq!(cart.ppu_read(0x0FE8, &mut ciram), 7);
    assert_eq!(chr_banks(&cart)[..4], [8, 9, 10, 11]);
    // MMC2's low latch triggers only at $0FD8 exactly, not $0FD9.
    cart.ppu_read(0x0FD9, &mut ciram);
    assert_eq!(chr_banks(&cart)[..4], [8, 9, 10, 11]);
    cart.ppu_read(0x0FD8, &mut ciram);
    assert_eq!(chr_banks(&cart)[..4], [4, 5, 6, 7]);
    // The high latch triggers on the whole row.
    cart.ppu_read(0x1FEF, &mut ciram);
    assert_eq!(chr_banks(&cart)[4..], [16, 17, 18, 19]);
    cart.ppu_read(0x1FDA, &mut ciram);
    assert_eq!(chr_banks(&cart)[4..], [12, 13, 14, 15]);
    // Peeks and address-only cycles do not trigger latches.
    cart.ppu_address(0x1FE8);
    let _ = cart.ppu_peek(0x1FE8, &ciram);
    assert_eq!(chr_banks(&cart)[4..], [12, 13, 14, 15]);
    cart.cpu_write(0xF000, 1, 1);
    assert_eq!(nametable_pages(&mut cart), H);
    cart.cpu_write(0xF000, 0, 1);
    assert_eq!(nametable_pages(&mut cart), V);
}

#[test]
fn mmc4_switches_16k_and_latches_on_whole_rows() {
    let mut cart = RomBuilder::new(10, 8, 16).cartridge();
    let mut ciram = [0u8; 0x800];
    cart.cpu_write(0xA000, 2, 1);
    assert_eq!(prg_banks(&cart), [4, 5, 14, 15]);
    cart.cpu_write(0xB000, 1, 1);
    cart.cpu_write(0xC000, 2, 1);
    cart.ppu_read(0x0FEB, &mut ciram);
    assert_eq!(chr_banks(&cart)[..4], [8, 9, 10, 11]);
    cart.ppu_read(0x0FDF, &mut ciram);
    assert_eq!(chr_banks(&cart)[..4], [4, 5, 6, 7]);
    cart.cpu_write(0x6000, 0x5C, 1);
    assert_eq!(cart.cpu_peek(0x6000, 0), 0x5C);
}

#[test]
fn color_dreams_switches_prg_and_chr() {
    let mut cart = RomBuilder::new(11, 8, 8).cartridge();
    cart.cpu_write(0x8000 + cart_support::FF_OFFSET, 0x31, 1);
    assert_eq!(prg_banks(&cart), [4, 5, 6, 7]);
    assert_eq!(chr_banks(&cart), [24, 25, 26, 27, 28, 29, 30, 31]);
}

#[test]
fn gxrom_switches_prg_and_chr() {
    let mut cart = RomBuilder::new(66, 8, 4).cartridge();
    cart.cpu_write(0x8000 + cart_support::FF_OFFSET, 0x23, 1);
    assert_eq!(prg_banks(&cart), [8, 9, 10, 11]);
    assert_eq!(chr_banks(&cart), [24, 25, 26, 27, 28, 29, 30, 31]);
    // Bus conflict: bank 8 holds 8 at $8000, so 0x10 & 8 = 0 selects bank 0.
    cart.cpu_write(0x8000, 0x10, 1);
    assert_eq!(prg_banks(&cart), [0, 1, 2, 3]);
}

#[test]
fn camerica_switches_16k_at_8000() {
    let mut cart = RomBuilder::new(71, 8, 0).flags6(0x01).cartridge();
    assert_eq!(prg_banks(&cart), [0, 1, 14, 15]);
    cart.cpu_write(0xC000, 3, 1);
    assert_eq!(prg_banks(&cart), [6, 7, 14, 15]);
    // BF9093: $8000-$BFFF writes do nothing, mirroring is wired.
    cart.cpu_write(0x9000, 0x10, 1);
    cart.cpu_write(0xA000, 1, 1);
    assert_eq!(prg_banks(&cart), [6, 7, 14, 15]);
    assert_eq!(nametable_pages(&mut cart), V);
}

#[test]
fn camerica_fire_hawk_single_screen() {
    let mut cart = RomBuilder::new(71, 8, 0).nes20(1, 0x07, 0x07).flags6(0x01).cartridge();
    assert_eq!(nametable_pages(&mut cart), V);
    cart.cpu_write(0x9000, 0x10, 1);
    assert_eq!(nametable_pages(&mut cart), SCREEN_B);
    cart.cpu_write(0x8000, 0x00, 1);
    assert_eq!(nametable_pages(&mut cart), SCREEN_A);
}
