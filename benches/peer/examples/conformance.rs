//! The other half of the peer comparison: the conformance manifest run on anes and on tetanes-core,
//! each ROM under the same result protocol (anes-conformance's, driven through its `Console` trait),
//! with the same frame budgets. Prints the ROMs whose results differ and, per emulator, how many of
//! the ROMs the manifest expects to pass do.
//!
//! `cargo run --release --manifest-path benches/peer/Cargo.toml --example conformance [-- MANIFEST]`
//! (CI runs it with `--profile bench` to reuse the benchmark's build).
//! (default: `../shared/conformance/manifest.toml` beside the repository).
//!
//! tetanes-core runs with its defaults (NTSC, RAM zeroed like anes's default power-on, no audio).
//! `nestest-log` compares anes's own trace format, so it is not run on tetanes-core and is counted as
//! not passed there.

use std::path::PathBuf;

use anes_conformance::{Console, Expected, Manifest, RomResult, Status, run_rom, run_rom_on};
use tetanes_core::common::{NesRegion, ResetKind};
use tetanes_core::control_deck::{Config, ControlDeck, HeadlessMode};

/// tetanes-core behind the protocols' interface.
struct Tetanes {
    deck: ControlDeck,
    frames: u64,
}

impl Tetanes {
    fn power_on(rom: &[u8]) -> Result<Tetanes, String> {
        let config = Config::default().with_headless_mode(HeadlessMode::NO_AUDIO);
        let mut deck = ControlDeck::with_config(config);
        deck.load_rom("rom", &mut std::io::Cursor::new(rom)).map_err(|e| format!("tetanes-core: {e}"))?;
        if deck.cart_region() != Some(NesRegion::Ntsc) && deck.cart_region().is_some() {
            return Err(format!("tetanes-core picked region {:?}", deck.cart_region()));
        }
        Ok(Tetanes { deck, frames: 0 })
    }
}

impl Console for Tetanes {
    fn run_frame(&mut self) -> u64 {
        // A clock error is tetanes-core's verdict on the program (e.g. a jammed CPU): the protocol
        // sees it through `jammed_at` or a timeout.
        let _ = self.deck.clock_frame();
        self.frames += 1;
        self.frames
    }

    fn peek(&self, addr: u16) -> u8 {
        self.deck.bus().peek(addr)
    }

    fn ppu_peek(&self, addr: u16) -> u8 {
        self.deck.bus().ppu_bus_peek(addr)
    }

    fn soft_reset(&mut self) {
        self.deck.reset(ResetKind::Soft);
    }

    fn jammed_at(&self) -> Option<u16> {
        self.deck.cpu_corrupted().then(|| self.deck.bus().cpu.pc)
    }
}

fn passed(result: &RomResult) -> bool {
    result.status == Status::Pass
}

fn main() {
    let manifest_path = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/manifest.toml")
    });
    let manifest = Manifest::load(&manifest_path).unwrap_or_else(|e| panic!("{e}"));
    let roms = manifest.select(None);
    let (mut anes_passes, mut tetanes_passes, mut scored) = (0, 0, 0);
    println!("{:<60} {:>8} {:>8}", "ROMs whose results differ", "anes", "tetanes");
    // Sequential: a few seconds per emulator for the whole manifest.
    for rom in &roms {
        let anes = run_rom(rom);
        let tetanes = run_rom_on(rom, &|_cart, bytes| Tetanes::power_on(bytes));
        if rom.expected == Expected::Pass {
            scored += 1;
            anes_passes += usize::from(passed(&anes));
            tetanes_passes += usize::from(passed(&tetanes));
        }
        if anes.status != tetanes.status {
            println!("{:<60} {:>8} {:>8}", rom.path, anes.status, tetanes.status);
        }
    }
    println!();
    println!("of the {scored} ROMs the manifest expects to pass ({} listed):", roms.len());
    println!("  anes          {anes_passes} pass");
    println!("  tetanes-core  {tetanes_passes} pass (nestest-log is not run on it: anes's trace format)");
}
