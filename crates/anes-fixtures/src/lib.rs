//! Deterministic test subjects for the workspace's tests, benches and doc examples; not published
//! and not part of any crate's API: a synthetic NES ROM that needs no files ([`tiny_rom`]),
//! [`FakeMachine`] (a minimal [`Machine`] that shows what a frontend implements for another core),
//! [`BrokenRestore`] (one that breaks the contract on purpose), [`refused_flip`], and the pipeline's
//! simulator ([`sim`]).

// Test subjects, read beside the tests that use them: not an API, so no doc on every field.
#![allow(missing_docs, missing_debug_implementations)]

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, StateHash};
use anes_machine::{Machine, MachineError, Probe};

pub mod sim;

/// A 16 KiB NROM program that counts, stores, sums and reads controller 1 in an endless loop, so every
/// frame changes RAM and the input matters. Vectors all point at the reset code.
pub fn tiny_rom() -> Vec<u8> {
    #[rustfmt::skip]
    const PROGRAM: &[u8] = &[
        0xA2, 0xFF,             // $8000 LDX #$FF
        0x9A,                   //       TXS
        0xA9, 0x00,             //       LDA #$00
        0x85, 0x00,             //       STA $00
        0xE6, 0x00,             // $8007 loop: INC $00
        0xA5, 0x00,             //       LDA $00
        0x9D, 0x00, 0x02,       //       STA $0200,X
        0xE8,                   //       INX
        0x65, 0x01,             //       ADC $01
        0x85, 0x01,             //       STA $01
        0xA9, 0x01,             //       LDA #$01
        0x8D, 0x16, 0x40,       //       STA $4016
        0xA9, 0x00,             //       LDA #$00
        0x8D, 0x16, 0x40,       //       STA $4016
        0xAD, 0x16, 0x40,       //       LDA $4016
        0x29, 0x01,             //       AND #$01
        0x65, 0x02,             //       ADC $02
        0x85, 0x02,             //       STA $02
        0x4C, 0x07, 0x80,       //       JMP loop
    ];
    let mut rom = vec![0x4E, 0x45, 0x53, 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut prg = vec![0xEA; 0x4000];
    prg[..PROGRAM.len()].copy_from_slice(PROGRAM);
    for vector in [0x3FFA, 0x3FFC, 0x3FFE] {
        prg[vector] = 0x00;
        prg[vector + 1] = 0x80;
    }
    rom.extend_from_slice(&prg);
    rom.extend_from_slice(&[0u8; 0x2000]);
    rom
}

/// Instructions per frame of a [`FakeMachine`].
pub const FAKE_INSTRUCTIONS_PER_FRAME: u16 = 100;
const FAKE_RAM: usize = 64;
const FAKE_CPU: usize = 22;

/// A tiny deterministic machine: a pseudo-CPU that mixes its accumulator into 64 bytes of RAM, 3
/// cycles an instruction, 100 instructions a frame, with a 256x240 picture drawn from its RAM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeMachine {
    /// `cpu` section: cycle (8), frame (8), pc (2), a (1), step within frame (1), and a latch every
    /// instruction overwrites (like a data bus), so a fault there is masked by the next instruction,
    /// and the buttons held on port 1.
    pub cpu: [u8; FAKE_CPU],
    ram: [u8; FAKE_RAM],
}

impl FakeMachine {
    /// A machine whose RAM is seeded from `seed`.
    pub fn new(seed: u8) -> FakeMachine {
        let mut ram = [0u8; FAKE_RAM];
        for (i, byte) in ram.iter_mut().enumerate() {
            *byte = (i as u8).wrapping_mul(31).wrapping_add(seed);
        }
        FakeMachine { cpu: [0; FAKE_CPU], ram }
    }

