//! What every board implements ([`Mapper`]), with a default for everything a board may lack, and
//! what a board declares in its row of the table in `board.rs` ([`Abilities`]).
//!
//! A board's file holds its registers (a Pod state struct), how they map memory (`update_map`) and
//! only the abilities it has; a CPU-cycle counter is run lazily by the defaults here
//! ([`Mapper::catch_up`] and its kin), so a counting board says only how its counter runs over n
//! cycles ([`Mapper::run_cycles`]) and how far away its /IRQ is ([`Mapper::cycles_to_irq`]).

use super::expansion_audio::ExpansionChip;
use super::map::{BoardConfig, MemoryMap};
use super::rom_info::RomInfo;
use super::sst39sf_flash::FlashState;
use crate::layout::FieldLayout;

/// What a board has, as its row of the table declares it (Mesen2 declares its boards' sizes the same
/// way). Debug builds check that the board does no more than it declares (`Board::check_declared`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Abilities {
    /// A counter clocked by CPU cycles, run lazily ([`Mapper::ticked_at`]); a sound chip counts too.
    pub cpu_counter: bool,
    /// An /IRQ output ([`Mapper::irq_line`]).
    pub irq: bool,
    /// A sound chip ([`Mapper::expansion_chip`]).
    pub audio: bool,
    /// Watches the PPU's address bus ([`MemoryMap::watches_ppu`]).
    pub watches_ppu: bool,
    /// Counts M2 edges against the PPU's accesses (an A12 filter, an idle detector, an IRQ delay),
    /// so whoever runs the PPU must deliver each CPU cycle's edge in its place among the dots.
    pub counts_m2_edges: bool,
    /// Its /IRQ rises M2 edges after the event that causes it (an A12 clock, a count of M2 edges):
    /// the lazy schedule also predicts that edge ([`Mapper::m2_edges_before_irq`]), and replays M2
    /// edges to the board through the whole dispatch (the MMC3's and the MMC5's replay stays two
    /// inline arms). The TC0690, the RAMBO-1.
    pub delayed_irq: bool,
    /// Its /IRQ cannot be predicted by the lazy schedule (from the A12 clocks before it,
    /// [`Mapper::a12_clocks_before_irq`], and the M2 edges, [`Mapper::m2_edges_before_irq`]): the
    /// console runs the PPU eagerly, every CPU cycle. No board declares it now: the TC0690 and the
    /// RAMBO-1, which did, declare `delayed_irq` since issue 48.
    pub eager_ppu: bool,
    /// Registers at $4020-$7FFF ([`MemoryMap::low_registers`]).
    pub low_registers: bool,
    /// Reads of $4020-$5FFF answered by the board ([`Mapper::read_low`]).
    pub low_reads: bool,
    /// Its CPU-cycle counter is shown by, and changed through, $4020-$5FFF: runs to the cycle of
    /// each access there first (the Namco 163's IRQ counter and sound RAM).
    pub low_access_runs_counter: bool,
    /// CPU reads of $8000-$FFFF may reach the board ([`Mapper::prg_reads_seen`]).
    pub prg_reads: bool,
    /// A flash chip for PRG the game can write ([`Mapper::has_flash`]).
    pub flash: bool,
    /// CHR RAM an iNES 1.0 header implies at least (it can only say 8 KiB): CPROM's 16 KiB,
    /// UNROM 512's and Action 53's 32 KiB.
    pub ines1_chr_ram: usize,
    /// CHR RAM whatever the header says (GTROM's pattern half of its 32 KiB); 0: the header's.
    pub fixed_chr_ram: usize,
    /// RAM on the PPU side after CHR, in place of a four-screen board's 2 KiB: the MMC5's ExRAM,
    /// GTROM's nametable half, the console's CIRAM that the Namco 163 keeps.
    pub nametable_ram: usize,
    /// Pattern table writes can reach that RAM (the Namco 163 maps it as CHR).
    pub chr_maps_nametable_ram: bool,
    /// 1 KiB pages derived from the registers after the state-bearing part (the MMC5's fill page
    /// and page of zeros: [`Mapper::refresh_pages`]).
    pub derived_pages: usize,
    /// PRG RAM an iNES 1.0 header implies at least (the MMC5's 64 KiB).
    pub ines1_prg_ram: usize,
}

