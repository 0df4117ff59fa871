//! The [`Machine`] trait: what the lockstep runner needs from a deterministic emulator core, and its
//! implementation for the anes core ([`NesMachine`]).
//!
//! The trait is deliberately small so a frontend can implement it for any other deterministic core
//! (and then run that core in lockstep against itself, instance against instance): its own input
//! type, whole frames and optionally frame-aware instruction stepping, a cheap [`Probe`], the state
//! hash, the state as named byte sections, snapshots through caller-owned buffers, and optionally the
//! last picture and fault hooks.

use anes_core::harness::Harness;
use anes_core::movie::FrameInput;
use anes_core::ppu::{PICTURE_HEIGHT, PICTURE_WIDTH};
use anes_core::state::{FrameRecord, Section, StateHash};
use anes_core::{Cartridge, Nes, NesConfig, Region};
use thiserror::Error;

use crate::input::EvidenceInput;

/// Why a machine refused an operation. The machine is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MachineError {
    /// A snapshot was refused by the core.
    #[error("snapshot refused: {0}")]
    Snapshot(String),
    /// A fault could not be injected (bad offset, bit, or an impossible resulting state).
    #[error("fault refused: {0}")]
    Fault(String),
    /// The section index does not exist on this machine.
    #[error("section {index} does not exist (this machine has {count} sections)")]
    NoSuchSection {
        /// Index asked for.
        index: usize,
        /// Sections the machine has.
        count: usize,
    },
    /// The machine does not implement an optional operation.
    #[error("this machine does not support {0}")]
    Unsupported(&'static str),
}

/// The cheap part of a machine's position, compared after every instruction while localizing.
///
/// The fields are wide enough for any core: a machine without a raster (or without a program
/// counter) leaves those fields 0, and the runner only compares them for equality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Probe {
    /// CPU cycles since power-on (the core's main clock; monotonic).
    pub cpu_cycle: u64,
    /// Raster line: the PPU scanline, or the core's equivalent (0 without a raster).
    pub scanline: u32,
    /// Raster position within the line: the PPU dot (0 without a raster).
    pub dot: u32,
    /// Program counter of the next instruction (0 for a machine that does not step instructions).
    pub pc: u64,
    /// The other CPU registers packed into one word (for the anes core: A, X, Y, SP, P).
    pub registers: u64,
}

/// A deterministic machine the lockstep runner can drive, compare, rewind and inspect.
///
/// Contract: two machines of the same core built the same way and fed the same inputs go through the
/// same sequence of states; [`Machine::run_frame`] is exactly [`Machine::begin_frame`] followed by
/// [`Machine::step_instruction`] until it returns `true`; nothing here allocates after the first call
/// except the cold-path text methods writing into caller-owned `String`s (a core outside anes may
/// allocate; only the anes core is held to allocation-free runs).
///
/// Instruction stepping is optional. A core that can only run whole frames implements
/// [`Machine::run_frame`] (and not `begin_frame`/`step_instruction`) and returns `false` from
/// [`Machine::steps_instructions`]: the runner then compares it at frame granularity only and
/// localizes a divergence to the first frame whose end state differs
/// (`anes_lockstep::FrameLocalization`) instead of the instruction.
///
/// ```
/// use anes_machine::{Machine, NesMachine};
/// use anes_core::movie::FrameInput;
/// # let rom = anes_fixtures::tiny_rom();
/// let mut a = NesMachine::from_ines(&rom, anes_core::NesConfig::default()).unwrap();
/// let record = a.run_frame(FrameInput::default());
/// assert_eq!(record.frame, 1);
/// assert_eq!(record.state_hash, a.state_hash());
/// ```
pub trait Machine {
    /// One frame's input: both pads and a console command for the NES ([`FrameInput`]); whatever the
    /// core takes per frame for another machine.
    type Input: EvidenceInput;

    /// True when the machine implements [`Machine::begin_frame`] and [`Machine::step_instruction`]
    /// (the default). A machine that can only run whole frames returns `false`: it is compared at
    /// frame ends only, and a divergence is localized to the frame.
    fn steps_instructions(&self) -> bool {
        true
    }

    /// Applies one frame's input (console command, then buttons) before the frame's first instruction.
    /// Only called when [`Machine::steps_instructions`] is true; the default panics.
    fn begin_frame(&mut self, input: Self::Input) {
        let _ = input;
        panic!(
            "this machine does not step instructions: implement begin_frame and step_instruction, or return false from steps_instructions"
        );
    }

