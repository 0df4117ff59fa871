//! `anes sweep ROM`: does a program depend on its power-on state? The ROM runs under the default
//! profile and under other power-on states (named profiles, then `random:SEED` ones) over the same
//! input; a state whose run ends in another picture or other RAM is a dependence.
//!
//! The verdict compares outcomes: the last picture's pixels and work RAM after the given frames.
//! RAM that differs only because each console still holds its own power-on value there is a
//! dependence only if the program acted on it (the programs did not run alike, below): RAM a
//! program never uses is reported, not counted. Each state that ends differently is then run in
//! lockstep against the default as `anes_lockstep::ProgramView`s, the comparison `anes lockstep
//! --power-on-b` makes: the two consoles' whole states differ from power-on by design, so they are
//! compared by what the program does (CPU registers and cycles, the PPU registers it writes, the
//! pictures it renders), and the first difference is localized to the frame, the instruction and
//! the fields, like any divergence. The `anes shrink` line printed beside it reproduces it.
//!
//! Exit status: 0 no state ends differently; 1 at least one does (the program depends on its
//! power-on state); 2 bad input.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anes_core::movie::InputStream;
use anes_core::{Nes, NesConfig, PowerOnProfile, Region, Section};
use anes_lockstep::{Lockstep, LockstepConfig, Machine, ProgramView, RunOutcome};
use anyhow::{Context, bail};
use serde::Serialize;

use crate::input_file::read_input_with_region;
use crate::rom::RegionArg;
use crate::{limited_read, output};

/// Exit status when the program depends on its power-on state.
const EXIT_DEPENDS: u8 = 1;
/// Fields of a first difference printed as text (JSON has them all).
const FIELDS_SHOWN: usize = 6;
/// RAM addresses listed per outcome (the count is always given).
const RAM_LISTED: usize = 16;

/// `anes sweep --help`'s closing lines.
const AFTER_HELP: &str = "\
Profiles: default, vblank-set, warm-up, quick-power-cycle, console-palette, ram-ff, phase-1, phase-2, \
phase-3, random:SEED (docs/USING-LOCKSTEP.md).

Exit status: 0 every state ends in the default's picture and RAM; 1 at least one does not (the program \
depends on its power-on state); 2 bad input.

Examples:
  # A ROM that waits for one VBlank only: the default against 12 other power-on states (exit status 1)
  anes sweep roms/poweron/one_vblank.nes
  # The demo ROM over 30 seconds of its recorded input stream (an .input file or an FCEUX .fm2 movie)
  anes sweep roms/demo/demo.nes --frames 1800 --input roms/demo/demo.input
  # Two states only, as one JSON object
  anes sweep roms/poweron/one_vblank.nes --profiles quick-power-cycle,random:7 --json";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The iNES ROM file (at most 16 MiB).
    rom: PathBuf,
    /// The power-on states to try besides the default: a number N (the named profiles in order,
    /// then random:1, random:2, ... up to N), or a comma-separated list of profiles.
    #[arg(long, value_name = "N|LIST", default_value = "12", value_parser = parse_profiles)]
    profiles: ProfileList,
    /// Frames each run lasts; the outcome is compared after the last one.
    #[arg(long, default_value_t = 600)]
    frames: u64,
    /// Input stream: an anes input file (.input) or an FCEUX movie (.fm2), the same for every run
    /// (default: no buttons).
    #[arg(long)]
    input: Option<PathBuf>,
    /// The console: ntsc, pal or dendy (default: a .fm2 movie's palFlag, else the ROM header's).
    #[arg(long, value_enum)]
    region: Option<RegionArg>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// The states `--profiles` asks for, in order.
#[derive(Debug, Clone)]
struct ProfileList(Vec<PowerOnProfile>);

fn parse_profiles(text: &str) -> Result<ProfileList, String> {
    if let Ok(count) = text.parse::<usize>() {
        if count == 0 || count > 10_000 {
            return Err(format!("{count} states: give 1 to 10000, or a list of profiles"));
        }
        let named = PowerOnProfile::NAMED.into_iter().filter(|p| *p != PowerOnProfile::Default);
        let random = (1..).map(PowerOnProfile::Random);
        return Ok(ProfileList(named.chain(random).take(count).collect()));
    }
    let profiles =
        text.split(',').map(|name| name.trim().parse::<PowerOnProfile>().map_err(|e| e.to_string()));
    profiles.collect::<Result<Vec<_>, _>>().map(ProfileList)
}

/// How one run ended: the outcome the verdict compares.
struct Ending {
    picture: Vec<u16>,
    ram: Vec<u8>,
    power_on_ram: Vec<u8>,
}

