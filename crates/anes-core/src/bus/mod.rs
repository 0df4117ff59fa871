//! The CPU bus: address decoding, the cycle clock, the DMA unit and interrupt-line sampling.
//!
//! Every CPU bus access is one CPU cycle of 12 master clocks (PAL 16, Dendy 15: `BusClocks`). Each
//! cycle has three points where the PPU may have to be caught up to the master clock: the moment of the
//! access (NTSC: 5 master clocks into a read, 7 into a write), the interrupt-sampling point one dot
//! before the end of the cycle, and the end. The
//! interrupt lines are sampled there, which yields the hardware's "poll on the second-to-last cycle"
//! behaviour (see `CpuState::nmi_pending_prev`).
//!
//! Lazy catch-up: the PPU is only run at those points when the CPU could tell the difference. It runs
//! up to the moment of every access that reaches it ($2000-$3FFF) or the cartridge (a write may switch
//! CHR banks or mirroring), and before the next dot that changes what the CPU samples without an
//! access: the VBlank flag (NMI), the end of a picture, the pre-render flag clear, any PPU A12 edge
//! that could raise the MMC3's IRQ (or start the TC0690's or RAMBO-1's delayed one), the cycle whose
//! M2 edge raises such a delayed IRQ, and dot 2 of every line while the MMC5's IRQ is enabled. Between
//! those points it lags, and then runs the owed dots in one stretch. The MMC3 also counts M2 edges
//! while A12 is low (the MMC5 those without a PPU read); the stretch delivers them between the dots
//! where an eager run would have (`PpuSync`): each after the dots up to its cycle's read access
//! point, whether the cycle reads or writes, so the replay is exact in every region and at every
//! phase (`Nes::deliver_m2_edge`). Every public entry point returns with the PPU caught up,
//! so state, hashes and snapshots are exactly those of the eager schedule (`PpuCatchUp::Eager`, kept
//! for the equivalence tests).
//!
//! Fast path: a cycle that the lazy schedules would leave quiet, before the APU's deadline and with no
//! DMA waiting, with the interrupt latches at rest, and that accesses work RAM (or reads the
//! cartridge), only counts and accesses (`PpuSync::fast_before`, set at the end of every other cycle).

pub(crate) mod ppu_memory;
pub(crate) mod sync;

pub use crate::clock::is_get_cycle;
pub use sync::{BusState, PpuCatchUp};

use ppu_memory::{M2Replay, PpuMemory, PpuMemoryView};
use sync::{BusClocks, Schedule};

use crate::nes::Nes;
use crate::ppu::DOTS_PER_SCANLINE;
use crate::region::{RegionModel, with_region_model};
use core::marker::PhantomData;

/// Fewest dots between two A12 rises that both clock the MMC3 counter, in general: A12 must fall and
/// stay low for three M2 edges (two whole CPU cycles, six dots) in between.
const MIN_DOTS_PER_A12_CLOCK: u64 = 6;
/// The same with 8x8 sprites, from the second clock after a prediction on: background and sprite
/// patterns each come from one table, so on a rendered line A12 stays low for more than six dots
/// only once (the background fetches with the background at $0000, the sprite slots with the sprites
/// at $0000; every other low stretch is a 4-dot pair of nametable fetches): one clock per line, a
/// line apart less the odd-frame skip. Two clocks can come sooner: the first fetch from $1000 after
/// rendering was off (the pre-render line's after VBlank, or any after a PPUMASK write) also clocks,
/// and the line's regular clock follows as soon as 7 dots later. Both start a prediction (the
/// pre-render flag clear is an event, a PPUMASK write a register access), so the c-th clock is at
/// least (c - 2) lines away. A PPUCTRL write changes the pattern, and recomputes this.
const MIN_DOTS_PER_A12_CLOCK_8X8: u64 = 340;
/// Clocks that may come before the 8x8 spacing holds (see `MIN_DOTS_PER_A12_CLOCK_8X8`).
const A12_CLOCKS_UNSPACED_8X8: u64 = 2;

impl Nes {
    /// One CPU read cycle (possibly preceded by DMA cycles that halt the CPU on this read).
    #[inline(always)]
    #[allow(clippy::manual_range_contains)]
    pub(crate) fn read<R: RegionModel>(&mut self, addr: u16) -> u8 {
        let cycle = self.bus.cpu_cycle + 1;
        // Work RAM or the cartridge's $6000-$FFFF, whose reads no lagging chip can notice (see
        // `PpuSync`; the MMC5's registers at $5000-$5FFF show the PPU's progress). Written as two
        // compares after the cycle's: as a range check, or evaluated first, the demo cost 1% more
        // host instructions.
        if cycle < self.sync.fast_before && (addr < 0x2000 || addr >= 0x6000) {
            let value = if addr < 0x2000 {
                self.ram[usize::from(addr & 0x07FF)]
            } else {
                self.cart.cpu_read(addr, self.bus.open_bus)
            };
            self.end_fast_cycle::<R>(cycle, value);
            return value;
        }
        self.read_slow::<R>(addr)
    }

    /// [`Nes::read`] of plain PRG ROM on a fast cycle: the CPU's fetches of opcodes and operands.
    /// `None`, having done nothing, for any other address or cycle, which then goes down `read`.
    /// Free of calls, so the fetch of an opcode saves no registers.
    #[inline(always)]
    pub(crate) fn read_prg_fast<R: RegionModel>(&mut self, addr: u16) -> Option<u8> {
        let cycle = self.bus.cpu_cycle + 1;
        if cycle >= self.sync.fast_before {
            return None;
        }
        let value = self.cart.prg_plain_read(addr)?;
        self.end_fast_cycle::<R>(cycle, value);
        Some(value)
    }

    /// A read cycle down the full path (see [`Nes::read`]).
    #[inline(never)]
    fn read_slow<R: RegionModel>(&mut self, addr: u16) -> u8 {
        if self.bus.dma_halt != 0 {
            self.run_dma::<R>(addr);
        }
        let value = self.read_cycle::<R>(addr);
        self.end_slow_cycle::<R>();
        value
    }

