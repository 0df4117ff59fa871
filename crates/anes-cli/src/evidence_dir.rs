//! Where `anes lockstep` and `anes canary` put the evidence bundle of a divergence, without ever writing over
//! earlier evidence unasked: by default a new folder `anes-evidence/<UTC time>-<ROM name>/` (with a
//! `-2`, `-3`, ... suffix if that exists); with `--report DIR`, DIR if it is missing or empty, or
//! with `--force` whatever it holds (the bundle's own files are replaced, nothing else is touched).

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anes_fs::FileKind;
use anes_lockstep::BUNDLE_FILES;
use anyhow::{Context, bail};

/// The folder default bundles go in, relative to the current directory.
pub const DEFAULT_PARENT: &str = "anes-evidence";
/// Folders tried for one run before giving up (the same second and ROM, `-2` up to this).
const MAX_SUFFIX: u32 = 1000;

/// Where the bundle goes, decided before the run so a bad `--report` fails before any emulation.
#[derive(Debug)]
pub enum EvidenceDir {
    /// A new folder under [`DEFAULT_PARENT`] named after the ROM, created when needed.
    New {
        /// The ROM's name in the folder name.
        rom_stem: String,
    },
    /// `--report DIR`.
    Given {
        /// The folder.
        dir: PathBuf,
        /// `--force`: replace the bundle files of a folder that is not empty.
        force: bool,
        /// Files the command writes into the bundle besides [`BUNDLE_FILES`] (`canary.json`):
        /// checked and replaced as they are.
        extra: &'static [&'static str],
    },
}

impl EvidenceDir {
    /// Checks `--report DIR` now: it must be a directory (or not exist yet) and, unless `force`, empty.
    pub fn given(dir: PathBuf, force: bool) -> anyhow::Result<EvidenceDir> {
        EvidenceDir::given_with(dir, force, &[])
    }

    /// [`EvidenceDir::given`] of a bundle that also holds the files `extra`.
    pub fn given_with(
        dir: PathBuf,
        force: bool,
        extra: &'static [&'static str],
    ) -> anyhow::Result<EvidenceDir> {
        check_given(&dir, force, extra)?;
        Ok(EvidenceDir::Given { dir, force, extra })
    }

    /// The default: a new folder per run, named by the time and the ROM file's name (`rom` `None`:
    /// the bundled demo).
    pub fn new_for(rom: Option<&Path>) -> EvidenceDir {
        let stem = rom.and_then(Path::file_stem).map_or("demo".into(), |s| s.to_string_lossy());
        let rom_stem: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
            .collect();
        EvidenceDir::New { rom_stem: if rom_stem.is_empty() { "rom".into() } else { rom_stem } }
    }

    /// Creates (or, for `--report`, checks again, what is at the bundle's names too) the folder for
    /// this run's bundle and returns it.
    pub fn prepare(&self) -> anyhow::Result<PathBuf> {
        match self {
            EvidenceDir::New { rom_stem } => {
                let name = format!("{}-{rom_stem}", utc_timestamp(seconds_since_epoch()));
                new_folder(Path::new(DEFAULT_PARENT), &name)
            }
            EvidenceDir::Given { dir, force, extra } => {
                check_given(dir, *force, extra)?;
                if *force {
                    for file in bundle_names(extra) {
                        let path = dir.join(file);
                        match std::fs::remove_file(&path) {
                            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                                return Err(e).with_context(|| path.display().to_string());
                            }
                            _ => {}
                        }
                    }
                }
                Ok(dir.clone())
            }
        }
    }
}

