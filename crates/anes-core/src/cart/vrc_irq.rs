//! The Konami VRC IRQ counter (nesdev "VRC IRQ"), shared by the VRC4 (`m021_vrc2_vrc4.rs`), the
//! VRC6 (`m024_vrc6.rs`) and the VRC7 (`m085_vrc7.rs`).
//!
//! It counts CPU cycles: while enabled (control bit E), each cycle takes 3 from a prescaler that
//! starts at 341 and wraps by adding 341 when it reaches 0 or less (so it wraps every 114, 114, 113
//! cycles: a scanline). In scanline mode (control bit M clear) a wrap clocks the 8-bit counter; in
//! cycle mode every cycle does. A clock of a counter at $FF reloads it from the latch and asserts
//! /IRQ, other clocks increment it. A control write acknowledges the IRQ and resets the prescaler,
//! and with E set reloads the counter; an acknowledge write acknowledges and copies bit A to E.
//!
//! The counter runs lazily: [`VrcIrq::run`] advances it over any number of cycles in closed form,
//! equal to single steps ([`VrcIrq::step_cycle`], the definition, compared in the tests), and
//! [`VrcIrq::cycles_to_irq`] names the cycle that asserts /IRQ.

crate::layout::state_struct! {
    /// The VRC IRQ counter's registers.
    pub struct VrcIrq {
        /// Reload value.
        pub latch: u8,
        /// Bit 0 A (enable after acknowledge), bit 1 E (enable), bit 2 M (cycle mode).
        pub control: u8,
        /// Counts up; a clock at $FF reloads it and raises the IRQ.
        pub counter: u8,
        /// 1 while /IRQ is asserted.
        pub pending: u8,
        /// 341 after a reset; 3 taken per CPU cycle, 341 added at 0 or less.
        pub prescaler: u16,
    }
}

const _: () = assert!(core::mem::size_of::<VrcIrq>() == 6);

/// Prescaler value after a reset and added at each wrap: three per PPU dot of a scanline.
const PRESCALER_PERIOD: i64 = 341;
/// Prescaler units one CPU cycle takes.
const PRESCALER_STEP: i64 = 3;
pub(super) const IRQ_ENABLE_AFTER_ACK: u8 = 0x01;
pub(super) const IRQ_ENABLE: u8 = 0x02;
pub(super) const IRQ_CYCLE_MODE: u8 = 0x04;

impl VrcIrq {
    /// The power-on state: disabled, prescaler reset.
    pub fn new() -> Self {
        VrcIrq { prescaler: PRESCALER_PERIOD as u16, ..VrcIrq::default() }
    }

    /// A write of the latch's low nibble.
    pub fn write_latch_low(&mut self, value: u8) {
        self.latch = (self.latch & 0xF0) | (value & 0x0F);
    }

    /// A write of the latch's high nibble.
    pub fn write_latch_high(&mut self, value: u8) {
        self.latch = (self.latch & 0x0F) | (value & 0x0F) << 4;
    }

    /// A write of the whole latch (VRC6, VRC7).
    pub fn write_latch(&mut self, value: u8) {
        self.latch = value;
    }

    /// A write of the control register.
    pub fn write_control(&mut self, value: u8) {
        self.control = value & 0x07;
        self.pending = 0;
        self.prescaler = PRESCALER_PERIOD as u16;
        if value & IRQ_ENABLE != 0 {
            self.counter = self.latch;
        }
    }

