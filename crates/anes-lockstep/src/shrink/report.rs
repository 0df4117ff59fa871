//! The shrink's report: [`ShrinkReport`] (`report.json`) and its page (`report.html`). Both hold
//! only what the same shrink gives again byte for byte; what it cost ([`super::ShrinkStats`]) is
//! not in them.

use core::fmt::Write;

use serde::Serialize;

use super::input::{ShrinkInput, count_presses};
use super::{Shrunk, StartSearch};
use crate::evidence::{Report, describe_write};
use crate::markup::escape;
use crate::outcome::DivergenceKind;

/// Frames and presses of a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StreamJson {
    /// Frames in the stream.
    pub frames: u64,
    /// Frames holding a press (some button held).
    pub presses: u64,
}

/// The divergence every trial had to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TargetJson {
    /// `state` or `cycle_misalignment`.
    pub kind: DivergenceKind,
    /// Input-stream index of the frame at whose end the comparator saw it.
    pub frame: u64,
}

/// One press left in the repro.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PressJson {
    /// Input-stream index of the frame.
    pub frame: u64,
    /// Controller port (0 is pad 1).
    pub port: u8,
    /// The buttons held on that port (`Up`, `A`).
    pub buttons: Vec<String>,
}

/// One console command left in the repro.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandJson {
    /// Input-stream index of the frame it precedes.
    pub frame: u64,
    /// `soft_reset` or `power_cycle`.
    pub command: &'static str,
}

/// Where the repro starts and how that was chosen (see [`super::StartSearch`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StartJson {
    /// Input-stream index of the repro's first frame: 0 is power-on; otherwise both machines load
    /// `repro.snap` (machine A's snapshot there) and read the stream from this frame on. When the
    /// start moved, the stream also reproduces from `given_frame` (the presses before `frame` are
    /// kept in it, and listed in `presses`).
    pub frame: u64,
    /// The frame the machines were given at (where the start was before the search).
    pub given_frame: u64,
    /// `moved` (to the latest checkpoint that reproduces), `kept` (none did) or `skipped`.
    pub search: &'static str,
    /// Checkpoints tried, the latest first.
    pub tried: u64,
    /// Why the start did not move, when it did not.
    pub note: Option<String>,
    /// Faults injected into machine B from `frame` on: `faults` less those that fired before a
    /// moved start (give these with `--inject` to a replay from `repro.snap`).
    pub faults: Vec<String>,
}

/// `report.json` of a shrink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShrinkReport {
    /// The stream given.
    pub original: StreamJson,
    /// The repro (`repro.input`).
    pub shrunk: StreamJson,
    /// What had to reproduce: the same kind of divergence at the end of the same frame.
    pub target: TargetJson,
    /// Where the repro starts.
    pub start: StartJson,
    /// The presses left, by frame and port.
    pub presses: Vec<PressJson>,
    /// The console commands left.
    pub commands: Vec<CommandJson>,
    /// True when removing any one press, button or command of the repro stops it reproducing.
    pub one_minimal: bool,
    /// The budget that stopped the search first (`time`, `trials`), if one did.
    pub stopped_by: Option<&'static str>,
    /// Faults injected into machine B (from `start.given_frame`).
    pub faults: Vec<String>,
    /// The divergence as the lockstep runner reports it on the repro from its start.
    pub divergence: Report,
}

impl<I: ShrinkInput> Shrunk<I> {
    /// The report (see [`ShrinkReport`]).
    pub fn report(&self) -> ShrinkReport {
        let mut presses = Vec::new();
        let mut commands = Vec::new();
        for (frame, input) in (0u64..).zip(&self.repro) {
            let mut by_port: Vec<PressJson> = Vec::new();
            for (port, bit) in input.held_buttons() {
                let name = I::button_name(port, bit);
                match by_port.last_mut() {
                    Some(press) if press.port == port => press.buttons.push(name),
                    _ => by_port.push(PressJson { frame, port, buttons: vec![name] }),
                }
            }
            presses.extend(by_port);
            if let Some(command) = input.command_name() {
                commands.push(CommandJson { frame, command });
            }
        }
        let d = &self.evidence.divergence;
        let (search, tried, note) = match &self.start_search {
            StartSearch::Moved { tried, .. } => ("moved", *tried, None),
            StartSearch::Kept { tried, why } => ("kept", *tried, why.clone()),
            StartSearch::Skipped { why } => ("skipped", 0, Some((*why).to_string())),
        };
        ShrinkReport {
            original: StreamJson { frames: self.original_frames, presses: self.original_presses },
            shrunk: StreamJson { frames: self.repro.len() as u64, presses: count_presses(&self.repro) },
            target: TargetJson { kind: d.kind, frame: d.frame },
            start: StartJson {
                frame: self.start_frame,
                given_frame: self.given_start_frame,
                search,
                tried,
                note,
                faults: self.start_faults.faults().iter().map(ToString::to_string).collect(),
            },
            presses,
            commands,
            one_minimal: self.one_minimal(),
            stopped_by: self.stopped_by.map(|b| b.name()),
            faults: self.faults.faults().iter().map(ToString::to_string).collect(),
            divergence: self.evidence.report(),
        }
    }
}

