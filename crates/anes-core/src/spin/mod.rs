//! Spin loops. Inside the frame path ([`Nes::run_until_frame_end`]) and the line path
//! ([`Nes::step_to_next_line`]) the CPU's taken backward branches and jumps are watched. When one is taken again after a turn of its loop that took only the fast
//! path (`PpuSync::fast_before`), wrote nothing, and left the CPU and the data buses as they were (a
//! wait for the NMI: `: lda flag / beq :-`, `jmp *`), every later turn is that turn again: its reads
//! see the same memory, and nothing outside the CPU changes on a fast cycle. So the turns that would
//! still take the fast path are skipped in one step, the clocks moved over them. A delay loop of
//! one register step and BNE (`: dex / bne :-`) differs between turns by that step only: its turns
//! before the last are skipped the same way.
//!
//! The lagging chips catch up afterwards as after any fast cycles; lazy == eager
//! (`tests/ppu_schedule.rs`, where the eager schedule has no fast path) checks it, like every
//! shortcut of the lazy schedules. A line step ends after the instruction that crosses the line's
//! end, so it skips only turns that end before it; an instruction step never skips (a step is one
//! instruction).

pub(crate) mod watch;

use crate::cpu::{CpuState, flags};
use crate::nes::Nes;
use crate::region::RegionModel;
use watch::{DelayStep, Turn};

const DEX: u8 = 0xCA;
const DEY: u8 = 0x88;
const INX: u8 = 0xE8;
const INY: u8 = 0xC8;
const BNE: u8 = 0xD0;

impl Nes {
    /// Turns of spin loops the frame and line paths have skipped on this machine (see `docs/PERFORMANCE.md`):
    /// a diagnostic, not state; a restore leaves it alone.
    ///
    /// ```
    /// use anes_core::{Cartridge, Nes, NesConfig};
    /// // NROM whose reset code waits in `: lda $10 / beq :-` for an NMI that is never enabled.
    /// let mut prg = vec![0xEA; 0x8000];
    /// prg[..4].copy_from_slice(&[0xA5, 0x10, 0xF0, 0xFC]);
    /// prg[0x7FFC..0x7FFE].copy_from_slice(&[0x00, 0x80]);
    /// let mut rom = vec![b'N', b'E', b'S', 0x1A, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    /// rom.extend(prg);
    /// rom.extend(vec![0; 0x2000]);
    /// let mut nes = Nes::new(Cartridge::from_ines(&rom).unwrap(), NesConfig::default());
    /// nes.run_until_frame_end();
    /// // A turn is 6 cycles (LDA zero page 3, BEQ taken 3); a frame about 29,781: nearly all of the
    /// // turns are skipped (the APU's frame counter and the VBlank end a skip).
    /// assert!(nes.skipped_spin_turns() > 4_000);
    /// ```
    pub fn skipped_spin_turns(&self) -> u64 {
        self.spin.skipped
    }

    /// Starts or ends the watch (the frame and line paths).
    #[inline(always)]
    pub(crate) fn watch_spins(&mut self, on: bool) {
        self.spin.on = on;
        self.spin.turn = None;
        self.spin.passed_over = u32::MAX;
        self.spin.clock_limit = u64::MAX;
    }

    /// The branch or jump at `at` was just taken backward. Most loops write or take the full path
    /// on every turn: two compares.
    #[inline(always)]
    pub(crate) fn spin_taken<R: RegionModel>(&mut self, at: u16) {
        let seen = (self.spin.effects, at);
        if seen != self.spin.seen {
            self.spin.seen = seen;
            return;
        }
        if u32::from(at) != self.spin.passed_over {
            self.spin_turn::<R>(at);
        }
    }