    /// One CPU write cycle. The CPU cannot be halted on a write: DMA waits for the next read.
    #[inline(always)]
    pub(crate) fn write<R: RegionModel>(&mut self, addr: u16, value: u8) {
        let cycle = self.bus.cpu_cycle + 1;
        if cycle < self.sync.fast_before && addr < 0x2000 {
            self.write_ram(usize::from(addr & 0x07FF), value);
            self.spin.effects += 1;
            self.end_fast_cycle::<R>(cycle, value);
            return;
        }
        self.write_slow::<R>(addr, value);
    }

    /// The rest of fast cycle number `cycle` after its access of `value`: the count, the data
    /// buses, the clock and the interrupt lines (see [`Nes::read`]).
    #[inline(always)]
    fn end_fast_cycle<R: RegionModel>(&mut self, cycle: u64, value: u8) {
        self.bus.cpu_cycle = cycle;
        self.bus.open_bus = value;
        self.bus.internal_bus = value;
        self.bus.master_clock += R::TIMING.master_per_cpu_cycle;
        self.sample_cached_interrupt_lines();
    }

    /// A write cycle down the full path (see [`Nes::write`]).
    #[inline(never)]
    fn write_slow<R: RegionModel>(&mut self, addr: u16, value: u8) {
        self.write_cycle::<R>(addr, value);
        self.end_slow_cycle::<R>();
    }

    /// After a cycle down the full path: the cycles before which the next ones may take the fast
    /// path. Cycle c starts at `cycle_start + (c - cpu_cycle) * clocks.cycle` and is quiet for the PPU when
    /// that is before `quiet_before`; the APU needs a cycle from its deadline on, the board's
    /// CPU-cycle IRQ counter (VRC4) the cycle that asserts /IRQ; a DMA waiting to halt the CPU needs
    /// the full path of the next read.
    #[inline(always)]
    fn end_slow_cycle<R: RegionModel>(&mut self) {
        let ppu_quiet_before = match self.sync.quiet_before.checked_sub(self.sync.cycle_start) {
            Some(clocks) if clocks > 0 => {
                self.bus.cpu_cycle + clocks.div_ceil(R::TIMING.master_per_cpu_cycle)
            }
            _ => 0,
        };
        self.spin.effects += 1;
        let fast_before = ppu_quiet_before.min(self.apu.deadline()).min(self.cart.irq_due_cycle());
        self.sync.fast_before = if self.bus.dma_halt != 0 { 0 } else { fast_before };
        self.cache_interrupt_lines();
    }

    /// Records what the interrupt lines carry now, and lets the cycles that follow take the fast path
    /// only while the interrupt latches are at rest: with /NMI as the CPU last sampled it (an edge is
    /// detected down the full path), /IRQ released or masked by I, no NMI pending and every latch
    /// clear, sampling changes nothing, and only sampling sets a latch. So a fast cycle does not
    /// sample (`Nes::sample_cached_interrupt_lines`) until the next full cycle, or an instruction
    /// clearing I (`Nes::irq_unmasked`). Out of rest, until the interrupt is taken, every cycle
    /// takes the full path. Masked: a test ROM that never acknowledges the APU's frame IRQ keeps
    /// /IRQ asserted all frame. A jammed CPU's cycles take the full path too, so a fast cycle at the
    /// start of an instruction is an opcode fetch (`Nes::run_instruction_as`).
    #[inline(always)]
    pub(crate) fn cache_interrupt_lines(&mut self) {
        self.sync.nmi_input = u8::from(self.ppu.nmi_line());
        self.sync.irq_input = self.apu.irq_line() || self.cart.irq_line();
        let cpu = &self.cpu;
        let at_rest = self.sync.nmi_input == cpu.nmi_line_prev
            && (!self.sync.irq_input || cpu.flag(crate::cpu::flags::I))
            && cpu.nmi_pending | cpu.nmi_pending_prev | cpu.irq_pending | cpu.irq_pending_prev | cpu.jammed
                == 0;
        if !at_rest {
            self.sync.fast_before = 0;
        }
    }

    /// The write cycle of [`Nes::write`] down the full path.
    #[inline(always)]
    fn write_cycle<R: RegionModel>(&mut self, addr: u16, value: u8) {
        // PPU registers, and the cartridge (bank and mirroring registers change what the PPU fetches).
        let reaches_ppu = addr & 0xE000 == 0x2000 || addr >= 0x4020;
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let quiet = self.begin_cycle::<R>(clocks.write_access, reaches_ppu);
        self.bus.open_bus = value;
        self.bus.internal_bus = value;
        self.decode_write(addr, value);
        if reaches_ppu {
            // The write may move the next event (NMI enable, rendering, the MMC3 counter).
            self.predict_after_access::<R>();
        }
        self.end_cycle::<R>(clocks.cycle - clocks.write_access, quiet);
    }

    #[inline(always)]
    fn read_cycle<R: RegionModel>(&mut self, addr: u16) -> u8 {
        let reaches_ppu = addr & 0xE000 == 0x2000;
        if reaches_ppu && addr & 7 == 2 && self.status_read_commutes::<R>() {
            return self.read_status_lagging::<R>(addr);
        }
        // The MMC5's status and ExRAM follow the PPU's reads: the PPU catches up to them too.
        let sees_ppu = reaches_ppu || (addr & 0xF000 == 0x5000 && self.cart.low_reads_see_ppu());
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let quiet = self.begin_cycle::<R>(clocks.read_access, sees_ppu);
        let value = self.decode_read(addr);
        if sees_ppu {
            self.predict_after_access::<R>();
        }
        self.end_cycle::<R>(clocks.cycle - clocks.read_access, quiet);
        if reaches_ppu { self.finish_ppu_read::<R>(addr, value) } else { value }
    }

