//! The console: owns every chip and the memory between them.

use crate::apu::{Apu, ApuCatchUp};
use crate::bus::ppu_memory::PpuMemoryView;
use crate::bus::sync::{BusState, PpuCatchUp, PpuSync};
use crate::cart::Cartridge;
use crate::cpu::CpuState;
use crate::input::ControllerState;
use crate::movie::{ConsoleCommand, FrameInput};
use crate::power_on::{
    NesConfig, PaletteInit, PpuWarmUp, RamInit, VblankAtPowerOn, power_on_oam, power_on_ram,
};
use crate::ppu::{DOTS_PER_SCANLINE, Ppu, PpuBusPeek};
use crate::region::{Region, RegionModel, with_region_model};
use crate::spin::watch::SpinWatch;
use crate::state::machine::{ALIGNMENT_FROM_SEED, MachineState};
use crate::state::memory_digest::MemoryDigest;
use crate::state::record::FrameRecord;

/// The generator's stream for the unit tests' random programs (see `power_on.rs`).
#[cfg(test)]
pub(crate) use crate::power_on::splitmix64_next;

impl NesConfig {
    /// The config as stored in the machine state of a `region` console, with the frame counter at
    /// `frame`.
    fn to_state(self, frame: u64, region: Region) -> MachineState {
        MachineState {
            frame,
            seed: self.seed,
            ram_init: self.ram_init as u8,
            cpu_ppu_alignment: self.cpu_ppu_alignment.map_or(ALIGNMENT_FROM_SEED, |phase| phase & 3),
            region: region as u8,
            palette_init: self.palette_init as u8,
            oam_init: self.oam_init as u8,
            ppu_vblank: self.ppu_vblank as u8,
            ppu_warm_up: self.ppu_warm_up as u8,
            reserved: [0; 1],
        }
    }

    /// The config stored in `state`, or why it is not a valid one.
    pub(crate) fn from_state(state: &MachineState) -> Result<NesConfig, String> {
        let ram_init = RamInit::from_u8(state.ram_init)
            .ok_or_else(|| format!("machine.ram_init {} is not a RAM init kind (0-2)", state.ram_init))?;
        let cpu_ppu_alignment = match state.cpu_ppu_alignment {
            ALIGNMENT_FROM_SEED => None,
            phase @ 0..=3 => Some(phase),
            other => {
                return Err(format!(
                    "machine.cpu_ppu_alignment {other} is neither a phase (0-3) nor {ALIGNMENT_FROM_SEED} (from the seed)"
                ));
            }
        };
        let palette_init = PaletteInit::from_u8(state.palette_init).ok_or_else(|| {
            format!("machine.palette_init {} is not a palette init kind (0-1)", state.palette_init)
        })?;
        let oam_init = RamInit::from_u8(state.oam_init)
            .ok_or_else(|| format!("machine.oam_init {} is not a RAM init kind (0-2)", state.oam_init))?;
        let ppu_vblank = VblankAtPowerOn::from_u8(state.ppu_vblank).ok_or_else(|| {
            format!("machine.ppu_vblank {} is neither set (0) nor clear (1)", state.ppu_vblank)
        })?;
        let ppu_warm_up = PpuWarmUp::from_u8(state.ppu_warm_up).ok_or_else(|| {
            format!("machine.ppu_warm_up {} is neither ignores writes (0) nor off (1)", state.ppu_warm_up)
        })?;
        Ok(NesConfig {
            seed: state.seed,
            ram_init,
            cpu_ppu_alignment,
            palette_init,
            oam_init,
            ppu_vblank,
            ppu_warm_up,
        })
    }
}