    /// A write of the acknowledge register: /IRQ released, A copied to E.
    pub fn acknowledge(&mut self) {
        self.pending = 0;
        let enable = if self.control & IRQ_ENABLE_AFTER_ACK != 0 { IRQ_ENABLE } else { 0 };
        self.control = (self.control & !IRQ_ENABLE) | enable;
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    pub fn line(&self) -> bool {
        self.pending != 0
    }

    /// One CPU cycle: the definition [`VrcIrq::run`] must equal.
    #[cfg(test)]
    pub fn step_cycle(&mut self) {
        if self.control & IRQ_ENABLE == 0 {
            return;
        }
        let mut prescaler = i64::from(self.prescaler) - PRESCALER_STEP;
        let wrapped = prescaler <= 0;
        if wrapped {
            prescaler += PRESCALER_PERIOD;
        }
        self.prescaler = prescaler as u16;
        if wrapped || self.control & IRQ_CYCLE_MODE != 0 {
            if self.counter == 0xFF {
                self.counter = self.latch;
                self.pending = 1;
            } else {
                self.counter += 1;
            }
        }
    }

    /// Prescaler wraps in the next `cycles` CPU cycles, and the prescaler after them.
    fn prescaler_after(prescaler: i64, cycles: u64) -> (u64, i64) {
        // At most one wrap per cycle: a prescaler above 0 less 3 stays above -341.
        let taken = i128::from(cycles) * i128::from(PRESCALER_STEP);
        let left = i128::from(prescaler) - taken;
        if left > 0 {
            return (0, left as i64);
        }
        let wraps = (-left) / i128::from(PRESCALER_PERIOD) + 1;
        ((wraps as u64).min(cycles), (left + wraps * i128::from(PRESCALER_PERIOD)) as i64)
    }

    /// Runs the counter over `cycles` CPU cycles, in closed form.
    pub fn run(&mut self, cycles: u64) {
        if cycles == 0 || self.control & IRQ_ENABLE == 0 {
            return;
        }
        let (wraps, prescaler) = Self::prescaler_after(i64::from(self.prescaler), cycles);
        let clocks = if self.control & IRQ_CYCLE_MODE != 0 { cycles } else { wraps };
        self.prescaler = prescaler as u16;
        let to_overflow = 0x100 - u64::from(self.counter);
        if clocks < to_overflow {
            self.counter += clocks as u8;
            return;
        }
        self.pending = 1;
        // After the overflow the counter runs from the latch, overflowing every 256 - latch clocks.
        let period = 0x100 - u64::from(self.latch);
        let after = (clocks - to_overflow) % period;
        self.counter = self.latch + after as u8;
    }

    /// The number of CPU cycles from now to the one whose counter clock asserts /IRQ; `None` when
    /// no cycle can (disabled, or already asserted: only a write changes it then).
    pub fn cycles_to_irq(&self) -> Option<u64> {
        if self.control & IRQ_ENABLE == 0 || self.pending != 0 {
            return None;
        }
        let clocks = 0x100 - u64::from(self.counter);
        Some(if self.control & IRQ_CYCLE_MODE != 0 {
            clocks
        } else {
            // The first wrap comes when 3n reaches the prescaler, each further one 341 units later.
            let units = i64::from(self.prescaler).max(0) as u64 + (clocks - 1) * PRESCALER_PERIOD as u64;
            units.div_ceil(PRESCALER_STEP as u64).max(1)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nes::splitmix64_next as next;

    /// An IRQ counter set up with `latch` and `control` (as after the writes).
    fn irq_with(latch: u8, control: u8) -> VrcIrq {
        let mut irq = VrcIrq::new();
        irq.write_latch(latch);
        irq.write_control(control);
        irq
    }

    #[test]
    fn scanline_mode_clocks_every_114_114_113_cycles() {
        // Latch $FE: the counter reloads to $FE, so the first IRQ is 2 prescaler wraps away.
        let mut irq = irq_with(0xFE, IRQ_ENABLE);
        assert_eq!(irq.cycles_to_irq(), Some(114 + 114));
        irq.run(114 + 113);
        assert!(!irq.line());
        irq.run(1);
        assert!(irq.line());
        assert_eq!(irq.counter, 0xFE, "reloaded from the latch");
        // $FD: three wraps, 341 cycles (nesdev "VRC IRQ": 114, 114, 113).
        assert_eq!(irq_with(0xFD, IRQ_ENABLE).cycles_to_irq(), Some(341));
    }

    #[test]
    fn cycle_mode_clocks_every_cycle_and_acknowledge_copies_a_to_e() {
        let mut irq = irq_with(0xFB, IRQ_ENABLE | IRQ_CYCLE_MODE);
        assert_eq!(irq.cycles_to_irq(), Some(5), "$FB, $FC, $FD, $FE, $FF, then the IRQ");
        irq.run(5);
        assert!(irq.line());
        // Acknowledge with A clear: IRQ off and E cleared, the counter stops.
        irq.acknowledge();
        assert!(!irq.line());
        assert_eq!(irq.cycles_to_irq(), None);
        let counter = irq.counter;
        irq.run(1000);
        assert_eq!(irq.counter, counter);
    }

    #[test]
    fn random_writes_and_runs_equal_single_cycles() {
        // Lazy == eager under any program: random register writes at random cycles, the lazy
        // counter run only at its writes and at random points; the stepped one every cycle. States
        // agree at every run, and /IRQ rises exactly at the cycle the lazy counter predicted.
        let mut seed = 0x5EED_u64;
        let mut lazy = VrcIrq::new();
        let mut stepped = VrcIrq::new();
        let mut ran = 0u64;
        let mut due = None;
        let mut rises = 0;
        for cycle in 1..1_000_000u64 {
            let was_pending = stepped.line();
            stepped.step_cycle();
            if !was_pending && stepped.line() {
                assert_eq!(due, Some(cycle), "the predicted cycle of /IRQ");
                rises += 1;
            }
            let roll = next(&mut seed) % 1000;
            if roll < 10 {
                lazy.run(cycle - ran);
                ran = cycle;
                assert_eq!(lazy, stepped, "cycle {cycle}");
                if roll < 3 {
                    let value = next(&mut seed) as u8;
                    for irq in [&mut lazy, &mut stepped] {
                        match value % 4 {
                            0 => irq.write_latch(value | 0xC0),
                            1 => irq.write_latch_low(value >> 2),
                            2 => irq.write_control(value >> 2),
                            _ => irq.acknowledge(),
                        }
                    }
                }
                due = lazy.cycles_to_irq().map(|cycles| cycle + cycles);
            }
        }
        assert!(rises > 200, "only {rises} IRQs: the program must exercise the prediction");
    }

    #[test]
    fn closed_form_equals_single_cycles() {
        // Any split of a run into catch-ups ends where single cycles do, and the first cycle with
        // /IRQ asserted is the predicted one.
        for (latch, control) in [
            (0x00, IRQ_ENABLE),
            (0xF0, IRQ_ENABLE),
            (0xFF, IRQ_ENABLE | IRQ_CYCLE_MODE),
            (0x80, IRQ_ENABLE | IRQ_CYCLE_MODE | IRQ_ENABLE_AFTER_ACK),
            (0xFD, IRQ_ENABLE),
        ] {
            let mut stepped = irq_with(latch, control);
            let mut lazy = stepped;
            let due = lazy.cycles_to_irq();
            let mut first_irq = None;
            let mut cycle = 0;
            for chunk in [1u64, 7, 113, 114, 3, 500, 2000, 1, 33_000] {
                for _ in 0..chunk {
                    cycle += 1;
                    stepped.step_cycle();
                    if stepped.line() && first_irq.is_none() {
                        first_irq = Some(cycle);
                    }
                }
                lazy.run(chunk);
                assert_eq!(lazy, stepped, "latch {latch:#X} control {control:#X} cycle {cycle}");
            }
            assert_eq!(due, first_irq, "latch {latch:#X} control {control:#X}");
        }
    }
}
