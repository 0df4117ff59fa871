//! The savestate audit: which `savestate_features` level a core really reaches, measured by five
//! checks over a run of its content, each failure localized to the frame, the region and the bytes.
//!
//! 1. **serialize twice**: two `retro_serialize` calls in a row give the same bytes, at power-on
//!    and after every frame;
//! 2. **two instances**: two instances from power-on, fed the same input, agree in state, memory,
//!    picture and audio after every frame;
//! 3. **run-ahead**: serialize, run K frames, unserialize, run them again, and a third time: the
//!    same records (state, memory, picture, audio) each time. The windows tile the run;
//! 4. **fresh instance**: a state taken half way and loaded into a fresh instance continues as the
//!    instance it came from;
//! 5. **constant size**: the serialized size never changes, at power-on and after every frame.
//!
//! Frames are counted from 1 everywhere in the audit (findings, errors, texts): frame N is the N-th
//! `retro_run` from power-on, "the state of frame N" the state after it, and frame 0 power-on,
//! before any frame. A run-ahead window from the state of frame F runs frames F+1 to F+K.
//!
//! `basic` needs states that serialize and load; `serialized` adds checks 1, 3 and 5 (what rewind
//! and run-ahead in one instance rely on); `deterministic` adds 2 and 4 (netplay, run-ahead's second
//! instance). A check that had nothing to measure is reported not measured, and no level that needs
//! it is granted; a run too short for a check to measure anything is refused before it starts
//! ([`ConfigError`]). The audit is generic over [`Machine`] ([`Audited`]): `anes audit` runs each
//! instance in a worker process of its own, as a core keeps its state in globals. A worker that
//! crashed or hung answers every later call with placeholders, so every call is followed by
//! [`Audited::failed`]: a failed instance is an [`AuditError::Failed`], never a measurement.

use anes_core::movie::FrameInput;
use anes_lockstep::Machine;
use serde::Serialize;

use crate::info::SavestateLevel;
use crate::snapshot;

/// How much of a region's difference a finding keeps.
const MAX_OFFSETS: usize = 16;

/// How many changes of the serialized size check 5's detail names.
const MAX_SIZE_CHANGES: usize = 6;

/// One of the five checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// 1: two serializations in a row are equal.
    SerializeTwice,
    /// 2: two instances from power-on agree.
    TwoInstances,
    /// 3: run-ahead: unserialize and run again, twice, alike.
    RunAhead,
    /// 4: a state loaded into a fresh instance continues alike.
    FreshInstance,
    /// 5: the serialized size stays the same.
    ConstantSize,
}

impl Check {
    /// All five, in their numbered order.
    pub const ALL: [Check; 5] = [
        Check::SerializeTwice,
        Check::TwoInstances,
        Check::RunAhead,
        Check::FreshInstance,
        Check::ConstantSize,
    ];

    /// The check's number (1-5).
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// A short name.
    pub fn name(self) -> &'static str {
        match self {
            Check::SerializeTwice => "serialize twice",
            Check::TwoInstances => "two instances",
            Check::RunAhead => "run-ahead",
            Check::FreshInstance => "fresh instance",
            Check::ConstantSize => "constant size",
        }
    }

    /// The weakest level that needs this check to pass.
    pub fn needed_for(self) -> SavestateLevel {
        match self {
            Check::SerializeTwice | Check::RunAhead | Check::ConstantSize => SavestateLevel::Serialized,
            Check::TwoInstances | Check::FreshInstance => SavestateLevel::Deterministic,
        }
    }
}

/// How one region differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RegionDiff {
    /// The region (`state`, `system_ram`, `map.ram.0`, `picture`, `audio`).
    pub region: String,
    /// Byte lengths in A and B.
    pub len: (usize, usize),
    /// How many bytes differ (over the common length).
    pub differing: usize,
    /// The first differing offsets with A's and B's bytes there.
    pub bytes: Vec<(usize, u8, u8)>,
}

/// Where a check first failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The frame after which the difference was seen, counted from 1 (0: at power-on, before any
    /// frame; at a hand-over or a refused load, the frame whose state was loaded).
    pub frame: u64,
    /// What was compared with what.
    pub what: String,
    /// The regions that differ, in section order.
    pub regions: Vec<RegionDiff>,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckOutcome {
    /// Which check.
    pub check: Check,
    /// `Some(true)` passed, `Some(false)` failed, `None` not run or not measured (savestates do not
    /// work at all, [`AuditConfig::only`] left it out, or the run left it nothing to measure; the
    /// detail says which): a level that needs it is not reached.
    pub passed: Option<bool>,
    /// What was measured.
    pub detail: String,
    /// Where it first failed.
    pub finding: Option<Finding>,
}

/// What the audit runs.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// Frames per instance (at least 1, and at least `runahead` when check 3 runs).
    pub frames: u64,
    /// Run-ahead window length K (at least 1).
    pub runahead: u64,
    /// The frame whose state check 4 loads into a fresh instance (`None`: half way); before
    /// `frames`, so that frames run after the hand-over.
    pub fresh_at: Option<u64>,
    /// Run only this check, and only to its first failure (the others are reported not run): the
    /// question a shrink of the audit's input asks of every candidate stream.
    pub only: Option<Check>,
}

impl Default for AuditConfig {
    fn default() -> AuditConfig {
        AuditConfig { frames: 600, runahead: 2, fresh_at: None, only: None }
    }
}

impl AuditConfig {
    /// The frame whose state check 4 hands over: `fresh_at`, else half of `frames`.
    pub fn fresh_at(&self) -> u64 {
        self.fresh_at.unwrap_or(self.frames / 2)
    }

    /// Whether `check` runs (all do unless `only` names one).
    pub fn runs(&self, check: Check) -> bool {
        self.only.is_none_or(|only| only == check)
    }

