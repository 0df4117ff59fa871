//! Each protocol end to end on hand-assembled ROMs: results, codes, texts, resets, timeouts and the
//! errors that must be rows rather than crashes.

mod support;

use anes_conformance::{Manifest, RomResult, Status, Summary, run_roms};
use support::Scratch;

fn run_manifest(scratch: &Scratch, tables: &[String], jobs: usize) -> Vec<RomResult> {
    let manifest = Manifest::load(&scratch.manifest(tables)).unwrap();
    run_roms(&manifest.select(None), jobs.try_into().unwrap(), &|_| {})
}

fn run_one(name: &str, table: impl FnOnce(&Scratch) -> String) -> RomResult {
    let scratch = Scratch::new(name);
    let table = table(&scratch);
    run_manifest(&scratch, &[table], 1).remove(0)
}

#[test]
fn blargg6000_pass_reports_code_and_text() {
    let result = run_one("blargg-pass", |s| {
        s.rom_entry("pass.nes", &support::blargg_rom("\x1b[0;32mAll good\n", 0), "blargg6000", 60, "")
    });
    assert_eq!((result.status, result.code, result.text.as_str()), (Status::Pass, Some(0), "All good"));
    assert_eq!(result.frames, 1, "a result is read at the end of the first frame that shows it");
}

/// A manifest entry's `power_on` key powers that ROM on under the profile; entries without it run
/// under the default.
#[test]
fn a_rom_runs_under_the_power_on_profile_its_entry_names() {
    let screen = "[rom.screen]\nresult_addr = 248\npass_value = 1\nhow = \"zero page $F8\"\n";
    let scratch = Scratch::new("power-on");
    let rom = support::vblank_at_power_on_rom(0xF8);
    let tables = [
        scratch.rom_entry("default.nes", &rom, "screen", 3, screen),
        scratch.rom_entry("set.nes", &rom, "screen", 3, &format!("power_on = \"vblank-set\"\n{screen}")),
    ];
    let results = run_manifest(&scratch, &tables, 1);
    let got: Vec<_> = results.iter().map(|r| (r.path.as_str(), r.status, r.code)).collect();
    assert_eq!(got, [("default.nes", Status::Fail, Some(2)), ("set.nes", Status::Pass, Some(1))]);
}

#[test]
fn blargg6000_failure_code_and_text() {
    let result = run_one("blargg-fail", |s| {
        s.rom_entry("fail.nes", &support::blargg_rom("Failed #3", 3), "blargg6000", 60, "")
    });
    assert_eq!((result.status, result.code, result.text.as_str()), (Status::Fail, Some(3), "Failed #3"));
}

#[test]
fn blargg6000_reset_request_is_honoured_after_six_frames() {
    let result = run_one("blargg-reset", |s| {
        s.rom_entry("reset.nes", &support::reset_rom(), "blargg6000", 60, "needs_reset = true\n")
    });
    assert_eq!((result.status, result.text.as_str()), (Status::Pass, "passed after reset"), "{result:?}");
    assert!(result.frames >= 7, "reset pressed too early: passed at frame {}", result.frames);
}

#[test]
fn silence_until_the_budget_is_a_timeout() {
    let result =
        run_one("timeout", |s| s.rom_entry("silent.nes", &support::silent_rom(), "blargg6000", 5, ""));
    assert_eq!((result.status, result.code, result.frames), (Status::Timeout, None, 5));
    assert!(result.text.contains("no DE B0 61 signature"), "{}", result.text);
}

#[test]
fn a_jammed_cpu_fails_at_once() {
    let result = run_one("jam", |s| s.rom_entry("jam.nes", &support::jam_rom(), "blargg6000", 60, ""));
    assert_eq!((result.status, result.frames), (Status::Fail, 1));
    assert!(result.text.starts_with("CPU jammed at PC $"), "{}", result.text);
}

