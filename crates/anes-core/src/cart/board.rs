//! The board table: one row per board gives its enum variant, the mapper numbers it serves and
//! what it declares it has ([`Abilities`]); the `Board` enum, its dispatch, [`SUPPORTED_MAPPERS`]
//! and the mapper lookup all come from the rows (tetanes-core's `boards!` has the same shape).
//! Adding a board is its file (a [`Mapper`] implementation) and its row.
//!
//! Static dispatch: a `match` per call, which the compiler folds where boards share the trait's
//! default. The few calls on the CPU's and PPU's hot paths test the MMC3 (and MMC5) first and keep
//! the rest out of line (docs/PERFORMANCE.md, "The board dispatch in the hot paths").

use super::expansion_audio::ExpansionChip;
use super::m000_nrom::Nrom;
use super::m001_sxrom::Sxrom;
use super::m002_uxrom::Uxrom;
use super::m003_cnrom::Cnrom;
use super::m004_txrom::{Mmc3Revision, Txrom};
use super::m005_mmc5::{EXRAM_LEN, INES1_PRG_RAM_LEN, Mmc5};
use super::m007_axrom::Axrom;
use super::m009_pxrom::Pxrom;
use super::m010_fxrom::Fxrom;
use super::m011_color_dreams::ColorDreams;
use super::m013_cprom::{CPROM_CHR_RAM_LEN, Cprom};
use super::m016_bandai_fcg::BandaiFcg;
use super::m018_jaleco_ss88006::Ss88006;
use super::m019_namco163::{NAMCO163_NAMETABLE_RAM_LEN, Namco163};
use super::m021_vrc2_vrc4::Vrc;
use super::m024_vrc6::Vrc6;
use super::m028_action53::{ACTION53_CHR_RAM_LEN, Action53};
use super::m030_unrom512::{UNROM512_CHR_RAM_LEN, Unrom512};
use super::m032_irem_g101::G101;
use super::m033_taito_tc0190::Tc0190;
use super::m034_bnrom_nina001::Mapper34;
use super::m048_taito_tc0690::Tc0690;
use super::m064_rambo1::Rambo1;
use super::m065_irem_h3001::H3001;
use super::m066_gxrom::Gxrom;
use super::m067_sunsoft3::Sunsoft3;
use super::m068_sunsoft4::Sunsoft4;
use super::m069_fme7::Fme7;
use super::m070_bandai::Bandai70;
use super::m071_camerica::Camerica;
use super::m073_vrc3::Vrc3;
use super::m075_vrc1::Vrc1;
use super::m076_namcot3446::Namcot3446;
use super::m078_irem_74hc161::Mapper78;
use super::m079_nina03_06::Nina03;
use super::m080_taito_x1005::X1005;
use super::m082_taito_x1017::X1017;
use super::m085_vrc7::Vrc7;
use super::m086_jaleco_jf13::Jf13;
use super::m087_jaleco_jf05::Mapper87;
use super::m088_namcot3443::Namcot3443;
use super::m089_sunsoft2::Sunsoft2;
use super::m092_jaleco_jf19::Jf19;
use super::m093_sunsoft2_3r::Sunsoft2_3r;
use super::m094_un1rom::Un1rom;
use super::m095_namcot3425::Namcot3425;
use super::m097_irem_tam_s1::TamS1;
use super::m105_nes_event::NesEvent;
use super::m111_gtrom::{GTROM_CHR_RAM_LEN, GTROM_NAMETABLE_RAM_LEN, Gtrom};
use super::m140_jaleco_jf11::Jf11;
use super::m152_bandai::Bandai152;
use super::m154_namcot3453::Namcot3453;
use super::m155_mmc1a::Mmc1a;
use super::m180_unrom_fixed_first::Unrom180;
use super::m184_sunsoft1::Sunsoft1;
use super::m185_cnrom_protected::Cnrom185;
use super::m206_namco108::Dxrom;
use super::m210_namco175_340::Namco175;
use super::m232_quattro::Quattro;
use super::map::{BoardConfig, MemoryMap};
use super::mapper::{Abilities, Fetch, Mapper};
use super::rom_info::RomInfo;
use super::sst39sf_flash::FlashState;