    /// Refuses a run too short for a check it runs to measure anything: no frame at all, fewer
    /// frames than one run-ahead window (check 3), or a hand-over with no frame after it (check 4).
    /// [`audit`] asks it first; a frontend asks it before it starts any instance.
    pub fn check(&self) -> Result<(), ConfigError> {
        let k = self.runahead.max(1);
        let window = (self.runs(Check::RunAhead) && k > 1)
            .then(|| format!("check 3 (run-ahead) runs whole windows of --runahead {k} frames"));
        let minimum = if window.is_some() { k } else { 1 };
        if self.frames < minimum {
            let reason = match (self.frames, window) {
                (0, Some(window)) => {
                    format!("a run of no frame gives no check anything to measure, and {window}")
                }
                (0, None) => "a run of no frame gives no check anything to measure".to_owned(),
                (_, window) => window.unwrap_or_default(),
            };
            return Err(ConfigError::TooShort { frames: self.frames, minimum, reason });
        }
        if self.runs(Check::FreshInstance) && self.fresh_at() >= self.frames {
            return Err(ConfigError::FreshAtPastRun { fresh_at: self.fresh_at(), frames: self.frames });
        }
        Ok(())
    }
}

/// A run the audit refuses before it starts: a check it runs would measure nothing, and a check that
/// measured nothing must not grant a level. The messages name `anes audit`'s flags.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Too few frames.
    #[error("--frames {frames} is too short: {reason}; the audit needs --frames {minimum} or more")]
    TooShort {
        /// Frames asked for.
        frames: u64,
        /// The fewest frames the checks asked for can measure anything in.
        minimum: u64,
        /// Which check needs them.
        reason: String,
    },
    /// The hand-over of check 4 at or past the run's end: no frame would run after it.
    #[error(
        "--fresh-at {fresh_at} is not before --frames {frames}: check 4 (fresh instance) would run no frame after the hand-over; it needs --fresh-at {} or less",
        frames.saturating_sub(1)
    )]
    FreshAtPastRun {
        /// The frame whose state was to be handed over.
        fresh_at: u64,
        /// Frames asked for.
        frames: u64,
    },
}

/// The audit's result.
#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    /// The five checks, in order.
    pub checks: Vec<CheckOutcome>,
    /// The level every check it needs passed for.
    pub reached: SavestateLevel,
    /// Why not even `basic`, when savestates do not work at all.
    pub basic_failure: Option<String>,
    /// Serialized size at power-on (bytes of `retro_serialize`).
    pub state_len: usize,
    /// Frames run per instance.
    pub frames: u64,
}

impl AuditReport {
    /// The first check (in number order) that failed.
    pub fn first_failure(&self) -> Option<&CheckOutcome> {
        self.checks.iter().find(|c| c.passed == Some(false))
    }

    /// The first check (in number order) that `level` needs and that did not pass: it failed, or
    /// it measured nothing. `None` when `level` is reached, or savestates do not work at all.
    pub fn first_short_of(&self, level: SavestateLevel) -> Option<&CheckOutcome> {
        if self.basic_failure.is_some() {
            return None;
        }
        let short = |c: &&CheckOutcome| c.check.needed_for() <= level && c.passed != Some(true);
        self.checks
            .iter()
            .filter(short)
            .find(|c| c.passed == Some(false))
            .or_else(|| self.checks.iter().find(short))
    }

    /// The outcome of `check`.
    pub fn outcome(&self, check: Check) -> &CheckOutcome {
        &self.checks[check as usize]
    }
}

/// A machine the audit can measure: one that says when it failed outright. A [`Machine`] cannot
/// return a failure from most of its methods (`run_frame`, `save_state`), so a machine in a worker
/// process that crashed or hung answers them with placeholders (a zero hash, an empty snapshot) that
/// would read as results: the audit asks after every call.
pub trait Audited: Machine<Input = FrameInput> {
    /// The core it runs, as errors name it.
    fn core_name(&self) -> String;
    /// Why it failed outright, once it has (every answer since is a placeholder); `None` while it
    /// works. A refusal the core itself answered (a state it does not load) is no failure.
    fn failed(&self) -> Option<String>;
}

/// Why the audit could not run: the run asked for is too short, an instance could not be made, or a
/// machine failed outright. Never a verdict on the core's savestates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditError {
    /// The run is refused before it starts.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An instance could not be made (the core or its content refused, the worker did not start).
    #[error("instance {instance} of the audit could not be made: {reason}")]
    Make {
        /// Which instance (`A`: checks 1, 3 and 5; `B` and `C`: check 2; `D`: check 4).
        instance: &'static str,
        /// Why.
        reason: String,
    },
    /// An instance failed outright (its worker crashed, hung or broke the protocol): what it answered
    /// since is no measurement.
    #[error(
        "{core}: instance {instance} of the audit failed outright at {command}, frame {frame}: {reason}; the audit has no result"
    )]
    Failed {
        /// The core, as the machine names it.
        core: String,
        /// Which instance (`A`: checks 1, 3 and 5; `B` and `C`: check 2; `D`: check 4).
        instance: &'static str,
        /// The machine call after which the failure was seen (`run_frame`, `save_state`,
        /// `load_state`, `record`, `make`).
        command: &'static str,
        /// The frame, counted from 1 as everywhere in the audit: for `run_frame`, the frame it ran;
        /// for the others, the frame whose state the instance held or loaded (0: power-on).
        frame: u64,
        /// The machine's reason.
        reason: String,
    },
}

/// `Err` when `m` failed outright: called after every call on an audited machine.
fn alive<M: Audited>(
    m: &M,
    instance: &'static str,
    command: &'static str,
    frame: u64,
) -> Result<(), AuditError> {
    match m.failed() {
        None => Ok(()),
        Some(reason) => Err(AuditError::Failed { core: m.core_name(), instance, command, frame, reason }),
    }
}

