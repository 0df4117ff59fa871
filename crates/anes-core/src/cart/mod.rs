//! Cartridges: iNES / NES 2.0 parsing and the mapper boards.
//!
//! Interface contract with the rest of the console (kept stable for all mappers):
//! - the CPU bus calls [`Cartridge::cpu_read`] / [`Cartridge::cpu_write`] for $4020-$FFFF;
//! - the PPU calls [`Cartridge::ppu_read`] / [`Cartridge::ppu_write`] for $0000-$3EFF, passing the
//!   console's 2 KiB CIRAM, and [`Cartridge::ppu_address`] whenever it drives an address without a
//!   data transfer, so boards that watch PPU A12 (MMC3) see every address the PPU puts on the bus;
//! - [`Cartridge::cpu_cycle`] runs once per CPU cycle (M2), before that cycle's bus access;
//! - [`Cartridge::irq_line`] is the board's /IRQ output, sampled by the CPU at the end of each cycle;
//! - a board counter clocked by CPU cycles (the VRC4's IRQ) runs lazily: [`Cartridge::sync_to`] at
//!   each cycle down the bus's full path, which takes every cycle from [`Cartridge::irq_due_cycle`]
//!   on, and [`Cartridge::catch_up`] wherever the console returns to its caller.
//!
//! State: the board's registers are a Pod struct ([`Cartridge::mapper_state_bytes`]); the memories
//! are [`Cartridge::prg_ram`] and [`Cartridge::chr_ram`] (CHR RAM followed by a four-screen board's
//! nametable VRAM, [`Cartridge::extra_vram`]). The bank map the hot paths use is derived from them and
//! rebuilt by [`Cartridge::rebuild_caches`].

mod bandai_eeprom;
mod board;
pub(crate) use board::StateVisitor;
mod error;
pub(crate) mod expansion_audio;
mod game_genie;
mod header;
mod latch_chr;
mod m000_nrom;
mod m001_sxrom;
mod m002_uxrom;
mod m003_cnrom;
mod m004_txrom;
mod m005_mmc5;
mod m007_axrom;
mod m009_pxrom;
mod m010_fxrom;
mod m011_color_dreams;
mod m013_cprom;
mod m016_bandai_fcg;
mod m018_jaleco_ss88006;
mod m019_namco163;
mod m019_namco163_audio;
mod m021_vrc2_vrc4;
mod m024_vrc6;
mod m024_vrc6_audio;
mod m028_action53;
mod m030_unrom512;
mod m032_irem_g101;
mod m033_taito_tc0190;
mod m034_bnrom_nina001;
mod m048_taito_tc0690;
mod m064_rambo1;
mod m065_irem_h3001;
mod m066_gxrom;
mod m067_sunsoft3;
mod m068_sunsoft4;
mod m069_fme7;
mod m069_sunsoft5b_audio;
mod m070_bandai;
mod m071_camerica;
mod m073_vrc3;
mod m075_vrc1;
mod m076_namcot3446;
mod m078_irem_74hc161;
mod m079_nina03_06;
mod m080_taito_x1005;
mod m082_taito_x1017;
mod m085_vrc7;
mod m085_vrc7_audio;
mod m086_jaleco_jf13;
mod m087_jaleco_jf05;
mod m088_namcot3443;
mod m089_sunsoft2;
mod m092_jaleco_jf19;
mod m093_sunsoft2_3r;
mod m094_un1rom;
mod m095_namcot3425;
mod m097_irem_tam_s1;
mod m105_nes_event;
mod m111_gtrom;
mod m118_txsrom;
mod m119_tqrom;
mod m140_jaleco_jf11;
mod m152_bandai;
mod m154_namcot3453;
mod m155_mmc1a;
mod m158_tengen_800037;
mod m180_unrom_fixed_first;
mod m184_sunsoft1;
mod m185_cnrom_protected;
mod m206_namco108;
mod m210_namco175_340;
mod m232_quattro;
mod map;
mod mapper;
mod rom_info;
mod sst39sf_flash;
mod tracked_board;
mod vrc_irq;

use board::Board;
use map::{
    BoardConfig, CHR_SLOT, MemoryMap, NAMETABLE_IN_CART, PRG_RAM_WINDOW, PRG_SLOT, PrgRamRead, PrgRamWindow,
    PrgSlot,
};
use mapper::Fetch;
use sst39sf_flash::{FLASH_SECTOR, FlashOp, flash_id_byte};
use tracked_board::TrackedBoard;

use crate::state::digest_keys::memory_delta;
use crate::state::section::Section;
pub use board::SUPPORTED_MAPPERS;
pub(crate) use board::mapper_fields;
pub use error::{BatteryRamError, MAX_ROM_FILE_LEN, RomError, RomPart};
pub use expansion_audio::{ExpansionChip, Namco163Mix};
pub(crate) use game_genie::GameGenie;
pub use game_genie::{GameGenieCode, GameGenieError, MAX_GAME_GENIE_CODES};
pub use m004_txrom::Mmc3Revision;
pub use rom_info::{HeaderFormat, HeaderRegion, Mirroring, RomInfo};

/// Size of the cartridge VRAM of a four-screen board.
const FOUR_SCREEN_VRAM: usize = 0x800;
/// CPU address of the trainer.
const TRAINER_ADDR: usize = 0x7000;
/// A `prg_fast` entry past any PRG ROM, whatever address is added.
const PRG_FAST_MISS: usize = usize::MAX / 2;

/// A loaded cartridge: immutable ROM images plus the board's mutable state.
#[derive(Clone)]
pub struct Cartridge {
    info: RomInfo,
    /// PRG ROM, repeated up to a whole number of 8 KiB banks. On a board whose PRG is a flash chip
    /// the game can write (`has_flash`), the chip's memory: state, the PRG RAM section.
    prg_rom: Box<[u8]>,
    /// The PRG is a writable flash chip (UNROM 512's self-flashable wiring, GTROM; see
    /// `sst39sf_flash.rs`). Derived from the board at load.
    has_flash: bool,
    /// On those boards, the PRG ROM image as loaded, for the machine's identity; empty elsewhere.
    loaded_prg: Box<[u8]>,
    /// blake3 of the flash, the PRG RAM section's digest, so that a frame's state hash need not hash
    /// up to 512 KiB that rarely change (a whole 512 KiB flash cost a UNROM 512 frame 30% more
    /// host instructions); `None` after a change until [`Cartridge::refresh_flash_digest`], and on
    /// boards without a flash. Derived data, not state.
    flash_digest: Option<[u8; 32]>,
    /// Everything on the PPU side of the board: CHR (ROM repeated up to a whole number of 1 KiB banks,
    /// or RAM), `chr_len` bytes, then the four-screen board's 2 KiB of VRAM (nametables 2 and 3), up
    /// to `chr_end` (on the MMC5, its 1 KiB of ExRAM instead); then, on a board that can disconnect
    /// its CHR ROM (mapper 185), the 1 KiB page that reads as open bus (byte i is i's low byte, the
    /// PPU address left on the bus), or on the MMC5 its fill page and a page of zeros (nametable
    /// pages 3 and 4), derived from its registers.
    chr: Box<[u8]>,
    /// Bytes of `chr` that are CHR; the rest is four-screen VRAM (or ExRAM) and derived pages.
    chr_len: usize,
    /// Start of the CHR RAM in `chr` (up to `chr_len`): 0 on a CHR RAM board, `chr_len` on a CHR ROM
    /// board, the ROM's length on TQROM (mapper 119), whose 8 KiB of RAM follow its ROM.
    chr_ram_start: usize,
    /// End of the four-screen VRAM (of the state-bearing part of `chr`).
    chr_end: usize,
    chr_is_ram: bool,
    /// Pattern table writes can reach RAM: CHR RAM, or TQROM's beside its ROM.
    chr_writable: bool,
    /// PRG RAM at $6000-$7FFF: battery-backed part first, then the volatile part.
    prg_ram: Box<[u8]>,
    /// The 512-byte trainer, copied to $7000 at power-on.
    trainer: Option<Box<[u8]>>,
    board: TrackedBoard,
    /// Derived from `board` and the memories' sizes; see [`Cartridge::rebuild_caches`].
    map: MemoryMap,
    /// CPU reads of $8000-$FFFF are plain ROM: no Game Genie code, no RAM in a slot. Derived.
    prg_plain: bool,
    /// Per 8 KiB of the CPU's address space, what to add to an address to index PRG ROM when its
    /// reads are plain ROM (`prg_plain`: $8000-$FFFF), else `PRG_FAST_MISS`, past any ROM: one
    /// lookup and one bounds check read plain ROM and turn every other read away. Derived.
    prg_fast: [usize; 8],
    /// Game Genie codes patching CPU reads of $8000-$FFFF: part of the machine's identity, not of
    /// its state sections (see `game_genie.rs`).
    game_genie: GameGenie,
    /// The sync digest's sum over PRG RAM, CHR RAM and CIRAM, kept on every write (see
    /// `state/digest.rs`). Derived data, not state.
    memory_digest: u64,
    /// The CPU cycle at which the board's CPU-cycle counter asserts /IRQ unless a write intervenes
    /// (the VRC4's); `u64::MAX` when none can; 0 while `plays_audio`, so the board runs every cycle.
    /// Derived from the board state and the cycle it was run through.
    irq_due: u64,
    /// Audio output is on and the board has a sound chip (`expansion_audio.rs`). Not state.
    plays_audio: bool,
    /// The board has an /IRQ output at all ([`Board::irq_output`]): fixed by the board's kind.
    has_irq_output: bool,
}

