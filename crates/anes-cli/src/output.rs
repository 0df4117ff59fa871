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

/// Text formatted into a byte writer: `fmt::Write` over `io::Write`, keeping the writer's error,
/// which `fmt::Error` cannot carry.
pub struct FmtToIo<'a> {
    out: &'a mut dyn Write,
    error: Option<io::Error>,
}

impl<'a> FmtToIo<'a> {
    pub fn new(out: &'a mut dyn Write) -> FmtToIo<'a> {
        FmtToIo { out, error: None }
    }

    /// What a formatting run that returned `written` amounts to: the writer's error, if it failed.
    pub fn result(self, written: std::fmt::Result) -> io::Result<()> {
        match (written, self.error) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(error)) => Err(error),
            (Err(_), None) => Err(io::Error::other("formatting the text failed")),
        }
    }
}

impl std::fmt::Write for FmtToIo<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.out.write_all(text.as_bytes()).map_err(|error| {
            self.error = Some(error);
            std::fmt::Error
        })
    }
}
