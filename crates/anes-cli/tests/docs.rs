//! The README and docs/ against the repository and the binary: the emulation epoch the README states
//! is `anes_core::EMULATION_EPOCH`; its count of mapper numbers is the core's, and its board table
//! lists each; every path in code style that names a file of the repository
//! exists; every picture of the emulator in them is what today's `anes run` draws; docs/ARCHITECTURE.md
//! stays at most 300 lines.
//!
//! `ANES_BLESS=1 cargo test -p anes-cli --test docs` rewrites the pictures from the binary (what
//! `scripts/pictures.sh` runs, with RetroArch's and the status page's); review them in the commit.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::TempDir;

/// A picture in the docs that `anes run` draws.
struct Picture {
    /// Its path under the repository.
    path: &'static str,
    /// `anes` arguments that draw it, run from the repository's root (`--screenshot FILE` added).
    args: &'static [&'static str],
    /// Whether `ANES_BLESS=1` writes it from `anes run`; RetroArch's own screenshot is retaken by
    /// `scripts/pictures.sh` through RetroArch instead.
    blessed_here: bool,
}

const PICTURES: &[Picture] = &[
    // The README's "Frame 300 of the demo": the demo ROM with its input stream.
    Picture {
        path: "docs/demo-frame-300.png",
        args: &["run", "roms/demo/demo.nes", "--input", "roms/demo/demo.input", "--frames", "300"],
        blessed_here: true,
    },
    // docs/EMBEDDING.md's `anes run` picture: no button pressed, as RetroArch runs it.
    Picture {
        path: "docs/anes-run-demo-frame-300.png",
        args: &["run", "roms/demo/demo.nes", "--frames", "300"],
        blessed_here: true,
    },
    // RetroArch's screenshot (crates/anes-libretro/tests/retroarch.rs checks that RetroArch shows
    // `anes run`'s picture, pixel for pixel): the same picture.
    Picture {
        path: "docs/retroarch-demo-frame-300.png",
        args: &["run", "roms/demo/demo.nes", "--frames", "300"],
        blessed_here: false,
    },
];

/// Pictures another test compares with the binary: the picture, the file of that test and its
/// name. `scripts/pictures.sh` retakes them.
const COMPARED_ELSEWHERE: &[(&str, &str, &str)] =
    &[("docs/status-page.png", "crates/anes-ops/src/http/page.rs", "docs_status_page_png_shows_todays_page")];

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// README.md and every other Markdown file of the repository, build output and the VCS left out.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), ".git" | "target" | "anes-data" | "anes-evidence") {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// Every file and folder of the repository, relative to its root, build output and the VCS left out.
fn repository_entries(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if matches!(name.as_str(), ".git" | "target" | "anes-data" | "anes-evidence") {
            continue;
        }
        out.push(path.strip_prefix(root).unwrap().to_string_lossy().to_string());
        if path.is_dir() {
            repository_entries(root, &path, out);
        }
    }
}

/// The code in a Markdown text, each piece with whether it came from a fenced block (where commands
/// also name the files they write, so only paths from the repository's root are taken).
fn code_pieces(text: &str) -> Vec<(String, bool)> {
    let mut pieces = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if fenced {
            pieces.push((line.to_string(), true));
        } else {
            pieces.extend(line.split('`').skip(1).step_by(2).map(|span| (span.to_string(), false)));
        }
    }
    pieces
}

/// File name endings that make a word with a `/` a path wherever it starts.
const FILE_ENDINGS: &[&str] = &[
    ".rs", ".md", ".toml", ".sh", ".nes", ".py", ".yml", ".yaml", ".json", ".txt", ".png", ".records",
    ".input", ".fm2", ".info", ".s", ".inc", ".cfg", ".html", ".lock",
];