    /// True when the read cycle starting now may read $2002 from the lagging PPU: the cycle is quiet
    /// (the lazy schedules' prediction puts nothing the CPU could notice before its end; the eager
    /// ones are never quiet) and the dots owed up to its end commute with the read
    /// (`Ppu::status_read_commutes`), possibly once the PPU has run some of them (below). A
    /// sprite-0-hit or VBlank poll then costs no catch-up per read.
    #[inline(always)]
    fn status_read_commutes<R: RegionModel>(&mut self) -> bool {
        let start = self.bus.master_clock;
        if start >= self.sync.quiet_before {
            return false;
        }
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let dots = self.dots_owed_at::<R>(start + clocks.cycle);
        if self.ppu.status_read_commutes(dots) {
            return true;
        }
        if self.sync.schedule != Schedule::Lazy {
            return false;
        }
        // Most often the read's dots reach the end of the line. The PPU runs ahead to the last
        // stretch start before the access (dots it would run at the catch-up anyway, none the CPU
        // could notice: the cycle is quiet) and the read is asked about again: a poll loop's
        // catch-ups then stay whole tiles, where a partial tile goes dot by dot (`Ppu::run_dots`).
        let ahead = self.ppu.dots_to_stretch_start(self.dots_owed_at::<R>(start + clocks.read_access));
        if ahead == 0 {
            return false;
        }
        let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
        self.ppu.run_dots_as::<R>(ahead, &mut memory);
        self.bus.ppu_clock += u64::from(ahead) * clocks.dot;
        self.ppu.status_read_commutes(dots - ahead)
    }

    /// The whole dots the PPU owes at master clock `at`.
    #[inline(always)]
    fn dots_owed_at<R: RegionModel>(&self, at: u64) -> u32 {
        let owed = at.saturating_sub(u64::from(self.bus.ppu_offset)).saturating_sub(self.bus.ppu_clock);
        u32::try_from(owed / R::TIMING.master_per_dot).unwrap_or(u32::MAX)
    }

    /// A $2002 read cycle answered by the lagging PPU (see [`Nes::status_read_commutes`]): the same
    /// value and effects as catching up to the access and to the end of the cycle.
    #[inline(never)]
    fn read_status_lagging<R: RegionModel>(&mut self, addr: u16) -> u8 {
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let quiet = self.begin_cycle::<R>(clocks.read_access, false);
        debug_assert!(quiet, "checked by status_read_commutes");
        let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
        let value = self.ppu.read_register(addr, &mut memory);
        let value = self.ppu.finish_register_read(addr, value);
        self.bus.open_bus = value;
        self.bus.internal_bus = value;
        self.end_cycle::<R>(clocks.cycle - clocks.read_access, quiet);
        value
    }

    /// One DMA read cycle at `addr` while the halted CPU holds `cpu_addr` on its address bus.
    fn dma_read_cycle<R: RegionModel>(&mut self, addr: u16, cpu_addr: u16) -> u8 {
        let reaches_ppu = addr & 0xE000 == 0x2000;
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let quiet = self.begin_cycle::<R>(clocks.read_access, reaches_ppu);
        let value = self.decode_dma_read(addr, cpu_addr);
        if reaches_ppu {
            self.predict_after_access::<R>();
        }
        self.end_cycle::<R>(clocks.cycle - clocks.read_access, quiet);
        if reaches_ppu { self.finish_ppu_read::<R>(addr, value) } else { value }
    }

    /// The end of a read of a PPU register, at the end of the cycle (M2 falling): PPUSTATUS's
    /// sprite flags and OAMDATA are not latched when the read begins, so they show the PPU as it is
    /// when the read ends, about two dots later (AccuracyCoin "$2002 flag timing": M2 is high for
    /// 15/24 of a cycle on a 2A03G; "$2004 Stress Test"). The VBlank flag was latched at the start.
    #[inline(never)]
    fn finish_ppu_read<R: RegionModel>(&mut self, addr: u16, value: u8) -> u8 {
        match addr & 7 {
            // Nothing the rest of the cycle does can change the sprite flags (the common $2002 poll
            // in VBlank or forced blank): the value read at the start stands, without a catch-up.
            2 if self.ppu.sprite_flags_settled() => return value,
            2 | 4 => {}
            _ => return value,
        }
        // The end of the cycle is a catch-up point the lazy schedule may skip: run to it.
        self.catch_up_ppu_as::<R>();
        let value = self.ppu.finish_register_read(addr, value);
        self.bus.open_bus = value;
        self.bus.internal_bus = value;
        value
    }

    /// Starts a cycle and runs it up to its access; `reaches_ppu`: the access sees or changes the PPU,
    /// so the PPU must have caught up with it. Returns true when the cycle is quiet: the PPU is not due
    /// at any of its catch-up points (the lazy schedule's common case, checked once per cycle).
    #[inline(always)]
    fn begin_cycle<R: RegionModel>(&mut self, to_access: u64, reaches_ppu: bool) -> bool {
        self.bus.cpu_cycle += 1;
        let start = self.bus.master_clock;
        self.sync.cycle_start = start;
        self.bus.master_clock = start + to_access;
        // Quiet: the PPU is not due at any of this cycle's points, (start + clocks.cycle - phase) < deadline.
        let quiet = !reaches_ppu && start < self.sync.quiet_before;
        if !quiet {
            // The eager schedules never predict, so they are never quiet.
            if self.sync.schedule == Schedule::EagerCountingM2 {
                self.deliver_m2_edge::<R>(start);
            }
            if reaches_ppu {
                self.catch_up_ppu_as::<R>();
            } else {
                self.run_ppu::<R>();
            }
        }
        // The board before the APU: while its sound chip plays, its level for this cycle is what the
        // APU's tick of this cycle mixes (`cart/expansion_audio.rs`).
        if self.bus.cpu_cycle >= self.cart.irq_due_cycle() {
            self.run_board();
        }
        self.apu.sync_to(self.bus.cpu_cycle);
        quiet
    }

    /// The eager schedule's delivery of the M2 edge of the cycle starting at master clock `start`:
    /// after the dots up to the cycle's read access point, whatever the access (M2's timing does not
    /// depend on R/W), which is where the lazy replay places it (`catch_up_ppu_as`). Placed at the
    /// access instead, a write's edge would follow a dot completing between the two access points
    /// (PAL: every fifth cycle; NTSC and Dendy phases 2 and 3: every cycle), which a replay cannot
    /// tell from a read's. Out of line: only the reference schedule takes it, and inlined into every
    /// cycle it cost the lazy schedules' ROMs up to 0.09% more host instructions.
    #[inline(never)]
    fn deliver_m2_edge<R: RegionModel>(&mut self, start: u64) {
        let access = self.bus.master_clock;
        self.bus.master_clock = start + R::TIMING.read_access_offset;
        self.catch_up_ppu_as::<R>();
        self.cart.cpu_cycle();
        self.bus.master_clock = access;
    }

