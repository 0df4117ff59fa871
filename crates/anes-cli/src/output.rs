//! Writing to stdout without panicking on a closed pipe.

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Buffered, locked stdout. Callers flush before returning so write errors surface as errors.
pub fn stdout() -> BufWriter<StdoutLock<'static>> {
    BufWriter::new(io::stdout().lock())
}

/// True when `err` comes from writing to a pipe whose reader has gone.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause.downcast_ref::<io::Error>().is_some_and(|io_err| io_err.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Writes `value` as one line of JSON.
pub fn write_json(out: &mut impl Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// A bar on stderr, only for a person watching a terminal.
pub fn progress_bar(len: u64, json: bool) -> ProgressBar {
    let target = if json || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let bar = ProgressBar::with_draw_target(Some(len), target);
    if let Ok(style) = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {wide_msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}