#[test]
fn screen_zero_page_pass_at_once_failure_code_at_the_end_of_the_budget() {
    let screen = "[rom.screen]\nresult_addr = 248\npass_value = 1\nhow = \"zero page $F8\"\n";
    let scratch = Scratch::new("screen");
    let tables = [
        scratch.rom_entry("pass.nes", &support::zero_page_rom(0xF8, 1), "screen", 30, screen),
        scratch.rom_entry("fail.nes", &support::zero_page_rom(0xF8, 4), "screen", 30, screen),
        scratch.rom_entry("silent.nes", &support::zero_page_rom(0xF8, 0), "screen", 3, screen),
        scratch.rom_entry("subtest.nes", &support::zero_page_subtest_rom(0xF8), "screen", 30, screen),
    ];
    let results = run_manifest(&scratch, &tables, 2);
    let got: Vec<_> = results.iter().map(|r| (r.path.as_str(), r.status, r.code, r.frames)).collect();
    assert_eq!(
        got[..3],
        [
            ("pass.nes", Status::Pass, Some(1), 1),
            // A code of 2 or more may be a sub-test in progress: final only when the budget ends.
            ("fail.nes", Status::Fail, Some(4), 30),
            ("silent.nes", Status::Timeout, None, 3)
        ]
    );
    let (path, status, code, frames) = got[3];
    assert_eq!((path, status, code), ("subtest.nes", Status::Pass, Some(1)));
    assert!((5..30).contains(&frames), "the delay loop lasts about 11 frames, not {frames}");
}

#[test]
fn screen_text_is_awaited_even_when_the_result_byte_looks_final() {
    // The byte is rewritten while the tests run, so with texts given only the text decides.
    let screen = "[rom.screen]\nresult_addr = 248\npass_value = 1\ntext_pass = [\"PASSED\"]\n\
                  text_fail = [\"FAILED\"]\n";
    let result = run_one("screen-text", |s| {
        s.rom_entry("t.nes", &support::zero_page_rom(0xF8, 1), "screen", 4, screen)
    });
    assert_eq!((result.status, result.frames), (Status::Timeout, 4));
    assert!(result.text.contains("$F8 = $01"), "{}", result.text);
}

#[test]
fn screen_without_a_way_to_read_the_result_is_an_error_row() {
    let result = run_one("screen-empty", |s| {
        s.rom_entry("t.nes", &support::silent_rom(), "screen", 4, "[rom.screen]\nhow = \"?\"\n")
    });
    assert_eq!(result.status, Status::Error);
    assert!(result.text.contains("neither result_addr nor text_pass"), "{}", result.text);
}

#[test]
fn nestest_log_passes_on_a_matching_log_and_names_the_first_differing_line() {
    let scratch = Scratch::new("nestest-log");
    let rom = support::silent_rom();
    // The golden lines come from the core itself: this tests the comparison, not the CPU.
    let mut nes =
        anes_core::Nes::new(anes_core::Cartridge::from_ines(&rom).unwrap(), anes_core::NesConfig::default());
    anes_core::harness::Harness::set_pc(&mut nes, 0xC000);
    let mut lines = Vec::new();
    for _ in 0..3 {
        let mut line = String::new();
        anes_core::cpu::trace_line(&nes, &mut line);
        lines.push(line);
        nes.step_instruction();
    }
    let table = scratch.rom_entry("nestest.nes", &rom, "nestest-log", 0, "");
    scratch.write("nestest.log", lines.join("\r\n") + "\r\n");
    let result = run_manifest(&scratch, std::slice::from_ref(&table), 1).remove(0);
    assert_eq!(result.status, Status::Pass, "{}", result.text);

    lines[1] = lines[1].replace("A:00", "A:01");
    scratch.write("nestest.log", lines.join("\n"));
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    assert_eq!(result.status, Status::Fail);
    assert!(result.text.starts_with("line 2 differs\nexpected: "), "{}", result.text);
    assert!(result.text.contains(&format!("expected: {}", lines[1])), "{}", result.text);
}

