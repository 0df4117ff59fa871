//! The frame counter (frame sequencer): quarter- and half-frame clocks and the frame interrupt
//! (nesdev "APU Frame Counter").

use crate::region::FrameSteps;

/// True if no step of either sequence lies in `cycle`'s block of 128 cycles.
#[inline(always)]
fn no_step_near(cycle: u16, steps: &FrameSteps) -> bool {
    let block = usize::from(cycle >> 7);
    steps.blocks[block / 64] & (1 << (block % 64)) == 0
}

/// The clock signals one cycle of the frame counter produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FrameClocks {
    /// Envelopes and the triangle's linear counter.
    pub quarter: bool,
    /// Length counters and sweep units.
    pub half: bool,
}

crate::layout::state_struct! {
    /// The frame counter.
    pub struct FrameCounter {
        /// CPU cycles since the sequence (re)started.
        pub cycle: u16,
        /// 0 = 4-step sequence, 1 = 5-step sequence.
        pub mode: u8,
        /// 1 when the frame interrupt is inhibited (bit 6 of $4017).
        pub irq_inhibit: u8,
        /// The frame interrupt flag.
        pub irq_flag: u8,
        /// The last value written to $4017 (a reset rewrites it).
        pub last_write: u8,
        /// CPU cycles until the last $4017 write restarts the sequence (0 = none pending).
        pub write_delay: u8,
        /// 1 when the next cycle must schedule a restart as if $4017 had been written three cycles earlier
        /// (power-on and reset, whose cycle number the APU does not know).
        pub restart_on_next_cycle: u8,
        /// 1 after a $4015 read, until the next get cycle clears the interrupt flag.
        pub clear_pending: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: u8,
    }
}

const _: () = assert!(core::mem::size_of::<FrameCounter>() == 10);

impl FrameCounter {
    /// The frame counter at power-on: as if $00 had been written to $4017 three cycles before the first
    /// cycle, 10 or 11 cycles before the first instruction (blargg's apu_reset 4017_timing: "as if $00
    /// were written to $4017, then a 9-12 clock delay, then execution from the reset vector").
    pub fn new() -> FrameCounter {
        FrameCounter { restart_on_next_cycle: 1, ..FrameCounter::default() }
    }

    /// A CPU write of $4017; `get_cycle` is the phase of the cycle it happens on.
    pub fn write(&mut self, value: u8, get_cycle: bool) {
        self.last_write = value;
        self.irq_inhibit = (value >> 6) & 1;
        if self.irq_inhibit != 0 {
            self.irq_flag = 0;
        }
        // The sequencer restarts 3 or 4 CPU cycles after the write, always at the start of an APU
        // cycle (a get cycle), so its half-cycle steps land on put cycles (nesdev "APU Frame
        // Counter"; apu_test 4-jitter). The opposite phase fails cpu_interrupts_v2 4-irq_and_dma,
        // which times the frame IRQ against sprite DMA's get/put alignment.
        self.write_delay = if get_cycle { 4 } else { 3 };
    }

    /// The reset button: the interrupt flag clears and the frame counter behaves as after a write of
    /// its last value, timed as at power-on (apu_reset irq_flag_cleared, 4017_written, 4017_timing).
    /// Unlike after a CPU write, the old sequence does not run on until the restart: the reset line
    /// resets the 2A03G's frame counter (nesdev "CPU power up state"), so no step of it, the
    /// interrupt flag's included, comes between the reset and the restart.
    pub fn reset(&mut self) {
        self.irq_inhibit = (self.last_write >> 6) & 1;
        self.irq_flag = 0;
        self.clear_pending = 0;
        self.write_delay = 0;
        self.restart_on_next_cycle = 1;
        self.cycle = 0;
    }

    /// Reading $4015 clears the interrupt flag, but only on the next get cycle: a read on a put cycle
    /// clears it before a read on the following cycle, a read on a get cycle only after it
    /// (AccuracyCoin "Frame Counter IRQ", errors 6 and 7). A step setting the flag on that get cycle
    /// sets it again, so a read on the flag's first two setting cycles does not clear it (errors E-H;
    /// apu_test 6-irq_flag_timing).
    pub fn acknowledge_read(&mut self) {
        self.clear_pending = 1;
    }