    /// Runs the board's CPU-cycle counters and sound chip through this cycle, and hands the chip's
    /// level to the APU's output while it plays.
    #[inline(never)]
    fn run_board(&mut self) {
        self.cart.catch_up(self.bus.cpu_cycle);
        if self.cart.plays_audio() {
            self.apu.set_expansion_level(self.cart.expansion_level());
        }
    }

    /// After an access that reached the PPU or the cartridge, which `begin_cycle` caught up to: the
    /// access may have moved the next observable dot, so it is predicted again from here, as a
    /// catch-up of no dots would (the eager schedules never predict).
    #[inline(always)]
    fn predict_after_access<R: RegionModel>(&mut self) {
        if matches!(self.sync.schedule, Schedule::Lazy | Schedule::LazyReplayingM2) {
            self.predict_next_observable_dot::<R>();
        } else {
            self.sync.invalidate();
        }
    }

    /// Finishes the cycle. The CPU latches /NMI and /IRQ one PPU dot before the cycle ends (during
    /// phi2), so an interrupt raised on the last dot is seen a cycle later; this places NMI and the
    /// MMC3's A12-clocked IRQ on the dots ppu_vbl_nmi and mmc3_test_2 4-scanline_timing expect.
    #[inline(always)]
    fn end_cycle<R: RegionModel>(&mut self, rest: u64, quiet: bool) {
        if quiet {
            self.bus.master_clock += rest;
            self.sample_interrupt_lines();
        } else {
            let dot = R::TIMING.master_per_dot;
            self.bus.master_clock += rest - dot;
            self.run_ppu::<R>();
            self.sample_interrupt_lines();
            self.bus.master_clock += dot;
            self.run_ppu::<R>();
        }
        if self.apu.dmc_wants_dma() && self.bus.dmc_dma_running == 0 {
            self.bus.dmc_dma_running = 1;
            self.bus.dmc_dma_dummy = 1;
            self.bus.dma_halt = 1;
        }
    }

    /// A catch-up point: runs the PPU up to the master clock (minus the CPU/PPU phase offset) unless
    /// the CPU cannot notice its lag yet.
    #[inline(always)]
    fn run_ppu<R: RegionModel>(&mut self) {
        let target = self.bus.master_clock.saturating_sub(u64::from(self.bus.ppu_offset));
        if target >= self.sync.deadline {
            self.catch_up_ppu_as::<R>();
        }
    }

    /// [`Nes::catch_up_ppu_as`] in the console's region.
    pub(crate) fn catch_up_ppu(&mut self) {
        with_region_model!(self.region(), R => self.catch_up_ppu_as::<R>())
    }

    /// Runs the PPU up to the master clock (minus the CPU/PPU phase offset), delivering owed M2
    /// edges in between, then predicts the next dot the CPU could notice.
    #[inline(never)]
    pub(crate) fn catch_up_ppu_as<R: RegionModel>(&mut self) {
        let offset = u64::from(self.bus.ppu_offset);
        let target = self.bus.master_clock.saturating_sub(offset);
        let clocks = const { BusClocks::of(R::TIMING.region) };
        if matches!(self.sync.schedule, Schedule::Eager | Schedule::EagerCountingM2) {
            // The reference schedule: one dot at a time, M2 edges delivered by the cycles themselves.
            let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
            while self.bus.ppu_clock + clocks.dot <= target {
                self.ppu.tick_dot_as::<R>(&mut memory);
                self.bus.ppu_clock += clocks.dot;
            }
            return;
        }
        // Short of the predicted dot the prediction still holds: the owed dots are ones it counted
        // on, and whatever could move it (a register access, a cartridge write, a reset) predicts
        // afresh or invalidates it. Stepping catches up after every instruction or line.
        let prediction_holds = target < self.sync.deadline;
        self.run_lazy_ppu_to::<R>(target, u64::MAX);
        if !prediction_holds {
            self.predict_next_observable_dot::<R>();
        }
        debug_assert!(target - self.bus.ppu_clock < clocks.dot, "the PPU has caught up");
        debug_assert!(self.sync.deadline > self.bus.ppu_clock, "the next observable dot is ahead");
    }

    /// Runs the lazy PPU's whole dots up to PPU clock `target`, delivering the owed M2 edges placed
    /// before master clock `edges_before` (the rest stay owed, for the next run to place between
    /// its dots).
    #[inline(always)]
    fn run_lazy_ppu_to<R: RegionModel>(&mut self, target: u64, edges_before: u64) {
        let offset = u64::from(self.bus.ppu_offset);
        let clocks = const { BusClocks::of(R::TIMING.region) };
        let owed = target.saturating_sub(self.bus.ppu_clock) / clocks.dot;
        // A lag never exceeds a frame (the frame end is an event), so this is one stretch.
        let dots = u32::try_from(owed).unwrap_or(u32::MAX);
        if self.sync.schedule == Schedule::LazyReplayingM2 {
            let cycle = self.bus.cpu_cycle;
            // The current cycle's edge comes after the dots up to its read access point, whatever
            // the access, as the eager schedule delivers it (`deliver_m2_edge`); earlier ones a
            // cycle apart. So each edge falls between the same two dots as there, in every region
            // and at every phase.
            let last_edge_at = self.sync.cycle_start + clocks.read_access;
            let owed_edges = cycle.saturating_sub(self.sync.m2_delivered);
            let m2 = M2Replay {
                next_edge_at: (last_edge_at + clocks.cycle)
                    .saturating_sub(owed_edges.saturating_mul(clocks.cycle)),
                last_edge_at,
                dot_at: self.bus.ppu_clock + clocks.dot + offset,
            };
            let next_edge_at = if self.sync.delayed_irq {
                self.run_dots_replaying_m2::<R, true>(dots, m2, edges_before)
            } else {
                self.run_dots_replaying_m2::<R, false>(dots, m2, edges_before)
            };
            // The cycle of the first edge still owed, less one.
            self.sync.m2_delivered = match last_edge_at.checked_sub(next_edge_at) {
                Some(before_last) => cycle - before_last / clocks.cycle - 1,
                None => cycle,
            };
        } else {
            let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
            self.ppu.run_dots_as::<R>(dots, &mut memory);
        }
        self.bus.ppu_clock += u64::from(dots) * clocks.dot;
    }

