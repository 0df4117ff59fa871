//! The MMC5's registers and fetch handling against the nesdev "MMC5" page.

use super::*;
use crate::cart::map::PrgSlot;
use crate::cart::mapper::{Fetch, Mapper};
use crate::cart::rom_info::Mirroring;

/// 256 KiB PRG, 256 KiB CHR, `ram` bytes of PRG RAM.
fn board(ram: usize) -> (Mmc5, MemoryMap) {
    let board = Mmc5::new(BoardConfig { mapper: 5, submapper: 0, chr_rom_size: 0x40000, battery: false });
    let mut map = MemoryMap::new(0x40000, 0x40000, ram, Mirroring::Horizontal);
    board.update_map(&mut map);
    (board, map)
}

fn write(board: &mut Mmc5, map: &mut MemoryMap, addr: u16, value: u8) {
    if board.write_low(addr, value, 0) {
        board.update_map(map);
    }
}

/// The 8 KiB PRG ROM bank number at each slot, `None` for a RAM slot.
fn rom_banks(map: &MemoryMap) -> [Option<usize>; 4] {
    core::array::from_fn(|slot| (map.prg_slots[slot] == PrgSlot::Rom).then_some(map.prg[slot] / PRG_SLOT))
}

#[test]
fn power_on_maps_the_last_bank_at_e000() {
    let (_, map) = board(0x2000);
    assert_eq!(rom_banks(&map)[3], Some(31));
}

#[test]
fn the_four_prg_modes_bank_as_documented() {
    let (mut b, mut map) = board(0x10000);
    for (addr, value) in [(0x5114, 0x85), (0x5115, 0x8B), (0x5116, 0x8E), (0x5117, 0x97)] {
        write(&mut b, &mut map, addr, value);
    }
    // Mode 0: one 32 KiB bank from $5117 with its low two bits ignored.
    write(&mut b, &mut map, 0x5100, 0);
    assert_eq!(rom_banks(&map), [Some(20), Some(21), Some(22), Some(23)]);
    // Mode 1: 16 KiB from $5115 (bit 0 ignored) and 16 KiB from $5117.
    write(&mut b, &mut map, 0x5100, 1);
    assert_eq!(rom_banks(&map), [Some(10), Some(11), Some(22), Some(23)]);
    // Mode 2: 16 KiB from $5115, 8 KiB from $5116 and $5117.
    write(&mut b, &mut map, 0x5100, 2);
    assert_eq!(rom_banks(&map), [Some(10), Some(11), Some(14), Some(23)]);
    // Mode 3: four 8 KiB banks.
    write(&mut b, &mut map, 0x5100, 3);
    assert_eq!(rom_banks(&map), [Some(5), Some(11), Some(14), Some(23)]);
}

#[test]
fn bit_7_clear_maps_ram_and_5117_is_always_rom() {
    let (mut b, mut map) = board(0x10000);
    write(&mut b, &mut map, 0x5114, 0x03);
    write(&mut b, &mut map, 0x5116, 0x05);
    write(&mut b, &mut map, 0x5117, 0x07);
    assert_eq!(map.prg_slots[0], PrgSlot::Ram(3 * PRG_SLOT));
    assert_eq!(map.prg_slots[2], PrgSlot::Ram(5 * PRG_SLOT));
    assert_eq!(map.prg_slots[3], PrgSlot::Rom);
    // 16 KiB RAM banks in mode 2 ignore bit 0.
    write(&mut b, &mut map, 0x5100, 2);
    write(&mut b, &mut map, 0x5115, 0x03);
    assert_eq!(map.prg_slots[..2], [PrgSlot::Ram(2 * PRG_SLOT), PrgSlot::Ram(3 * PRG_SLOT)]);
    // Without PRG RAM, a RAM slot drives nothing.
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5114, 0x00);
    assert_eq!(map.prg_slots[0], PrgSlot::OpenBus);
}