impl Abilities {
    /// A board of registers at $8000-$FFFF and nothing else.
    pub const NONE: Abilities = Abilities {
        cpu_counter: false,
        irq: false,
        audio: false,
        watches_ppu: false,
        counts_m2_edges: false,
        delayed_irq: false,
        eager_ppu: false,
        low_registers: false,
        low_reads: false,
        low_access_runs_counter: false,
        prg_reads: false,
        flash: false,
        ines1_chr_ram: 0,
        fixed_chr_ram: 0,
        nametable_ram: 0,
        chr_maps_nametable_ram: false,
        derived_pages: 0,
        ines1_prg_ram: 0,
    };
}

/// Where the data of a PPU read comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fetch {
    /// The bank map, as for any board (nametables, ExRAM and fill pages).
    Map,
    /// Byte `offset` of CHR (taken modulo its size).
    Chr(usize),
    /// A byte the chip drives itself (extended or split attributes, split tiles).
    Value(u8),
}

/// A board: its registers and how they map memory. Every method but [`Mapper::new`],
/// [`Mapper::update_map`] and the state accessors has a default for a board without the ability.
pub(super) trait Mapper {
    /// The registers, as snapshots and the state hash store them.
    type State: bytemuck::Pod;

    /// The board in its power-on state.
    fn new(config: BoardConfig) -> Self
    where
        Self: Sized;

    /// Whether the board models `submapper` of `mapper`, one of its row's mapper numbers.
    fn supports(_mapper: u16, _submapper: u8) -> bool
    where
        Self: Sized,
    {
        true
    }

    /// The registers.
    fn state(&self) -> &Self::State;

    /// The registers, to restore (call [`Mapper::update_map`] after).
    fn state_mut(&mut self) -> &mut Self::State;

    /// The names of the state's bytes, for field-level diffs (`mapper.irq_counter`); empty for a
    /// board without registers. Checked against the state's size for every row of the table.
    const FIELDS: &'static [FieldLayout] = &[];

    /// The registers as bytes.
    fn state_bytes(&self) -> &[u8] {
        bytemuck::bytes_of(self.state())
    }