/// Makes instance `instance`, checked as every call is.
fn make_instance<M: Audited>(
    make: &mut dyn FnMut() -> Result<M, String>,
    instance: &'static str,
) -> Result<M, AuditError> {
    let m = make().map_err(|reason| AuditError::Make { instance, reason })?;
    alive(&m, instance, "make", 0)?;
    Ok(m)
}

/// Compares two lists of named sections; the regions that differ.
pub fn diff_sections(a: &[(&str, &[u8])], b: &[(&str, &[u8])]) -> Vec<RegionDiff> {
    let mut out = Vec::new();
    for (name, a_bytes) in a {
        let b_bytes = b.iter().find(|(n, _)| n == name).map_or(&[][..], |(_, bytes)| bytes);
        if a_bytes == &b_bytes {
            continue;
        }
        let mut differing = 0;
        let mut bytes = Vec::new();
        for (offset, (x, y)) in a_bytes.iter().zip(b_bytes).enumerate() {
            if x != y {
                differing += 1;
                if bytes.len() < MAX_OFFSETS {
                    bytes.push((offset, *x, *y));
                }
            }
        }
        out.push(RegionDiff {
            region: (*name).to_owned(),
            len: (a_bytes.len(), b_bytes.len()),
            differing,
            bytes,
        });
    }
    out
}

fn machine_sections<M: Machine>(m: &M) -> Vec<(&'static str, &[u8])> {
    (0..m.section_count()).map(|i| (m.section_name(i), m.section_bytes(i))).collect()
}

fn snapshot_sections(bytes: &[u8]) -> Vec<(&str, &[u8])> {
    snapshot::parse(bytes).map(|s| s.sections).unwrap_or_default()
}

fn state_of(bytes: &[u8]) -> &[u8] {
    snapshot::parse(bytes).ok().and_then(|s| s.section("state")).unwrap_or(&[])
}

fn input_at(inputs: &[FrameInput], frame: u64) -> FrameInput {
    usize::try_from(frame).ok().and_then(|i| inputs.get(i)).copied().unwrap_or_default()
}

/// "frames 3-4", or "frame 3" for one.
fn frame_span(first: u64, last: u64) -> String {
    if first == last { format!("frame {first}") } else { format!("frames {first}-{last}") }
}

/// Checks 1 and 5 on the states of instance A, one frame at a time: every state is serialized twice
/// (check 1) and its size compared with the first (check 5).
struct StateChecks {
    /// The size of the first state (at power-on, or after the first frame for a core with none
    /// before it).
    start_len: usize,
    /// The first and the last frame measured, and how many.
    measured: Option<(u64, u64)>,
    count: u64,
    /// Check 1's first finding, and the frames whose two serializations differed.
    twice: Option<Finding>,
    twice_failed: u64,
    /// Check 5's first finding, and the sizes in frame order: (the frame a size starts at, size),
    /// the first the start.
    size: Option<Finding>,
    sizes: Vec<(u64, usize)>,
    size_changes: u64,
}

impl StateChecks {
    fn new(start_frame: u64, start_len: usize) -> StateChecks {
        StateChecks {
            start_len,
            measured: None,
            count: 0,
            twice: None,
            twice_failed: 0,
            size: None,
            sizes: vec![(start_frame, start_len)],
            size_changes: 0,
        }
    }

    /// The two snapshots taken in a row of the state of `frame`.
    fn measure(&mut self, frame: u64, first: &[u8], second: &[u8]) {
        let (first, second) = (state_of(first), state_of(second));
        self.measured = Some((self.measured.map_or(frame, |(from, _)| from), frame));
        self.count += 1;
        if first != second {
            self.twice_failed += 1;
            self.twice.get_or_insert_with(|| Finding {
                frame,
                what: "two serializations in a row".into(),
                regions: diff_sections(&[("state", first)], &[("state", second)]),
            });
        }
        let len = first.len();
        if len != self.start_len {
            let start_len = self.start_len;
            self.size.get_or_insert_with(|| Finding {
                frame,
                what: format!("serialized size {len} bytes, {start_len} at the start"),
                regions: Vec::new(),
            });
        }
        if self.sizes.last().is_some_and(|&(_, last)| last != len) {
            self.size_changes += 1;
            if self.sizes.len() <= MAX_SIZE_CHANGES {
                self.sizes.push((frame, len));
            }
        }
    }

    fn span(&self) -> String {
        match self.measured {
            Some((first, last)) => {
                let power_on = if first == 0 { "; frame 0 is power-on" } else { "" };
                format!("{} ({} states{power_on})", frame_span(first, last), self.count)
            }
            None => "no frame".to_owned(),
        }
    }

    fn twice_detail(&self) -> String {
        match self.twice_failed {
            0 => format!("serialized twice at {}", self.span()),
            n => format!("serialized twice at {}, {n} gave different bytes", self.span()),
        }
    }

    fn size_detail(&self) -> String {
        let (start, len) = self.sizes[0];
        let mut detail = format!("{len} bytes at frame {start}, sizes compared at {}", self.span());
        if self.size_changes > 0 {
            let changes: Vec<String> =
                self.sizes[1..].iter().map(|(frame, len)| format!("{len} from frame {frame}")).collect();
            detail.push_str(&format!("; then {}", changes.join(", ")));
            let more = self.size_changes - changes.len() as u64;
            if more > 0 {
                detail.push_str(&format!(" and {more} more changes"));
            }
        }
        detail
    }
}

