//! `anes lockstep` localizes the divergence it detected: with a fault masked before it (the machines
//! differed, then agreed again), the first divergent instruction and the differing fields are the
//! detected fault's, whatever `--checkpoint-every` and with `--threads`, in the text summary,
//! `--json` and the bundle's report.json and report.html.

use std::process::{Command, Output};

mod support;
use support::TempDir;

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.nes");
const DEMO_INPUT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/demo/demo.input");

/// `anes lockstep` on the demo over its input for 60 frames: a flip of $0010 in frame 10 that the
/// demo stores over before the frame ends (masked), then a flip of $0342 in frame 41 (detected).
fn lockstep(extra: &[&str], report: &TempDir) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(["lockstep", DEMO, "--input", DEMO_INPUT, "--frames", "60"])
        .args(["--inject", "flip:ram:0x10:0@300000", "--inject", "flip:ram:0x0342:3@1234567"])
        .arg("--report")
        .arg(&report.0)
        .args(extra)
        .output()
        .expect("the anes binary runs")
}

#[test]
fn a_masked_fault_before_the_detected_one_is_not_localized_at_any_checkpoint_interval() {
    for every in ["1", "10", "41", "60"] {
        for threads in [false, true] {
            let context = format!("--checkpoint-every {every}, --threads {threads}");
            let mut args = vec!["--checkpoint-every", every];
            if threads {
                args.push("--threads");
            }
            let report = TempDir::named("cli-lockstep-localization");
            let output = lockstep(&[&args[..], &["--json"]].concat(), &report);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{context}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            let faults = &summary["faults"];
            assert_eq!(
                (faults[0]["fate"].as_str(), faults[1]["fate"].as_str()),
                (Some("masked"), Some("detected"))
            );
            let divergence = &summary["divergence"];
            assert_eq!(divergence["frame"], 41, "{context}: {divergence}");
            assert_eq!(divergence["instruction"], "INC $02 = 97", "{context}");
            let names: Vec<&str> = divergence["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["name"].as_str().unwrap())
                .collect();
            assert_eq!(names, ["ram[$0342]"], "{context}");
            assert_eq!(divergence["fields"][0]["last_write_b"]["cause"], "fault", "{context}");

            let bundle: serde_json::Value =
                serde_json::from_slice(&std::fs::read(report.0.join("report.json")).unwrap()).unwrap();
            assert_eq!((&bundle["frame"], &bundle["fields"]), (&divergence["frame"], &divergence["fields"]));
            let html = std::fs::read_to_string(report.0.join("report.html")).unwrap();
            assert!(html.contains("ram[$0342]") && !html.contains("ram[$0010]"), "{context}");

            let report = TempDir::named("cli-lockstep-localization");
            let text = String::from_utf8(lockstep(&args, &report).stdout).unwrap();
            assert!(text.contains("first divergent instruction: frame 41,"), "{context}: {text}");
            assert!(
                text.contains("ram[$0342]: $7D vs $75") && !text.contains("ram[$0010]"),
                "{context}: {text}"
            );
        }
    }
}