    /// The registers as mutable bytes (snapshot restore).
    fn state_bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::bytes_of_mut(self.state_mut())
    }

    /// Applies what the header says beyond [`BoardConfig`]; called after every [`Mapper::new`].
    fn configure(&mut self, _info: &RomInfo) {}

    /// Recomputes every window of `map` from the registers.
    fn update_map(&self, map: &mut MemoryMap);

    /// A CPU write to $8000-$FFFF (after any bus conflict) on CPU cycle `cpu_cycle`. Returns true
    /// when the map must be updated.
    #[inline]
    fn write_register(&mut self, _addr: u16, _value: u8, _cpu_cycle: u64) -> bool {
        false
    }

    /// A CPU write to $4020-$7FFF on a board with registers there ([`MemoryMap::low_registers`]).
    /// Returns true when the map must be updated.
    fn write_low(&mut self, _addr: u16, _value: u8, _cpu_cycle: u64) -> bool {
        false
    }

    /// A CPU read of $4020-$5FFF ([`Abilities::low_reads`]); `extra_ram` is the PPU-side RAM after
    /// CHR ([`Abilities::nametable_ram`]).
    fn read_low(&mut self, addr: u16, open_bus: u8, extra_ram: &[u8]) -> u8 {
        self.peek_low(addr, open_bus, extra_ram)
    }

    /// What [`Mapper::read_low`] would return, without side effects.
    fn peek_low(&self, _addr: u16, open_bus: u8, _extra_ram: &[u8]) -> u8 {
        open_bus
    }

    /// A read of $6000-$7FFF where the map says [`super::map::PrgRamRead::BoardRam`].
    fn peek_board_ram(&self, _addr: u16, open_bus: u8) -> u8 {
        open_bus
    }

    /// The CPU cycle the board's CPU-cycle counter has been run through (derived, not state: set by
    /// [`Mapper::resync`]); `None` for a board without one ([`Abilities::cpu_counter`]).
    fn ticked_at(&mut self) -> Option<&mut u64> {
        None
    }

    /// [`Mapper::ticked_at`], read.
    fn ticked(&self) -> u64 {
        0
    }

    /// Runs the counter (and sound chip) over `cycles` CPU cycles, in closed form: equal to that many
    /// single cycles (each counting board's tests compare the two).
    fn run_cycles(&mut self, _cycles: u64) {}

    /// CPU cycles from the one run through last to the one whose counter clock asserts /IRQ;
    /// `None` when no cycle can (disabled, or already asserted: only a write changes it then).
    fn cycles_to_irq(&self) -> Option<u64> {
        None
    }

    /// Runs the counter through CPU cycle `cpu_cycle`.
    #[inline]
    fn catch_up(&mut self, cpu_cycle: u64) {
        let Some(ticked) = self.ticked_at() else { return };
        let cycles = cpu_cycle.saturating_sub(*ticked);
        *ticked = (*ticked).max(cpu_cycle);
        self.run_cycles(cycles);
    }

    /// Declares the counter current at `cpu_cycle` (power-on, restore: the state was set, not run).
    fn resync(&mut self, cpu_cycle: u64) {
        if let Some(ticked) = self.ticked_at() {
            *ticked = cpu_cycle;
        }
    }

    /// The CPU cycle at which the counter asserts /IRQ unless a write intervenes; `u64::MAX` when it
    /// cannot.
    fn irq_due_cycle(&self) -> u64 {
        self.cycles_to_irq().map_or(u64::MAX, |cycles| self.ticked().saturating_add(cycles))
    }

    /// The /IRQ output (true = asserted).
    #[inline]
    fn irq_line(&self) -> bool {
        false
    }

    /// The sound chip (`expansion_audio.rs`).
    fn expansion_chip(&self) -> Option<ExpansionChip> {
        None
    }

    /// The sound chip's DAC level as of the cycle run through last.
    fn expansion_level(&self) -> i32 {
        0
    }

    /// The PPU put `addr` on its bus (`read`: and read from it), on a board that watches it. Returns
    /// true when the map must be updated.
    fn observe_ppu(&mut self, _addr: u16, _read: bool) -> bool {
        false
    }

    /// `edges` CPU cycles (M2) began, with no PPU access between them.
    #[inline(always)]
    fn cpu_cycles(&mut self, _edges: u64) {}

    /// The level of PPU A12 the board saw last, where it watches A12 (true = high).
    #[inline(always)]
    fn a12_high(&self) -> bool {
        false
    }

    /// PPU A12 counter clocks before /IRQ could be asserted (`u32::MAX`: not by the PPU).
    fn a12_clocks_before_irq(&self) -> u32 {
        u32::MAX
    }

    /// M2 edges the A12 counter has seen since A12 fell, `None` while A12 is high; without such a
    /// counter, as if A12 had been low for long.
    fn a12_low_m2_edges(&self) -> Option<u8> {
        Some(u8::MAX)
    }

    /// M2 edges from the last one delivered to the one on which /IRQ rises, unless a register write
    /// or a PPU access intervenes: an IRQ delay under way, or a counter of M2 edges (`u32::MAX`:
    /// none coming that way). The lazy PPU schedule replays M2 edges only when it catches the PPU
    /// up, so it catches up by that edge's cycle.
    fn m2_edges_before_irq(&self) -> u32 {
        u32::MAX
    }

    /// The PRG is a flash chip the game can write ([`Abilities::flash`]): its PRG ROM is then state.
    fn has_flash(&self) -> bool {
        false
    }

    /// A CPU write to `addr` ($8000-$FFFF) reaches the flash chip.
    fn flash_port(&self, _addr: u16) -> bool {
        false
    }

    /// The flash chip's command state.
    fn flash_mut(&mut self) -> Option<&mut FlashState> {
        None
    }

    /// CHR RAM beside CHR ROM, in bytes (TQROM's; the header's NES 2.0 size wins).
    fn chr_ram_beside_rom(&self) -> Option<usize> {
        None
    }

    /// A 1 KiB page after the state-bearing part of CHR reads as the PPU address's low byte (a
    /// disabled CHR chip: open bus).
    fn chr_open_bus_page(&self, _chr_is_ram: bool) -> bool {
        false
    }

    /// The board has no PRG RAM whatever the header says (its battery memory is elsewhere).
    fn no_prg_ram(&self) -> bool {
        false
    }

    /// The CPU address of PRG RAM's first byte.
    fn prg_ram_cpu_address(&self) -> u16 {
        0x6000
    }

    /// A serial EEPROM, which keeps its contents across power cycles like battery RAM.
    fn eeprom_mut(&mut self) -> Option<&mut [u8]> {
        None
    }

    /// The battery-backed memory the board holds itself (an EEPROM, a chip's RAM), given the
    /// header's `info`.
    fn battery_memory(&self, _info: &RomInfo) -> Option<&[u8]> {
        None
    }

    /// [`Mapper::battery_memory`], writable.
    fn battery_memory_mut(&mut self, _info: &RomInfo) -> Option<&mut [u8]> {
        None
    }

    /// CPU reads of $8000-$FFFF reach the board (the MMC5's PCM in read mode).
    fn prg_reads_seen(&self) -> bool {
        false
    }

    /// The CPU read `value` from PRG at `addr`, where [`Mapper::prg_reads_seen`].
    fn prg_read(&mut self, _addr: u16, _value: u8) {}

    /// Rewrites the pages [`Abilities::derived_pages`] declares from the registers.
    fn refresh_pages(&self, _pages: &mut [u8]) {}

    /// A CPU write of $4020-$7FFF at `addr` stores into the RAM after CHR: `Some(None)` where it is
    /// that RAM's port but stores nothing, `Some(Some(byte))` where it stores `byte` (at `addr`
    /// modulo the RAM's size); `None` elsewhere.
    fn extra_ram_write(&self, _addr: u16, _value: u8) -> Option<Option<u8>> {
        None
    }

    /// The CPU wrote PPU register `addr` ($2000-$3FFF).
    #[inline]
    fn ppu_register_written(&mut self, _addr: u16, _value: u8) {}

    /// CPU reads of $5000-$5FFF show the PPU's progress: the PPU must catch up to them.
    fn low_reads_see_ppu(&self) -> bool {
        false
    }

    /// The /IRQ may rise or fall at the start of a PPU line: the lazy schedule runs the PPU to each
    /// line's dot 2.
    fn irq_at_line_starts(&self) -> bool {
        false
    }
}

/// Implements [`Mapper::state`] and [`Mapper::state_mut`] (and with `ticked:` the counter's
/// [`Mapper::ticked_at`] and [`Mapper::ticked`]) for a board that keeps its registers in `field`.
macro_rules! state_in {
    ($field:ident: $state:ty, ticked: $ticked:ident) => {
        $crate::cart::mapper::state_in!($field: $state);
        fn ticked_at(&mut self) -> Option<&mut u64> {
            Some(&mut self.$ticked)
        }
        fn ticked(&self) -> u64 {
            self.$ticked
        }
    };
    ($($field:ident).+: $state:ty) => {
        type State = $state;
        const FIELDS: &'static [$crate::layout::FieldLayout] =
            <$state as $crate::layout::StateLayout>::FIELDS;
        fn state(&self) -> &$state {
            &self.$($field).+
        }
        fn state_mut(&mut self) -> &mut $state {
            &mut self.$($field).+
        }
    };
}
pub(super) use state_in;