    /// The frame interrupt as the /IRQ line sees it: the flag, unless the interrupt is inhibited.
    #[inline]
    pub fn irq_line(&self) -> bool {
        self.irq_flag != 0 && self.irq_inhibit == 0
    }

    /// One CPU cycle; `get_cycle` is its DMA/APU phase, `steps` the region's step cycles.
    #[inline]
    pub fn tick(&mut self, get_cycle: bool, steps: &FrameSteps) -> FrameClocks {
        if get_cycle && self.clear_pending != 0 {
            self.clear_pending = 0;
            self.irq_flag = 0;
        }
        if self.restart_on_next_cycle != 0 {
            // A write three cycles ago: the restart is on this cycle if it is a get cycle, else on the
            // next one.
            self.restart_on_next_cycle = 0;
            self.write_delay = if get_cycle { 1 } else { 2 };
        }
        if self.write_delay != 0 {
            self.write_delay -= 1;
            if self.write_delay == 0 {
                self.cycle = 0;
                self.mode = self.last_write >> 7;
                // Entering the 5-step sequence clocks everything at once.
                let all = self.mode != 0;
                return FrameClocks { quarter: all, half: all };
            }
        }
        self.cycle = self.cycle.wrapping_add(1);
        if no_step_near(self.cycle, steps) {
            return FrameClocks::default();
        }
        self.step(steps)
    }

    /// The step (if any) at `cycle`, the sequencer's new position.
    /// True when no $4017 write or reset is waiting to restart the sequence: ticks then only count,
    /// except at the steps.
    #[inline]
    pub fn is_settled(&self) -> bool {
        self.write_delay == 0 && self.restart_on_next_cycle == 0 && self.clear_pending == 0
    }

    /// Ticks until the next one that reaches a step count and may act (1-65,536), when settled. The
    /// ticks before it only count.
    #[inline]
    pub fn ticks_until_step(&self, steps: &FrameSteps) -> u64 {
        // Ticks minus one, wrapping: a step at the current count (0 ticks away, not ahead) becomes
        // the largest. A branch-free minimum, called at every catch-up.
        let nearest = steps.all().map(|step| step.wrapping_sub(self.cycle).wrapping_sub(1)).into_iter().min();
        u64::from(nearest.unwrap_or(u16::MAX)) + 1
    }

    /// `ticks` ticks that reach no step, when settled (exactly `ticks` calls of [`FrameCounter::tick`]
    /// that return no clocks and change nothing else).
    #[inline]
    pub fn advance_quiet(&mut self, ticks: u64) {
        self.cycle = self.cycle.wrapping_add(ticks as u16);
    }