/// The paths a piece of code names: words with a `/` that start at one of `top` (the root's
/// entries), at `shared/` or `../shared/`, or (outside fenced blocks) end like a file. Placeholders
/// (`<DIR>`, `*`, `...`), URLs, absolute and home paths are not paths of the repository.
fn named_paths(piece: &str, fenced: bool, top: &[String]) -> Vec<String> {
    let mut paths = Vec::new();
    for word in piece.split_whitespace() {
        let word = word.split("::").next().unwrap_or_default();
        let word =
            word.trim_start_matches(['(', '"', '\'']).trim_end_matches([')', ',', ';', ':', '.', '"', '\'']);
        let word = word.strip_prefix("./").unwrap_or(word);
        if !word.contains('/')
            || word.contains("://")
            || word.contains("...")
            || word.starts_with(['/', '~', '-'])
            || word.contains(['<', '>', '*', '{', '}', '[', ']', '$', '|', '=', '%', '…'])
        {
            continue;
        }
        let first = word.split('/').next().unwrap_or_default();
        let from_root =
            top.iter().any(|entry| entry == first) || first == "shared" || word.starts_with("../shared/");
        let file_like = !fenced && FILE_ENDINGS.iter().any(|ending| word.ends_with(ending)) && first != "..";
        if from_root || file_like {
            paths.push(word.to_string());
        }
    }
    paths
}

/// Every path in code style in the README and docs that names a file of the repository exists: from
/// the root (`docs/OPERATIONS.md`), or as the end of a path (`cart/board.rs` in a crate's section of
/// docs/ARCHITECTURE.md). The shared conformance ROMs live beside the repository: `../shared/...`.
#[test]
fn every_path_in_the_docs_exists() {
    let root = repository_root();
    let mut entries = Vec::new();
    repository_entries(&root, &root, &mut entries);
    let top: Vec<String> = entries.iter().filter(|entry| !entry.contains('/')).cloned().collect();
    let shared_present = root.join("../shared").is_dir();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    assert!(files.len() >= 8, "{files:?}");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.strip_prefix(&root).unwrap().display().to_string();
        for (piece, fenced) in code_pieces(&text) {
            for path in named_paths(&piece, fenced, &top) {
                checked += 1;
                let trimmed = path.trim_end_matches('/');
                let found = if path.starts_with("shared/") {
                    false
                } else if path.starts_with("../shared/") {
                    !shared_present || root.join(trimmed).exists()
                } else {
                    entries.iter().any(|entry| entry == trimmed || entry.ends_with(&format!("/{trimmed}")))
                };
                if !found {
                    let hint =
                        if path.starts_with("shared/") { " (the shared folder is ../shared)" } else { "" };
                    wrong.push(format!("{name}: `{path}`{hint}"));
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} paths found: the search is broken");
    assert!(wrong.is_empty(), "paths that name no file of the repository:\n{}", wrong.join("\n"));
}

/// The README says which emulation epoch its accuracy figures belong to: today's.
#[test]
fn the_readme_states_the_current_emulation_epoch() {
    let readme = std::fs::read_to_string(repository_root().join("README.md")).unwrap();
    let stated: Vec<&str> = readme
        .split("emulation epoch ")
        .skip(1)
        .filter_map(|after| after.split(|c: char| !c.is_ascii_digit()).next())
        .filter(|number| !number.is_empty())
        .collect();
    assert!(!stated.is_empty(), "the README names no emulation epoch");
    for number in stated {
        assert_eq!(
            number,
            anes_core::EMULATION_EPOCH.to_string(),
            "the README says emulation epoch {number}; anes_core::EMULATION_EPOCH is {}",
            anes_core::EMULATION_EPOCH
        );
    }
}

/// A PNG's size and its pixels as RGB.
fn rgb_pixels(png_bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes)).read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    let rgb = buffer[..info.buffer_size()].chunks(channels).flat_map(|pixel| pixel[..3].to_vec()).collect();
    (info.width, info.height, rgb)
}