impl core::fmt::Debug for Cartridge {
    /// The header facts, memory sizes and board registers; not the megabytes of ROM.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Cartridge")
            .field("info", &self.info)
            .field("board", &self.board)
            .field("prg_ram_len", &self.prg_ram.len())
            .field("chr_ram_len", &self.chr_ram().len())
            .finish_non_exhaustive()
    }
}

/// Repeats `data` up to the next multiple of `unit` bytes (a smaller chip repeats in a bigger window,
/// as its unconnected address lines make it do on a board). `data` must not be empty.
fn repeat_to_multiple(data: &[u8], unit: usize) -> Box<[u8]> {
    let len = data.len().div_ceil(unit) * unit;
    if len == data.len() {
        return data.into();
    }
    data.iter().copied().cycle().take(len).collect()
}

impl Cartridge {
    /// Parses an iNES 1.0 or NES 2.0 file and powers the board on.
    ///
    /// Memory sizes: PRG RAM is the header's PRG-NVRAM plus PRG-RAM (iNES 1.0: 8 KiB unless byte 8
    /// says more), at least 8 KiB when a trainer must be placed at $7000 (on the MMC6, its 1 KiB,
    /// which starts there). CHR RAM (when there is no CHR ROM) is the header's CHR-RAM plus
    /// CHR-NVRAM, 8 KiB when the header declares neither.
    pub fn from_ines(bytes: &[u8]) -> Result<Cartridge, RomError> {
        let parsed = header::parse(bytes)?;
        let info = parsed.info;
        let mut board = Board::new(BoardConfig::from_info(&info)).ok_or(RomError::UnsupportedMapper {
            mapper: info.mapper,
            submapper: info.submapper,
            board: header::board_name(info.mapper, info.submapper),
        })?;
        board.configure(&info);
        let abilities = board.declared();
        let prg_rom = repeat_to_multiple(parsed.prg_rom, PRG_SLOT);
        let (chr, chr_is_ram) = if parsed.chr_rom.is_empty() {
            let declared = info.chr_ram_size.saturating_add(info.chr_nvram_size);
            let size = if declared == 0 { 0x2000 } else { declared.div_ceil(CHR_SLOT) * CHR_SLOT };
            let size = if abilities.fixed_chr_ram != 0 {
                abilities.fixed_chr_ram
            } else if info.format != HeaderFormat::Nes20 {
                size.max(abilities.ines1_chr_ram)
            } else {
                size
            };
            (vec![0u8; size].into_boxed_slice(), true)
        } else {
            (repeat_to_multiple(parsed.chr_rom, CHR_SLOT), false)
        };
        let chr_rom_len = if chr_is_ram { 0 } else { chr.len() };
        let chr = if let (Some(beside), false) = (board.chr_ram_beside_rom(), chr_is_ram) {
            // CHR RAM after the ROM (TQROM's): the header's CHR-RAM size (NES 2.0), else the board's.
            let in_header = info.chr_ram_size.saturating_add(info.chr_nvram_size);
            let ram = if in_header == 0 { beside } else { in_header.div_ceil(CHR_SLOT) * CHR_SLOT };
            let mut with_ram = chr.into_vec();
            // Exactly: a plain resize grows by doubling, and a header may declare megabytes.
            with_ram.reserve_exact(ram);
            with_ram.resize(chr_rom_len + ram, 0);
            with_ram.into_boxed_slice()
        } else {
            chr
        };
        let chr_len = chr.len();
        let chr_ram_start = if chr_is_ram { 0 } else { chr_rom_len };
        let chr_end = if abilities.nametable_ram != 0 {
            chr_len + abilities.nametable_ram
        } else if info.mirroring == Mirroring::FourScreen {
            chr_len + FOUR_SCREEN_VRAM
        } else {
            chr_len
        };
        let open_bus_page = board.chr_open_bus_page(chr_is_ram);
        let chr = if chr_end != chr_len || open_bus_page {
            let mut with_vram = chr.into_vec();
            // Exactly the final length: a plain resize grows by doubling, and a header may declare
            // megabytes of CHR RAM (a 3 MiB one held three copies' worth of heap while growing).
            let pages = usize::from(open_bus_page) + abilities.derived_pages;
            with_vram.reserve_exact(chr_end - chr_len + pages * CHR_SLOT);
            with_vram.resize(chr_end, 0);
            if open_bus_page {
                with_vram.extend((0..CHR_SLOT).map(|i| i as u8));
            }
            // Pages rewritten from the registers (`Mapper::refresh_pages`).
            with_vram.resize(with_vram.len() + abilities.derived_pages * CHR_SLOT, 0);
            with_vram.into_boxed_slice()
        } else {
            chr
        };
        let has_flash = board.has_flash();
        let mut prg_ram_size = info.prg_nvram_size.saturating_add(info.prg_ram_size);
        // The MMC6's own 1 KiB (the only size its header may declare) already holds $7000-$71FF.
        let ram_holds_trainer = board.prg_ram_cpu_address() == 0x7000;
        // Boards with no PRG RAM whatever the header says: the X1-005 (its only RAM is the chip's 128
        // bytes, in the board's state), the Bandai boards whose PRG-NVRAM is the serial EEPROM the
        // board holds, and the flash boards (nesdev "UNROM 512", "GTROM": the PRG RAM section and the
        // battery save are the flash). A trainer has nowhere to go on them and is dropped.
        let no_prg_ram = has_flash || board.no_prg_ram();
        if parsed.trainer.is_some() && !ram_holds_trainer {
            prg_ram_size = prg_ram_size.max(PRG_SLOT);
        }
        if info.format != HeaderFormat::Nes20 {
            prg_ram_size = prg_ram_size.max(abilities.ines1_prg_ram);
        }
        if no_prg_ram {
            prg_ram_size = 0;
        }
        let prg_ram = vec![0u8; prg_ram_size].into_boxed_slice();
        let trainer = if no_prg_ram { None } else { parsed.trainer.map(Box::from) };
        let loaded_prg = if has_flash { prg_rom.clone() } else { Box::default() };
        let map = MemoryMap::new(prg_rom.len(), chr_len, prg_ram.len(), info.mirroring);
        let board_has_irq = board.irq_output().is_some();
        let mut cart = Cartridge {
            info,
            prg_rom,
            has_flash,
            loaded_prg,
            flash_digest: None,
            chr,
            chr_len,
            chr_ram_start,
            chr_end,
            chr_is_ram,
            chr_writable: chr_is_ram || chr_ram_start < chr_len || abilities.chr_maps_nametable_ram,
            prg_ram,
            trainer,
            board: TrackedBoard::new(board),
            map,
            prg_plain: true,
            prg_fast: [PRG_FAST_MISS; 8],
            game_genie: GameGenie::default(),
            memory_digest: 0,
            irq_due: u64::MAX,
            plays_audio: false,
            has_irq_output: board_has_irq,
        };
        cart.power_on();
        Ok(cart)
    }