/// The bundle's file names: the lockstep's and `extra`.
fn bundle_names(extra: &[&'static str]) -> impl Iterator<Item = &'static str> {
    BUNDLE_FILES.into_iter().chain(extra.iter().copied())
}

/// `--report DIR` must not be a file, and must be empty unless `force`. A missing DIR is fine.
fn check_given(dir: &Path, force: bool, extra: &[&'static str]) -> anyhow::Result<()> {
    let name = dir.display();
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| name.to_string()),
        Ok(meta) if !meta.is_dir() => {
            bail!("{name}: exists and is not a directory (--report needs a folder)")
        }
        Ok(_) => {}
    }
    let mut entries = std::fs::read_dir(dir).with_context(|| name.to_string())?;
    if !force && entries.next().is_some() {
        bail!(
            "{name}: is not empty (it may hold earlier evidence); name a new or empty folder, or pass --force to replace the bundle files in it"
        );
    }
    if force {
        check_bundle_names(dir, extra)?;
    }
    Ok(())
}

/// `--force` removes what is at the bundle's file names: only a regular file or a symbolic link (the
/// link goes, never its target). A FIFO, a socket, a device or a folder there is not an earlier
/// bundle's file and is refused, before the run, instead of unlinked.
fn check_bundle_names(dir: &Path, extra: &[&'static str]) -> anyhow::Result<()> {
    for file in bundle_names(extra) {
        let path = dir.join(file);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) => match FileKind::of(meta.file_type()) {
                FileKind::Regular | FileKind::Symlink => {}
                kind => bail!(
                    "{}: exists and is {kind}, not a regular file; --force replaces only bundle files, so it is left alone (name another --report folder)",
                    path.display()
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| path.display().to_string()),
        }
    }
    Ok(())
}

/// Creates `parent/name`, or `parent/name-2`, `-3`, ... if it exists; never reuses a folder.
fn new_folder(parent: &Path, name: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(parent).with_context(|| parent.display().to_string())?;
    for n in 1..=MAX_SUFFIX {
        let dir = if n == 1 { parent.join(name) } else { parent.join(format!("{name}-{n}")) };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| dir.display().to_string()),
        }
    }
    bail!("{}: {name} and {MAX_SUFFIX} numbered variants already exist", parent.display())
}

