//! The delta modulation channel: sample playback fed by DMA (nesdev "APU DMC", "DMA").

crate::layout::state_struct! {
    /// The DMC: timer, output unit (shift register, bit counter, 7-bit level), one-byte sample buffer and
    /// memory reader (address, bytes remaining).
    ///
    /// The timer runs on the first half of APU cycles (DMA "get" cycles), so a buffer emptied at the start
    /// of an output cycle raises its "reload" DMA request in time for the DMA to halt the CPU on the
    /// following put cycle (nesdev "DMA": reload DMAs attempt to halt on put cycles).
    pub struct Dmc {
        /// Address of the next sample byte ($8000-$FFFF).
        pub current_address: u16,
        /// Sample bytes still to fetch.
        pub bytes_remaining: u16,
        /// The timer's count (in APU cycles) down to the next output bit.
        pub timer_counter: u16,
        /// $4012: the sample starts at $C000 + 64 * value.
        pub sample_address: u8,
        /// $4013: the sample is 16 * value + 1 bytes long.
        pub sample_length: u8,
        /// Rate index (bits 3-0 of $4010).
        pub rate_index: u8,
        /// 1 when the end of a non-looping sample raises the DMC interrupt.
        pub irq_enabled: u8,
        /// 1 when the sample restarts at its end.
        pub loop_flag: u8,
        /// The DMC interrupt flag.
        pub irq_flag: u8,
        /// The 7-bit output level.
        pub output_level: u8,
        /// The output unit's shift register.
        pub shift_register: u8,
        /// Bits left in the current output cycle (1-8).
        pub bits_remaining: u8,
        /// 1 when the current output cycle is silent (the buffer was empty when it started).
        pub silence: u8,
        /// The sample buffer.
        pub sample_buffer: u8,
        /// 1 while the sample buffer holds a byte.
        pub buffer_full: u8,
        /// CPU cycles until the "load" DMA requested by a $4015 write may start (0 = none pending).
        pub load_delay: u8,
        /// 1 while the DMC is enabled as the DMA unit sees it: bit 4 of $4015, applied
        /// `status_delay` cycles after the write; cleared at the end of a sample that does not loop.
        pub enabled: u8,
        /// The enable bit of the last $4015 write, while it waits to be applied.
        pub enable_pending: u8,
        /// CPU cycles until `enable_pending` is applied (0 = nothing pending).
        pub status_delay: u8,
        /// The "implicit abort" (see `IMPLICIT_ARMED`, `IMPLICIT_ACTIVE`; 0 = none).
        pub implicit_abort: u8,
        /// CPU cycles until a disabling $4015 write written as the timer fired empties the sample
        /// (what $4015 bit 4 reads) ahead of `status_delay`, which the DMA begun there waits for
        /// (0 = none: the sample empties with `status_delay`). Formerly a reserved zero byte.
        pub length_clear_delay: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 2],
    }
}

const _: () = assert!(core::mem::size_of::<Dmc>() == 26);

/// `implicit_abort`: a $4015 write enabled the DMC four timer clocks before an output cycle ends.
pub const IMPLICIT_ARMED: u8 = 1;
/// `implicit_abort`: that output cycle ended on this cycle: the DMA unit sees a request (for the
/// next cycle only, see [`Dmc::wants_dma`]).
pub const IMPLICIT_ACTIVE: u8 = 2;

impl Dmc {
    /// The DMC at power-on: an output cycle of 8 silent bits in progress.
    pub fn new() -> Dmc {
        Dmc { bits_remaining: 8, silence: 1, ..Dmc::default() }
    }

    /// A CPU write of $4010-$4013 (`index` 0-3).
    pub fn write_register(&mut self, index: u16, value: u8) {
        match index {
            0 => {
                self.irq_enabled = value >> 7;
                self.loop_flag = (value >> 6) & 1;
                self.rate_index = value & 0x0F;
                if self.irq_enabled == 0 {
                    self.irq_flag = 0;
                }
            }
            1 => self.output_level = value & 0x7F,
            2 => self.sample_address = value,
            _ => self.sample_length = value,
        }
    }

