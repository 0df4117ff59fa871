//! The savestate audit: which `savestate_features` level a core really reaches, measured by five
//! checks over a run of its content, each failure localized to the frame, the region and the bytes.
//!
//! 1. **serialize twice**: two `retro_serialize` calls in a row give the same bytes (every frame
//!    the run-ahead windows start at);
//! 2. **two instances**: two instances from power-on, fed the same input, agree in state, memory,
//!    picture and audio after every frame;
//! 3. **run-ahead**: serialize, run K frames, unserialize, run them again, and a third time: the
//!    same records (state, memory, picture, audio) each time. The windows tile the run;
//! 4. **fresh instance**: a state taken half way and loaded into a fresh instance continues as the
//!    instance it came from;
//! 5. **constant size**: the serialized size never changes.
//!
//! `basic` needs states that serialize and load; `serialized` adds checks 1, 3 and 5 (what rewind
//! and run-ahead in one instance rely on); `deterministic` adds 2 and 4 (netplay, run-ahead's second
//! instance). The audit is generic over [`Machine`] ([`Audited`]): `anes audit` runs each instance in
//! a worker process of its own, as a core keeps its state in globals. A worker that crashed or hung
//! answers every later call with placeholders, so every call is followed by [`Audited::failed`]: a
//! failed instance is an [`AuditError::Failed`], never a measurement.

use anes_core::movie::FrameInput;
use anes_lockstep::Machine;
use serde::Serialize;

use crate::info::SavestateLevel;
use crate::snapshot;

/// How much of a region's difference a finding keeps.
const MAX_OFFSETS: usize = 16;

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
    /// Frames run when the difference was seen (0: at power-on, or right after a load).
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
    /// `Some(true)` passed, `Some(false)` failed, `None` not run (savestates do not work at all).
    pub passed: Option<bool>,
    /// What was measured.
    pub detail: String,
    /// Where it first failed.
    pub finding: Option<Finding>,
}

/// What the audit runs.
#[derive(Debug, Clone)]
pub struct AuditConfig {
    /// Frames per instance.
    pub frames: u64,
    /// Run-ahead window length K (at least 1).
    pub runahead: u64,
    /// The frame whose state check 4 loads into a fresh instance (`None`: half way).
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

/// Why the audit could not run: an instance could not be made, or a machine failed outright. Never a
/// verdict on the core's savestates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuditError {
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
        /// Frames the instance had run when the call was made (for `run_frame`, the frame run).
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

/// Runs the audit: `make` builds a fresh instance at power-on (four are made: one for checks 1, 3
/// and 5, two for check 2 and one for check 4); `inputs` is the input of frames 0, 1, ... (the
/// default input past its end); `progress` hears (check, frames done) now and then.
pub fn audit<M: Audited>(
    make: &mut dyn FnMut() -> Result<M, String>,
    inputs: &[FrameInput],
    config: &AuditConfig,
    progress: &mut dyn FnMut(Check, u64),
) -> Result<AuditReport, AuditError> {
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
        alive(&a, "A", "run_frame", 0)?;
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

    // Checks 1, 3 and 5 on instance A, window by window.
    let mut twice: Option<Finding> = None;
    let mut runahead: Option<Finding> = None;
    let mut size: Option<Finding> = None;
    let mut windows = 0u64;
    // Windows whose replays differed, and in how many of them each region did: a core that differs
    // only in the window from power-on, or only in its audio, reads differently from one that
    // loses its state.
    let mut runahead_failed = 0u64;
    let mut runahead_regions: Vec<(String, u64)> = Vec::new();
    let mut twice_failed = 0u64;
    let (mut s1, mut s2) = (Vec::new(), Vec::new());
    let mut first_run: Vec<Vec<u8>> = (0..k).map(|_| Vec::new()).collect();
    let mut first_records = Vec::with_capacity(k as usize);
    let mut again = Vec::new();
    let runs = |check: Check| config.only.is_none_or(|only| only == check);
    let window_checks = runs(Check::SerializeTwice) || runs(Check::RunAhead) || runs(Check::ConstantSize);
    let mut f = a.record().frame;
    alive(&a, "A", "record", first_frame)?;
    while window_checks && f < frames {
        let only_found = match config.only {
            Some(Check::SerializeTwice) => twice.is_some(),
            Some(Check::RunAhead) => runahead.is_some(),
            Some(Check::ConstantSize) => size.is_some(),
            _ => false,
        };
        if only_found {
            break;
        }
        a.save_state(&mut s1);
        alive(&a, "A", "save_state", f)?;
        a.save_state(&mut s2);
        alive(&a, "A", "save_state", f)?;
        if state_of(&s1) != state_of(&s2) {
            twice_failed += 1;
        }
        if twice.is_none() && state_of(&s1) != state_of(&s2) {
            twice = Some(Finding {
                frame: f,
                what: "two serializations in a row".into(),
                regions: diff_sections(&[("state", state_of(&s1))], &[("state", state_of(&s2))]),
            });
        }
        let len = state_of(&s1).len();
        if size.is_none() && len != state_len {
            size = Some(Finding {
                frame: f,
                what: format!("serialized size {len} bytes, {state_len} at the start"),
                regions: Vec::new(),
            });
        }
        let window = k.min(frames - f);
        first_records.clear();
        for i in 0..window {
            first_records.push(a.run_frame(input_at(inputs, f + i)));
            alive(&a, "A", "run_frame", f + i)?;
            a.save_state(&mut first_run[i as usize]);
            alive(&a, "A", "save_state", f + i + 1)?;
        }
        let mut window_regions: Vec<String> = Vec::new();
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
                let record = a.run_frame(input_at(inputs, f + i));
                alive(&a, "A", "run_frame", f + i)?;
                if record.state_hash == first_records[i as usize].state_hash {
                    continue;
                }
                a.save_state(&mut again);
                alive(&a, "A", "save_state", f + i + 1)?;
                let regions =
                    diff_sections(&snapshot_sections(&first_run[i as usize]), &snapshot_sections(&again));
                for region in &regions {
                    if !window_regions.contains(&region.region) {
                        window_regions.push(region.region.clone());
                    }
                }
                if runahead.is_none() {
                    runahead = Some(Finding {
                        frame: f + i + 1,
                        what: format!(
                            "the {pass} run of frames {f}-{} after unserializing the state of frame {f}, against the first",
                            f + window - 1
                        ),
                        regions,
                    });
                }
            }
        }
        if !window_regions.is_empty() {
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
        progress(Check::RunAhead, f);
    }