    /// A turn without effects ended at `at`: the machine is compared with the last one's and the
    /// turns that are sure to repeat skipped (frame and line paths only).
    #[inline(never)]
    fn spin_turn<R: RegionModel>(&mut self, at: u16) {
        if !self.spin.on {
            return;
        }
        let now = Turn {
            at,
            effects: self.spin.effects,
            cycle: self.bus.cpu_cycle,
            cpu: self.cpu,
            buses: [self.bus.open_bus, self.bus.internal_bus],
        };
        let last = self.spin.turn.replace(now);
        let Some(last) = last else { return };
        // A turn that took the fast path throughout (no write, no full cycle, so no interrupt was
        // taken and the interrupt lines stayed as cached), from a board whose reads change nothing
        // (the MMC5 in PCM read mode does). What a fast cycle does depends on the CPU, the data
        // buses, memory and those lines only, so from equal machines the turns repeat.
        if last.at != at
            || last.effects != now.effects
            || last.buses != now.buses
            || self.cart.prg_reads_have_effects()
        {
            return;
        }
        let period = now.cycle - last.cycle;
        // Turns whose every cycle is before `fast_before`.
        let fast_turns = self.sync.fast_before.saturating_sub(now.cycle + 1) / period;
        let (turns, step) = if last.cpu == now.cpu {
            (fast_turns, None)
        } else {
            let Some(step) = self.delay_step(at) else {
                self.spin.passed_over = u32::from(at);
                return;
            };
            // (The last turn may be from the loop's last run, registers and all: no memo.)
            match self.counted_turns_left(step, at, &last.cpu, period) {
                Some(left) => (fast_turns.min(left), Some(step)),
                None => return,
            }
        };
        // And whose every instruction ends before the clock limit: the line path stops after the
        // instruction that crosses it.
        let turn_clocks = period * R::TIMING.master_per_cpu_cycle;
        let turns = turns.min(self.spin.clock_limit.saturating_sub(self.bus.master_clock + 1) / turn_clocks);
        if turns == 0 {
            return;
        }
        if let Some(step) = step {
            self.count_turns(step, turns);
        }
        self.spin.skipped += turns;
        let cycles = turns * period;
        self.bus.cpu_cycle += cycles;
        self.bus.master_clock += cycles * R::TIMING.master_per_cpu_cycle;
        self.spin.turn = Some(Turn { cycle: self.bus.cpu_cycle, cpu: self.cpu, ..now });
    }

    /// The step of the delay loop the branch at `at` has just gone back to, if it is one: one DEX,
    /// DEY, INX or INY, then that BNE. (The turn took the fast path: the code is in work RAM or the
    /// cartridge's $6000-$FFFF, which `peek` reads as the CPU did.)
    fn delay_step(&self, at: u16) -> Option<DelayStep> {
        let pc = self.cpu.pc;
        if at != pc.wrapping_add(1) || self.peek(at) != BNE || self.peek(at.wrapping_add(1)) != 0xFD {
            return None;
        }
        let (on_x, down) = match self.peek(pc) {
            DEX => (true, true),
            DEY => (false, true),
            INX => (true, false),
            INY => (false, false),
            _ => return None,
        };
        Some(DelayStep { on_x, down })
    }

    /// When the turn from `last` to now, `period` cycles, was one of the delay loop at `at` (its
    /// register moved by `step`, nothing else changed), the turns after this one that are taken too:
    /// the register does not reach 0 in them.
    fn counted_turns_left(&self, step: DelayStep, at: u16, last: &CpuState, period: u64) -> Option<u64> {
        let cpu = &self.cpu;
        // The step's 2 cycles and the taken branch's 3, one more when it crosses a page.
        let crossing = u64::from((at.wrapping_add(2) ^ cpu.pc) & 0xFF00 != 0);
        if period != 5 + crossing {
            return None;
        }
        let register = |c: &CpuState| if step.on_x { c.x } else { c.y };
        let delta = if step.down { 0xFF } else { 1 };
        // The register the step moves, and N and Z (from it), are all that changed.
        let unmoved = |c: &CpuState| CpuState {
            x: if step.on_x { 0 } else { c.x },
            y: if step.on_x { c.y } else { 0 },
            p: c.p & !(flags::N | flags::Z),
            ..*c
        };
        let now = register(cpu);
        if register(last).wrapping_add(delta) != now || unmoved(last) != unmoved(cpu) {
            return None;
        }
        // Steps until the register reaches 0; the last of them falls through.
        let to_zero = if step.down { u64::from(now) } else { 256 - u64::from(now) };
        Some(to_zero.saturating_sub(1))
    }

    /// Moves the delay loop's register by `step` over `turns` turns (fewer than 256, see
    /// `counted_turns_left`).
    fn count_turns(&mut self, step: DelayStep, turns: u64) {
        let cpu = &mut self.cpu;
        let register = if step.on_x { &mut cpu.x } else { &mut cpu.y };
        let moved = turns as u8;
        *register = if step.down { register.wrapping_sub(moved) } else { register.wrapping_add(moved) };
        // Not zero: the loop goes on.
        cpu.p = (cpu.p & !(flags::N | flags::Z)) | (*register & flags::N);
    }
}
