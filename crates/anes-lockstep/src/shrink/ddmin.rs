//! Delta debugging (Zeller and Hildebrandt's ddmin) over an abstract oracle, in the variant that
//! tests complements only: each candidate removes one chunk of the atoms still kept from the
//! configuration that reproduces now. Chunks that can go are removed one after another in chunk
//! order (greedy); when a pass over the chunks removes nothing, the chunks are halved; a pass over
//! single atoms that removes nothing ends the search. The result is 1-minimal: removing any one
//! atom left was tried, on the final configuration, and did not reproduce.
//!
//! Subsets ("keep only this chunk") are not tested: a subset changes the whole stream, so the trial
//! replays everything, while a complement changes one chunk and starts from a checkpoint just
//! before it.
//!
//! Determinism: the oracle gets the next `wave` candidates in chunk order and answers a prefix of
//! them as a one-at-a-time search would (each against the configuration left by the removals
//! before it); the candidates it did not answer are asked again. So the result does not depend on
//! how many candidates are evaluated at once.

/// Why a search stopped before it was done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// `--budget SECONDS` ran out.
    Time,
    /// The trial budget ran out.
    Trials,
}

impl Budget {
    /// `time` or `trials`, as reports name it.
    pub const fn name(self) -> &'static str {
        match self {
            Budget::Time => "time",
            Budget::Trials => "trials",
        }
    }
}

/// Why an oracle gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt<E> {
    /// A budget ran out: the search ends with the configuration that reproduces now.
    Budget(Budget),
    /// The oracle failed: the search ends with this error.
    Failed(E),
}

/// What ddmin asks. The oracle holds the configuration that reproduces now; a candidate names the
/// atoms it removes from it.
pub trait RemovalOracle<T> {
    /// Why a trial could not be run.
    type Error;

    /// Answers the first `n` of `candidates` (`1 <= n`), in order, as a one-at-a-time search would:
    /// `answers[i]` says whether the configuration still reproduces without candidate `i`'s atoms,
    /// taken from the configuration left after removing every earlier candidate that did. Those
    /// removals are the oracle's configuration afterwards. May evaluate candidates in parallel; an
    /// answer it cannot give as if in order (it depended on a removal before it) ends the prefix.
    fn try_removals(&mut self, candidates: &[Vec<T>]) -> Result<Vec<bool>, Halt<Self::Error>>;
}

/// How a search ended: the atoms kept and, if a budget stopped it, which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Minimized<T> {
    /// Atoms of the configuration that reproduces, in their original order.
    pub kept: Vec<T>,
    /// `None` when the search finished: `kept` is 1-minimal.
    pub stopped_by: Option<Budget>,
}

/// Minimizes `atoms` (all present in the oracle's configuration) with candidates asked `wave` at a
/// time (at least 1).
pub fn ddmin<T: Clone, E>(
    atoms: Vec<T>,
    oracle: &mut dyn RemovalOracle<T, Error = E>,
    wave: usize,
) -> Result<Minimized<T>, E> {
    let wave = wave.max(1);
    let mut chunks_wanted = 2usize;
    let mut kept = atoms;
    while !kept.is_empty() {
        let mut chunks = split(&kept, chunks_wanted.min(kept.len()));
        let single_atoms = chunks.len() == kept.len();
        let mut removed_any = false;
        let mut next = 0;
        while next < chunks.len() {
            let end = (next + wave).min(chunks.len());
            match oracle.try_removals(&chunks[next..end]) {
                Err(Halt::Budget(budget)) => {
                    return Ok(Minimized { kept: chunks.concat(), stopped_by: Some(budget) });
                }
                Err(Halt::Failed(error)) => return Err(error),
                Ok(answers) => {
                    assert!(
                        (1..=end - next).contains(&answers.len()),
                        "an oracle answers 1 to {} candidates, not {}",
                        end - next,
                        answers.len()
                    );
                    for reproduced in answers {
                        if reproduced {
                            chunks.remove(next);
                            removed_any = true;
                        } else {
                            next += 1;
                        }
                    }
                }
            }
        }
        kept = chunks.concat();
        if !removed_any && single_atoms {
            break;
        }
        if !removed_any {
            chunks_wanted = chunks_wanted.saturating_mul(2);
        } else {
            // The chunks left all failed on their own: split them finer for the next pass.
            chunks_wanted = chunks.len().saturating_mul(2).max(2);
        }
        if removed_any && single_atoms {
            // A pass over single atoms that removed some repeats until one removes nothing.
            chunks_wanted = kept.len();
        }
    }
    Ok(Minimized { kept, stopped_by: None })
}

