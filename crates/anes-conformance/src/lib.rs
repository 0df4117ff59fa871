//! anes-conformance: runs NES test ROMs listed in a manifest against the anes core and reports one
//! named result per ROM.
//!
//! A manifest (`shared/conformance/manifest.toml`) lists each ROM with the protocol through which it
//! reports its result:
//! - `blargg6000`: blargg's `$6000` status byte and `$6004` text (soft reset on request);
//! - `screen`: a zero-page result byte and/or result text in the nametables;
//! - `nestest-log`: nestest's trace compared line by line with `nestest.log`;
//! - `accuracycoin`: AccuracyCoin's menu: Start runs its 141 tests, each reported by name
//!   ([`RomResult::subtests`]) at its worst over several start frames ([`RomResult::start_points`]).
//!
//! The protocols drive an emulator through the [`Console`] trait: anes's `Nes` by default
//! ([`run_rom`]), any other with [`run_rom_on`].
//!
//! Every ROM's SHA-1 is checked first. A run's [`Summary`] counts as `failed` only ROMs expected to
//! `pass` that did not; `either` and `info` ROMs are reported but never fail a run.
//!
//! ```no_run
//! use anes_conformance::{Manifest, Summary, default_jobs, run_roms};
//! let manifest = Manifest::load("../shared/conformance/manifest.toml".as_ref())?;
//! let results = run_roms(&manifest.select(Some("instr_test")), default_jobs(), &|_| {});
//! println!("{}", Summary::of(&results));
//! # Ok::<(), anes_conformance::ManifestError>(())
//! ```

mod baseline;
mod console;
mod limits;
mod manifest;
mod protocol;
mod report;
mod runner;

pub use baseline::{Baseline, BaselineError, BaselineReport};
pub use console::{Console, PowerOn};
pub use limits::{MAX_BASELINE_LEN, MAX_LOG_LEN, MAX_MANIFEST_LEN};
pub use manifest::{Expected, Manifest, ManifestError, Protocol, RomEntry, ScreenSpec};
pub use report::{RomResult, StartPoint, Status, SubTest, Summary, code_label};
pub use runner::{default_jobs, estimated_frames, run_rom, run_rom_on, run_roms};