/// An NES (NTSC, PAL or Dendy: [`Nes::region`]) with a cartridge inserted.
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
    pub(crate) machine: MachineState,
    /// blake3 of PRG + CHR ROM, the header's wiring (and the Game Genie codes, when any): covered by
    /// the hash and the snapshot header.
    pub(crate) rom_identity: [u8; 32],
    /// The lazy PPU schedule's bookkeeping. Not state (derived from it, see `bus/mod.rs`).
    pub(crate) sync: PpuSync,
    /// The sync digest's work RAM sum (see `state/digest.rs`). Not state (derived from it).
    pub(crate) digest: MemoryDigest,
    /// The frame path's watch for loops it may skip (see `spin/mod.rs`). Not state.
    pub(crate) spin: SpinWatch,
    /// The console's region, fixed at power-on. `machine.region` is its copy in the state, which every
    /// restore and fault injection must leave equal to it (checked, so a damaged byte is refused
    /// rather than believed).
    region: Region,
}

impl Nes {
    /// Powers a console on with `cart` inserted and runs the CPU's 7-cycle reset sequence, so the first
    /// instruction is at the reset vector. The console is of the region the cartridge's header asks
    /// for (NES 2.0 byte 12), NTSC for iNES 1.0 and multi-region ROMs; [`Nes::with_region`] chooses.
    pub fn new(cart: Cartridge, config: NesConfig) -> Nes {
        Nes::with_region(cart, config, None)
    }

    /// [`Nes::new`] with the console's region chosen: `Some` overrides the header, `None` takes it
    /// from the header (NTSC when the header does not say).
    pub fn with_region(cart: Cartridge, config: NesConfig, region: Option<Region>) -> Nes {
        let region = region.unwrap_or_else(|| Nes::region_for(&cart));
        let rom_identity = cart.machine_identity();
        let timing = region.timing();
        let mut nes = Nes {
            cpu: CpuState::default(),
            bus: BusState::default(),
            ram: [0; 0x800],
            ciram: [0; 0x800],
            pads: [ControllerState::default(); 2],
            ppu: Ppu::with_timing(timing.ppu),
            apu: Apu::with_timing(&timing.apu),
            cart,
            machine: config.to_state(0, region),
            rom_identity,
            sync: PpuSync::default(),
            digest: MemoryDigest::default(),
            spin: SpinWatch::default(),
            region,
        };
        nes.power_on();
        nes
    }

    /// Power-on with the config in the machine state: every chip in its power-on state, RAM per the
    /// config, then the CPU's reset sequence (7 cycles), so the first instruction is at the reset vector.
    fn power_on(&mut self) {
        let config = self.config();
        self.cpu = CpuState { p: crate::cpu::flags::U | crate::cpu::flags::I, ..CpuState::default() };
        self.bus = BusState { ppu_offset: config.alignment(), ..BusState::default() };
        self.ram = power_on_ram(&config);
        self.ciram = [0; 0x800];
        let held = [self.pads[0].buttons, self.pads[1].buttons];
        self.pads = [ControllerState::default(); 2];
        self.pads[0].buttons = held[0];
        self.pads[1].buttons = held[1];
        self.ppu = Ppu::with_timing(self.region().timing().ppu);
        let palette = match config.palette_init {
            PaletteInit::Zeros => [0; 32],
            PaletteInit::Console => crate::power_on::CONSOLE_PALETTE,
        };
        self.ppu.set_power_on_state(
            config.ppu_vblank == VblankAtPowerOn::Set,
            config.ppu_warm_up == PpuWarmUp::IgnoresWrites,
            &palette,
            &power_on_oam(&config),
        );
        self.apu.power_on();
        self.cart.power_on();
        self.machine = config.to_state(0, self.region());
        self.reset_ppu_sync();
        self.apu.resync(self.bus.cpu_cycle);
        self.cart.resync(self.bus.cpu_cycle);
        self.refresh_digest();
        self.reset_sequence();
        self.catch_up();
    }

    /// Switches the console off and on again with the config in its state (the one it powered on with,
    /// or the one a restored snapshot carried) and the same cartridge (battery-backed RAM survives, as
    /// on hardware). The frame counter restarts at 0.
    pub fn power_cycle(&mut self) {
        self.power_on();
    }

