//! Loading a ROM file given on the command line.

use std::path::Path;

use anes_core::{Cartridge, Nes, NesConfig};
use anyhow::Context;

/// Reads and parses the iNES file at `path` and powers a console on with it. Errors name the file.
pub fn power_on(path: &Path) -> anyhow::Result<Nes> {
    let bytes = std::fs::read(path).with_context(|| path.display().to_string())?;
    let cart = Cartridge::from_ines(&bytes).with_context(|| path.display().to_string())?;
    Ok(Nes::new(cart, NesConfig::default()))
}