    /// Runs one instruction (or interrupt sequence) of the current frame. Returns `true` when it
    /// completed the frame: the machine's frame counter has advanced and [`Machine::record`] is the
    /// frame's record. Only called when [`Machine::steps_instructions`] is true; the default panics.
    fn step_instruction(&mut self) -> bool {
        panic!(
            "this machine does not step instructions: implement begin_frame and step_instruction, or return false from steps_instructions"
        );
    }

    /// Runs one whole frame with `input` and returns its record. Cores override this with their fast
    /// path; it must leave the machine in the state the default implementation would. A machine that
    /// does not step instructions must implement it.
    fn run_frame(&mut self, input: Self::Input) -> FrameRecord {
        self.begin_frame(input);
        while !self.step_instruction() {}
        self.record()
    }

    /// Runs instructions of the current frame until the raster line ([`Probe::scanline`]) differs
    /// from the one it was on, or the frame completes (returns `true`, as
    /// [`Machine::step_instruction`]). Must stop after exactly the instruction the default stops
    /// after; cores override it with a path that skips the per-instruction bookkeeping.
    fn step_to_next_line(&mut self) -> bool {
        let line = self.probe().scanline;
        loop {
            if self.step_instruction() {
                return true;
            }
            if self.probe().scanline != line {
                return false;
            }
        }
    }

    /// `Some` when the machine can step a frame's instructions lagging ([`Machine::step_instruction_lagging`],
    /// [`Machine::lagging_sync_record`] and [`Machine::settle`] are its own), with what decides how
    /// it lags (for the anes core: its catch-up schedules and whether it produces audio): two
    /// machines lag alike from equal settled states only when these are equal. The runner compares
    /// at instruction granularity with lagging records when both machines give the same `Some` and
    /// no fault is planned (the frame path's schedule at every instruction: the anes core leaves its
    /// PPU and APU behind the CPU). The default is `None`.
    fn lag_signature(&self) -> Option<u64> {
        None
    }

    /// [`Machine::step_instruction`], but the machine may leave parts of itself behind the CPU, as
    /// its frame path does between instructions: until [`Machine::settle`], only
    /// [`Machine::lagging_sync_record`] and [`Probe::cpu_cycle`] of [`Machine::probe`] are
    /// meaningful. A step that completes the frame leaves the machine settled. The default is
    /// [`Machine::step_instruction`].
    fn step_instruction_lagging(&mut self) -> bool {
        self.step_instruction()
    }

    /// [`Machine::step_to_next_line`], lagging as [`Machine::step_instruction_lagging`] is. The
    /// default is [`Machine::step_to_next_line`].
    fn step_to_next_line_lagging(&mut self) -> bool {
        self.step_to_next_line()
    }

    /// [`Machine::sync_record`] of a lagging machine: its digest covers where the lagging parts
    /// stand. Contract: two machines settled in equal states, then stepped alike, have equal lagging
    /// records exactly while their settled records and digests would be equal. The default is
    /// [`Machine::sync_record`].
    fn lagging_sync_record(&self) -> (FrameRecord, u64) {
        self.sync_record()
    }

    /// Brings what lagging steps left behind up to the CPU (the machine
    /// [`Machine::step_instruction`] would show) and starts afresh whatever decides where they
    /// lag, so that machines in equal states lag alike from here. The default does nothing.
    fn settle(&mut self) {}

    /// The record of the machine as it is now: frame counter, CPU cycle, raster position (0 without a
    /// raster; the PPU position for the NES) and state hash.
    fn record(&self) -> FrameRecord;

    /// Cycle, raster position and CPU registers: cheap enough to compare after every instruction.
    fn probe(&self) -> Probe;

    /// What the runner compares at a sync point inside a frame (scanline and instruction
    /// granularity): the record, whose `state_hash` a core may leave zeroed, and a 64-bit digest of
    /// the whole state that changes whenever the state hash would (for any single changed byte,
    /// always). The runner fetches the full [`Machine::record`] only when two digests differ. The
    /// default takes the first 8 bytes of the state hash; a core with an incremental digest
    /// overrides it (the anes core's costs well under a microsecond, `Nes::state_digest`).
    fn sync_record(&self) -> (FrameRecord, u64) {
        let record = self.record();
        let digest = u64::from_le_bytes(record.state_hash.0[..8].try_into().expect("8 bytes"));
        (record, digest)
    }