    /// The DMC bit of a $4015 write; `get_cycle` is the phase of the cycle it happens on (the tick of
    /// this cycle has run).
    ///
    /// The bit reaches the DMA unit (`enabled`) 2 cycles after a write on a put cycle, 3 after one on
    /// a get cycle: a reload DMA that comes due in between waits for it, so enabling 2, 1 or 0 cycles
    /// before the output cycle ends delays that DMA by 1, 2 or 3 cycles (AccuracyCoin "Delta
    /// Modulation Channel" errors L-N), and disabling during a DMA aborts it once the bit arrives
    /// ("Explicit DMA Abort"), except when written on the cycle the timer fires (or the put cycle
    /// after it), which gives the DMA begun there one more APU cycle. Disabling empties the sample
    /// when applied; enabling a finished one restarts it at once, with a "load" DMA when the buffer
    /// is empty (nesdev "DMA": on the get cycle of the second APU cycle after the write).
    /// Enabling four timer clocks before an output cycle ends arms the "implicit abort": that cycle's
    /// end requests a DMA for one cycle whatever the buffer ("Implicit DMA Abort").
    /// The sample itself (bytes remaining, $4015 bit 4) empties after the ordinary 3 or 2 cycles in
    /// every case, the DMA held past it included: a read 4 cycles after the write sees it stopped
    /// (nesdev "APU" $4015: bit 4 clear sets bytes remaining to 0; AccuracyCoin "Delta Modulation
    /// Channel" error 5 at every alignment).
    pub fn write_enable(&mut self, enabled: bool, get_cycle: bool, rates: &[u16; 16]) {
        self.irq_flag = 0;
        self.enable_pending = u8::from(enabled);
        let fired_now = self.timer_counter == self.reload(rates);
        self.status_delay = match (enabled, fired_now, get_cycle) {
            (false, true, true) => 5,
            (false, true, false) => 4,
            (_, _, true) => 3,
            (_, _, false) => 2,
        };
        self.length_clear_delay = match (enabled, fired_now, get_cycle) {
            (false, true, true) => 3,
            (false, true, false) => 2,
            _ => 0,
        };
        if enabled && self.bytes_remaining == 0 {
            self.restart();
            if self.buffer_full == 0 {
                // nesdev "DMA": the load DMA attempts to halt on the get cycle of the second APU
                // cycle after the write; the bus halts one cycle after it sees the request.
                self.load_delay = if get_cycle { 3 } else { 2 };
            }
        }
        if enabled && self.timer_counter == 3 {
            self.implicit_abort = IMPLICIT_ARMED;
        }
    }

    /// Stops the DMC at once, with nothing pending (the reset button).
    pub fn disable_now(&mut self) {
        self.enabled = 0;
        self.enable_pending = 0;
        self.status_delay = 0;
        self.length_clear_delay = 0;
        self.load_delay = 0;
        self.implicit_abort = 0;
        self.bytes_remaining = 0;
    }

    /// One CPU cycle of the $4015 write's delay and of the implicit abort's request.
    #[inline]
    pub fn tick_delays(&mut self) {
        if self.load_delay != 0 {
            self.load_delay -= 1;
        }
        if self.length_clear_delay != 0 {
            self.length_clear_delay -= 1;
            if self.length_clear_delay == 0 {
                self.bytes_remaining = 0;
            }
        }
        if self.status_delay != 0 {
            self.status_delay -= 1;
            if self.status_delay == 0 {
                self.enabled = self.enable_pending;
                if self.enabled == 0 {
                    self.bytes_remaining = 0;
                }
            }
        }
    }

    /// The start of a CPU cycle's tick: an implicit-abort request lasts one cycle.
    #[inline]
    pub fn expire_implicit_abort(&mut self) {
        if self.implicit_abort == IMPLICIT_ACTIVE {
            self.implicit_abort = 0;
        }
    }

