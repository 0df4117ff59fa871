//! The delta modulation channel: sample playback fed by DMA (nesdev "APU DMC", "DMA").

/// NTSC output periods in CPU cycles, indexed by bits 3-0 of $4010.
pub const DMC_RATES: [u16; 16] =
    [428, 380, 340, 320, 286, 254, 226, 214, 190, 160, 142, 128, 106, 84, 72, 54];

crate::state::state_struct! {
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
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<Dmc>() == 20);

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

    /// The DMC bit of a $4015 write; `get_cycle` is the phase of the cycle it happens on.
    pub fn write_enable(&mut self, enabled: bool, get_cycle: bool) {
        self.irq_flag = 0;
        if !enabled {
            self.bytes_remaining = 0;
            self.load_delay = 0;
        } else if self.bytes_remaining == 0 {
            self.restart();
            if self.buffer_full == 0 {
                // nesdev "DMA": the load DMA attempts to halt on the get cycle of the second APU
                // cycle after the write; the bus halts one cycle after it sees the request.
                self.load_delay = if get_cycle { 3 } else { 2 };
            }
        }
    }

    fn restart(&mut self) {
        self.current_address = 0xC000 | (u16::from(self.sample_address) << 6);
        self.bytes_remaining = (u16::from(self.sample_length) << 4) + 1;
    }

    /// One CPU cycle of the load-DMA delay.
    #[inline]
    pub fn tick_load_delay(&mut self) {
        if self.load_delay != 0 {
            self.load_delay -= 1;
        }
    }

    /// True while the sample buffer is empty, bytes remain, and no load delay is pending.
    #[inline]
    pub fn wants_dma(&self) -> bool {
        self.buffer_full == 0 && self.bytes_remaining != 0 && self.load_delay == 0
    }

    /// The DMA unit delivered the sample byte at `current_address`.
    pub fn dma_complete(&mut self, value: u8) {
        self.sample_buffer = value;
        self.buffer_full = 1;
        // The address wraps from $FFFF to $8000.
        self.current_address = self.current_address.wrapping_add(1) | 0x8000;
        self.bytes_remaining = self.bytes_remaining.saturating_sub(1);
        if self.bytes_remaining == 0 {
            if self.loop_flag != 0 {
                self.restart();
            } else if self.irq_enabled != 0 {
                self.irq_flag = 1;
            }
        }
    }

    /// One APU cycle of the timer.
    #[inline]
    pub fn clock_timer(&mut self) {
        if self.timer_counter != 0 {
            self.timer_counter -= 1;
            return;
        }
        self.timer_counter = self.reload();
        self.output_bit();
    }

    /// The timer's reload value: half the rate's period in CPU cycles (it counts APU cycles), minus one.
    fn reload(&self) -> u16 {
        DMC_RATES[usize::from(self.rate_index & 0x0F)] / 2 - 1
    }

    /// `clocks` APU cycles of the timer at once (exactly `clocks` calls of [`Dmc::clock_timer`]).
    #[inline]
    pub fn advance_timer(&mut self, clocks: u64) {
        let reload = self.reload();
        let bits = super::timer::advance(&mut self.timer_counter, reload, clocks);
        for _ in 0..bits {
            self.output_bit();
        }
    }

    /// Timer clocks until the sample buffer empties into the shift register (the moment a reload DMA
    /// may be wanted), when it is full now.
    pub fn clocks_until_buffer_empties(&self) -> Option<u64> {
        (self.buffer_full != 0).then(|| {
            // The buffer moves to the shift register at the output bit that leaves none remaining.
            let bits = u64::from(self.bits_remaining.max(1));
            super::timer::clocks_until_reload(self.timer_counter, self.reload(), bits)
        })
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

    #[test]
    fn sample_address_and_length() {
        let mut dmc = Dmc::new();
        dmc.write_register(2, 0xFF);
        dmc.write_register(3, 0x01);
        dmc.write_enable(true, true);
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
        dmc.write_enable(true, false);
        assert!(!dmc.wants_dma());
        dmc.tick_load_delay();
        assert!(!dmc.wants_dma());
        dmc.tick_load_delay();
        assert!(dmc.wants_dma());
    }

    #[test]
    fn irq_at_end_of_sample_only_without_loop() {
        let mut dmc = Dmc::new();
        dmc.write_register(0, 0x80);
        dmc.write_enable(true, true);
        dmc.dma_complete(0x55);
        assert_eq!(dmc.irq_flag, 1);
        let mut dmc = Dmc::new();
        dmc.write_register(0, 0xC0);
        dmc.write_enable(true, true);
        dmc.dma_complete(0x55);
        assert_eq!(dmc.irq_flag, 0);
        assert_eq!(dmc.bytes_remaining, 1);
    }
}