/// The README's count of mapper numbers is the core's (`SUPPORTED_MAPPERS`), and its board table
/// lists each of them.
#[test]
fn the_readme_counts_the_supported_mappers() {
    let readme = std::fs::read_to_string(repository_root().join("README.md")).unwrap();
    let stated = readme
        .split_once("Boards (")
        .and_then(|(_, after)| after.split_once(" iNES mapper numbers"))
        .map(|(number, _)| number)
        .expect("the README says \"Boards (N iNES mapper numbers\"");
    let supported = anes_core::cart::SUPPORTED_MAPPERS;
    assert_eq!(stated, supported.len().to_string(), "the README's count of mapper numbers");
    let table = readme
        .split_once("| Nintendo")
        .map(|(_, rest)| rest.split("\n\n").next().unwrap_or(""))
        .expect("the README's board table starts with the Nintendo row");
    let listed: std::collections::BTreeSet<u16> = table
        .lines()
        .filter_map(|row| row.rsplit_once(" | ").map(|(_, boards)| boards.replace(" and ", ", ")))
        .flat_map(|boards| {
            // An entry starts with its number: "24 and 26 VRC6", "Namco 108: 206 DxROM", "5: PRG ...".
            boards
                .split([',', ';', ':', '|'])
                .filter_map(|item| item.trim().split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .collect::<Vec<u16>>()
        })
        .collect();
    let missing: Vec<u16> = supported.iter().copied().filter(|m| !listed.contains(m)).collect();
    assert!(missing.is_empty(), "mappers the README's board table does not list: {missing:?}");
}

/// Every picture in the README and docs is drawn by today's binary, pixel for pixel (or is listed in
/// COMPARED_ELSEWHERE with the test that does). With `ANES_BLESS=1` the pictures `anes run` takes are rewritten
/// instead.
#[test]
fn pictures_match_the_binary() {
    let root = repository_root();
    let bless = anes_fs::env_flag("ANES_BLESS");
    let scratch =
        TempDir(Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("docs-pictures-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let mut differ = Vec::new();
    for Picture { path: picture, args, blessed_here } in PICTURES {
        let drawn = scratch.0.join("picture.png");
        let output = Command::new(env!("CARGO_BIN_EXE_anes"))
            .args(*args)
            .arg("--screenshot")
            .arg(&drawn)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "anes {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        let drawn = std::fs::read(&drawn).unwrap();
        if bless && *blessed_here {
            std::fs::write(root.join(picture), &drawn).unwrap();
            eprintln!("wrote {picture}");
            continue;
        }
        if bless {
            continue;
        }
        let committed = std::fs::read(root.join(picture)).unwrap();
        if rgb_pixels(&committed) != rgb_pixels(&drawn) {
            differ.push(format!("{picture} is not what `anes {}` draws", args.join(" ")));
        }
    }
    assert!(
        differ.is_empty(),
        "{}\n(regenerate with scripts/pictures.sh, or ANES_BLESS=1 cargo test -p anes-cli --test docs)",
        differ.join("\n")
    );

    // Every picture the Markdown shows is one of those, or one another test compares.
    for (picture, file, test) in COMPARED_ELSEWHERE {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        assert!(source.contains(&format!("fn {test}()")), "{picture}: {file} has no test {test}");
    }
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (_, after) in text.match_indices("](").map(|(at, _)| text.split_at(at + 2)) {
            let target = after.split(')').next().unwrap_or_default();
            if !target.ends_with(".png") {
                continue;
            }
            let path = file.parent().unwrap().join(target).canonicalize().unwrap();
            let path = path.strip_prefix(&root).unwrap().to_string_lossy().to_string();
            assert!(
                PICTURES.iter().any(|picture| picture.path == path)
                    || COMPARED_ELSEWHERE.iter().any(|(picture, ..)| *picture == path),
                "{} shows {path}, which no test compares with the binary",
                file.display()
            );
        }
    }
}

/// What the README's Quick start says the main job prints is what it prints, but for its speed.
#[test]
fn the_quick_start_shows_what_the_main_job_prints() {
    let readme = std::fs::read_to_string(repository_root().join("README.md")).unwrap();
    let (_, quick_start) = readme.split_once("## Quick start").unwrap();
    let (_, shown) = quick_start.split_once("```text\n").expect("the Quick start shows the output");
    let (shown, _) = shown.split_once("```").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_anes")).arg("lockstep").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8(output.stdout).unwrap();
    let without_speed =
        |text: &str| text.lines().filter(|line| !line.starts_with("speed ")).collect::<Vec<_>>().join("\n");
    assert_eq!(
        without_speed(shown),
        without_speed(&printed),
        "the README's Quick start against `anes lockstep`"
    );
}

/// docs/ARCHITECTURE.md stays a map a newcomer reads in ten minutes: at most 300 lines (issue 47).
/// Detail belongs in the module docs it would otherwise restate.
#[test]
fn the_architecture_map_stays_short() {
    let text = std::fs::read_to_string(repository_root().join("docs/ARCHITECTURE.md")).unwrap();
    let lines = text.lines().count();
    assert!(lines <= 300, "docs/ARCHITECTURE.md has {lines} lines; keep it at most 300");
}
