//! The conformance manifest: one `[[rom]]` table per test ROM (see `shared/conformance/README.md`).

use std::fmt;
use std::path::{Path, PathBuf};

use anes_core::PowerOnProfile;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::limits::MAX_MANIFEST_LEN;

/// Why a manifest could not be loaded. Every message names the manifest file.
#[derive(Debug, Error)]
pub enum ManifestError {
    /// The file could not be read (missing, not a regular file, larger than [`MAX_MANIFEST_LEN`], not
    /// UTF-8 text); the message names it.
    #[error(transparent)]
    Read(anes_fs::ReadError),
    /// The file is not valid TOML or does not have the manifest's shape.
    #[error("{}: line {line}, column {column}: {message}", path.display())]
    Parse {
        /// The manifest file.
        path: PathBuf,
        /// 1-based line of the offending TOML (1 when the parser gave no location).
        line: usize,
        /// 1-based column of the offending TOML.
        column: usize,
        /// What is wrong there.
        message: String,
    },
    /// Two `[[rom]]` tables name the same file, so results could not be told apart.
    #[error("{}: ROM {rom:?} is listed twice", path.display())]
    DuplicateRom {
        /// The manifest file.
        path: PathBuf,
        /// The ROM path as written in the manifest.
        rom: String,
    },
}

/// How a test ROM reports its result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Protocol {
    /// blargg's `$6000` status byte, `DE B0 61` signature at `$6001` and text at `$6004`.
    Blargg6000,
    /// A zero-page result byte and/or text in the nametables (older ROMs); see [`ScreenSpec`].
    Screen,
    /// nestest in automation mode, compared instruction by instruction with `nestest.log`.
    NestestLog,
    /// AccuracyCoin's menu: Start runs its 141 tests, whose result bytes are read at the end (see
    /// `ACCURACYCOIN.md` beside the ROM).
    AccuracyCoin,
    /// A protocol this runner does not implement (such rows are reported with status `error`).
    Unsupported(String),
}

impl Protocol {
    /// The protocol's name as written in the manifest.
    pub fn name(&self) -> &str {
        match self {
            Protocol::Blargg6000 => "blargg6000",
            Protocol::Screen => "screen",
            Protocol::NestestLog => "nestest-log",
            Protocol::AccuracyCoin => "accuracycoin",
            Protocol::Unsupported(name) => name,
        }
    }
}

impl From<String> for Protocol {
    fn from(name: String) -> Self {
        match name.as_str() {
            "blargg6000" => Protocol::Blargg6000,
            "screen" => Protocol::Screen,
            "nestest-log" => Protocol::NestestLog,
            "accuracycoin" => Protocol::AccuracyCoin,
            _ => Protocol::Unsupported(name),
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the manifest expects of a ROM, which decides whether its result can fail a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expected {
    /// Must pass: a ROM of this kind that does not pass counts as failed.
    Pass,
    /// One of two mutually exclusive hardware revisions: pass or fail are both fine.
    Either,
    /// Prints information and is not scored.
    Info,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Expected::Pass => "pass",
            Expected::Either => "either",
            Expected::Info => "info",
        })
    }
}

/// How to read a `screen`-protocol ROM's result headlessly.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenSpec {
    /// Zero-page address of the result byte: `pass_value` = passed, 2 or more = failure code,
    /// 0 = not finished.
    pub result_addr: Option<u8>,
    /// The result byte's value for "passed" (1 when not given).
    pub pass_value: Option<u8>,
    /// Texts that, once in a nametable, mean the ROM passed.
    #[serde(default)]
    pub text_pass: Vec<String>,
    /// Texts that, once in a nametable, mean the ROM failed.
    #[serde(default)]
    pub text_fail: Vec<String>,
    /// Free-text explanation of how the result is read.
    #[serde(default)]
    pub how: String,
}

