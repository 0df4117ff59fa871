//! Golden frame logs: one line per frame, `frame cpu_cycle scanline dot state_hash` (the format of
//! `tests/golden/*.records`), the record at the end of input frame 0, 1, 2, ... A log can stand in for a
//! baseline build: the canary compares the candidate's records with it line by line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anes_core::state::{FrameRecord, StateHash};
use thiserror::Error;

/// The largest `EPOCH` file read beside a golden log: one decimal number.
pub const MAX_EPOCH_FILE_LEN: u64 = 64;

/// Why a golden log was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LogError {
    /// A line that is not a record.
    #[error("line {line}: {problem} (expected `frame cpu_cycle scanline dot state_hash`)")]
    BadLine {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// Records that do not follow one another.
    #[error("line {line}: frame {frame} follows frame {previous}; a log holds consecutive frames")]
    OutOfOrder {
        /// 1-based line number.
        line: usize,
        /// Frame counter on the line.
        frame: u64,
        /// Frame counter on the line before.
        previous: u64,
    },
    /// The `EPOCH` file beside the log is there but cannot be read (not a regular file, too large).
    #[error("{}: {problem}", path.display())]
    EpochUnreadable {
        /// The `EPOCH` file.
        path: PathBuf,
        /// Why it was refused.
        problem: String,
    },
    /// The `EPOCH` file beside the log holds something else than an epoch: damaged, so the verdict
    /// it decides (regression or expected change) cannot be made.
    #[error(
        "{}: holds {text:?}, not an emulation epoch (a whole number from 0 to {}); write the epoch the log was blessed under, or remove the file",
        path.display(),
        u32::MAX
    )]
    EpochDamaged {
        /// The `EPOCH` file.
        path: PathBuf,
        /// What it holds, trimmed.
        text: String,
    },
}

/// A parsed golden log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoldenLog {
    /// The record after input frame `i`, at index `i`.
    pub records: Vec<FrameRecord>,
    /// The emulation epoch the log was blessed under, when known (an `EPOCH` file beside it).
    pub epoch: Option<u32>,
}

impl GoldenLog {
    /// Parses a log's text.
    pub fn parse(text: &str) -> Result<GoldenLog, LogError> {
        let mut records: Vec<FrameRecord> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line_no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |problem: String| LogError::BadLine { line: line_no, problem };
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [frame, cpu_cycle, scanline, dot, hash] = fields[..] else {
                return Err(bad(format!("{} fields", fields.len())));
            };
            let number = |name: &str, text: &str| -> Result<u64, LogError> {
                text.parse().map_err(|_| bad(format!("{name} {text:?} is not a number")))
            };
            let record = FrameRecord {
                frame: number("frame", frame)?,
                cpu_cycle: number("cpu_cycle", cpu_cycle)?,
                ppu_scanline: u16::try_from(number("scanline", scanline)?)
                    .map_err(|_| bad(format!("scanline {scanline} is out of range")))?,
                ppu_dot: u16::try_from(number("dot", dot)?)
                    .map_err(|_| bad(format!("dot {dot} is out of range")))?,
                state_hash: parse_hash(hash)
                    .ok_or_else(|| bad(format!("state hash {hash:?} is not 64 hex digits")))?,
            };
            if let Some(previous) = records.last() {
                // No frame follows u64::MAX: a line after it is out of order, never a wrapped count.
                if previous.frame.checked_add(1) != Some(record.frame) {
                    return Err(LogError::OutOfOrder {
                        line: line_no,
                        frame: record.frame,
                        previous: previous.frame,
                    });
                }
            }
            records.push(record);
        }
        Ok(GoldenLog { records, epoch: None })
    }

    /// Reads the epoch from an `EPOCH` file beside `log` (the golden records' folder keeps one), if
    /// there. An `EPOCH` that is there but not a regular file, larger than 64 bytes
    /// (`MAX_EPOCH_FILE_LEN`) or not one number is refused: read as unknown, it would turn a
    /// regression into "baseline epoch unknown" without a word.
    pub fn with_epoch_beside(mut self, log: &Path) -> Result<GoldenLog, LogError> {
        let Some(path) = log.parent().map(|dir| dir.join("EPOCH")) else { return Ok(self) };
        self.epoch = match anes_fs::read_text_capped(&path, MAX_EPOCH_FILE_LEN, "epoch") {
            Ok(text) => match text.trim().parse() {
                Ok(epoch) => Some(epoch),
                Err(_) => return Err(LogError::EpochDamaged { path, text: text.trim().to_owned() }),
            },
            Err(e) if e.io_kind() == Some(std::io::ErrorKind::NotFound) => None,
            Err(e) => return Err(LogError::EpochUnreadable { problem: e.problem(), path }),
        };
        Ok(self)
    }

    /// The log's text: one line per record.
    pub fn render(records: &[FrameRecord]) -> String {
        let mut out = String::with_capacity(records.len() * 100);
        for r in records {
            let _ = writeln!(
                out,
                "{} {} {} {} {}",
                r.frame, r.cpu_cycle, r.ppu_scanline, r.ppu_dot, r.state_hash
            );
        }
        out
    }
}