    // Checks 2 and 4: instances B and C from power-on; D loads B's state at `fresh_at`.
    let fresh_at = config.fresh_at.unwrap_or(frames / 2).min(frames);
    let outcome = |check: Check, finding: Option<Finding>, detail: String| CheckOutcome {
        check,
        passed: if runs(check) { Some(finding.is_none()) } else { None },
        detail: if runs(check) { detail } else { "not run".to_owned() },
        finding,
    };
    let (two, fresh) = if runs(Check::TwoInstances) || runs(Check::FreshInstance) {
        two_and_fresh(make, inputs, frames, fresh_at, config.only, progress)?
    } else {
        (None, None)
    };
    let checks = vec![
        outcome(
            Check::SerializeTwice,
            twice,
            match twice_failed {
                0 => format!("{windows} frames serialized twice"),
                n => format!("{windows} frames serialized twice, {n} gave different bytes"),
            },
        ),
        outcome(Check::TwoInstances, two, format!("{frames} frames, two instances")),
        outcome(Check::RunAhead, runahead, {
            let mut detail = format!("{windows} windows of {k} frames, each run three times");
            if runahead_failed > 0 {
                let regions: Vec<String> = runahead_regions.iter().map(|(r, n)| format!("{r} {n}")).collect();
                detail.push_str(&format!("; {runahead_failed} differed ({})", regions.join(", ")));
            }
            detail
        }),
        outcome(
            Check::FreshInstance,
            fresh,
            format!("state of frame {fresh_at} into a fresh instance, run to {frames}"),
        ),
        outcome(Check::ConstantSize, size, format!("{state_len} bytes at the start")),
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
/// at `fresh_at`. Their first findings.
fn two_and_fresh<M: Audited>(
    make: &mut dyn FnMut() -> Result<M, String>,
    inputs: &[FrameInput],
    frames: u64,
    fresh_at: u64,
    only: Option<Check>,
    progress: &mut dyn FnMut(Check, u64),
) -> Result<(Option<Finding>, Option<Finding>), AuditError> {
    let with_two = only.is_none_or(|only| only == Check::TwoInstances);
    let with_fresh = only.is_none_or(|only| only == Check::FreshInstance);
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
    for frame in 0..=frames {
        if with_fresh && frame == fresh_at {
            b.save_state(&mut handover);
            alive(&b, "B", "save_state", frame)?;
            let mut fresh_machine = make_instance(make, "D")?;
            let loaded = fresh_machine.load_state(&handover);
            alive(&fresh_machine, "D", "load_state", frame)?;
            match loaded {
                Ok(()) => {
                    if fresh.is_none() {
                        fresh = compare(
                            (&b, "B"),
                            (&fresh_machine, "D"),
                            frame,
                            "the instance that saved the state and the fresh one that loaded it",
                        )?;
                    }
                    d = Some(fresh_machine);
                }
                Err(e) => {
                    fresh = Some(Finding {
                        frame,
                        what: format!("a fresh instance refused the state: {e}"),
                        regions: Vec::new(),
                    })
                }
            }
        }
        if frame == frames {
            break;
        }
        let input = input_at(inputs, frame);
        b.run_frame(input);
        alive(&b, "B", "run_frame", frame)?;
        if let Some(c) = c.as_mut()
            && two.is_none()
        {
            c.run_frame(input);
            alive(c, "C", "run_frame", frame)?;
            two = compare((&b, "B"), (c, "C"), frame + 1, "two instances from power-on")?;
        }
        if let Some(d) = d.as_mut()
            && fresh.is_none()
        {
            d.run_frame(input);
            alive(d, "D", "run_frame", frame)?;
            fresh = compare(
                (&b, "B"),
                (d, "D"),
                frame + 1,
                &format!(
                    "the instance that saved the state of frame {fresh_at} and the fresh one that loaded it"
                ),
            )?;
        }
        if frame % 64 == 0 {
            progress(Check::TwoInstances, frame + 1);
        }
        let two_done = !with_two || two.is_some();
        let fresh_done = !with_fresh || fresh.is_some() || (d.is_none() && frame >= fresh_at);
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

    /// A deterministic machine whose state is its frame count, and which fails outright at one call
    /// (`op` at `frame`) as a worker machine does: from then on it answers with placeholders.
    #[derive(Debug)]
    struct Fake {
        frame: u64,
        dies_at: Option<(&'static str, u64)>,
        dead: Cell<bool>,
        refuses_loads: bool,
    }

    impl Fake {
        fn new(dies_at: Option<(&'static str, u64)>) -> Fake {
            Fake { frame: 0, dies_at, dead: Cell::new(false), refuses_loads: false }
        }

        /// Whether `op` answers for real (it dies when its turn comes).
        fn answers(&self, op: &'static str) -> bool {
            if self.dies_at == Some((op, self.frame)) {
                self.dead.set(true);
            }
            !self.dead.get()
        }

        fn state(&self) -> [u8; 8] {
            self.frame.to_le_bytes()
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
                StateHash(*blake3::hash(&self.state()).as_bytes())
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
                snapshot::write(out, self.frame, (0, 0, 0), &[("state", &self.state())]);
            }
        }

        fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
            if !self.answers("load_state") {
                return Err(MachineError::Snapshot("the worker failed earlier".into()));
            }
            if self.refuses_loads {
                return Err(MachineError::Snapshot("this core loads no state".into()));
            }
            let state = state_of(bytes);
            self.frame =
                u64::from_le_bytes(state.try_into().map_err(|_| MachineError::Snapshot("size".into()))?);
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
        let (instance, command, frame, message) = failed(audit_fakes(&[(0, "run_frame", 7)]));
        assert_eq!((instance, command, frame), ("A", "run_frame", 7));
        assert_eq!(
            message,
            "fake core: instance A of the audit failed outright at run_frame, frame 7: its output ended; the audit has no result"
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
        assert_eq!((instance, command, frame), ("B", "run_frame", 3));
        let (instance, command, frame, _) = failed(audit_fakes(&[(2, "run_frame", 30)]));
        assert_eq!((instance, command, frame), ("C", "run_frame", 30));
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
        let mut make = || Ok(Fake { refuses_loads: true, ..Fake::new(None) });
        let report = audit(&mut make, &[], &AuditConfig::default(), &mut |_, _| {}).unwrap();
        assert_eq!(report.reached, SavestateLevel::None);
        let why = report.basic_failure.unwrap();
        assert!(why.contains("this core loads no state"), "{why}");
    }
}
