//! The MMC5's sound (nesdev "MMC5 audio"): two pulse channels and an 8-bit PCM channel.
//!
//! - Pulse 1 ($5000-$5003) and pulse 2 ($5004-$5007) are the APU's pulse channel without the sweep
//!   unit ($5001/$5005 do nothing): duty and envelope in the first register, an 11-bit timer clocked
//!   every other CPU cycle (a step every P + 1 of those, CPU / (16 (P + 1)) Hz), the length index
//!   in the fourth register's bits 3-7, whose write also restarts the envelope and the duty
//!   sequence. Periods below 8 do not silence the channel. There is no frame sequencer: the
//!   envelopes and the length counters are clocked together at a fixed 240 Hz, so the length
//!   counters run twice as fast as the APU's. The 240 Hz clock is taken as one every
//!   [`FRAME_PERIOD_CYCLES`] CPU cycles, the APU's quarter-frame spacing; the wiki does not give the
//!   divider's exact count or phase, which only a hardware test could pin.
//! - $5015: bits 0-1 enable the pulses' length counters (clear: the counter is zeroed and loads are
//!   ignored); read, they say which counters are non-zero.
//! - PCM: $5010 bit 0 selects write mode (0: $5011 writes reach the DAC) or read mode (1: every CPU
//!   read of $8000-$BFFF does), bit 7 enables the IRQ. A value of 0 leaves the DAC and trips the IRQ
//!   instead; any other value clears the trip. Reading $5010 returns the tripped-and-enabled flag in
//!   bit 7 (and the mode in bit 0) and clears the trip.
//!
//! Lazy: [`Mmc5Audio::run`] advances the chip over any number of CPU cycles, equal to single cycles
//! ([`Mmc5Audio::step_cycle`], compared in the tests).

use crate::apu::envelope::Envelope;
use crate::apu::length::LENGTH_TABLE;

/// CPU cycles between two 240 Hz clocks of the envelopes and length counters.
pub(crate) const FRAME_PERIOD_CYCLES: u16 = 7457;
/// The duty sequences of the APU's pulses (nesdev "APU Pulse"), high bit first.
const DUTY_SEQUENCES: [u8; 4] = [0b0100_0000, 0b0110_0000, 0b0111_1000, 0b1001_1111];
/// $5010 bit 0: read mode.
const PCM_READ_MODE: u8 = 0x01;
/// $5010 bit 7: IRQ enable.
const PCM_IRQ_ENABLE: u8 = 0x80;

crate::layout::state_struct! {
    /// One MMC5 pulse channel.
    pub struct Mmc5Pulse {
        /// The timer's reload value (11 bits).
        pub timer_period: u16,
        /// The timer's count (counts down once per APU cycle, reloads on the cycle after 0).
        pub timer_counter: u16,
        /// Duty 0-3 (first register bits 6-7).
        pub duty: u8,
        /// Duty sequence step, 0-7.
        pub sequence_step: u8,
        /// The length counter (0: silent).
        pub length: u8,
        /// 1 while the length counter is halted (first register bit 5).
        pub length_halt: u8,
        /// The volume envelope.
        pub envelope: Envelope,
    }
}

