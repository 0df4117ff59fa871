//! The APU (the 2A03's, with the PAL and Dendy tables of `ApuTiming`): two pulse channels, triangle, noise, DMC and the frame counter.
//!
//! Interface contract with the console:
//! - the APU sees every CPU cycle, before that cycle's bus access: the bus calls [`Apu::sync_to`] with
//!   the number of each cycle, and the APU either ticks through it (the eager schedule, and the lazy
//!   one when something it predicted comes due) or lets the cycles accumulate;
//! - the CPU bus calls [`Apu::write_register`] for $4000-$4013, $4015, $4017 and [`Apu::read_status`]
//!   for $4015, with the cycle's number: the APU first catches up to it;
//! - [`Apu::irq_line`] (frame counter or DMC IRQ) is sampled by the CPU at the end of each cycle;
//! - the DMC asks for sample bytes through [`Apu::dmc_wants_dma`] / [`Apu::dmc_dma_address`]; the bus's
//!   DMA unit answers with [`Apu::dmc_dma_complete`].
//!
//! Lazy catch-up ([`ApuCatchUp::Lazy`], the default): the CPU observes the APU only through register
//! accesses (which catch it up first), its IRQ line and the DMC's DMA request. After every catch-up
//! the APU predicts the first cycle whose tick could change one of those two lines (the next frame
//! counter step, the end of a pending $4017 write's or DMC load's delay, the output bit that empties a
//! full sample buffer while bytes remain) and is left alone until then; it then runs the owed cycles
//! in bulk, the channel timers advanced in closed form between frame counter steps (`timer.rs`); a
//! DMA request that is all a tick would change rises without the tick, the fetch catching up. Until
//! then the lines it shows are exactly what the eager ticks would show, and every public entry point
//! of the console catches it up, so state, hashes and snapshots are those of the eager schedule.
//!
//! All emulated state is one plain-old-data [`ApuState`] ([`Apu::state_bytes`]). Audio output
//! ([`Apu::set_output_sample_rate`], [`Apu::drain_samples`]) is a side channel that reads the state and
//! never feeds back into it.
//!
//! Phase: CPU cycles alternate between the first half of an APU cycle (a DMA "get" cycle, odd-numbered,
//! `bus::is_get_cycle`) and the second ("put"). Pulse and noise timers, which run at the APU
//! rate, advance on put cycles; the DMC timer on get cycles (see [`dmc`]); the frame counter restarts
//! on get cycles (see [`frame_counter`]).

pub mod dmc;
pub mod envelope;
pub mod frame_counter;
pub mod length;
pub mod mixer;
pub mod noise;
pub mod output;
pub mod pulse;
pub(crate) mod timer;
pub mod triangle;

use crate::clock::is_get_cycle;
use crate::region::ApuTiming;
use dmc::Dmc;
use frame_counter::FrameCounter;
use noise::Noise;
use output::AudioOutput;
use pulse::Pulse;
use triangle::Triangle;

crate::layout::state_struct! {
    /// All mutable state of the APU, in one plain-old-data block.
    pub struct ApuState {
        /// Pulse 1 ($4000-$4003) and pulse 2 ($4004-$4007).
        pub pulse: [Pulse; 2],
        /// Triangle ($4008-$400B).
        pub triangle: Triangle,
        /// Noise ($400C-$400F).
        pub noise: Noise,
        /// DMC ($4010-$4013).
        pub dmc: Dmc,
        /// Frame counter ($4017).
        pub frame_counter: FrameCounter,
    }
}

const _: () = assert!(core::mem::size_of::<ApuState>() == 144);

impl ApuState {
    /// The /IRQ output: the frame counter's or the DMC's flag.
    #[inline]
    fn irq_output(&self) -> bool {
        self.frame_counter.irq_line() || self.dmc.irq_flag != 0
    }
}

/// How the APU keeps up with the CPU. Both give bit-identical machines; `Lazy` is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApuCatchUp {
    /// Tick only when the CPU could observe the APU, running the owed cycles in bulk (the default).
    #[default]
    Lazy,
    /// Tick every unit on every CPU cycle (the reference schedule).
    Eager,
}