const NONE: Abilities = Abilities::NONE;

/// Expands the rows into the enum, its constructor, its declared abilities, the mapper list and the
/// `each_board!` dispatch. `$d` is a `$` token, so that the inner macro can have variables.
macro_rules! boards {
    ($d:tt; $($(#[$doc:meta])* $variant:ident($ty:ty) = [$($mapper:literal),+] $abilities:expr;)+) => {
        /// One of the supported boards, with its register state.
        // The Bandai variant holds its serial EEPROM's 256 bytes inline: one board per console,
        // built at power-on, where a `Box` would allocate at every power cycle (a frame command:
        // `tests/alloc_free.rs`).
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub(super) enum Board {
            $($(#[$doc])* $variant($ty),)+
        }

        // A board counts M2 edges against PPU accesses it watches (at compile time).
        $(const _: () = assert!(!($abilities).counts_m2_edges || ($abilities).watches_ppu);)+

        // Every row's field names tile its state exactly (at compile time).
        $(const _: () = crate::layout::assert_covers(
            <$ty as Mapper>::FIELDS,
            core::mem::size_of::<<$ty as Mapper>::State>(),
        );)+

        /// The names of the register bytes of the board serving `mapper`; `None` for a mapper no
        /// row lists or a board without registers.
        pub fn mapper_fields(mapper: u16) -> Option<&'static [crate::layout::FieldLayout]> {
            let fields = match mapper {
                $($($mapper)|+ => <$ty as Mapper>::FIELDS,)+
                _ => return None,
            };
            (!fields.is_empty()).then_some(fields)
        }

        /// Mapper numbers this core implements, ascending (the order shown to users).
        pub const SUPPORTED_MAPPERS: [u16; [$($($mapper),+),+].len()] = ascending([$($($mapper),+),+]);

        impl Board {
            /// The board for mapper `config.mapper`; `None` for a mapper no row lists.
            pub fn new(config: BoardConfig) -> Option<Board> {
                Some(match config.mapper {
                    $($($mapper)|+ => Board::$variant(<$ty as Mapper>::new(config)),)+
                    _ => return None,
                })
            }

            /// Whether a row lists `mapper` and its board models `submapper`.
            pub fn supports(mapper: u16, submapper: u8) -> bool {
                match mapper {
                    $($($mapper)|+ => <$ty as Mapper>::supports(mapper, submapper),)+
                    _ => false,
                }
            }

            /// What the board's row declares.
            #[inline(always)]
            pub fn declared(&self) -> Abilities {
                match self {
                    $(Board::$variant(_) => $abilities,)+
                }
            }

            /// The board's /IRQ output (true = asserted); `None` for the boards whose row declares
            /// none.
            pub fn irq_output(&self) -> Option<bool> {
                match self {
                    $(Board::$variant(m) => ($abilities).irq.then(|| m.irq_line()),)+
                }
            }
        }

        /// Expands to `$body` with `$m` bound to the board inside whichever variant `$board` holds.
        macro_rules! each_board {
            ($d board:expr, $d m:ident => $d body:expr) => {
                match $d board {
                    $(Board::$variant($d m) => $d body,)+
                }
            };
        }
    };
}

/// A computation over a board's register state that knows its type ([`Board::visit_state`]).
pub(crate) trait StateVisitor {
    type Output;
    fn visit<S: bytemuck::Pod>(self, state: &S) -> Self::Output;
}

/// `mappers` in ascending order (the table lists boards, not numbers, in order).
const fn ascending<const N: usize>(mut mappers: [u16; N]) -> [u16; N] {
    let mut i = 1;
    while i < N {
        let mut j = i;
        while j > 0 && mappers[j - 1] > mappers[j] {
            let swap = mappers[j - 1];
            mappers[j - 1] = mappers[j];
            mappers[j] = swap;
            j -= 1;
        }
        i += 1;
    }
    mappers
}

boards! { $;
    /// NROM
    Nrom(Nrom) = [0] NONE;
    /// MMC1
    Sxrom(Sxrom) = [1] NONE;
    /// UxROM
    Uxrom(Uxrom) = [2] NONE;
    /// CNROM
    Cnrom(Cnrom) = [3] NONE;
    /// MMC3, or MMC6 with submapper 1
    Txrom(Txrom) = [4, 118, 119] Abilities { irq: true, watches_ppu: true, counts_m2_edges: true, ..NONE };
    /// MMC5
    Mmc5(Mmc5) = [5] Abilities { cpu_counter: true, irq: true, audio: true, watches_ppu: true, counts_m2_edges: true, low_registers: true, low_reads: true, prg_reads: true, nametable_ram: EXRAM_LEN, derived_pages: 2, ines1_prg_ram: INES1_PRG_RAM_LEN, ..NONE };
    /// AxROM
    Axrom(Axrom) = [7] NONE;
    /// MMC2
    Pxrom(Pxrom) = [9] Abilities { watches_ppu: true, ..NONE };
    /// MMC4
    Fxrom(Fxrom) = [10] Abilities { watches_ppu: true, ..NONE };
    /// Color Dreams
    ColorDreams(ColorDreams) = [11] NONE;
    /// CPROM
    Cprom(Cprom) = [13] Abilities { ines1_chr_ram: CPROM_CHR_RAM_LEN, ..NONE };
    /// Bandai FCG-1/2, LZ93D50
    BandaiFcg(BandaiFcg) = [16, 153, 159] Abilities { cpu_counter: true, irq: true, low_registers: true, ..NONE };
    /// Jaleco SS 88006
    Ss88006(Ss88006) = [18] Abilities { cpu_counter: true, irq: true, ..NONE };
    /// Namco 129/163
    Namco163(Namco163) = [19] Abilities { cpu_counter: true, irq: true, audio: true, low_registers: true, low_reads: true, low_access_runs_counter: true, nametable_ram: NAMCO163_NAMETABLE_RAM_LEN, chr_maps_nametable_ram: true, ..NONE };
    /// VRC2, VRC4
    Vrc(Vrc) = [21, 22, 23, 25] Abilities { cpu_counter: true, irq: true, low_registers: true, ..NONE };
    /// VRC6a, VRC6b
    Vrc6(Vrc6) = [24, 26] Abilities { cpu_counter: true, irq: true, audio: true, ..NONE };
    /// Action 53
    Action53(Action53) = [28] Abilities { low_registers: true, ines1_chr_ram: ACTION53_CHR_RAM_LEN, ..NONE };
    /// UNROM 512
    Unrom512(Unrom512) = [30] Abilities { flash: true, ines1_chr_ram: UNROM512_CHR_RAM_LEN, ..NONE };
    /// Irem G-101
    G101(G101) = [32] NONE;
    /// Taito TC0190
    Tc0190(Tc0190) = [33] NONE;
    /// BNROM, NINA-001
    Mapper34(Mapper34) = [34] Abilities { low_registers: true, ..NONE };
    /// Taito TC0690
    Tc0690(Tc0690) = [48] Abilities { irq: true, watches_ppu: true, counts_m2_edges: true, delayed_irq: true, ..NONE };
    /// Tengen RAMBO-1
    Rambo1(Rambo1) = [64] Abilities { irq: true, watches_ppu: true, counts_m2_edges: true, delayed_irq: true, ..NONE };
    /// Irem H3001
    H3001(H3001) = [65] Abilities { cpu_counter: true, irq: true, ..NONE };
    /// GxROM
    Gxrom(Gxrom) = [66] NONE;
    /// Sunsoft-3
    Sunsoft3(Sunsoft3) = [67] Abilities { cpu_counter: true, irq: true, ..NONE };
    /// Sunsoft-4
    Sunsoft4(Sunsoft4) = [68] NONE;
    /// Sunsoft FME-7, 5A, 5B
    Fme7(Fme7) = [69] Abilities { cpu_counter: true, irq: true, audio: true, ..NONE };
    /// Bandai discrete
    Bandai70(Bandai70) = [70] NONE;
    /// Camerica BF909x
    Camerica(Camerica) = [71] NONE;
    /// VRC3
    Vrc3(Vrc3) = [73] Abilities { cpu_counter: true, irq: true, ..NONE };
    /// VRC1
    Vrc1(Vrc1) = [75] NONE;
    /// Namco 108 on NAMCOT-3446
    Namcot3446(Namcot3446) = [76] NONE;
    /// Irem: Holy Diver, Cosmo Carrier
    Mapper78(Mapper78) = [78] NONE;
    /// NINA-03/06
    Nina03(Nina03) = [79, 113] Abilities { low_registers: true, ..NONE };
    /// Taito X1-005
    X1005(X1005) = [80, 207] Abilities { low_registers: true, ..NONE };
    /// Taito X1-017
    X1017(X1017) = [82] Abilities { low_registers: true, ..NONE };
    /// VRC7a, VRC7b
    Vrc7(Vrc7) = [85] Abilities { cpu_counter: true, irq: true, audio: true, ..NONE };
    /// Jaleco JF-13
    Jf13(Jf13) = [86] Abilities { low_registers: true, ..NONE };
    /// Jaleco/Konami CHR latch
    Mapper87(Mapper87) = [87] Abilities { low_registers: true, ..NONE };
    /// Namco 108 on NAMCOT-3443
    Namcot3443(Namcot3443) = [88] NONE;
    /// Sunsoft-2 on the Sunsoft-3 board
    Sunsoft2(Sunsoft2) = [89] NONE;
    /// Jaleco JF-19
    Jf19(Jf19) = [92] NONE;
    /// Sunsoft-2 on the Sunsoft-3R board
    Sunsoft2_3r(Sunsoft2_3r) = [93] NONE;
    /// UN1ROM
    Un1rom(Un1rom) = [94] NONE;
    /// Namco 108 on NAMCOT-3425
    Namcot3425(Namcot3425) = [95] NONE;
    /// Irem TAM-S1
    TamS1(TamS1) = [97] NONE;
    /// NES-EVENT
    NesEvent(NesEvent) = [105] Abilities { cpu_counter: true, irq: true, ..NONE };
    /// GTROM
    Gtrom(Gtrom) = [111] Abilities { low_registers: true, flash: true, fixed_chr_ram: GTROM_CHR_RAM_LEN, nametable_ram: GTROM_NAMETABLE_RAM_LEN, ..NONE };
    /// Jaleco JF-11/JF-14
    Jf11(Jf11) = [140] Abilities { low_registers: true, ..NONE };
    /// Bandai discrete, one-screen mirroring
    Bandai152(Bandai152) = [152] NONE;
    /// Namco 108 on NAMCOT-3453
    Namcot3453(Namcot3453) = [154] NONE;
    /// MMC1A
    Mmc1a(Mmc1a) = [155] NONE;
    /// Tengen 800037: RAMBO-1, nametables from CHR A17
    Tengen800037(super::m158_tengen_800037::Tengen800037) = [158] Abilities { irq: true, watches_ppu: true, counts_m2_edges: true, delayed_irq: true, ..NONE };
    /// UNROM, first bank fixed
    Unrom180(Unrom180) = [180] NONE;
    /// Sunsoft-1
    Sunsoft1(Sunsoft1) = [184] Abilities { low_registers: true, ..NONE };
    /// CNROM with copy protection
    Cnrom185(Cnrom185) = [185] NONE;
    /// Namco 108 on DxROM
    Dxrom(Dxrom) = [206] NONE;
    /// Namco 175/340
    Namco175(Namco175) = [210] NONE;
    /// Camerica Quattro
    Quattro(Quattro) = [232] NONE;
}

impl Board {
    /// Applies what the header says beyond [`BoardConfig`]; called after every [`Board::new`].
    pub fn configure(&mut self, info: &RomInfo) {
        each_board!(self, m => m.configure(info))
    }

    /// The board's PRG is a flash chip the game can write: its PRG ROM is then state.
    pub fn has_flash(&self) -> bool {
        each_board!(self, m => m.has_flash())
    }

    /// A CPU write to `addr` ($8000-$FFFF) reaches the flash chip.
    pub fn flash_port(&self, addr: u16) -> bool {
        each_board!(self, m => m.flash_port(addr))
    }

    /// The flash chip's command state, on the boards with one.
    pub fn flash_mut(&mut self) -> Option<&mut FlashState> {
        each_board!(self, m => m.flash_mut())
    }

    /// Recomputes every window of `map` from the board's registers.
    pub fn update_map(&self, map: &mut MemoryMap) {
        each_board!(self, m => m.update_map(map))
    }

    /// A CPU write to $8000-$FFFF (after any bus conflict). Returns true when the map must be updated.
    #[inline]
    pub fn write_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        each_board!(self, m => m.write_register(addr, value, cpu_cycle))
    }

    /// A CPU write to $4020-$7FFF on a board with registers there ([`MemoryMap::low_registers`]).
    /// Returns true when the map must be updated.
    pub fn write_low(&mut self, addr: u16, value: u8, cpu_cycle: u64) -> bool {
        each_board!(self, m => m.write_low(addr, value, cpu_cycle))
    }

    /// A CPU read of $4020-$5FFF.
    pub fn read_low(&mut self, addr: u16, open_bus: u8, extra_ram: &[u8]) -> u8 {
        each_board!(self, m => m.read_low(addr, open_bus, extra_ram))
    }

    /// What [`Board::read_low`] would return, without side effects.
    pub fn peek_low(&self, addr: u16, open_bus: u8, extra_ram: &[u8]) -> u8 {
        each_board!(self, m => m.peek_low(addr, open_bus, extra_ram))
    }

    /// A read of RAM inside the board's chip at $6000-$7FFF.
    pub fn peek_board_ram(&self, addr: u16, open_bus: u8) -> u8 {
        each_board!(self, m => m.peek_board_ram(addr, open_bus))
    }

    /// Runs the board's CPU-cycle counters and sound chip through CPU cycle `cpu_cycle`.
    pub fn catch_up(&mut self, cpu_cycle: u64) {
        each_board!(self, m => m.catch_up(cpu_cycle))
    }

    /// The CPU cycle the board's CPU-cycle counters have run through; 0 for a board without them.
    #[inline]
    pub fn ticked(&self) -> u64 {
        each_board!(self, m => m.ticked())
    }

    /// Declares the board's CPU-cycle counters current at `cpu_cycle` (power-on, restore).
    pub fn resync(&mut self, cpu_cycle: u64) {
        each_board!(self, m => m.resync(cpu_cycle))
    }

    /// The CPU cycle at which the board's CPU-cycle counter asserts /IRQ unless a write intervenes;
    /// `u64::MAX` for boards without one, or when it cannot.
    pub fn irq_due_cycle(&self) -> u64 {
        each_board!(self, m => m.irq_due_cycle())
    }

    /// The board's sound chip (`expansion_audio.rs`), if it has one.
    pub fn expansion_chip(&self) -> Option<ExpansionChip> {
        each_board!(self, m => m.expansion_chip())
    }

    /// The sound chip's DAC level as of the cycle the board was run through (0 without a chip).
    pub fn expansion_level(&self) -> i32 {
        each_board!(self, m => m.expansion_level())
    }

    /// The PPU put `addr` on its bus (`read`: and read from it). Returns true when the map must be
    /// updated. Only called when [`MemoryMap::watches_ppu`] is set.
    #[inline]
    pub fn observe_ppu(&mut self, addr: u16, read: bool) -> bool {
        each_board!(self, m => m.observe_ppu(addr, read))
    }

    /// `edges` CPU cycles (M2) began, with no PPU access between them.
    #[inline(always)]
    pub fn cpu_cycles(&mut self, edges: u64) {
        each_board!(self, m => m.cpu_cycles(edges))
    }

    /// The level of PPU A12 the board saw last, where it watches A12 (true = high).
    #[inline(always)]
    pub fn a12_high(&self) -> bool {
        each_board!(self, m => m.a12_high())
    }

    /// PPU A12 counter clocks before the board's /IRQ could be asserted (`u32::MAX`: not by the PPU).
    /// The MMC3's inline, the others' (the boards with a delayed IRQ) out of line: through the
    /// dispatch, the MMC3 demo cost 0.2% more host instructions per frame.
    #[inline(always)]
    pub fn a12_clocks_before_irq(&self) -> u32 {
        match self {
            Board::Txrom(m) => m.a12_clocks_before_irq(),
            _ => self.a12_clocks_before_irq_of_any_board(),
        }
    }

    /// [`Board::a12_clocks_before_irq`] through the dispatch.
    #[inline(never)]
    fn a12_clocks_before_irq_of_any_board(&self) -> u32 {
        each_board!(self, m => m.a12_clocks_before_irq())
    }

    /// M2 edges the A12 counter has seen since A12 fell, `None` while A12 is high; for boards without
    /// such a counter, as if A12 had been low for long. The MMC3's inline, as above.
    #[inline(always)]
    pub fn a12_low_m2_edges(&self) -> Option<u8> {
        match self {
            Board::Txrom(m) => m.a12_low_m2_edges(),
            _ => self.a12_low_m2_edges_of_any_board(),
        }
    }

    /// [`Board::a12_low_m2_edges`] through the dispatch.
    #[inline(never)]
    fn a12_low_m2_edges_of_any_board(&self) -> Option<u8> {
        each_board!(self, m => m.a12_low_m2_edges())
    }

    /// M2 edges before the board's /IRQ rises by a delay or an M2 counter (`u32::MAX`: not so).
    pub fn m2_edges_before_irq(&self) -> u32 {
        each_board!(self, m => m.m2_edges_before_irq())
    }

    /// CHR RAM beside CHR ROM, in bytes (TQROM's).
    pub fn chr_ram_beside_rom(&self) -> Option<usize> {
        each_board!(self, m => m.chr_ram_beside_rom())
    }

    /// A 1 KiB open-bus page follows the state-bearing part of CHR.
    pub fn chr_open_bus_page(&self, chr_is_ram: bool) -> bool {
        each_board!(self, m => m.chr_open_bus_page(chr_is_ram))
    }

    /// The board has no PRG RAM whatever the header says.
    pub fn no_prg_ram(&self) -> bool {
        each_board!(self, m => m.no_prg_ram())
    }

    /// The CPU address of PRG RAM's first byte.
    pub fn prg_ram_cpu_address(&self) -> u16 {
        each_board!(self, m => m.prg_ram_cpu_address())
    }

    /// The board's serial EEPROM, kept across power cycles.
    pub fn eeprom_mut(&mut self) -> Option<&mut [u8]> {
        each_board!(self, m => m.eeprom_mut())
    }

    /// The battery-backed memory the board holds itself.
    pub fn battery_memory(&self, info: &RomInfo) -> Option<&[u8]> {
        each_board!(self, m => m.battery_memory(info))
    }

    /// [`Board::battery_memory`], writable.
    pub fn battery_memory_mut(&mut self, info: &RomInfo) -> Option<&mut [u8]> {
        each_board!(self, m => m.battery_memory_mut(info))
    }

    /// CPU reads of $8000-$FFFF reach the board.
    pub fn prg_reads_seen(&self) -> bool {
        each_board!(self, m => m.prg_reads_seen())
    }

    /// The CPU read `value` from PRG at `addr`.
    pub fn prg_read(&mut self, addr: u16, value: u8) {
        each_board!(self, m => m.prg_read(addr, value))
    }

    /// Rewrites the board's derived pages.
    pub fn refresh_pages(&self, pages: &mut [u8]) {
        each_board!(self, m => m.refresh_pages(pages))
    }

    /// A low write's store into the RAM after CHR (see [`Mapper::extra_ram_write`]).
    pub fn extra_ram_write(&self, addr: u16, value: u8) -> Option<Option<u8>> {
        each_board!(self, m => m.extra_ram_write(addr, value))
    }

    /// The CPU wrote PPU register `addr` ($2000-$3FFF).
    #[inline]
    pub fn ppu_register_written(&mut self, addr: u16, value: u8) {
        each_board!(self, m => m.ppu_register_written(addr, value))
    }

    /// CPU reads of $5000-$5FFF show the PPU's progress.
    pub fn low_reads_see_ppu(&self) -> bool {
        each_board!(self, m => m.low_reads_see_ppu())
    }

    /// The /IRQ may change at the start of a PPU line.
    pub fn irq_at_line_starts(&self) -> bool {
        each_board!(self, m => m.irq_at_line_starts())
    }

    /// The board's register state as bytes.
    pub fn state_bytes(&self) -> &[u8] {
        each_board!(self, m => m.state_bytes())
    }

    /// `visitor` run on the board's register state as its own type, whose size is then a constant
    /// where the visitor works (the sync digest sums it unrolled).
    #[inline]
    pub(crate) fn visit_state<V: StateVisitor>(&self, visitor: V) -> V::Output {
        each_board!(self, m => visitor.visit(m.state()))
    }

    /// The board's register state as mutable bytes (for snapshot restore; call `update_map` after).
    pub fn state_bytes_mut(&mut self) -> &mut [u8] {
        each_board!(self, m => m.state_bytes_mut())
    }

    /// Debug builds: the board does no more than its row declares, with `map` just updated from it.
    #[cfg(debug_assertions)]
    pub fn check_declared(&self, map: &MemoryMap) {
        let declared = self.declared();
        let name = || format!("{self:?}");
        let has_counter = each_board!(self, m => m.ticked() != 0 || m.irq_due_cycle() != u64::MAX);
        assert!(declared.cpu_counter || !has_counter, "a CPU-cycle counter undeclared: {}", name());
        assert!(declared.irq || self.irq_output().is_none(), "{}", name());
        assert!(declared.audio || self.expansion_chip().is_none(), "a sound chip undeclared: {}", name());
        assert!(declared.watches_ppu || !map.watches_ppu, "PPU watching undeclared: {}", name());
        assert!(declared.low_registers || !map.low_registers, "low registers undeclared: {}", name());
        assert!(declared.flash || !self.has_flash(), "a flash chip undeclared: {}", name());
        assert!(declared.prg_reads || !self.prg_reads_seen(), "PRG reads seen undeclared: {}", name());
    }

    // The hot paths: the MMC3 inline, the others through the dispatch out of line
    // (docs/PERFORMANCE.md, "The board dispatch in the hot paths").

    /// The board's /IRQ output where it is the MMC3's, a field test to inline; `None` otherwise.
    #[inline(always)]
    pub fn mmc3_irq_line(&self) -> Option<bool> {
        match self {
            Board::Txrom(m) => Some(m.irq_line()),
            _ => None,
        }
    }

    /// A PPU access the board watches: the MMC3's A12 check inline (it never changes the map); the
    /// MMC5 sees reads only, which `ppu_read_fetch` hands it. Returns `None` for the boards whose
    /// observer must be called out of line.
    #[inline(always)]
    pub fn observe_ppu_inline(&mut self, addr: u16) -> Option<()> {
        match self {
            Board::Txrom(m) => {
                m.observe_ppu_address(addr);
                Some(())
            }
            Board::Mmc5(_) => Some(()),
            _ => None,
        }
    }

    /// The MMC3's A12 check for a PPU read; false for other boards (then `ppu_read_fetch`).
    #[inline(always)]
    pub fn observe_mmc3_read(&mut self, addr: u16) -> bool {
        if let Board::Txrom(m) = self {
            m.observe_ppu_address(addr);
            return true;
        }
        false
    }

    /// What a watching board (not the MMC3) does with a PPU read: the MMC5 may supply the data
    /// (`m005_mmc5/ppu.rs`); the others observe it, and the bool says the map must be updated.
    #[inline(always)]
    pub fn ppu_read_fetch(&mut self, addr: u16, extra_ram: &[u8]) -> (Fetch, bool) {
        if let Board::Mmc5(m) = self {
            return (m.fetch(addr, extra_ram), false);
        }
        (Fetch::Map, self.observe_ppu(addr, true))
    }

    /// True when the board sees of the PPU's accesses only the changes of A12, and its M2 edges
    /// matter only in their order against those changes: the MMC3 (its filter counts edges while
    /// A12 stays low, and a rise after enough of them clocks the counter).
    #[inline(always)]
    pub fn sees_only_a12(&self) -> bool {
        matches!(self, Board::Txrom(_))
    }

    /// True when the board sees of the PPU's accesses only the reads' addresses, and supplies none
    /// of their data (the MMC5 without 8x16 sprites, extended attributes or split).
    #[inline(always)]
    pub fn hears_only_read_addresses(&self) -> bool {
        matches!(self, Board::Mmc5(m) if m.supplies_no_data())
    }

    /// PPU reads of `addrs` whose data the board does not supply.
    #[inline(always)]
    pub fn hear_ppu_reads<const N: usize>(&mut self, addrs: [u16; N]) {
        if let Board::Mmc5(m) = self {
            m.hear_reads(addrs);
        }
    }

    /// `edges` M2 edges on the lazy schedule's replay for the MMC3 and the MMC5: two arms (a third
    /// arm, or a call in the other arm, cost the MMC3 demo 0.4% to 0.8% and the MMC5 2.4% more host
    /// instructions per frame). The boards with a delayed IRQ (`Abilities::delayed_irq`) take
    /// [`Board::cpu_cycles`] instead, in a replay of their own (`bus/ppu_memory.rs`).
    #[inline(always)]
    pub fn replay_m2_edges(&mut self, edges: u64) {
        match self {
            Board::Txrom(m) => m.cpu_cycles(edges),
            Board::Mmc5(m) => m.cpu_cycles(edges),
            _ => debug_assert!(!self.counts_m2_edges() || self.has_delayed_irq() || self.needs_eager_ppu()),
        }
    }

    /// True when the board's row declares that it counts M2 edges against the PPU's accesses (the
    /// MMC3's A12 filter, the MMC5's idle detection, the TC0690's and RAMBO-1's filters and IRQ
    /// delays).
    pub fn counts_m2_edges(&self) -> bool {
        self.declared().counts_m2_edges
    }

    /// True when the board's row declares an /IRQ that rises M2 edges after its cause (the TC0690's,
    /// the RAMBO-1's; [`Abilities::delayed_irq`]).
    pub fn has_delayed_irq(&self) -> bool {
        self.declared().delayed_irq
    }

    /// True when the board's row declares that the lazy PPU schedule cannot predict its /IRQ, so the
    /// console runs the eager one (no board since issue 48: see [`Abilities::eager_ppu`]).
    pub fn needs_eager_ppu(&self) -> bool {
        self.declared().eager_ppu
    }

    /// The MMC3's (or MMC6's) IRQ behaviour; `None` for other boards.
    pub fn mmc3_revision(&self) -> Option<Mmc3Revision> {
        match self {
            Board::Txrom(m) => Some(m.revision()),
            _ => None,
        }
    }

    /// Selects the MMC3's IRQ behaviour; false, changing nothing, on other boards.
    pub fn set_mmc3_revision(&mut self, revision: Mmc3Revision) -> bool {
        match self {
            Board::Txrom(m) => {
                m.set_revision(revision);
                true
            }
            _ => false,
        }
    }
}
