//! One machine of the pair and everything only it touches: its fault schedule and its position in
//! the input stream. In threaded mode each side lives on its own worker thread, with its machine's
//! bank of the checkpoint ring.

use anes_core::state::FrameRecord;

use crate::checkpoint::SnapshotBank;
use crate::config::Granularity;
use crate::input::InputSource;
use crate::machine::Machine;
use crate::schedule::FaultSchedule;

/// What a machine reports at a sync point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SyncRecord {
    /// Input-stream index of the frame this sync point belongs to.
    pub frame: u64,
    /// Record of the machine at the sync point. Inside a frame its state hash may be zeroed
    /// ([`Machine::sync_record`]): `digest` stands for it there.
    pub record: FrameRecord,
    /// True when the sync point is the end of the frame.
    pub frame_end: bool,
    /// [`Machine::sync_record`]'s digest of the whole state inside a frame; 0 at a frame end, whose
    /// record carries the full state hash.
    pub digest: u64,
}

impl SyncRecord {
    /// The sync record of a sync point inside frame `frame`: the machine's record there and the
    /// digest that stands for its state hash.
    pub(crate) fn inside_frame((record, digest): (FrameRecord, u64), frame: u64) -> SyncRecord {
        SyncRecord { frame, record, frame_end: false, digest }
    }
}

/// Before any frame has been measured, assume a frame may take this many CPU cycles when deciding
/// whether a fault may come due within the next frame (NTSC frames take 29,780.5).
const INITIAL_FRAME_CYCLES_BOUND: u64 = 1 << 20;

#[derive(Debug)]
pub(crate) struct Side<M> {
    pub machine: M,
    pub faults: FaultSchedule,
    /// Input-stream index of the frame in progress, or of the next one.
    pub frame: u64,
    /// Ordinal of the next sync record this side produces (the comparator's numbering; set when a
    /// run starts). Faults remember it to be judged at that sync point.
    pub sync_point: u64,
    pub in_frame: bool,
    /// Scanline granularity: no fault can come due in the frame in progress, so it runs a line at a
    /// time ([`Machine::step_to_next_line`]) instead of an instruction at a time.
    lines_in_bulk: bool,
    /// The machine steps instructions ([`Machine::steps_instructions`]); otherwise it runs whole
    /// frames only, and its faults fire at the end of the frame in which they came due.
    steps: bool,
    /// Instruction and scanline granularity step lagging ([`Machine::step_instruction_lagging`],
    /// [`Machine::step_to_next_line_lagging`]): set by the
    /// runner when both machines lag alike and no fault is planned, so both sides step alike.
    pub lagging: bool,
    frame_start_cycle: u64,
    frame_cycles_bound: u64,
}

impl<M: Machine> Side<M> {
    pub(crate) fn new(machine: M, faults: FaultSchedule, frame: u64) -> Side<M> {
        Side {
            steps: machine.steps_instructions(),
            machine,
            faults,
            frame,
            sync_point: 0,
            in_frame: false,
            lines_in_bulk: false,
            lagging: false,
            frame_start_cycle: 0,
            frame_cycles_bound: INITIAL_FRAME_CYCLES_BOUND,
        }
    }

    /// Runs the machine to its next sync point and reports it; at the end of a frame after which a
    /// checkpoint is due (every `checkpoint_every` frames), the machine is saved into `bank` there.
    pub(crate) fn advance<S: InputSource<M::Input> + ?Sized>(
        &mut self,
        bank: &mut SnapshotBank,
        inputs: &S,
        granularity: Granularity,
        checkpoint_every: u64,
    ) -> SyncRecord {
        let sync = self.next_sync(inputs, granularity);
        self.save_if_due(&sync, bank, checkpoint_every);
        sync
    }

    /// Saves the machine into `bank` when `sync` ended a frame after which a checkpoint is due.
    #[inline]
    pub(crate) fn save_if_due(&mut self, sync: &SyncRecord, bank: &mut SnapshotBank, checkpoint_every: u64) {
        if sync.frame_end && self.frame % checkpoint_every == 0 {
            bank.save_next(&self.machine);
        }
    }

    /// True when the next sync point is a lagging step inside the frame in progress
    /// ([`Side::step_lagging_in_frame`] may be called).
    #[inline]
    pub(crate) fn lags_inside_frame(&self, granularity: Granularity) -> bool {
        self.in_frame && self.lagging_in(granularity)
    }

    /// [`Side::next_sync`] where [`Side::lags_inside_frame`], for a runner that compares in place
    /// or hands over batches (`batch.rs`):
    /// one lagging step (`by_line`: to the next line, else one instruction). A sync point inside the
    /// frame comes back as the lagging digest and the CPU cycle, all the sync record says that the
    /// digest would not (its full record: [`Side::lagging_sync_inside_frame`]); `None` at the end of
    /// the frame, whose record [`Side::lagging_frame_end`] must then take before the next step.
    #[inline(always)]
    pub(crate) fn step_lagging_in_frame(&mut self, by_line: bool) -> Option<(u64, u64)> {
        if self.step_lagging(by_line) {
            return None;
        }
        self.sync_point += 1;
        let (record, digest) = self.machine.lagging_sync_record();
        Some((digest, record.cpu_cycle))
    }

