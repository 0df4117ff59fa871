//! The console: owns every chip and the memory between them.

use crate::apu::Apu;
use crate::bus::{BusState, PpuMemoryView};
use crate::cart::Cartridge;
use crate::cpu::CpuState;
use crate::input::ControllerState;
use crate::ppu::{Ppu, PpuBusPeek};

/// How to power the console on. Everything that could differ between two power-ons of real hardware
/// is chosen here, explicitly, so that two consoles with the same config run identically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NesConfig {
    /// CPU/PPU clock phase at power-on (0-3 master clocks of PPU lag). Real consoles power on in one
    /// of four phases; 0 reproduces nestest.log's `PPU:  0, 21` at `CYC:7`.
    pub cpu_ppu_alignment: u8,
}

impl Default for NesConfig {
    fn default() -> Self {
        NesConfig { cpu_ppu_alignment: 0 }
    }
}

/// An NTSC NES with a cartridge inserted.
#[derive(Debug, Clone)]
pub struct Nes {
    pub(crate) cpu: CpuState,
    pub(crate) bus: BusState,
    pub(crate) ram: [u8; 0x800],
    pub(crate) ciram: [u8; 0x800],
    pub(crate) pads: [ControllerState; 2],
    pub(crate) ppu: Ppu,
    pub(crate) apu: Apu,
    pub(crate) cart: Cartridge,
}

impl Nes {
    /// Powers a console on with `cart` inserted and runs the CPU's 7-cycle reset sequence, so the first
    /// instruction is at the reset vector.
    pub fn new(cart: Cartridge, config: NesConfig) -> Nes {
        let mut nes = Nes {
            cpu: CpuState { p: crate::cpu::flags::U | crate::cpu::flags::I, ..CpuState::default() },
            bus: BusState { ppu_offset: config.cpu_ppu_alignment & 3, ..BusState::default() },
            ram: [0; 0x800],
            ciram: [0; 0x800],
            pads: [ControllerState::default(); 2],
            ppu: Ppu::new(),
            apu: Apu::new(),
            cart,
        };
        nes.reset_sequence();
        nes
    }

    /// Presses the reset button: the PPU, APU and board see reset, and the CPU runs its reset sequence
    /// (A, X, Y kept; SP decremented by 3 without writes; I set).
    pub fn soft_reset(&mut self) {
        self.ppu.reset();
        self.apu.reset();
        self.cart.reset();
        self.reset_sequence();
    }

    /// Runs instructions until the PPU completes a picture: the first instruction boundary at or after
    /// the PPU reaches scanline 241, dot 0.
    pub fn run_until_frame_end(&mut self) {
        let target = self.ppu.frames_completed() + 1;
        while self.ppu.frames_completed() < target {
            self.step_instruction();
        }
    }

    /// CPU registers and interrupt latches.
    pub fn cpu(&self) -> &CpuState {
        &self.cpu
    }

    /// Sets the program counter (test harnesses: nestest's automation mode starts at $C000).
    pub fn set_pc(&mut self, pc: u16) {
        self.cpu.pc = pc;
    }

    /// True once the CPU executed a JAM opcode; only reset recovers it.
    pub fn is_jammed(&self) -> bool {
        self.cpu.jammed != 0
    }

    /// CPU cycles since power-on.
    pub fn cpu_cycle(&self) -> u64 {
        self.bus.cpu_cycle
    }

    /// Master clocks since power-on.
    pub fn master_clock(&self) -> u64 {
        self.bus.master_clock
    }

    /// The PPU's position: (scanline, dot) about to be processed.
    pub fn ppu_position(&self) -> (u16, u16) {
        (self.ppu.scanline(), self.ppu.dot())
    }

    /// Pictures the PPU has completed since power-on.
    pub fn frames_completed(&self) -> u64 {
        self.ppu.frames_completed()
    }

    /// The PPU.
    pub fn ppu(&self) -> &Ppu {
        &self.ppu
    }

    /// The APU.
    pub fn apu(&self) -> &Apu {
        &self.apu
    }

    /// The cartridge.
    pub fn cartridge(&self) -> &Cartridge {
        &self.cart
    }

    /// What a PPU read of `addr` ($0000-$3EFF) would return, without side effects. Test harnesses use
    /// it to look for result text in the nametables.
    pub fn ppu_peek(&self, addr: u16) -> u8 {
        PpuMemoryView { cart: &self.cart, ciram: &self.ciram }.peek(addr)
    }

    /// Sets the buttons held on controller `port` (0 or 1); see [`crate::input::buttons`].
    pub fn set_buttons(&mut self, port: usize, buttons: u8) {
        self.pads[port & 1].buttons = buttons;
    }
}
