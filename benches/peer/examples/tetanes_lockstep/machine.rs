//! tetanes-core as an anes-lockstep [`Machine`], through its public API only: a second, independent
//! NES emulator under the runner. Its state hash is blake3 over its own serialized state
//! (`ControlDeck::serialize_state_into`, bincode), not its `DefaultHasher`-based hashes.

use std::cell::OnceCell;

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, StateHash};
use anes_lockstep::{EvidenceInput, Machine, MachineError, Probe};
use tetanes_core::control_deck::{Config, ControlDeck, HeadlessMode};
use tetanes_core::input::{JoypadBtnState, Player};
use tetanes_core::memory::RamState;
use tetanes_core::video::Frame;

/// One frame of tetanes input: the buttons held on ports 1 and 2, one bit each in tetanes'
/// `JoypadBtnState` order (A, B, Select, Start, Up, Down, Left, Right: the same as anes's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TetanesInput {
    /// Ports 1 and 2.
    pub pads: [u8; 2],
}

impl From<FrameInput> for TetanesInput {
    fn from(input: FrameInput) -> TetanesInput {
        TetanesInput { pads: input.pads }
    }
}

impl EvidenceInput for TetanesInput {
    /// Two bytes a frame, port 1 then port 2.
    fn encode_inputs(inputs: &[TetanesInput], out: &mut Vec<u8>) {
        out.extend(inputs.iter().flat_map(|i| i.pads));
    }

    fn flip_button(&mut self, port: u8, bit: u8) -> bool {
        let (Some(pad), true) = (self.pads.get_mut(usize::from(port)), bit < 8) else { return false };
        *pad ^= 1 << bit;
        true
    }
}

/// Section indexes.
const CPU: usize = 0;
const WRAM: usize = 1;
const STATE: usize = 2;
const SECTIONS: [&str; 3] = ["cpu", "wram", "state"];
/// `cpu` section: pc (2), a, x, y, sp, p (1 each), cycle (8).
const CPU_LEN: usize = 15;

/// tetanes-core's console, driven instruction by instruction through `ControlDeck::clock_instr`.
#[derive(Clone)]
pub struct TetanesMachine {
    deck: ControlDeck,
    /// Buttons applied at the last frame start: tetanes drops held buttons when it loads a state, so
    /// they travel in the snapshot beside its state and are re-applied.
    held: TetanesInput,
    /// The serialized state and the `cpu` section, built when first asked for after a change.
    cache: OnceCell<(Vec<u8>, [u8; CPU_LEN])>,
    /// `ControlDeck::frame_number` at power-on (frames count from there).
    first_frame: u32,
}

impl std::fmt::Debug for TetanesMachine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TetanesMachine").field("frame", &self.frames()).finish_non_exhaustive()
    }
}

impl TetanesMachine {
    /// Powers a tetanes console on with `rom`. `ram`: `None` keeps tetanes' default power-on RAM
    /// (random), `Some(state)` fixes it.
    pub fn new(rom: &[u8], ram: Option<RamState>) -> Result<TetanesMachine, String> {
        let mut config = Config::default().with_headless_mode(HeadlessMode::NO_AUDIO);
        if let Some(ram) = ram {
            config = config.with_ram_state(ram);
        }
        let mut deck = ControlDeck::with_config(config);
        deck.load_rom("rom", &mut std::io::Cursor::new(rom)).map_err(|e| format!("tetanes-core: {e}"))?;
        let first_frame = deck.frame_number();
        Ok(TetanesMachine { deck, held: TetanesInput::default(), cache: OnceCell::new(), first_frame })
    }

    fn frames(&self) -> u64 {
        u64::from(self.deck.frame_number().wrapping_sub(self.first_frame))
    }

    fn changed(&mut self) {
        self.cache.take();
    }

    fn cached(&self) -> &(Vec<u8>, [u8; CPU_LEN]) {
        self.cache.get_or_init(|| {
            let len = self.deck.serialized_state_len().expect("a ROM is loaded");
            let mut state = vec![0; len];
            let written = self.deck.serialize_state_into(&mut state).expect("the state serializes");
            state.truncate(written);
            let cpu = &self.deck.bus().cpu;
            let mut section = [0u8; CPU_LEN];
            section[..2].copy_from_slice(&cpu.pc.to_le_bytes());
            section[2..7].copy_from_slice(&[cpu.acc, cpu.x, cpu.y, cpu.sp, cpu.status.bits()]);
            section[7..].copy_from_slice(&u64::from(cpu.cycle).to_le_bytes());
            (state, section)
        })
    }

    fn apply(&mut self, input: TetanesInput) {
        self.held = input;
        for (player, pad) in [(Player::One, input.pads[0]), (Player::Two, input.pads[1])] {
            self.deck.joypad_mut(player).buttons = JoypadBtnState::from_bits_truncate(u16::from(pad));
        }
    }
}

impl Machine for TetanesMachine {
    type Input = TetanesInput;

    fn begin_frame(&mut self, input: TetanesInput) {
        self.changed();
        self.apply(input);
    }

    fn step_instruction(&mut self) -> bool {
        self.changed();
        let frame = self.deck.frame_number();
        // A clock error is tetanes' verdict on the program (a jammed CPU), which stays in its state.
        let _ = self.deck.clock_instr();
        if self.deck.frame_number() == frame {
            return false;
        }
        // What `ControlDeck::clock_frame` does after the frame's last instruction.
        self.deck.bus_mut().clock_sync();
        true
    }