#[test]
fn ram_takes_writes_only_with_5102_2_and_5103_1() {
    for (first, second) in [(0u8, 0u8), (2, 0), (0, 1), (1, 2), (2, 1), (0xFE, 0xFD)] {
        let (mut b, mut map) = board(0x10000);
        write(&mut b, &mut map, 0x5102, first);
        write(&mut b, &mut map, 0x5103, second);
        let writable = first & 3 == 2 && second & 3 == 1;
        assert_eq!(map.prg_ram_writable, writable, "${first:02X} ${second:02X}");
        assert_eq!(map.prg_ram_window(0x6000).writable, writable);
    }
}

#[test]
fn sixteen_kib_of_ram_is_two_chips_selected_by_bit_2() {
    let (mut b, mut map) = board(0x4000);
    for (bank, chip) in [(0u8, 0usize), (1, 0), (3, 0), (4, 1), (7, 1)] {
        write(&mut b, &mut map, 0x5113, bank);
        assert_eq!(map.prg_ram_window(0x6000).offset, chip * PRG_SLOT, "bank {bank}");
    }
}

/// The 1 KiB CHR banks the CPU view (the set written last) maps at $0000-$1FFF.
fn chr_banks(map: &MemoryMap) -> [usize; 8] {
    map.chr.map(|offset| offset / CHR_SLOT)
}

#[test]
fn the_four_chr_modes_of_both_sets() {
    let (mut b, mut map) = board(0);
    for i in 0..12u16 {
        write(&mut b, &mut map, 0x5120 + i, 0x10 + i as u8);
    }
    // Set B (written last): $5128-$512B cover $0000-$0FFF and repeat at $1000.
    let expect_b = [
        (
            0,
            [
                0x1B * 8,
                0x1B * 8 + 1,
                0x1B * 8 + 2,
                0x1B * 8 + 3,
                0x1B * 8 + 4,
                0x1B * 8 + 5,
                0x1B * 8 + 6,
                0x1B * 8 + 7,
            ],
        ),
        (
            1,
            [
                0x1B * 4,
                0x1B * 4 + 1,
                0x1B * 4 + 2,
                0x1B * 4 + 3,
                0x1B * 4,
                0x1B * 4 + 1,
                0x1B * 4 + 2,
                0x1B * 4 + 3,
            ],
        ),
        (2, [0x19 * 2, 0x19 * 2 + 1, 0x1B * 2, 0x1B * 2 + 1, 0x19 * 2, 0x19 * 2 + 1, 0x1B * 2, 0x1B * 2 + 1]),
        (3, [0x18, 0x19, 0x1A, 0x1B, 0x18, 0x19, 0x1A, 0x1B]),
    ];
    for (mode, banks) in expect_b {
        write(&mut b, &mut map, 0x5101, mode);
        assert_eq!(chr_banks(&map), banks, "set B, mode {mode}");
    }
    // Writing a set A register makes set A the CPU's view.
    write(&mut b, &mut map, 0x5127, 0x17);
    let expect_a = [
        (0, core::array::from_fn(|i| 0x17 * 8 + i)),
        (
            1,
            [
                0x13 * 4,
                0x13 * 4 + 1,
                0x13 * 4 + 2,
                0x13 * 4 + 3,
                0x17 * 4,
                0x17 * 4 + 1,
                0x17 * 4 + 2,
                0x17 * 4 + 3,
            ],
        ),
        (2, [0x11 * 2, 0x11 * 2 + 1, 0x13 * 2, 0x13 * 2 + 1, 0x15 * 2, 0x15 * 2 + 1, 0x17 * 2, 0x17 * 2 + 1]),
        (3, [0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17]),
    ];
    for (mode, banks) in expect_a {
        write(&mut b, &mut map, 0x5101, mode);
        assert_eq!(chr_banks(&map), banks, "set A, mode {mode}");
    }
}

#[test]
fn upper_chr_bits_are_taken_when_a_bank_register_is_written() {
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5101, 3);
    write(&mut b, &mut map, 0x5130, 1);
    write(&mut b, &mut map, 0x5120, 0x05);
    write(&mut b, &mut map, 0x5130, 0);
    write(&mut b, &mut map, 0x5121, 0x06);
    // 256 KiB of CHR is 256 1 KiB banks: $105 wraps to 5.
    assert_eq!(b.state.chr_banks[..2], [0x105, 0x006]);
}