    /// The hash of the machine's whole state.
    fn state_hash(&self) -> StateHash;

    /// For a machine whose [`Machine::state_hash`] covers only part of its state (a view that
    /// compares two machines powered on differently by what their programs do, such as
    /// `anes_lockstep::ProgramView`): the hash of everything its future depends on. The shrinker
    /// recognizes a trial whose run rejoined the reference's by these hashes of both machines.
    /// `None` (the default): the state hash is whole, and the two machines' are equal wherever they
    /// agree.
    fn whole_state_hash(&self) -> Option<StateHash> {
        None
    }

    /// Number of named state sections.
    fn section_count(&self) -> usize;

    /// The name of section `index` (`ram`, `cpu`, `ppu`), used in reports and fault specs.
    fn section_name(&self, index: usize) -> &'static str;

    /// The bytes of section `index` (empty for an index past the end).
    fn section_bytes(&self, index: usize) -> &[u8];

    /// Writes the name of the field holding byte `offset` of section `index` (`ram[$0342]`, `cpu.p`).
    /// Multi-byte fields name the whole field, so consecutive bytes with one name form one field.
    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        use core::fmt::Write;
        let _ = write!(out, "{}[{offset:#06x}]", self.section_name(index));
    }

    /// blake3 digest of one section's bytes, so a mismatch names its sections at once.
    fn section_digest(&self, index: usize) -> StateHash {
        StateHash(*blake3::hash(self.section_bytes(index)).as_bytes())
    }

    /// Size of this machine's snapshots in bytes.
    fn snapshot_len(&self) -> usize;

    /// Writes a snapshot into `out`, replacing its contents; allocates nothing when `out` already has
    /// [`Machine::snapshot_len`] bytes of capacity.
    fn save_state(&self, out: &mut Vec<u8>);

    /// Restores a snapshot taken by [`Machine::save_state`] of the same kind of machine.
    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError>;

    /// Writes the disassembly of the instruction at the program counter (`LDA $0342 = 17`). The
    /// default writes nothing.
    fn disassemble(&self, out: &mut String) {
        let _ = out;
    }

    /// The opcode byte at the program counter (the default: 0).
    fn opcode(&self) -> u8 {
        0
    }

    /// Size of the pictures [`Machine::picture_rgb`] writes, if the machine has a picture.
    fn picture_size(&self) -> Option<(u32, u32)> {
        None
    }

    /// Writes the last completed picture as 8-bit RGB triples, row by row, into `out` (replacing its
    /// contents). Returns `false` when the machine has no picture.
    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        false
    }

    /// Fault injection: flips bit `bit` of byte `offset` of section `index`.
    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        let _ = (index, offset, bit);
        Err(MachineError::Unsupported("flipping state bits"))
    }

    /// Fault injection: stalls the CPU for `cycles` cycles, so the machine falls behind its twin.
    fn stall_cycles(&mut self, cycles: u32) -> Result<(), MachineError> {
        let _ = cycles;
        Err(MachineError::Unsupported("stalling"))
    }
}

/// The anes core as a [`Machine`]. Section indexes follow [`Section::ALL`].
#[derive(Debug, Clone)]
pub struct NesMachine {
    nes: Nes,
}

impl NesMachine {
    /// Wraps a console.
    pub fn new(nes: Nes) -> NesMachine {
        NesMachine { nes }
    }

    /// Parses an iNES file and powers a console on with `config`.
    pub fn from_ines(rom: &[u8], config: NesConfig) -> Result<NesMachine, anes_core::RomError> {
        NesMachine::from_ines_with_region(rom, config, None)
    }

    /// [`NesMachine::from_ines`] with the console's region chosen: `Some` overrides the ROM header,
    /// `None` takes the header's (NTSC for iNES 1.0 and multi-region ROMs). Both machines of a run
    /// must be of one region: a console of another region differs in its state from power-on.
    pub fn from_ines_with_region(
        rom: &[u8],
        config: NesConfig,
        region: Option<Region>,
    ) -> Result<NesMachine, anes_core::RomError> {
        Ok(NesMachine::new(Nes::with_region(Cartridge::from_ines(rom)?, config, region)))
    }

    /// The wrapped console, for reads that go past the `Machine` trait.
    pub fn nes(&self) -> &Nes {
        &self.nes
    }

    /// The console, mutably (test harnesses set up automation modes with it).
    pub fn nes_mut(&mut self) -> &mut Nes {
        &mut self.nes
    }

