//! The service's side of the simulator: a pipeline recovered from a data directory by
//! [`crate::recovery::open`] runs on to the end ([`anes_fixtures::sim::Sim`]; the pipeline's own
//! simulator tests are in `anes-pipeline`).

use std::time::Duration;

use anes_fixtures::sim::*;
use anes_fixtures::tiny_rom;

use super::*;

mod recovery;
