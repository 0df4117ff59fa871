//! The divider every APU channel's timer is: counts down once per clock and, on the clock after it
//! reaches zero, reloads. Advancing it by many clocks at once is what lets the APU catch up lazily.

/// Advances a timer that counts `counter` down once per clock and reloads it with `reload` on the
/// clock after it reached zero, by `clocks` clocks at once. Returns how many reloads happened, each
/// of which is one step of the channel's sequencer (or one output event). Exactly the same as
/// `clocks` single clocks.
#[inline]
pub fn advance(counter: &mut u16, reload: u16, clocks: u64) -> u64 {
    let current = u64::from(*counter);
    if clocks <= current {
        *counter = (current - clocks) as u16;
        return 0;
    }
    // The first reload comes `current + 1` clocks in; then one every `reload + 1` clocks.
    let after_first = clocks - current - 1;
    let period = u64::from(reload) + 1;
    *counter = (u64::from(reload) - after_first % period) as u16;
    1 + after_first / period
}

/// Clocks until the `n`-th reload (n >= 1) of a timer at `counter` that reloads with `reload`.
#[inline]
pub fn clocks_until_reload(counter: u16, reload: u16, n: u64) -> u64 {
    u64::from(counter) + 1 + (n - 1) * (u64::from(reload) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_by_one(counter: &mut u16, reload: u16, clocks: u64) -> u64 {
        let mut reloads = 0;
        for _ in 0..clocks {
            if *counter == 0 {
                *counter = reload;
                reloads += 1;
            } else {
                *counter -= 1;
            }
        }
        reloads
    }

    #[test]
    fn advancing_at_once_equals_clocking_one_by_one() {
        for reload in [0u16, 1, 2, 7, 53, 2033, 0x7FF, u16::MAX] {
            for start in [0u16, 1, 5, reload, reload.saturating_add(9), u16::MAX] {
                for clocks in [0u64, 1, 2, 3, 8, 54, 100, 4097, 70_000, 140_000] {
                    let (mut fast, mut slow) = (start, start);
                    let reloads = advance(&mut fast, reload, clocks);
                    assert_eq!(reloads, one_by_one(&mut slow, reload, clocks), "{start} {reload} {clocks}");
                    assert_eq!(fast, slow, "{start} {reload} {clocks}");
                }
            }
        }
    }

    #[test]
    fn the_nth_reload_comes_when_predicted() {
        for (counter, reload) in [(0u16, 0u16), (3, 5), (0, 213), (99, 1)] {
            for n in 1..5 {
                let clocks = clocks_until_reload(counter, reload, n);
                let mut c = counter;
                assert_eq!(advance(&mut c, reload, clocks - 1), n - 1);
                assert_eq!(advance(&mut c, reload, 1), 1);
            }
        }
    }
}