/// Runs the audit: `make` builds a fresh instance at power-on (four are made: one for checks 1, 3
/// and 5, two for check 2 and one for check 4); `inputs` is the input of frames 1, 2, ... (index 0
/// is frame 1's; the default input past its end); `progress` hears (check, frames done) now and
/// then. A run too short for a check it runs is refused first ([`AuditConfig::check`]).
pub fn audit<M: Audited>(
    make: &mut dyn FnMut() -> Result<M, String>,
    inputs: &[FrameInput],
    config: &AuditConfig,
    progress: &mut dyn FnMut(Check, u64),
) -> Result<AuditReport, AuditError> {
    config.check()?;
    let frames = config.frames;
    let k = config.runahead.max(1);
    let mut a = make_instance(make, "A")?;

    // Savestates at all: a state at power-on (or after the first frame, for cores that have none
    // before it) that the core loads back.
    let mut first = Vec::new();
    a.save_state(&mut first);
    alive(&a, "A", "save_state", 0)?;
    let mut first_frame = 0;
    let mut state_len = state_of(&first).len();
    let mut basic_failure = None;
    if state_len == 0 {
        a.run_frame(input_at(inputs, 0));
        alive(&a, "A", "run_frame", 1)?;
        first_frame = 1;
        a.save_state(&mut first);
        alive(&a, "A", "save_state", first_frame)?;
        state_len = state_of(&first).len();
        if state_len == 0 {
            basic_failure =
                Some("retro_serialize gave no state at power-on nor after the first frame".to_owned());
        }
    }
    if basic_failure.is_none() {
        let loaded = a.load_state(&first);
        alive(&a, "A", "load_state", first_frame)?;
        if let Err(e) = loaded {
            basic_failure = Some(format!("the core refused its own state: {e}"));
        }
    }
    if let Some(reason) = basic_failure {
        let checks = Check::ALL
            .iter()
            .map(|&check| CheckOutcome { check, passed: None, detail: reason.clone(), finding: None })
            .collect();
        return Ok(AuditReport {
            checks,
            reached: SavestateLevel::None,
            basic_failure: Some(reason),
            state_len,
            frames,
        });
    }

    // Checks 1 and 5 on instance A frame by frame (the state of every frame of the windows' first
    // runs, serialized twice in a row), check 3 window by window.
    let mut states = StateChecks::new(first_frame, state_len);
    let mut runahead: Option<Finding> = None;
    let mut windows = 0u64;
    let mut last_window = 0u64;
    // Windows whose replays differed, and in how many of them each region did: a core that differs
    // only in the window from power-on, or only in its audio, reads differently from one that
    // loses its state.
    let mut runahead_failed = 0u64;
    let mut runahead_regions: Vec<(String, u64)> = Vec::new();
    let (mut s1, mut s2) = (Vec::new(), Vec::new());
    let mut first_run: Vec<Vec<u8>> = (0..k).map(|_| Vec::new()).collect();
    let mut first_records = Vec::with_capacity(k as usize);
    let mut again = Vec::new();
    let window_checks = config.runs(Check::SerializeTwice)
        || config.runs(Check::RunAhead)
        || config.runs(Check::ConstantSize);
    let mut f = a.record().frame;
    alive(&a, "A", "record", first_frame)?;
    if window_checks {
        a.save_state(&mut s1);
        alive(&a, "A", "save_state", f)?;
        a.save_state(&mut s2);
        alive(&a, "A", "save_state", f)?;
        states.measure(f, &s1, &s2);
    }
    while window_checks && f < frames {
        let only_found = match config.only {
            Some(Check::SerializeTwice) => states.twice.is_some(),
            Some(Check::RunAhead) => runahead.is_some(),
            Some(Check::ConstantSize) => states.size.is_some(),
            _ => false,
        };
        if only_found {
            break;
        }
        // The state every run of the window starts from (at the first window, the one measured
        // above; later, the state after the previous window's replays).
        if windows > 0 {
            a.save_state(&mut s1);
            alive(&a, "A", "save_state", f)?;
        }
        let window = k.min(frames - f);
        first_records.clear();
        for i in 0..window {
            let frame = f + i + 1;
            first_records.push(a.run_frame(input_at(inputs, f + i)));
            alive(&a, "A", "run_frame", frame)?;
            a.save_state(&mut first_run[i as usize]);
            alive(&a, "A", "save_state", frame)?;
            a.save_state(&mut s2);
            alive(&a, "A", "save_state", frame)?;
            states.measure(frame, &first_run[i as usize], &s2);
        }
        let mut window_regions: Vec<String> = Vec::new();
        let mut window_differed = false;
        for pass in ["second", "third"] {
            let loaded = a.load_state(&s1);
            alive(&a, "A", "load_state", f)?;
            if let Err(e) = loaded {
                runahead.get_or_insert(Finding {
                    frame: f,
                    what: format!("the {pass} run's unserialize was refused: {e}"),
                    regions: Vec::new(),
                });
                break;
            }
            for i in 0..window {
                let frame = f + i + 1;
                let record = a.run_frame(input_at(inputs, f + i));
                alive(&a, "A", "run_frame", frame)?;
                if record.state_hash == first_records[i as usize].state_hash {
                    continue;
                }
                window_differed = true;
                a.save_state(&mut again);
                alive(&a, "A", "save_state", frame)?;
                let regions =
                    diff_sections(&snapshot_sections(&first_run[i as usize]), &snapshot_sections(&again));
                for region in &regions {
                    if !window_regions.contains(&region.region) {
                        window_regions.push(region.region.clone());
                    }
                }
                if runahead.is_none() {
                    runahead = Some(Finding {
                        frame,
                        what: format!(
                            "the {pass} run of {} after unserializing the state of frame {f}, against the first",
                            frame_span(f + 1, f + window)
                        ),
                        regions,
                    });
                }
            }
        }
        if window_differed {
            runahead_failed += 1;
            for region in window_regions {
                match runahead_regions.iter_mut().find(|(name, _)| *name == region) {
                    Some((_, count)) => *count += 1,
                    None => runahead_regions.push((region, 1)),
                }
            }
        }
        f += window;
        windows += 1;
        last_window = window;
        progress(Check::RunAhead, f);
    }

    // Checks 2 and 4: instances B and C from power-on; D loads B's state at `fresh_at`.
    let fresh_at = config.fresh_at();
    // A check that measured nothing is no pass: `None`, and the levels that need it are not reached.
    let outcome = |check: Check, finding: Option<Finding>, detail: String, unmeasured: Option<String>| match (
        config.runs(check),
        unmeasured,
    ) {
        (false, _) => CheckOutcome { check, passed: None, detail: "not run".to_owned(), finding },
        (true, Some(why)) => {
            CheckOutcome { check, passed: None, detail: format!("not measured: {why}"), finding }
        }
        (true, None) => CheckOutcome { check, passed: Some(finding.is_none()), detail, finding },
    };
    let (two, fresh) = if config.runs(Check::TwoInstances) || config.runs(Check::FreshInstance) {
        two_and_fresh(make, inputs, frames, fresh_at, first_frame, config.only, progress)?
    } else {
        (None, None)
    };
    // A core with no state before its first frame leaves a run of one frame without a window, and
    // with one state, nothing to compare its size with.
    let no_window = (windows == 0).then(|| format!("no run-ahead window fits after frame {first_frame}"));
    let one_state =
        (states.count < 2).then(|| format!("one state (frame {first_frame}), no other size to compare"));
    let no_handover = (fresh_at < first_frame).then(|| {
        format!("the core has no state before frame {first_frame}, and the hand-over is at {fresh_at}")
    });
    let runahead_detail = {
        let whole = if last_window == k { windows } else { windows.saturating_sub(1) };
        let mut detail = format!("{whole} windows of {k} frames");
        if whole < windows {
            detail.push_str(&format!(" and 1 of {last_window}"));
        }
        if windows > 0 {
            detail.push_str(&format!(" over {}", frame_span(first_frame + 1, f)));
        }
        detail.push_str(", each run three times");
        if runahead_failed > 0 {
            let regions: Vec<String> = runahead_regions.iter().map(|(r, n)| format!("{r} {n}")).collect();
            detail.push_str(&format!("; {runahead_failed} differed"));
            if !regions.is_empty() {
                detail.push_str(&format!(" ({})", regions.join(", ")));
            }
        }
        detail
    };
    let checks = vec![
        outcome(Check::SerializeTwice, states.twice.clone(), states.twice_detail(), None),
        outcome(Check::TwoInstances, two, format!("two instances compared at frames 0-{frames}"), None),
        outcome(Check::RunAhead, runahead, runahead_detail, no_window),
        outcome(
            Check::FreshInstance,
            fresh,
            format!("state of frame {fresh_at} into a fresh instance, run to frame {frames}"),
            no_handover,
        ),
        outcome(Check::ConstantSize, states.size.clone(), states.size_detail(), one_state),
    ];
    let passed = |level: SavestateLevel| {
        checks.iter().filter(|c| c.check.needed_for() <= level).all(|c| c.passed == Some(true))
    };
    let reached = if passed(SavestateLevel::Deterministic) {
        SavestateLevel::Deterministic
    } else if passed(SavestateLevel::Serialized) {
        SavestateLevel::Serialized
    } else {
        SavestateLevel::Basic
    };
    Ok(AuditReport { checks, reached, basic_failure: None, state_len, frames })
}

