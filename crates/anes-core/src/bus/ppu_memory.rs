//! The PPU's address bus as the console wires it: cartridge CHR and the console's nametable RAM,
//! with the M2 edges a lazy stretch owes the cartridge.

use crate::cart::Cartridge;
use crate::ppu::{PpuBus, PpuBusPeek};
use crate::region::{NtscModel, RegionModel};
use core::marker::PhantomData;

/// The PPU's address bus: cartridge CHR and the console's 2 KiB of nametable RAM (CIRAM). With
/// `REPLAY_M2`, M2 edges owed to the cartridge are delivered before each access, up to the dot the
/// access belongs to (the lazy schedule's stretches; see `PpuSync`); with `ANY_BOARD` too, through
/// the whole board dispatch (the boards with a delayed IRQ), else to the MMC3 or the MMC5 inline.
pub(crate) struct PpuMemory<
    'a,
    const REPLAY_M2: bool,
    R: RegionModel = NtscModel,
    const ANY_BOARD: bool = false,
> {
    pub cart: &'a mut Cartridge,
    pub ciram: &'a mut [u8; 0x800],
    pub m2: M2Replay,
    /// The region whose cycle and dot lengths space the replayed edges.
    pub region: PhantomData<R>,
}

/// M2 edges owed to the cartridge during a stretch of dots, by master clock.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct M2Replay {
    /// The next edge not yet delivered.
    pub next_edge_at: u64,
    /// The last edge owed (the current cycle's).
    pub last_edge_at: u64,
    /// The master clock at which the dot being run completes: edges before it come first.
    pub dot_at: u64,
}

impl M2Replay {
    /// Delivers the owed edges placed before master clock `limit`, a CPU cycle of region `R` apart
    /// (its length a constant: carried in `M2Replay`, it cost the demo's stretch loops 4% more host
    /// instructions, callgrind, 300 frames, as the struct no longer stayed in registers); with
    /// `ANY_BOARD`, through the whole board dispatch (see [`PpuMemory`]).
    #[inline(always)]
    pub(super) fn deliver_before<R: RegionModel, const ANY_BOARD: bool>(
        &mut self,
        cart: &mut Cartridge,
        limit: u64,
    ) {
        let cycle = R::TIMING.master_per_cpu_cycle;
        let end = limit.min(self.last_edge_at + 1);
        if self.next_edge_at < end {
            let edges = (end - self.next_edge_at).div_ceil(cycle);
            if ANY_BOARD {
                cart.replay_m2_edges_of_any_board(edges);
            } else {
                cart.replay_m2_edges(edges);
            }
            self.next_edge_at += edges * cycle;
        }
    }

    /// Counts the owed edges placed before master clock `limit` as delivered without delivering
    /// them: for edges between reads of the MMC5 at most a CPU cycle apart, which the next read's
    /// reset of its idle count would undo (see [`PpuBus::hear_reads`]).
    #[inline(always)]
    fn skip_before<R: RegionModel>(&mut self, limit: u64) {
        let cycle = R::TIMING.master_per_cpu_cycle;
        let end = limit.min(self.last_edge_at + 1);
        if self.next_edge_at < end {
            self.next_edge_at += (end - self.next_edge_at).div_ceil(cycle) * cycle;
        }
    }
}

impl<'a> PpuMemory<'a, false> {
    /// The bus where no M2 edge is owed: register accesses (the PPU has caught up) and the eager
    /// schedule.
    #[inline(always)]
    pub(crate) fn plain(cart: &'a mut Cartridge, ciram: &'a mut [u8; 0x800]) -> Self {
        PpuMemory { cart, ciram, m2: M2Replay::default(), region: PhantomData }
    }
}

impl<const REPLAY_M2: bool, R: RegionModel, const ANY_BOARD: bool> PpuMemory<'_, REPLAY_M2, R, ANY_BOARD> {
    #[inline(always)]
    fn deliver_m2(&mut self) {
        if REPLAY_M2 {
            self.m2.deliver_before::<R, ANY_BOARD>(self.cart, self.m2.dot_at);
        }
    }
}

impl<const REPLAY_M2: bool, R: RegionModel, const ANY_BOARD: bool> PpuBusPeek
    for PpuMemory<'_, REPLAY_M2, R, ANY_BOARD>
{
    #[inline]
    fn peek(&self, addr: u16) -> u8 {
        self.cart.ppu_peek(addr, self.ciram)
    }
    #[inline(always)]
    fn peek_pair(&self, first: u16, second: u16) -> (u8, u8) {
        self.cart.ppu_peek_pair(first, second, self.ciram)
    }
    #[inline(always)]
    fn peek_window(&self, addr: u16) -> &[u8; 0x400] {
        self.cart.ppu_window(addr, self.ciram)
    }
}

// Forced inline: the PPU's fetch loop calls these on every other dot, and each is a table lookup.
impl<const REPLAY_M2: bool, R: RegionModel, const ANY_BOARD: bool> PpuBus
    for PpuMemory<'_, REPLAY_M2, R, ANY_BOARD>
{
    #[inline(always)]
    fn read(&mut self, addr: u16) -> u8 {
        self.deliver_m2();
        self.cart.ppu_read(addr, self.ciram)
    }
    #[inline]
    fn write(&mut self, addr: u16, value: u8) {
        self.deliver_m2();
        self.cart.ppu_write(addr, value, self.ciram)
    }
    #[inline(always)]
    fn set_address(&mut self, addr: u16) {
        self.deliver_m2();
        self.cart.ppu_address(addr)
    }
    #[inline(always)]
    fn advance_dots(&mut self, dots: u32) {
        if REPLAY_M2 {
            self.m2.dot_at += u64::from(dots) * R::TIMING.master_per_dot;
        }
    }
    #[inline(always)]
    fn fetches_observed(&self) -> bool {
        REPLAY_M2 || self.cart.watches_ppu()
    }
    #[inline(always)]
    fn only_a12_observed(&self) -> bool {
        // The MMC3's: every access delivers the M2 edges owed before it.
        self.cart.sees_only_a12()
    }
    #[inline(always)]
    fn a12_high(&self) -> bool {
        self.cart.a12_high()
    }
    #[inline(always)]
    fn only_reads_observed(&self) -> bool {
        self.cart.hears_only_read_addresses()
    }
    /// The first read hears the M2 edges owed before it; the edges between the reads (two dots
    /// apart, so at most one in each gap) are skipped: each read clears what an edge counts, and
    /// one edge cannot reach the MMC5's idle threshold (`IDLE_M2_EDGES`, three).
    #[inline(always)]
    fn hear_reads<const N: usize>(&mut self, addrs: [u16; N]) {
        let dot = R::TIMING.master_per_dot;
        if REPLAY_M2 {
            self.m2.dot_at += dot;
            self.m2.deliver_before::<R, ANY_BOARD>(self.cart, self.m2.dot_at);
            self.m2.dot_at += (2 * N as u64 - 2) * dot;
            self.m2.skip_before::<R>(self.m2.dot_at);
            self.m2.dot_at += dot;
        }
        self.cart.hear_ppu_reads(addrs);
    }
}

/// Read-only view of the PPU's address bus.
pub(crate) struct PpuMemoryView<'a> {
    pub cart: &'a Cartridge,
    pub ciram: &'a [u8; 0x800],
}

impl PpuBusPeek for PpuMemoryView<'_> {
    #[inline]
    fn peek(&self, addr: u16) -> u8 {
        self.cart.ppu_peek(addr, self.ciram)
    }
    fn peek_window(&self, addr: u16) -> &[u8; 0x400] {
        self.cart.ppu_window(addr, self.ciram)
    }
}