/// The APU.
#[derive(Debug, Clone)]
pub struct Apu {
    state: ApuState,
    /// Audio output; `None` (the default) costs nothing per cycle.
    output: Option<Box<AudioOutput>>,
    /// True when a register write (or a restore) may have left a length counter write to apply on
    /// the next cycle. Not state: applying settled counters changes nothing, so this only skips work.
    length_writes_pending: bool,
    /// The schedule chosen by the user.
    mode: ApuCatchUp,
    /// The last CPU cycle ticked. Not state: at every public entry point of the console it equals the
    /// bus's CPU cycle.
    ticked: u64,
    /// The first cycle whose tick could change what the CPU sees without a register access (the IRQ
    /// line, the DMC's DMA request); [`Apu::sync_to`] lets earlier cycles accumulate. 0 forces the
    /// next cycle to catch up.
    deadline: u64,
    /// `state.dmc.wants_dma()`, kept up to date wherever the DMC changes, because the bus asks at the
    /// end of every cycle; from `request_rises_at` on, ahead of the lagging state.
    dma_request: bool,
    /// When `deadline` is only the DMC's sample buffer emptying, with the DMC enabled: nothing but
    /// the DMA request changes there, so [`Apu::sync_to`] raises it without ticking and waits for
    /// `deadline_after_rise` (or the fetch that answers the request). Not state: derived at each
    /// prediction, and only acted on while `deadline` equals it.
    request_rises_at: u64,
    /// The deadline after the request has risen (see `request_rises_at`).
    deadline_after_rise: u64,
    /// The /IRQ output (frame counter or DMC flag), kept up to date like `dma_request`: the bus
    /// samples it at the end of every cycle.
    irq_output: bool,
    /// The region's frame counter steps and period tables, chosen at power-on. Not state: the machine
    /// state's region decides it.
    timing: &'static ApuTiming,
    /// True when the state may have changed since the console last summed it for the sync digest
    /// (`state/digest.rs`, which keeps the sum while this is false): set wherever the state moves
    /// (ticks, accesses, DMA fetches, restores), the only ways in, the fields being private. Not
    /// state.
    digest_stale: bool,
}

impl Default for Apu {
    fn default() -> Self {
        Self::new()
    }
}

impl Apu {
    /// An NTSC APU (2A03) at power-on: all registers zero, noise shift register 1, frame counter as if
    /// $00 had been written to $4017 just before the CPU's reset sequence; audio output disabled.
    pub fn new() -> Self {
        Apu::with_timing(&crate::region::NTSC.apu)
    }

    /// An APU with the region's numbers `timing` at power-on (see [`Apu::new`]).
    pub fn with_timing(timing: &'static ApuTiming) -> Self {
        let state = ApuState {
            pulse: [Pulse::new(true), Pulse::new(false)],
            noise: Noise::new(),
            dmc: Dmc::new(),
            frame_counter: FrameCounter::new(),
            ..ApuState::default()
        };
        let dma_request = state.dmc.wants_dma();
        let irq_output = state.irq_output();
        Apu {
            state,
            output: None,
            length_writes_pending: true,
            mode: ApuCatchUp::Lazy,
            ticked: 0,
            deadline: 0,
            dma_request,
            request_rises_at: 0,
            deadline_after_rise: 0,
            irq_output,
            timing,
            digest_stale: true,
        }
    }

    /// True when the state may have changed since [`Apu::mark_digest_fresh`].
    #[inline(always)]
    pub(crate) fn digest_stale(&self) -> bool {
        self.digest_stale
    }

    /// The console has summed the state as it stands.
    #[inline(always)]
    pub(crate) fn mark_digest_fresh(&mut self) {
        self.digest_stale = false;
    }

    /// Chooses the schedule; both give bit-identical machines. Call it between instructions, when the
    /// APU has caught up.
    pub fn set_catch_up(&mut self, mode: ApuCatchUp) {
        self.mode = mode;
        self.deadline = 0;
    }

    /// The schedule in use.
    pub fn catch_up_mode(&self) -> ApuCatchUp {
        self.mode
    }

    /// The last CPU cycle ticked (lags the CPU between catch-ups).
    pub fn ticked(&self) -> u64 {
        self.ticked
    }

    /// Sets the hints that depend on the APU's history from its state alone (a pending length
    /// counter write is in the state; the hint only says one may be): two APUs in equal states then
    /// catch up at the same cycles.
    pub fn forget_history(&mut self) {
        let s = &self.state;
        self.length_writes_pending = !(s.pulse[0].length.is_settled()
            && s.pulse[1].length.is_settled()
            && s.triangle.length.is_settled()
            && s.noise.length.is_settled());
    }

    /// True when an audio output is attached (the APU then runs every cycle).
    pub fn has_output(&self) -> bool {
        self.output.is_some()
    }

