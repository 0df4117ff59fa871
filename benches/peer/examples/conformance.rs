//! The other half of the peer comparison: the conformance manifest run on anes, on tetanes-core and
//! on Nestopia, each ROM under the same result protocol (anes-conformance's, driven through its
//! `Console` trait), with the same frame budgets. Prints the ROMs whose results differ and, per
//! emulator, how many of the ROMs the manifest expects to pass do.
//!
//! `cargo run --release --manifest-path benches/peer/Cargo.toml --example conformance [-- MANIFEST]`
//! (CI runs it with `--profile bench` to reuse the benchmark's build).
//! (default: `../shared/conformance/manifest.toml` beside the repository).
//!
//! tetanes-core runs with its defaults (NTSC, RAM zeroed like anes's default power-on, no audio).
//! `nestest-log` compares anes's own trace format, so it is not run on tetanes-core and is counted as
//! not passed there.
//!
//! Nestopia (Debian's libretro core through `anes_peer_bench::libretro`, with `nestopia::config()`:
//! NTSC, RAM zeroed) can be read only through the memory its core exposes: system RAM ($0000-$07FF)
//! and, for battery-backed cartridges, save RAM ($6000-$7FFF); no nametables, and no way to tell a
//! jammed CPU. A ROM whose protocol needs more is reported as not scored, with the reason, and so is
//! a run that read an address outside that memory. The test ROMs have no battery, so a second row
//! runs Nestopia on a copy of each ROM with the header's battery bit set (byte 6, bit 1), which makes
//! the core expose the cartridge's $6000-$7FFF RAM as save RAM; nothing else in the file changes.
//! That RAM is not always the board's, though: a blargg ROM that times out without its signature
//! at $6001 ever showing there is reported as not scored too (all of mmc3_test_2 on Nestopia 1.52).
//! Without the core (`bash benches/peer/install-nestopia.sh`) the Nestopia rows say so.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use anes_conformance::{
    Console, Expected, Manifest, Protocol, RomEntry, RomResult, Status, run_rom, run_rom_on,
};
use anes_peer_bench::libretro::LibretroHost;
use anes_peer_bench::nestopia;
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

/// Nestopia behind the protocols' interface, reporting (when dropped) the first address a protocol
/// asked for that the core's exposed memory does not cover, and whether its save RAM ended with
/// blargg's signature at $6001.
struct Watched {
    host: LibretroHost,
    unreadable: Rc<Cell<Option<u16>>>,
    signature: Rc<Cell<bool>>,
}

impl Console for Watched {
    fn run_frame(&mut self) -> u64 {
        self.host.run_frame();
        self.host.frames()
    }

    fn peek(&self, addr: u16) -> u8 {
        Console::peek(&self.host, addr)
    }

    fn ppu_peek(&self, addr: u16) -> u8 {
        Console::ppu_peek(&self.host, addr)
    }

    fn soft_reset(&mut self) {
        self.host.reset();
    }

    fn jammed_at(&self) -> Option<u16> {
        self.host.jammed_at()
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.unreadable.set(self.host.first_unreadable_cpu_read());
        self.signature.set(self.host.save_ram().is_some_and(|ram| ram.get(1..4) == Some(&BLARGG_SIGNATURE)));
    }
}

/// What blargg's ROMs write to $6001-$6003 once $6000 holds their status.
const BLARGG_SIGNATURE: [u8; 3] = [0xDE, 0xB0, 0x61];

/// How Nestopia's run of one ROM ended.
enum NestopiaRun {
    Scored(RomResult),
    NotScored(String),
}

impl NestopiaRun {
    fn column(&self) -> String {
        match self {
            NestopiaRun::Scored(result) => result.status.to_string(),
            NestopiaRun::NotScored(_) => "-".to_owned(),
        }
    }
}

/// Why the protocol of `rom` needs more than the core's exposed memory, known before running it.
fn beyond_the_memory_maps(rom: &RomEntry) -> Option<&'static str> {
    match &rom.protocol {
        Protocol::NestestLog => Some("nestest-log compares anes's trace format"),
        Protocol::Unsupported(_) => Some("the runner does not support the ROM's protocol"),
        Protocol::Screen
            if rom.screen.as_ref().is_some_and(|s| !s.text_pass.is_empty() || !s.text_fail.is_empty()) =>
        {
            Some("the result is text in the nametables; the core exposes no video memory")
        }
        _ => None,
    }
}

/// The same file with the iNES header's battery bit set (byte 6, bit 1).
fn with_battery_bit(bytes: &[u8]) -> Vec<u8> {
    let mut copy = bytes.to_vec();
    if copy.len() >= 16 && copy.starts_with(b"NES\x1A") {
        copy[6] |= 0x02;
    }
    copy
}