crate::layout::state_struct! {
    /// The MMC5's sound registers and oscillators.
    pub struct Mmc5Audio {
        /// Pulse 1 ($5000-$5003) and pulse 2 ($5004-$5007).
        pub pulse: [Mmc5Pulse; 2],
        /// CPU cycles until the next 240 Hz clock (counts down to 0, then reloads).
        pub frame_divider: u16,
        /// The PCM DAC's input.
        pub pcm: u8,
        /// $5010 as written: bit 7 IRQ enable, bit 0 read mode.
        pub pcm_control: u8,
        /// 1 after a 0 reached the DAC, until $5010 is read or a non-zero value reaches it.
        pub pcm_irq_tripped: u8,
        /// $5015 bits 0-1: the pulses' length counters enabled.
        pub length_enable: u8,
        /// 1 when the next CPU cycle clocks the pulse timers (they run every other cycle).
        pub timer_phase: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Mmc5Audio>() == 40);

impl Mmc5Pulse {
    fn write(&mut self, select: u16, value: u8, length_enabled: bool) {
        match select {
            0 => {
                self.duty = value >> 6;
                self.length_halt = (value >> 5) & 1;
                self.envelope.write_control(value);
            }
            // No sweep unit.
            1 => {}
            2 => self.timer_period = (self.timer_period & 0x0700) | u16::from(value),
            _ => {
                self.timer_period = (self.timer_period & 0x00FF) | u16::from(value & 7) << 8;
                if length_enabled {
                    self.length = LENGTH_TABLE[usize::from(value >> 3)];
                }
                self.sequence_step = 0;
                self.envelope.restart();
            }
        }
    }

    /// The 240 Hz clock: envelope and length counter.
    fn clock_frame(&mut self) {
        self.envelope.clock();
        if self.length_halt == 0 && self.length != 0 {
            self.length -= 1;
        }
    }

    /// `clocks` APU cycles of the timer.
    fn run_timer(&mut self, clocks: u64) {
        let steps = crate::apu::timer::advance(&mut self.timer_counter, self.timer_period, clocks);
        self.sequence_step = ((u64::from(self.sequence_step) + steps) & 7) as u8;
    }

    /// The channel's output, 0-15.
    fn output(&self) -> u8 {
        let high = DUTY_SEQUENCES[usize::from(self.duty & 3)] & (0x80 >> (self.sequence_step & 7)) != 0;
        if high && self.length != 0 { self.envelope.output() } else { 0 }
    }
}

impl Mmc5Audio {
    /// The chip at power-on: silent, the 240 Hz divider at the start of its count.
    pub fn power_on() -> Self {
        Mmc5Audio { frame_divider: FRAME_PERIOD_CYCLES - 1, ..Mmc5Audio::default() }
    }

    /// A CPU write of $5000-$5015 (`addr`).
    pub fn write(&mut self, addr: u16, value: u8) {
        match addr {
            0x5000..=0x5007 => {
                let channel = usize::from(addr >> 2) & 1;
                let enabled = self.length_enable & (1 << channel) != 0;
                self.pulse[channel].write(addr & 3, value, enabled);
            }
            0x5010 => self.pcm_control = value & (PCM_IRQ_ENABLE | PCM_READ_MODE),
            0x5011 if self.pcm_control & PCM_READ_MODE == 0 => self.dac_input(value),
            0x5015 => {
                self.length_enable = value & 3;
                for (channel, pulse) in self.pulse.iter_mut().enumerate() {
                    if value & (1 << channel) == 0 {
                        pulse.length = 0;
                    }
                }
            }
            _ => {}
        }
    }

    /// A value reaching the PCM DAC: 0 trips the IRQ and leaves the DAC, any other value is output.
    fn dac_input(&mut self, value: u8) {
        if value == 0 {
            self.pcm_irq_tripped = 1;
        } else {
            self.pcm = value;
            self.pcm_irq_tripped = 0;
        }
    }

    /// True in PCM read mode: CPU reads of $8000-$BFFF feed the DAC ([`Mmc5Audio::cpu_read`]).
    pub fn pcm_reads(&self) -> bool {
        self.pcm_control & PCM_READ_MODE != 0
    }

    /// The CPU read `value` from `addr` in $8000-$FFFF: in read mode, $8000-$BFFF feeds the DAC.
    pub fn cpu_read(&mut self, addr: u16, value: u8) {
        if self.pcm_reads() && (0x8000..0xC000).contains(&addr) {
            self.dac_input(value);
        }
    }

    /// What a read of $5010 or $5015 returns (`None` for the other addresses: open bus).
    pub fn peek(&self, addr: u16) -> Option<u8> {
        match addr {
            0x5010 => Some(u8::from(self.irq_line()) << 7 | (self.pcm_control & PCM_READ_MODE)),
            0x5015 => Some(u8::from(self.pulse[0].length != 0) | u8::from(self.pulse[1].length != 0) << 1),
            _ => None,
        }
    }

    /// A read of $5010 acknowledges the PCM IRQ.
    pub fn read(&mut self, addr: u16) {
        if addr == 0x5010 {
            self.pcm_irq_tripped = 0;
        }
    }

    /// The PCM IRQ's contribution to /IRQ.
    pub fn irq_line(&self) -> bool {
        self.pcm_irq_tripped != 0 && self.pcm_control & PCM_IRQ_ENABLE != 0
    }

    /// CPU cycles until the next 240 Hz clock changes what $5015 reads (`None` while no length
    /// counter runs, so none can).
    pub fn cycles_to_status_change(&self) -> Option<u64> {
        let counting = self.pulse.iter().any(|p| p.length != 0 && p.length_halt == 0);
        counting.then(|| u64::from(self.frame_divider) + 1)
    }

    /// The pulses' output sum (0-30) and the PCM DAC's input (0-255).
    pub fn levels(&self) -> (u8, u8) {
        // Wrapping: each output is 0-15 in any state a run reaches, not in a forged snapshot's.
        (self.pulse[0].output().wrapping_add(self.pulse[1].output()), self.pcm)
    }

    /// Runs the chip over `cycles` CPU cycles: the pulse timers on every other cycle, the 240 Hz
    /// clocks in between, in closed form between those.
    pub fn run(&mut self, mut cycles: u64) {
        while cycles > 0 {
            // Up to and including the next 240 Hz clock, or all that is left.
            let span = cycles.min(u64::from(self.frame_divider) + 1);
            let phase = u64::from(self.timer_phase & 1);
            let timer_clocks = (span + phase) / 2;
            self.timer_phase = ((phase + span) & 1) as u8;
            for pulse in &mut self.pulse {
                pulse.run_timer(timer_clocks);
            }
            if span > u64::from(self.frame_divider) {
                self.frame_divider = FRAME_PERIOD_CYCLES - 1;
                for pulse in &mut self.pulse {
                    pulse.clock_frame();
                }
            } else {
                self.frame_divider -= span as u16;
            }
            cycles -= span;
        }
    }

    /// One CPU cycle: the definition [`Mmc5Audio::run`] must equal.
    #[cfg(test)]
    pub(super) fn step_cycle(&mut self) {
        if self.timer_phase & 1 != 0 {
            for pulse in &mut self.pulse {
                pulse.run_timer(1);
            }
        }
        self.timer_phase = (self.timer_phase & 1) ^ 1;
        if self.frame_divider == 0 {
            self.frame_divider = FRAME_PERIOD_CYCLES - 1;
            for pulse in &mut self.pulse {
                pulse.clock_frame();
            }
        } else {
            self.frame_divider -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    /// The cycles between rises of the pulses' level, over `cycles` single cycles.
    fn rise_intervals(audio: &mut Mmc5Audio, cycles: u64) -> Vec<u64> {
        let mut rises = Vec::new();
        let mut previous = audio.levels().0;
        for cycle in 0..cycles {
            audio.step_cycle();
            let level = audio.levels().0;
            if level > previous {
                rises.push(cycle);
            }
            previous = level;
        }
        rises.windows(2).map(|pair| pair[1] - pair[0]).collect()
    }

    /// Pulse `channel` at constant volume 15, duty 2, length halted, period `period`.
    fn tone(channel: u16, period: u16) -> Mmc5Audio {
        let mut audio = Mmc5Audio::power_on();
        audio.write(0x5015, 0x03);
        let base = 0x5000 + 4 * channel;
        audio.write(base, 0xBF);
        audio.write(base + 2, period as u8);
        audio.write(base + 3, (period >> 8) as u8 | 0x08);
        audio
    }

    #[test]
    fn a_pulse_rises_every_16_times_its_period_plus_one() {
        // nesdev "APU Pulse": f = CPU / (16 (t + 1)); the timer runs every other CPU cycle.
        for (channel, period) in [(0, 253), (1, 0x7FF), (0, 3)] {
            let mut audio = tone(channel, period);
            let intervals = rise_intervals(&mut audio, 200_000);
            assert!(intervals.len() >= 5, "period {period}");
            let expected = 16 * (u64::from(period) + 1);
            assert!(intervals.iter().all(|&n| n == expected), "period {period}: {intervals:?}");
        }
    }

    #[test]
    fn periods_below_8_still_sound() {
        // Unlike the APU's pulses (nesdev "MMC5 audio"): period 3 is a 64-cycle square wave.
        let mut audio = tone(1, 3);
        assert!(rise_intervals(&mut audio, 1000).iter().all(|&n| n == 64));
    }

    #[test]
    fn length_counters_run_at_240_hz_and_show_in_5015() {
        // Length index 3 loads 2: two 240 Hz clocks silence the channel.
        let mut audio = Mmc5Audio::power_on();
        audio.write(0x5015, 0x01);
        audio.write(0x5000, 0x1F); // counting, constant volume 15
        audio.write(0x5003, 3 << 3);
        audio.write(0x5007, 3 << 3); // pulse 2 not enabled: no load
        assert_eq!(audio.peek(0x5015), Some(0x01));
        let mut cleared_at = None;
        for cycle in 1..=3 * u64::from(FRAME_PERIOD_CYCLES) {
            audio.step_cycle();
            if cleared_at.is_none() && audio.peek(0x5015) == Some(0) {
                cleared_at = Some(cycle);
            }
        }
        assert_eq!(cleared_at, Some(2 * u64::from(FRAME_PERIOD_CYCLES)));
        // Halted, the counter holds; a $5015 disable clears it.
        audio.write(0x5000, 0x3F);
        audio.write(0x5003, 0x08); // index 1: 254
        audio.run(10 * u64::from(FRAME_PERIOD_CYCLES));
        assert_eq!(audio.pulse[0].length, 254);
        audio.write(0x5015, 0x00);
        assert_eq!(audio.peek(0x5015), Some(0));
    }

    #[test]
    fn the_envelope_decays_at_240_hz() {
        // Envelope period 0: the decay level falls by one at every clock after the restart.
        let mut audio = Mmc5Audio::power_on();
        audio.write(0x5015, 0x01);
        audio.write(0x5000, 0xA0); // duty 2, halt, envelope period 0
        audio.write(0x5003, 0x08);
        audio.run(u64::from(FRAME_PERIOD_CYCLES));
        assert_eq!(audio.pulse[0].envelope.output(), 15);
        audio.run(5 * u64::from(FRAME_PERIOD_CYCLES));
        assert_eq!(audio.pulse[0].envelope.output(), 10);
    }

    #[test]
    fn pcm_write_mode_and_the_zero_irq() {
        let mut audio = Mmc5Audio::power_on();
        audio.write(0x5011, 0xC0);
        assert_eq!(audio.levels().1, 0xC0);
        audio.write(0x5010, 0x80); // IRQ enabled, write mode
        audio.write(0x5011, 0x00);
        assert_eq!(audio.levels().1, 0xC0, "0 leaves the DAC");
        assert!(audio.irq_line());
        assert_eq!(audio.peek(0x5010), Some(0x80));
        audio.read(0x5010);
        assert!(!audio.irq_line(), "reading $5010 acknowledges");
        // PRG reads do nothing in write mode.
        audio.cpu_read(0x8000, 0x00);
        assert!(!audio.irq_line());
    }

    #[test]
    fn pcm_read_mode_takes_reads_of_8000_to_bfff() {
        let mut audio = Mmc5Audio::power_on();
        audio.write(0x5010, 0x81);
        audio.write(0x5011, 0x55);
        assert_eq!(audio.levels().1, 0, "$5011 ignored in read mode");
        audio.cpu_read(0xC000, 0x77);
        assert_eq!(audio.levels().1, 0, "$C000-$FFFF not taken");
        audio.cpu_read(0xBFFF, 0x77);
        assert_eq!(audio.levels().1, 0x77);
        assert!(!audio.irq_line());
        audio.cpu_read(0x8123, 0x00);
        assert_eq!(audio.levels().1, 0x77);
        assert!(audio.irq_line());
        assert_eq!(audio.peek(0x5010), Some(0x81));
        audio.cpu_read(0x8124, 0x01);
        assert!(!audio.irq_line(), "a non-zero value clears the trip");
    }

    #[test]
    fn closed_form_equals_single_cycles_under_random_writes() {
        let mut seed = 0x5A5D_u64;
        let mut lazy = Mmc5Audio::power_on();
        let mut stepped = lazy;
        let mut ran = 0u64;
        for cycle in 1..400_000u64 {
            stepped.step_cycle();
            let roll = next(&mut seed) % 256;
            if roll < 6 {
                lazy.run(cycle - ran);
                ran = cycle;
                assert_eq!(lazy, stepped, "cycle {cycle}");
                if roll < 3 {
                    let r = next(&mut seed);
                    let addr = [0x5000, 0x5002, 0x5003, 0x5004, 0x5006, 0x5007, 0x5015][(r % 7) as usize];
                    // Short periods, so the timers wrap often between catch-ups.
                    let value = match addr {
                        0x5002 | 0x5006 => (r >> 16) as u8 & 0x3F,
                        0x5003 | 0x5007 => (r >> 16) as u8 & 0xF8,
                        _ => (r >> 16) as u8,
                    };
                    lazy.write(addr, value);
                    stepped.write(addr, value);
                }
            }
        }
        lazy.run(400_000 - 1 - ran);
        assert_eq!(lazy, stepped);
    }
}
