//! `anes sweep` as a homebrew author meets it: the one-VBlank start-up depends on its power-on
//! state and each dependence is localized and shrinkable; the demo does not depend on it; RAM a
//! program never uses is no dependence, RAM it copies is.

#[path = "../../anes-conformance/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::Scratch;

fn anes(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_anes"))
        .args(args)
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap()
}

fn rom(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path).display().to_string()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} / {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn state<'a>(report: &'a serde_json::Value, profile: &str) -> &'a serde_json::Value {
    report["states"].as_array().unwrap().iter().find(|s| s["profile"] == profile).unwrap()
}

#[test]
fn the_one_vblank_start_up_depends_on_its_power_on_state_and_each_dependence_is_localized() {
    let rom = rom("roms/poweron/one_vblank.nes");
    let profiles = "warm-up,vblank-set,console-palette,ram-ff,quick-power-cycle";
    let output = anes(&["sweep", &rom, "--frames", "30", "--profiles", profiles, "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report = json(&output);
    assert_eq!(report["depends"], true);
    for same in ["vblank-set", "console-palette", "ram-ff"] {
        assert_eq!(state(&report, same)["depends"], false, "{same}");
    }
    // The warm-up loses the first PPUADDR write, one frame in (the wait ends as VBlank starts).
    let warm = state(&report, "warm-up");
    assert_eq!(warm["picture_pixels_differing"], 61440);
    let first = &warm["first_difference"];
    assert_eq!(first["frame"], 1);
    assert!(first["instruction"].as_str().unwrap().starts_with("STA $2006"), "{first}");
    assert_eq!(first["fields"][0], "ppu.t: $3F00 vs $0000");
    // With the VBlank flag set too, the programs part at the first wait's read.
    let quick = &state(&report, "quick-power-cycle")["first_difference"];
    assert_eq!(quick["frame"], 0);
    assert!(quick["instruction"].as_str().unwrap().starts_with("BIT $2002"), "{quick}");
    assert_eq!(quick["fields"], serde_json::json!(["cpu.p: $26 vs $A6"]));

    // The printed shrink command reproduces the dependence, ending with its frame.
    let command = warm["shrink"].as_str().unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("sweep-shrink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let mut words: Vec<String> = command.split(' ').skip(1).map(str::to_string).collect();
    let at = words.iter().position(|w| w == "--out").unwrap();
    words[at + 1] = out.display().to_string();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let shrunk = anes(&words);
    assert_eq!(shrunk.status.code(), Some(1), "{command}: {}", String::from_utf8_lossy(&shrunk.stderr));
    let repro: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(repro["shrunk"]["frames"], 2);
    assert_eq!(repro["power_on_b"], "warm-up");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_demo_does_not_depend_on_its_power_on_state() {
    let output = anes(&["sweep", &rom("roms/demo/demo.nes"), "--frames", "240"]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("all 12 power-on states end as the default does: no dependence found"), "{text}");
    assert!(
        text.contains("same       vblank-set, warm-up, quick-power-cycle, console-palette, ram-ff"),
        "{text}"
    );
}

/// RAM a program never uses differs under another RAM pattern without any dependence; RAM it copies
/// is a dependence, found at the read.
#[test]
fn ram_still_at_its_power_on_value_counts_only_when_the_program_acts_on_it() {
    let scratch = Scratch::new("sweep-ram");
    let idle = scratch.write("idle.nes", support::silent_rom());
    let output = anes(&["sweep", idle.to_str().unwrap(), "--frames", "5", "--profiles", "ram-ff", "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let ram_ff = state(&json(&output), "ram-ff").clone();
    assert_eq!(
        (ram_ff["ram_differing_count"].as_u64(), ram_ff["ran_alike"].as_bool()),
        (Some(2048), Some(true))
    );

    let mut code = vec![0xA5, 0x10, 0x85, 0x11]; // LDA $10 / STA $11
    support::halt(&mut code);
    let copy = scratch.write("copy.nes", support::nrom(&code));
    let output = anes(&["sweep", copy.to_str().unwrap(), "--frames", "5", "--profiles", "ram-ff", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let ram_ff = state(&json(&output), "ram-ff").clone();
    assert_eq!(ram_ff["ran_alike"], false);
    assert!(ram_ff["first_difference"]["instruction"].as_str().unwrap().starts_with("LDA $10"), "{ram_ff}");
}

#[test]
fn bad_profiles_are_bad_input() {
    let rom = rom("roms/poweron/one_vblank.nes");
    for (profiles, problem) in [("0", "1 to 10000"), ("warm-up,tepid", "power-on profile \"tepid\"")] {
        let output = anes(&["sweep", &rom, "--profiles", profiles]);
        assert_eq!(output.status.code(), Some(2));
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains(problem), "{err}");
    }
    let missing = PathBuf::from("/nonexistent/sweep.nes");
    let output = anes(&["sweep", missing.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
}