#[test]
fn problems_with_a_rom_are_error_rows_not_crashes() {
    let scratch = Scratch::new("errors");
    let good = support::blargg_rom("ok", 0);
    let mut tables = vec![
        scratch.rom_entry("unknown.nes", &good, "smoke-signals", 60, ""),
        scratch.rom_entry("sha.nes", &good, "blargg6000", 60, ""),
        scratch.rom_entry("mapper.nes", &good, "blargg6000", 60, "mapper = 4\n"),
        scratch.rom_entry("header.nes", b"NOT A ROM AT ALL", "blargg6000", 60, ""),
        scratch.rom_entry("pal.nes", &good, "blargg6000", 60, "region = \"secam\"\n"),
        scratch.rom_entry("ok.nes", &good, "blargg6000", 60, ""),
    ];
    tables[1] = tables[1].replace(&support::sha1_hex(&good), &"0".repeat(40));
    tables.push(
        "[[rom]]\npath = \"missing.nes\"\nsuite = \"s\"\nprotocol = \"blargg6000\"\nmapper = 0\n\
         frame_budget = 1\nexpected = \"pass\"\nsha1 = \"00\"\n"
            .to_owned(),
    );
    let results = run_manifest(&scratch, &tables, 3);
    let status: Vec<_> = results.iter().map(|r| (r.path.as_str(), r.status)).collect();
    assert_eq!(
        status,
        [
            ("unknown.nes", Status::Error),
            ("sha.nes", Status::Error),
            ("mapper.nes", Status::Error),
            ("header.nes", Status::Error),
            ("pal.nes", Status::Error),
            ("ok.nes", Status::Pass),
            ("missing.nes", Status::Error),
        ]
    );
    let text = |i: usize| results[i].text.as_str();
    assert!(text(0).contains("protocol \"smoke-signals\" is not supported"), "{}", text(0));
    assert!(text(1).contains("SHA-1 is") && text(1).contains("wrong or damaged file"), "{}", text(1));
    assert!(text(2).contains("header declares mapper 0 but the manifest says 4"), "{}", text(2));
    assert!(text(3).contains("header.nes") && text(3).contains("magic"), "{}", text(3));
    assert_eq!(text(4), "region \"secam\" is not ntsc, pal or dendy");
    assert!(text(6).contains("missing.nes: cannot read the ROM"), "{}", text(6));
    assert_eq!(Summary::of(&results), Summary { passed: 1, failed: 6 });
}

#[test]
fn results_keep_manifest_order_whatever_the_number_of_jobs() {
    let scratch = Scratch::new("order");
    let tables: Vec<String> = (0..9u8)
        .map(|i| {
            let rom = if i % 3 == 0 { support::silent_rom() } else { support::blargg_rom("x", i % 3 - 1) };
            let extra = if i % 2 == 0 { "expected = \"info\"\n" } else { "" };
            scratch.rom_entry(&format!("r{i}.nes"), &rom, "blargg6000", u64::from(i) + 1, extra)
        })
        .collect();
    let serial = run_manifest(&scratch, &tables, 1);
    let parallel = run_manifest(&scratch, &tables, 4);
    let strip = |results: &[RomResult]| -> Vec<_> {
        results.iter().map(|r| (r.path.clone(), r.status, r.code, r.text.clone(), r.frames)).collect()
    };
    assert_eq!(strip(&serial), strip(&parallel));
    let paths: Vec<_> = serial.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, (0..9).map(|i| format!("r{i}.nes")).collect::<Vec<_>>());
}

