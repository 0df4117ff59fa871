//! The PPU's state is exactly `Ppu::state_bytes`: a PPU restored from those bytes continues identically.

use anes_core::ppu::{Ppu, PpuBus, PpuBusPeek};

/// A flat 16 KiB PPU address space with a recognisable pattern.
struct FlatBus(Vec<u8>);

impl PpuBusPeek for FlatBus {
    fn peek(&self, addr: u16) -> u8 {
        self.0[usize::from(addr & 0x3FFF)]
    }
}

impl PpuBus for FlatBus {
    fn read(&mut self, addr: u16) -> u8 {
        self.peek(addr)
    }
    fn write(&mut self, addr: u16, value: u8) {
        self.0[usize::from(addr & 0x3FFF)] = value;
    }
    fn set_address(&mut self, _addr: u16) {}
}

fn patterned_bus() -> FlatBus {
    // A deterministic pseudo-random fill (xorshift) so tiles, attributes and sprites vary.
    let mut x: u32 = 0x1234_5678;
    FlatBus(
        (0..0x4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect(),
    )
}

fn tick(ppu: &mut Ppu, bus: &mut FlatBus, dots: u32) {
    for _ in 0..dots {
        ppu.tick_dot(bus);
    }
}

fn snapshot(ppu: &Ppu) -> Vec<Vec<u8>> {
    ppu.state_bytes().iter().map(|s| s.to_vec()).collect()
}

#[test]
fn restored_ppu_continues_identically() {
    let mut bus = patterned_bus();
    let mut ppu = Ppu::new();
    // Past the power-on write lockout, then rendering on with sprites from the pattern.
    tick(&mut ppu, &mut bus, 262 * 341);
    ppu.write_register(0x2006, 0x3F, &mut bus);
    ppu.write_register(0x2006, 0x00, &mut bus);
    for i in 0..32u8 {
        ppu.write_register(0x2007, i, &mut bus);
    }
    ppu.write_register(0x2000, 0x88, &mut bus);
    ppu.write_register(0x2001, 0x1E, &mut bus);
    ppu.write_register(0x2003, 0x00, &mut bus);
    for i in 0..=255u8 {
        ppu.write_register(0x2004, i.wrapping_mul(37), &mut bus);
    }
    tick(&mut ppu, &mut bus, 100_000);

    let saved = snapshot(&ppu);
    let mut bus_copy = FlatBus(bus.0.clone());
    let mut restored = Ppu::new();
    for (dst, src) in restored.state_bytes_mut().into_iter().zip(&saved) {
        dst.copy_from_slice(src);
    }
    assert_eq!(snapshot(&restored), saved);

    // Two full frames: every visible pixel is rewritten, so the outputs agree too.
    tick(&mut ppu, &mut bus, 2 * 262 * 341);
    tick(&mut restored, &mut bus_copy, 2 * 262 * 341);
    assert_eq!(snapshot(&restored), snapshot(&ppu));
    assert_eq!(restored.frame_buffer(), ppu.frame_buffer());
    assert_eq!(restored.nmi_line(), ppu.nmi_line());
    assert!(ppu.frame_buffer().iter().any(|&p| p != ppu.frame_buffer()[0]), "something was drawn");
}