fn seconds_since_epoch() -> u64 {
    // A clock before 1970 is a broken clock; the folder is still new, named 1970.
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `YYYYMMDDTHHMMSSZ` (ISO 8601 basic format, UTC) for `seconds` since 1970-01-01T00:00:00Z.
fn utc_timestamp(seconds: u64) -> String {
    let (year, month, day) = civil_date(seconds / 86_400);
    let second_of_day = seconds % 86_400;
    let (hour, minute, second) = (second_of_day / 3600, second_of_day / 60 % 60, second_of_day % 60);
    format!("{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}Z")
}

fn is_leap_year(year: u64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// Year, month (1-12) and day (1-31) of the day `days` after 1970-01-01, Gregorian calendar.
fn civil_date(mut days: u64) -> (u64, u64, u64) {
    let mut year = 1970;
    loop {
        let length = if is_leap_year(year) { 366 } else { 365 };
        if days < length {
            break;
        }
        days -= length;
        year += 1;
    }
    const MONTH_DAYS: [u64; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 0;
    loop {
        let length = MONTH_DAYS[month] + u64::from(month == 1 && is_leap_year(year));
        if days < length {
            break;
        }
        days -= length;
        month += 1;
    }
    (year, month as u64 + 1, days + 1)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;

    #[test]
    fn timestamps_match_the_date_utility() {
        // Expected values from `date -u -d @N +%Y%m%dT%H%M%SZ` (GNU coreutils).
        for (seconds, expected) in [
            (0, "19700101T000000Z"),
            (951_782_400, "20000229T000000Z"),
            (951_868_799, "20000229T235959Z"),
            (1_709_251_199, "20240229T235959Z"),
            (4_107_542_399, "21000228T235959Z"),
            (1_764_510_792, "20251130T135312Z"),
        ] {
            assert_eq!(utc_timestamp(seconds), expected, "{seconds}");
        }
    }

    #[test]
    fn rom_names_become_safe_folder_names() {
        let stem = |rom: Option<&str>| match EvidenceDir::new_for(rom.map(Path::new)) {
            EvidenceDir::New { rom_stem } => rom_stem,
            EvidenceDir::Given { .. } => unreachable!(),
        };
        assert_eq!(stem(None), "demo");
        assert_eq!(stem(Some("/roms/Super Mario Bros. (W).nes")), "Super_Mario_Bros.__W_");
        assert_eq!(stem(Some("roms/nestest.nes")), "nestest");
    }

    /// `--force` over a folder holding a socket or a FIFO at a bundle file's name: refused by
    /// name and kind, and nothing in the folder is removed (not even the regular bundle files).
    #[test]
    fn force_refuses_a_socket_or_a_fifo_at_a_bundle_name_and_removes_nothing() {
        let dir = std::env::temp_dir().join(format!("anes-evidence-force-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let report = dir.join(BUNDLE_FILES[0]);
        std::fs::write(&report, b"earlier").unwrap();
        let socket = dir.join(BUNDLE_FILES[1]);
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let err = EvidenceDir::given(dir.clone(), true).unwrap_err().to_string();
        assert!(err.contains(&format!("{}: exists and is a socket", socket.display())), "{err}");
        // Checked again when the bundle is about to be written (the folder may change meanwhile).
        let given = EvidenceDir::Given { dir: dir.clone(), force: true, extra: &[] };
        let err = given.prepare().unwrap_err().to_string();
        assert!(err.contains("is a socket"), "{err}");
        assert!(std::fs::symlink_metadata(&socket).is_ok(), "the socket is left alone");
        assert_eq!(std::fs::read(&report).unwrap(), b"earlier");
        drop(listener);
        std::fs::remove_file(&socket).unwrap();
        let fifo = dir.join(BUNDLE_FILES[2]);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success(), "mkfifo {}", fifo.display());
        let err = given.prepare().unwrap_err().to_string();
        assert!(err.contains(&format!("{}: exists and is a FIFO (named pipe)", fifo.display())), "{err}");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is left alone");
        // Regular files and links at bundle names are what --force replaces.
        std::fs::remove_file(&fifo).unwrap();
        std::os::unix::fs::symlink(&report, dir.join(BUNDLE_FILES[3])).unwrap();
        assert_eq!(given.prepare().unwrap(), dir);
        assert!(
            std::fs::symlink_metadata(&report).is_err()
                && std::fs::symlink_metadata(dir.join(BUNDLE_FILES[3])).is_err()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder at a bundle name, the lockstep's or one the command adds (`canary.json`), is refused
    /// before the run, naming it; a regular file there is replaced.
    #[test]
    fn force_refuses_a_folder_at_a_bundle_name_before_the_run() {
        let dir = std::env::temp_dir().join(format!("anes-evidence-force-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("report.json")).unwrap();
        let err = EvidenceDir::given(dir.clone(), true).unwrap_err().to_string();
        let named = |name: &str| format!("{}: exists and is a directory", dir.join(name).display());
        assert!(err.contains(&named("report.json")), "{err}");
        std::fs::remove_dir(dir.join("report.json")).unwrap();
        std::fs::create_dir(dir.join("canary.json")).unwrap();
        // The lockstep's bundle has no canary.json: its folder is not its business.
        assert!(EvidenceDir::given(dir.clone(), true).is_ok());
        let err = EvidenceDir::given_with(dir.clone(), true, &["canary.json"]).unwrap_err().to_string();
        assert!(err.contains(&named("canary.json")), "{err}");
        assert!(dir.join("canary.json").is_dir(), "left alone");
        std::fs::remove_dir(dir.join("canary.json")).unwrap();
        std::fs::write(dir.join("canary.json"), b"earlier").unwrap();
        let given = EvidenceDir::given_with(dir.clone(), true, &["canary.json"]).unwrap();
        assert_eq!(given.prepare().unwrap(), dir);
        assert!(!dir.join("canary.json").exists(), "an earlier canary.json is replaced");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_folder_never_reuses_an_existing_one() {
        let parent = std::env::temp_dir().join(format!("anes-evidence-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        let first = new_folder(&parent, "20251130T135312Z-demo").unwrap();
        std::fs::write(first.join("report.json"), b"earlier").unwrap();
        let second = new_folder(&parent, "20251130T135312Z-demo").unwrap();
        let third = new_folder(&parent, "20251130T135312Z-demo").unwrap();
        assert_eq!(first, parent.join("20251130T135312Z-demo"));
        assert_eq!(second, parent.join("20251130T135312Z-demo-2"));
        assert_eq!(third, parent.join("20251130T135312Z-demo-3"));
        assert_eq!(std::fs::read(first.join("report.json")).unwrap(), b"earlier");
        std::fs::remove_dir_all(&parent).unwrap();
    }
}