    /// Declares the APU caught up through CPU cycle `cpu_cycle` (after power-on or a restore, where
    /// the state was set, not run).
    pub fn resync(&mut self, cpu_cycle: u64) {
        self.ticked = cpu_cycle;
        self.deadline = 0;
        self.dma_request = self.state.dmc.wants_dma();
        self.irq_output = self.state.irq_output();
    }

    /// The bus is running CPU cycle `cpu_cycle`: tick through it now if the CPU could notice otherwise
    /// (always, on the eager schedule), else leave it owed.
    #[inline(always)]
    pub fn sync_to(&mut self, cpu_cycle: u64) {
        if cpu_cycle >= self.deadline {
            self.reach_deadline(cpu_cycle);
        }
    }

    /// [`Apu::sync_to`] at or past the deadline: a catch-up, unless all the tick of this cycle
    /// changes is the DMC's DMA request, which then rises alone; the owed ticks are run by the DMA
    /// fetch that answers it (or the next catch-up).
    #[inline(never)]
    fn reach_deadline(&mut self, cpu_cycle: u64) {
        if cpu_cycle == self.request_rises_at && self.deadline == self.request_rises_at {
            self.dma_request = true;
            self.deadline = self.deadline_after_rise;
            return;
        }
        self.catch_up(cpu_cycle);
    }

    /// The first CPU cycle [`Apu::sync_to`] must run: earlier ones cannot change what the CPU sees.
    #[inline(always)]
    pub fn deadline(&self) -> u64 {
        self.deadline
    }

    /// Ticks through CPU cycle `cpu_cycle` and predicts the next cycle the CPU could notice.
    #[inline(never)]
    pub fn catch_up(&mut self, cpu_cycle: u64) {
        self.run_until(cpu_cycle);
        self.dma_request = self.state.dmc.wants_dma();
        self.irq_output = self.state.irq_output();
        self.predict();
    }

    /// Ticks every owed cycle through `cpu_cycle`, the cycles between frame counter steps in bulk.
    fn run_until(&mut self, cpu_cycle: u64) {
        self.digest_stale = true;
        while self.ticked < cpu_cycle {
            let next = self.ticked + 1;
            let fc = &self.state.frame_counter;
            if self.output.is_some()
                || self.length_writes_pending
                || !fc.is_settled()
                || !self.state.dmc.is_settled()
            {
                self.tick_cpu_cycle(next);
                continue;
            }
            // Ticks that only count, up to (not including) the next step or the target.
            let quiet = (fc.ticks_until_step(&self.timing.frame_steps) - 1).min(cpu_cycle - self.ticked);
            if quiet > 0 {
                self.advance_quiet(quiet);
            }
            if self.ticked < cpu_cycle {
                self.tick_cpu_cycle(self.ticked + 1);
            }
        }
    }

    /// `ticks` cycles after `self.ticked` in which the frame counter reaches no step, nothing is
    /// pending and no audio is produced: each channel's timer advances in closed form.
    fn advance_quiet(&mut self, ticks: u64) {
        let (from, to) = (self.ticked, self.ticked + ticks);
        // Get cycles are the odd-numbered ones (`is_get_cycle`).
        let gets = to.div_ceil(2) - from.div_ceil(2);
        let puts = ticks - gets;
        let s = &mut self.state;
        s.frame_counter.advance_quiet(ticks);
        s.triangle.advance_timer(ticks);
        s.dmc.advance_timer(gets, &self.timing.dmc_rates);
        s.pulse[0].advance_timer(puts);
        s.pulse[1].advance_timer(puts);
        s.noise.advance_timer(puts, &self.timing.noise_periods);
        self.ticked = to;
    }

    /// Sets `deadline` to the first cycle after `self.ticked` whose tick could change the IRQ line or
    /// the DMC's DMA request (and `request_rises_at` when only the request changes there).
    fn predict(&mut self) {
        let next = self.ticked + 1;
        let s = &self.state;
        let fc = &s.frame_counter;
        self.request_rises_at = 0;
        if self.mode == ApuCatchUp::Eager
            || self.output.is_some()
            || self.length_writes_pending
            || !fc.is_settled()
            || !s.dmc.is_settled()
        {
            self.deadline = next;
            return;
        }
        // The frame IRQ can only rise at a step (conservatively: any step, a few per frame).
        let mut deadline = self.ticked + fc.ticks_until_step(&self.timing.frame_steps);
        // The DMC timer runs on get (odd-numbered) cycles: the n-th one from here.
        let nth_get = |clocks: u64| (next | 1) + 2 * (clocks - 1);
        if s.dmc.implicit_abort == dmc::IMPLICIT_ARMED {
            deadline = deadline.min(nth_get(s.dmc.clocks_until_output_cycle_ends(&self.timing.dmc_rates)));
        }
        // An empty buffer's request is up (or, the DMC disabled, stays down) until the DMA unit's
        // fetch or a $4015 write, both accesses that catch the APU up: ticks cannot change it. A
        // full one's empties into the output unit, raising the request if the DMC is enabled.
        if s.dmc.bytes_remaining != 0
            && let Some(clocks) = s.dmc.clocks_until_buffer_empties(&self.timing.dmc_rates)
        {
            let empties = nth_get(clocks);
            if empties < deadline && s.dmc.enabled != 0 {
                self.request_rises_at = empties;
                self.deadline_after_rise = deadline;
            }
            deadline = deadline.min(empties);
        }
        self.deadline = deadline;
    }