    /// The line path's catch-up (`Nes::step_to_next_line`) after an instruction that ended past
    /// the end of the PPU's present line: runs the PPU through the ends of lines the CPU has
    /// passed (none when an access caught it up past the last), and no further, which leaves it
    /// where a stretch starts (a catch-up to the instruction's end stops up to 20 dots into the
    /// next line, whose first tile then goes dot by dot). The M2 edges after the last of those
    /// dots stay owed. Nothing the
    /// CPU could notice lies in between (the prediction holds: the instruction ended before the
    /// deadline, or it would have caught up). On the pre-render line the odd-frame skip is
    /// assumed: without it the PPU stops on the line's last dot.
    pub(crate) fn catch_up_ppu_to_line_ends<R: RegionModel>(&mut self) {
        if matches!(self.sync.schedule, Schedule::Eager | Schedule::EagerCountingM2) {
            // Never behind the CPU's last cycle (short of the line's end: the pre-render line
            // without its odd-frame skip).
            return;
        }
        // Between cycles the last one started a cycle ago (fast cycles leave `cycle_start` behind;
        // the M2 edges owed are placed from it).
        self.sync.cycle_start = self.bus.master_clock - R::TIMING.master_per_cpu_cycle;
        if self.sync.delayed_irq {
            // These boards' IRQ is predicted from the edges delivered through the present cycle
            // (`Nes::next_observable_dot`): they catch up to the instruction's end.
            self.catch_up_ppu_as::<R>();
            return;
        }
        let offset = u64::from(self.bus.ppu_offset);
        let line = u64::from(DOTS_PER_SCANLINE) * R::TIMING.master_per_dot;
        let pre_render = R::TIMING.ppu.pre_render_scanline;
        loop {
            let mut target = self.line_end_deadline::<R>();
            if target + offset > self.bus.master_clock {
                break;
            }
            // The whole lines after it up to the pre-render line (whose length the odd-frame
            // skip decides) in the same run.
            let scanline = self.ppu.scanline();
            if scanline < pre_render {
                let passed = (self.bus.master_clock - offset - target) / line;
                target += passed.min(u64::from(pre_render - 1 - scanline)) * line;
            }
            debug_assert!(target < self.sync.deadline, "the prediction holds");
            self.run_lazy_ppu_to::<R>(target, target + offset + 1);
        }
    }

    /// Predicts the next observable dot ([`Nes::next_observable_dot`]).
    #[inline]
    fn predict_next_observable_dot<R: RegionModel>(&mut self) {
        let deadline = self.next_observable_dot::<R>();
        self.sync.predict::<R>(deadline, self.bus.ppu_offset);
    }

    /// The master clock at which the PPU's present line ends: an instruction ending at or after it
    /// ended past the line (see [`Nes::catch_up_ppu_to_line_ends`]).
    #[inline]
    pub(crate) fn line_end_master_clock<R: RegionModel>(&self) -> u64 {
        self.line_end_deadline::<R>() + u64::from(self.bus.ppu_offset)
    }

    /// The PPU clock at which the present line's last dot completes.
    #[inline]
    fn line_end_deadline<R: RegionModel>(&self) -> u64 {
        let dots = self.ppu.dots_before_line_end::<R>();
        self.bus.ppu_clock.saturating_add(dots.saturating_add(1).saturating_mul(R::TIMING.master_per_dot))
    }

    /// Runs `dots` dots delivering the M2 edges `m2` owes between them, then the rest of those placed
    /// before master clock `edges_before`; with `ANY_BOARD` through the whole board dispatch (see
    /// `PpuMemory`). Returns where the first edge still owed is placed.
    #[inline(always)]
    fn run_dots_replaying_m2<R: RegionModel, const ANY_BOARD: bool>(
        &mut self,
        dots: u32,
        m2: M2Replay,
        edges_before: u64,
    ) -> u64 {
        let mut memory = PpuMemory::<true, R, ANY_BOARD> {
            cart: &mut self.cart,
            ciram: &mut self.ciram,
            m2,
            region: PhantomData,
        };
        self.ppu.run_dots_as::<R>(dots, &mut memory);
        memory.m2.deliver_before::<R, ANY_BOARD>(memory.cart, edges_before);
        memory.m2.next_edge_at
    }