/// Checks 2 and 4 (those of them `only` leaves): instances B and C from power-on; D loads B's state
/// at `fresh_at` (not when that is before `first_frame`, the first frame the core has a state of).
/// Their first findings.
fn two_and_fresh<M: Audited>(
    make: &mut dyn FnMut() -> Result<M, String>,
    inputs: &[FrameInput],
    frames: u64,
    fresh_at: u64,
    first_frame: u64,
    only: Option<Check>,
    progress: &mut dyn FnMut(Check, u64),
) -> Result<(Option<Finding>, Option<Finding>), AuditError> {
    let with_two = only.is_none_or(|only| only == Check::TwoInstances);
    let with_fresh = only.is_none_or(|only| only == Check::FreshInstance) && fresh_at >= first_frame;
    let mut b = make_instance(make, "B")?;
    let mut c = if with_two { Some(make_instance(make, "C")?) } else { None };
    let mut d: Option<M> = None;
    let mut two: Option<Finding> = None;
    let mut fresh: Option<Finding> = None;
    let mut handover = Vec::new();
    // A comparison reads records and sections, which a worker may fail to give: both machines are
    // checked after it, so a placeholder is never a difference.
    let compare = |x: (&M, &'static str), y: (&M, &'static str), frame: u64, what: &str| {
        let finding = (x.0.record().state_hash != y.0.record().state_hash).then(|| Finding {
            frame,
            what: what.to_owned(),
            regions: diff_sections(&machine_sections(x.0), &machine_sections(y.0)),
        });
        alive(x.0, x.1, "record", frame)?;
        alive(y.0, y.1, "record", frame)?;
        Ok::<_, AuditError>(finding)
    };
    if let Some(c) = &c {
        two = compare((&b, "B"), (c, "C"), 0, "two instances at power-on")?;
    }
    // `done`: frames run so far; the loop runs frame `done + 1`.
    for done in 0..=frames {
        if with_fresh && done == fresh_at {
            b.save_state(&mut handover);
            alive(&b, "B", "save_state", done)?;
            let mut fresh_machine = make_instance(make, "D")?;
            let loaded = fresh_machine.load_state(&handover);
            alive(&fresh_machine, "D", "load_state", done)?;
            match loaded {
                Ok(()) => {
                    if fresh.is_none() {
                        fresh = compare(
                            (&b, "B"),
                            (&fresh_machine, "D"),
                            done,
                            "the instance that saved the state and the fresh one that loaded it",
                        )?;
                    }
                    d = Some(fresh_machine);
                }
                Err(e) => {
                    fresh = Some(Finding {
                        frame: done,
                        what: format!("a fresh instance refused the state: {e}"),
                        regions: Vec::new(),
                    })
                }
            }
        }
        if done == frames {
            break;
        }
        let frame = done + 1;
        let input = input_at(inputs, done);
        b.run_frame(input);
        alive(&b, "B", "run_frame", frame)?;
        if let Some(c) = c.as_mut()
            && two.is_none()
        {
            c.run_frame(input);
            alive(c, "C", "run_frame", frame)?;
            two = compare((&b, "B"), (c, "C"), frame, "two instances from power-on")?;
        }
        if let Some(d) = d.as_mut()
            && fresh.is_none()
        {
            d.run_frame(input);
            alive(d, "D", "run_frame", frame)?;
            fresh = compare(
                (&b, "B"),
                (d, "D"),
                frame,
                &format!(
                    "the instance that saved the state of frame {fresh_at} and the fresh one that loaded it"
                ),
            )?;
        }
        if done % 64 == 0 {
            progress(Check::TwoInstances, frame);
        }
        let two_done = !with_two || two.is_some();
        let fresh_done = !with_fresh || fresh.is_some() || (d.is_none() && done >= fresh_at);
        if two_done && fresh_done {
            break;
        }
    }
    Ok((two, fresh))
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use anes_core::state::{FrameRecord, StateHash};
    use anes_lockstep::{MachineError, Probe};

    use super::*;

    /// How a [`Fake`] misbehaves.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Fault {
        None,
        /// It loads no state at all.
        RefusesLoads,
        /// It serializes nothing before its first frame.
        StatelessAtPowerOn,
        /// Its state is one byte longer from this frame on.
        GrowsAt(u64),
        /// At odd frames (inside run-ahead windows of 2) every serialization differs from the last.
        NoisyAtOddFrames,
        /// A count of its frames outside its state shows in its hash: a rewind does not rewind it.
        Leaks,
    }

    /// A deterministic machine whose state is its frame count, and which fails outright at one call
    /// (`op` at `frame`) as a worker machine does: from then on it answers with placeholders.
    #[derive(Debug)]
    struct Fake {
        frame: u64,
        dies_at: Option<(&'static str, u64)>,
        dead: Cell<bool>,
        fault: Fault,
        serializations: Cell<u8>,
        runs: u64,
    }

    impl Fake {
        fn new(dies_at: Option<(&'static str, u64)>) -> Fake {
            Fake::with(Fault::None, dies_at)
        }

        fn with(fault: Fault, dies_at: Option<(&'static str, u64)>) -> Fake {
            Fake { frame: 0, dies_at, dead: Cell::new(false), fault, serializations: Cell::new(0), runs: 0 }
        }

        /// Whether `op` answers for real (it dies when its turn comes).
        fn answers(&self, op: &'static str) -> bool {
            if self.dies_at == Some((op, self.frame)) {
                self.dead.set(true);
            }
            !self.dead.get()
        }

        fn state(&self) -> Vec<u8> {
            let mut state = self.frame.to_le_bytes().to_vec();
            if matches!(self.fault, Fault::GrowsAt(at) if self.frame >= at) {
                state.push(0);
            }
            state
        }
    }

    impl Machine for Fake {
        type Input = FrameInput;

        fn steps_instructions(&self) -> bool {
            false
        }

        fn run_frame(&mut self, _: FrameInput) -> FrameRecord {
            if !self.answers("run_frame") {
                return FrameRecord {
                    frame: u64::MAX,
                    cpu_cycle: u64::MAX,
                    ppu_scanline: 0,
                    ppu_dot: 0,
                    state_hash: StateHash::default(),
                };
            }
            self.frame += 1;
            self.runs += 1;
            self.record()
        }

        fn record(&self) -> FrameRecord {
            FrameRecord {
                frame: self.frame,
                cpu_cycle: self.frame,
                ppu_scanline: 0,
                ppu_dot: 0,
                state_hash: self.state_hash(),
            }
        }

        fn probe(&self) -> Probe {
            Probe::default()
        }

        fn state_hash(&self) -> StateHash {
            if self.dead.get() {
                StateHash::default()
            } else {
                let mut hashed = self.state();
                if self.fault == Fault::Leaks {
                    hashed.extend_from_slice(&self.runs.to_le_bytes());
                }
                StateHash(*blake3::hash(&hashed).as_bytes())
            }
        }

        fn section_count(&self) -> usize {
            usize::from(!self.dead.get())
        }

        fn section_name(&self, _: usize) -> &'static str {
            "state"
        }

        fn section_bytes(&self, _: usize) -> &[u8] {
            &[]
        }

        fn snapshot_len(&self) -> usize {
            64
        }

        fn save_state(&self, out: &mut Vec<u8>) {
            out.clear();
            if self.answers("save_state") {
                let mut state = self.state();
                match self.fault {
                    Fault::StatelessAtPowerOn if self.frame == 0 => state.clear(),
                    Fault::NoisyAtOddFrames if self.frame % 2 == 1 => {
                        self.serializations.set(self.serializations.get().wrapping_add(1));
                        state[7] = self.serializations.get();
                    }
                    _ => {}
                }
                snapshot::write(out, self.frame, (0, 0, 0), &[("state", &state)]);
            }
        }

        fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
            if !self.answers("load_state") {
                return Err(MachineError::Snapshot("the worker failed earlier".into()));
            }
            if self.fault == Fault::RefusesLoads {
                return Err(MachineError::Snapshot("this core loads no state".into()));
            }
            let state = state_of(bytes);
            let frame = state.get(..8).ok_or_else(|| MachineError::Snapshot("size".into()))?;
            self.frame = u64::from_le_bytes(frame.try_into().expect("8 bytes"));
            Ok(())
        }
    }

    impl Audited for Fake {
        fn core_name(&self) -> String {
            "fake core".into()
        }

        fn failed(&self) -> Option<String> {
            self.dead.get().then(|| "its output ended".to_owned())
        }
    }

    /// Audits 40 frames of fakes; instance `n` (0: A, 1: B, 2: C, 3: D) dies as `deaths` says.
    fn audit_fakes(deaths: &[(usize, &'static str, u64)]) -> Result<AuditReport, AuditError> {
        let mut made = 0;
        let mut make = || {
            let dies_at = deaths.iter().find(|(n, ..)| *n == made).map(|&(_, op, frame)| (op, frame));
            made += 1;
            Ok(Fake::new(dies_at))
        };
        let config = AuditConfig { frames: 40, runahead: 2, fresh_at: Some(20), only: None };
        audit(&mut make, &[], &config, &mut |_, _| {})
    }

    fn failed(result: Result<AuditReport, AuditError>) -> (&'static str, &'static str, u64, String) {
        match result {
            Err(AuditError::Failed { core, instance, command, frame, reason }) => {
                assert_eq!((core.as_str(), reason.as_str()), ("fake core", "its output ended"));
                let message = AuditError::Failed { core, instance, command, frame, reason }.to_string();
                (instance, command, frame, message)
            }
            other => panic!("expected a failed instance, got {other:?}"),
        }
    }

    #[test]
    fn fakes_that_live_reach_deterministic() {
        let report = audit_fakes(&[]).unwrap();
        assert_eq!(report.reached, SavestateLevel::Deterministic, "{report:?}");
    }

    /// Without the check, its empty snapshots read as "serialized size 0 bytes" (check 5) and its
    /// zero hashes as a run-ahead difference: a verdict on the core from a dead worker.
    #[test]
    fn an_instance_that_dies_in_a_run_ahead_window_is_an_error_naming_the_call_and_frame() {
        // It dies running its 8th frame (7 run before): frame 8, counted from 1 as every frame of
        // the audit.
        let (instance, command, frame, message) = failed(audit_fakes(&[(0, "run_frame", 7)]));
        assert_eq!((instance, command, frame), ("A", "run_frame", 8));
        assert_eq!(
            message,
            "fake core: instance A of the audit failed outright at run_frame, frame 8: its output ended; the audit has no result"
        );
        let (instance, command, frame, _) = failed(audit_fakes(&[(0, "save_state", 12)]));
        assert_eq!((instance, command, frame), ("A", "save_state", 12));
    }

    /// Without the check, a dead instance at power-on reads as a core whose serialize gives nothing.
    #[test]
    fn an_instance_dead_at_power_on_is_an_error_not_a_core_without_savestates() {
        let (instance, command, frame, _) = failed(audit_fakes(&[(0, "save_state", 0)]));
        assert_eq!((instance, command, frame), ("A", "save_state", 0));
        let (instance, command, frame, _) = failed(audit_fakes(&[(0, "load_state", 0)]));
        assert_eq!((instance, command, frame), ("A", "load_state", 0));
    }

    /// Without the check, two dead instances give equal placeholders, and check 2 passes.
    #[test]
    fn two_dead_instances_are_an_error_not_a_pass() {
        let (instance, command, frame, _) = failed(audit_fakes(&[(1, "run_frame", 3), (2, "run_frame", 3)]));
        assert_eq!((instance, command, frame), ("B", "run_frame", 4));
        let (instance, command, frame, _) = failed(audit_fakes(&[(2, "run_frame", 30)]));
        assert_eq!((instance, command, frame), ("C", "run_frame", 31));
    }

    /// The fresh instance dying at the hand-over is no "refused the state" finding.
    #[test]
    fn a_fresh_instance_that_dies_at_the_hand_over_is_an_error() {
        let (instance, command, frame, _) = failed(audit_fakes(&[(3, "load_state", 0)]));
        assert_eq!((instance, command, frame), ("D", "load_state", 20));
        let (instance, command, frame, _) = failed(audit_fakes(&[(1, "save_state", 20)]));
        assert_eq!((instance, command, frame), ("B", "save_state", 20));
    }

    /// A refusal the core answers is a measurement: savestates do not work at all.
    #[test]
    fn a_state_a_live_core_refuses_is_still_a_finding() {
        let mut make = || Ok(Fake::with(Fault::RefusesLoads, None));
        let report = audit(&mut make, &[], &AuditConfig::default(), &mut |_, _| {}).unwrap();
        assert_eq!(report.reached, SavestateLevel::None);
        let why = report.basic_failure.unwrap();
        assert!(why.contains("this core loads no state"), "{why}");
    }

    /// Audits `frames` frames of fakes with `fault` in windows of `runahead`, the hand-over at
    /// `fresh_at` (default: half way).
    fn audit_fault(
        fault: Fault,
        frames: u64,
        runahead: u64,
        fresh_at: Option<u64>,
    ) -> Result<AuditReport, AuditError> {
        let mut make = || Ok(Fake::with(fault, None));
        let config = AuditConfig { frames, runahead, fresh_at, only: None };
        audit(&mut make, &[], &config, &mut |_, _| {})
    }

    /// The refusal, with no instance made.
    fn refused(config: AuditConfig) -> ConfigError {
        let mut made = 0;
        let mut make = || {
            made += 1;
            Ok(Fake::new(None))
        };
        let result = audit(&mut make, &[], &config, &mut |_, _| {});
        assert_eq!(made, 0, "refused before any instance is made");
        match result {
            Err(AuditError::Config(e)) => {
                assert_eq!(config.check(), Err(e.clone()));
                e
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Without the refusal, `--frames 0` ran no frame and every check passed: `deterministic` from
    /// nothing measured.
    #[test]
    fn a_run_too_short_to_measure_is_refused_naming_the_minimum() {
        let config = |frames, runahead, only| AuditConfig { frames, runahead, fresh_at: None, only };
        assert_eq!(
            refused(config(0, 2, None)).to_string(),
            "--frames 0 is too short: a run of no frame gives no check anything to measure, and check 3 (run-ahead) runs whole windows of --runahead 2 frames; the audit needs --frames 2 or more"
        );
        assert_eq!(
            refused(config(0, 1, None)).to_string(),
            "--frames 0 is too short: a run of no frame gives no check anything to measure; the audit needs --frames 1 or more"
        );
        assert!(matches!(refused(config(9, 10, None)), ConfigError::TooShort { frames: 9, minimum: 10, .. }));
        // Without check 3 (a shrink's trials of another check), one frame is enough.
        assert_eq!(config(1, 10, Some(Check::SerializeTwice)).check(), Ok(()));
        assert!(matches!(
            refused(config(0, 10, Some(Check::TwoInstances))),
            ConfigError::TooShort { minimum: 1, .. }
        ));
        assert_eq!(config(10, 10, None).check(), Ok(()));
    }

    /// Without the refusal, `--fresh-at 1000 --frames 10` was cut to 10 and check 4 ran no frame
    /// after the hand-over, and passed.
    #[test]
    fn a_hand_over_at_or_past_the_end_is_refused_naming_both() {
        let config = |fresh_at, only| AuditConfig { frames: 10, runahead: 2, fresh_at: Some(fresh_at), only };
        assert_eq!(
            refused(config(1000, None)).to_string(),
            "--fresh-at 1000 is not before --frames 10: check 4 (fresh instance) would run no frame after the hand-over; it needs --fresh-at 9 or less"
        );
        assert_eq!(refused(config(10, None)), ConfigError::FreshAtPastRun { fresh_at: 10, frames: 10 });
        assert_eq!(config(9, None).check(), Ok(()));
        // A shrink's trials of another check keep the hand-over the audit had.
        assert_eq!(config(1000, Some(Check::RunAhead)).check(), Ok(()));
        let report = audit_fault(Fault::None, 10, 2, Some(9)).unwrap();
        assert_eq!(report.outcome(Check::FreshInstance).passed, Some(true), "{report:?}");
    }

    /// A core with no state before its first frame, over one frame: no run-ahead window fits, one
    /// state has no size to compare with, and no state of frame 0 can be handed over. Without the
    /// rule those checks passed on nothing (and check 4 failed on a state that cannot exist).
    #[test]
    fn a_check_that_measured_nothing_grants_no_level() {
        let report = audit_fault(Fault::StatelessAtPowerOn, 1, 1, None).unwrap();
        let passed: Vec<Option<bool>> = report.checks.iter().map(|c| c.passed).collect();
        assert_eq!(passed, [Some(true), Some(true), None, None, None], "{report:?}");
        for check in [Check::RunAhead, Check::FreshInstance, Check::ConstantSize] {
            let detail = &report.outcome(check).detail;
            assert!(detail.starts_with("not measured: "), "{detail}");
        }
        assert_eq!(report.reached, SavestateLevel::Basic);
        let short = report.first_short_of(SavestateLevel::Serialized).unwrap();
        assert_eq!((short.check, short.passed), (Check::RunAhead, None));
        // Two frames measure all five.
        let report = audit_fault(Fault::StatelessAtPowerOn, 2, 1, Some(1)).unwrap();
        assert_eq!(report.reached, SavestateLevel::Deterministic, "{report:?}");
    }

    /// Without checking every frame, a size change at frame 1 was first seen at the next window
    /// start (frame 2 with windows of 2, 10 with windows of 10), and a change at 60 in windows of 7
    /// at 63.
    #[test]
    fn the_size_is_checked_after_every_frame() {
        for (at, runahead) in [(1, 2), (1, 10), (60, 7), (63, 7)] {
            let report = audit_fault(Fault::GrowsAt(at), 100, runahead, None).unwrap();
            let outcome = report.outcome(Check::ConstantSize);
            assert_eq!(outcome.finding.as_ref().map(|f| f.frame), Some(at), "{outcome:?}");
            assert_eq!(
                outcome.detail,
                format!(
                    "8 bytes at frame 0, sizes compared at frames 0-100 (101 states; frame 0 is power-on); then 9 from frame {at}"
                )
            );
        }
    }

    /// Without checking every frame, a core whose serializations differ only inside the windows
    /// passed check 1 (its states were serialized twice at window starts only, even frames).
    #[test]
    fn serialize_twice_is_checked_after_every_frame() {
        let report = audit_fault(Fault::NoisyAtOddFrames, 40, 2, None).unwrap();
        let outcome = report.outcome(Check::SerializeTwice);
        assert_eq!(outcome.passed, Some(false), "{outcome:?}");
        let finding = outcome.finding.as_ref().unwrap();
        assert_eq!(finding.frame, 1);
        assert_eq!(finding.regions[0].bytes, [(7, 1, 2)]);
        assert_eq!(
            outcome.detail,
            "serialized twice at frames 0-40 (41 states; frame 0 is power-on), 20 gave different bytes"
        );
        assert_eq!(report.reached, SavestateLevel::Basic);
    }

    /// Every frame number is counted from 1: the window from the state of frame 0 runs frames 1-2
    /// (the texts once said "frames 0-1" next to a finding "at frame 1").
    #[test]
    fn the_run_ahead_texts_count_frames_as_the_findings_do() {
        let report = audit_fault(Fault::Leaks, 41, 2, None).unwrap();
        let outcome = report.outcome(Check::RunAhead);
        let finding = outcome.finding.as_ref().unwrap();
        assert_eq!(finding.frame, 1);
        assert_eq!(
            finding.what,
            "the second run of frames 1-2 after unserializing the state of frame 0, against the first"
        );
        assert_eq!(
            outcome.detail,
            "20 windows of 2 frames and 1 of 1 over frames 1-41, each run three times; 21 differed"
        );
        let fresh = report.outcome(Check::FreshInstance);
        assert_eq!(fresh.detail, "state of frame 20 into a fresh instance, run to frame 41");
        // The fresh instance's count differs from the start: at the hand-over, the state of 20.
        assert_eq!(fresh.finding.as_ref().map(|f| f.frame), Some(20), "{fresh:?}");
    }
}
