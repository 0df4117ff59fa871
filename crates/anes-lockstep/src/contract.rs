//! The [`Machine`] contract the runner relies on, checked on any machine: frontends that implement
//! [`Machine`] for another core run [`check_contract`] in their tests.

use anes_core::state::FrameRecord;

use crate::machine::{Machine, MachineError, Probe};

/// A way a machine breaks the [`Machine`] contract the lockstep runner relies on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractViolation {
    /// Stepping a frame instruction by instruction ends elsewhere than `run_frame`.
    #[error("stepping frame {frame} instruction by instruction ends at {stepped:?}, run_frame at {whole:?}")]
    SteppedFrameDiffers {
        /// Frame index.
        frame: u64,
        /// Record after stepping.
        stepped: FrameRecord,
        /// Record after `run_frame`.
        whole: FrameRecord,
    },
    /// A machine that lags ([`Machine::lag_signature`]): its lagging steps end a frame elsewhere than
    /// `run_frame`, or settled mid-frame it is elsewhere than stepped there instruction by instruction.
    #[error("lagging steps reach {lagging:?} where stepping instruction by instruction reaches {stepped:?}")]
    LaggingDiffers {
        /// Record (state hash included) after the lagging steps, settled.
        lagging: FrameRecord,
        /// Record after as many instructions stepped one by one.
        stepped: FrameRecord,
    },
    /// A snapshot does not bring the machine back to where it was.
    #[error("a snapshot taken at {saved:?} restores to {restored:?}: some state is outside the snapshot")]
    SnapshotIncomplete {
        /// Probe when saved.
        saved: Probe,
        /// Probe after restoring.
        restored: Probe,
    },
    /// Replaying from a snapshot gives another result than the first time.
    #[error("replaying a frame from a snapshot ends at {replayed:?}, the first run at {first:?}")]
    ReplayDiffers {
        /// First run's record.
        first: FrameRecord,
        /// Replay's record.
        replayed: FrameRecord,
    },
    /// The snapshot was refused.
    #[error("the machine refused its own snapshot: {0}")]
    Refused(#[from] MachineError),
}

/// Checks, on clones, that `machine` keeps the contract the runner relies on for `frames` frames from
/// a mid-frame point: stepped frames equal whole frames, and a snapshot taken mid-frame restores the
/// exact position and replays identically. Frontends implementing [`Machine`] for another core can run
/// it in their tests. For a machine that does not step instructions, the snapshot is taken after a
/// frame instead.
pub fn check_contract<M: Machine + Clone>(machine: &M, frames: u64) -> Result<(), ContractViolation> {
    let idle = M::Input::default();
    let steps = machine.steps_instructions();
    let mut whole = machine.clone();
    let mut stepped = machine.clone();
    for frame in 0..frames {
        if !steps {
            break;
        }
        let record = whole.run_frame(idle);
        let other = stepped.run_frame_stepwise(idle);
        if record != other {
            return Err(ContractViolation::SteppedFrameDiffers { frame, stepped: other, whole: record });
        }
    }
    if steps && machine.lag_signature().is_some() {
        check_lagging(machine, frames)?;
    }
    // Mid-frame snapshot: step part of a frame, save, run on, restore, replay.
    let mut m = machine.clone();
    if steps {
        m.begin_frame(idle);
        for _ in 0..1000 {
            if m.step_instruction() {
                m.begin_frame(idle);
            }
        }
    } else {
        m.run_frame(idle);
    }
    let mut snapshot = Vec::new();
    m.save_state(&mut snapshot);
    let saved = (m.probe(), m.state_hash());
    let first = m.clone().finish_frame_then_run(frames);
    m.run_frame(idle);
    m.load_state(&snapshot)?;
    if (m.probe(), m.state_hash()) != saved {
        return Err(ContractViolation::SnapshotIncomplete { saved: saved.0, restored: m.probe() });
    }
    let replayed = m.finish_frame_then_run(frames);
    if first != replayed {
        return Err(ContractViolation::ReplayDiffers { first, replayed });
    }
    Ok(())
}

/// A lagging machine's steps: whole frames of them (instructions or lines) end where `run_frame`
/// does, and settling after
/// any number of them (here: after 1, 2, 4, 8, ... instructions of the frame) shows the machine that
/// stepping instruction by instruction shows.
fn check_lagging<M: Machine + Clone>(machine: &M, frames: u64) -> Result<(), ContractViolation> {
    let idle = M::Input::default();
    let mut whole = machine.clone();
    let mut lagging = machine.clone();
    for _ in 0..frames {
        let record = whole.run_frame(idle);
        lagging.begin_frame(idle);
        lagging.settle();
        while !lagging.step_instruction_lagging() {}
        let other = lagging.record();
        if record != other {
            return Err(ContractViolation::LaggingDiffers { lagging: other, stepped: record });
        }
    }
    // A frame a line at a time.
    let mut whole = machine.clone();
    let mut lines = machine.clone();
    let record = whole.run_frame(idle);
    lines.begin_frame(idle);
    lines.settle();
    while !lines.step_to_next_line_lagging() {}
    let other = lines.record();
    if record != other {
        return Err(ContractViolation::LaggingDiffers { lagging: other, stepped: record });
    }
    let mut count = 1u32;
    loop {
        let (mut lagging, mut stepped) = (machine.clone(), machine.clone());
        lagging.begin_frame(idle);
        lagging.settle();
        stepped.begin_frame(idle);
        let mut done = false;
        for _ in 0..count {
            let ends = (lagging.step_instruction_lagging(), stepped.step_instruction());
            if ends.0 || ends.1 {
                // Both end the frame on the same instruction, or the records differ below.
                done = ends.0 && ends.1;
                break;
            }
        }
        lagging.settle();
        let (lagging, stepped) = (lagging.record(), stepped.record());
        if lagging != stepped {
            return Err(ContractViolation::LaggingDiffers { lagging, stepped });
        }
        if done {
            return Ok(());
        }
        count *= 2;
    }
}

trait ContractSteps: Machine {
    fn run_frame_stepwise(&mut self, input: Self::Input) -> FrameRecord {
        self.begin_frame(input);
        while !self.step_instruction() {}
        self.record()
    }

    /// Finishes the frame in progress (a machine that does not step instructions is between frames),
    /// then runs `frames` more.
    fn finish_frame_then_run(&mut self, frames: u64) -> FrameRecord {
        if self.steps_instructions() {
            while !self.step_instruction() {}
        }
        let mut record = self.record();
        for _ in 0..frames {
            record = self.run_frame(Self::Input::default());
        }
        record
    }
}

impl<M: Machine + ?Sized> ContractSteps for M {}