    /// One lagging step (`by_line`: to the next line, else one instruction); true when it ended
    /// the frame.
    #[inline(always)]
    fn step_lagging(&mut self, by_line: bool) -> bool {
        if by_line {
            self.machine.step_to_next_line_lagging()
        } else {
            self.machine.step_instruction_lagging()
        }
    }

    /// The whole sync record of the sync point inside the frame that the last
    /// [`Side::step_lagging_in_frame`] reached.
    pub(crate) fn lagging_sync_inside_frame(&self) -> SyncRecord {
        SyncRecord::inside_frame(self.machine.lagging_sync_record(), self.frame)
    }

    /// The sync record of the frame's end that the last [`Side::step_lagging_in_frame`] reached
    /// (it returned `None`).
    pub(crate) fn lagging_frame_end(&mut self) -> SyncRecord {
        self.sync_after_step(true, true)
    }

    /// Runs the machine to its next sync point and reports it.
    pub(crate) fn next_sync<S: InputSource<M::Input> + ?Sized>(
        &mut self,
        inputs: &S,
        granularity: Granularity,
    ) -> SyncRecord {
        if !self.in_frame {
            let input = inputs.input(self.frame);
            let input = self.faults.input_for(self.frame, input, &self.machine, self.sync_point);
            if !self.steps {
                return self.whole_frame(input);
            }
            self.frame_start_cycle = self.machine.probe().cpu_cycle;
            let fault_due =
                self.faults.due_before(self.frame_start_cycle.saturating_add(self.frame_cycles_bound));
            if granularity == Granularity::Frame && !fault_due {
                let record = self.machine.run_frame(input);
                return self.finish_frame(record);
            }
            self.machine.begin_frame(input);
            if self.lagging_in(granularity) {
                // Both machines lag alike from a settled start (see `Machine::settle`).
                self.machine.settle();
            }
            self.in_frame = true;
            self.lines_in_bulk = !fault_due;
        }
        if self.lagging_in(granularity) {
            let done = self.step_lagging(granularity == Granularity::Scanline);
            return self.sync_after_step(done, true);
        }
        if granularity == Granularity::Scanline && self.lines_in_bulk {
            // No fault can come due in this frame: a line at a time (the same sync points).
            let done = self.machine.step_to_next_line();
            return self.sync_after_step(done, false);
        }
        let start_scanline =
            if granularity == Granularity::Scanline { self.machine.probe().scanline } else { 0 };
        loop {
            let done = self.machine.step_instruction();
            if self.faults.has_pending() && self.faults.due_before(self.machine.probe().cpu_cycle) {
                self.faults.fire_due(self.frame, &mut self.machine, self.sync_point);
            }
            let sync = match granularity {
                _ if done => true,
                Granularity::Frame => false,
                Granularity::Scanline => self.machine.probe().scanline != start_scanline,
                Granularity::Instruction => true,
            };
            if sync {
                return self.sync_after_step(done, false);
            }
        }
    }

    /// True when this side steps lagging: instruction or scanline granularity on machines that lag
    /// alike, no fault planned.
    #[inline]
    fn lagging_in(&self, granularity: Granularity) -> bool {
        self.lagging && granularity != Granularity::Frame
    }

    /// Brings a machine left lagging at a sync point inside a frame up to it (before anything reads
    /// it but the comparator).
    pub(crate) fn settle(&mut self) {
        if self.lagging && self.in_frame {
            self.machine.settle();
        }
    }

    /// The sync record after a step that reached a sync point (`done`: the end of the frame, where
    /// a lagging step has settled); `lagging`: the step left the machine lagging.
    #[inline(always)]
    fn sync_after_step(&mut self, done: bool, lagging: bool) -> SyncRecord {
        if done {
            self.in_frame = false;
            let record = self.machine.record();
            return self.finish_frame(record);
        }
        self.sync_point += 1;
        let parts = if lagging { self.machine.lagging_sync_record() } else { self.machine.sync_record() };
        SyncRecord::inside_frame(parts, self.frame)
    }

    /// A frame of a machine that does not step instructions: its state faults fire at the end of the
    /// frame in which they came due (the only instruction boundary it exposes).
    fn whole_frame(&mut self, input: M::Input) -> SyncRecord {
        self.frame_start_cycle = self.machine.probe().cpu_cycle;
        let mut record = self.machine.run_frame(input);
        if self.faults.has_pending() && self.faults.due_before(record.cpu_cycle) {
            self.faults.fire_due(self.frame, &mut self.machine, self.sync_point);
            record = self.machine.record();
        }
        self.finish_frame(record)
    }

    fn finish_frame(&mut self, record: FrameRecord) -> SyncRecord {
        self.sync_point += 1;
        let sync = SyncRecord { frame: self.frame, record, frame_end: true, digest: 0 };
        // A frame of an NTSC NES is about 29,781 cycles; twice the last frame is a safe bound for when
        // a fault may come due, and a longer frame only means stepping one frame instruction-wise.
        self.frame_cycles_bound =
            record.cpu_cycle.saturating_sub(self.frame_start_cycle).max(1).saturating_mul(2);
        self.frame += 1;
        sync
    }
}