/// Runs the ROM powered on with `config` as the lockstep runs it (a program view: its frames end
/// where a console of any CPU/PPU phase would end them, so every state gets its input at the same
/// instruction), and keeps how it ended.
fn run_to_end(
    rom: &[u8],
    config: NesConfig,
    region: Option<Region>,
    inputs: &InputStream,
    frames: u64,
) -> anyhow::Result<Ending> {
    let mut view = ProgramView::from_ines(rom, config, region)?;
    let power_on_ram = view.nes().section_bytes(Section::Ram).to_vec();
    for frame in 0..frames {
        view.run_frame(inputs.frame(usize::try_from(frame).unwrap_or(usize::MAX)));
    }
    let nes = view.nes();
    Ok(Ending {
        picture: nes.ppu().frame_buffer().to_vec(),
        ram: nes.section_bytes(Section::Ram).to_vec(),
        power_on_ram,
    })
}

/// One RAM byte that differs at the end.
#[derive(Debug, Serialize)]
struct RamByte {
    addr: String,
    default: String,
    profile: String,
}

/// Where the programs first ran differently (the lockstep runner's localization).
#[derive(Debug, Serialize)]
struct FirstDifference {
    /// Input-stream index of the frame.
    frame: u64,
    /// CPU cycle at the start of the instruction.
    cpu_cycle: u64,
    /// The instruction's address.
    pc: String,
    /// Its disassembly.
    instruction: String,
    /// The CPU cycle after it on the default's console and on the profile's (they differ when the
    /// programs' timing parted ways: a branch taken differently, an interrupt taken earlier).
    end_cpu_cycles: [u64; 2],
    /// What differed after it: `name: default vs profile`.
    fields: Vec<String>,
}

/// One power-on state's result.
#[derive(Debug, Serialize)]
struct StateResult {
    profile: String,
    choices: String,
    /// The outcome differs: the program depends on this state.
    depends: bool,
    /// Pixels of the last picture that differ from the default's.
    picture_pixels_differing: usize,
    /// The first RAM bytes that differ at the end.
    ram_differing: Vec<RamByte>,
    ram_differing_count: usize,
    /// Of those, the bytes where each console still holds its own power-on value.
    ram_at_power_on_values_count: usize,
    /// Whether the programs ran alike in lockstep (`None`: not run, the outcomes being equal).
    ran_alike: Option<bool>,
    /// Where the programs first ran differently (`None`: they ran alike, or equal outcomes).
    first_difference: Option<FirstDifference>,
    /// Why localizing failed, if it did.
    localization_error: Option<String>,
    /// The command that shrinks the dependence to a minimal repro.
    shrink: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report<'a> {
    rom: String,
    region: &'static str,
    frames: u64,
    input: Option<String>,
    baseline: String,
    baseline_choices: String,
    states: &'a [StateResult],
    depends: bool,
}

pub fn main(args: &Args) -> anyhow::Result<ExitCode> {
    let rom = limited_read::read_limited(&args.rom, limited_read::ROM)?;
    let rom_name = args.rom.display().to_string();
    let cart = anes_core::Cartridge::from_ines(&rom).with_context(|| rom_name.clone())?;
    if args.frames == 0 {
        bail!("--frames 0: a sweep runs at least one frame");
    }
    let (inputs, movie_region) = match &args.input {
        Some(path) => read_input_with_region(path)?,
        None => (InputStream::new(), None),
    };
    let region = args.region.map(Region::from).or(movie_region);
    let console_region = region.unwrap_or_else(|| Nes::region_for(&cart));
    let states = &args.profiles.0;
    let bar = output::progress_bar((states.len() as u64 + 1) * args.frames, args.json);
    bar.set_message("default");
    let baseline = PowerOnProfile::Default;
    let default = run_to_end(&rom, baseline.config(), region, &inputs, args.frames)?;
    bar.inc(args.frames);
    let mut results = Vec::with_capacity(states.len());
    for &profile in states {
        bar.set_message(profile.to_string());
        let ending = run_to_end(&rom, profile.config(), region, &inputs, args.frames)?;
        let mut result = compare(&default, &ending, profile);
        if result.depends || result.ram_differing_count > 0 {
            localize(&rom, region, &inputs, args, profile, &mut result)?;
            // RAM still at each console's power-on value counts when the program acted on it.
            result.depends |= result.ran_alike == Some(false);
        }
        results.push(result);
        bar.inc(args.frames);
    }
    bar.finish_and_clear();
    let depends = results.iter().any(|r| r.depends);
    let report = Report {
        rom: rom_name,
        region: console_region.name(),
        frames: args.frames,
        input: args.input.as_ref().map(|p| p.display().to_string()),
        baseline: baseline.to_string(),
        baseline_choices: baseline.config().to_string(),
        states: &results,
        depends,
    };
    let mut out = output::stdout();
    if args.json {
        output::write_json(&mut out, &report)?;
    } else {
        write_text(&mut out, &report)?;
    }
    out.flush()?;
    Ok(if depends { ExitCode::from(EXIT_DEPENDS) } else { ExitCode::SUCCESS })
}