    /// True while a $4015 write's effects are pending (the APU must tick cycle by cycle).
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.load_delay == 0 && self.status_delay == 0 && self.implicit_abort != IMPLICIT_ACTIVE
    }

    fn restart(&mut self) {
        self.current_address = 0xC000 | (u16::from(self.sample_address) << 6);
        self.bytes_remaining = (u16::from(self.sample_length) << 4) + 1;
    }

    /// True while the DMA unit must fetch: the sample buffer is empty, bytes remain (or the sample
    /// was emptied by a disabling write the DMA unit has not seen yet: `length_clear_delay`), no load
    /// delay is pending and the DMC is enabled as the DMA unit sees it; or an implicit abort requests
    /// its one-cycle DMA.
    #[inline]
    pub fn wants_dma(&self) -> bool {
        let disabling = self.enable_pending == 0 && self.status_delay != 0;
        (self.buffer_full == 0
            && (self.bytes_remaining != 0 || disabling)
            && self.load_delay == 0
            && self.enabled != 0)
            || self.implicit_abort == IMPLICIT_ACTIVE
    }

    /// The DMA unit delivered the sample byte at `current_address`.
    pub fn dma_complete(&mut self, value: u8) {
        self.sample_buffer = value;
        self.buffer_full = 1;
        // A request the timer raised on the cycle of this fetch is dropped (TriCNES, the AccuracyCoin
        // author's emulator: no DMC DMA right after another; "Implicit DMA Abort" error 4).
        if self.implicit_abort == IMPLICIT_ACTIVE {
            self.implicit_abort = 0;
        }
        // The address wraps from $FFFF to $8000.
        self.current_address = self.current_address.wrapping_add(1) | 0x8000;
        if self.bytes_remaining == 0 {
            // A DMA held past the sample's emptying by a disabling write (`length_clear_delay`):
            // the sample was stopped, not ended: no loop, no interrupt.
            return;
        }
        self.bytes_remaining -= 1;
        if self.bytes_remaining == 0 {
            if self.loop_flag != 0 {
                self.restart();
            } else {
                self.enabled = 0;
                if self.irq_enabled != 0 {
                    self.irq_flag = 1;
                }
            }
        }
    }

    /// One APU cycle of the timer.
    #[inline]
    pub fn clock_timer(&mut self, rates: &[u16; 16]) {
        if self.timer_counter != 0 {
            self.timer_counter -= 1;
            return;
        }
        self.timer_counter = self.reload(rates);
        self.output_bit();
    }

    /// The timer's reload value: half the rate's period in CPU cycles (it counts APU cycles), minus
    /// one; `rates` is the region's table ([`crate::region::ApuTiming::dmc_rates`]).
    fn reload(&self, rates: &[u16; 16]) -> u16 {
        rates[usize::from(self.rate_index & 0x0F)] / 2 - 1
    }

    /// `clocks` APU cycles of the timer at once (exactly `clocks` calls of [`Dmc::clock_timer`]).
    #[inline]
    pub fn advance_timer(&mut self, clocks: u64, rates: &[u16; 16]) {
        let reload = self.reload(rates);
        let bits = super::timer::advance(&mut self.timer_counter, reload, clocks);
        for _ in 0..bits {
            self.output_bit();
        }
    }

    /// Timer clocks until the sample buffer empties into the shift register (the moment a reload DMA
    /// may be wanted), when it is full now.
    pub fn clocks_until_buffer_empties(&self, rates: &[u16; 16]) -> Option<u64> {
        (self.buffer_full != 0).then(|| self.clocks_until_output_cycle_ends(rates))
    }

    /// Timer clocks until the output bit that leaves no bits remaining (where the buffer moves to the
    /// shift register and an armed implicit abort requests its DMA).
    pub fn clocks_until_output_cycle_ends(&self, rates: &[u16; 16]) -> u64 {
        let bits = u64::from(self.bits_remaining.max(1));
        super::timer::clocks_until_reload(self.timer_counter, self.reload(rates), bits)
    }

    /// The end of an output cycle's bit: the level moves by 2 unless silenced, the shift register
    /// shifts, and after the eighth bit the buffer (if full) becomes the next byte to play.
    fn output_bit(&mut self) {
        if self.silence == 0 {
            if self.shift_register & 1 != 0 {
                if self.output_level <= 125 {
                    self.output_level += 2;
                }
            } else if self.output_level >= 2 {
                self.output_level -= 2;
            }
        }
        self.shift_register >>= 1;
        self.bits_remaining = self.bits_remaining.saturating_sub(1);
        if self.bits_remaining == 0 {
            self.bits_remaining = 8;
            if self.implicit_abort == IMPLICIT_ARMED {
                self.implicit_abort = IMPLICIT_ACTIVE;
            }
            if self.buffer_full != 0 {
                self.silence = 0;
                self.shift_register = self.sample_buffer;
                self.buffer_full = 0;
            } else {
                self.silence = 1;
            }
        }
    }

    /// The channel's output level (0-127).
    #[inline]
    pub fn output(&self) -> u8 {
        self.output_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::NTSC;

    #[test]
    fn sample_address_and_length() {
        let mut dmc = Dmc::new();
        dmc.write_register(2, 0xFF);
        dmc.write_register(3, 0x01);
        dmc.write_enable(true, true, &NTSC.apu.dmc_rates);
        assert_eq!(dmc.enabled, 0, "applied three cycles later");
        assert_eq!(dmc.current_address, 0xFFC0);
        assert_eq!(dmc.bytes_remaining, 17);
    }

    #[test]
    fn address_wraps_to_8000() {
        let mut dmc = Dmc { current_address: 0xFFFF, bytes_remaining: 2, ..Dmc::new() };
        dmc.dma_complete(0);
        assert_eq!(dmc.current_address, 0x8000);
    }

    #[test]
    fn load_dma_waits_for_the_second_apu_cycle() {
        let mut dmc = Dmc::new();
        dmc.write_enable(true, false, &NTSC.apu.dmc_rates);
        assert!(!dmc.wants_dma());
        dmc.tick_delays();
        assert!(!dmc.wants_dma());
        dmc.tick_delays();
        assert!(dmc.wants_dma());
    }

    #[test]
    fn the_enable_bit_reaches_the_dma_unit_two_or_three_cycles_later() {
        for (get_cycle, delay) in [(false, 2), (true, 3)] {
            let mut dmc = Dmc { buffer_full: 1, timer_counter: 40, ..Dmc::new() };
            dmc.write_enable(true, get_cycle, &NTSC.apu.dmc_rates);
            // The sample restarts at once (bit 4 of $4015 shows it)...
            assert_eq!(dmc.bytes_remaining, 1);
            dmc.buffer_full = 0;
            for _ in 1..delay {
                dmc.tick_delays();
                assert!(!dmc.wants_dma(), "...but the DMA unit waits for the bit");
            }
            dmc.tick_delays();
            assert!(dmc.wants_dma());
            // Disabling empties the sample only when the bit arrives.
            dmc.write_enable(false, get_cycle, &NTSC.apu.dmc_rates);
            assert!(dmc.wants_dma());
            for _ in 0..delay {
                dmc.tick_delays();
            }
            assert!(!dmc.wants_dma());
            assert_eq!(dmc.bytes_remaining, 0);
        }
    }

    #[test]
    fn disabling_on_the_cycle_the_timer_fires_takes_an_apu_cycle_longer() {
        let mut dmc = Dmc { enabled: 1, bytes_remaining: 5, ..Dmc::new() };
        dmc.timer_counter = dmc.reload(&NTSC.apu.dmc_rates);
        dmc.write_enable(false, true, &NTSC.apu.dmc_rates);
        assert_eq!(dmc.status_delay, 5);
    }

    /// AccuracyCoin "Delta Modulation Channel" error 5 reads $4015 four cycles after writing $00:
    /// the sample must read stopped at every alignment, also when the write came as the timer fired
    /// and the DMA begun there is held for one more APU cycle.
    #[test]
    fn a_disable_as_the_timer_fires_empties_the_sample_on_time_and_holds_the_dma() {
        for (get_cycle, ordinary, held) in [(true, 3, 5), (false, 2, 4)] {
            let mut dmc = Dmc { enabled: 1, bytes_remaining: 5, ..Dmc::new() };
            dmc.timer_counter = dmc.reload(&NTSC.apu.dmc_rates);
            dmc.write_enable(false, get_cycle, &NTSC.apu.dmc_rates);
            for cycle in 1..=held {
                dmc.tick_delays();
                assert_eq!(dmc.bytes_remaining == 0, cycle >= ordinary, "$4015 bit 4 after {cycle} cycles");
                assert_eq!(dmc.wants_dma(), cycle < held, "the DMA unit's request after {cycle} cycles");
            }
        }
        // A byte that DMA delivers in between is no end of the sample: no interrupt, no loop.
        let mut dmc = Dmc { enabled: 1, bytes_remaining: 5, irq_enabled: 1, ..Dmc::new() };
        dmc.timer_counter = dmc.reload(&NTSC.apu.dmc_rates);
        dmc.write_enable(false, true, &NTSC.apu.dmc_rates);
        for _ in 0..3 {
            dmc.tick_delays();
        }
        dmc.dma_complete(0x55);
        assert_eq!((dmc.irq_flag, dmc.bytes_remaining, dmc.buffer_full), (0, 0, 1));
    }

    #[test]
    fn implicit_abort_requests_one_cycle_at_the_end_of_the_output_cycle() {
        let mut dmc = Dmc { buffer_full: 1, bits_remaining: 1, timer_counter: 3, ..Dmc::new() };
        dmc.write_enable(true, false, &NTSC.apu.dmc_rates);
        assert_eq!(dmc.implicit_abort, IMPLICIT_ARMED);
        // Three timer clocks count down, the fourth ends the output cycle.
        for _ in 0..3 {
            dmc.expire_implicit_abort();
            dmc.clock_timer(&NTSC.apu.dmc_rates);
            assert_eq!(dmc.implicit_abort, IMPLICIT_ARMED);
        }
        dmc.expire_implicit_abort();
        dmc.clock_timer(&NTSC.apu.dmc_rates);
        assert!(dmc.wants_dma());
        dmc.expire_implicit_abort();
        assert_eq!(dmc.implicit_abort, 0);
    }

    #[test]
    fn irq_at_end_of_sample_only_without_loop() {
        let mut dmc = Dmc::new();
        dmc.write_register(0, 0x80);
        dmc.write_enable(true, true, &NTSC.apu.dmc_rates);
        dmc.dma_complete(0x55);
        assert_eq!(dmc.irq_flag, 1);
        assert_eq!(dmc.enabled, 0, "a finished sample disables the DMA unit's view");
        let mut dmc = Dmc::new();
        dmc.write_register(0, 0xC0);
        dmc.write_enable(true, true, &NTSC.apu.dmc_rates);
        dmc.dma_complete(0x55);
        assert_eq!(dmc.irq_flag, 0);
        assert_eq!(dmc.bytes_remaining, 1);
    }
}