    /// The machine's identity: blake3 of the PRG and CHR ROM, of how the header wires them (see
    /// [`Cartridge::wiring`]) and of the Game Genie codes when any are plugged in (a Game Genie
    /// changes what the CPU reads, so a machine with codes is another machine).
    pub(crate) fn machine_identity(&self) -> [u8; 32] {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"anes rom identity v2\0").update(self.prg_rom()).update(self.chr_rom());
        hasher.update(&self.wiring());
        if let Some(trainer) = &self.trainer {
            hasher.update(trainer);
        }
        let mut codes = self.game_genie_codes().peekable();
        if codes.peek().is_some() {
            hasher.update(b"game genie v1\0");
            for code in codes {
                hasher.update(&code.address.to_le_bytes());
                hasher.update(&[code.value, u8::from(code.compare.is_some()), code.compare.unwrap_or(0)]);
            }
        }
        *hasher.finalize().as_bytes()
    }

    /// What of the header the board and the console read, beyond the ROM images, in the identity's
    /// 40 bytes (docs/state-format.md): the mapper (u16), submapper, byte 6's mirroring bit, four
    /// screens, battery and trainer (one byte each, 0 or 1), a zero byte, then PRG RAM, PRG NVRAM,
    /// CHR RAM and CHR NVRAM in bytes (u64 each), all little-endian. None of it is in the state
    /// sections, and each changes what the machine does: the wired mirroring, a submapper's wiring
    /// of the registers, which RAM a power cycle keeps, where a trainer goes.
    fn wiring(&self) -> [u8; 40] {
        let info = &self.info;
        let mut out = [0u8; 40];
        out[..2].copy_from_slice(&info.mapper.to_le_bytes());
        out[2] = info.submapper;
        out[3] = u8::from(info.mirroring_bit);
        out[4] = u8::from(info.mirroring == Mirroring::FourScreen);
        out[5] = u8::from(info.battery);
        out[6] = u8::from(self.trainer.is_some());
        let sizes = [info.prg_ram_size, info.prg_nvram_size, info.chr_ram_size, info.chr_nvram_size];
        for (i, size) in sizes.into_iter().enumerate() {
            out[8 + 8 * i..16 + 8 * i].copy_from_slice(&(size as u64).to_le_bytes());
        }
        out
    }

    /// What the header says about this cartridge.
    pub fn info(&self) -> &RomInfo {
        &self.info
    }

    /// A CPU read of $4020-$FFFF; `open_bus` is returned where the board drives nothing.
    ///
    /// Always inlined, the plain ROM read only (every instruction fetch): left to the compiler, some
    /// of the CPU's instructions called it out of line (all_instrs: 0.5% more host instructions per
    /// frame).
    #[inline(always)]
    pub fn cpu_read(&mut self, addr: u16, open_bus: u8) -> u8 {
        if let Some(byte) = self.prg_plain_read(addr) {
            return byte;
        }
        self.cpu_read_other(addr, open_bus)
    }

    /// A CPU read of $8000-$FFFF when it reads plain ROM, which has no side effects; `None` for
    /// any other read.
    #[inline(always)]
    pub(crate) fn prg_plain_read(&self, addr: u16) -> Option<u8> {
        let index = self.prg_fast[usize::from(addr >> 13)].wrapping_add(usize::from(addr));
        self.prg_rom.get(index).copied()
    }

    /// [`Cartridge::cpu_read`] but for plain ROM.
    #[inline(never)]
    fn cpu_read_other(&mut self, addr: u16, open_bus: u8) -> u8 {
        // `cpu_peek`'s arms, in its order, but for the registers' side effects.
        match addr {
            0x8000..=0xFFFF if self.prg_plain => self.prg_rom_byte(addr),
            0x8000..=0xFFFF => self.prg_read_mapped(addr, open_bus),
            0x6000..=0x7FFF => self.prg_ram_peek(addr, open_bus),
            _ => self.read_low_register(addr, open_bus),
        }
    }

    /// A read of $8000-$FFFF where a slot holds RAM, a Game Genie code patches ROM or the MMC5's
    /// PCM takes the data in read mode.
    #[inline(never)]
    fn prg_read_mapped(&mut self, addr: u16, open_bus: u8) -> u8 {
        let value = self.prg_peek_mapped(addr, open_bus);
        self.board.prg_read(addr, value);
        value
    }

    /// True when a CPU read of $8000-$FFFF may change the board (the MMC5's PCM in read mode).
    pub(crate) fn prg_reads_have_effects(&self) -> bool {
        !self.prg_plain && self.board.declared().prg_reads
    }

    /// The value a CPU read would return, without side effects.
    #[inline]
    pub fn cpu_peek(&self, addr: u16, open_bus: u8) -> u8 {
        match addr {
            0x8000..=0xFFFF if self.prg_plain => self.prg_rom_byte(addr),
            0x8000..=0xFFFF => self.prg_peek_mapped(addr, open_bus),
            0x6000..=0x7FFF => self.prg_ram_peek(addr, open_bus),
            _ => self.peek_low_register(addr, open_bus),
        }
    }

    /// A read of $8000-$FFFF where a slot holds RAM or a Game Genie code patches ROM.
    #[inline(never)]
    fn prg_peek_mapped(&self, addr: u16, open_bus: u8) -> u8 {
        match self.map.prg_slots[usize::from(addr >> 13) & 3] {
            PrgSlot::Rom => self.game_genie.patch(addr, self.prg_rom_byte(addr)),
            PrgSlot::Ram(offset) => self.prg_ram[(offset + usize::from(addr & 0x1FFF)) % self.prg_ram.len()],
            PrgSlot::OpenBus => open_bus,
            PrgSlot::FlashId => {
                let chip_addr = self.map.prg[usize::from(addr >> 13) & 3] + usize::from(addr & 0x1FFF);
                flash_id_byte(chip_addr, self.prg_rom.len())
            }
        }
    }

    /// A read of $4020-$5FFF: the MMC5's registers and ExRAM, the Namco 163's RAM port and IRQ
    /// counter, open bus elsewhere.
    #[inline(never)]
    fn read_low_register(&mut self, addr: u16, open_bus: u8) -> u8 {
        self.board.read_low(addr, open_bus, &self.chr[self.chr_len..self.chr_end])
    }

    /// A CPU read of $4020-$7FFF on CPU cycle `cpu_cycle`: [`Cartridge::cpu_read`], after running a
    /// board whose counters the read shows (the Namco 163's IRQ counter and sound RAM) through it.
    #[inline]
    pub fn cpu_read_low(&mut self, addr: u16, open_bus: u8, cpu_cycle: u64) -> u8 {
        if addr < 0x6000 && self.board.declared().low_access_runs_counter {
            self.catch_up(cpu_cycle);
        }
        self.cpu_read(addr, open_bus)
    }

    #[inline(never)]
    fn peek_low_register(&self, addr: u16, open_bus: u8) -> u8 {
        self.board.peek_low(addr, open_bus, &self.chr[self.chr_len..self.chr_end])
    }

    /// A read of $6000-$7FFF through its PRG RAM window. Out of line: the CPU's read of ROM, inlined
    /// into every bus cycle, stays small (inlined, this cost nestest's menu 5% more host instructions).
    #[inline(never)]
    fn prg_ram_peek(&self, addr: u16, open_bus: u8) -> u8 {
        let window = self.map.prg_ram_window(addr);
        match window.read {
            PrgRamRead::Ram => self.prg_ram[self.prg_ram_index(window, addr)],
            PrgRamRead::Zero => 0,
            PrgRamRead::OpenBus => open_bus,
            PrgRamRead::Latch => (open_bus & 0xFE) | self.map.prg_latch,
            PrgRamRead::Rom => self.prg_rom[window.offset + usize::from(addr) % PRG_RAM_WINDOW],
            PrgRamRead::SerialData => (open_bus & !0x10) | self.map.prg_latch << 4,
            PrgRamRead::BoardRam => self.board.peek_board_ram(addr, open_bus),
        }
    }

    /// A CPU write of $4020-$FFFF on CPU cycle `cpu_cycle` (MMC1 ignores back-to-back writes).
    #[inline]
    pub fn cpu_write(&mut self, addr: u16, value: u8, cpu_cycle: u64) {
        match addr {
            0x8000..=0xFFFF => {
                if self.has_flash && self.board.flash_port(addr) {
                    self.write_flash(addr, value);
                    return;
                }
                // Bus conflict: the ROM drives the data bus too, and 0 wins (nesdev "Bus conflict").
                let value = if self.map.bus_conflicts { value & self.prg_rom_byte(addr) } else { value };
                if !self.prg_plain {
                    self.write_prg_slot(addr, value);
                }
                if self.board.write_register(addr, value, cpu_cycle) {
                    self.remap();
                }
                self.irq_due = self.due_cycle();
            }
            0x6000..=0x7FFF => {
                if self.map.low_registers {
                    self.write_low_register(addr, value, cpu_cycle);
                }
                let window = self.map.prg_ram_window(addr);
                if window.writable {
                    let index = self.prg_ram_index(window, addr);
                    self.track(Section::PrgRam, index, self.prg_ram[index], value);
                    self.prg_ram[index] = value;
                }
            }
            _ if self.map.low_registers => self.write_low_register(addr, value, cpu_cycle),
            _ => {}
        }
    }

    /// A write to a register of the board at $4020-$7FFF ([`board::MemoryMap::low_registers`]).
    #[inline(never)]
    fn write_low_register(&mut self, addr: u16, value: u8, cpu_cycle: u64) {
        if let Some(store) = self.board.extra_ram_write(addr, value) {
            if let Some(stored) = store {
                let index = self.chr_len + usize::from(addr) % (self.chr_end - self.chr_len);
                let in_section = if self.chr_is_ram { index } else { index - self.chr_len };
                self.track(Section::ChrRam, in_section, self.chr[index], stored);
                self.chr[index] = stored;
            }
            return;
        }
        if self.board.declared().low_access_runs_counter {
            // Its IRQ counter and sound RAM: run through this cycle before the write, and the
            // counter's due cycle may move.
            self.catch_up(cpu_cycle);
            self.board.write_low(addr, value, cpu_cycle);
            self.irq_due = self.due_cycle();
            return;
        }
        if self.board.write_low(addr, value, cpu_cycle) {
            self.remap();
        }
        // The MMC5's sound may have been caught up and its due cycle moved.
        self.irq_due = self.due_cycle();
    }

    /// A write to the flash chip at $8000-$FFFF: its command state machine, then what the command
    /// does to its memory (`sst39sf_flash.rs`), at once.
    #[inline(never)]
    fn write_flash(&mut self, addr: u16, value: u8) {
        let chip_addr = self.map.prg[usize::from(addr >> 13) & 3] + usize::from(addr & 0x1FFF);
        let Some(flash) = self.board.flash_mut() else { return };
        let op = flash.write(chip_addr, value);
        if matches!(op, FlashOp::Program(..) | FlashOp::EraseSector(_) | FlashOp::EraseChip) {
            self.flash_digest = None;
        }
        match op {
            FlashOp::None => {}
            FlashOp::Program(at, data) => {
                let old = self.prg_rom[at];
                self.track(Section::PrgRam, at, old, old & data);
                self.prg_rom[at] = old & data;
            }
            FlashOp::EraseSector(at) => {
                let start = at & !(FLASH_SECTOR - 1);
                self.erase_flash(start..start + FLASH_SECTOR);
            }
            FlashOp::EraseChip => self.erase_flash(0..self.prg_rom.len()),
            FlashOp::IdMode => self.remap(),
        }
    }

    /// Sets the flash bytes in `range` to $FF (erased).
    fn erase_flash(&mut self, range: core::ops::Range<usize>) {
        for at in range {
            let old = self.prg_rom[at];
            self.track(Section::PrgRam, at, old, 0xFF);
            self.prg_rom[at] = 0xFF;
        }
    }

    /// True when the board's PRG is a flash chip the game can write (UNROM 512 with the battery
    /// bit, GTROM): [`Cartridge::prg_ram`] and [`Cartridge::battery_ram`] are then its memory.
    pub fn has_flash(&self) -> bool {
        self.has_flash
    }

    /// blake3 of the flash (the PRG RAM section) as of the last
    /// [`Cartridge::refresh_flash_digest`], if nothing changed it since; `None` otherwise.
    #[inline]
    pub(crate) fn flash_digest(&self) -> Option<[u8; 32]> {
        self.flash_digest
    }

    /// Computes the flash's digest where it changed (the console does at each return to its caller).
    #[inline]
    pub(crate) fn refresh_flash_digest(&mut self) {
        if self.has_flash && self.flash_digest.is_none() {
            self.flash_digest = Some(*blake3::hash(&self.prg_rom).as_bytes());
        }
    }

    /// A write to $8000-$FFFF where a slot may hold RAM (the MMC5's).
    #[inline(never)]
    fn write_prg_slot(&mut self, addr: u16, value: u8) {
        if let PrgSlot::Ram(offset) = self.map.prg_slots[usize::from(addr >> 13) & 3] {
            if self.map.prg_ram_writable {
                let index = (offset + usize::from(addr & 0x1FFF)) % self.prg_ram.len();
                self.track(Section::PrgRam, index, self.prg_ram[index], value);
                self.prg_ram[index] = value;
            }
        }
    }

    /// Recomputes the bank map from the board's registers, and what derives from it.
    fn remap(&mut self) {
        self.board.update_map(&mut self.map);
        self.map.resolve_nametables();
        let prg_reads_seen = self.board.prg_reads_seen();
        self.prg_plain =
            self.game_genie.is_empty() && self.map.prg_slots == [PrgSlot::Rom; 4] && !prg_reads_seen;
        self.prg_fast = [PRG_FAST_MISS; 8];
        if self.prg_plain {
            for (slot, &offset) in self.map.prg.iter().enumerate() {
                self.prg_fast[4 + slot] = offset.wrapping_sub(0x8000 + slot * PRG_SLOT);
            }
        }
        let pages = self.board.declared().derived_pages * CHR_SLOT;
        if pages != 0 {
            self.board.refresh_pages(&mut self.chr[self.chr_end..self.chr_end + pages]);
        }
        #[cfg(debug_assertions)]
        self.board.check_declared(&self.map);
    }

    /// The CPU wrote PPU register `addr` ($2000-$3FFF): the MMC5 listens to PPUCTRL and PPUMASK.
    #[inline]
    pub fn ppu_register_written(&mut self, addr: u16, value: u8) {
        self.board.ppu_register_written(addr, value);
    }

    /// True when CPU reads of $5000-$5FFF show the PPU's progress (the MMC5's status and ExRAM):
    /// the PPU must catch up to them.
    pub fn low_reads_see_ppu(&self) -> bool {
        self.board.low_reads_see_ppu()
    }

    /// True when the board's /IRQ may rise or fall at the start of a PPU line (the MMC5's scanline
    /// IRQ, enabled): the lazy schedule runs the PPU to each line's dot 2.
    pub fn irq_at_line_starts(&self) -> bool {
        self.board.irq_at_line_starts()
    }

    /// The bus is running CPU cycle `cpu_cycle`: runs the board's CPU-cycle counter through it when
    /// it could assert /IRQ by then (else the counter stays owed; see `m021_vrc2_vrc4.rs`).
    #[inline(always)]
    pub fn sync_to(&mut self, cpu_cycle: u64) {
        if cpu_cycle >= self.irq_due {
            self.catch_up(cpu_cycle);
        }
    }

    /// Runs the board's CPU-cycle counter through CPU cycle `cpu_cycle`.
    #[inline(never)]
    pub fn catch_up(&mut self, cpu_cycle: u64) {
        self.board.catch_up(cpu_cycle);
        self.irq_due = self.due_cycle();
    }

    /// The CPU cycle the board's CPU-cycle counters have run through (0 for a board without them).
    #[inline]
    pub fn ticked(&self) -> u64 {
        self.board.ticked()
    }

    /// Declares the board's CPU-cycle counter current at `cpu_cycle` (power-on, restore: the state
    /// was set, not run).
    pub fn resync(&mut self, cpu_cycle: u64) {
        self.board.resync(cpu_cycle);
        self.irq_due = self.due_cycle();
    }

    /// The first CPU cycle the board must be run through: its /IRQ's, or every cycle while its sound
    /// chip plays into the audio output.
    #[inline]
    fn due_cycle(&self) -> u64 {
        if self.plays_audio { 0 } else { self.board.irq_due_cycle() }
    }

    /// Audio output was switched on or off: while on, a board with a sound chip runs every CPU cycle,
    /// so its level reaches each cycle's sample (`expansion_audio.rs`).
    pub(crate) fn set_audio_output(&mut self, on: bool) {
        self.plays_audio = on && self.board.expansion_chip().is_some();
        self.irq_due = self.due_cycle();
    }

    /// True while the board's sound chip plays into the audio output (see
    /// [`Cartridge::set_audio_output`]).
    #[inline]
    pub(crate) fn plays_audio(&self) -> bool {
        self.plays_audio
    }

    /// The board's sound chip, if it has one.
    pub fn expansion_chip(&self) -> Option<ExpansionChip> {
        self.board.expansion_chip()
    }

    /// The sound chip's DAC level as of the cycle the board was run through (0 without a chip).
    pub fn expansion_level(&self) -> i32 {
        self.board.expansion_level()
    }

    /// The first CPU cycle [`Cartridge::sync_to`] must see: before it the board's /IRQ cannot change
    /// without a CPU write.
    #[inline(always)]
    pub fn irq_due_cycle(&self) -> u64 {
        self.irq_due
    }

    /// Keeps the sync digest's memory sum as byte `index` of `section` goes from `old` to `new`.
    #[inline(always)]
    fn track(&mut self, section: Section, index: usize, old: u8, new: u8) {
        self.memory_digest = self.memory_digest.wrapping_add(memory_delta(section, index, old, new));
    }

    /// The sync digest's sum over PRG RAM, CHR RAM and CIRAM (see `state/digest.rs`).
    pub(crate) fn memory_digest(&self) -> u64 {
        self.memory_digest
    }

    /// Replaces that sum, recomputed from scratch.
    pub(crate) fn set_memory_digest(&mut self, sum: u64) {
        self.memory_digest = sum;
    }

    /// A PPU read of $0000-$3EFF (pattern tables and nametables).
    #[inline(always)]
    pub fn ppu_read(&mut self, addr: u16, ciram: &mut [u8; 0x800]) -> u8 {
        if self.map.watches_ppu {
            return self.ppu_read_watched(addr, ciram);
        }
        self.ppu_peek(addr, ciram)
    }

    /// A PPU read that the board sees. The MMC3's A12 check stays inline; the MMC5 may supply the
    /// data itself (`m005_mmc5/ppu.rs`).
    #[inline(always)]
    fn ppu_read_watched(&mut self, addr: u16, ciram: &mut [u8; 0x800]) -> u8 {
        if self.board.observe_mmc3_read(addr) {
            return self.ppu_peek(addr, ciram);
        }
        self.ppu_read_other(addr, ciram)
    }

    /// Out of line, the MMC5's reads too: inlined beside the MMC3's path they made mmc5.nes's frame
    /// 12% cheaper (8.43 M host instructions against 9.56 M) but cost the MMC3 demo 0.6% more (the
    /// stretch loops, shared by every board, compiled differently), and the demo may not grow.
    #[inline(never)]
    fn ppu_read_other(&mut self, addr: u16, ciram: &mut [u8; 0x800]) -> u8 {
        let (fetch, remap) = self.board.ppu_read_fetch(addr, &self.chr[self.chr_len..self.chr_end]);
        let value = match fetch {
            Fetch::Map => self.ppu_peek(addr, ciram),
            Fetch::Chr(offset) => self.chr[offset % self.chr_len],
            Fetch::Value(value) => value,
        };
        if remap {
            self.remap();
        }
        value
    }

    /// The value a PPU read would return, without side effects.
    #[inline(always)]
    pub fn ppu_peek(&self, addr: u16, ciram: &[u8; 0x800]) -> u8 {
        let addr = usize::from(addr & 0x3FFF);
        if addr < 0x2000 {
            self.chr[self.map.chr[addr >> 10] + (addr & 0x3FF)]
        } else {
            let at = self.map.nametable_at[(addr >> 10) & 3];
            let offset = addr & 0x3FF;
            if at < NAMETABLE_IN_CART {
                ciram[(at + offset) & 0x7FF]
            } else {
                self.chr[at - NAMETABLE_IN_CART + offset]
            }
        }
    }

    /// [`Cartridge::ppu_peek`] of two addresses in the same 1 KiB window (`first >> 10 == second >> 10`):
    /// the window is looked up once.
    #[inline(always)]
    pub fn ppu_peek_pair(&self, first: u16, second: u16, ciram: &[u8; 0x800]) -> (u8, u8) {
        debug_assert_eq!((first & 0x3FFF) >> 10, (second & 0x3FFF) >> 10, "one 1 KiB window");
        let window = self.ppu_window(first, ciram);
        (window[usize::from(first & 0x3FF)], window[usize::from(second & 0x3FF)])
    }

    /// The 1 KiB of CHR, CIRAM or the cartridge's extra VRAM that PPU address `addr` falls in (a
    /// nametable may be CHR too: `MemoryMap::nametable_at`).
    #[inline(always)]
    pub(crate) fn ppu_window<'a>(&'a self, addr: u16, ciram: &'a [u8; 0x800]) -> &'a [u8; 0x400] {
        let addr = usize::from(addr & 0x3FFF);
        let window = if addr < 0x2000 {
            self.chr[self.map.chr[addr >> 10]..].first_chunk()
        } else {
            let at = self.map.nametable_at[(addr >> 10) & 3];
            if at < NAMETABLE_IN_CART {
                ciram[at & 0x400..].first_chunk()
            } else {
                self.chr[at - NAMETABLE_IN_CART..].first_chunk()
            }
        };
        window.expect("the bank map holds whole 1 KiB windows")
    }

    /// A PPU write of $0000-$3EFF.
    #[inline]
    pub fn ppu_write(&mut self, addr: u16, value: u8, ciram: &mut [u8; 0x800]) {
        if self.map.watches_ppu {
            self.observe_ppu(addr, false);
        }
        let addr = usize::from(addr & 0x3FFF);
        if addr < 0x2000 {
            if self.chr_writable {
                let index = self.map.chr[addr >> 10] + (addr & 0x3FF);
                // TQROM's ROM banks sit below its RAM; a disabled CHR RAM (mapper 93) maps the
                // open-bus page, after the state-bearing part.
                if (self.chr_ram_start..self.chr_end).contains(&index) {
                    self.track(Section::ChrRam, index - self.chr_ram_start, self.chr[index], value);
                    self.chr[index] = value;
                }
            }
        } else {
            let at = self.map.nametable_at[(addr >> 10) & 3];
            let offset = addr & 0x3FF;
            if at < NAMETABLE_IN_CART {
                let index = (at + offset) & 0x7FF;
                self.track(Section::Vram, index, ciram[index], value);
                ciram[index] = value;
            } else {
                let index = at - NAMETABLE_IN_CART + offset;
                if index < self.chr_ram_start || index >= self.chr_end {
                    // CHR ROM, and the MMC5's fill page and page of zeros, take no writes.
                    return;
                }
                self.track(Section::ChrRam, index - self.chr_ram_start, self.chr[index], value);
                self.chr[index] = value;
            }
        }
    }

    /// The PPU drove `addr` onto its address bus without a data transfer.
    #[inline(always)]
    pub fn ppu_address(&mut self, addr: u16) {
        if self.map.watches_ppu {
            self.observe_ppu(addr, false);
        }
    }

    /// True when the board watches the PPU's address bus (then every PPU access must reach it).
    #[inline(always)]
    pub fn watches_ppu(&self) -> bool {
        self.map.watches_ppu
    }

    /// True when the board sees of the PPU's accesses only the reads' addresses, and supplies none
    /// of their data (the MMC5 without 8x16 sprites, extended attributes or split; see
    /// [`PpuBus::only_reads_observed`](crate::ppu::PpuBus::only_reads_observed)).
    #[inline(always)]
    pub fn hears_only_read_addresses(&self) -> bool {
        self.board.hears_only_read_addresses()
    }

    /// PPU reads of `addrs` whose data the board does not supply (see
    /// [`Cartridge::hears_only_read_addresses`]).
    #[inline(always)]
    pub fn hear_ppu_reads<const N: usize>(&mut self, addrs: [u16; N]) {
        self.board.hear_ppu_reads(addrs);
    }

    /// True when the board sees of the PPU's accesses only the changes of A12, and counts M2 edges
    /// only against A12 (see
    /// [`PpuBus::only_a12_observed`](crate::ppu::PpuBus::only_a12_observed)).
    #[inline(always)]
    pub fn sees_only_a12(&self) -> bool {
        self.board.sees_only_a12()
    }

    /// The level of PPU A12 the board saw last, where it watches A12 (true = high).
    #[inline(always)]
    pub fn a12_high(&self) -> bool {
        self.board.a12_high()
    }

    /// One CPU cycle (M2) has begun.
    #[inline]
    pub fn cpu_cycle(&mut self) {
        self.board.cpu_cycles(1);
    }

    /// `edges` calls of [`Cartridge::cpu_cycle`] (no PPU access between them) on the lazy schedule's
    /// M2 replay for the MMC3 and the MMC5: two arms where the board dispatch has one for every board
    /// that counts M2 (a third arm cost the MMC3 demo 0.4% more host instructions per frame).
    #[inline(always)]
    pub(crate) fn replay_m2_edges(&mut self, edges: u64) {
        self.board.replay_m2_edges(edges);
    }

    /// [`Cartridge::replay_m2_edges`] for the boards with a delayed IRQ (the TC0690, the RAMBO-1),
    /// through the whole board dispatch, in a replay of their own.
    #[inline(always)]
    pub(crate) fn replay_m2_edges_of_any_board(&mut self, edges: u64) {
        self.board.cpu_cycles(edges);
    }

    /// True when the board's /IRQ rises M2 edges after its cause (the TC0690's, the RAMBO-1's):
    /// the lazy schedule predicts it by [`Cartridge::m2_edges_before_irq`] too.
    pub fn has_delayed_irq(&self) -> bool {
        self.board.has_delayed_irq()
    }

    /// True when the board counts CPU cycles (M2 edges) against PPU A12, so the order of PPU dots and
    /// CPU cycles matters to it (the MMC3's A12 filter).
    pub fn counts_m2_edges(&self) -> bool {
        self.board.counts_m2_edges()
    }

    /// True when the board's /IRQ cannot be predicted by the lazy PPU schedule, so the console runs
    /// the eager one (no bundled board since issue 48).
    pub fn needs_eager_ppu(&self) -> bool {
        self.board.needs_eager_ppu()
    }

    /// M2 edges, from the last one delivered, to the one on which the board's /IRQ rises by an IRQ
    /// delay under way or an M2 counter (the TC0690's and RAMBO-1's); `u32::MAX` when none does.
    pub fn m2_edges_before_irq(&self) -> u32 {
        self.board.m2_edges_before_irq()
    }

    /// PPU A12 counter clocks that must happen before the board's /IRQ could be asserted; `u32::MAX`
    /// when the PPU cannot assert it (no counter, disabled, or already asserted).
    pub fn a12_clocks_before_irq(&self) -> u32 {
        self.board.a12_clocks_before_irq()
    }

    /// M2 edges the board's A12 counter has seen since A12 fell, `None` while A12 is high.
    pub fn a12_low_m2_edges(&self) -> Option<u8> {
        self.board.a12_low_m2_edges()
    }

    /// The board's /IRQ output (true = asserted). Read at every catch-up of the CPU's IRQ input: the
    /// MMC3's is a field test inline; the other boards' go through the board's dispatch.
    #[inline(always)]
    pub fn irq_line(&self) -> bool {
        if let Some(line) = self.board.mmc3_irq_line() {
            return line;
        }
        self.has_irq_output && self.irq_line_other()
    }

    #[inline(never)]
    fn irq_line_other(&self) -> bool {
        self.board.irq_output() == Some(true)
    }

    /// The console's reset button was pressed. None of the supported boards sees it: the cartridge
    /// connector has no reset line, so mapper registers (and MMC1's shift register) keep their values.
    pub fn reset(&mut self) {}

    /// The battery-backed part of PRG RAM, to save when the session ends; `None` without a battery.
    /// On the Bandai LZ93D50 boards with a serial EEPROM (mappers 16 and 159), the EEPROM's 256 or
    /// 128 bytes instead; on the boards with a writable flash chip ([`Cartridge::has_flash`]), the
    /// whole flash (the PRG as programmed; `sst39sf_flash.rs`).
    /// (NES 2.0 CHR-NVRAM, used by no supported board, is treated as plain CHR RAM.)
    pub fn battery_ram(&self) -> Option<&[u8]> {
        if self.has_flash {
            return Some(&self.prg_rom);
        }
        if let Some(memory) = self.board.battery_memory(&self.info) {
            return Some(memory);
        }
        let size = self.info.prg_nvram_size;
        if size == 0 { None } else { self.prg_ram.get(..size) }
    }

    /// True when [`Cartridge::battery_ram`] is PRG RAM, which the CPU sees from
    /// [`Cartridge::prg_ram_cpu_address`]; false without a battery, and when the battery memory is
    /// the board's own (a serial EEPROM, a chip's internal RAM) or the flash, none of them CPU memory.
    pub fn battery_ram_is_prg_ram(&self) -> bool {
        !self.has_flash && self.board.battery_memory(&self.info).is_none() && self.battery_ram().is_some()
    }

    /// The battery-backed memory, writable (see [`Cartridge::battery_ram`]); `None` without a battery.
    pub fn battery_ram_mut(&mut self) -> Option<&mut [u8]> {
        if self.has_flash {
            self.flash_digest = None;
            return Some(&mut self.prg_rom);
        }
        if self.board.battery_memory(&self.info).is_some() {
            return self.board.battery_memory_mut(&self.info);
        }
        let size = self.info.prg_nvram_size;
        if size == 0 { None } else { self.prg_ram.get_mut(..size) }
    }

    /// Restores a battery save. The size must match [`Cartridge::battery_ram`]'s exactly; on error the
    /// RAM is left untouched.
    pub fn load_battery_ram(&mut self, data: &[u8]) -> Result<(), BatteryRamError> {
        if self.has_flash {
            if data.len() != self.prg_rom.len() {
                return Err(BatteryRamError::SizeMismatch {
                    expected: self.prg_rom.len(),
                    actual: data.len(),
                });
            }
            self.prg_rom.copy_from_slice(data);
            self.flash_digest = None;
            return Ok(());
        }
        if let Some(memory) = self.board.battery_memory_mut(&self.info) {
            if data.len() != memory.len() {
                return Err(BatteryRamError::SizeMismatch { expected: memory.len(), actual: data.len() });
            }
            memory.copy_from_slice(data);
            return Ok(());
        }
        // A board without PRG RAM (the X1-005's RAM is inside the chip) has no battery there, whatever
        // the header declares: `battery_ram` is `None` for it too.
        let size = self.info.prg_nvram_size;
        let Some(memory) = self.prg_ram.get_mut(..size).filter(|_| size != 0) else {
            return Err(BatteryRamError::NoBattery);
        };
        if data.len() != size {
            return Err(BatteryRamError::SizeMismatch { expected: size, actual: data.len() });
        }
        memory.copy_from_slice(data);
        Ok(())
    }

    /// The board's serial EEPROM, where it has one (see [`Cartridge::battery_ram`]).
    fn eeprom_mut(&mut self) -> Option<&mut [u8]> {
        self.board.eeprom_mut()
    }

    /// The board's register state (mapper registers, IRQ counter, A12 filter, MMC1 shift register and
    /// last write cycle, MMC2/MMC4 latches) as Pod bytes; empty for NROM. The layout is the board's
    /// state struct (`TxromState` on the MMC3), private to the core; [`crate::state::mapper_layout`]
    /// names its fields.
    pub fn mapper_state_bytes(&self) -> &[u8] {
        self.board.state_bytes()
    }

    /// [`board::Board::visit_state`] on this cartridge's board.
    #[inline]
    pub(crate) fn visit_mapper_state<V: board::StateVisitor>(&self, visitor: V) -> V::Output {
        self.board.visit_state(visitor)
    }

    /// True when the board's registers may have changed since
    /// [`Cartridge::mark_mapper_digest_fresh`] (any mutable access to the board marks them).
    #[inline(always)]
    pub(crate) fn mapper_digest_stale(&self) -> bool {
        self.board.digest_stale()
    }

    /// The console has summed the board's registers as they stand (see `state/digest.rs`).
    #[inline(always)]
    pub(crate) fn mark_mapper_digest_fresh(&mut self) {
        self.board.mark_digest_fresh();
    }

    /// The board's register state as mutable bytes, to restore a snapshot. Call
    /// [`Cartridge::rebuild_caches`] afterwards.
    pub fn mapper_state_bytes_mut(&mut self) -> &mut [u8] {
        self.board.state_bytes_mut()
    }

    /// PRG RAM ($6000-$7FFF, all banks; battery-backed part first). Empty when the board has none.
    /// On a board with a writable flash chip ([`Cartridge::has_flash`]), which has no PRG RAM, the
    /// flash's memory: the PRG as the game has programmed it.
    pub fn prg_ram(&self) -> &[u8] {
        if self.has_flash { &self.prg_rom } else { &self.prg_ram }
    }

    /// The CPU address where PRG RAM's first byte appears (naming bytes in diffs): $6000, or $7000
    /// on the MMC6.
    pub fn prg_ram_cpu_address(&self) -> u16 {
        self.board.prg_ram_cpu_address()
    }

    /// PRG RAM, mutable (snapshot restore); the flash on the flash boards, like [`Cartridge::prg_ram`].
    pub fn prg_ram_mut(&mut self) -> &mut [u8] {
        if self.has_flash {
            self.flash_digest = None;
            &mut self.prg_rom
        } else {
            &mut self.prg_ram
        }
    }

    /// The board's PPU-side RAM: CHR RAM (none when the board has CHR ROM; TQROM's beside its ROM)
    /// followed by the four-screen board's 2 KiB of nametable VRAM, or GTROM's 16 KiB of nametable RAM
    /// (see [`Cartridge::extra_vram`]). Empty for a CHR ROM board without either.
    pub fn chr_ram(&self) -> &[u8] {
        &self.chr[self.chr_ram_start..self.chr_end]
    }

    /// The board's PPU-side RAM, mutable (snapshot restore); same layout as [`Cartridge::chr_ram`].
    pub fn chr_ram_mut(&mut self) -> &mut [u8] {
        &mut self.chr[self.chr_ram_start..self.chr_end]
    }

    /// The four-screen board's 2 KiB of VRAM (nametables at $2800 and $2C00), or GTROM's 16 KiB of
    /// nametable RAM; the tail of [`Cartridge::chr_ram`]; empty on other boards.
    pub fn extra_vram(&self) -> &[u8] {
        &self.chr[self.chr_len..self.chr_end]
    }

    /// The four-screen VRAM, mutable.
    pub fn extra_vram_mut(&mut self) -> &mut [u8] {
        &mut self.chr[self.chr_len..self.chr_end]
    }

    /// The PRG ROM image as stored in the file (on a flash board, as loaded, whatever the game has
    /// programmed since: see [`Cartridge::prg_ram`]).
    pub fn prg_rom(&self) -> &[u8] {
        // Padding only ever repeats the image after its end.
        let image = if self.has_flash { &self.loaded_prg } else { &self.prg_rom };
        &image[..self.info.prg_rom_size]
    }

    /// The CHR ROM image as stored in the file (empty when the board has CHR RAM).
    pub fn chr_rom(&self) -> &[u8] {
        if self.chr_is_ram { &[] } else { &self.chr[..self.info.chr_rom_size] }
    }

    /// Power-on: board registers take their power-on values; volatile PRG RAM, CHR RAM and four-screen
    /// VRAM are cleared; battery-backed PRG RAM keeps its contents; a trainer is copied to $7000 again.
    /// An MMC3 revision chosen with
    /// [`Cartridge::set_mmc3_revision`] is kept.
    pub fn power_on(&mut self) {
        let revision = self.mmc3_revision();
        // A serial EEPROM keeps its contents like battery-backed RAM.
        let mut eeprom = [0u8; 256];
        let kept = self.eeprom_mut().map(|memory| {
            eeprom[..memory.len()].copy_from_slice(memory);
            memory.len()
        });
        if let Some(mut board) = Board::new(BoardConfig::from_info(&self.info)) {
            board.configure(&self.info);
            self.board = TrackedBoard::new(board);
        }
        if let (Some(len), Some(memory)) = (kept, self.eeprom_mut()) {
            memory.copy_from_slice(&eeprom[..len]);
        }
        if let Some(revision) = revision {
            self.set_mmc3_revision(revision);
        }
        let battery = self.info.prg_nvram_size.min(self.prg_ram.len());
        self.prg_ram[battery..].fill(0);
        if let Some(trainer) = &self.trainer {
            // from_ines made PRG RAM at least 8 KiB when there is a trainer (the MMC6's 1 KiB starts
            // at $7000 itself).
            let start = TRAINER_ADDR - usize::from(self.prg_ram_cpu_address());
            self.prg_ram[start..start + trainer.len()].copy_from_slice(trainer);
        }
        self.chr_ram_mut().fill(0);
        self.rebuild_caches();
    }

    /// Recomputes the derived bank map from the board state, e.g. after
    /// [`Cartridge::mapper_state_bytes_mut`] restored a snapshot.
    pub fn rebuild_caches(&mut self) {
        self.map = MemoryMap::new(self.prg_rom.len(), self.chr_len, self.prg_ram.len(), self.info.mirroring);
        self.map.chr_open_bus = (self.board.chr_open_bus_page(self.chr_is_ram)
            && self.chr.len() > self.chr_end)
            .then_some(self.chr_end);
        self.remap();
    }

    /// The Game Genie codes patching CPU reads of $8000-$FFFF (see [`crate::Nes::set_game_genie_codes`]).
    pub fn game_genie_codes(&self) -> impl Iterator<Item = &GameGenieCode> {
        self.game_genie.codes()
    }

    /// Replaces the Game Genie codes; on error nothing changes. The machine's identity depends on
    /// them: change them through [`crate::Nes::set_game_genie_codes`], which recomputes it.
    pub(crate) fn set_game_genie_codes(&mut self, codes: &[GameGenieCode]) -> Result<(), GameGenieError> {
        self.game_genie = GameGenie::new(codes)?;
        self.remap();
        Ok(())
    }

    /// The MMC3's (or MMC6's) IRQ behaviour; `None` for other boards.
    pub fn mmc3_revision(&self) -> Option<Mmc3Revision> {
        self.board.mmc3_revision()
    }

    /// Selects the MMC3's IRQ behaviour (default: from the NES 2.0 submapper, 4 = MMC3A and
    /// 1 = MMC6 give [`Mmc3Revision::A`], else [`Mmc3Revision::B`]). Returns false, changing nothing,
    /// when the board is not an MMC3 or MMC6. The choice is part of the mapper state, so snapshots
    /// keep it.
    pub fn set_mmc3_revision(&mut self, revision: Mmc3Revision) -> bool {
        self.board.set_mmc3_revision(revision)
    }

    #[inline(always)]
    fn prg_rom_byte(&self, addr: u16) -> u8 {
        let addr = usize::from(addr);
        self.prg_rom[self.map.prg[(addr >> 13) & 3] + (addr & 0x1FFF)]
    }

    /// Index into PRG RAM of `addr` in `window` (its window of $6000-$7FFF); RAM smaller than the
    /// window repeats through it. Only called when RAM is present (the window reads or writes RAM).
    #[inline]
    fn prg_ram_index(&self, window: PrgRamWindow, addr: u16) -> usize {
        (window.offset + usize::from(addr) % PRG_RAM_WINDOW) % self.prg_ram.len()
    }

    /// A watching board sees a PPU bus access. The MMC3's A12 edge check (a compare, on every fetch of
    /// the PPU) stays inline; other boards' observers are called out of line.
    #[inline(always)]
    fn observe_ppu(&mut self, addr: u16, read: bool) {
        // The MMC3's inline (it never changes the memory map); the MMC5 sees reads only
        // (`ppu_read_other`), address-only dots and writes pass it by.
        if self.board.observe_ppu_inline(addr).is_none() {
            self.observe_ppu_other(addr, read);
        }
    }

    #[inline(never)]
    fn observe_ppu_other(&mut self, addr: u16, read: bool) {
        if self.board.observe_ppu(addr, read) {
            self.remap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cartridge, repeat_to_multiple};

    #[test]
    fn a_peeked_pair_is_two_peeks() {
        // NROM with 8 KiB of CHR ROM, vertical mirroring; and the same wired four-screen (nametable
        // pages 2-3 in the cartridge's VRAM).
        for flags_6 in [0x01u8, 0x08] {
            let mut rom = vec![b'N', b'E', b'S', 0x1A, 1, 1, flags_6, 0, 0, 0, 0, 0, 0, 0, 0, 0];
            rom.extend((0..0x4000u32).map(|i| i as u8));
            rom.extend((0..0x2000u32).map(|i| (i * 7 + (i >> 8)) as u8));
            let mut cart = Cartridge::from_ines(&rom).expect("a valid NROM image");
            for (i, byte) in cart.extra_vram_mut().iter_mut().enumerate() {
                *byte = (i * 13) as u8;
            }
            let ciram: [u8; 0x800] = core::array::from_fn(|i| (i * 5 + 3) as u8);
            for first in (0..0x3F00u16).step_by(7) {
                for offset in [0u16, 8, 0x3C0, 0x3FF] {
                    let second = (first & !0x3FF) | (offset ^ (first & 0x3FF));
                    let expected = (cart.ppu_peek(first, &ciram), cart.ppu_peek(second, &ciram));
                    assert_eq!(
                        cart.ppu_peek_pair(first, second, &ciram),
                        expected,
                        "{first:04X} {second:04X}"
                    );
                }
            }
        }
    }

    /// An iNES 1.0 image of `mapper` with `prg_16k` x 16 KiB of PRG ROM (each 8 KiB bank's bytes
    /// all equal to its number) and `chr_8k` x 8 KiB of CHR ROM (each 1 KiB bank's bytes its number).
    fn ines(mapper: u8, prg_16k: u8, chr_8k: u8) -> Vec<u8> {
        let mut rom =
            vec![b'N', b'E', b'S', 0x1A, prg_16k, chr_8k, mapper << 4, mapper & 0xF0, 0, 0, 0, 0, 0, 0, 0, 0];
        for bank in 0..usize::from(prg_16k) * 2 {
            rom.extend(std::iter::repeat_n(bank as u8, 0x2000));
        }
        for bank in 0..usize::from(chr_8k) * 8 {
            rom.extend(std::iter::repeat_n(bank as u8, 0x400));
        }
        rom
    }

    #[test]
    fn cprom_from_ines_1_has_16_kib_of_chr_ram() {
        let mut cart = Cartridge::from_ines(&ines(13, 2, 0)).expect("CPROM");
        assert_eq!(cart.chr_ram().len(), 0x4000);
        let mut ciram = [0u8; 0x800];
        cart.cpu_write(0x8000, 3, 1); // the ROM's byte there is 0: the bus conflict ANDs to 0
        cart.ppu_write(0x1000, 0x5A, &mut ciram);
        assert_eq!(cart.chr_ram()[0x0000], 0x5A, "bank 0 at $1000 too");
        let index_of_three = (0x8000..0x10000u32).find(|&a| cart.cpu_peek(a as u16, 0) & 3 == 3);
        assert_eq!(index_of_three, Some(0xE000), "PRG bank 3 is the first holding a 3");
        cart.cpu_write(0xE000, 3, 2);
        cart.ppu_write(0x1001, 0xA5, &mut ciram);
        assert_eq!(cart.chr_ram()[0x3001], 0xA5, "bank 3 at $1000");
        assert_eq!(cart.ppu_peek(0x0000, &ciram), 0x5A, "$0000 stays on bank 0 (written through $1000)");
        assert_eq!(cart.ppu_peek(0x1001, &ciram), 0xA5);
    }

    #[test]
    fn mapper_185_disabled_chr_reads_the_address_low_byte() {
        let mut cart = Cartridge::from_ines(&ines(185, 2, 1)).expect("mapper 185");
        assert!(cart.chr_ram().is_empty(), "the open-bus page is not state");
        let ciram = [0u8; 0x800];
        // $FF in PRG bank 3 ($E000-$FFFF holds 3s): the bus conflict leaves 3, which enables CHR.
        cart.cpu_write(0xE000, 0xFF, 1);
        assert_eq!(cart.ppu_peek(0x0C05, &ciram), 3, "CHR ROM: 1 KiB bank 3");
        cart.cpu_write(0x8000, 0xFF, 2); // PRG bank 0 holds 0s: the latch becomes 0, CHR disabled
        for addr in [0x0000u16, 0x0C05, 0x1234, 0x1FFF] {
            assert_eq!(cart.ppu_peek(addr, &ciram), addr as u8, "{addr:#06X}");
        }
    }

    #[test]
    fn low_registers_answer_below_8000() {
        // NINA-001 (mapper 34 with 64 KiB of CHR ROM): $7FFD-$7FFF are registers, and RAM too.
        let mut cart = Cartridge::from_ines(&ines(34, 4, 8)).expect("NINA-001");
        let ciram = [0u8; 0x800];
        cart.cpu_write(0x7FFD, 1, 1);
        cart.cpu_write(0x7FFF, 9, 2);
        assert_eq!(cart.cpu_peek(0x8000, 0), 4, "32 KiB bank 1 starts with 8 KiB bank 4");
        assert_eq!(cart.ppu_peek(0x1000, &ciram), 36, "4 KiB bank 9 starts with 1 KiB bank 36");
        assert_eq!(cart.cpu_peek(0x7FFD, 0), 1, "the write reached PRG RAM as well");
        // NINA-03/06 (mapper 79): $4100 with A8 set.
        let mut cart = Cartridge::from_ines(&ines(79, 4, 4)).expect("NINA-03");
        cart.cpu_write(0x4000 | 0x0100, 0x0B, 1);
        assert_eq!(cart.cpu_peek(0x8000, 0), 4);
        assert_eq!(cart.ppu_peek(0x0000, &ciram), 24, "8 KiB bank 3");
        cart.cpu_write(0x4200, 0x00, 2);
        assert_eq!(cart.cpu_peek(0x8000, 0), 4, "$4200 has A8 clear: not the register");
        // JF-11/JF-14 (mapper 140): the register at $6000, where no RAM answers.
        let mut cart = Cartridge::from_ines(&ines(140, 4, 4)).expect("JF-11");
        cart.cpu_write(0x6000, 0x12, 1);
        assert_eq!(cart.cpu_peek(0x8000, 0), 4);
        assert_eq!(cart.ppu_peek(0x0000, &ciram), 16);
        assert_eq!(cart.cpu_peek(0x6000, 0x60), 0x60, "open bus");
    }

    #[test]
    fn small_images_repeat_to_fill_whole_banks() {
        assert_eq!(&*repeat_to_multiple(&[1, 2, 3], 4), &[1, 2, 3, 1]);
        assert_eq!(&*repeat_to_multiple(&[1, 2, 3, 4], 4), &[1, 2, 3, 4]);
        assert_eq!(repeat_to_multiple(&[7; 0x3000], 0x2000).len(), 0x4000);
    }
}
