//! Issue 28's shrink figure: the secret-sequence case of crates/anes-lockstep/tests/shrink.rs (the
//! same ROM, seed and 10,000-frame random stream, B's RAM byte flipped about 100 frames before the
//! end) shrunk with 2 jobs, once. Prints wall and CPU seconds (user + system of this process: on a
//! shared machine, wall alone mixes the shrink's cost with waiting for a core), their ratio (the
//! parallelism the jobs achieved), trials, and frames emulated against the naive cost, by phase.
//! Not a criterion bench: one shrink takes tens of seconds.
//!
//! `cargo bench --bench shrink` (`-- --jobs N` for another job count).

use std::path::PathBuf;
use std::time::Instant;

use anes::lockstep::{FaultPlan, NesMachine, ShrinkConfig, shrink};
use anes::nes::NesConfig;
use anes::nes::input::buttons;
use anes::nes::movie::FrameInput;

const STREAM_FRAMES: usize = 10_000;
const SEED: u64 = 0x5EC2E7;
/// The NMI counter values at which the ROM checks pad 1 (SECRET_1..3 in roms/secret/secret.s).
const SECRET_COUNTS: [u16; 3] = [1000, 3000, 5000];
/// Mid-frame, about 100 frames before the stream ends.
const FLIP_CYCLE: u64 = 9_900 * 29_780 + 15_000;

/// splitmix64, as the test draws its stream.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

fn machine(rom: &[u8]) -> NesMachine {
    NesMachine::from_ines(rom, NesConfig::default()).expect("the secret ROM parses")
}

/// The stream frames whose NMI sees the counter ($0010/$0011) at each secret value.
fn secret_frames(rom: &[u8]) -> [u64; 3] {
    let mut nes = machine(rom);
    let mut found = [u64::MAX; 3];
    for frame in 0..STREAM_FRAMES as u64 {
        nes.nes_mut().run_frame(FrameInput::default());
        let count = u16::from_le_bytes([nes.nes().peek(0x0010), nes.nes().peek(0x0011)]);
        if let Some(i) = SECRET_COUNTS.iter().position(|&c| c == count) {
            found[i] = frame;
        }
    }
    found
}

fn random_stream(secret: [u64; 3]) -> Vec<FrameInput> {
    let mut rng = Rng(SEED);
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

/// User plus system CPU seconds of this process (Linux: /proc/self/stat; elsewhere 0).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<u64>().ok()).sum();
    ticks as f64 / 100.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let jobs =
        args.iter().position(|a| a == "--jobs").and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(2usize);
    let rom = std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("roms/secret/secret.nes"))
        .expect("roms/secret/secret.nes");
    let secret = secret_frames(&rom);
    let stream = random_stream(secret);
    let presses = stream.iter().filter(|f| f.pads != [0, 0]).count();
    let faults = FaultPlan::parse([format!("flip:ram:0x0342:3@{FLIP_CYCLE}")]).expect("a fault spec");
    let config = ShrinkConfig { faults, jobs, ..ShrinkConfig::default() };

    let (started, cpu) = (Instant::now(), cpu_seconds());
    let shrunk = shrink(machine(&rom), machine(&rom), &stream, &config, &mut |_| {}).expect("it diverges");
    let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_seconds() - cpu);

    let report = shrunk.report();
    let s = &shrunk.stats;
    let p = &s.phase_frames;
    println!("shrink: secret sequence, {STREAM_FRAMES} frames, {presses} presses, jobs {jobs}");
    println!(
        "  repro          {} presses at frames {:?} (secret {secret:?}), start frame {}, 1-minimal {}",
        report.shrunk.presses,
        report.presses.iter().map(|p| p.frame).collect::<Vec<_>>(),
        report.start.frame,
        report.one_minimal
    );
    println!("  wall           {wall:.1} s");
    println!("  cpu            {cpu:.1} s (user + system), parallelism {:.2}", cpu / wall);
    println!("  trials         {} run, {} in order", s.trials, s.trials_in_order);
    println!(
        "  frames         {} emulated per machine, naive {} ({:.1}x fewer)",
        s.frames_emulated,
        s.naive_frames,
        s.naive_frames as f64 / s.frames_emulated.max(1) as f64
    );
    println!(
        "  by phase       first run {}, presses {}, buttons {}, commands {}, start search {}, final run {}",
        p.first_run, p.presses, p.buttons, p.commands, p.start_search, p.final_run
    );
}
