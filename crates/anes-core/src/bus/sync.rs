//! The bus's state and the lazy PPU schedule's bookkeeping, as plain data: the console holds these,
//! and the bus (`bus/mod.rs`) steps them.

use crate::region::RegionModel;

/// The region's clock ratios as the bus uses them on every cycle, from its
/// [`RegionTiming`](crate::region::RegionTiming); the stepping code takes them as constants of its
/// [`RegionModel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BusClocks {
    /// Master clocks per CPU cycle.
    pub cycle: u64,
    /// Master clocks per PPU dot.
    pub dot: u64,
    /// Master clocks from the start of a read cycle to the moment the data is sampled.
    pub read_access: u64,
    /// Master clocks from the start of a write cycle to the moment the data is driven.
    pub write_access: u64,
}

impl BusClocks {
    /// The ratios of `region`.
    pub(crate) const fn of(region: crate::region::Region) -> BusClocks {
        let t = region.timing();
        BusClocks {
            cycle: t.master_per_cpu_cycle,
            dot: t.master_per_dot,
            read_access: t.read_access_offset,
            write_access: t.write_access_offset,
        }
    }
}

crate::layout::state_struct! {
    /// Clock, data bus and DMA unit: everything of the console's glue logic that changes over time.
    pub struct BusState {
        /// Master clocks since power-on.
        pub master_clock: u64,
        /// CPU cycles since power-on (the number of the cycle running, during a cycle).
        pub cpu_cycle: u64,
        /// Master clock up to which the PPU has run.
        pub ppu_clock: u64,
        /// The CPU cycle of the last read of a joypad register ($4016/$4017), to tell a contiguous
        /// set of reads, which clocks the controller once, from a new one.
        pub joypad_read_cycle: u64,
        /// The CPU cycle of the last $4016 write, while its value has not reached the OUT pins yet.
        pub joypad_out_cycle: u64,
        /// Bytes of sprite DMA done while it runs (0-511: even = read next, odd = write next); 0 otherwise.
        pub oam_dma_count: u16,
        /// The external data bus: the last value on the cartridge side of the CPU's data pins (what
        /// unmapped reads return).
        pub open_bus: u8,
        /// The 2A03's internal data bus: the last value the CPU read or wrote. It differs from the
        /// external bus after a $4015 read (driven inside the chip only) and after a DMC DMA fetch
        /// (outside only); bit 5 of $4015 reads come from it.
        pub internal_bus: u8,
        /// CPU/PPU phase: the PPU runs this many master clocks behind the CPU (0-3).
        pub ppu_offset: u8,
        /// Page written to $4014.
        pub oam_dma_page: u8,
        /// 1 while sprite DMA is in progress.
        pub oam_dma_running: u8,
        /// The byte sprite DMA read and will write to $2004 next.
        pub oam_dma_value: u8,
        /// 1 while the DMC's sample fetch is in progress.
        pub dmc_dma_running: u8,
        /// 1 when the CPU must be halted on its next read cycle.
        pub dma_halt: u8,
        /// 1 while the DMC fetch still owes its dummy cycle.
        pub dmc_dma_dummy: u8,
        /// The joypad register read on `joypad_read_cycle`: 1 = $4016, 2 = $4017, 0 = none yet.
        pub joypad_read_port: u8,
        /// Bit 0 of the last $4016 write (the OUT0 latch).
        pub joypad_out_latch: u8,
        /// 1 while the OUT0 latch waits for the end of a get cycle to reach the pin.
        pub joypad_out_pending: u8,
        /// Reserved, always zero (explicit padding).
        pub reserved: [u8; 10],
    }
}

const _: () = assert!(core::mem::size_of::<BusState>() == 64);

/// How the PPU keeps up with the CPU. Both give bit-identical machines; `Lazy` is faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PpuCatchUp {
    /// Run the PPU only where the CPU could observe it, and at predicted events (the default).
    #[default]
    Lazy,
    /// Run the PPU at every one of the three points of every CPU cycle (the reference schedule).
    Eager,
}