    fn u64_at(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.cpu[at..at + 8].try_into().expect("8 bytes"))
    }

    fn set_u64(&mut self, at: usize, value: u64) {
        self.cpu[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    fn cycle(&self) -> u64 {
        self.u64_at(0)
    }

    fn pc(&self) -> u16 {
        u16::from_le_bytes([self.cpu[16], self.cpu[17]])
    }
}

impl Machine for FakeMachine {
    type Input = FrameInput;

    fn begin_frame(&mut self, input: FrameInput) {
        self.cpu[21] = input.pads[0];
    }

    fn step_instruction(&mut self) -> bool {
        let a = self.cpu[18].wrapping_mul(5).wrapping_add(1).wrapping_add(self.cpu[21]);
        self.cpu[18] = a;
        self.cpu[20] = a ^ 0x5A;
        let slot = usize::from(a) % FAKE_RAM;
        self.ram[slot] = self.ram[slot].wrapping_add(a);
        let pc = self.pc().wrapping_add(1);
        self.cpu[16..18].copy_from_slice(&pc.to_le_bytes());
        self.set_u64(0, self.cycle() + 3);
        self.cpu[19] += 1;
        if u16::from(self.cpu[19]) >= FAKE_INSTRUCTIONS_PER_FRAME {
            self.cpu[19] = 0;
            self.set_u64(8, self.u64_at(8) + 1);
            return true;
        }
        false
    }

    fn record(&self) -> FrameRecord {
        let probe = self.probe();
        FrameRecord {
            frame: self.u64_at(8),
            cpu_cycle: probe.cpu_cycle,
            ppu_scanline: u16::try_from(probe.scanline).expect("fewer than 262 lines"),
            ppu_dot: 0,
            state_hash: self.state_hash(),
        }
    }

    fn probe(&self) -> Probe {
        Probe {
            cpu_cycle: self.cycle(),
            scanline: u32::from(u16::from(self.cpu[19]) * 262 / FAKE_INSTRUCTIONS_PER_FRAME),
            dot: 0,
            pc: u64::from(self.pc()),
            registers: u64::from(self.cpu[18]),
        }
    }

    fn state_hash(&self) -> StateHash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.cpu).update(&self.ram);
        StateHash(*hasher.finalize().as_bytes())
    }

    fn section_count(&self) -> usize {
        2
    }

    fn section_name(&self, index: usize) -> &'static str {
        ["cpu", "ram"].get(index).copied().unwrap_or("none")
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        match index {
            0 => &self.cpu,
            1 => &self.ram,
            _ => &[],
        }
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        use core::fmt::Write;
        let _ = match (index, offset) {
            (0, 0..=7) => write!(out, "cpu.cycle"),
            (0, 8..=15) => write!(out, "cpu.frame"),
            (0, 16..=17) => write!(out, "cpu.pc"),
            (0, 18) => write!(out, "cpu.a"),
            (0, 19) => write!(out, "cpu.step"),
            (0, 20) => write!(out, "cpu.latch"),
            (0, _) => write!(out, "input[0].buttons"),
            (_, _) => write!(out, "ram[${offset:02X}]"),
        };
    }

    fn snapshot_len(&self) -> usize {
        FAKE_CPU + FAKE_RAM
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.cpu);
        out.extend_from_slice(&self.ram);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        if bytes.len() != self.snapshot_len() {
            return Err(MachineError::Snapshot(format!(
                "{} bytes, expected {}",
                bytes.len(),
                self.snapshot_len()
            )));
        }
        self.cpu.copy_from_slice(&bytes[..FAKE_CPU]);
        self.ram.copy_from_slice(&bytes[FAKE_CPU..]);
        Ok(())
    }

    fn disassemble(&self, out: &mut String) {
        out.push_str("MIX A");
    }

    fn opcode(&self) -> u8 {
        0x42
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        Some((256, 240))
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        for y in 0..240usize {
            for x in 0..256usize {
                let byte = self.ram[(y / 30) * 8 + x / 32];
                out.extend_from_slice(&[byte, byte.rotate_left(3), byte.rotate_left(5)]);
            }
        }
        true
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        let byte = match index {
            0 => self.cpu.get_mut(offset),
            1 => self.ram.get_mut(offset),
            _ => None,
        }
        .ok_or(MachineError::Fault(format!("no byte {offset} in section {index}")))?;
        *byte ^= 1 << (bit & 7);
        Ok(())
    }

    fn stall_cycles(&mut self, cycles: u32) -> Result<(), MachineError> {
        self.set_u64(0, self.cycle() + u64::from(cycles));
        Ok(())
    }
}

/// The first state bit (section, offset, bit) whose flip `machine` refuses as an impossible state at
/// CPU cycle `cpu_cycle` of its first frame, found by trying each bit on a copy: for tests of how a
/// refused fault is reported. What is impossible depends on the clocks, hence the cycle.
pub fn refused_flip<M: Machine + Clone>(machine: &M, cpu_cycle: u64) -> Option<(usize, usize, u8)> {
    let mut there = machine.clone();
    there.begin_frame(M::Input::default());
    while there.probe().cpu_cycle < cpu_cycle {
        there.step_instruction();
    }
    (0..there.section_count())
        .flat_map(|s| (0..there.section_bytes(s).len()).flat_map(move |o| (0..8u8).map(move |b| (s, o, b))))
        .find(|&(s, o, b)| there.clone().flip_state_bit(s, o, b).is_err())
}

/// A [`FakeMachine`] whose snapshot restore is broken in a chosen way, to show that
/// `anes_lockstep::check_contract` (and the tests built on it) catch a machine that breaks the contract: a test
/// that passes on such a machine proves nothing.
#[derive(Debug, Clone)]
pub struct BrokenRestore {
    /// The machine underneath.
    pub inner: FakeMachine,
    /// Applied after every restore, given the machine as it was just before the restore.
    pub after_restore: fn(before: &FakeMachine, restored: &mut FakeMachine),
}

impl Machine for BrokenRestore {
    type Input = FrameInput;

    fn begin_frame(&mut self, input: FrameInput) {
        self.inner.begin_frame(input);
    }
    fn step_instruction(&mut self) -> bool {
        self.inner.step_instruction()
    }
    fn record(&self) -> FrameRecord {
        self.inner.record()
    }
    fn probe(&self) -> Probe {
        self.inner.probe()
    }
    fn state_hash(&self) -> StateHash {
        self.inner.state_hash()
    }
    fn section_count(&self) -> usize {
        self.inner.section_count()
    }
    fn section_name(&self, index: usize) -> &'static str {
        self.inner.section_name(index)
    }
    fn section_bytes(&self, index: usize) -> &[u8] {
        self.inner.section_bytes(index)
    }
    fn snapshot_len(&self) -> usize {
        self.inner.snapshot_len()
    }
    fn save_state(&self, out: &mut Vec<u8>) {
        self.inner.save_state(out);
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        let before = self.inner.clone();
        self.inner.load_state(bytes)?;
        (self.after_restore)(&before, &mut self.inner);
        Ok(())
    }
    fn disassemble(&self, out: &mut String) {
        self.inner.disassemble(out);
    }
    fn opcode(&self) -> u8 {
        self.inner.opcode()
    }
}
