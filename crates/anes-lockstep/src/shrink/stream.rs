//! [`minimize_stream`]: the shrinker's passes (presses, single buttons, console commands, ddmin to
//! 1-minimal) over any yes-or-no question about a whole input stream, each trial asked from the
//! stream's first frame. For failures that are not one lockstep divergence (a savestate audit's
//! check), and for machines whose trials cannot start from a checkpoint (a core that keeps state
//! outside its snapshots is exactly what such a question is about).

use std::time::{Duration, Instant};

use super::ddmin::{Budget, Halt, RemovalOracle, ddmin};
use super::input::{Atom, Pass, ShrinkInput, count_presses};

/// When a [`minimize_stream`] search stops early, with the smallest stream found so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamLimits {
    /// Most trials (the first question, about the stream as given, is not counted).
    pub max_trials: Option<u64>,
    /// Most time.
    pub budget: Option<Duration>,
}

/// What [`minimize_stream`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinimizedStream<I> {
    /// The smallest stream that still reproduces: as long as the one given, presses released.
    pub repro: Vec<I>,
    /// Frames of the given stream that held a press.
    pub original_presses: u64,
    /// Frames of the repro that hold a press.
    pub presses: u64,
    /// Trials asked after the first question.
    pub trials: u64,
    /// `None` when the search finished: removing any one press, button or command left stops the
    /// stream reproducing (1-minimal).
    pub stopped_by: Option<Budget>,
}

/// Why [`minimize_stream`] returned no stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamHalt<E> {
    /// The stream as given does not reproduce: nothing to minimize.
    NotReproduced,
    /// The question could not be answered.
    Failed(E),
}

/// The smallest stream for which `reproduces` still answers `true`, found by removing presses, then
/// single buttons, then console commands (delta debugging, one trial at a time, repeated until a
/// round changes nothing), as [`shrink`](super::shrink) does. Every trial asks about a whole stream
/// from its first frame: slower than [`shrink`](super::shrink)'s trials from checkpoints, and
/// right for any question about the stream.
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_lockstep::{StreamLimits, minimize_stream};
///
/// // "Fails" when Select (bit 2) was held on some frame before frame 30.
/// let stream: Vec<FrameInput> = (0..60).map(|n| FrameInput::buttons((n * 7 % 256) as u8, 0)).collect();
/// let mut fails =
///     |s: &[FrameInput]| Ok::<bool, ()>(s[..30].iter().any(|f| f.pads[0] & 0x04 != 0));
/// let found = minimize_stream(&stream, StreamLimits::default(), &mut fails).unwrap();
/// assert_eq!(found.presses, 1);
/// assert_eq!(found.repro.iter().filter(|f| f.pads[0] != 0).map(|f| f.pads[0]).collect::<Vec<_>>(), [0x04]);
/// assert!(found.stopped_by.is_none());
/// ```
pub fn minimize_stream<I: ShrinkInput, E>(
    stream: &[I],
    limits: StreamLimits,
    reproduces: &mut dyn FnMut(&[I]) -> Result<bool, E>,
) -> Result<MinimizedStream<I>, StreamHalt<E>> {
    if !reproduces(stream).map_err(StreamHalt::Failed)? {
        return Err(StreamHalt::NotReproduced);
    }
    let mut oracle = WholeStreamOracle {
        stream: stream.to_vec(),
        reproduces,
        trials: 0,
        max_trials: limits.max_trials,
        deadline: limits.budget.map(|budget| Instant::now() + budget),
    };
    let mut stopped_by = None;
    'rounds: loop {
        let before = oracle.stream.clone();
        for pass in [Pass::Presses, Pass::Buttons, Pass::Commands] {
            let atoms = pass.atoms(&oracle.stream);
            let result = ddmin(atoms, &mut oracle, 1).map_err(StreamHalt::Failed)?;
            if result.stopped_by.is_some() {
                stopped_by = result.stopped_by;
                break 'rounds;
            }
        }
        if oracle.stream == before {
            break;
        }
    }
    Ok(MinimizedStream {
        original_presses: count_presses(stream),
        presses: count_presses(&oracle.stream),
        trials: oracle.trials,
        repro: oracle.stream,
        stopped_by,
    })
}

/// Answers ddmin one candidate at a time, each by asking about the whole stream without its atoms.
struct WholeStreamOracle<'q, I, E> {
    /// The stream that reproduces now.
    stream: Vec<I>,
    reproduces: &'q mut dyn FnMut(&[I]) -> Result<bool, E>,
    trials: u64,
    max_trials: Option<u64>,
    deadline: Option<Instant>,
}

impl<I: ShrinkInput, E> RemovalOracle<Atom> for WholeStreamOracle<'_, I, E> {
    type Error = E;

    fn try_removals(&mut self, candidates: &[Vec<Atom>]) -> Result<Vec<bool>, Halt<E>> {
        if self.max_trials.is_some_and(|max| self.trials >= max) {
            return Err(Halt::Budget(Budget::Trials));
        }
        if self.deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            return Err(Halt::Budget(Budget::Time));
        }
        let mut candidate = self.stream.clone();
        for atom in &candidates[0] {
            atom.remove_from(&mut candidate);
        }
        self.trials += 1;
        let reproduced = (self.reproduces)(&candidate).map_err(Halt::Failed)?;
        if reproduced {
            self.stream = candidate;
        }
        Ok(vec![reproduced])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anes_core::movie::{ConsoleCommand, FrameInput};

    #[test]
    fn only_the_press_and_button_the_question_needs_are_kept() {
        // A and B on frame 5, Start on frame 9, a reset on frame 12; the question needs A on
        // frame 5 and the reset.
        let mut stream = vec![FrameInput::default(); 20];
        stream[5] = FrameInput::buttons(0x03, 0);
        stream[9] = FrameInput::buttons(0x08, 0x08);
        stream[12].command = ConsoleCommand::SoftReset;
        let mut asked = 0;
        let mut needs = |s: &[FrameInput]| {
            asked += 1;
            Ok::<bool, ()>(s[5].pads[0] & 0x01 != 0 && s[12].command == ConsoleCommand::SoftReset)
        };
        let found = minimize_stream(&stream, StreamLimits::default(), &mut needs).unwrap();
        let mut expected = vec![FrameInput::default(); 20];
        expected[5] = FrameInput::buttons(0x01, 0);
        expected[12].command = ConsoleCommand::SoftReset;
        assert_eq!(found.repro, expected);
        assert_eq!((found.original_presses, found.presses, found.stopped_by), (2, 1, None));
        assert_eq!(found.trials + 1, asked);
    }

    #[test]
    fn a_stream_that_does_not_reproduce_is_refused_and_a_budget_stops_early() {
        let stream = vec![FrameInput::buttons(0x01, 0); 8];
        let never = minimize_stream(&stream, StreamLimits::default(), &mut |_| Ok::<bool, ()>(false));
        assert_eq!(never, Err(StreamHalt::NotReproduced));
        let limits = StreamLimits { max_trials: Some(1), budget: None };
        let found = minimize_stream(&stream, limits, &mut |s| Ok::<bool, ()>(s[7].pads[0] != 0)).unwrap();
        assert_eq!((found.trials, found.stopped_by), (1, Some(Budget::Trials)));
        let failed = minimize_stream(&stream, StreamLimits::default(), &mut |_| Err::<bool, &str>("gone"));
        assert_eq!(failed, Err(StreamHalt::Failed("gone")));
    }
}
