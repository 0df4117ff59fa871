//! Fault injection for tests and demos: deliberate, named corruptions of machine B, so the harness can
//! prove it catches what it claims to.
//!
//! Spec strings (numbers are decimal or `0x` hex, `_` separators allowed):
//! - `flip:SECTION:OFFSET:BIT@CYCLE`: flip bit `BIT` of byte `OFFSET` of state section `SECTION` at
//!   the end of the instruction running on CPU cycle `CYCLE` (e.g. `flip:ram:0x0342:3@1234567`);
//! - `stall:N@CYCLE`: stall B's CPU for `N` cycles there, 1 to [`MAX_STALL_CYCLES`] (one frame);
//! - `input:PORT:BIT@FRAME`: invert button bit `BIT` of controller `PORT` (0 or 1) in B's input for
//!   input-stream frame `FRAME` (0-based), through [`crate::EvidenceInput::flip_button`] (refused
//!   when the machine's input has no such button).
//!
//! On a machine that does not step instructions ([`crate::Machine::steps_instructions`]), flips and
//! stalls fire at the end of the frame in which B's CPU reached their cycle.

use core::fmt;
use core::str::FromStr;

use thiserror::Error;

/// The longest stall a fault may ask for: one NTSC frame of CPU cycles (29,780.5, rounded up). A
/// stall costs its length in emulated bus cycles, and a longer one says nothing a one-frame stall
/// does not: the machine is a frame behind either way.
pub const MAX_STALL_CYCLES: u32 = 29_781;

/// One fault, always applied to machine B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Flip one bit of state at the end of the instruction running on `cpu_cycle`.
    FlipBit {
        /// Section name as the machine names it (`ram`, `cpu`, `ppu`).
        section: String,
        /// Byte offset within the section.
        offset: usize,
        /// Bit number, 0-7.
        bit: u8,
        /// CPU cycle.
        cpu_cycle: u64,
    },
    /// Stall the CPU for `cycles` cycles at the end of the instruction running on `cpu_cycle`.
    Stall {
        /// Cycles lost, 1 to [`MAX_STALL_CYCLES`].
        cycles: u32,
        /// CPU cycle.
        cpu_cycle: u64,
    },
    /// Invert one button bit of one controller in B's input for one frame.
    CorruptInput {
        /// Controller port, 0 or 1.
        port: u8,
        /// Button bit, 0-7 (see `anes_core::input::buttons`).
        bit: u8,
        /// Input-stream frame index (0-based).
        frame: u64,
    },
}

impl Fault {
    /// The CPU cycle a state fault fires at; `None` for input faults.
    pub fn cpu_cycle(&self) -> Option<u64> {
        match self {
            Fault::FlipBit { cpu_cycle, .. } | Fault::Stall { cpu_cycle, .. } => Some(*cpu_cycle),
            Fault::CorruptInput { .. } => None,
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::FlipBit { section, offset, bit, cpu_cycle } => {
                write!(f, "flip:{section}:{offset:#06x}:{bit}@{cpu_cycle}")
            }
            Fault::Stall { cycles, cpu_cycle } => write!(f, "stall:{cycles}@{cpu_cycle}"),
            Fault::CorruptInput { port, bit, frame } => write!(f, "input:{port}:{bit}@{frame}"),
        }
    }
}

/// Why a fault spec string was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FaultSpecError {
    /// No `@` separating the fault from when it fires.
    #[error("fault spec {spec:?} has no `@`: write KIND:ARGS@WHEN, e.g. flip:ram:0x0342:3@1234567")]
    MissingAt {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
    },
    /// The kind before the first `:` is not one of `flip`, `stall`, `input`.
    #[error("fault spec {spec:?}: unknown kind {kind:?} (expected flip, stall or input)")]
    UnknownKind {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
        /// The kind found.
        kind: String,
    },
    /// Wrong number of `:`-separated arguments for the kind.
    #[error("fault spec {spec:?}: {kind} takes {expected}")]
    WrongArguments {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
        /// The fault kind whose arguments were wrong (`flip`, `stall`, `input`).
        kind: &'static str,
        /// The expected shape.
        expected: &'static str,
    },
    /// A number that does not parse.
    #[error("fault spec {spec:?}: {field} {found:?} is not a number (decimal or 0x hex)")]
    BadNumber {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
        /// The argument's name in the spec's grammar (`offset`, `bit`, `port`, `cycle`...).
        field: &'static str,
        /// The text found.
        found: String,
    },
    /// A stall of no cycles or of more than [`MAX_STALL_CYCLES`].
    #[error(
        "fault spec {spec:?}: a stall of {cycles} cycles is out of range: 1 to {max} (one frame of CPU cycles)"
    )]
    StallOutOfRange {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
        /// The cycles asked for.
        cycles: u64,
        /// The longest stall allowed, [`MAX_STALL_CYCLES`].
        max: u32,
    },
    /// A number outside its range.
    #[error("fault spec {spec:?}: {field} {value} is out of range ({range})")]
    OutOfRange {
        /// The whole spec as given, e.g. `flip:ram:0x0342:3@1234567`.
        spec: String,
        /// The argument's name in the spec's grammar (`offset`, `bit`, `port`, `cycle`...).
        field: &'static str,
        /// The number as parsed.
        value: u64,
        /// The allowed range.
        range: &'static str,
    },
}

