//! Snapshot round trip: for every board, the Pod state bytes plus the RAMs, copied into a fresh
//! cartridge of the same ROM and followed by `rebuild_caches`, behave identically over the whole CPU
//! and PPU address space, now and after further accesses.

mod cart_support;

use anes_core::Cartridge;
use cart_support::RomBuilder;

/// One thing done to a cartridge.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// CPU write (address, value, cycle).
    Write(u16, u8, u64),
    /// PPU read.
    PpuRead(u16),
    /// PPU address without data.
    PpuAddress(u16),
    /// M2 cycles.
    Cycles(u32),
}

fn apply(cart: &mut Cartridge, ops: &[Op]) {
    let mut ciram = [0u8; 0x800];
    for &op in ops {
        match op {
            Op::Write(addr, value, cycle) => cart.cpu_write(addr, value, cycle),
            Op::PpuRead(addr) => {
                cart.ppu_read(addr, &mut ciram);
            }
            Op::PpuAddress(addr) => cart.ppu_address(addr),
            Op::Cycles(n) => (0..n).for_each(|_| cart.cpu_cycle()),
        }
    }
}

fn restored_copy(rom: &[u8], cart: &Cartridge) -> Cartridge {
    let mut copy = Cartridge::from_ines(rom).unwrap();
    copy.mapper_state_bytes_mut().copy_from_slice(cart.mapper_state_bytes());
    copy.prg_ram_mut().copy_from_slice(cart.prg_ram());
    copy.chr_ram_mut().copy_from_slice(cart.chr_ram());
    copy.extra_vram_mut().copy_from_slice(cart.extra_vram());
    copy.rebuild_caches();
    copy
}

fn assert_same_behaviour(a: &Cartridge, b: &Cartridge, what: &str) {
    assert_eq!(a.mapper_state_bytes(), b.mapper_state_bytes(), "{what}: state");
    assert_eq!(a.irq_line(), b.irq_line(), "{what}: IRQ");
    for addr in 0x4020..=0xFFFF {
        assert_eq!(a.cpu_peek(addr, 0xA5), b.cpu_peek(addr, 0xA5), "{what}: CPU ${addr:04X}");
    }
    let ciram: [u8; 0x800] = core::array::from_fn(|i| (i ^ (i >> 8)) as u8);
    for addr in 0..0x3F00 {
        assert_eq!(a.ppu_peek(addr, &ciram), b.ppu_peek(addr, &ciram), "{what}: PPU ${addr:04X}");
    }
}

fn round_trip(rom: RomBuilder, before: &[Op], after: &[Op]) {
    let bytes = rom.build();
    let mut cart = Cartridge::from_ines(&bytes).unwrap();
    apply(&mut cart, before);
    cart.prg_ram_mut().iter_mut().enumerate().for_each(|(i, b)| *b = (i * 7) as u8);
    cart.chr_ram_mut().iter_mut().enumerate().for_each(|(i, b)| *b = (i * 3) as u8);
    cart.extra_vram_mut().iter_mut().enumerate().for_each(|(i, b)| *b = (i * 5) as u8);
    let mut copy = restored_copy(&bytes, &cart);
    let name = format!("mapper {}", rom.mapper);
    assert_same_behaviour(&cart, &copy, &format!("{name} restored"));
    apply(&mut cart, after);
    apply(&mut copy, after);
    assert_same_behaviour(&cart, &copy, &format!("{name} continued"));
}

use Op::{Cycles, PpuAddress, PpuRead, Write};

/// Serial MMC1 write of `value` starting at `cycle`.
fn mmc1(addr: u16, value: u8, cycle: u64) -> Vec<Op> {
    (0..5).map(|bit| Write(addr, (value >> bit) & 1, cycle + 2 * bit)).collect()
}

#[test]
fn nrom_round_trip() {
    round_trip(RomBuilder::new(0, 1, 0).flags6(0x08), &[], &[Write(0x6000, 1, 1)]);
}

#[test]
fn mmc1_round_trip_mid_shift_and_back_to_back() {
    let mut before = [mmc1(0x8000, 0x1E, 10), mmc1(0xA000, 0x13, 30), mmc1(0xC000, 0x05, 50)].concat();
    before.extend(mmc1(0xE000, 0x07, 70));
    // Two bits of the next value are in the shift register; the last write was on cycle 92.
    before.extend([Write(0xE000, 1, 90), Write(0xE000, 0, 92)]);
    // Cycle 93 is back-to-back with the snapshot's last write: both copies must ignore it.
    let after = [Write(0xE000, 1, 93), Write(0xE000, 1, 95), Write(0xE000, 0, 97), Write(0xE000, 0, 99)];
    round_trip(RomBuilder::new(1, 32, 0), &before, &after);
    round_trip(RomBuilder::new(1, 8, 0).nes20(0, 0x09, 0x07), &mmc1(0xA000, 0x0C, 10), &after);
}

#[test]
fn discrete_boards_round_trip() {
    round_trip(RomBuilder::new(2, 8, 0), &[Write(0x8000, 5, 1)], &[Write(0x8000, 2, 3)]);
    round_trip(RomBuilder::new(3, 2, 4), &[Write(0x8000, 3, 1)], &[Write(0x8000, 1, 3)]);
    round_trip(RomBuilder::new(7, 8, 0), &[Write(0x8000, 0x12, 1)], &[Write(0x8000, 3, 3)]);
    round_trip(RomBuilder::new(11, 8, 8), &[Write(0x8100, 0x31, 1)], &[Write(0xA100, 0x20, 3)]);
    round_trip(RomBuilder::new(66, 8, 4), &[Write(0x8100, 0x21, 1)], &[Write(0xA100, 0x12, 3)]);
    round_trip(RomBuilder::new(71, 8, 0), &[Write(0xC000, 5, 1)], &[Write(0xC000, 2, 3)]);
    round_trip(
        RomBuilder::new(71, 8, 0).nes20(1, 0x07, 0x07),
        &[Write(0xC000, 5, 1), Write(0x9000, 0x10, 3)],
        &[Write(0x9000, 0, 5)],
    );
}