/// One test ROM of the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RomEntry {
    /// The ROM's path as written in the manifest (relative to the manifest); it names the ROM in
    /// results and baselines.
    pub path: String,
    /// The ROM's file: a relative path is resolved against the manifest's folder; an absolute one
    /// (a ROM kept elsewhere, or a device such as /dev/zero in the size-limit tests) is used as written.
    pub file: PathBuf,
    /// The suite (a folder of nes-test-roms) it belongs to.
    pub suite: String,
    /// How it reports its result.
    pub protocol: Protocol,
    /// iNES mapper number its header must declare.
    pub mapper: u16,
    /// The ROM asks for a soft reset during the test.
    pub needs_reset: bool,
    /// NTSC frames to run before calling it a timeout.
    pub frame_budget: u64,
    /// What a run is expected to show.
    pub expected: Expected,
    /// The console region, `ntsc` (the default, whatever the header says), `pal` or `dendy`: anes is
    /// powered on in it; another name is an `error` row.
    pub region: String,
    /// SHA-1 of the ROM file, lowercase hex.
    pub sha1: String,
    /// Free-text notes.
    pub notes: String,
    /// Why `expected` is what it is, when not `pass`.
    pub expected_note: String,
    /// How to read the result of a `screen` ROM.
    pub screen: Option<ScreenSpec>,
    /// The power-on profile the ROM must run under (optional key `power_on`, e.g. `"console-palette"`
    /// or `"random:7"`); `None` runs it under the run's profile ([`PowerOnProfile::Default`] unless
    /// the caller sets another).
    pub power_on: Option<PowerOnProfile>,
}

/// A loaded manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// The manifest file it was read from.
    pub path: PathBuf,
    /// The ROMs, in manifest order.
    pub roms: Vec<RomEntry>,
}

// Unknown keys are refused in every table, as the canary's corpus manifest refuses them: a misspelt
// key (`frame_bugdet`) would otherwise silently take its default or go unread.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    rom: Vec<RawRom>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRom {
    path: String,
    suite: String,
    protocol: String,
    mapper: u16,
    #[serde(default)]
    needs_reset: bool,
    frame_budget: u64,
    expected: Expected,
    #[serde(default = "default_region")]
    region: String,
    sha1: String,
    #[serde(default)]
    notes: String,
    #[serde(default)]
    expected_note: String,
    screen: Option<ScreenSpec>,
    #[serde(default, deserialize_with = "power_on_profile")]
    power_on: Option<PowerOnProfile>,
}

/// The optional `power_on` key: a profile name or `random:SEED`; anything else is refused with the
/// value and the accepted forms (at the key's line).
fn power_on_profile<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<PowerOnProfile>, D::Error> {
    let text = String::deserialize(deserializer)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

fn default_region() -> String {
    "ntsc".to_owned()
}

impl Manifest {
    /// Reads and parses the manifest at `path`; ROM paths resolve relative to its folder. A file larger
    /// than [`MAX_MANIFEST_LEN`] is refused.
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = anes_fs::read_text_capped(path, MAX_MANIFEST_LEN as u64, "manifest")
            .map_err(ManifestError::Read)?;
        Manifest::parse(&text, path)
    }

    /// Parses manifest `text` as if read from `path` (which names it in errors and anchors ROM paths).
    pub fn parse(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|err| {
            let (line, column) = err.span().map_or((1, 1), |span| line_and_column(text, span.start));
            ManifestError::Parse {
                path: path.to_owned(),
                line,
                column,
                message: err.message().trim().replace('\n', " "),
            }
        })?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut roms: Vec<RomEntry> = Vec::with_capacity(raw.rom.len());
        for rom in raw.rom {
            if roms.iter().any(|seen| seen.path == rom.path) {
                return Err(ManifestError::DuplicateRom { path: path.to_owned(), rom: rom.path });
            }
            roms.push(RomEntry {
                file: dir.join(&rom.path),
                path: rom.path,
                suite: rom.suite,
                protocol: Protocol::from(rom.protocol),
                mapper: rom.mapper,
                needs_reset: rom.needs_reset,
                frame_budget: rom.frame_budget,
                expected: rom.expected,
                region: rom.region,
                sha1: rom.sha1.to_ascii_lowercase(),
                notes: rom.notes,
                expected_note: rom.expected_note,
                screen: rom.screen,
                power_on: rom.power_on,
            });
        }
        Ok(Manifest { path: path.to_owned(), roms })
    }

    /// The ROMs whose path contains `filter` (all of them for `None`), in manifest order.
    pub fn select(&self, filter: Option<&str>) -> Vec<&RomEntry> {
        self.roms.iter().filter(|rom| filter.is_none_or(|text| rom.path.contains(text))).collect()
    }

    /// The ROM with this path as written in the manifest.
    pub fn rom(&self, path: &str) -> Option<&RomEntry> {
        self.roms.iter().find(|rom| rom.path == path)
    }
}