    /// The PPU clock at which the next dot the CPU could notice without accessing the PPU completes:
    /// the next VBlank, picture or pre-render event, or (MMC3, rendering) the earliest A12 edge that
    /// could raise the IRQ (the TC0690's and RAMBO-1's: start its delay): where the fetch pattern of
    /// each line, from the tables and the sprites in range, could clock the counter
    /// (`Ppu::dots_before_a12_clock`), or while a PPUMASK change is on its way through the pipeline,
    /// from the fewest dots between clocks; or the cycle whose M2 edge raises a board's IRQ.
    fn next_observable_dot<R: RegionModel>(&self) -> u64 {
        let mut dots = self.ppu.dots_before_event::<R>();
        // Only the boards that count M2 edges count A12 clocks: asked first, the others' answer
        // (none) cost NROM ROMs 0.1% more host instructions per frame through the board dispatch.
        let counts_a12 = self.sync.schedule == Schedule::LazyReplayingM2 && self.ppu.rendering_enabled();
        let clocks = if counts_a12 { u64::from(self.cart.a12_clocks_before_irq()) } else { u64::MAX };
        // A line clocks at most four times (`ppu/a12.rs`); add the two first fetches from $1000 of a
        // frame, the end of the present low run and a pause in rendering: no need to look for more
        // clocks than fit before the next event (with the IRQ disabled, `u32::MAX`).
        let could_come = clocks <= (dots / MIN_DOTS_PER_A12_CLOCK_8X8 + 2) * 4 + 4;
        if counts_a12 && could_come {
            // Dots that are safe to run before the clock that could raise the IRQ: the usual
            // setup's in closed form, any other by the fetch pattern of each line.
            let low_edges = self.cart.a12_low_m2_edges();
            let safe = match self
                .ppu
                .dots_before_sprite_pattern_clock::<R>(clocks, low_edges)
                .or_else(|| self.ppu.dots_before_a12_clock::<R>(clocks, low_edges, dots))
            {
                Some(bound) => bound,
                None => {
                    let spaced = if self.ppu.sprites_8x16() {
                        clocks.saturating_sub(1).saturating_mul(MIN_DOTS_PER_A12_CLOCK)
                    } else {
                        clocks
                            .saturating_sub(A12_CLOCKS_UNSPACED_8X8)
                            .saturating_mul(MIN_DOTS_PER_A12_CLOCK_8X8)
                    };
                    // Counted from the first dot that could fetch.
                    spaced.saturating_add(self.ppu.dots_before_fetching_line::<R>())
                }
            };
            dots = dots.min(safe);
        }
        let edges = if self.sync.delayed_irq { self.cart.m2_edges_before_irq() } else { u32::MAX };
        if edges != u32::MAX {
            // /IRQ rises on the edge of the cycle `edges` after this one (the TC0690's and RAMBO-1's
            // delays, the RAMBO-1's cycle mode), which the replay delivers at a catch-up only: the
            // PPU must catch up by that cycle's interrupt-sampling point. From anywhere in this
            // cycle (its end at the latest) that is at least edges cycles less one dot away; a dot
            // completing at most two dots before then is safe.
            let cycles_in_dots = u64::from(edges) * R::TIMING.master_per_cpu_cycle / R::TIMING.master_per_dot;
            dots = dots.min(cycles_in_dots.saturating_sub(2));
        }
        if self.cart.irq_at_line_starts() {
            // The MMC5's IRQ rises or falls only when a line starts: at the read of dot 2.
            let dot = u64::from(self.ppu.dot());
            let to_dot_2 = if dot <= 2 { 2 - dot } else { self.ppu.dots_before_line_end::<R>() + 3 };
            dots = dots.min(to_dot_2);
        }
        self.bus.ppu_clock.saturating_add(dots.saturating_add(1).saturating_mul(R::TIMING.master_per_dot))
    }

    /// Recomputes the lazy schedule from the state: after power-on, a restore or a state edit, at a
    /// moment when the PPU has caught up.
    pub(crate) fn reset_ppu_sync(&mut self) {
        let counts_m2 = self.cart.counts_m2_edges();
        let lazy = self.sync.mode == PpuCatchUp::Lazy && !self.cart.needs_eager_ppu();
        self.sync.delayed_irq = self.cart.has_delayed_irq();
        self.sync.schedule = match (lazy, counts_m2) {
            (false, false) => Schedule::Eager,
            (false, true) => Schedule::EagerCountingM2,
            (true, false) => Schedule::Lazy,
            (true, true) => Schedule::LazyReplayingM2,
        };
        self.sync.invalidate();
        self.sync.m2_delivered = self.bus.cpu_cycle;
        self.sync.cycle_start = self.bus.master_clock;
    }

    /// Edge-detects /NMI and level-samples /IRQ at the end of a cycle. What the CPU acts on at the end
    /// of an instruction is the value latched one cycle earlier (`*_prev`).
    #[inline(always)]
    fn sample_interrupt_lines(&mut self) {
        let nmi = u8::from(self.ppu.nmi_line());
        let irq = self.apu.irq_line() || self.cart.irq_line();
        self.sample_interrupt_inputs(nmi, irq);
    }

    /// [`Nes::sample_interrupt_lines`] in a fast cycle, from the lines recorded at the end of the
    /// last full one (no chip has changed since): the latches are at rest
    /// (`Nes::cache_interrupt_lines`), so nothing moves. Checked in debug builds; this runs on nearly
    /// every CPU cycle, and a check for rest in it cost the demo 1.4% and all_instrs 1.8% more
    /// host instructions per frame.
    #[inline(always)]
    fn sample_cached_interrupt_lines(&mut self) {
        debug_assert_eq!(
            (self.sync.nmi_input, self.sync.irq_input),
            (u8::from(self.ppu.nmi_line()), self.apu.irq_line() || self.cart.irq_line()),
            "the recorded interrupt lines are current"
        );
        debug_assert_eq!(self.cpu.nmi_line_prev, self.sync.nmi_input, "no /NMI edge in a fast cycle");
        debug_assert!(
            !self.sync.irq_input || self.cpu.flag(crate::cpu::flags::I),
            "/IRQ masked in a fast cycle"
        );
        debug_assert_eq!(
            (
                self.cpu.nmi_pending,
                self.cpu.nmi_pending_prev,
                self.cpu.irq_pending,
                self.cpu.irq_pending_prev
            ),
            (0, 0, 0, 0),
            "latches at rest stay clear"
        );
        debug_assert_eq!(self.cpu.jammed, 0, "no fast cycle for a jammed CPU");
    }

    #[inline(always)]
    fn sample_interrupt_inputs(&mut self, nmi: u8, irq: bool) {
        let cpu = &mut self.cpu;
        cpu.nmi_pending_prev = cpu.nmi_pending;
        if nmi != 0 && cpu.nmi_line_prev == 0 {
            cpu.nmi_pending = 1;
        }
        cpu.nmi_line_prev = nmi;
        cpu.irq_pending_prev = cpu.irq_pending;
        cpu.irq_pending = u8::from(irq && !cpu.flag(crate::cpu::flags::I));
    }