/// The test list and README an AccuracyCoin-like ROM is read with (three scored tests, one "draw").
fn accuracycoin_files(scratch: &Scratch) {
    scratch.write(
        "accuracycoin_tests.csv",
        "index,page,page_title,slot,name,result_symbol,result_addr,kind,entry_label\n\
         1,1,\"Page One\",0,\"Always passes\",r1,0x0400,test,T1\n\
         2,1,\"Page One\",1,\"Always fails\",r2,0x0401,test,T2\n\
         ,2,\"Page Two\",0,\"Just draws\",r3,0x03FF,draw,T3\n\
         3,2,\"Page Two\",1,\"Frame parity\",r4,0x0402,test,T4\n",
    );
    scratch.write(
        "README.md",
        "# Error Codes\n## Page 1: Page One\n### Always Fails\n  2: It always does.\n\
         ## Page 2: Page Two\n### Frame Parity\n  3: Started on an odd frame.\n\
         # Success Codes\n### Frame Parity\n  1: Started on an even frame.\n",
    );
}

#[test]
fn accuracycoin_reports_every_test_at_its_worst_over_the_start_points() {
    let scratch = Scratch::new("accuracycoin");
    accuracycoin_files(&scratch);
    let table = scratch.rom_entry("ac.nes", &support::accuracycoin_like_rom(), "accuracycoin", 300, "");
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    assert_eq!(result.status, Status::Fail, "{}", result.text);
    // The menu is ready at frame 10 (the earliest trusted): Start at frames 10-17.
    let starts: Vec<u64> = result.start_points.iter().map(|p| p.start_frame).collect();
    assert_eq!(starts, (10..18).collect::<Vec<_>>());
    let tests: Vec<_> = result
        .subtests
        .iter()
        .map(|t| (t.index, t.name.as_str(), t.status, t.code, t.meaning.as_str()))
        .collect();
    assert_eq!(
        tests,
        [
            (1, "Always passes", Status::Pass, None, ""),
            (2, "Always fails", Status::Fail, Some(2), "It always does."),
            (3, "Frame parity", Status::Fail, Some(3), "Started on an odd frame."),
        ]
    );
    assert_eq!(result.subtests[1].failed_at, starts);
    // Frame parity fails at some start frames only: exactly those where one test passed.
    let one_passed: Vec<u64> =
        result.start_points.iter().filter(|p| p.passed == 1).map(|p| p.start_frame).collect();
    assert_eq!(result.subtests[2].failed_at, one_passed);
    assert!((1..8).contains(&one_passed.len()), "{one_passed:?}");
    assert!(result.start_points.iter().all(|p| p.total == 3 && p.status == Status::Fail));
    assert!(result.text.starts_with("worst 1 of 3 passed"), "{}", result.text);
    assert!(result.text.contains("#2 Always fails (2), #3 Frame parity (3)"), "{}", result.text);
}

#[test]
fn accuracycoin_passes_only_when_every_test_passes_everywhere() {
    let scratch = Scratch::new("accuracycoin-pass");
    accuracycoin_files(&scratch);
    // Only the first test: the list decides which result bytes count.
    let list = std::fs::read_to_string(scratch.path().join("accuracycoin_tests.csv")).unwrap();
    let first: Vec<&str> = list.lines().take(2).collect();
    scratch.write("accuracycoin_tests.csv", first.join("\n"));
    let table = scratch.rom_entry("ac.nes", &support::accuracycoin_like_rom(), "accuracycoin", 300, "");
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    // The ROM's tallies count its three tests: the runner refuses a list that is not the ROM's.
    assert_eq!(result.status, Status::Error, "{}", result.text);
    assert!(result.start_points[0].text.contains("is the test list the ROM's?"), "{}", result.text);

    let passing = support::accuracycoin_like_rom_passing();
    let table = scratch.rom_entry("ok.nes", &passing, "accuracycoin", 300, "");
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    assert_eq!(result.status, Status::Pass, "{}", result.text);
    assert_eq!(result.text, "1 of 1 passed at each of 8 start points (Start at frames 10-17)");
}