fn parse_number(spec: &str, field: &'static str, text: &str) -> Result<u64, FaultSpecError> {
    let cleaned: String = text.trim().chars().filter(|&c| c != '_').collect();
    let parsed = match cleaned.strip_prefix("0x").or_else(|| cleaned.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => cleaned.parse(),
    };
    parsed.map_err(|_| FaultSpecError::BadNumber { spec: spec.to_string(), field, found: text.to_string() })
}

fn ranged(
    spec: &str,
    field: &'static str,
    value: u64,
    max: u64,
    range: &'static str,
) -> Result<u64, FaultSpecError> {
    if value > max {
        return Err(FaultSpecError::OutOfRange { spec: spec.to_string(), field, value, range });
    }
    Ok(value)
}

impl FromStr for Fault {
    type Err = FaultSpecError;

    fn from_str(spec: &str) -> Result<Fault, FaultSpecError> {
        let (what, when) =
            spec.rsplit_once('@').ok_or_else(|| FaultSpecError::MissingAt { spec: spec.to_string() })?;
        let mut parts = what.split(':');
        let kind = parts.next().unwrap_or_default().trim();
        let args: Vec<&str> = parts.collect();
        let wrong =
            |kind, expected| FaultSpecError::WrongArguments { spec: spec.to_string(), kind, expected };
        match kind {
            "flip" => {
                let [section, offset, bit] = args[..] else {
                    return Err(wrong("flip", "SECTION:OFFSET:BIT@CYCLE"));
                };
                let section = section.trim();
                if section.is_empty() {
                    return Err(wrong("flip", "a section name: flip:SECTION:OFFSET:BIT@CYCLE"));
                }
                let offset = parse_number(spec, "offset", offset)?;
                let bit = ranged(spec, "bit", parse_number(spec, "bit", bit)?, 7, "0-7")?;
                Ok(Fault::FlipBit {
                    section: section.to_string(),
                    offset: usize::try_from(offset).map_err(|_| FaultSpecError::OutOfRange {
                        spec: spec.to_string(),
                        field: "offset",
                        value: offset,
                        range: "an address-sized offset",
                    })?,
                    bit: bit as u8,
                    cpu_cycle: parse_number(spec, "cycle", when)?,
                })
            }
            "stall" => {
                let [cycles] = args[..] else {
                    return Err(wrong("stall", "N@CYCLE"));
                };
                let cycles = parse_number(spec, "cycles", cycles)?;
                let cycles = u32::try_from(cycles)
                    .ok()
                    .filter(|c| (1..=MAX_STALL_CYCLES).contains(c))
                    .ok_or_else(|| FaultSpecError::StallOutOfRange {
                        spec: spec.to_string(),
                        cycles,
                        max: MAX_STALL_CYCLES,
                    })?;
                Ok(Fault::Stall { cycles, cpu_cycle: parse_number(spec, "cycle", when)? })
            }
            "input" => {
                let [port, bit] = args[..] else {
                    return Err(wrong("input", "PORT:BIT@FRAME"));
                };
                let port = ranged(spec, "port", parse_number(spec, "port", port)?, 1, "0-1")?;
                let bit = ranged(spec, "bit", parse_number(spec, "bit", bit)?, 7, "0-7")?;
                Ok(Fault::CorruptInput {
                    port: port as u8,
                    bit: bit as u8,
                    frame: parse_number(spec, "frame", when)?,
                })
            }
            other => Err(FaultSpecError::UnknownKind { spec: spec.to_string(), kind: other.to_string() }),
        }
    }
}