#[test]
fn mmc3_round_trip_with_irq_counter_and_a12_filter() {
    let mut before = vec![
        Write(0x8000, 0xC6, 1),
        Write(0x8001, 7, 3),
        Write(0x8000, 0x82, 5),
        Write(0x8001, 9, 7),
        Write(0xA000, 1, 9),
        Write(0xA001, 0xC0, 11),
        Write(0xC000, 2, 13),
        Write(0xC001, 0, 15),
        Write(0xE001, 0, 17),
    ];
    for _ in 0..2 {
        before.extend([PpuAddress(0x0000), Cycles(4), PpuRead(0x1000)]);
    }
    // A12 has been low for 2 M2 edges at the snapshot: one more makes the next rise count.
    before.extend([PpuAddress(0x0000), Cycles(2)]);
    let after = [Cycles(1), PpuRead(0x1000), Write(0xE000, 0, 21), Write(0x8001, 1, 23)];
    round_trip(RomBuilder::new(4, 16, 16), &before, &after);
    round_trip(RomBuilder::new(4, 16, 16).flags6(0x08), &before, &after);
}

#[test]
fn mmc6_round_trip_with_ram_enables() {
    let mmc6 = RomBuilder::new(4, 16, 16).nes20(1, 0x40, 0).flags6(0x02);
    let before = [
        Write(0x8000, 0x26, 1),
        Write(0x8001, 7, 3),
        Write(0xA001, 0xB0, 5),
        Write(0x7001, 0x12, 7),
        Write(0xC000, 0, 9),
        Write(0xC001, 0, 11),
        Write(0xE001, 0, 13),
        PpuAddress(0x0000),
        Cycles(4),
        PpuRead(0x1000),
    ];
    let after = [
        Write(0x7203, 0x34, 15),
        Write(0xA001, 0xE0, 17),
        Write(0x7E05, 0x56, 19),
        PpuAddress(0x0000),
        Cycles(4),
        PpuRead(0x1000),
        Write(0x8000, 0x06, 21),
        Write(0xA001, 0xF0, 23),
    ];
    round_trip(mmc6, &before, &after);
}

#[test]
fn mmc2_and_mmc4_round_trip_with_latches() {
    let before = [
        Write(0xA000, 3, 1),
        Write(0xB000, 1, 3),
        Write(0xC000, 2, 5),
        Write(0xD000, 3, 7),
        Write(0xE000, 4, 9),
        Write(0xF000, 1, 11),
        PpuRead(0x0FE8),
        PpuRead(0x1FEA),
    ];
    let after = [PpuRead(0x0FD8), PpuRead(0x1FE8), Write(0xF000, 0, 13)];
    round_trip(RomBuilder::new(9, 8, 16), &before, &after);
    round_trip(RomBuilder::new(10, 8, 16), &before, &after);
}

#[test]
fn power_on_resets_registers_and_volatile_memory_but_keeps_battery_ram_and_revision() {
    use anes_core::cart::Mmc3Revision;
    // MMC3 with 8 KiB battery RAM (iNES 1.0 battery flag) and CHR RAM.
    let bytes = RomBuilder::new(4, 16, 0).flags6(0x02).build();
    let mut cart = Cartridge::from_ines(&bytes).unwrap();
    let fresh = Cartridge::from_ines(&bytes).unwrap();
    cart.set_mmc3_revision(Mmc3Revision::A);
    apply(&mut cart, &[Write(0x8000, 6, 1), Write(0x8001, 9, 3), Write(0x6000, 0x42, 5)]);
    let mut ciram = [0u8; 0x800];
    cart.ppu_write(0x0010, 0x99, &mut ciram);
    cart.power_on();
    assert_eq!(cart.mmc3_revision(), Some(Mmc3Revision::A));
    assert_eq!(cart.prg_ram()[0], 0x42, "battery-backed RAM survives");
    assert_eq!(cart.chr_ram()[0x10], 0, "CHR RAM is cleared");
    cart.set_mmc3_revision(Mmc3Revision::B);
    assert_eq!(cart.mapper_state_bytes(), fresh.mapper_state_bytes());
    assert_eq!(cart_support::prg_banks(&cart), cart_support::prg_banks(&fresh));

    // Volatile PRG RAM is cleared; a trainer is put back at $7000.
    let bytes = RomBuilder::new(0, 1, 1).flags6(0x04).build();
    let mut cart = Cartridge::from_ines(&bytes).unwrap();
    apply(&mut cart, &[Write(0x6000, 0x42, 1), Write(0x7000, 0x00, 3)]);
    cart.power_on();
    assert_eq!((cart.cpu_peek(0x6000, 0xEE), cart.cpu_peek(0x7000, 0xEE)), (0, 0xA5));
}

#[test]
fn rom_images_are_the_files() {
    let rom = RomBuilder::new(4, 2, 1).flags6(0x04);
    let bytes = rom.build();
    let cart = Cartridge::from_ines(&bytes).unwrap();
    assert_eq!(cart.prg_rom(), &bytes[16 + 512..16 + 512 + 0x8000]);
    assert_eq!(cart.chr_rom(), &bytes[16 + 512 + 0x8000..]);
    assert!(RomBuilder::new(2, 2, 0).cartridge().chr_rom().is_empty());
}
