//! A core named by a bare file name is the file in the current folder, as `is_file` saw it, not one
//! the dynamic loader finds on the system's library path. Alone in its process: it changes the
//! current folder.

use anes_retro_host::{HostConfig, RetroCore, TEST_CORE_A};

#[test]
fn a_bare_core_file_name_is_the_file_in_the_current_folder() {
    let dir = std::env::temp_dir().join(format!("anes-retro-host-bare-name-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A name no system library folder has.
    let name = format!("anes_bare_name_{}_libretro.so", std::process::id());
    std::fs::copy(TEST_CORE_A, dir.join(&name)).unwrap();
    let content = dir.join("content.bin");
    std::fs::write(&content, b"some content").unwrap();
    std::env::set_current_dir(&dir).unwrap();
    let loaded = RetroCore::load(name.as_ref(), &content, &HostConfig::default());
    let _ = std::fs::remove_dir_all(&dir);
    let core = loaded.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(core.name(), "anes test core 1.0-a");
    assert!(core.core_path().is_absolute(), "{}", core.core_path().display());
}
