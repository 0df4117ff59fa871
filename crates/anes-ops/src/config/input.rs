//! `[pipeline.input]` and `[pipeline.journal]`: where a pipeline's records come from and how its
//! write-ahead journal is kept.

use std::path::PathBuf;

use serde::Deserialize;

use crate::framed::FsyncPolicy;
use crate::journal::JournalSettings;

/// `[pipeline.journal]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JournalSection {
    /// A new segment starts at this size (default 8 MiB).
    pub segment_bytes: Option<u64>,
    /// Segments kept at least (default 16).
    pub segments_kept: Option<usize>,
    /// `always`, `batch` (default) or `never`.
    pub fsync: Option<FsyncPolicy>,
}

/// `[pipeline.input]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSection {
    /// `replay` (default) or `push`.
    pub source: Option<String>,
    /// The recorded stream (anes input stream or FCEUX .fm2); default: the bundled demo input.
    pub file: Option<PathBuf>,
    /// `loop` (default) or `once`.
    pub repeat: Option<String>,
    /// `realtime` (default), `max`, or a multiple of real time such as `2x`.
    pub speed: Option<String>,
}

/// Where a pipeline's records come from.
#[derive(Debug, Clone, PartialEq)]
pub enum InputSpec {
    /// A recorded stream.
    Replay {
        /// The file, or `None` for the bundled demo input.
        file: Option<PathBuf>,
        /// Start again at the end.
        looping: bool,
        /// How fast records are replayed: a multiple of real time, or as fast as the pipeline accepts them.
        pace: crate::pipeline::Pace,
    },
    /// Records pushed over HTTP.
    Push,
}

pub(super) fn parse_journal(journal: &JournalSection) -> Result<JournalSettings, (&'static str, String)> {
    let mut settings = JournalSettings::default();
    if let Some(n) = journal.segment_bytes {
        if !(4096..=1 << 30).contains(&n) {
            return Err(("journal.segment_bytes", format!("{n}: use 4096 to 1073741824")));
        }
        settings.segment_bytes = n;
    }
    if let Some(n) = journal.segments_kept {
        if n == 0 || n > 100_000 {
            return Err(("journal.segments_kept", format!("{n}: use 1 to 100000")));
        }
        settings.segments_kept = n;
    }
    if let Some(f) = journal.fsync {
        settings.fsync = f;
    }
    Ok(settings)
}

pub(super) fn parse_input(input: &InputSection, has_rom: bool) -> Result<InputSpec, (&'static str, String)> {
    let source = input.source.as_deref().unwrap_or("replay");
    match source {
        "push" => {
            for (field, set) in [
                ("input.file", input.file.is_some()),
                ("input.repeat", input.repeat.is_some()),
                ("input.speed", input.speed.is_some()),
            ] {
                if set {
                    return Err((field, "only a replayed input has this setting (source = \"push\")".into()));
                }
            }
            Ok(InputSpec::Push)
        }
        "replay" => {
            if has_rom && input.file.is_none() {
                return Err((
                    "input.file",
                    "missing: a pipeline with its own ROM replays its own input stream (or use source = \"push\")".into(),
                ));
            }
            let looping = match input.repeat.as_deref().unwrap_or("loop") {
                "loop" => true,
                "once" => false,
                other => return Err(("input.repeat", format!("{other:?}: use \"loop\" or \"once\""))),
            };
            let speed = input.speed.as_deref().unwrap_or("realtime");
            let pace = match speed {
                "realtime" => crate::pipeline::Pace::RealTime { speed: 1.0 },
                "max" => crate::pipeline::Pace::Max,
                other => match other.strip_suffix('x').and_then(|n| n.parse::<f64>().ok()) {
                    Some(f) if (0.01..=1000.0).contains(&f) => crate::pipeline::Pace::RealTime { speed: f },
                    _ => {
                        return Err((
                            "input.speed",
                            format!(
                                "{other:?}: use \"realtime\", \"max\" or a multiple such as \"2x\" (0.01x to 1000x)"
                            ),
                        ));
                    }
                },
            };
            Ok(InputSpec::Replay { file: input.file.clone(), looping, pace })
        }
        other => Err(("input.source", format!("{other:?}: use \"replay\" or \"push\""))),
    }
}