/// One state's outcome against the default's. RAM that differs only because each console still
/// holds its own power-on value there is a dependence only if the programs did not run alike
/// (see [`main`]).
fn compare(default: &Ending, ending: &Ending, profile: PowerOnProfile) -> StateResult {
    let picture_pixels_differing =
        default.picture.iter().zip(&ending.picture).filter(|(a, b)| a != b).count();
    let mut ram_differing = Vec::new();
    let mut ram_differing_count = 0;
    let mut ram_at_power_on_values_count = 0;
    for addr in 0..default.ram.len() {
        let (a, b) = (default.ram[addr], ending.ram[addr]);
        if a == b {
            continue;
        }
        ram_differing_count += 1;
        if a == default.power_on_ram[addr] && b == ending.power_on_ram[addr] {
            ram_at_power_on_values_count += 1;
        }
        if ram_differing.len() < RAM_LISTED {
            ram_differing.push(RamByte {
                addr: format!("${addr:04X}"),
                default: format!("${a:02X}"),
                profile: format!("${b:02X}"),
            });
        }
    }
    StateResult {
        profile: profile.to_string(),
        choices: profile.config().to_string(),
        depends: picture_pixels_differing > 0 || ram_differing_count > ram_at_power_on_values_count,
        picture_pixels_differing,
        ram_differing,
        ram_differing_count,
        ram_at_power_on_values_count,
        ran_alike: None,
        first_difference: None,
        localization_error: None,
        shrink: None,
    }
}

/// Runs the default and `profile` in lockstep as program views and records where they first ran
/// differently, and the `anes shrink` line that reproduces it.
fn localize(
    rom: &[u8],
    region: Option<Region>,
    inputs: &InputStream,
    args: &Args,
    profile: PowerOnProfile,
    result: &mut StateResult,
) -> anyhow::Result<()> {
    let a = ProgramView::from_ines(rom, PowerOnProfile::Default.config(), region)?;
    let b = ProgramView::from_ines(rom, profile.config(), region)?;
    // A checkpoint every frame: the localization replays one frame instruction by instruction.
    let config = LockstepConfig { checkpoint_every: 1, pictures: false, ..LockstepConfig::default() };
    let mut lockstep = Lockstep::new(a, b, config).context("lockstep configuration")?;
    let agreed = matches!(lockstep.run(inputs, args.frames), RunOutcome::Agreed { .. });
    result.ran_alike = Some(agreed);
    if agreed {
        return Ok(());
    }
    let evidence = lockstep.evidence().expect("a divergence keeps its evidence");
    match &evidence.localization {
        Some(found) => {
            result.first_difference = Some(FirstDifference {
                frame: found.frame,
                cpu_cycle: found.cpu_cycle,
                pc: format!("${:04X}", found.pc),
                instruction: found.instruction.clone(),
                end_cpu_cycles: [found.end_cpu_cycle, found.end_cpu_cycle_b],
                fields: found.fields.iter().map(|f| format!("{}: {} vs {}", f.name, f.a, f.b)).collect(),
            });
        }
        None => {
            result.localization_error =
                Some(evidence.localization_error.clone().unwrap_or_else(|| "not localized".to_string()));
        }
    }
    result.shrink = Some(shrink_command(args, profile));
    Ok(())
}

/// `anes shrink` with this sweep's ROM, input and region, machine B powered on with `profile`.
fn shrink_command(args: &Args, profile: PowerOnProfile) -> String {
    let mut words = vec!["anes".to_string(), "shrink".to_string(), quoted(&args.rom.display().to_string())];
    if let Some(input) = &args.input {
        words.extend(["--input".to_string(), quoted(&input.display().to_string())]);
    }
    if let Some(region) = args.region {
        words.extend(["--region".to_string(), Region::from(region).name().to_string()]);
    }
    words.extend(["--frames".to_string(), args.frames.to_string()]);
    words.extend(["--power-on-b".to_string(), profile.to_string()]);
    let out = format!("shrink-{}", profile.to_string().replace(':', "-"));
    words.extend(["--out".to_string(), out]);
    words.join(" ")
}