/// `atoms` in `n` contiguous chunks whose sizes differ by at most one (`1 <= n <= atoms.len()`).
fn split<T: Clone>(atoms: &[T], n: usize) -> Vec<Vec<T>> {
    let (size, extra) = (atoms.len() / n, atoms.len() % n);
    let mut chunks = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = size + usize::from(i < extra);
        chunks.push(atoms[start..start + len].to_vec());
        start += len;
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Reproduces when the configuration satisfies `holds`; counts the candidates it looked at.
    struct SetOracle<F> {
        config: BTreeSet<u32>,
        holds: F,
        asked: usize,
        trials_left: Option<usize>,
        /// Answer only through the first candidate that reproduces (the shortest prefix an oracle
        /// may give), not the whole wave.
        stop_at_first: bool,
    }

    impl<F: Fn(&BTreeSet<u32>) -> bool> RemovalOracle<u32> for SetOracle<F> {
        type Error = core::convert::Infallible;

        fn try_removals(&mut self, candidates: &[Vec<u32>]) -> Result<Vec<bool>, Halt<Self::Error>> {
            let mut answers = Vec::new();
            for removal in candidates {
                if let Some(left) = &mut self.trials_left {
                    if *left == 0 && answers.is_empty() {
                        return Err(Halt::Budget(Budget::Trials));
                    }
                    if *left == 0 {
                        break;
                    }
                    *left -= 1;
                }
                self.asked += 1;
                let candidate: BTreeSet<u32> =
                    self.config.difference(&removal.iter().copied().collect()).copied().collect();
                let reproduced = (self.holds)(&candidate);
                answers.push(reproduced);
                if reproduced {
                    self.config = candidate;
                    if self.stop_at_first {
                        break;
                    }
                }
            }
            Ok(answers)
        }
    }

    fn oracle<F: Fn(&BTreeSet<u32>) -> bool>(n: u32, holds: F) -> SetOracle<F> {
        SetOracle { config: (0..n).collect(), holds, asked: 0, trials_left: None, stop_at_first: false }
    }

    #[test]
    fn finds_the_three_atoms_that_matter_among_thousands() {
        let needed = [17u32, 1500, 2999];
        for wave in [1, 2, 5] {
            let mut o = oracle(3000, |c: &BTreeSet<u32>| needed.iter().all(|n| c.contains(n)));
            let result = ddmin((0..3000).collect(), &mut o, wave).unwrap();
            assert_eq!(result, Minimized { kept: needed.to_vec(), stopped_by: None }, "wave {wave}");
            assert!(o.asked < 400, "{} candidates asked", o.asked);
        }
    }

    #[test]
    fn the_result_is_one_minimal_for_a_non_monotonic_oracle() {
        // Reproduces when the kept sum is divisible by 7 and at least 3 atoms are left: removing
        // chunks can break and restore it, so only the final single-atom pass vouches for the result.
        let holds = |c: &BTreeSet<u32>| c.len() >= 3 && c.iter().sum::<u32>() % 7 == 0;
        let start: BTreeSet<u32> = (0..42).collect();
        assert!(holds(&start), "0 + 1 + ... + 41 = 861 = 7 * 123");
        let mut o = oracle(42, holds);
        let result = ddmin((0..42).collect(), &mut o, 3).unwrap();
        assert_eq!(result.stopped_by, None);
        let kept: BTreeSet<u32> = result.kept.iter().copied().collect();
        assert!(holds(&kept));
        for atom in &kept {
            let mut less = kept.clone();
            less.remove(atom);
            assert!(!holds(&less), "removing {atom} from {kept:?} still reproduces");
        }
    }

    #[test]
    fn same_result_whatever_the_wave() {
        let holds = |c: &BTreeSet<u32>| c.iter().filter(|&&a| a % 5 == 3).count() >= 4 && c.contains(&77);
        let results: Vec<_> = [1, 2, 3, 8, 64]
            .into_iter()
            .flat_map(|wave| [(wave, false), (wave, true)])
            .map(|(wave, stop_at_first)| {
                let mut o = SetOracle { stop_at_first, ..oracle(200, holds) };
                ddmin((0..200).collect(), &mut o, wave).unwrap()
            })
            .collect();
        assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:?}");
        let kept = &results[0].kept;
        assert_eq!(kept.len(), 5, "{kept:?}");
        assert!(kept.contains(&77) && kept.iter().filter(|&&a| a % 5 == 3).count() == 4, "{kept:?}");
    }

    #[test]
    fn a_budget_stops_with_the_best_configuration_so_far() {
        let mut o = oracle(1000, |c: &BTreeSet<u32>| c.contains(&500));
        o.trials_left = Some(5);
        let result = ddmin((0..1000).collect(), &mut o, 1).unwrap();
        assert_eq!(result.stopped_by, Some(Budget::Trials));
        assert!(result.kept.contains(&500) && result.kept.len() < 1000, "{}", result.kept.len());
        assert_eq!(result.kept, o.config.iter().copied().collect::<Vec<_>>());
    }

    #[test]
    fn nothing_to_remove_asks_nothing() {
        let mut o = oracle(0, |_: &BTreeSet<u32>| true);
        assert_eq!(ddmin(Vec::new(), &mut o, 4).unwrap(), Minimized { kept: Vec::new(), stopped_by: None });
        assert_eq!(o.asked, 0);
    }
}