    /// Power-on: every unit in its power-on state (see [`Apu::new`]); the audio output (with the
    /// samples not drained yet) and the schedule chosen are kept, and the APU counts as caught up at
    /// cycle 0.
    pub fn power_on(&mut self) {
        *self = Apu { output: self.output.take(), mode: self.mode, ..Apu::with_timing(self.timing) };
    }

    /// The reset button was pressed (nesdev "CPU power up state"): the APU is silenced as by a write of
    /// $00 to $4015, the frame counter restarts as after a write of its last $4017 value with its
    /// interrupt flag clear, the triangle returns to the first step of its waveform and the DMC output
    /// keeps only its lowest bit. The halt flags of the pulse and noise length counters clear; the
    /// triangle's is unaffected (blargg's apu_reset len_ctrs_enabled).
    pub fn reset(&mut self) {
        self.write_status(0x00, false);
        let s = &mut self.state;
        s.frame_counter.reset();
        let [pulse1, pulse2] = &mut s.pulse;
        for (length, envelope) in [
            (&mut pulse1.length, &mut pulse1.envelope),
            (&mut pulse2.length, &mut pulse2.envelope),
            (&mut s.noise.length, &mut s.noise.envelope),
        ] {
            // One register bit is both the length halt and the envelope loop flag.
            length.halt = 0;
            length.pending_halt = 0;
            envelope.loop_flag = 0;
        }
        s.triangle.sequence_step = 0;
        s.dmc.output_level &= 1;
        // The reset line is held far longer than a $4015 write's delay: the DMC is stopped outright.
        s.dmc.disable_now();
        self.changed_by_access();
    }

    /// The emulated state.
    pub fn state(&self) -> &ApuState {
        &self.state
    }