fn parse_hash(text: &str) -> Option<StateHash> {
    if text.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(StateHash(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(frame: u64) -> FrameRecord {
        FrameRecord {
            frame,
            cpu_cycle: frame * 29_781,
            ppu_scanline: 241,
            ppu_dot: 2,
            state_hash: StateHash([frame as u8; 32]),
        }
    }

    #[test]
    fn an_epoch_file_beside_the_log_is_read_capped() {
        let dir = std::env::temp_dir().join(format!("anes-golden-epoch-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("demo.log");
        let epoch = dir.join("EPOCH");
        assert_eq!(GoldenLog::default().with_epoch_beside(&log).unwrap().epoch, None, "no EPOCH");
        std::fs::write(&epoch, "5\n").unwrap();
        assert_eq!(GoldenLog::default().with_epoch_beside(&log).unwrap().epoch, Some(5));
        std::fs::remove_file(&epoch).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, &epoch, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        let e = GoldenLog::default().with_epoch_beside(&log).unwrap_err();
        assert!(
            matches!(&e, LogError::EpochUnreadable { path, problem } if *path == epoch && problem.contains("is a FIFO (named pipe)")),
            "{e}"
        );
        std::fs::remove_file(&epoch).unwrap();
        std::fs::write(&epoch, " ".repeat(MAX_EPOCH_FILE_LEN as usize + 1)).unwrap();
        let e = GoldenLog::default().with_epoch_beside(&log).unwrap_err();
        assert!(e.to_string().contains("larger than 64 bytes"), "{e}");
        // Not a number, one too large for an epoch, or nothing: damaged, never "unknown".
        for text in ["zz\n", "4294967296\n", "99999999999999999999999\n", "\n", "5 6\n", "-1"] {
            std::fs::write(&epoch, text).unwrap();
            let e = GoldenLog::default().with_epoch_beside(&log).unwrap_err();
            assert_eq!(e, LogError::EpochDamaged { path: epoch.clone(), text: text.trim().to_owned() });
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!(
                    "{}: holds {:?}, not an emulation epoch",
                    epoch.display(),
                    text.trim()
                )),
                "{shown}"
            );
        }
        std::fs::write(&epoch, format!("{}\n", u32::MAX)).unwrap();
        assert_eq!(GoldenLog::default().with_epoch_beside(&log).unwrap().epoch, Some(u32::MAX));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn rendered_logs_parse_back() {
        let records: Vec<_> = (1..=3).map(record).collect();
        let log = GoldenLog::parse(&GoldenLog::render(&records)).unwrap();
        assert_eq!(log.records, records);
    }

    #[test]
    fn damage_is_named_by_line() {
        let text = GoldenLog::render(&[record(1), record(2)]);
        let cut = text.replace(" 241 ", " x ");
        assert!(GoldenLog::parse(&cut).unwrap_err().to_string().starts_with("line 1: scanline"));
        let short = format!("{}1 2 3\n", text);
        assert!(matches!(GoldenLog::parse(&short), Err(LogError::BadLine { line: 3, .. })));
        let skipped = GoldenLog::render(&[record(1), record(3)]);
        assert!(matches!(
            GoldenLog::parse(&skipped),
            Err(LogError::OutOfOrder { line: 2, frame: 3, previous: 1 })
        ));
        // A frame counter at u64::MAX followed by any line: refused by the values, never overflowed.
        let last = FrameRecord { frame: u64::MAX, ..record(1) };
        let wrapped = GoldenLog::render(&[last, FrameRecord { frame: 0, ..record(1) }]);
        let e = GoldenLog::parse(&wrapped).unwrap_err();
        assert_eq!(e, LogError::OutOfOrder { line: 2, frame: 0, previous: u64::MAX });
        assert!(e.to_string().contains("frame 0 follows frame 18446744073709551615"), "{e}");
        assert_eq!(GoldenLog::parse(&GoldenLog::render(&[last])).unwrap().records, [last]);
        let hash = text.replacen("0101", "zz01", 1);
        assert!(GoldenLog::parse(&hash).unwrap_err().to_string().contains("64 hex digits"));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let _ = GoldenLog::parse(&text);
        }
    }
}