    #[inline]
    fn step(&mut self, steps: &FrameSteps) -> FrameClocks {
        let quarter = FrameClocks { quarter: true, half: false };
        let half = FrameClocks { quarter: true, half: true };
        let cycle = self.cycle;
        if cycle == steps.quarter_1 || cycle == steps.quarter_3 {
            return quarter;
        }
        if cycle == steps.half_1 {
            return half;
        }
        if self.mode == 0 {
            // The flag is set on the first two cycles whatever the inhibit, which only keeps it off
            // the /IRQ line; the third sets it only when not inhibited, else clears it (AccuracyCoin
            // "Frame Counter IRQ", errors I-M).
            if cycle == steps.irq_first {
                self.irq_flag = 1;
            } else if cycle == steps.half_2_four_step {
                self.irq_flag = 1;
                return half;
            } else if cycle == steps.end_four_step {
                self.irq_flag = u8::from(self.irq_inhibit == 0);
                self.cycle = 0;
            }
        } else if self.mode == 1 {
            if cycle == steps.half_2_five_step {
                return half;
            }
            if cycle == steps.end_five_step {
                self.cycle = 0;
            }
        }
        FrameClocks::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::region::{NTSC, PAL};

    /// Runs from a $4017 write on cycle 1 and lists (cycle offset from the write, clocks, flag set),
    /// reading $4015 after every cycle that set the interrupt flag.
    fn events(value: u8, cycles: u64) -> Vec<(u64, FrameClocks, u8)> {
        events_with(value, cycles, &NTSC.apu.frame_steps)
    }

    fn events_with(value: u8, cycles: u64, steps: &FrameSteps) -> Vec<(u64, FrameClocks, u8)> {
        let mut fc = FrameCounter::default();
        fc.write(value, crate::clock::is_get_cycle(1));
        let mut out = Vec::new();
        for n in 2..2 + cycles {
            let clocks = fc.tick(crate::clock::is_get_cycle(n), steps);
            if clocks != FrameClocks::default() || fc.irq_flag != 0 {
                out.push((n - 1, clocks, fc.irq_flag));
                fc.acknowledge_read();
            }
        }
        out
    }

    #[test]
    fn the_step_filter_passes_every_step_cycle() {
        // The early-out must never hide a step: every cycle where the full decode acts is in a marked block.
        for steps in [&NTSC.apu.frame_steps, &PAL.apu.frame_steps] {
            for cycle in 0..=u16::MAX {
                if no_step_near(cycle, steps) {
                    for mode in [0, 1, 2, 255] {
                        let mut fc = FrameCounter { mode, cycle, ..FrameCounter::default() };
                        let before = fc;
                        assert_eq!(fc.step(steps), FrameClocks::default());
                        assert_eq!(fc, before);
                    }
                }
            }
            for step in steps.all() {
                assert!(!no_step_near(step, steps));
            }
        }
    }

    #[test]
    fn ticks_until_step_is_the_nearest_step_ahead() {
        for steps in [&NTSC.apu.frame_steps, &PAL.apu.frame_steps] {
            for cycle in 0..=u16::MAX {
                let fc = FrameCounter { cycle, ..FrameCounter::default() };
                // The nearest nonzero distance to a step, 65,536 when every step is at `cycle`.
                let ahead = steps.all().map(|step| u64::from(step.wrapping_sub(cycle)));
                let expected = ahead.into_iter().filter(|&ticks| ticks != 0).min().unwrap_or(1 << 16);
                assert_eq!(fc.ticks_until_step(steps), expected, "cycle {cycle}");
            }
        }
    }

    #[test]
    fn four_step_sequence() {
        let q = FrameClocks { quarter: true, half: false };
        let h = FrameClocks { quarter: true, half: true };
        let none = FrameClocks::default();
        // Written on a get cycle: the sequence restarts 4 cycles later; blargg's apu_test
        // 6-irq_flag_timing: the flag is set 29831 (+1 for the odd phase) cycles after the write.
        let ev = events(0x00, 29835 + 7457);
        assert_eq!(
            ev,
            vec![
                (4 + 7457, q, 0),
                (4 + 14913, h, 0),
                (4 + 22371, q, 0),
                (4 + 29828, none, 1),
                (4 + 29829, h, 1),
                (4 + 29830, none, 1),
                // The read after the last setting cycle (a get cycle) clears the flag only on the
                // next get cycle, so it still shows on the put cycle in between.
                (4 + 29831, none, 1),
                (4 + 29830 + 7457, q, 0),
            ]
        );
    }

    #[test]
    fn pal_four_and_five_step_sequences() {
        // nesdev "APU Frame Counter", PAL column: steps at APU cycles 4156.5, 8313.5, 12469.5, the
        // flag set from 16626 to 16627, and the 5-step sequence's last steps at 20782.5 and 20783.
        let q = FrameClocks { quarter: true, half: false };
        let h = FrameClocks { quarter: true, half: true };
        let none = FrameClocks::default();
        let steps = &PAL.apu.frame_steps;
        assert_eq!(
            events_with(0x00, 33260, steps),
            vec![
                (4 + 8313, q, 0),
                (4 + 16627, h, 0),
                (4 + 24939, q, 0),
                (4 + 33252, none, 1),
                (4 + 33253, h, 1),
                (4 + 33254, none, 1),
                (4 + 33255, none, 1),
            ]
        );
        let five = events_with(0x80, 41566 + 4, steps);
        assert_eq!(five.last(), Some(&(4 + 41565, h, 0)));
        assert_eq!(five.len(), 5, "{five:?}");
    }

    #[test]
    fn five_step_sequence_clocks_immediately_and_never_interrupts() {
        let q = FrameClocks { quarter: true, half: false };
        let h = FrameClocks { quarter: true, half: true };
        let ev = events(0x80, 37282 + 7457 + 4);
        assert_eq!(
            ev,
            vec![
                (4, h, 0),
                (4 + 7457, q, 0),
                (4 + 14913, h, 0),
                (4 + 22371, q, 0),
                (4 + 37281, h, 0),
                (4 + 37282 + 7457, q, 0),
            ]
        );
    }

    #[test]
    fn write_on_put_cycle_restarts_after_3_cycles() {
        let mut fc = FrameCounter::default();
        fc.write(0x80, false);
        assert_eq!(fc.tick(true, &NTSC.apu.frame_steps), FrameClocks::default());
        assert_eq!(fc.tick(false, &NTSC.apu.frame_steps), FrameClocks::default());
        assert_eq!(fc.tick(true, &NTSC.apu.frame_steps), FrameClocks { quarter: true, half: true });
    }

    #[test]
    fn a_reset_lets_no_step_of_the_old_sequence_through() {
        // The restart comes on the first get cycle after the reset: a put cycle before it, which
        // would reach the interrupt step of the sequence that was running, changes nothing.
        for cycle in [NTSC.apu.frame_steps.irq_first - 1, NTSC.apu.frame_steps.half_2_four_step - 1] {
            let mut fc = FrameCounter { cycle, ..FrameCounter::default() };
            fc.reset();
            assert_eq!(fc.tick(false, &NTSC.apu.frame_steps), FrameClocks::default());
            assert_eq!(fc.irq_flag, 0);
            assert_eq!(fc.tick(true, &NTSC.apu.frame_steps), FrameClocks::default());
            assert_eq!((fc.cycle, fc.irq_flag, fc.is_settled()), (0, 0, true));
        }
    }

    /// A frame counter whose next tick (a get cycle) reaches the first interrupt step.
    fn before_irq(irq_inhibit: u8) -> FrameCounter {
        FrameCounter { cycle: NTSC.apu.frame_steps.irq_first - 1, irq_inhibit, ..FrameCounter::default() }
    }

    #[test]
    fn a_read_clears_the_flag_on_the_next_get_cycle() {
        // AccuracyCoin "Frame Counter IRQ" errors 6 and 7: a read on a put cycle clears the flag before
        // the next cycle, a read on a get cycle only after the put cycle that follows.
        let mut fc = before_irq(0);
        for get in [true, false, true] {
            fc.tick(get, &NTSC.apu.frame_steps);
        }
        assert_eq!(fc.irq_flag, 1);
        fc.acknowledge_read(); // on a get cycle
        fc.tick(false, &NTSC.apu.frame_steps);
        assert_eq!(fc.irq_flag, 1);
        fc.tick(true, &NTSC.apu.frame_steps);
        assert_eq!(fc.irq_flag, 0);

        let mut fc = FrameCounter { irq_flag: 1, ..FrameCounter::default() };
        fc.acknowledge_read(); // on a put cycle
        fc.tick(true, &NTSC.apu.frame_steps);
        assert_eq!(fc.irq_flag, 0);
    }

    #[test]
    fn reads_on_the_first_two_setting_cycles_do_not_clear() {
        // AccuracyCoin errors E-H: the flag is set again on the cycle the clear would take effect.
        let mut fc = before_irq(0);
        fc.tick(true, &NTSC.apu.frame_steps);
        fc.acknowledge_read();
        fc.tick(false, &NTSC.apu.frame_steps);
        fc.tick(true, &NTSC.apu.frame_steps);
        assert_eq!(fc.irq_flag, 1);
    }

    #[test]
    fn inhibited_flag_shows_for_two_cycles_but_never_reaches_the_irq_line() {
        // AccuracyCoin errors I-M: set 29828 and 29829 cycles after the restart, clear at 29830.
        let mut fc = before_irq(1);
        let mut seen = Vec::new();
        for get in [true, false, true, false] {
            fc.tick(get, &NTSC.apu.frame_steps);
            seen.push((fc.irq_flag, fc.irq_line()));
        }
        assert_eq!(seen, [(1, false), (1, false), (0, false), (0, false)]);
    }
}