/// A word a POSIX shell reads back as it is.
fn quoted(word: &str) -> String {
    let plain = word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    if plain && !word.is_empty() { word.to_string() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

fn write_text(out: &mut impl Write, report: &Report<'_>) -> anyhow::Result<()> {
    writeln!(out, "rom        {}", report.rom)?;
    writeln!(out, "region     {}", report.region)?;
    let input = report.input.as_deref().unwrap_or("no buttons");
    writeln!(out, "frames     {} ({input})", report.frames)?;
    writeln!(out, "baseline   {} ({})", report.baseline, report.baseline_choices)?;
    let same: Vec<&str> = report.states.iter().filter(|s| !s.depends).map(|s| s.profile.as_str()).collect();
    if !same.is_empty() {
        writeln!(out, "same       {}", same.join(", "))?;
    }
    for state in report.states.iter().filter(|s| s.depends) {
        writeln!(out)?;
        writeln!(out, "DIFFERS    {} ({})", state.profile, state.choices)?;
        if state.picture_pixels_differing > 0 {
            writeln!(out, "  picture  {} of 61440 pixels differ", state.picture_pixels_differing)?;
        }
        if state.ram_differing_count > 0 {
            let listed: Vec<String> = state
                .ram_differing
                .iter()
                .map(|r| format!("{} {} vs {}", r.addr, r.default, r.profile))
                .collect();
            let more = state.ram_differing_count - listed.len();
            let more = if more > 0 { format!(", ... and {more} more") } else { String::new() };
            writeln!(
                out,
                "  RAM      {} bytes differ: {}{more}",
                state.ram_differing_count,
                listed.join(", ")
            )?;
        }
        match (&state.first_difference, &state.localization_error) {
            (Some(first), _) => {
                writeln!(
                    out,
                    "  first    frame {}, CPU cycle {}, {} {}",
                    first.frame, first.cpu_cycle, first.pc, first.instruction
                )?;
                let [end_a, end_b] = first.end_cpu_cycles;
                if end_a != end_b {
                    writeln!(out, "           CPU cycle after it: {end_a} vs {end_b}")?;
                }
                for field in first.fields.iter().take(FIELDS_SHOWN) {
                    writeln!(out, "           {field}")?;
                }
                if first.fields.len() > FIELDS_SHOWN {
                    writeln!(out, "           ... and {} more", first.fields.len() - FIELDS_SHOWN)?;
                }
            }
            (None, Some(why)) => writeln!(out, "  first    not localized: {why}")?,
            (None, None) => writeln!(
                out,
                "  first    no instruction ran differently: the difference is state the program never acted on"
            )?,
        }
        if let Some(shrink) = &state.shrink {
            writeln!(out, "  shrink   {shrink}")?;
        }
    }
    for state in report.states.iter().filter(|s| !s.depends && s.ram_differing_count > 0) {
        writeln!(
            out,
            "note       {}: {} RAM bytes still hold each console's power-on value; the program ran alike, \
             never acting on them (not a dependence)",
            state.profile, state.ram_differing_count
        )?;
    }
    let differing = report.states.iter().filter(|s| s.depends).count();
    writeln!(out)?;
    if report.depends {
        writeln!(
            out,
            "{differing} of {} power-on states end differently: the program depends on its power-on state",
            report.states.len()
        )?;
    } else {
        writeln!(
            out,
            "all {} power-on states end as the default does: no dependence found",
            report.states.len()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_a_count_or_a_list() {
        let twelve = parse_profiles("12").unwrap().0;
        assert_eq!(twelve.len(), 12);
        assert_eq!(&twelve[..8], &PowerOnProfile::NAMED[1..]);
        assert_eq!(twelve[8..], [1, 2, 3, 4].map(PowerOnProfile::Random));
        assert_eq!(parse_profiles("2").unwrap().0, [PowerOnProfile::VblankSet, PowerOnProfile::WarmUp]);
        let list = parse_profiles("warm-up, random:9").unwrap().0;
        assert_eq!(list, [PowerOnProfile::WarmUp, PowerOnProfile::Random(9)]);
        assert!(parse_profiles("0").unwrap_err().contains("1 to 10000"));
        assert!(parse_profiles("warm-up,tepid").unwrap_err().contains("\"tepid\""));
    }

    #[test]
    fn shell_words_are_quoted_only_when_they_need_it() {
        assert_eq!(quoted("roms/a_b-c.nes"), "roms/a_b-c.nes");
        assert_eq!(quoted("my game.nes"), "'my game.nes'");
        assert_eq!(quoted("it's.nes"), "'it'\\''s.nes'");
    }
}