    /// The DMA unit takes over the bus: the halted CPU read at `addr` is repeated on every cycle that
    /// neither DMA uses (nesdev "DMA": halt, dummy and alignment cycles; get/put phases).
    fn run_dma<R: RegionModel>(&mut self, addr: u16) {
        if self.bus.oam_dma_running == 0 && !self.apu.dmc_wants_dma() {
            // The DMC's request went away while the CPU was writing (its enable bit, as the DMA unit
            // sees it, cleared, or an implicit abort's one-cycle request passed): no DMA at all
            // (AccuracyCoin "Implicit DMA Abort", error 3).
            self.bus.dma_halt = 0;
            self.bus.dmc_dma_running = 0;
            self.bus.dmc_dma_dummy = 0;
            return;
        }
        // Halt cycle: the CPU's read goes out and its value is dropped.
        self.read_cycle::<R>(addr);
        self.bus.dma_halt = 0;
        loop {
            if self.bus.dmc_dma_running != 0 && !self.apu.dmc_wants_dma() {
                // $4015 disabled the DMC before its fetch (once the bit reached the DMA unit), or an
                // implicit abort's request lasted its one cycle: the DMA stops, the CPU resumes
                // (AccuracyCoin "Explicit DMA Abort", "Implicit DMA Abort").
                self.bus.dmc_dma_running = 0;
                self.bus.dmc_dma_dummy = 0;
            }
            if self.bus.dmc_dma_running == 0 && self.bus.oam_dma_running == 0 {
                break;
            }
            let get = is_get_cycle(self.bus.cpu_cycle + 1);
            let dmc_ready =
                self.bus.dmc_dma_running != 0 && self.bus.dma_halt == 0 && self.bus.dmc_dma_dummy == 0;
            if get && dmc_ready {
                let value = self.dma_read_cycle::<R>(self.apu.dmc_dma_address(), addr);
                self.bus.dmc_dma_running = 0;
                self.apu.dmc_dma_complete(value, self.bus.cpu_cycle);
                continue;
            }
            // A DMC request that arrived during sprite DMA spends its halt, then its dummy cycle.
            if self.bus.dma_halt != 0 {
                self.bus.dma_halt = 0;
            } else if self.bus.dmc_dma_dummy != 0 {
                self.bus.dmc_dma_dummy = 0;
            }
            let oam = self.bus.oam_dma_running != 0;
            let count = self.bus.oam_dma_count;
            if get && oam && count & 1 == 0 {
                let src = u16::from_le_bytes([(count >> 1) as u8, self.bus.oam_dma_page]);
                self.bus.oam_dma_value = self.dma_read_cycle::<R>(src, addr);
                self.bus.oam_dma_count += 1;
            } else if !get && oam && count & 1 == 1 {
                self.write::<R>(0x2004, self.bus.oam_dma_value);
                self.bus.oam_dma_count += 1;
                if self.bus.oam_dma_count == 512 {
                    self.bus.oam_dma_running = 0;
                    self.bus.oam_dma_count = 0;
                }
            } else {
                // Alignment or waiting cycle: the CPU's halted read repeats.
                self.read_cycle::<R>(addr);
            }
        }
    }

    /// Address decoding for a CPU read. Updates both data buses with what was read, except that $4015
    /// is inside the 2A03 and drives only the internal one.
    #[inline(always)]
    fn decode_read(&mut self, addr: u16) -> u8 {
        let value = match addr {
            // PRG ROM first: most reads are instruction fetches.
            0x8000..=0xFFFF => self.cart.cpu_read(addr, self.bus.open_bus),
            0x0000..=0x1FFF => self.ram[usize::from(addr & 0x07FF)],
            0x2000..=0x3FFF => {
                let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
                self.ppu.read_register(addr, &mut memory)
            }
            0x4000..=0x401F => {
                let floating = self.bus.open_bus;
                return self.read_apu_register(addr, floating);
            }
            _ => self.cart.cpu_read_low(addr, self.bus.open_bus, self.bus.cpu_cycle),
        };
        self.bus.open_bus = value;
        self.bus.internal_bus = value;
        value
    }

    /// Address decoding for a DMA read of `addr` while the halted CPU holds `cpu_addr`. The 2A03's
    /// registers answer only when the CPU's own address is in $4000-$401F, and then to the low five
    /// bits of whatever address the bus carries, so a DMA reading anywhere may collide with $4015 or
    /// the joypads, and one reading $4000-$401F otherwise sees open bus (nesdev "DMA", register
    /// conflicts; AccuracyCoin "APU Register Activation", "DMC DMA Bus Conflicts"). The DMA's value
    /// reaches the external data bus only: the CPU is disconnected from it.
    fn decode_dma_read(&mut self, addr: u16, cpu_addr: u16) -> u8 {
        let external = match addr {
            0x4000..=0x401F => self.bus.open_bus,
            _ => {
                let value = match addr {
                    0x0000..=0x1FFF => self.ram[usize::from(addr & 0x07FF)],
                    0x2000..=0x3FFF => {
                        let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
                        self.ppu.read_register(addr, &mut memory)
                    }
                    _ => self.cart.cpu_read_low(addr, self.bus.open_bus, self.bus.cpu_cycle),
                };
                self.bus.open_bus = value;
                value
            }
        };
        if cpu_addr & 0xFFE0 != 0x4000 {
            return external;
        }
        let register = 0x4000 | (addr & 0x1F);
        match register {
            // The status drives the internal bus only; the floating bit 5 takes the external value.
            0x4015 => self.apu.read_status(self.bus.cpu_cycle) | (external & 0x20),
            0x4016 | 0x4017 => {
                let value = self.read_joypad(usize::from(register & 1)) | (external & 0xE0);
                self.bus.open_bus = value;
                value
            }
            _ => external,
        }
    }

    /// A CPU read of $4000-$401F; `floating` is what the undriven bits of the external bus hold.
    #[inline(always)]
    fn read_apu_register(&mut self, addr: u16, floating: u8) -> u8 {
        match addr {
            0x4015 => {
                // The status register drives the internal bus only: the external bus keeps its
                // value, and the undriven bit 5 keeps the internal one (AccuracyCoin "Internal Data
                // Bus"; nesdev Fiskbit notes: $4015 does not affect external open bus).
                let value = self.apu.read_status(self.bus.cpu_cycle) | (self.bus.internal_bus & 0x20);
                self.bus.internal_bus = value;
                value
            }
            0x4016 | 0x4017 => {
                let value = self.read_joypad(usize::from(addr & 1)) | (floating & 0xE0);
                self.bus.open_bus = value;
                self.bus.internal_bus = value;
                value
            }
            _ => {
                self.bus.internal_bus = floating;
                floating
            }
        }
    }

    /// A read of joypad register `port` (0 = $4016, 1 = $4017) on the current cycle: bit 0, the other
    /// bits undriven. A read on the cycle right after a read of the same port continues its set and
    /// does not clock the controller (see [`ControllerState::read`](crate::input::ControllerState::read)).
    fn read_joypad(&mut self, port: usize) -> u8 {
        self.settle_joypad_out();
        let cycle = self.bus.cpu_cycle;
        let tag = port as u8 + 1;
        let contiguous =
            self.bus.joypad_read_port == tag && self.bus.joypad_read_cycle.wrapping_add(1) == cycle;
        self.bus.joypad_read_port = tag;
        self.bus.joypad_read_cycle = cycle;
        self.pads[port].read(contiguous)
    }