impl ShrinkReport {
    /// `report.html`: static and self-contained, no scripts.
    pub fn html(&self) -> String {
        let mut page = String::new();
        let _ = write!(
            page,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>anes shrink: {}</title>\n\
             <style>body{{font:14px system-ui,sans-serif;margin:2em;max-width:70em}}\
             table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:left}}\
             code{{font:13px ui-monospace,monospace}}</style></head><body>\n<h1>Minimal reproduction</h1>\n",
            escape(&self.divergence.message)
        );
        let minimal = match self.stopped_by {
            None => "1-minimal: removing any one press, button or command stops it reproducing".to_string(),
            Some(budget) => format!("not proven minimal: the {budget} budget stopped the search first"),
        };
        let _ = write!(
            page,
            "<table><tr><th></th><th>frames</th><th>presses</th></tr>\
             <tr><td>given</td><td>{}</td><td>{}</td></tr><tr><td>repro</td><td>{}</td><td>{}</td></tr></table>\n\
             <p><b>{}</b>. Reproduces: a <code>{}</code> divergence at the end of frame {}, machine B with \
             faults [{}].</p>\n",
            self.original.frames,
            self.original.presses,
            self.shrunk.frames,
            self.shrunk.presses,
            escape(&minimal),
            self.target.kind.name(),
            self.target.frame,
            escape(&self.faults.join(", ")),
        );
        let start = &self.start;
        let _ = match start.search {
            "moved" => writeln!(
                page,
                "<p>Starts at frame {} from <code>repro.snap</code> (machine A's snapshot at the latest checkpoint \
                 from which it reproduces, {} tried), or at frame {} with the presses before it.</p>",
                start.frame, start.tried, start.given_frame
            ),
            _ if start.frame > 0 => writeln!(
                page,
                "<p>Starts at frame {} from <code>repro.snap</code>, where the machines were given.</p>",
                start.frame
            ),
            _ => writeln!(page, "<p>Starts at power-on.</p>"),
        };
        page.push_str("<h2>Presses left</h2>\n");
        if self.presses.is_empty() && self.commands.is_empty() {
            page.push_str("<p>None: the divergence needs no input.</p>\n");
        } else {
            page.push_str("<table><tr><th>frame</th><th>port</th><th>buttons</th></tr>\n");
            for press in &self.presses {
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                    press.frame,
                    press.port + 1,
                    escape(&press.buttons.join(" + "))
                );
            }
            for command in &self.commands {
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td>console</td><td>{}</td></tr>",
                    command.frame, command.command
                );
            }
            page.push_str("</table>\n");
        }
        let d = &self.divergence;
        let _ = writeln!(page, "<h2>Divergence on the repro</h2>\n<p>{}</p>", escape(&d.message));
        if !d.fields.is_empty() {
            page.push_str("<table><tr><th>field</th><th>A</th><th>B</th><th>last write A</th><th>last write B</th></tr>\n");
            for field in &d.fields {
                let _ = writeln!(
                    page,
                    "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(&field.name),
                    escape(&field.a),
                    escape(&field.b),
                    escape(&describe_write(field.last_write_a.as_ref())),
                    escape(&describe_write(field.last_write_b.as_ref())),
                );
            }
            page.push_str("</table>\n");
        }
        page.push_str(
            "<p>Replay: <code>anes lockstep ROM --input repro.input</code> with the faults above (from power-on), or \
             <code>anes shrink ROM --start repro.snap --input repro.input</code> when it starts from a snapshot; \
             <code>repro.fm2</code> is the same stream for FCEUX (from power-on only). Trials, frames emulated and time are printed \
             by <code>anes shrink</code> (they vary with <code>--jobs</code> and the machine), not kept here.</p>\n\
             </body></html>\n",
        );
        page
    }
}