/// A list of faults to inject into machine B during a lockstep run.
///
/// State faults are transient events: each fires once, at the end of the instruction during which B's
/// CPU reaches its cycle. Localization replays them exactly where they fired (they are part of the
/// history being explained); after a rollback they do not fire again, as a real transient would not.
///
/// ```
/// use anes_machine::{Fault, FaultPlan};
/// let plan = FaultPlan::parse(["flip:ram:0x0342:3@1234567", "stall:3@50000", "input:0:7@12"]).unwrap();
/// assert_eq!(plan.faults().len(), 3);
/// assert_eq!(plan.faults()[1], Fault::Stall { cycles: 3, cpu_cycle: 50_000 });
/// assert!(FaultPlan::parse(["flip:ram:0x0342:9@1"]).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    faults: Vec<Fault>,
}

impl FaultPlan {
    /// A plan that injects nothing (the default).
    pub fn new() -> FaultPlan {
        FaultPlan::default()
    }

    /// Parses spec strings (see the module docs).
    pub fn parse<I, S>(specs: I) -> Result<FaultPlan, FaultSpecError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let faults = specs.into_iter().map(|s| s.as_ref().parse()).collect::<Result<Vec<Fault>, _>>()?;
        Ok(FaultPlan { faults })
    }

    /// Adds a fault.
    pub fn push(&mut self, fault: Fault) -> &mut FaultPlan {
        self.faults.push(fault);
        self
    }

    /// Adds a fault (builder style).
    pub fn with(mut self, fault: Fault) -> FaultPlan {
        self.faults.push(fault);
        self
    }

    /// The faults, in the order given.
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// True when there is nothing to inject.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_kind() {
        assert_eq!(
            "flip:ram:0x0342:3@1234567".parse::<Fault>().unwrap(),
            Fault::FlipBit { section: "ram".into(), offset: 0x342, bit: 3, cpu_cycle: 1_234_567 }
        );
        assert_eq!("stall:3@1_000".parse::<Fault>().unwrap(), Fault::Stall { cycles: 3, cpu_cycle: 1000 });
        assert_eq!(
            "input:1:0@0x10".parse::<Fault>().unwrap(),
            Fault::CorruptInput { port: 1, bit: 0, frame: 16 }
        );
    }

    #[test]
    fn display_round_trips() {
        for spec in ["flip:cpu:0x0006:5@99", "stall:7@123", "input:0:3@4"] {
            let fault: Fault = spec.parse().unwrap();
            assert_eq!(fault.to_string().parse::<Fault>().unwrap(), fault);
        }
    }

    #[test]
    fn errors_are_typed() {
        use FaultSpecError as E;
        assert!(matches!("flip:ram:1:2".parse::<Fault>(), Err(E::MissingAt { .. })));
        assert!(matches!("zap:1@2".parse::<Fault>(), Err(E::UnknownKind { .. })));
        assert!(matches!("flip:ram:1@2".parse::<Fault>(), Err(E::WrongArguments { kind: "flip", .. })));
        assert!(matches!("flip:ram:zz:1@2".parse::<Fault>(), Err(E::BadNumber { field: "offset", .. })));
        assert!(matches!("flip:ram:1:8@2".parse::<Fault>(), Err(E::OutOfRange { field: "bit", .. })));
        assert!(matches!("input:2:0@1".parse::<Fault>(), Err(E::OutOfRange { field: "port", .. })));
        assert!(matches!("stall:x@1".parse::<Fault>(), Err(E::BadNumber { field: "cycles", .. })));
        assert!(matches!("stall:1@".parse::<Fault>(), Err(E::BadNumber { field: "cycle", .. })));
        let message = "flip:ram:1:8@2".parse::<Fault>().unwrap_err().to_string();
        assert!(message.contains("bit 8") && message.contains("0-7"), "{message}");
    }

    #[test]
    fn stalls_are_at_most_one_frame() {
        assert_eq!("stall:29781@5".parse::<Fault>(), Ok(Fault::Stall { cycles: 29_781, cpu_cycle: 5 }));
        assert_eq!("stall:1@5".parse::<Fault>(), Ok(Fault::Stall { cycles: 1, cpu_cycle: 5 }));
        for (spec, cycles) in
            [("stall:29782@100", 29_782), ("stall:4294967295@100", 4_294_967_295), ("stall:0@100", 0)]
        {
            let err = spec.parse::<Fault>().unwrap_err();
            assert_eq!(
                err,
                FaultSpecError::StallOutOfRange { spec: spec.to_string(), cycles, max: 29_781 },
                "{spec}"
            );
            assert!(err.to_string().contains("1 to 29781"), "{err}");
        }
        let err = "stall:99999999999@1".parse::<Fault>().unwrap_err();
        assert!(matches!(err, FaultSpecError::StallOutOfRange { cycles: 99_999_999_999, .. }), "{err}");
    }
}
