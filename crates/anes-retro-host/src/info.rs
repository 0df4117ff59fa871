//! A core's `.info` file (package `libretro-core-info`, `/usr/share/libretro/info/`): `key = "value"`
//! lines, `#` comments. What the audit reads from it is `savestate_features`, the level of savestate
//! support the core claims, which RetroArch trusts to allow rewind, run-ahead and netplay.

use std::fmt;
use std::path::{Path, PathBuf};

/// The largest `.info` file read (the largest Debian ships is under 8 KiB).
pub const MAX_INFO_LEN: u64 = 1 << 20;

/// The savestate levels of `savestate_features`, weakest first. RetroArch (`core_info.h`): `basic`
/// allows saving and loading states; `serialized` also rewind and run-ahead in one instance (the
/// state taken and loaded every frame); `deterministic` also netplay and run-ahead's second
/// instance (a state loaded into another instance of the core continues identically).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SavestateLevel {
    /// No savestates (`null`, or no `savestate_features` with `savestate = "false"`).
    None,
    /// `basic`.
    Basic,
    /// `serialized`.
    Serialized,
    /// `deterministic`.
    Deterministic,
}

impl SavestateLevel {
    /// The `.info` word.
    pub fn name(self) -> &'static str {
        match self {
            SavestateLevel::None => "null",
            SavestateLevel::Basic => "basic",
            SavestateLevel::Serialized => "serialized",
            SavestateLevel::Deterministic => "deterministic",
        }
    }

    /// The level a `.info` word names.
    pub fn from_name(word: &str) -> Option<SavestateLevel> {
        Some(match word {
            "null" => SavestateLevel::None,
            "basic" => SavestateLevel::Basic,
            "serialized" => SavestateLevel::Serialized,
            "deterministic" => SavestateLevel::Deterministic,
            _ => return None,
        })
    }
}

impl fmt::Display for SavestateLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a `.info` file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InfoError {
    /// The file could not be read.
    #[error("{path}: {problem}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        problem: String,
    },
    /// A line is not `key = "value"`, a comment or blank.
    #[error("{path}:{line}: {problem}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What was wrong.
        problem: String,
    },
}

/// A parsed `.info` file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CoreInfo {
    /// Every `key = "value"`, in file order.
    pub entries: Vec<(String, String)>,
}

impl CoreInfo {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<CoreInfo, InfoError> {
        let bytes = anes_fs::read_capped(path, MAX_INFO_LEN, ".info file")
            .map_err(|e| InfoError::Read { path: path.to_owned(), problem: e.problem() })?;
        CoreInfo::parse(&bytes, path)
    }

    /// Parses the bytes of a `.info` file (`path` names it in errors). Values are in double quotes;
    /// RetroArch's files also hold a few unquoted ones, which are taken as they stand.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<CoreInfo, InfoError> {
        let text = String::from_utf8_lossy(bytes);
        let mut entries = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let syntax =
                |problem: String| InfoError::Syntax { path: path.to_owned(), line: index + 1, problem };
            let Some((key, value)) = line.split_once('=') else {
                return Err(syntax(format!("expected key = \"value\", found {line:?}")));
            };
            let key = key.trim();
            if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(syntax(format!("key {key:?} is not letters, digits and underscores")));
            }
            let value = value.trim();
            let value = match value.strip_prefix('"') {
                Some(rest) => match rest.find('"') {
                    Some(end) => &rest[..end],
                    None => return Err(syntax(format!("the value of {key} has no closing quote"))),
                },
                None => value.split('#').next().unwrap_or("").trim(),
            };
            entries.push((key.to_owned(), value.to_owned()));
        }
        Ok(CoreInfo { entries })
    }

    /// The value of `key` (the last one, if repeated).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The savestate level the file claims: `savestate_features`, else `basic` when `savestate` is
    /// true, else none. An unknown word is `Err(word)`.
    pub fn savestate_claim(&self) -> Result<SavestateLevel, String> {
        match self.get("savestate_features") {
            Some(word) => SavestateLevel::from_name(word).ok_or_else(|| word.to_owned()),
            None if self.get("savestate") == Some("true") => Ok(SavestateLevel::Basic),
            None => Ok(SavestateLevel::None),
        }
    }

    /// `display_name`, if the file has one.
    pub fn display_name(&self) -> Option<&str> {
        self.get("display_name")
    }
}

/// Where the `.info` file of the core at `core` is: beside it (`name.info`), then in the folder
/// `libretro-core-info` installs. `None` when neither exists.
pub fn info_path_for(core: &Path) -> Option<PathBuf> {
    let stem = core.file_stem()?.to_str()?;
    let beside = core.with_extension("info");
    if beside.is_file() {
        return Some(beside);
    }
    let system = Path::new("/usr/share/libretro/info").join(format!("{stem}.info"));
    system.is_file().then_some(system)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn reads_a_core_info_file() {
        let text = b"# Software Information\ndisplay_name = \"Nintendo - NES (Nestopia UE)\"\nsavestate = \"true\"\nsavestate_features = \"serialized\"\nfirmware_count = 1\n";
        let info = CoreInfo::parse(text, Path::new("nestopia_libretro.info")).unwrap();
        assert_eq!(info.display_name(), Some("Nintendo - NES (Nestopia UE)"));
        assert_eq!(info.savestate_claim(), Ok(SavestateLevel::Serialized));
        assert_eq!(info.get("firmware_count"), Some("1"));
        let err = CoreInfo::parse(b"a = \"b\"\nnot a line\n", Path::new("x.info")).unwrap_err();
        assert_eq!(err.to_string(), "x.info:2: expected key = \"value\", found \"not a line\"");
        let open = CoreInfo::parse(b"savestate_features = \"basic\n", Path::new("y.info")).unwrap_err();
        assert!(open.to_string().contains("no closing quote"), "{open}");
        let odd = CoreInfo::parse(b"savestate_features = \"sometimes\"\n", Path::new("z.info")).unwrap();
        assert_eq!(odd.savestate_claim(), Err("sometimes".to_owned()));
        assert!(SavestateLevel::Deterministic > SavestateLevel::Serialized);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(info) = CoreInfo::parse(&bytes, Path::new("fuzz.info")) {
                let _ = info.savestate_claim();
            }
        }

        #[test]
        fn key_value_lines_read_back(key in "[a-z_]{1,12}", value in "[ -!#-~]{0,20}") {
            let text = format!("{key} = \"{value}\"\n");
            let info = CoreInfo::parse(text.as_bytes(), Path::new("p.info")).unwrap();
            prop_assert_eq!(info.get(&key), Some(value.as_str()));
        }
    }
}
