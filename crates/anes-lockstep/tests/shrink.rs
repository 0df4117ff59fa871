//! The shrinker against a ROM of our own with a secret (roms/secret/secret.s): a RAM byte ($0342)
//! matters only after pad 1 held exactly Up, Up and A on three frames the ROM picks. A flip of that
//! byte in the middle of a late frame diverges only when the sequence was entered. From a seeded
//! 10,000-frame random stream holding the sequence, the shrinker must return exactly those three
//! presses; the test checks 1-minimality itself with the lockstep runner (not the shrinker's
//! oracle), and with `ANES_LONG=1` that a second run with one job gives the same bytes.

mod common;

use std::time::Instant;

use anes_core::NesConfig;
use anes_core::input::buttons;
use anes_core::movie::{FrameInput, InputStream};
use anes_lockstep::{
    FaultPlan, Lockstep, LockstepConfig, NesMachine, RunOutcome, ShrinkConfig, ShrinkInput, Shrunk, shrink,
};
use common::Rng;

const SECRET_ROM: &[u8] = include_bytes!("../../../roms/secret/secret.nes");
/// The NMI counter values at which the ROM checks pad 1 (SECRET_1..3 in the source).
const SECRET_COUNTS: [u16; 3] = [1000, 3000, 5000];
const STREAM_FRAMES: usize = 10_000;
/// Mid-frame, about 100 frames before the stream ends.
const FLIP_CYCLE: u64 = 9_900 * 29_780 + 15_000;

fn machine() -> NesMachine {
    NesMachine::from_ines(SECRET_ROM, NesConfig::default()).expect("the secret ROM parses")
}

fn faults() -> FaultPlan {
    FaultPlan::parse([format!("flip:ram:0x0342:3@{FLIP_CYCLE}")]).unwrap()
}

/// The input-stream frames whose NMI sees the counter at each secret value, found by running the
/// ROM and reading its counter ($0010/$0011) after every frame.
fn secret_frames() -> [u64; 3] {
    let mut nes = machine();
    let mut found = [u64::MAX; 3];
    for frame in 0..STREAM_FRAMES as u64 {
        nes.nes_mut().run_frame(FrameInput::default());
        let count = u16::from_le_bytes([nes.nes().peek(0x0010), nes.nes().peek(0x0011)]);
        if let Some(i) = SECRET_COUNTS.iter().position(|&c| c == count) {
            found[i] = frame;
        }
    }
    assert!(found.iter().all(|&f| f != u64::MAX), "{found:?}");
    found
}

/// Random presses on about a third of the frames (both pads, any buttons), with the secret
/// sequence on its three frames.
fn random_stream(seed: u64, secret: [u64; 3]) -> Vec<FrameInput> {
    let mut rng = Rng(seed);
    let mut stream: Vec<FrameInput> = (0..STREAM_FRAMES)
        .map(|_| match rng.below(3) {
            0 => FrameInput::buttons(rng.below(256) as u8, rng.below(256) as u8),
            _ => FrameInput::default(),
        })
        .collect();
    for (frame, button) in secret.into_iter().zip([buttons::UP, buttons::UP, buttons::A]) {
        stream[frame as usize].pads[0] = button;
    }
    stream
}