fn run_nestopia(rom: &RomEntry, battery_bit: bool) -> NestopiaRun {
    if let Some(reason) = beyond_the_memory_maps(rom) {
        return NestopiaRun::NotScored(reason.to_owned());
    }
    let not_scored = RefCell::new(None);
    let unreadable = Rc::new(Cell::new(None));
    let signature = Rc::new(Cell::new(false));
    let result = run_rom_on(rom, &|_cart, bytes| {
        let bytes = if battery_bit { with_battery_bit(bytes) } else { bytes.to_vec() };
        let host = nestopia::load(&bytes).map_err(|err| err.to_string())?;
        if rom.protocol == Protocol::Blargg6000 && host.save_ram().is_none_or(|ram| ram.len() < 0x2000) {
            let reason = "the result is at $6000-$7FFF; the core exposes no save RAM for this cartridge";
            *not_scored.borrow_mut() = Some(reason.to_owned());
            return Err(reason.to_owned());
        }
        Ok(Watched { host, unreadable: Rc::clone(&unreadable), signature: Rc::clone(&signature) })
    });
    if let Some(reason) = not_scored.into_inner() {
        return NestopiaRun::NotScored(reason);
    }
    // blargg's ROMs write the signature first thing: a run that never shows it in the save RAM the
    // core exposes says only that this RAM is not the board's $6000-$7FFF.
    if rom.protocol == Protocol::Blargg6000 && result.status == Status::Timeout && !signature.get() {
        return NestopiaRun::NotScored(
            "the save RAM the core exposes never held blargg's signature at $6001".to_owned(),
        );
    }
    match unreadable.get() {
        Some(addr) => {
            NestopiaRun::NotScored(format!("the protocol read ${addr:04X}, outside the core's memory"))
        }
        None => NestopiaRun::Scored(result),
    }
}

/// Passes among the ROMs the manifest expects to pass, per Nestopia row, and why others were not scored.
#[derive(Default)]
struct NestopiaTally {
    passes: usize,
    scored: usize,
    not_scored: BTreeMap<String, usize>,
}

impl NestopiaTally {
    fn add(&mut self, run: &NestopiaRun) {
        match run {
            NestopiaRun::Scored(result) => {
                self.scored += 1;
                self.passes += usize::from(passed(result));
            }
            NestopiaRun::NotScored(reason) => *self.not_scored.entry(reason.clone()).or_default() += 1,
        }
    }

    fn print(&self, name: &str) {
        let not_scored: usize = self.not_scored.values().sum();
        println!("  {name:<30} {} pass of {} scored; {not_scored} not scored:", self.passes, self.scored);
        for (reason, count) in &self.not_scored {
            println!("  {:<30}   {count:>3} {reason}", "");
        }
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
    let nestopia_core = nestopia::core_path();
    let (mut anes_passes, mut tetanes_passes, mut scored) = (0, 0, 0);
    let (mut nestopia, mut nestopia_battery) = (NestopiaTally::default(), NestopiaTally::default());
    println!(
        "{:<60} {:>8} {:>8} {:>8} {:>8}",
        "ROMs whose results differ (-: not scored)", "anes", "tetanes", "nestopia", "+battery"
    );
    // Sequential: a few seconds per emulator for the whole manifest, and one libretro host at a time.
    for rom in &roms {
        let anes = run_rom(rom);
        let tetanes = run_rom_on(rom, &|_cart, bytes| Tetanes::power_on(bytes));
        let (plain, battery) = match &nestopia_core {
            Ok(_) => (Some(run_nestopia(rom, false)), Some(run_nestopia(rom, true))),
            Err(_) => (None, None),
        };
        if rom.expected == Expected::Pass {
            scored += 1;
            anes_passes += usize::from(passed(&anes));
            tetanes_passes += usize::from(passed(&tetanes));
            if let (Some(plain), Some(battery)) = (&plain, &battery) {
                nestopia.add(plain);
                nestopia_battery.add(battery);
            }
        }
        let column = |run: &Option<NestopiaRun>| run.as_ref().map_or("-".to_owned(), NestopiaRun::column);
        let differs = |run: &Option<NestopiaRun>| matches!(run, Some(NestopiaRun::Scored(result)) if result.status != anes.status);
        if anes.status != tetanes.status || differs(&plain) || differs(&battery) {
            println!(
                "{:<60} {:>8} {:>8} {:>8} {:>8}",
                rom.path,
                anes.status,
                tetanes.status,
                column(&plain),
                column(&battery)
            );
        }
    }
    println!();
    println!("of the {scored} ROMs the manifest expects to pass ({} listed):", roms.len());
    println!("  {:<30} {anes_passes} pass", "anes");
    println!(
        "  {:<30} {tetanes_passes} pass (nestest-log is not run on it: anes's trace format)",
        "tetanes-core"
    );
    match &nestopia_core {
        Ok(_) => {
            nestopia.print("Nestopia");
            nestopia_battery.print("Nestopia, battery bit set");
        }
        Err(err) => println!("  {:<30} not run: {err}", "Nestopia"),
    }
}