#[test]
fn nametable_mapping_and_fill() {
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5105, 0b11_10_01_00);
    assert_eq!(map.nametables, [0, 1, PAGE_EXRAM, PAGE_FILL]);
    // ExRAM as a nametable reads 0 in modes 2 and 3.
    write(&mut b, &mut map, 0x5104, 2);
    assert_eq!(map.nametables[2], PAGE_ZERO);
    write(&mut b, &mut map, 0x5106, 0x42);
    write(&mut b, &mut map, 0x5107, 0xFE);
    assert_eq!(b.fill_bytes(), (0x42, 0xAA));
}

#[test]
fn multiplier_reads_the_16_bit_product() {
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5205, 0xC3);
    write(&mut b, &mut map, 0x5206, 0x7B);
    let product = 0xC3u16 * 0x7B;
    assert_eq!(b.peek_low(0x5205, 0, &[]), product as u8);
    assert_eq!(b.peek_low(0x5206, 0, &[]), (product >> 8) as u8);
}

#[test]
fn exram_cpu_access_by_mode() {
    let (mut b, mut map) = board(0);
    let exram = [0x5Au8; EXRAM_LEN];
    for mode in 0..4u8 {
        write(&mut b, &mut map, 0x5104, mode);
        let read = b.peek_low(0x5C10, 0x77, &exram);
        assert_eq!(read, if mode >= 2 { 0x5A } else { 0x77 }, "mode {mode} read");
        let expected = match mode {
            2 => Some(0x99),
            3 => None,
            // Not rendering: a write in modes 0 and 1 stores 0.
            _ => Some(0),
        };
        assert_eq!(b.exram_write(0x99), expected, "mode {mode} write");
    }
    b.state.exram_mode = 1;
    b.state.in_frame = 1;
    assert_eq!(b.exram_write(0x99), Some(0x99), "while rendering");
}

/// Drives `b` through a rendered line's reads after its first (the nametable read of column 2 at
/// $2002) as the PPU makes them: 169 reads, the last two the dummy reads of $2002. Returns what
/// each read gets: element k is read k + 1 of the line.
fn line_rest(b: &mut Mmc5, exram: &[u8]) -> Vec<Fetch> {
    let mut out = Vec::new();
    for column in 2..34u16 {
        if column != 2 {
            out.push(b.fetch(0x2000 + column, exram));
        }
        out.push(b.fetch(0x23C0 + column / 4, exram));
        out.push(b.fetch(0x1070, exram));
        out.push(b.fetch(0x1078, exram));
    }
    for _ in 0..8 {
        out.push(b.fetch(0x2022, exram));
        out.push(b.fetch(0x2022, exram));
        out.push(b.fetch(0x0FF0, exram));
        out.push(b.fetch(0x0FF8, exram));
    }
    for column in 0..2u16 {
        out.push(b.fetch(0x2000 + column, exram));
        out.push(b.fetch(0x23C0, exram));
        out.push(b.fetch(0x1070, exram));
        out.push(b.fetch(0x1078, exram));
    }
    out.push(b.fetch(0x2002, exram));
    out.push(b.fetch(0x2002, exram));
    assert_eq!(out.len(), 169);
    out
}

/// The pre-render line after an idle PPU (which starts no line), then line 0's first read.
fn to_line_0(b: &mut Mmc5, exram: &[u8]) {
    b.cpu_cycles(3);
    b.fetch(0x2002, exram);
    line_rest(b, exram);
    assert_eq!(b.state.in_frame, 0, "the pre-render line starts no frame");
    b.fetch(0x2002, exram);
    assert_eq!((b.state.in_frame, b.state.scanline, b.state.fetch_index), (1, 0, 0));
}

fn rendering(b: &mut Mmc5) {
    b.ppu_register_written(0x2001, 0x18);
}