/// 1-based line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(before.chars().count(), |nl| before[nl + 1..].chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_ROM: &str = r#"
[[rom]]
path = "roms/a/b.nes"
suite = "a"
protocol = "screen"
mapper = 0
needs_reset = false
frame_budget = 1800
expected = "pass"
region = "ntsc"
sha1 = "ABCDEF"
[rom.screen]
result_addr = 248
pass_value = 1
text_pass = ["PASSED"]
text_fail = ["FAILED"]
how = "zero page"
"#;

    #[test]
    fn parses_a_rom_and_resolves_its_path_against_the_manifest() {
        let manifest = Manifest::parse(ONE_ROM, Path::new("/x/conformance/manifest.toml")).unwrap();
        let rom = &manifest.roms[0];
        assert_eq!(rom.path, "roms/a/b.nes");
        assert_eq!(rom.file, Path::new("/x/conformance/roms/a/b.nes"));
        assert_eq!(rom.protocol, Protocol::Screen);
        assert_eq!(rom.sha1, "abcdef");
        let screen = rom.screen.as_ref().unwrap();
        assert_eq!((screen.result_addr, screen.pass_value), (Some(0xF8), Some(1)));
        assert_eq!(screen.text_fail, ["FAILED"]);
    }

    #[test]
    fn the_optional_power_on_key_names_a_profile() {
        let manifest = Manifest::parse(ONE_ROM, Path::new("m.toml")).unwrap();
        assert_eq!(manifest.roms[0].power_on, None, "absent: the run's profile");
        for (text, profile) in
            [("console-palette", PowerOnProfile::ConsolePalette), ("random:7", PowerOnProfile::Random(7))]
        {
            let with = ONE_ROM.replace("sha1 = ", &format!("power_on = {text:?}\nsha1 = "));
            let manifest = Manifest::parse(&with, Path::new("m.toml")).unwrap();
            assert_eq!(manifest.roms[0].power_on, Some(profile));
        }
        let bad = ONE_ROM.replace("sha1 = ", "power_on = \"cold\"\nsha1 = ");
        let err = Manifest::parse(&bad, Path::new("m.toml")).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("m.toml: line 11"), "{message}");
        assert!(
            message.contains("power-on profile \"cold\" is not one of") && message.contains("random:SEED"),
            "{message}"
        );
    }

    #[test]
    fn unknown_protocol_is_kept_for_the_runner_to_report() {
        let text = ONE_ROM.replace("\"screen\"", "\"smoke-signals\"");
        let manifest = Manifest::parse(&text, Path::new("m.toml")).unwrap();
        assert_eq!(manifest.roms[0].protocol, Protocol::Unsupported("smoke-signals".into()));
        let text = ONE_ROM.replace("\"screen\"", "\"accuracycoin\"");
        let manifest = Manifest::parse(&text, Path::new("m.toml")).unwrap();
        assert_eq!(manifest.roms[0].protocol, Protocol::AccuracyCoin);
    }

    #[test]
    fn malformed_manifest_names_file_and_location() {
        let text = ONE_ROM.replace("expected = \"pass\"", "expected = \"maybe\"");
        let err = Manifest::parse(&text, Path::new("dir/m.toml")).unwrap_err();
        let ManifestError::Parse { line, .. } = &err else { panic!("{err:?}") };
        assert_eq!(*line, 9);
        let message = err.to_string();
        assert!(message.starts_with("dir/m.toml: line 9, column "), "{message}");
        assert!(message.contains("maybe"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn absolute_rom_paths_are_used_as_written() {
        let text = ONE_ROM.replace("roms/a/b.nes", "/elsewhere/b.nes");
        let manifest = Manifest::parse(&text, Path::new("dir/m.toml")).unwrap();
        assert_eq!(manifest.roms[0].file, Path::new("/elsewhere/b.nes"));
    }

    #[test]
    fn missing_field_is_a_parse_error() {
        let text = ONE_ROM.replace("sha1 = \"ABCDEF\"\n", "");
        let err = Manifest::parse(&text, Path::new("m.toml")).unwrap_err();
        assert!(err.to_string().contains("sha1"), "{err}");
    }

    #[test]
    fn unknown_fields_are_refused_in_every_table_naming_the_field() {
        let cases = [
            ("top", format!("title = \"x\"\n{ONE_ROM}"), "title", 1),
            ("rom", ONE_ROM.replace("mapper = 0\n", "mapper = 0\nframe_bugdet = 60\n"), "frame_bugdet", 7),
            (
                "rom.screen",
                ONE_ROM.replace("pass_value = 1\n", "pass_value = 1\npass_text = []\n"),
                "pass_text",
                15,
            ),
        ];
        for (table, text, field, line) in cases {
            let err = Manifest::parse(&text, Path::new("dir/m.toml")).unwrap_err();
            let ManifestError::Parse { line: at, .. } = &err else { panic!("{table}: {err:?}") };
            let message = err.to_string();
            assert!(message.contains(&format!("unknown field `{field}`")), "{table}: {message}");
            assert_eq!(*at, line, "{table}: {message}");
        }
    }

    /// The shared conformance manifest still loads under the strict rule. Missing, the test skips on a
    /// bare `cargo test` and fails under CI (`CI` set), as the workspace's tests do.
    #[test]
    fn the_shared_manifest_has_no_unknown_fields() {
        let dir = std::env::var_os("ANES_CONFORMANCE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"));
        let path = dir.join("manifest.toml");
        if !path.is_file() {
            assert!(!anes_fs::ci_is_set(), "{} is missing and CI is set", path.display());
            eprintln!("skipped: {} is missing", path.display());
            return;
        }
        let manifest = Manifest::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!manifest.roms.is_empty());
    }

    #[test]
    fn duplicate_rom_is_refused() {
        let text = format!("{ONE_ROM}{ONE_ROM}");
        let err = Manifest::parse(&text, Path::new("m.toml")).unwrap_err();
        assert!(matches!(err, ManifestError::DuplicateRom { .. }), "{err:?}");
    }

    #[test]
    fn load_refuses_files_over_the_limit_and_text_that_is_not_utf8() {
        let dir = std::env::temp_dir().join(format!("anes-manifest-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("manifest.toml");
        let mut padded = ONE_ROM.as_bytes().to_vec();
        padded.resize(MAX_MANIFEST_LEN, b'\n');
        std::fs::write(&path, &padded).unwrap();
        assert_eq!(Manifest::load(&path).unwrap().roms.len(), 1, "a manifest at the limit loads");
        padded.push(b'\n');
        std::fs::write(&path, &padded).unwrap();
        let err = Manifest::load(&path).unwrap_err();
        let ManifestError::Read(source) = &err else { panic!("{err:?}") };
        assert!(matches!(source, anes_fs::ReadError::TooLarge { .. }), "{source:?}");
        assert!(source.to_string().contains("1 MiB, the limit for manifest files"), "{source}");
        std::fs::write(&path, b"[[rom]]\npath = \"\xff\"\n").unwrap();
        let err = Manifest::load(&path).unwrap_err();
        let ManifestError::Read(source) = &err else { panic!("{err:?}") };
        assert!(source.to_string().contains("offset 16"), "{source}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn select_filters_by_path_substring() {
        let manifest = Manifest::parse(ONE_ROM, Path::new("m.toml")).unwrap();
        assert_eq!(manifest.select(Some("a/b")).len(), 1);
        assert_eq!(manifest.select(Some("zzz")).len(), 0);
        assert_eq!(manifest.select(None).len(), 1);
    }
}
