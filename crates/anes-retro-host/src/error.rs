//! Why a core, its content or a state was refused.

use std::path::PathBuf;

/// Why the host could not load a core or its content, or could not do what was asked of the core.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No file at the core's path.
    #[error("libretro core {path}: no such file")]
    CoreNotFound {
        /// The path tried.
        path: PathBuf,
    },
    /// Something is at the core's path, but not a regular file (a folder, a device).
    #[error("libretro core {path}: not a regular file")]
    CoreNotAFile {
        /// The path tried.
        path: PathBuf,
    },
    /// The dynamic loader refused the file.
    #[error("libretro core {path}: cannot load it as a shared library: {message}")]
    Open {
        /// The core's path.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },
    /// The library lacks an entry point of the libretro API.
    #[error(
        "libretro core {path}: no symbol {symbol}, which every libretro core exports (not a libretro core?)"
    )]
    MissingSymbol {
        /// The core's path.
        path: PathBuf,
        /// The entry point.
        symbol: &'static str,
    },
    /// The core implements another version of the API.
    #[error("libretro core {path}: API version {version}, expected {expected}", expected = crate::ffi::API_VERSION)]
    ApiVersion {
        /// The core's path.
        path: PathBuf,
        /// What `retro_api_version` returned.
        version: u32,
    },
    /// The content file could not be read.
    #[error("content {path}: {problem}")]
    Content {
        /// The content's path.
        path: PathBuf,
        /// What was wrong (missing, not a regular file, too large).
        problem: String,
    },
    /// `retro_load_game` returned false.
    #[error("content {content}: the core {core} ({name}) refused it (retro_load_game returned false){why}")]
    LoadGame {
        /// The core's path.
        core: PathBuf,
        /// The core's name and version.
        name: String,
        /// The content's path.
        content: PathBuf,
        /// What may say why, starting "; " (empty when nothing does): the environment commands the
        /// core asked for that this host does not answer (`SET_HW_RENDER`: a hardware-rendered core)
        /// and the core's last log lines.
        why: String,
    },
    /// A call that needs a loaded game, after a power cycle whose `retro_load_game` failed.
    #[error(
        "libretro core {core}: {call} is not called: no game is loaded (the core refused {content} at the last power cycle)"
    )]
    NoGame {
        /// The core's path.
        core: PathBuf,
        /// The content's path.
        content: PathBuf,
        /// The call not made.
        call: &'static str,
    },
    /// Another core is loaded in this process (a core's state is global).
    #[error(
        "another libretro core is loaded in this process (cores keep their state in globals: one per process)"
    )]
    Busy,
    /// An option set on the command line the core does not declare, or a value it does not list.
    #[error("libretro core {core}: option {key:?} = {value:?}: {problem}")]
    Option {
        /// The core's path.
        core: PathBuf,
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// What was wrong, with what the core accepts.
        problem: String,
    },
    /// The system or save folder handed to the core could not be made.
    #[error("cannot create the core's folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The core does not serialize (`retro_serialize_size` is 0).
    #[error("libretro core {core}: no savestates (retro_serialize_size returned 0)")]
    NoSavestates {
        /// The core's path.
        core: PathBuf,
    },
    /// The core asked for a state larger than the host allows.
    #[error(
        "libretro core {core}: retro_serialize_size returned {size} bytes, more than the {max}-byte limit"
    )]
    StateTooLarge {
        /// The core's path.
        core: PathBuf,
        /// What it asked for.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// `retro_serialize` returned false.
    #[error("libretro core {core}: retro_serialize of {size} bytes failed")]
    Serialize {
        /// The core's path.
        core: PathBuf,
        /// The size asked for.
        size: usize,
    },
    /// `retro_unserialize` returned false.
    #[error("libretro core {core}: retro_unserialize refused a state of {size} bytes")]
    Unserialize {
        /// The core's path.
        core: PathBuf,
        /// The state's size.
        size: usize,
    },
    /// A string handed to the core holds a NUL byte.
    #[error("{what} {text:?} contains a NUL byte")]
    Nul {
        /// What the string is.
        what: &'static str,
        /// The string.
        text: String,
    },
}