    fn record(&self) -> FrameRecord {
        let ppu = &self.deck.bus().ppu;
        FrameRecord {
            frame: self.frames(),
            cpu_cycle: u64::from(self.deck.bus().cpu.cycle),
            ppu_scanline: ppu.scanline,
            ppu_dot: ppu.cycle,
            state_hash: self.state_hash(),
        }
    }

    fn probe(&self) -> Probe {
        let bus = self.deck.bus();
        let cpu = &bus.cpu;
        Probe {
            cpu_cycle: u64::from(cpu.cycle),
            scanline: u32::from(bus.ppu.scanline),
            dot: u32::from(bus.ppu.cycle),
            pc: u64::from(cpu.pc),
            registers: u64::from_le_bytes([cpu.acc, cpu.x, cpu.y, cpu.sp, cpu.status.bits(), 0, 0, 0]),
        }
    }

    fn state_hash(&self) -> StateHash {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.held.pads).update(&self.cached().0);
        StateHash(*hasher.finalize().as_bytes())
    }

    fn section_count(&self) -> usize {
        SECTIONS.len()
    }

    fn section_name(&self, index: usize) -> &'static str {
        SECTIONS.get(index).copied().unwrap_or("none")
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        match index {
            CPU => &self.cached().1,
            WRAM => self.deck.wram(),
            STATE => &self.cached().0,
            _ => &[],
        }
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        use std::fmt::Write;
        let _ = match (index, offset) {
            (CPU, 0..=1) => write!(out, "cpu.pc"),
            (CPU, 2) => write!(out, "cpu.a"),
            (CPU, 3) => write!(out, "cpu.x"),
            (CPU, 4) => write!(out, "cpu.y"),
            (CPU, 5) => write!(out, "cpu.sp"),
            (CPU, 6) => write!(out, "cpu.p"),
            (CPU, _) => write!(out, "cpu.cycle"),
            (WRAM, _) => write!(out, "wram[${offset:04X}]"),
            (_, _) => write!(out, "state[{offset:#07x}]"),
        };
    }

    fn snapshot_len(&self) -> usize {
        2 + self.deck.serialized_state_len().unwrap_or(0)
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(&self.held.pads);
        out.extend_from_slice(&self.cached().0);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        let (Some(held), Some(state)) = (bytes.get(..2), bytes.get(2..)) else {
            return Err(MachineError::Snapshot("shorter than its header".into()));
        };
        self.deck.deserialize_state(state).map_err(|e| MachineError::Snapshot(e.to_string()))?;
        self.changed();
        self.apply(TetanesInput { pads: [held[0], held[1]] });
        Ok(())
    }

    fn disassemble(&self, out: &mut String) {
        use std::fmt::Write;
        let pc = self.deck.bus().cpu.pc;
        let bus = self.deck.bus();
        let _ = write!(
            out,
            "opcode ${:02X} ${:02X} ${:02X}",
            bus.peek(pc),
            bus.peek(pc.wrapping_add(1)),
            bus.peek(pc.wrapping_add(2))
        );
    }

    fn opcode(&self) -> u8 {
        self.deck.bus().peek(self.deck.bus().cpu.pc)
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        Some((256, 240))
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        let mut rgba = vec![0u8; Frame::SIZE];
        let rgba: &mut [u8; Frame::SIZE] = rgba.as_mut_slice().try_into().expect("Frame::SIZE bytes");
        self.deck.frame_buffer_into(rgba);
        out.clear();
        out.extend(rgba.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]));
        true
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        if index != WRAM {
            return Err(MachineError::Unsupported("flipping bits outside wram"));
        }
        let byte = self
            .deck
            .wram_mut()
            .get_mut(offset)
            .ok_or(MachineError::Fault(format!("no wram byte {offset}")))?;
        *byte ^= 1 << (bit & 7);
        self.changed();
        Ok(())
    }
}

/// The same console seen through its whole frames only (`ControlDeck::clock_frame`), as a frontend
/// that never calls `clock_instr` would drive it: exercises the runner's frame-only path.
#[derive(Debug, Clone)]
pub struct TetanesFrames(pub TetanesMachine);

impl Machine for TetanesFrames {
    type Input = TetanesInput;

    fn steps_instructions(&self) -> bool {
        false
    }

    fn run_frame(&mut self, input: TetanesInput) -> FrameRecord {
        self.0.changed();
        self.0.apply(input);
        let _ = self.0.deck.clock_frame();
        self.0.record()
    }

    fn record(&self) -> FrameRecord {
        self.0.record()
    }
    fn probe(&self) -> Probe {
        Probe { pc: 0, registers: 0, ..self.0.probe() }
    }
    fn state_hash(&self) -> StateHash {
        self.0.state_hash()
    }
    fn section_count(&self) -> usize {
        self.0.section_count()
    }
    fn section_name(&self, index: usize) -> &'static str {
        self.0.section_name(index)
    }
    fn section_bytes(&self, index: usize) -> &[u8] {
        self.0.section_bytes(index)
    }
    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        self.0.field_name(index, offset, out);
    }
    fn snapshot_len(&self) -> usize {
        self.0.snapshot_len()
    }
    fn save_state(&self, out: &mut Vec<u8>) {
        self.0.save_state(out);
    }
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        self.0.load_state(bytes)
    }
    fn picture_size(&self) -> Option<(u32, u32)> {
        self.0.picture_size()
    }
    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        self.0.picture_rgb(out)
    }
    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        self.0.flip_state_bit(index, offset, bit)
    }
}
