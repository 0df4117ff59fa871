//! The evidence of a divergence, kept in memory and written as one bundle directory:
//!
//! | file | contents |
//! |---|---|
//! | `report.json` | the [`Report`] (serde) |
//! | `report.html` | everything side by side; static, self-contained, no scripts |
//! | `checkpoint_a.snap`, `checkpoint_b.snap` | both snapshots at the last verified checkpoint |
//! | `divergence_a.snap`, `divergence_b.snap` | both snapshots after the first divergent instruction |
//! | `inputs.input` | the input stream from frame 0 through the divergent frame (indexed by frame number, so `anes run ROM --load-state checkpoint_a.snap --input inputs.input` replays from the checkpoint), as [`crate::EvidenceInput::encode_inputs`] writes it |
//! | `build.json` | the build identity |
//! | `a.png`, `b.png`, `diff.png` | both pictures at the end of the divergent frame and their difference |

use std::path::PathBuf;

use serde::Serialize;
use thiserror::Error;

use crate::config::Granularity;
use crate::diff::{FieldDiff, LastWrite};
use crate::localize::Localization;
use crate::localize_frame::FrameLocalization;
use crate::outcome::{Divergence, DivergenceKind};
use crate::record_json::RecordJson;
use crate::schedule::FiredFault;

pub use anes_machine::{BUILD, BuildIdentity};

/// Everything kept about one divergence. Rollback never discards it.
#[derive(Debug, Clone)]
pub struct Evidence {
    /// What the comparator saw.
    pub divergence: Divergence,
    /// Sections whose digests differed at the sync point where the comparator saw the divergence, in
    /// either threading mode; `None` only when that point could not be reached again (a threaded run
    /// whose checkpoint no longer restores).
    pub differing_sections: Option<Vec<&'static str>>,
    /// The first divergent instruction, when localization ran and succeeded.
    pub localization: Option<Localization>,
    /// The first divergent frame, when localization ran and succeeded on machines that do not step
    /// instructions, or the differences of machines that already differed when paired (then
    /// [`Evidence::localization`] is `None`).
    pub frame_localization: Option<FrameLocalization>,
    /// Why localization did not succeed, when it ran (or why the sync point could not be reached
    /// again).
    pub localization_error: Option<String>,
    /// Input-stream index of the last verified checkpoint (the replay's start).
    pub checkpoint_frame: Option<u64>,
    /// Machine A's snapshot at the checkpoint.
    pub checkpoint_a: Vec<u8>,
    /// Machine B's snapshot at the checkpoint.
    pub checkpoint_b: Vec<u8>,
    /// Machine A's snapshot after the first divergent instruction (without a localization: at the
    /// sync point where the comparator saw the divergence).
    pub divergence_a: Vec<u8>,
    /// Machine B's snapshot there.
    pub divergence_b: Vec<u8>,
    /// Inputs from frame 0 through the divergent frame, indexed by frame number, encoded by
    /// [`crate::EvidenceInput::encode_inputs`] (for the anes core: an input stream file).
    pub inputs_file: Vec<u8>,
    /// Size of the pictures, if the machines have pictures.
    pub picture_size: Option<(u32, u32)>,
    /// Machine A's picture at the end of the divergent frame (RGB8; without a localization: its
    /// picture at the sync point where the comparator saw the divergence).
    pub picture_a: Vec<u8>,
    /// Machine B's picture there.
    pub picture_b: Vec<u8>,
    /// Faults that fired in machine B.
    pub faults: Vec<FiredFault>,
    /// Granularity of the run.
    pub granularity: Granularity,
}

/// Where the comparator saw the divergence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DetectedJson {
    /// Input-stream index of the frame.
    pub frame: u64,
    /// At the end of the frame (or inside it, for finer granularities).
    pub at_frame_end: bool,
    /// Ordinal of the sync point.
    pub sync_point: u64,
    /// Granularity of the run.
    pub granularity: &'static str,
    /// Machine A's record.
    pub a: RecordJson,
    /// Machine B's record.
    pub b: RecordJson,
    /// Sections whose digests differed there, in either threading mode (null only when a threaded
    /// run could not return to that point: its checkpoint no longer restores).
    pub sections: Option<Vec<&'static str>>,
}

/// The `report.json` of a bundle, also printed by `anes lockstep --json`. When localization failed,
/// the position fields describe where the comparator saw the divergence and `pc`/`instruction` are null.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// One-line summary.
    pub message: String,
    /// `state` or `cycle_misalignment`.
    pub kind: DivergenceKind,
    /// Input-stream index of the frame of the first divergent instruction.
    pub frame: u64,
    /// CPU cycle at the start of the first divergent instruction.
    pub cpu_cycle: u64,
    /// PPU scanline there.
    pub scanline: u32,
    /// PPU dot there.
    pub dot: u32,
    /// Program counter of the instruction.
    pub pc: Option<u64>,
    /// The first divergent instruction's opcode byte.
    pub opcode: Option<u8>,
    /// The first divergent instruction as the machine disassembles it (`LDA $0342 = 17`).
    pub instruction: Option<String>,
    /// Every differing field, grouped by section, with the last write to it in each machine.
    pub fields: Vec<FieldDiff>,
    /// Differing fields not listed.
    pub fields_omitted: usize,
    /// Where the comparator saw it.
    pub detected: DetectedJson,
    /// Input-stream index of the checkpoint the localization replayed from.
    pub checkpoint_frame: Option<u64>,
    /// Instructions replayed from the checkpoint to the divergent one.
    pub instructions_replayed: Option<u64>,
    /// Why the instruction could not be localized, if it could not.
    pub localization_error: Option<String>,
    /// Faults injected into machine B.
    pub faults: Vec<FiredFault>,
    /// What built the harness.
    pub build: BuildIdentity,
    /// The first divergent frame, for machines that do not step instructions, or the differences of
    /// machines that already differed when paired (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_localization: Option<FrameLocalization>,
}