#[test]
fn the_irq_fires_at_the_start_of_the_compared_line() {
    let exram = [0u8; EXRAM_LEN];
    for compare in [0u8, 1, 2, 5, 239, 240] {
        let (mut b, _) = board(0);
        rendering(&mut b);
        b.write_low(0x5203, compare, 0);
        b.write_low(0x5204, 0x80, 0);
        to_line_0(&mut b, &exram);
        let mut fired = None;
        for number in 0..240u16 {
            if number > 0 {
                // The line starts with its first read, the third of $2002 in a row.
                b.fetch(0x2002, &exram);
            }
            assert_eq!(b.state.in_frame, 1, "line {number}");
            assert_eq!(u16::from(b.state.scanline), number);
            if b.irq_line() && fired.is_none() {
                fired = Some(number);
            }
            line_rest(&mut b, &exram);
        }
        let expected = (1..240).contains(&compare).then_some(u16::from(compare));
        assert_eq!(fired, expected, "compare {compare}");
        // Reading $5204 acknowledges; three CPU cycles without a read end the frame.
        let status = b.read_low(0x5204, 0, &exram);
        assert_eq!(status & 0xC0, if expected.is_some() { 0xC0 } else { 0x40 });
        assert!(!b.irq_line());
        b.cpu_cycles(2);
        assert_eq!(b.state.in_frame, 1);
        b.cpu_cycles(1);
        assert_eq!(b.state.in_frame, 0);
    }
}

#[test]
fn turning_rendering_off_ends_the_frame() {
    let exram = [0u8; EXRAM_LEN];
    let (mut b, _) = board(0);
    rendering(&mut b);
    to_line_0(&mut b, &exram);
    b.ppu_register_written(0x2001, 0x00);
    assert_eq!(b.state.in_frame, 0);
}

#[test]
fn sprites_8x16_fetch_from_set_a_and_the_background_from_set_b() {
    let exram = [0u8; EXRAM_LEN];
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5101, 3);
    for i in 0..12u16 {
        write(&mut b, &mut map, 0x5120 + i, 0x20 + i as u8);
    }
    for (ctrl, sprite_bank, background_bank) in [(0x20u8, 0x23usize, 0x28usize), (0x00, 0x2B, 0x28)] {
        rendering(&mut b);
        b.ppu_register_written(0x2000, ctrl);
        to_line_0(&mut b, &exram);
        let fetches = line_rest(&mut b, &exram);
        // With 8x8 sprites both reads come from the bank map, which shows the set written last.
        let chr = |fetch: Fetch, addr: usize| match fetch {
            Fetch::Map => map.chr[addr >> 10] + (addr & 0x3FF),
            Fetch::Chr(offset) => offset,
            Fetch::Value(_) => usize::MAX,
        };
        // The background's pattern read at $1070 (window 4, set B's first register in 1 KiB mode).
        assert_eq!(chr(fetches[1], 0x1070), background_bank * 0x400 + 0x070, "ctrl ${ctrl:02X}");
        // A sprite slot's pattern read at $0FF0 (window 3).
        assert_eq!(chr(fetches[127 + 2], 0x0FF0), sprite_bank * 0x400 + 0x3F0, "ctrl ${ctrl:02X}");
    }
}

#[test]
fn extended_attributes_give_each_tile_its_palette_and_4k_bank() {
    let mut exram = [0u8; EXRAM_LEN];
    exram[5] = 0b10_000111;
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5104, 1);
    write(&mut b, &mut map, 0x5130, 2);
    rendering(&mut b);
    to_line_0(&mut b, &exram);
    let fetches = line_rest(&mut b, &exram);
    // Column 5 is the fourth tile of the line (the first read, column 2's, started it).
    let tile = &fetches[3 * 4 - 1..3 * 4 + 3];
    assert_eq!(tile[0], Fetch::Map, "the nametable byte itself");
    assert_eq!(tile[1], Fetch::Value(0xAA), "palette 2 in every quadrant");
    assert_eq!(tile[2], Fetch::Chr((2 << 6 | 7) * 0x1000 + 0x070));
    assert_eq!(tile[3], Fetch::Chr((2 << 6 | 7) * 0x1000 + 0x078));
}