#[test]
fn accuracycoin_problems_are_reported() {
    let scratch = Scratch::new("accuracycoin-problems");
    // No test list beside the ROM.
    let table = scratch.rom_entry("ac.nes", &support::accuracycoin_like_rom(), "accuracycoin", 300, "");
    let result = run_manifest(&scratch, std::slice::from_ref(&table), 1).remove(0);
    assert_eq!(result.status, Status::Error);
    assert!(result.text.contains("accuracycoin_tests.csv: cannot read the test list"), "{}", result.text);
    // A ROM that never shows the menu.
    accuracycoin_files(&scratch);
    let table = scratch.rom_entry("silent.nes", &support::silent_rom(), "accuracycoin", 30, "");
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    assert_eq!((result.status, result.frames), (Status::Timeout, 30));
    assert!(result.text.starts_with("the main menu was not ready after 30 frames"), "{}", result.text);
    // Without a README the results stand, without meanings.
    std::fs::remove_file(scratch.path().join("README.md")).unwrap();
    let table = scratch.rom_entry("ac.nes", &support::accuracycoin_like_rom(), "accuracycoin", 300, "");
    let result = run_manifest(&scratch, &[table], 1).remove(0);
    assert_eq!(result.status, Status::Fail);
    assert!(result.subtests.iter().all(|t| t.meaning.is_empty()));
    assert!(result.text.contains("(no code meanings: "), "{}", result.text);
}

/// Our `roms/regions/timing.nes` recognizes the console's region by its frame length (nesdev "Cycle
/// reference chart") and keeps it in the zero-page byte `region` ($14: the first zero-page bytes are
/// `events`, `target`, `count` (2), from $10 in `roms/common/nrom.cfg`): 0 NTSC, 1 PAL, 2 Dendy. A
/// manifest entry waiting for 1 there passes only if the runner powers a PAL console on.
#[test]
fn the_manifest_region_is_the_console_region() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/regions/timing.nes"))
        .expect("the region ROM is committed");
    let scratch = Scratch::new("regions");
    let screen = "[rom.screen]\nresult_addr = 0x14\npass_value = 1\n";
    let tables: Vec<String> = ["ntsc", "pal", "dendy"]
        .into_iter()
        .map(|region| {
            let extra = format!("region = \"{region}\"\n{screen}");
            scratch.rom_entry(&format!("timing-{region}.nes"), &rom, "screen", 120, &extra)
        })
        .collect();
    let results = run_manifest(&scratch, &tables, 1);
    let status: Vec<_> = results.iter().map(|r| (r.path.as_str(), r.status, r.code)).collect();
    assert_eq!(
        status,
        [
            ("timing-ntsc.nes", Status::Timeout, None),
            ("timing-pal.nes", Status::Pass, Some(1)),
            ("timing-dendy.nes", Status::Fail, Some(2)),
        ],
        "{results:?}"
    );
}

/// Our `roms/regions/dots.nes` (the dot pattern across frames, see its source) as a manifest would
/// run it in each region: its zero-page verdict byte ($10) is 1 once every check passed, 1 + the
/// failed checks as bits otherwise. One row per region, each on the console its `region` names.
#[test]
fn the_dot_pattern_rom_passes_in_each_manifest_region() {
    let rom = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../roms/regions/dots.nes"))
        .expect("the dot pattern ROM is committed");
    let scratch = Scratch::new("regions-dots");
    let screen = "[rom.screen]\nresult_addr = 0x10\npass_value = 1\n";
    let tables: Vec<String> = ["ntsc", "pal", "dendy"]
        .into_iter()
        .map(|region| {
            let extra = format!("region = \"{region}\"\n{screen}");
            scratch.rom_entry(&format!("dots-{region}.nes"), &rom, "screen", 200, &extra)
        })
        .collect();
    let results = run_manifest(&scratch, &tables, 1);
    let status: Vec<_> = results.iter().map(|r| (r.path.as_str(), r.status, r.code)).collect();
    assert_eq!(
        status,
        [
            ("dots-ntsc.nes", Status::Pass, Some(1)),
            ("dots-pal.nes", Status::Pass, Some(1)),
            ("dots-dendy.nes", Status::Pass, Some(1)),
        ],
        "{results:?}"
    );
}
