//! Nestopia as a peer: Debian's `libretro-nestopia` core, found in the multiarch libretro folder
//! (`benches/peer/install-nestopia.sh` installs it), run through [`crate::libretro`].

use std::path::{Path, PathBuf};

use crate::libretro::{HostConfig, HostError, LibretroHost};

/// The core's file name.
pub const CORE_FILE: &str = "nestopia_libretro.so";

/// Environment variable naming the core's path, tried before the usual folders.
pub const CORE_PATH_VAR: &str = "ANES_NESTOPIA_CORE";

/// The folders libretro frontends install cores into, multiarch first (Debian's package puts it in
/// `/usr/lib/<triple>/libretro`).
fn core_dirs() -> Vec<PathBuf> {
    let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
    vec![
        Path::new("/usr/lib").join(triple).join("libretro"),
        PathBuf::from("/usr/lib/libretro"),
        PathBuf::from("/usr/local/lib/libretro"),
    ]
}

/// Where the core is: `$ANES_NESTOPIA_CORE` if set (it must exist), else the first of the usual
/// folders that holds `nestopia_libretro.so`.
pub fn core_path() -> Result<PathBuf, HostError> {
    if let Some(path) = std::env::var_os(CORE_PATH_VAR) {
        let path = PathBuf::from(path);
        return if path.is_file() { Ok(path) } else { Err(HostError::CoreNotFound { path }) };
    }
    let dirs = core_dirs();
    dirs.iter().map(|dir| dir.join(CORE_FILE)).find(|path| path.is_file()).ok_or_else(|| {
        HostError::CoreNotInstalled {
            core: CORE_FILE,
            searched: dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
            hint: "install it with `bash benches/peer/install-nestopia.sh` (Debian's libretro-nestopia)",
        }
    })
}

/// The settings the peer group runs Nestopia with: an NTSC console (not the region its database
/// or the header would pick) whose RAM powers on zeroed, like anes's and tetanes-core's defaults,
/// and standard controllers in both ports. Everything else is the core's default, which includes
/// synthesizing 48 kHz audio every frame (the core has no switch for it; the host drops it).
pub fn config() -> HostConfig {
    HostConfig {
        options: vec![
            ("nestopia_favored_system".to_owned(), "ntsc".to_owned()),
            ("nestopia_ram_power_state".to_owned(), "0x00".to_owned()),
        ],
        ..HostConfig::default()
    }
}

/// Loads `rom` into the installed core with [`config`].
pub fn load(rom: &[u8]) -> Result<LibretroHost, HostError> {
    LibretroHost::new(&core_path()?, rom, &config())
}
