//! A libretro worker's content identity for a core that takes its content by path
//! (`need_fullpath`, CD images): the file is hashed whatever its size, not refused after the core
//! accepted it. Debian's Beetle PCE Fast (installed by scripts/install-libretro-cores.sh) is such a
//! core; the test is `#[ignore]`d as the other installed-core tests are, and fails naming what is
//! missing. One core per process: this file holds one test.

use std::path::{Path, PathBuf};

use anes_workers::engine::Handler;
use anes_workers::protocol::{Reply, WorkerCommand};
use anes_workers::retro_engine::{RetroEngine, RetroSetup};

const PCE_FAST: &str = "/usr/lib/x86_64-linux-gnu/libretro/mednafen_pce_fast_libretro.so";

/// The test's folder, removed with what is in it when dropped, also when the test panics.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
#[ignore = "needs libretro-beetle-pce-fast (scripts/install-libretro-cores.sh)"]
fn content_over_256_mib_that_a_core_takes_by_path_is_hashed_not_refused() {
    assert!(
        Path::new(PCE_FAST).is_file(),
        "this test needs {PCE_FAST}: bash scripts/install-libretro-cores.sh installs it"
    );
    let scratch =
        Scratch(std::env::temp_dir().join(format!("anes-workers-big-content-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    // Sparse: 300 MiB of zeros that take no disk, past the 256 MiB read into memory for cores that
    // take their content as bytes. The core accepts it (its own loader reads what it needs).
    let len: u64 = 300 << 20;
    let content = scratch.0.join("big.pce");
    std::fs::File::create(&content).unwrap().set_len(len).unwrap();

    let mut engine = RetroEngine::new(RetroSetup {
        core: PCE_FAST.into(),
        content: content.clone(),
        config: anes_retro_host::HostConfig::default(),
        hash_audio: true,
        nes_view: false,
    });
    let mut replies = Vec::new();
    let load =
        WorkerCommand::Load { rom: Vec::new(), checkpoint_every: u64::MAX, region: None, power_on: None };
    engine.handle(load, &mut |reply| replies.push(reply));

    let mut expected = blake3::Hasher::new();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..(len >> 20) {
        expected.update(&chunk);
    }
    match replies.as_slice() {
        [Reply::Loaded { rom_identity, .. }, Reply::Snapshot { .. }] => {
            assert_eq!(
                rom_identity,
                expected.finalize().as_bytes(),
                "the identity is blake3 of the whole file"
            )
        }
        other => panic!("expected loaded and a snapshot, got {other:?}"),
    }
}
