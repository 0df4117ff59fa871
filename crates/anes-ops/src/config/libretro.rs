//! `[pipeline.libretro]`: a pipeline whose two workers run a libretro core (`anes worker --libretro
//! CORE --content ROM`) instead of anes consoles; the pipeline's `rom` is the core's content.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::worker::WorkerMode;

/// `[pipeline.libretro]` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LibretroSection {
    /// Worker A's core (a shared object).
    pub core: Option<PathBuf>,
    /// Worker B's core (default: `core`): two builds of one core.
    pub core_b: Option<PathBuf>,
    /// Core options of both workers (`KEY = "VALUE"`).
    #[serde(default)]
    pub options: BTreeMap<String, String>,
    /// Core options of worker B, replacing `options` for it.
    pub options_b: Option<BTreeMap<String, String>>,
}

/// A libretro pipeline's cores, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibretroSpec {
    /// Each worker's core: A's, B's.
    pub cores: [PathBuf; 2],
    /// Each worker's core options.
    pub options: [Vec<(String, String)>; 2],
}

impl LibretroSpec {
    /// The arguments `anes worker --protocol binary` takes after it for `worker` (0: A, 1: B):
    /// `--libretro CORE --content CONTENT --option KEY=VALUE...`.
    pub fn worker_args(&self, worker: usize, content: &std::path::Path) -> Vec<std::ffi::OsString> {
        let mut args: Vec<std::ffi::OsString> =
            vec!["--libretro".into(), self.cores[worker].clone().into(), "--content".into(), content.into()];
        for (key, value) in &self.options[worker] {
            args.push("--option".into());
            args.push(format!("{key}={value}").into());
        }
        args
    }
}

/// The cores of a pipeline with `[pipeline.libretro]`, or `None` without one. Errors name the key
/// (relative to the pipeline) and the problem.
pub(super) fn parse_libretro(
    section: Option<&LibretroSection>,
    workers: WorkerMode,
    has_rom: bool,
    has_region: bool,
) -> Result<Option<LibretroSpec>, (&'static str, String)> {
    let Some(section) = section else { return Ok(None) };
    let core = section.core.clone().ok_or_else(|| {
        (
            "libretro.core",
            "missing: the core's shared object (each worker runs `anes worker --libretro CORE`)".to_string(),
        )
    })?;
    if workers != WorkerMode::Process {
        return Err((
            "workers",
            "a libretro core keeps its state in globals: its two workers must be processes (workers = \"process\")"
                .into(),
        ));
    }
    if !has_rom {
        return Err(("rom", "missing: a libretro pipeline's rom is the core's content file".into()));
    }
    if has_region {
        return Err((
            "region",
            "a region is the anes console's; a libretro core takes its own from its content".into(),
        ));
    }
    for (key, options) in
        [("libretro.options", Some(&section.options)), ("libretro.options_b", section.options_b.as_ref())]
    {
        if let Some(empty) = options.into_iter().flatten().find(|(k, _)| k.is_empty()) {
            return Err((key, format!("{:?} = {:?}: an option needs a key", empty.0, empty.1)));
        }
    }
    let options_a: Vec<(String, String)> = section.options.clone().into_iter().collect();
    let options_b = section.options_b.clone().map_or_else(|| options_a.clone(), |o| o.into_iter().collect());
    let core_b = section.core_b.clone().unwrap_or_else(|| core.clone());
    Ok(Some(LibretroSpec { cores: [core, core_b], options: [options_a, options_b] }))
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn a_libretro_pipeline_names_its_cores_and_needs_process_workers_and_content() {
        let config = Config::parse(
            "[[pipeline]]\nid = \"p\"\nrom = \"content.bin\"\nworkers = \"process\"\n[pipeline.input]\nsource = \"push\"\n[pipeline.libretro]\ncore = \"a.so\"\ncore_b = \"b.so\"\noptions = { anestest_step = \"3\" }\n",
            "anes.toml",
        )
        .unwrap();
        let spec = config.pipelines[0].libretro.clone().unwrap();
        assert_eq!(spec.cores, [std::path::PathBuf::from("a.so"), std::path::PathBuf::from("b.so")]);
        assert_eq!(spec.options[1], [("anestest_step".to_owned(), "3".to_owned())]);
        let args = spec.worker_args(1, std::path::Path::new("content.bin"));
        assert_eq!(args, ["--libretro", "b.so", "--content", "content.bin", "--option", "anestest_step=3"]);

        let mistake = |text: &str| Config::parse(text, "anes.toml").unwrap_err().to_string();
        let threads = mistake(
            "[[pipeline]]\nid = \"p\"\nrom = \"c.bin\"\n[pipeline.input]\nsource = \"push\"\n[pipeline.libretro]\ncore = \"a.so\"\n",
        );
        assert!(threads.starts_with("anes.toml: pipeline[0].workers: a libretro core"), "{threads}");
        let no_rom = mistake(
            "[[pipeline]]\nid = \"p\"\nworkers = \"process\"\n[pipeline.input]\nsource = \"push\"\n[pipeline.libretro]\ncore = \"a.so\"\n",
        );
        assert!(no_rom.starts_with("anes.toml: pipeline[0].rom: missing"), "{no_rom}");
        let no_core = mistake(
            "[[pipeline]]\nid = \"p\"\nrom = \"c.bin\"\nworkers = \"process\"\n[pipeline.input]\nsource = \"push\"\n[pipeline.libretro]\n",
        );
        assert!(no_core.starts_with("anes.toml: pipeline[0].libretro.core: missing"), "{no_core}");
        let unknown = mistake(
            "[[pipeline]]\nid = \"p\"\nrom = \"c.bin\"\nworkers = \"process\"\n[pipeline.input]\nsource = \"push\"\n[pipeline.libretro]\ncore = \"a.so\"\ncontent = \"x\"\n",
        );
        assert!(unknown.contains("content"), "{unknown}");
    }
}