/// Where the lockstep runner, from power-on, sees the machines diverge over `stream` (B flipped).
fn lockstep_divergence(stream: &[FrameInput]) -> Option<(anes_lockstep::DivergenceKind, u64)> {
    let config =
        LockstepConfig { faults: faults(), localize: false, pictures: false, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(machine(), machine(), config).unwrap();
    match lockstep.run_interleaved(stream, stream.len() as u64) {
        RunOutcome::Diverged(d) => Some((d.kind, d.frame)),
        RunOutcome::Agreed { .. } => None,
    }
}

/// Shrinks `stream` with `jobs` jobs. `beside` is the CPU time other threads of this process spend
/// meanwhile (the lockstep checks), read once they are done: not the shrink's.
fn shrink_with(stream: &[FrameInput], jobs: usize, beside: &dyn Fn() -> f64) -> Shrunk<FrameInput> {
    let config = ShrinkConfig { faults: faults(), jobs, ..ShrinkConfig::default() };
    let (started, cpu) = (Instant::now(), process_cpu_seconds());
    let shrunk = shrink(machine(), machine(), stream, &config, &mut |_| {}).expect("it diverges");
    let wall = started.elapsed().as_secs_f64();
    let cpu = process_cpu_seconds() - cpu - beside();
    // The figure of issue 28 (under 60 s on 2 cores; benches/shrink.rs measures it in a release
    // build): wall time and the shrink's CPU time, which on a shared machine tells its own cost
    // apart from waiting for a core.
    eprintln!(
        "shrink of {} frames, jobs {jobs}: {wall:.1} s wall, {cpu:.1} s CPU; {:?}",
        stream.len(),
        shrunk.stats
    );
    shrunk
}

/// User plus system CPU time of this process so far (Linux: /proc/self/stat; elsewhere 0).
fn process_cpu_seconds() -> f64 {
    cpu_seconds_of("/proc/self/stat")
}

/// User plus system CPU time of the calling thread so far (Linux; elsewhere 0).
fn thread_cpu_seconds() -> f64 {
    cpu_seconds_of("/proc/thread-self/stat")
}

fn cpu_seconds_of(stat_file: &str) -> f64 {
    let Ok(stat) = std::fs::read_to_string(stat_file) else { return 0.0 };
    // Fields after the command name (which may hold spaces, inside parentheses): utime and stime
    // are the 12th and 13th, in clock ticks (100 a second on Linux).
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    ticks as f64 / 100.0
}

fn output_bytes(shrunk: &Shrunk<FrameInput>) -> (Vec<u8>, String, String) {
    let report = shrunk.report();
    (
        InputStream::from_frames(shrunk.repro.clone()).to_bytes(),
        serde_json::to_string_pretty(&report).unwrap(),
        report.html(),
    )
}

/// The three presses of the secret sequence on their frames, nothing else, through `last`.
fn secret_only(secret: [u64; 3], last: u64) -> Vec<FrameInput> {
    (0..=last)
        .map(|frame| match secret.iter().position(|&s| s == frame) {
            Some(i) => FrameInput::buttons([buttons::UP, buttons::UP, buttons::A][i], 0),
            None => FrameInput::default(),
        })
        .collect()
}

/// What the test proves without the shrinker, with the lockstep runner from power-on: where the
/// stream diverges, that the flip is masked without the sequence, and that the secret presses alone
/// reproduce it while each of them alone removed does not (1-minimality of the expected repro).
fn independent_checks(stream: &[FrameInput], secret: [u64; 3]) -> (anes_lockstep::DivergenceKind, u64) {
    let target = lockstep_divergence(stream).expect("the flip shows once the sequence was entered");
    let mut without = stream.to_vec();
    without[secret[1] as usize].pads[0] = buttons::DOWN;
    assert_eq!(lockstep_divergence(&without), None, "without the sequence the flip is masked");
    let expected = secret_only(secret, target.1);
    assert_eq!(lockstep_divergence(&expected), Some(target), "the secret presses alone reproduce it");
    for (frame, input) in expected.iter().enumerate() {
        for (port, bit) in input.held_buttons() {
            let mut less = expected.clone();
            less[frame] = less[frame].without_button(port, bit);
            assert_ne!(
                lockstep_divergence(&less),
                Some(target),
                "frame {frame} port {port} bit {bit} is not needed"
            );
        }
    }
    target
}

/// `ANES_LONG=1` adds a second shrink with one job, which must give the same bytes as the two-job
/// one (the CLI's tests/shrink.rs runs the demo case twice with one job and once with two).
#[test]
fn the_secret_sequence_is_all_that_is_left() {
    let secret = secret_frames();
    let stream = random_stream(0x5EC2E7, secret);
    let presses = stream.iter().filter(|f| f.pads != [0, 0]).count();
    assert!(presses > 3_000, "{presses} presses");
    // The lockstep runner's checks do not depend on the shrink: they run beside it, on the second
    // core while the shrink's waves leave it idle (CI has 2 cores; the test took 142 s one after
    // the other with a second shrink).
    let checks_cpu = std::sync::Mutex::new(None);
    let (target, shrunk) = std::thread::scope(|scope| {
        let checks = scope.spawn(|| {
            let target = independent_checks(&stream, secret);
            *checks_cpu.lock().unwrap() = Some(thread_cpu_seconds());
            target
        });
        let shrunk = shrink_with(&stream, 2, &|| {
            while !checks.is_finished() {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            checks_cpu.lock().unwrap().unwrap_or(0.0)
        });
        (checks.join().expect("the lockstep checks pass"), shrunk)
    });
    let expected = secret_only(secret, target.1);
    assert!(shrunk.repro == expected, "the repro holds other presses: {:?}", shrunk.report().presses);
    let report = shrunk.report();
    assert!(report.one_minimal);
    assert_eq!((report.target.kind, report.target.frame), target);
    assert_eq!(report.divergence.fields[0].name, "ram[$0342]");
    // The start moved past the sequence, to the latest checkpoint (every 30 frames) before the
    // divergent frame: the snapshot there holds the three presses' effect.
    assert_eq!(report.start.search, "moved", "{:?}", report.start);
    assert_eq!(report.start.frame, target.1 / 30 * 30);
    assert!(report.start.frame > secret[2]);
    let snapshot = shrunk.start_snapshot.as_deref().expect("a moved start keeps its snapshot");
    let (mut a, mut b) = (machine(), machine());
    anes_lockstep::Machine::load_state(&mut a, snapshot).unwrap();
    anes_lockstep::Machine::load_state(&mut b, snapshot).unwrap();
    let config =
        LockstepConfig { faults: shrunk.start_faults.clone(), localize: false, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(a, b, config).unwrap();
    match lockstep
        .run_interleaved(&vec![FrameInput::default(); expected.len()], target.1 + 1 - report.start.frame)
    {
        RunOutcome::Diverged(d) => {
            assert_eq!((d.kind, d.frame), target, "no press is needed from the snapshot")
        }
        RunOutcome::Agreed { .. } => panic!("the repro does not diverge from its snapshot"),
    }

    if anes_fs::env_flag("ANES_LONG") {
        assert!(
            output_bytes(&shrink_with(&stream, 1, &|| 0.0)) == output_bytes(&shrunk),
            "a second run, with one job, differs"
        );
    }
}