    /// The state as bytes (144, no padding), for snapshots and hashing. Stable within a format
    /// version: the layout is [`ApuState`]'s `#[repr(C)]` field order.
    pub fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(&self.state)
    }

    /// The state as mutable bytes, to restore a snapshot. Any byte pattern is accepted without
    /// panicking (indexes into tables are masked where used). Call [`Apu::resync`] afterwards.
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        self.digest_stale = true;
        self.length_writes_pending = true;
        self.deadline = 0;
        bytemuck::bytes_of_mut(&mut self.state)
    }

    /// One CPU cycle; `cpu_cycle` is the number of the cycle now running (its parity is the APU's
    /// get/put phase). The console's bus uses [`Apu::sync_to`], which calls this when it must.
    #[inline]
    pub fn tick_cpu_cycle(&mut self, cpu_cycle: u64) {
        self.digest_stale = true;
        self.ticked = cpu_cycle;
        let get = is_get_cycle(cpu_cycle);
        let s = &mut self.state;
        let timing = self.timing;
        let clocks = s.frame_counter.tick(get, &timing.frame_steps);
        if clocks.quarter {
            s.pulse[0].envelope.clock();
            s.pulse[1].envelope.clock();
            s.noise.envelope.clock();
            s.triangle.clock_linear();
        }
        if clocks.half {
            s.pulse[0].length.clock();
            s.pulse[1].length.clock();
            s.triangle.length.clock();
            s.noise.length.clock();
            s.pulse[0].clock_sweep();
            s.pulse[1].clock_sweep();
        }
        if self.length_writes_pending {
            self.length_writes_pending = false;
            s.pulse[0].length.apply_writes();
            s.pulse[1].length.apply_writes();
            s.triangle.length.apply_writes();
            s.noise.length.apply_writes();
        }

        s.triangle.clock_timer();
        s.dmc.expire_implicit_abort();
        if get {
            s.dmc.clock_timer(&timing.dmc_rates);
        } else {
            s.pulse[0].clock_timer();
            s.pulse[1].clock_timer();
            s.noise.clock_timer(&timing.noise_periods);
        }
        s.dmc.tick_delays();
        self.dma_request = s.dmc.wants_dma();
        self.irq_output = s.irq_output();

        if let Some(output) = self.output.as_deref_mut() {
            output.push_cycle(self.state.levels());
        }
    }

    /// A CPU write of $4000-$4013, $4015 or $4017 on cycle `cpu_cycle` (other addresses are ignored),
    /// after that cycle's tick.
    pub fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) {
        self.run_until(cpu_cycle);
        self.length_writes_pending = true;
        let s = &mut self.state;
        let index = addr & 3;
        match addr {
            0x4000..=0x4003 => s.pulse[0].write_register(index, value),
            0x4004..=0x4007 => s.pulse[1].write_register(index, value),
            0x4008..=0x400B => s.triangle.write_register(index, value),
            0x400C..=0x400F => s.noise.write_register(index, value),
            0x4010..=0x4013 => s.dmc.write_register(index, value),
            0x4015 => self.write_status(value, is_get_cycle(cpu_cycle)),
            0x4017 => s.frame_counter.write(value, is_get_cycle(cpu_cycle)),
            _ => {}
        }
        self.changed_by_access();
    }

    /// After a register access or a DMA fetch changed the state outside a tick: the DMA request is
    /// re-read and the next cycle predicts afresh.
    fn changed_by_access(&mut self) {
        self.digest_stale = true;
        self.deadline = 0;
        self.dma_request = self.state.dmc.wants_dma();
        self.irq_output = self.state.irq_output();
    }

    fn write_status(&mut self, value: u8, get_cycle: bool) {
        self.length_writes_pending = true;
        let s = &mut self.state;
        s.pulse[0].length.set_enabled(value & 0x01 != 0);
        s.pulse[1].length.set_enabled(value & 0x02 != 0);
        s.triangle.length.set_enabled(value & 0x04 != 0);
        s.noise.length.set_enabled(value & 0x08 != 0);
        s.dmc.write_enable(value & 0x10 != 0, get_cycle, &self.timing.dmc_rates);
    }

    /// A CPU read of $4015 on cycle `cpu_cycle`, after that cycle's tick: the status byte (bit 5 is
    /// not driven; the caller fills it from open bus). Clears the frame interrupt flag, unless the flag
    /// is being set on this very cycle.
    pub fn read_status(&mut self, cpu_cycle: u64) -> u8 {
        self.run_until(cpu_cycle);
        let status = self.peek_status();
        self.state.frame_counter.acknowledge_read();
        self.changed_by_access();
        status
    }

    /// What a read of $4015 would return, without side effects.
    pub fn peek_status(&self) -> u8 {
        let s = &self.state;
        u8::from(s.pulse[0].length.is_active())
            | u8::from(s.pulse[1].length.is_active()) << 1
            | u8::from(s.triangle.length.is_active()) << 2
            | u8::from(s.noise.length.is_active()) << 3
            | u8::from(s.dmc.bytes_remaining != 0) << 4
            | (s.frame_counter.irq_flag & 1) << 6
            | (s.dmc.irq_flag & 1) << 7
    }

    /// The APU's /IRQ output (frame counter or DMC).
    #[inline]
    pub fn irq_line(&self) -> bool {
        // Between catch-ups the state is that of the last one, whose output is still the truth.
        debug_assert_eq!(self.irq_output, self.state.irq_output(), "the cached IRQ output is current");
        self.irq_output
    }

    /// True while the DMC needs a sample byte fetched by DMA: its buffer is empty, bytes remain, and
    /// the delay of a "load" DMA after a $4015 write has passed. Goes false if $4015 stops the sample.
    #[inline]
    pub fn dmc_wants_dma(&self) -> bool {
        // Between catch-ups the state is that of the last one, whose request is still the truth (or,
        // from `request_rises_at` on, the request the lagging state has yet to raise).
        debug_assert!(
            self.dma_request == self.state.dmc.wants_dma()
                || (self.dma_request
                    && self.ticked < self.request_rises_at
                    && self.deadline != self.request_rises_at),
            "the cached DMA request is current"
        );
        self.dma_request
    }

    /// The address of the sample byte the DMC wants.
    #[inline]
    pub fn dmc_dma_address(&self) -> u16 {
        self.state.dmc.current_address
    }

    /// The DMA unit fetched the sample byte the DMC asked for, on cycle `cpu_cycle` (after its tick).
    pub fn dmc_dma_complete(&mut self, value: u8, cpu_cycle: u64) {
        self.run_until(cpu_cycle);
        self.state.dmc.dma_complete(value);
        self.changed_by_access();
        // Caught up and nothing written: predict now, sparing the next cycle a catch-up.
        self.predict();
    }

    /// Enables audio output at `sample_rate` Hz (allocating its ring of a quarter second) for a
    /// console of `region`, whose CPU clock the decimator counts against, or disables it with `None`.
    /// Changing the rate discards samples not yet drained. The rate is clamped to 1 Hz .. the
    /// region's CPU clock in whole Hz (1,789,772 on NTSC, 1,662,607 on PAL, 1,773,447 on Dendy): a
    /// decimator emits at most one sample a CPU cycle. `Some(0)` is 1 Hz;
    /// [`Apu::output_sample_rate`] gives the rate in use.
    pub fn set_output_sample_rate(&mut self, sample_rate: Option<u32>, region: crate::Region) {
        self.output = sample_rate.map(|rate| Box::new(AudioOutput::new(rate, region.cpu_clock())));
        // Audio wants every cycle's levels: with output on, the APU ticks every cycle.
        self.deadline = 0;
    }

    /// Mixes the board's sound chip `chip` into the audio output from now on (`None`: no chip);
    /// call it after [`Apu::set_output_sample_rate`], which starts without one.
    pub fn set_expansion_chip(&mut self, chip: Option<crate::cart::expansion_audio::ExpansionChip>) {
        if let Some(output) = self.output.as_deref_mut() {
            output.set_expansion_gain(chip.map_or(0.0, mixer::expansion_gain));
        }
    }

    /// The board's sound chip's DAC level for the cycles ticked from now on (no effect while output
    /// is disabled).
    #[inline]
    pub fn set_expansion_level(&mut self, level: i32) {
        if let Some(output) = self.output.as_deref_mut() {
            output.set_expansion_level(level);
        }
    }

    /// The audio output rate, if output is enabled.
    pub fn output_sample_rate(&self) -> Option<u32> {
        self.output.as_ref().map(|o| o.sample_rate())
    }

    /// Audio samples dropped so far because [`Apu::drain_samples`] was not called often enough (the
    /// ring holds a quarter second; the oldest samples go first). 0 when output is disabled.
    pub fn dropped_samples(&self) -> u64 {
        self.output.as_ref().map_or(0, |o| o.dropped_samples())
    }

    /// Moves the oldest buffered audio samples (mono f32, about -1.0..1.0) into `out`; returns how many
    /// were written. Returns 0 when output is disabled.
    pub fn drain_samples(&mut self, out: &mut [f32]) -> usize {
        self.output.as_deref_mut().map_or(0, |o| o.drain(out))
    }
}