    /// The record without its state hash (zeroed): where a sync point inside a frame is.
    #[inline]
    fn position_record(&self) -> FrameRecord {
        let (ppu_scanline, ppu_dot) = self.nes.ppu_position();
        FrameRecord {
            frame: self.nes.frame(),
            cpu_cycle: self.nes.cpu_cycle(),
            ppu_scanline,
            ppu_dot,
            state_hash: StateHash::default(),
        }
    }

    /// Unwraps the console.
    pub fn into_inner(self) -> Nes {
        self.nes
    }
}

fn section_at(index: usize) -> Option<Section> {
    Section::ALL.get(index).copied()
}

impl Machine for NesMachine {
    type Input = FrameInput;

    fn begin_frame(&mut self, input: FrameInput) {
        self.nes.begin_frame(input);
    }

    fn step_instruction(&mut self) -> bool {
        self.nes.step_in_frame()
    }

    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.nes.run_frame(input)
    }

    fn lag_signature(&self) -> Option<u64> {
        Some(self.nes.lag_signature())
    }

    #[inline(always)]
    fn step_instruction_lagging(&mut self) -> bool {
        self.nes.step_in_frame_lagging()
    }

    fn step_to_next_line_lagging(&mut self) -> bool {
        self.nes.step_to_next_line_lagging()
    }

    #[inline(always)]
    fn lagging_sync_record(&self) -> (FrameRecord, u64) {
        (self.position_record(), self.nes.lagging_digest())
    }

    fn settle(&mut self) {
        self.nes.settle();
    }

    fn step_to_next_line(&mut self) -> bool {
        self.nes.step_to_next_line()
    }

    fn record(&self) -> FrameRecord {
        self.nes.frame_record()
    }

    #[inline]
    fn probe(&self) -> Probe {
        let cpu = self.nes.cpu();
        let (scanline, dot) = self.nes.ppu_position();
        Probe {
            cpu_cycle: self.nes.cpu_cycle(),
            scanline: u32::from(scanline),
            dot: u32::from(dot),
            pc: u64::from(cpu.pc),
            registers: u64::from_le_bytes([cpu.a, cpu.x, cpu.y, cpu.sp, cpu.p, cpu.jammed, 0, 0]),
        }
    }

    #[inline]
    fn sync_record(&self) -> (FrameRecord, u64) {
        (self.position_record(), self.nes.state_digest())
    }

    fn state_hash(&self) -> StateHash {
        self.nes.state_hash()
    }

    fn section_count(&self) -> usize {
        Section::ALL.len()
    }

    fn section_name(&self, index: usize) -> &'static str {
        section_at(index).map_or("none", Section::name)
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        section_at(index).map_or(&[], |s| self.nes.section_bytes(s))
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        if let Some(section) = section_at(index) {
            anes_core::state::field_name(section, offset, out);
        }
    }

    fn snapshot_len(&self) -> usize {
        self.nes.snapshot_len()
    }

    fn save_state(&self, out: &mut Vec<u8>) {
        self.nes.save_state(out);
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        self.nes.load_state(bytes).map_err(|e| MachineError::Snapshot(e.to_string()))
    }

    fn disassemble(&self, out: &mut String) {
        // The nestest trace line holds the disassembly in a fixed 32-column field after the
        // address, the opcode bytes and the unofficial-opcode marker.
        const TEXT: core::ops::Range<usize> = 16..48;
        let mut line = String::with_capacity(96);
        anes_core::cpu::trace_line(&self.nes, &mut line);
        out.push_str(line.get(TEXT).unwrap_or(&line).trim_end());
    }

    fn opcode(&self) -> u8 {
        self.nes.peek(self.nes.cpu().pc)
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        Some((PICTURE_WIDTH as u32, PICTURE_HEIGHT as u32))
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        out.resize(PICTURE_WIDTH * PICTURE_HEIGHT * 3, 0);
        anes_core::ppu::rgb::frame_to_rgb(self.nes.ppu().frame_buffer(), out);
        true
    }

    fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), MachineError> {
        let section =
            section_at(index).ok_or(MachineError::NoSuchSection { index, count: Section::ALL.len() })?;
        self.nes.flip_state_bit(section, offset, bit).map_err(|e| MachineError::Fault(e.to_string()))
    }

    fn stall_cycles(&mut self, cycles: u32) -> Result<(), MachineError> {
        self.nes.stall_cycles(cycles);
        Ok(())
    }
}
