//! A libretro core behind the conformance protocols' [`Console`] interface, reading CPU addresses
//! through the memory the core exposes: system RAM for $0000-$1FFF (2 KiB, mirrored), save RAM
//! for $6000-$7FFF when the core exposes it for the cartridge. Nothing else can be named by a CPU
//! address, and no PPU address at all (a core's video RAM comes without the cartridge's
//! nametable mirroring). Reads outside those are answered with 0 and remembered, so a caller can
//! tell a result read from the core's memory from one that was not.

use anes_conformance::Console;

use super::LibretroHost;

/// The console's work RAM: 2 KiB mirrored through $0000-$1FFF.
const SYSTEM_RAM_END: u16 = 0x1FFF;
/// Cartridge RAM ($6000-$7FFF, 8 KiB), when the core exposes it as save RAM.
const SAVE_RAM_START: u16 = 0x6000;
const SAVE_RAM_END: u16 = 0x7FFF;

impl LibretroHost {
    /// What a CPU read of `addr` would return, if the core's exposed memory covers `addr`.
    pub fn cpu_peek(&self, addr: u16) -> Option<u8> {
        match addr {
            0..=SYSTEM_RAM_END => {
                let ram = self.system_ram()?;
                ram.get(usize::from(addr) % ram.len()).copied()
            }
            SAVE_RAM_START..=SAVE_RAM_END => {
                self.save_ram()?.get(usize::from(addr - SAVE_RAM_START)).copied()
            }
            _ => None,
        }
    }

    /// The first CPU address [`Console::peek`] was asked for that [`LibretroHost::cpu_peek`]
    /// cannot read (answered with 0).
    pub fn first_unreadable_cpu_read(&self) -> Option<u16> {
        self.unreadable_cpu.get()
    }

    /// The first PPU address [`Console::ppu_peek`] was asked for (answered with 0: unreadable).
    pub fn first_unreadable_ppu_read(&self) -> Option<u16> {
        self.unreadable_ppu.get()
    }
}

impl Console for LibretroHost {
    fn run_frame(&mut self) -> u64 {
        LibretroHost::run_frame(self);
        self.frames()
    }

    fn peek(&self, addr: u16) -> u8 {
        self.cpu_peek(addr).unwrap_or_else(|| {
            if self.unreadable_cpu.get().is_none() {
                self.unreadable_cpu.set(Some(addr));
            }
            0
        })
    }

    fn ppu_peek(&self, addr: u16) -> u8 {
        if self.unreadable_ppu.get().is_none() {
            self.unreadable_ppu.set(Some(addr));
        }
        0
    }

    fn soft_reset(&mut self) {
        self.reset();
    }

    /// Never known: libretro has no way to ask whether the CPU halted.
    fn jammed_at(&self) -> Option<u16> {
        None
    }
}