impl ApuState {
    /// The five channel levels the mixer sees: pulse 1, pulse 2, triangle, noise (0-15), DMC (0-127).
    pub fn levels(&self) -> [u8; 5] {
        [
            self.pulse[0].output(),
            self.pulse[1].output(),
            self.triangle.output(),
            self.noise.output(),
            self.dmc.output(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    /// Runs cycles `from..to` (numbers of the cycles, as the bus passes them).
    fn run(apu: &mut Apu, from: u64, to: u64) {
        for cycle in from..to {
            apu.tick_cpu_cycle(cycle);
        }
    }

    #[test]
    fn length_load_shows_in_status_on_the_next_cycle() {
        let mut apu = Apu::new();
        run(&mut apu, 1, 10);
        apu.write_register(0x4015, 0x0F, 9);
        apu.write_register(0x4003, 0x08, 9);
        assert_eq!(apu.peek_status() & 0x0F, 0);
        run(&mut apu, 10, 11);
        assert_eq!(apu.peek_status() & 0x0F, 0x01);
    }

    #[test]
    fn frame_irq_after_4017_write_and_read_clears_it() {
        let mut apu = Apu::new();
        run(&mut apu, 1, 100);
        apu.write_register(0x4017, 0x00, 99); // get cycle: restart on cycle 103
        run(&mut apu, 100, 103 + 29828);
        assert!(!apu.irq_line());
        run(&mut apu, 103 + 29828, 103 + 29829);
        assert!(apu.irq_line());
        // A read on the first setting cycle (a get cycle) would clear the flag on the next get
        // cycle, where the last step sets it again.
        assert_eq!(apu.read_status(103 + 29828) & 0x40, 0x40);
        run(&mut apu, 103 + 29829, 103 + 29831);
        assert!(apu.irq_line());
        // Read on that last setting cycle (get): cleared on the next get cycle, not the put between.
        assert_eq!(apu.read_status(103 + 29830) & 0x40, 0x40);
        run(&mut apu, 103 + 29831, 103 + 29832);
        assert!(apu.irq_line());
        run(&mut apu, 103 + 29832, 103 + 29833);
        assert!(!apu.irq_line());
    }

    #[test]
    fn dmc_load_dma_waits_for_the_get_cycle_of_the_second_apu_cycle() {
        // Written on get cycle 101: the bus must see the request at the end of cycle 104 so it halts
        // on get cycle 105. Written on put cycle 100: seen at the end of 102, halt on 103.
        for (write_cycle, first_wanted) in [(101, 104), (100, 102)] {
            let mut apu = Apu::new();
            run(&mut apu, 1, write_cycle + 1);
            apu.write_register(0x4015, 0x10, write_cycle);
            for cycle in write_cycle + 1..=first_wanted {
                assert!(!apu.dmc_wants_dma(), "cycle {cycle}");
                apu.tick_cpu_cycle(cycle);
            }
            assert!(apu.dmc_wants_dma(), "write on {write_cycle}");
            assert!(is_get_cycle(first_wanted + 1));
            assert_eq!(apu.dmc_dma_address(), 0xC000);
            apu.dmc_dma_complete(0xAA, first_wanted);
            assert!(!apu.dmc_wants_dma());
            assert_eq!(apu.peek_status() & 0x10, 0); // 1-byte sample: fetched, so finished
        }
    }

    #[test]
    fn dmc_reload_request_rises_on_get_cycles() {
        let mut apu = Apu::new();
        apu.write_register(0x4010, 0x0F, 0); // fastest rate: 54 CPU cycles per bit
        apu.write_register(0x4013, 0x01, 0); // 17 bytes
        run(&mut apu, 1, 10);
        apu.write_register(0x4015, 0x10, 9);
        let mut rises = 0;
        for cycle in 10..10_000 {
            let before = apu.dmc_wants_dma();
            apu.tick_cpu_cycle(cycle);
            if apu.dmc_wants_dma() {
                if !before && cycle > 20 {
                    assert!(is_get_cycle(cycle), "reload request on cycle {cycle}");
                    rises += 1;
                }
                apu.dmc_dma_complete(0x00, cycle);
            }
        }
        assert!(rises > 10);
    }

    #[test]
    fn audio_output_pulse_frequency() {
        let mut apu = Apu::new();
        apu.set_output_sample_rate(Some(48_000), crate::Region::Ntsc);
        apu.write_register(0x4015, 0x01, 0);
        apu.write_register(0x4000, 0xBF, 0); // duty 50%, halt, constant volume 15
        apu.write_register(0x4002, 0xFD, 0); // period 253: 1789773 / (16 * 254) = 440.4 Hz
        apu.write_register(0x4003, 0x00, 0);
        let mut samples = vec![0.0f32; 48_000];
        let mut filled = 0;
        let mut cycle = 1;
        while filled < samples.len() {
            apu.tick_cpu_cycle(cycle);
            cycle += 1;
            filled += apu.drain_samples(&mut samples[filled..]);
        }
        let rising = samples.windows(2).skip(4800).filter(|w| w[0] < 0.0 && w[1] >= 0.0).count();
        // 0.9 s analysed.
        assert!((390..=403).contains(&rising), "{rising} rising edges");
    }

    #[test]
    fn disabled_output_yields_nothing() {
        let mut apu = Apu::new();
        run(&mut apu, 1, 1000);
        assert_eq!(apu.drain_samples(&mut [0.0; 16]), 0);
        assert_eq!(apu.output_sample_rate(), None);
    }

    #[test]
    fn arbitrary_state_bytes_never_panic() {
        for fill in [0x00, 0x5A, 0xA5, 0xFF] {
            let mut apu = Apu::new();
            apu.set_output_sample_rate(Some(44_100), crate::Region::Ntsc);
            apu.state_bytes_mut().fill(fill);
            run(&mut apu, 1, 100_000);
            let _ = apu.read_status(99_999);
            let mut copy = Apu::new();
            copy.state_bytes_mut().copy_from_slice(apu.state_bytes());
            assert_eq!(copy.state(), apu.state());
        }
    }

    /// Drives a lazy and an eager APU through the same cycles, register accesses and DMC fetches
    /// (answered as the bus would: a few cycles after the request), from `start` state, and checks at
    /// the end of every cycle that the lines the CPU samples agree, and that the states agree whenever
    /// the lazy one is caught up.
    fn compare_schedules(seed: u64, start: &ApuState, cycles: u64, write_every: u64) {
        let mut rng = seed;
        let mut eager = Apu::new();
        eager.state = *start;
        eager.set_catch_up(ApuCatchUp::Eager);
        let mut lazy = Apu::new();
        lazy.state = *start;
        let mut fetch_at = None;
        for cycle in 1..=cycles {
            eager.sync_to(cycle);
            lazy.sync_to(cycle);
            let r = next(&mut rng);
            if r % write_every == 0 {
                let addr =
                    [0x4000, 0x4001, 0x4002, 0x4003, 0x4004, 0x4007, 0x4008, 0x400B, 0x400C, 0x400E, 0x400F]
                        .into_iter()
                        .chain([0x4010, 0x4011, 0x4012, 0x4013, 0x4015, 0x4015, 0x4017, 0x4017])
                        .nth((r >> 8) as usize % 19)
                        .unwrap();
                let value = (r >> 32) as u8;
                eager.write_register(addr, value, cycle);
                lazy.write_register(addr, value, cycle);
            } else if r % write_every == 1 {
                assert_eq!(lazy.read_status(cycle), eager.read_status(cycle), "seed {seed} cycle {cycle}");
            }
            if fetch_at == Some(cycle) {
                let value = (r >> 16) as u8;
                eager.dmc_dma_complete(value, cycle);
                lazy.dmc_dma_complete(value, cycle);
                fetch_at = None;
            }
            assert_eq!(lazy.irq_line(), eager.irq_line(), "IRQ line, seed {seed} cycle {cycle}");
            assert_eq!(lazy.dmc_wants_dma(), eager.dmc_wants_dma(), "DMA request, seed {seed} cycle {cycle}");
            if fetch_at.is_none() && eager.dmc_wants_dma() {
                fetch_at = Some(cycle + 2 + (r >> 40) % 3);
            }
            if lazy.ticked == cycle {
                assert_eq!(lazy.state(), eager.state(), "state, seed {seed} cycle {cycle}");
            }
        }
        lazy.catch_up(cycles);
        assert_eq!(lazy.state(), eager.state(), "final state, seed {seed}");
    }

    #[test]
    fn lazy_schedule_equals_eager_from_power_on() {
        for seed in 0..12 {
            compare_schedules(seed, &Apu::new().state, 250_000, 1500 + seed * 700);
        }
    }

    #[test]
    fn lazy_schedule_equals_eager_from_arbitrary_states() {
        let mut rng = 7;
        for seed in 0..40 {
            let mut start = ApuState::default();
            for byte in bytemuck::bytes_of_mut(&mut start) {
                *byte = next(&mut rng) as u8;
            }
            compare_schedules(seed, &start, 60_000, 400);
        }
    }

    #[test]
    fn lazy_schedule_runs_quiet_stretches_in_bulk() {
        // A playing pulse and a looping DMC sample: the lazy APU wakes at frame counter steps and DMC
        // buffer refills only, a small fraction of the cycles.
        let mut apu = Apu::new();
        apu.write_register(0x4015, 0x11, 0);
        apu.write_register(0x4010, 0x4F, 0); // loop, slowest rate
        apu.write_register(0x4013, 0x10, 0);
        let mut catch_ups = 0;
        for cycle in 1..=300_000 {
            if cycle >= apu.deadline {
                catch_ups += 1;
            }
            apu.sync_to(cycle);
            if apu.dmc_wants_dma() {
                apu.dmc_dma_complete(0x55, cycle);
            }
        }
        assert!(catch_ups < 300_000 / 50, "{catch_ups} catch-ups in 300,000 cycles");
    }

    #[test]
    fn reset_silences_and_rearms_frame_counter() {
        let mut apu = Apu::new();
        apu.write_register(0x4015, 0x1F, 1);
        apu.write_register(0x4000, 0x20, 1);
        apu.write_register(0x4003, 0x08, 1);
        apu.write_register(0x4017, 0x80, 1);
        run(&mut apu, 2, 40_000);
        apu.reset();
        assert_eq!(apu.peek_status(), 0);
        assert_eq!(apu.state().pulse[0].length.pending_halt, 0);
        run(&mut apu, 40_000, 40_000 + 80_000);
        // 5-step mode was kept: no frame interrupt.
        assert!(!apu.irq_line());
    }
}