/// Why a bundle could not be written. The message names the file; the cause is the error's
/// [`source`](std::error::Error::source), so a chain printed whole (`{:#}` with anyhow) says it once:
/// `DIR/report.json: cannot write the evidence bundle: Permission denied (os error 13)`.
#[derive(Debug, Error)]
pub enum BundleError {
    /// A file or the directory could not be written.
    #[error("{}: cannot write the evidence bundle", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A file of the bundle could not be written ([`anes_fs::write_output`]: atomically, never over
    /// something that is not a regular file).
    #[error("cannot write the evidence bundle: {0}")]
    Write(#[from] anes_fs::WriteError),
    /// A picture could not be encoded.
    #[error("{}: cannot encode the picture", path.display())]
    Png {
        /// The bundle file that could not be written.
        path: PathBuf,
        /// What the encoder said.
        source: png::EncodingError,
    },
}

/// The names of the files a bundle may hold (see the module docs): what
/// [`Evidence::write_bundle`] writes into its directory, and nothing else.
pub const BUNDLE_FILES: [&str; 11] = [
    "report.json",
    "report.html",
    "build.json",
    "checkpoint_a.snap",
    "checkpoint_b.snap",
    "divergence_a.snap",
    "divergence_b.snap",
    "inputs.input",
    "a.png",
    "b.png",
    "diff.png",
];

impl Evidence {
    /// The report of this divergence.
    pub fn report(&self) -> Report {
        let d = &self.divergence;
        let detected = DetectedJson {
            frame: d.frame,
            at_frame_end: d.at_frame_end,
            sync_point: d.sync_point,
            granularity: self.granularity.name(),
            a: (&d.a).into(),
            b: (&d.b).into(),
            sections: self.differing_sections.clone(),
        };
        let faults = self.faults.clone();
        let build = BUILD;
        match &self.localization {
            Some(l) => Report {
                message: self.message(),
                kind: l.kind,
                frame: l.frame,
                cpu_cycle: l.cpu_cycle,
                scanline: l.scanline,
                dot: l.dot,
                pc: Some(l.pc),
                opcode: Some(l.opcode),
                instruction: Some(l.instruction.clone()),
                fields: l.fields.clone(),
                fields_omitted: l.fields_omitted,
                detected,
                checkpoint_frame: Some(l.checkpoint_frame),
                instructions_replayed: Some(l.instructions_replayed),
                localization_error: None,
                faults,
                build,
                frame_localization: None,
            },
            None => Report {
                message: self.message(),
                kind: self.frame_localization.as_ref().map_or(d.kind, |l| l.kind),
                frame: self.frame_localization.as_ref().map_or(d.frame, |l| l.frame),
                cpu_cycle: d.a.cpu_cycle,
                scanline: u32::from(d.a.ppu_scanline),
                dot: u32::from(d.a.ppu_dot),
                pc: None,
                opcode: None,
                instruction: None,
                fields: self.frame_localization.as_ref().map(|l| l.fields.clone()).unwrap_or_default(),
                fields_omitted: self.frame_localization.as_ref().map_or(0, |l| l.fields_omitted),
                detected,
                checkpoint_frame: self.checkpoint_frame,
                instructions_replayed: None,
                localization_error: self.localization_error.clone(),
                faults,
                build,
                frame_localization: self.frame_localization.clone(),
            },
        }
    }

    /// One-line summary: what the comparator saw and, when localized, the first divergent instruction.
    pub fn message(&self) -> String {
        match &self.localization {
            Some(l) => format!(
                "{}; first divergent instruction: frame {}, CPU cycle {}, scanline {} dot {}, ${:04X}: {}",
                self.divergence, l.frame, l.cpu_cycle, l.scanline, l.dot, l.pc, l.instruction
            ),
            None => match &self.frame_localization {
                Some(l) if l.at_pairing => format!(
                    "{}; the machines already differed when paired, before any frame ran ({} differing fields)",
                    self.divergence,
                    l.fields.len() + l.fields_omitted
                ),
                Some(l) => format!(
                    "{}; first divergent frame: {} ({} frames replayed from the checkpoint; the machines do not step instructions)",
                    self.divergence, l.frame, l.frames_replayed
                ),
                None => self.divergence.to_string(),
            },
        }
    }
}

/// Pixels that differ in red; the rest of A's picture dimmed to grey.
pub fn diff_image(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(a.len());
    for (pa, pb) in a.chunks_exact(3).zip(b.chunks_exact(3)) {
        if pa == pb {
            let grey = ((u16::from(pa[0]) + u16::from(pa[1]) + u16::from(pa[2])) / 9) as u8;
            out.extend_from_slice(&[grey, grey, grey]);
        } else {
            out.extend_from_slice(&[255, 0, 0]);
        }
    }
    out
}

/// Encodes RGB8 pixels as a PNG file.
pub fn encode_png(width: u32, height: u32, rgb: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(rgb)?;
    writer.finish()?;
    Ok(out)
}

/// The last write of a field as report text.
pub(crate) fn describe_write(write: Option<&LastWrite>) -> String {
    match write {
        None => "unchanged since the checkpoint".to_string(),
        Some(w) => {
            let by = match w.cause {
                crate::diff::WriteCause::Instruction => "",
                crate::diff::WriteCause::Fault => " (injected fault)",
            };
            format!("${:04X} @ cycle {} (frame {}){by}", w.pc, w.cpu_cycle, w.frame)
        }
    }
}
