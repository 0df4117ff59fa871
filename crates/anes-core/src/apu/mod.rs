//! The 2A03's APU (NTSC): two pulse channels, triangle, noise, DMC and the frame counter.
//!
//! Interface contract with the console:
//! - [`Apu::tick_cpu_cycle`] runs once per CPU cycle, before that cycle's bus access;
//! - the CPU bus calls [`Apu::write_register`] for $4000-$4013, $4015, $4017 and [`Apu::read_status`]
//!   for $4015;
//! - [`Apu::irq_line`] (frame counter or DMC IRQ) is sampled by the CPU at the end of each cycle;
//! - the DMC asks for sample bytes through [`Apu::dmc_wants_dma`] / [`Apu::dmc_dma_address`]; the bus's
//!   DMA unit answers with [`Apu::dmc_dma_complete`].
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
pub mod triangle;

use bytemuck::{Pod, Zeroable};

use crate::bus::is_get_cycle;
use dmc::Dmc;
use frame_counter::FrameCounter;
use noise::Noise;
use output::AudioOutput;
use pulse::Pulse;
use triangle::Triangle;

/// All mutable state of the APU, in one plain-old-data block.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Pod, Zeroable)]
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

const _: () = assert!(core::mem::size_of::<ApuState>() == 138);

/// The APU.
#[derive(Debug, Clone)]
pub struct Apu {
    state: ApuState,
    /// Audio output; `None` (the default) costs nothing per cycle.
    output: Option<Box<AudioOutput>>,
    /// True when a register write (or a restore) may have left a length counter write to apply on
    /// the next cycle. Not state: applying settled counters changes nothing, so this only skips work.
    length_writes_pending: bool,
}

impl Default for Apu {
    fn default() -> Self {
        Self::new()
    }
}

impl Apu {
    /// An APU at power-on: all registers zero, noise shift register 1, frame counter as if $00 had
    /// been written to $4017 just before the CPU's reset sequence; audio output disabled.
    pub fn new() -> Self {
        let state = ApuState {
            pulse: [Pulse::new(true), Pulse::new(false)],
            noise: Noise::new(),
            dmc: Dmc::new(),
            frame_counter: FrameCounter::new(),
            ..ApuState::default()
        };
        Apu { state, output: None, length_writes_pending: true }
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
    }

    /// The emulated state.
    pub fn state(&self) -> &ApuState {
        &self.state
    }

    /// The state as bytes (138, no padding), for snapshots and hashing. Stable within a format
    /// version: the layout is [`ApuState`]'s `#[repr(C)]` field order.
    pub fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(&self.state)
    }

    /// The state as mutable bytes, to restore a snapshot. Any byte pattern is accepted without
    /// panicking (indexes into tables are masked where used); there are no derived caches to rebuild.
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        self.length_writes_pending = true;
        bytemuck::bytes_of_mut(&mut self.state)
    }

    /// One CPU cycle; `cpu_cycle` is the number of the cycle now running (its parity is the APU's
    /// get/put phase).
    #[inline]
    pub fn tick_cpu_cycle(&mut self, cpu_cycle: u64) {
        let get = is_get_cycle(cpu_cycle);
        let s = &mut self.state;
        let clocks = s.frame_counter.tick(get);
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
        if get {
            s.dmc.clock_timer();
        } else {
            s.pulse[0].clock_timer();
            s.pulse[1].clock_timer();
            s.noise.clock_timer();
        }
        s.dmc.tick_load_delay();

        if let Some(output) = self.output.as_deref_mut() {
            output.push_cycle(self.state.levels());
        }
    }

    /// A CPU write of $4000-$4013, $4015 or $4017 on cycle `cpu_cycle` (other addresses are ignored).
    pub fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) {
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
    }

    fn write_status(&mut self, value: u8, get_cycle: bool) {
        self.length_writes_pending = true;
        let s = &mut self.state;
        s.pulse[0].length.set_enabled(value & 0x01 != 0);
        s.pulse[1].length.set_enabled(value & 0x02 != 0);
        s.triangle.length.set_enabled(value & 0x04 != 0);
        s.noise.length.set_enabled(value & 0x08 != 0);
        s.dmc.write_enable(value & 0x10 != 0, get_cycle);
    }

    /// A CPU read of $4015: the status byte (bit 5 is not driven; the caller fills it from open bus).
    /// Clears the frame interrupt flag, unless the flag is being set on this very cycle.
    pub fn read_status(&mut self) -> u8 {
        let status = self.peek_status();
        self.state.frame_counter.acknowledge_read();
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
        self.state.frame_counter.irq_flag != 0 || self.state.dmc.irq_flag != 0
    }

    /// True while the DMC needs a sample byte fetched by DMA: its buffer is empty, bytes remain, and
    /// the delay of a "load" DMA after a $4015 write has passed. Goes false if $4015 stops the sample.
    #[inline]
    pub fn dmc_wants_dma(&self) -> bool {
        self.state.dmc.wants_dma()
    }

    /// The address of the sample byte the DMC wants.
    #[inline]
    pub fn dmc_dma_address(&self) -> u16 {
        self.state.dmc.current_address
    }

    /// The DMA unit fetched the sample byte the DMC asked for.
    pub fn dmc_dma_complete(&mut self, value: u8) {
        self.state.dmc.dma_complete(value);
    }

    /// Enables audio output at `sample_rate` Hz (allocating its ring of a quarter second), or disables
    /// it with `None`. Changing the rate discards samples not yet drained.
    pub fn set_output_sample_rate(&mut self, sample_rate: Option<u32>) {
        self.output = sample_rate.map(|rate| Box::new(AudioOutput::new(rate)));
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
        assert_eq!(apu.read_status() & 0x40, 0x40);
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
            apu.dmc_dma_complete(0xAA);
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
                apu.dmc_dma_complete(0x00);
            }
        }
        assert!(rises > 10);
    }

    #[test]
    fn audio_output_pulse_frequency() {
        let mut apu = Apu::new();
        apu.set_output_sample_rate(Some(48_000));
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
            apu.set_output_sample_rate(Some(44_100));
            apu.state_bytes_mut().fill(fill);
            run(&mut apu, 1, 100_000);
            let _ = apu.read_status();
            let mut copy = Apu::new();
            copy.state_bytes_mut().copy_from_slice(apu.state_bytes());
            assert_eq!(copy.state(), apu.state());
        }
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