#[test]
fn the_split_replaces_the_left_tiles_with_exram_and_its_page() {
    let mut exram = [0u8; EXRAM_LEN];
    // Split scroll 12 on line 0: y 12, row 1, fine y 4; column 3.
    exram[32 + 3] = 0x9C;
    exram[0x3C0] = 0b11_10_01_00;
    let (mut b, mut map) = board(0);
    write(&mut b, &mut map, 0x5200, 0x80 | 4);
    write(&mut b, &mut map, 0x5201, 12);
    write(&mut b, &mut map, 0x5202, 3);
    rendering(&mut b);
    to_line_0(&mut b, &exram);
    let fetches = line_rest(&mut b, &exram);
    let tile = &fetches[4 - 1..4 + 3];
    assert_eq!(tile[0], Fetch::Value(0x9C));
    // Row 1, column 3: the top-right quadrant of attribute byte 0 (bits 2-3).
    assert_eq!(tile[1], Fetch::Value(0x55));
    assert_eq!(tile[2], Fetch::Chr(3 * 0x1000 + 0x9C * 16 + 4));
    assert_eq!(tile[3], Fetch::Chr(3 * 0x1000 + 0x9C * 16 + 4 + 8));
    // Column 4 is right of the threshold: the PPU's own fetch.
    assert_eq!(fetches[8 - 1], Fetch::Map);
}

/// An image of mapper 5 with 128 KiB PRG (8 KiB bank n filled with n) and 8 KiB CHR; NES 2.0 with
/// `nes20_ram_shift` (byte 10) when given, else iNES 1.0.
fn image(nes20_ram_shift: Option<u8>) -> Vec<u8> {
    let mut rom = vec![b'N', b'E', b'S', 0x1A, 8, 1, 0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    if let Some(shift) = nes20_ram_shift {
        rom[7] = 0x08;
        rom[10] = shift;
    }
    for bank in 0..16u8 {
        rom.extend(std::iter::repeat_n(bank, 0x2000));
    }
    rom.extend(std::iter::repeat_n(0u8, 0x2000));
    rom
}

#[test]
fn prg_ram_size_is_64_kib_for_ines_1_and_as_declared_for_nes_2() {
    use crate::cart::Cartridge;
    assert_eq!(Cartridge::from_ines(&image(None)).expect("iNES 1.0").prg_ram().len(), INES1_PRG_RAM_LEN);
    // NES 2.0 shift 7: 64 << 7 = 8 KiB; shift 11: 128 KiB.
    assert_eq!(Cartridge::from_ines(&image(Some(7))).expect("8 KiB").prg_ram().len(), 0x2000);
    assert_eq!(Cartridge::from_ines(&image(Some(11))).expect("128 KiB").prg_ram().len(), 0x20000);
}

#[test]
fn the_cartridge_reads_and_writes_ram_mapped_in_8000() {
    use crate::cart::Cartridge;
    let mut cart = Cartridge::from_ines(&image(None)).expect("iNES 1.0");
    cart.cpu_write(0x5102, 2, 1);
    cart.cpu_write(0x5103, 1, 2);
    cart.cpu_write(0x5114, 0x03, 3); // RAM bank 3 at $8000
    cart.cpu_write(0x8005, 0x6E, 4);
    assert_eq!(cart.cpu_peek(0x8005, 0), 0x6E);
    assert_eq!(cart.prg_ram()[3 * PRG_SLOT + 5], 0x6E);
    cart.cpu_write(0x5114, 0x85, 5); // ROM bank 5 back
    assert_eq!(cart.cpu_peek(0x8005, 0), 5);
    cart.cpu_write(0x8005, 0x11, 6); // ROM: the write goes nowhere
    assert_eq!(cart.prg_ram()[3 * PRG_SLOT + 5], 0x6E);
    // ExRAM (mode 2) lives in the CHR RAM section and reads back at $5C00.
    cart.cpu_write(0x5104, 2, 7);
    cart.cpu_write(0x5C07, 0xB4, 8);
    assert_eq!(cart.chr_ram()[7], 0xB4);
    assert_eq!(cart.cpu_read(0x5C07, 0), 0xB4);
}