    /// Runs one frame with `input`: applies its command (reset, power cycle), sets both controllers'
    /// buttons, runs to the end of the frame and returns the record of where it ended.
    pub fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.begin_frame(input);
        self.run_until_frame_end();
        #[cfg(feature = "instruction-drill")]
        instruction_drill();
        self.frame_record()
    }

    /// Applies a frame's console command (reset, power cycle) and latches its buttons into both
    /// controllers, before the frame's first instruction. [`Nes::run_frame`] is `begin_frame` followed
    /// by [`Nes::run_until_frame_end`]; stepping frameworks call it, then [`Nes::step_in_frame`].
    pub fn begin_frame(&mut self, input: FrameInput) {
        self.refresh_digest_if_stale();
        match input.command {
            ConsoleCommand::None => {}
            ConsoleCommand::SoftReset => self.soft_reset(),
            ConsoleCommand::PowerCycle => self.power_cycle(),
        }
        self.pads[0].buttons = input.pads[0];
        self.pads[1].buttons = input.pads[1];
    }

    /// Derived data (e.g. mappers' precomputed bank offsets) recomputed from state after a restore.
    pub(crate) fn rebuild_caches(&mut self) {
        self.cart.rebuild_caches();
        self.refresh_digest();
        self.reset_ppu_sync();
        self.apu.resync(self.bus.cpu_cycle);
        self.cart.resync(self.bus.cpu_cycle);
    }

    /// Brings the lazily run chips (PPU, APU, a board's CPU-cycle counter) up to the end of the last CPU cycle: every public entry
    /// point returns through here, so what the outside sees is the eager schedule's machine.
    pub(crate) fn catch_up(&mut self) {
        // Between cycles the last one started a cycle ago (fast-path cycles leave `cycle_start`
        // behind; the M2 edges owed are placed from it).
        self.sync.cycle_start =
            self.bus.master_clock.saturating_sub(self.region().timing().master_per_cpu_cycle);
        self.catch_up_ppu();
        self.apu.catch_up(self.bus.cpu_cycle);
        self.cart.catch_up(self.bus.cpu_cycle);
        self.cart.refresh_flash_digest();
        // The chips moved: what fast cycles will sample.
        self.cache_interrupt_lines();
    }

    /// Chooses how the PPU keeps up with the CPU. [`PpuCatchUp::Lazy`] (the default) and
    /// [`PpuCatchUp::Eager`] produce bit-identical machines; eager is the slower reference schedule.
    ///
    /// ```
    /// use anes_core::{Cartridge, Nes, NesConfig, PpuCatchUp};
    /// // A 16 KiB NROM program that turns rendering on and loops (reset vector $8000).
    /// let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// let mut prg = vec![0xEA; 0x4000];
    /// prg[..8].copy_from_slice(&[0xA9, 0x1E, 0x8D, 0x01, 0x20, 0x4C, 0x05, 0x80]);
    /// prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// rom.extend(prg);
    /// rom.extend(vec![0x55; 0x2000]);
    /// let mut lazy = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
    /// let mut eager = lazy.clone();
    /// eager.set_ppu_catch_up(PpuCatchUp::Eager);
    /// for _ in 0..3 {
    ///     assert_eq!(lazy.run_frame(Default::default()), eager.run_frame(Default::default()));
    /// }
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn set_ppu_catch_up(&mut self, mode: PpuCatchUp) {
        self.sync.mode = mode;
        self.reset_ppu_sync();
    }

    /// The PPU schedule in use (see [`Nes::set_ppu_catch_up`]).
    pub fn ppu_catch_up(&self) -> PpuCatchUp {
        self.sync.mode
    }

    /// Chooses how the APU keeps up with the CPU. [`ApuCatchUp::Lazy`] (the default) and
    /// [`ApuCatchUp::Eager`] produce bit-identical machines; eager is the slower reference schedule.
    /// With audio output on, the APU ticks every cycle either way.
    ///
    /// ```
    /// use anes_core::{ApuCatchUp, Cartridge, Nes, NesConfig};
    /// // A 16 KiB NROM program that starts the pulse channel and the 4-step frame IRQ, then loops
    /// // reading $4015 (reset vector $8000).
    /// let program = [
    ///     0xA9, 0x01, 0x8D, 0x15, 0x40, // LDA #$01; STA $4015
    ///     0xA9, 0x3F, 0x8D, 0x00, 0x40, // LDA #$3F; STA $4000
    ///     0xA9, 0x08, 0x8D, 0x03, 0x40, // LDA #$08; STA $4003
    ///     0xA9, 0x00, 0x8D, 0x17, 0x40, // LDA #$00; STA $4017
    ///     0xAD, 0x15, 0x40, 0x4C, 0x14, 0x80, // loop: LDA $4015; JMP loop
    /// ];
    /// let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// let mut prg = vec![0xEA; 0x4000];
    /// prg[..program.len()].copy_from_slice(&program);
    /// prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// rom.extend(prg);
    /// rom.extend(vec![0x55; 0x2000]);
    /// let mut lazy = Nes::new(Cartridge::from_ines(&rom)?, NesConfig::default());
    /// let mut eager = lazy.clone();
    /// eager.set_apu_catch_up(ApuCatchUp::Eager);
    /// for _ in 0..5 {
    ///     assert_eq!(lazy.run_frame(Default::default()), eager.run_frame(Default::default()));
    /// }
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn set_apu_catch_up(&mut self, mode: ApuCatchUp) {
        self.apu.set_catch_up(mode);
        // The APU's deadline moved: the bus's fast path, bounded by it, is recomputed.
        self.sync.invalidate();
    }

    /// The APU schedule in use (see [`Nes::set_apu_catch_up`]).
    pub fn apu_catch_up(&self) -> ApuCatchUp {
        self.apu.catch_up_mode()
    }

    /// Runs one instruction, or the interrupt sequence if an interrupt was latched by the end of the
    /// previous instruction; a jammed CPU spends one cycle per call. Returns with every chip at the
    /// end of the instruction's last cycle.
    pub fn step_instruction(&mut self) {
        self.refresh_digest_if_stale();
        self.run_instruction();
        self.catch_up();
    }

    /// Presses the reset button: the PPU, APU and board see reset, and the CPU runs its reset sequence
    /// (A, X, Y kept; SP decremented by 3 without writes; I set).
    pub fn soft_reset(&mut self) {
        // PPUCTRL and PPUMASK change outside a bus cycle: predict the PPU schedule afresh.
        self.sync.invalidate();
        self.ppu.reset();
        self.apu.reset();
        self.cart.reset();
        self.reset_sequence();
        self.catch_up();
    }

    /// Runs instructions until the PPU completes a picture: the first instruction boundary at or after
    /// the PPU reaches scanline 241, dot 0.
    pub fn run_until_frame_end(&mut self) {
        with_region_model!(self.region, R => self.run_instructions_to_picture::<R>());
        self.machine.frame += 1;
        self.catch_up();
    }

    /// The instructions of [`Nes::run_until_frame_end`], in region `R`.
    fn run_instructions_to_picture<R: RegionModel>(&mut self) {
        self.watch_spins(true);
        loop {
            let pictures = self.ppu.frames_completed();
            self.run_instruction_as::<R>();
            // The lazy schedule catches the PPU up on the dot that completes a picture, so the
            // picture count is exact here without a full catch-up.
            if self.ppu.frames_completed() != pictures {
                break;
            }
        }
        self.watch_spins(false);
    }

    /// Runs one instruction; returns true when the PPU reached scanline 241, dot 0 during it, in
    /// which case the frame counter has advanced exactly as [`Nes::run_until_frame_end`] does.
    pub fn step_in_frame(&mut self) -> bool {
        let done = self.step_in_frame_lagging();
        if !done {
            self.catch_up();
        }
        done
    }

    /// The body of `Harness::step_in_frame_lagging` (`harness.rs`): inlined into the lockstep
    /// runner's loop, which then calls the instruction itself.
    #[inline(always)]
    pub(crate) fn step_in_frame_lagging(&mut self) -> bool {
        self.refresh_digest_if_stale();
        let pictures = self.ppu.frames_completed();
        self.run_instruction();
        // Caught up on the dot that completes a picture: exact here, as in `run_until_frame_end`.
        let done = self.ppu.frames_completed() != pictures;
        if done {
            self.machine.frame += 1;
            self.catch_up();
        }
        self.keep_chip_sums();
        done
    }

    /// The body of `Harness::settle` (`harness.rs`).
    pub(crate) fn settle(&mut self) {
        self.sync.invalidate();
        self.apu.forget_history();
        self.catch_up();
    }

    /// The body of `Harness::lag_signature` (`harness.rs`).
    pub(crate) fn lag_signature(&self) -> u64 {
        let ppu = match self.sync.mode {
            PpuCatchUp::Lazy => 0,
            PpuCatchUp::Eager => 1,
        };
        let apu = match self.apu.catch_up_mode() {
            ApuCatchUp::Lazy => 0,
            ApuCatchUp::Eager => 1,
        };
        ppu | apu << 1 | u64::from(self.apu.has_output()) << 2
    }

    /// Runs instructions until the PPU's scanline differs from the one it was on, or the frame ends
    /// (then returns true, the frame counter advanced as in [`Nes::step_in_frame`]). Stops after
    /// exactly the instruction where [`Nes::step_in_frame`] in a loop would see the scanline change,
    /// but lets the PPU lag in between: the CPU's clock is watched for the end of the line (the
    /// PPU runs to it only before the pre-render line, whose length it decides, or after a DMA
    /// that passed two line ends). Lockstep at scanline granularity.
    pub fn step_to_next_line(&mut self) -> bool {
        let done = self.step_to_next_line_lagging();
        if !done {
            self.catch_up();
            self.keep_chip_sums();
        }
        done
    }

    /// The body of `Harness::step_to_next_line_lagging` (`harness.rs`).
    pub(crate) fn step_to_next_line_lagging(&mut self) -> bool {
        self.refresh_digest_if_stale();
        let done = with_region_model!(self.region, R => self.run_instructions_to_line_change::<R>());
        if done {
            self.machine.frame += 1;
            self.catch_up();
        }
        self.keep_chip_sums();
        done
    }

    /// The instructions of [`Nes::step_to_next_line`] in region `R`: true when a picture completed.
    fn run_instructions_to_line_change<R: RegionModel>(&mut self) -> bool {
        let pictures = self.ppu.frames_completed();
        // The line a caught-up PPU is on, and the master clock at which it ends: found by the last
        // step, else from the PPU (which may lag: its line is the one the step leaves).
        let (line, mut line_end) =
            if self.sync.line_step_end != 0 && self.sync.line_step_cycle == self.bus.cpu_cycle {
                (self.sync.line_step_line, self.sync.line_step_end)
            } else {
                (self.ppu.scanline(), self.line_end_master_clock::<R>())
            };
        self.sync.line_step_end = 0;
        // The end of a line is no event of the lazy schedule: the CPU's clock is watched for it
        // after each instruction (one compare), and spin-loop skips stop short of it.
        self.watch_spins(true);
        self.spin.clock_limit = line_end;
        // A step runs one instruction at least, as a step whose PPU lagged lines behind did.
        self.run_instructions_to_clock::<R>(line_end);
        loop {
            // A picture completes as its last line ends, an event the PPU caught up to.
            if self.ppu.frames_completed() != pictures {
                break;
            }
            // Lines are 341 dots but the pre-render line, whose length the odd-frame skip decides:
            // the next line's end is known without running the PPU, unless the instruction passed
            // it too (a DMA) or the pre-render line is this one or the next.
            let pre_render = R::TIMING.ppu.pre_render_scanline;
            let next_end = line_end + u64::from(DOTS_PER_SCANLINE) * R::TIMING.master_per_dot;
            if line + 1 < pre_render && self.bus.master_clock < next_end {
                self.sync.line_step_line = line + 1;
                self.sync.line_step_end = next_end;
                self.sync.line_step_cycle = self.bus.cpu_cycle;
                break;
            }
            // Otherwise the PPU runs through the ends of lines the instruction passed and no
            // further (an access may have caught it up to some point in between): it is then on
            // the line a caught-up PPU would be on, where the next step starts.
            self.catch_up_ppu_to_line_ends::<R>();
            if self.ppu.scanline() != line {
                break;
            }
            // The pre-render line without its odd-frame skip: a dot longer than assumed.
            line_end = self.line_end_master_clock::<R>();
            self.spin.clock_limit = line_end;
            if self.bus.master_clock < line_end {
                self.run_instructions_to_clock::<R>(line_end);
            }
        }
        self.watch_spins(false);
        self.ppu.frames_completed() != pictures
    }

    /// Runs instructions, one at least, until the master clock reaches `clock`. Apart from the
    /// step's other work, whose live values made the loop spill (5% more host instructions per
    /// instruction).
    #[inline(never)]
    fn run_instructions_to_clock<R: RegionModel>(&mut self, clock: u64) {
        loop {
            self.run_instruction_as::<R>();
            if self.bus.master_clock >= clock {
                break;
            }
        }
    }

    /// Frames completed since power-on: the state's frame counter, the number in
    /// [`FrameRecord::frame`]. The frame path advances it ([`Nes::run_frame`],
    /// [`Nes::step_in_frame`], [`Nes::step_to_next_line`]) and a power cycle restarts it; the PPU's
    /// own count of pictures ([`Ppu::frames_completed`], through [`Nes::ppu`]) also counts pictures
    /// finished during [`Nes::step_instruction`].
    pub fn frame(&self) -> u64 {
        self.machine.frame
    }

    /// The region a console for `cart` has when none is chosen: the header's (NES 2.0 byte 12), NTSC
    /// for iNES 1.0 and multi-region ROMs.
    pub fn region_for(cart: &Cartridge) -> Region {
        cart.info().region.console().unwrap_or(Region::Ntsc)
    }

    /// The console's region: fixed at power-on, part of the state (a snapshot of another region is
    /// refused).
    pub fn region(&self) -> Region {
        self.region
    }

    /// The config this machine powered on with, as stored in its state (after a restore: the config
    /// of the machine the snapshot was taken from).
    pub fn config(&self) -> NesConfig {
        NesConfig::from_state(&self.machine).expect("the machine state holds a valid config")
    }

    /// CPU registers and interrupt latches.
    pub fn cpu(&self) -> &CpuState {
        &self.cpu
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

    /// The PPU's own clock, in master clocks: where the dot it is about to process
    /// ([`Nes::ppu_position`]) starts. Its dots start at the same clock values whatever the
    /// CPU/PPU phase ([`NesConfig::alignment`]); the PPU runs that many master clocks behind the
    /// CPU, so `master_clock() - ppu_clock()` is less than the phase plus one dot.
    pub fn ppu_clock(&self) -> u64 {
        self.bus.ppu_clock
    }

    /// The PPU's position: (scanline, dot) about to be processed.
    pub fn ppu_position(&self) -> (u16, u16) {
        (self.ppu.scanline(), self.ppu.dot())
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

    /// Enables audio output at `sample_rate` Hz, or disables it with `None` (see
    /// [`Apu::set_output_sample_rate`]). Audio samples are output, never state: the rate is no part
    /// of the hash or of a snapshot, and [`Nes::load_state`] keeps the rate this machine has. The
    /// rate is clamped to 1 Hz .. the console's CPU clock in whole Hz (1,789,772 on NTSC,
    /// 1,662,607 on PAL, 1,773,447 on Dendy): `Some(0)` runs at 1 Hz, and
    /// [`Nes::audio_sample_rate`] returns the rate in use.
    pub fn set_audio_sample_rate(&mut self, sample_rate: Option<u32>) {
        self.apu.set_output_sample_rate(sample_rate, self.region());
        self.apu.set_expansion_chip(self.cart.expansion_chip());
        self.cart.set_audio_output(sample_rate.is_some());
        // The APU's deadline moved: the bus's fast path, bounded by it, is recomputed.
        self.sync.invalidate();
    }

    /// The audio output rate in Hz set by [`Nes::set_audio_sample_rate`]; `None` (the default) when
    /// audio is off.
    pub fn audio_sample_rate(&self) -> Option<u32> {
        self.apu.output_sample_rate()
    }

    /// Moves buffered mono f32 audio samples into `out`; returns how many (see [`Apu::drain_samples`]).
    pub fn drain_audio(&mut self, out: &mut [f32]) -> usize {
        self.apu.drain_samples(out)
    }

    /// Selects the MMC3's IRQ behaviour (see [`Cartridge::set_mmc3_revision`]); returns false,
    /// changing nothing, when the board is not an MMC3. The revision is mapper state: it is hashed and
    /// snapshotted, and survives power cycles.
    pub fn set_mmc3_revision(&mut self, revision: crate::Mmc3Revision) -> bool {
        let changed = self.cart.set_mmc3_revision(revision);
        // The revision decides when the counter raises its IRQ: predict the PPU schedule afresh.
        self.reset_ppu_sync();
        changed
    }

    /// Restores a battery save into the cartridge's battery-backed PRG RAM (see
    /// [`Cartridge::load_battery_ram`]); on error nothing changes. Typically called right after
    /// [`Nes::new`], before the first frame, as a console is switched on with a saved game inside.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), crate::BatteryRamError> {
        // PRG RAM is plain memory: nothing derived (bank map, PPU schedule) depends on its contents
        // but the sync digest.
        self.cart.load_battery_ram(data)?;
        self.refresh_digest();
        Ok(())
    }

    /// Sets the buttons held on controller `port` (0 or 1); see [`crate::input::buttons`]. Another
    /// port is refused and changes nothing.
    ///
    /// ```
    /// use anes_core::input::{NoSuchPort, buttons};
    /// # let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// # let mut prg = vec![0xEA; 0x4000];
    /// # prg[0x3FFC..].copy_from_slice(&[0x00, 0x80, 0x00, 0x80]);
    /// # rom.extend(prg);
    /// # rom.extend(vec![0x55; 0x2000]);
    /// let mut nes = anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom)?, Default::default());
    /// nes.set_buttons(1, buttons::A | buttons::LEFT).expect("port 1 is the second controller");
    /// assert_eq!(nes.set_buttons(2, buttons::A), Err(NoSuchPort { port: 2 }));
    /// # Ok::<(), anes_core::RomError>(())
    /// ```
    pub fn set_buttons(&mut self, port: usize, buttons: u8) -> Result<(), crate::input::NoSuchPort> {
        let pad = self.pads.get_mut(port).ok_or(crate::input::NoSuchPort { port })?;
        pad.buttons = buttons;
        Ok(())
    }
}

/// The instruction-count gate's drill (feature `instruction-drill`, never shipped): host work that
/// changes no state, about 4% of a demo frame.
#[cfg(feature = "instruction-drill")]
fn instruction_drill() {
    for i in 0..50_000u32 {
        core::hint::black_box(i);
    }
}