    /// A $4016 write: bit 0 goes to the OUT0 latch, which reaches the strobe pin only at the end of a
    /// get cycle, as the CPU moves on to a put cycle (nesdev, Fiskbit's notes: "the state of the
    /// CPU's OUT pins is only updated when transitioning from a GET to PUT cycle"). So a one-cycle
    /// strobe, DEC $4016 writing $41 then $40, reaches the controllers only when the $41 is written
    /// on a get cycle (AccuracyCoin "Controller Strobing", errors 3 and 4).
    fn write_joypad_out(&mut self, value: u8) {
        self.settle_joypad_out();
        self.bus.joypad_out_latch = value & 1;
        if is_get_cycle(self.bus.cpu_cycle) {
            self.apply_joypad_out();
        } else {
            self.bus.joypad_out_pending = 1;
            self.bus.joypad_out_cycle = self.bus.cpu_cycle;
        }
    }

    /// Applies a latched OUT0 value whose get cycle has ended (the cycle after the put cycle of the
    /// write), before anything that could see the pin.
    #[inline]
    fn settle_joypad_out(&mut self) {
        if self.bus.joypad_out_pending != 0 && self.bus.cpu_cycle > self.bus.joypad_out_cycle.wrapping_add(1)
        {
            self.apply_joypad_out();
        }
    }

    fn apply_joypad_out(&mut self) {
        self.bus.joypad_out_pending = 0;
        self.bus.joypad_out_cycle = 0;
        let latch = self.bus.joypad_out_latch;
        self.pads[0].write_strobe(latch);
        self.pads[1].write_strobe(latch);
    }

    #[inline(always)]
    fn decode_write(&mut self, addr: u16, value: u8) {
        match addr {
            0x0000..=0x1FFF => self.write_ram(usize::from(addr & 0x07FF), value),
            0x2000..=0x3FFF => {
                let mut memory = PpuMemory::plain(&mut self.cart, &mut self.ciram);
                self.ppu.write_register(addr, value, &mut memory);
                self.cart.ppu_register_written(addr, value);
            }
            0x4014 => {
                self.bus.oam_dma_page = value;
                self.bus.oam_dma_running = 1;
                self.bus.oam_dma_count = 0;
                self.bus.dma_halt = 1;
            }
            0x4016 => self.write_joypad_out(value),
            0x4000..=0x4013 | 0x4015 | 0x4017 => {
                self.apu.write_register(addr, value, self.bus.cpu_cycle);
            }
            0x4018..=0x401F => {}
            _ => self.cart.cpu_write(addr, value, self.bus.cpu_cycle),
        }
    }

    /// What a CPU read of `addr` would return now, without side effects on any part of the machine.
    pub fn peek(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x1FFF => self.ram[usize::from(addr & 0x07FF)],
            0x2000..=0x3FFF => {
                let view = PpuMemoryView { cart: &self.cart, ciram: &self.ciram };
                self.ppu.peek_register(addr, &view)
            }
            0x4015 => self.apu.peek_status() | (self.bus.internal_bus & 0x20),
            0x4016 | 0x4017 => {
                let mut pad = self.pads[usize::from(addr & 1)];
                let b = &self.bus;
                if b.joypad_out_pending != 0 && b.cpu_cycle > b.joypad_out_cycle.wrapping_add(1) {
                    pad.write_strobe(b.joypad_out_latch);
                }
                pad.peek() | (self.bus.open_bus & 0xE0)
            }
            0x4000..=0x401F => self.bus.open_bus,
            _ => self.cart.cpu_peek(addr, self.bus.open_bus),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sync::{PpuCatchUp, Schedule};
    use crate::region::Region;
    use crate::{Cartridge, Nes, NesConfig};

    #[test]
    fn the_mmc3_replays_its_m2_edges_lazily_in_every_region_at_every_phase() {
        // Each M2 edge sits after the dots up to the read access point in both schedules, so the
        // replay is exact whatever the cycle length: PAL (3.2 dots a cycle) no longer runs eagerly.
        let mut rom = vec![b'N', b'E', b'S', 0x1A, 2, 1, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        rom.resize(16 + 0x8000 + 0x2000, 0xEA);
        for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
            for phase in 0..4 {
                let config = NesConfig { cpu_ppu_alignment: Some(phase), ..NesConfig::default() };
                let cart = Cartridge::from_ines(&rom).expect("an MMC3 image");
                let mut nes = Nes::with_region(cart, config, Some(region));
                assert_eq!(nes.sync.schedule, Schedule::LazyReplayingM2, "{region}, phase {phase}");
                nes.set_ppu_catch_up(PpuCatchUp::Eager);
                assert_eq!(nes.sync.schedule, Schedule::EagerCountingM2, "{region}, phase {phase}");
            }
        }
    }

    #[test]
    fn the_boards_with_delayed_irqs_replay_their_m2_edges_lazily() {
        // The TC0690 (48), the RAMBO-1 (64) and the Tengen 800037 (158) ran the eager schedule until
        // issue 48; `tests/ppu_schedule.rs` compares them with it, which proves nothing if both are
        // eager.
        for mapper in [48u8, 64, 158] {
            let mut rom =
                vec![b'N', b'E', b'S', 0x1A, 2, 1, mapper << 4, mapper & 0xF0, 0, 0, 0, 0, 0, 0, 0, 0];
            rom.resize(16 + 0x8000 + 0x2000, 0xEA);
            for region in [Region::Ntsc, Region::Pal, Region::Dendy] {
                let cart = Cartridge::from_ines(&rom).expect("a mapper image");
                let mut nes = Nes::with_region(cart, NesConfig::default(), Some(region));
                assert_eq!(nes.sync.schedule, Schedule::LazyReplayingM2, "mapper {mapper}, {region}");
                nes.set_ppu_catch_up(PpuCatchUp::Eager);
                assert_eq!(nes.sync.schedule, Schedule::EagerCountingM2, "mapper {mapper}, {region}");
            }
        }
    }
}