/// The schedule in force: the user's [`PpuCatchUp`] combined with whether the cartridge counts M2
/// edges against PPU A12 (the MMC3), which decides who delivers those edges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Schedule {
    /// The PPU runs at every catch-up point, one dot at a time (the board counts no M2 edges).
    #[default]
    Eager,
    /// The same, and every CPU cycle delivers its own M2 edge to the board.
    EagerCountingM2,
    /// The PPU runs only where the CPU could notice, in stretches.
    Lazy,
    /// The same, and each stretch delivers the M2 edges it owes between its dots, where an eager run
    /// would have.
    LazyReplayingM2,
}

/// Bookkeeping of the lazy PPU schedule. Not machine state: it is derived from the state at every
/// public entry point (where the PPU has caught up) and rebuilt after a restore.
///
/// Assumption: cartridge reads never observe PPU-clocked state, but the MMC5's $5000-$5FFF, which
/// catch the PPU up as PPU register reads do (`Cartridge::low_reads_see_ppu`). The MMC3's and the
/// MMC5's IRQs reach the CPU through the /IRQ line, which the prediction covers.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PpuSync {
    /// The schedule chosen by the user.
    pub mode: PpuCatchUp,
    /// The schedule in force (see `Nes::reset_ppu_sync`).
    pub schedule: Schedule,
    /// PPU clock at which the next dot the CPU could notice completes: catch-up points before it are
    /// skipped. 0 forces the next point to run.
    pub deadline: u64,
    /// The same as a master clock at the start of a cycle: a cycle that starts before it needs no
    /// catch-up at any of its points (`deadline` + phase − one cycle; 0 when `deadline` is).
    pub quiet_before: u64,
    /// CPU cycles numbered below this take the fast path (`Nes::read`, `Nes::write`) when they access
    /// work RAM or (reads) the cartridge: the PPU is quiet through them, the APU is not due and no
    /// DMA is waiting and the interrupt latches are at rest, so the cycle only counts and accesses.
    /// Set at the end of every other cycle (`Nes::end_slow_cycle`); 0 forces the next cycle down the
    /// full path.
    pub fast_before: u64,
    /// What the interrupt lines carry between cycles down the full path (and after a catch-up at a
    /// public entry point): /NMI from the PPU (1 = asserted) and /IRQ from the APU or the board. Fast
    /// cycles change none of the chips, so their sampling would see these.
    pub nmi_input: u8,
    pub irq_input: bool,
    /// The last CPU cycle whose M2 edge the cartridge has seen (with `LazyReplayingM2`).
    pub m2_delivered: u64,
    /// Master clock at the start of the current CPU cycle.
    pub cycle_start: u64,
    /// Where the line the next line step starts on ends, when the last line step found it without
    /// running the PPU there (`Nes::step_to_next_line`): the line (`line_step_line`), the master
    /// clock of its end (`line_step_end`, 0 when unknown) and the CPU cycle the step ended on
    /// (`line_step_cycle`: anything run since makes it unknown).
    pub line_step_line: u16,
    pub line_step_end: u64,
    pub line_step_cycle: u64,
    /// The board's /IRQ rises M2 edges after its cause (`Cartridge::has_delayed_irq`): predicted
    /// by those edges too, and replayed through the whole board dispatch. Fixed at load.
    pub delayed_irq: bool,
}

impl PpuSync {
    /// Forgets the prediction, so the next catch-up point runs the PPU and predicts afresh: after
    /// anything that may move the next observable dot (a register access, a cartridge write, a reset).
    #[inline(always)]
    pub fn invalidate(&mut self) {
        self.deadline = 0;
        self.line_step_end = 0;
        self.quiet_before = 0;
        self.fast_before = 0;
    }

    /// Sets the prediction: the PPU clock at which the next observable dot completes.
    #[inline(always)]
    pub(super) fn predict<R: RegionModel>(&mut self, deadline: u64, ppu_offset: u8) {
        self.deadline = deadline;
        let cycle = R::TIMING.master_per_cpu_cycle;
        self.quiet_before = deadline.saturating_add(u64::from(ppu_offset)).saturating_sub(cycle);
    }
}
