//! Runs ROMs in parallel, each isolated so that a panic in the core becomes a visible `error` row.

use std::any::Any;
use std::num::NonZeroUsize;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use crate::console::{Console, PowerOn};
use crate::manifest::{Protocol, RomEntry};
use crate::protocol::{self, Outcome, Progress};
use crate::report::RomResult;

/// Runs one ROM. Never panics: a panic inside the core is caught and reported as status `error`
/// with the panic message (it is a core bug, never the ROM's fault).
pub fn run_rom(rom: &RomEntry) -> RomResult {
    let started = Instant::now();
    let mut progress = Progress::default();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| protocol::run(rom, &mut progress))).unwrap_or_else(
        |payload| {
            Outcome::error(format!("the core panicked (a core bug): {}", panic_message(payload.as_ref())))
        },
    );
    result(rom, outcome, &progress, started)
}

/// Runs one ROM on another emulator: `power_on` builds it from the parsed cartridge (its header
/// already checked against the manifest) and the file's bytes, or says why it cannot. The ROM's
/// protocol reads the result through [`Console`]; `nestest-log`, which compares anes's own trace,
/// is reported as `error` for consoles without [`Console::as_nes`], and so is a ROM of another region
/// than NTSC (`power_on` is not told the region). Never panics: a panic in the emulator is reported
/// as `error`.
pub fn run_rom_on<C: Console>(rom: &RomEntry, power_on: PowerOn<'_, C>) -> RomResult {
    let started = Instant::now();
    let mut progress = Progress::default();
    let ntsc_only = || match protocol::region_of(rom) {
        Ok(anes_core::Region::Ntsc) => None,
        Ok(region) => Some(Outcome::error(format!(
            "region {region}: other emulators are run as NTSC consoles only (power_on is not told the region)"
        ))),
        Err(outcome) => Some(outcome),
    };
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        ntsc_only().unwrap_or_else(|| protocol::run_on(rom, &mut progress, power_on))
    }))
    .unwrap_or_else(|payload| {
        Outcome::error(format!("the emulator panicked: {}", panic_message(payload.as_ref())))
    });
    result(rom, outcome, &progress, started)
}

fn result(rom: &RomEntry, outcome: Outcome, progress: &Progress, started: Instant) -> RomResult {
    RomResult {
        path: rom.path.clone(),
        suite: rom.suite.clone(),
        protocol: rom.protocol.name().to_owned(),
        expected: rom.expected,
        status: outcome.status,
        code: outcome.code,
        text: outcome.text,
        frames: progress.frames,
        wall_time: started.elapsed(),
        subtests: outcome.subtests,
        start_points: outcome.start_points,
    }
}

/// Runs `roms` on up to `jobs` threads and returns their results in the order of `roms`.
/// `on_result` is called from the worker threads as each ROM finishes (for progress display).
///
/// The longest runs start first (by [`estimated_frames`]; ties in the order given), so that no job
/// is left running one long ROM alone at the end: AccuracyCoin, last in the shared manifest, takes
/// as long as a third of the rest together.
pub fn run_roms(
    roms: &[&RomEntry],
    jobs: NonZeroUsize,
    on_result: &(dyn Fn(&RomResult) + Sync),
) -> Vec<RomResult> {
    let mut order: Vec<usize> = (0..roms.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(estimated_frames(roms[i])));
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<RomResult>>> = roms.iter().map(|_| Mutex::new(None)).collect();
    let workers = jobs.get().min(roms.len());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let result = run_rom(roms[index]);
                    on_result(&result);
                    *slots[index].lock().expect("no thread panics while holding a slot") = Some(result);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .expect("no thread panics while holding a slot")
                .expect("every ROM index is taken by exactly one worker")
        })
        .collect()
}

/// The most frames a ROM's run can take: its frame budget, once per start point for AccuracyCoin
/// (which runs its tests from several start frames).
pub fn estimated_frames(rom: &RomEntry) -> u64 {
    match rom.protocol {
        Protocol::AccuracyCoin => {
            rom.frame_budget.saturating_mul(crate::protocol::accuracycoin::START_POINTS)
        }
        _ => rom.frame_budget,
    }
}

/// The default number of jobs: the machine's available parallelism.
pub fn default_jobs() -> NonZeroUsize {
    std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_messages_are_recovered_from_both_payload_kinds() {
        let literal = panic::catch_unwind(|| panic!("literal")).unwrap_err();
        assert_eq!(panic_message(literal.as_ref()), "literal");
        let formatted = panic::catch_unwind(|| panic!("formatted {}", 7)).unwrap_err();
        assert_eq!(panic_message(formatted.as_ref()), "formatted 7");
        let other = panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
        assert_eq!(panic_message(other.as_ref()), "non-string panic payload");
    }

    /// A manifest of ROM files that do not exist (each run ends at once with an error row), with these
    /// frame budgets and protocols.
    fn manifest(roms: &[(&str, u64, &str)]) -> crate::manifest::Manifest {
        let mut text = String::new();
        for (name, budget, protocol) in roms {
            text.push_str(&format!(
                "[[rom]]\npath = \"missing/{name}.nes\"\nsuite = \"s\"\nprotocol = \"{protocol}\"\nmapper = 0\n\
                 needs_reset = false\nframe_budget = {budget}\nexpected = \"pass\"\nregion = \"ntsc\"\nsha1 = \"00\"\n"
            ));
        }
        crate::manifest::Manifest::parse(&text, std::path::Path::new("/nonexistent/manifest.toml")).unwrap()
    }

    #[test]
    fn longest_runs_start_first_and_results_keep_the_given_order() {
        let manifest = manifest(&[
            ("short", 1800, "blargg6000"),
            ("coin", 20_000, "accuracycoin"),
            ("long", 90_000, "blargg6000"),
            ("tie_a", 3600, "blargg6000"),
            ("tie_b", 3600, "blargg6000"),
        ]);
        let roms: Vec<&RomEntry> = manifest.roms.iter().collect();
        assert_eq!(estimated_frames(roms[1]), 20_000 * crate::protocol::accuracycoin::START_POINTS);
        let started = Mutex::new(Vec::new());
        let results = run_roms(&roms, NonZeroUsize::MIN, &|r| started.lock().unwrap().push(r.path.clone()));
        // AccuracyCoin's 8 start points make it the longest; equal estimates keep the manifest order.
        let names = ["missing/coin.nes", "missing/long.nes", "missing/tie_a.nes", "missing/tie_b.nes"];
        assert_eq!(started.into_inner().unwrap(), [&names[..], &["missing/short.nes"]].concat());
        let paths: Vec<&str> = results.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "missing/short.nes",
                "missing/coin.nes",
                "missing/long.nes",
                "missing/tie_a.nes",
                "missing/tie_b.nes"
            ]
        );
    }
}
