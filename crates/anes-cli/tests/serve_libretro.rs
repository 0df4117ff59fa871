//! `anes serve` with a pipeline of libretro workers (`[pipeline.libretro]`): two `anes worker
//! --libretro` processes of the test core replay a recorded stream and agree on every frame; build B
//! against build A diverges at frame 199, and the incident's evidence (the lockstep runner over a
//! worker of each core, from the last verified checkpoint) localizes it to `system_ram[0x0030]`.

mod support;

use std::path::Path;
use std::time::Duration;

use anes_retro_host::{TEST_CORE_A, TEST_CORE_B};
use serde_json::Value;
use support::TempDir;
use support::coordinator::{Coordinator, PIPELINE};

/// A folder of the test's own, with the test core's content and a 400-frame movie (A on every
/// third frame, Right on every fifth; never Select, which build B also reacts to).
fn setup(name: &str) -> TempDir {
    let dir = TempDir::create(&format!("serve-libretro-{name}"));
    std::fs::write(dir.join("content.bin"), b"anes test core content\n").unwrap();
    let mut movie = String::from(
        "version 3\nemuVersion 20604\npalFlag 0\nromFilename content.bin\nport0 1\nport1 1\nport2 0\n",
    );
    for frame in 0..400 {
        let a = if frame % 3 == 0 { 'A' } else { '.' };
        let right = if frame % 5 == 0 { 'R' } else { '.' };
        movie.push_str(&format!("|0|{right}......{a}|........||\n"));
    }
    std::fs::write(dir.join("movie.fm2"), movie).unwrap();
    dir
}

/// The pipeline: the movie replayed once at full speed, a verified checkpoint every 60 frames,
/// workers of `core` (A) and `core_b` (B).
fn pipeline(dir: &Path, core_b: &str) -> String {
    format!(
        "[[pipeline]]\nid = \"{PIPELINE}\"\nrom = \"{}\"\nworkers = \"process\"\ncheckpoint_every = 60\n\
         [pipeline.input]\nfile = \"{}\"\nrepeat = \"once\"\nspeed = \"max\"\n\
         [pipeline.libretro]\ncore = \"{TEST_CORE_A}\"\ncore_b = \"{core_b}\"\n",
        dir.join("content.bin").display(),
        dir.join("movie.fm2").display()
    )
}

#[test]
fn two_test_core_workers_agree_through_serve() {
    let dir = setup("agree");
    let mut serve = Coordinator::start(&dir.0, "agree", &pipeline(&dir.0, TEST_CORE_A), &dir.0.join("data"));
    let status = serve.wait_for("400 frames verified", Duration::from_secs(120), |c| {
        c.status().filter(|s| s["frames_verified"].as_u64() >= Some(400))
    });
    assert_eq!(status["diverged"], false, "{status}");
    assert_eq!(status["incidents"], Value::Array(Vec::new()), "{status}");
    let (summary, log) = serve.stop();
    assert!(summary["final_checkpoint_verified"] == true, "{summary}\n{log}");
}

#[test]
fn two_builds_of_the_test_core_diverge_through_serve_localized_to_the_byte() {
    let dir = setup("diverge");
    let mut serve =
        Coordinator::start(&dir.0, "diverge", &pipeline(&dir.0, TEST_CORE_B), &dir.0.join("data"));
    let status = serve.wait_for("the divergence", Duration::from_secs(120), |c| {
        c.status().filter(|s| s["diverged"] == true && s["incidents"][0]["evidence"].is_string())
    });
    // Build B flips RAM $30 in its 200th frame (sequence 199), and nothing before: frames 0-198
    // were verified, the checkpoint of frame 180 is the last verified one.
    let incident = &status["incidents"][0];
    assert_eq!(incident["seq"], 199, "{status}");
    assert_eq!(status["frames_verified"], 199, "{status}");
    let evidence = incident["evidence"].as_str().unwrap();
    let report_dir = dir.0.join("anes-evidence").join(evidence).parent().unwrap().to_path_buf();
    let pipeline_report: Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("pipeline-report.json")).unwrap()).unwrap();
    assert_eq!(pipeline_report["referee"], Value::Null, "{pipeline_report}");
    assert_eq!(pipeline_report["checkpoint_seq"], 180, "{pipeline_report}");
    assert!(pipeline_report["lockstep_bundle"].is_string(), "{pipeline_report}");
    let bundle: Value =
        serde_json::from_slice(&std::fs::read(report_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(bundle["detected"]["frame"], 199, "{}", bundle["message"]);
    let fields: Vec<&str> =
        bundle["fields"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert!(fields.contains(&"system_ram[0x0030]"), "{fields:?}");
    // Stopped, not killed: the service removes its workers' folders (the libretro core's system
    // folder among them).
    serve.stop();
}
