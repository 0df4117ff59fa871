//! The console's region: the NTSC NES (2A03 + 2C02), the PAL NES (2A07 + 2C07) and the Dendy
//! famiclones (UA6527P + UA6538). Every per-region number lives in one [`RegionTiming`] table per
//! region. The per-cycle and per-dot code is generic over a [`RegionModel`] (the table as a
//! constant), chosen once per instruction loop, catch-up or stretch, so it never asks which region
//! it runs; the rest keeps the table (`Ppu`, `Apu`) or looks it up.
//!
//! Sources: nesdev "Cycle reference chart" and "Clock rate" (master clock dividers, scanlines per
//! frame), "PPU frame timing" (the odd-frame skip is NTSC only), "APU Frame Counter", "APU Noise" and
//! "APU DMC" (the PAL tables), "Dendy" and the nesdev forum's Dendy FAQ (VBlank flag at line 291,
//! NTSC APU tables, 3 dots per CPU cycle).

/// Which console the core emulates. Stored in the machine state (hashed and snapshotted), so two
/// consoles of different regions never compare as equal and a snapshot never restores into another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Region {
    /// NTSC NES / Famicom: 21.477272 MHz master clock, CPU /12, PPU /4, 262 lines.
    #[default]
    Ntsc = 0,
    /// PAL NES: 26.601712 MHz master clock, CPU /16, PPU /5 (3.2 dots per CPU cycle), 312 lines,
    /// VBlank from line 241.
    Pal = 1,
    /// Dendy and similar famiclones: 26.601712 MHz, CPU /15, PPU /5 (3 dots per CPU cycle), 312 lines,
    /// VBlank flag and NMI at line 291.
    Dendy = 2,
}

impl Region {
    /// Every region, in the order of their stored byte.
    pub const ALL: [Region; 3] = [Region::Ntsc, Region::Pal, Region::Dendy];

    /// CPU cycles per second as an exact ratio (numerator, denominator): the master clock (236.25 MHz
    /// / 11 NTSC, 26.6017125 MHz PAL and Dendy) divided by 12, 16 or 15 (nesdev "Clock rate").
    pub const fn cpu_clock(self) -> (u64, u64) {
        match self {
            Region::Ntsc => (236_250_000, 11 * 12),
            Region::Pal => (53_203_425, 2 * 16),
            Region::Dendy => (53_203_425, 2 * 15),
        }
    }

    /// Decodes the byte stored in the machine state and the snapshot header.
    pub const fn from_u8(value: u8) -> Option<Region> {
        match value {
            0 => Some(Region::Ntsc),
            1 => Some(Region::Pal),
            2 => Some(Region::Dendy),
            _ => None,
        }
    }

    /// The lowercase name the command line and reports use (`ntsc`, `pal`, `dendy`).
    pub const fn name(self) -> &'static str {
        match self {
            Region::Ntsc => "ntsc",
            Region::Pal => "pal",
            Region::Dendy => "dendy",
        }
    }

    /// Parses [`Region::name`] (case-insensitive).
    pub fn from_name(name: &str) -> Option<Region> {
        Region::ALL.into_iter().find(|region| region.name().eq_ignore_ascii_case(name))
    }

    /// The region's numbers.
    pub const fn timing(self) -> &'static RegionTiming {
        match self {
            Region::Ntsc => &NTSC,
            Region::Pal => &PAL,
            Region::Dendy => &DENDY,
        }
    }
}

impl core::fmt::Display for Region {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that differs between regions, as plain numbers.
#[derive(Debug, PartialEq, Eq)]
pub struct RegionTiming {
    /// The region these numbers belong to.
    pub region: Region,
    /// Master clock frequency in Hz (for frame rates and audio resampling; the core counts master
    /// clocks, never seconds).
    pub master_clock_hz: u64,
    /// Master clocks per CPU cycle.
    pub master_per_cpu_cycle: u64,
    /// Master clocks per PPU dot.
    pub master_per_dot: u64,
    /// Master clocks from the start of a read cycle to the moment the data is sampled.
    pub read_access_offset: u64,
    /// Master clocks from the start of a write cycle to the moment the data is driven.
    pub write_access_offset: u64,
    /// The PPU's numbers.
    pub ppu: PpuTiming,
    /// The APU's numbers.
    pub apu: ApuTiming,
}

impl RegionTiming {
    /// PPU dots per frame (the odd-frame skip not counted).
    pub const fn dots_per_frame(&self) -> u64 {
        // 341 dots per line in every region (`ppu::DOTS_PER_SCANLINE`; named here as a number so
        // the PPU, which reads these tables, is not also a dependency of them).
        self.ppu.scanlines_per_frame as u64 * 341
    }

    /// Frames per second, in millihertz, rounded down: master clock / (master clocks per dot x dots
    /// per frame), the odd-frame skip averaged in on NTSC (half a dot per frame).
    pub const fn frame_rate_millihertz(&self) -> u64 {
        // Twice the dots per frame, so NTSC's half dot stays an integer.
        let half_dots = 2 * self.dots_per_frame() - if self.ppu.odd_frame_skip { 1 } else { 0 };
        self.master_clock_hz * 2 * 1000 / (self.master_per_dot * half_dots)
    }

    /// Frames per second (see [`RegionTiming::frame_rate_millihertz`]).
    pub fn frame_rate_hz(&self) -> f64 {
        let half_dots = 2 * self.dots_per_frame() - u64::from(self.ppu.odd_frame_skip);
        self.master_clock_hz as f64 * 2.0 / (self.master_per_dot * half_dots) as f64
    }

    /// CPU cycles per second, rounded down.
    pub const fn cpu_clock_hz(&self) -> u64 {
        self.master_clock_hz / self.master_per_cpu_cycle
    }
}

/// A region as a type. The stepping code (CPU cycles, PPU dots, the lazy schedule's predictions) is
/// generic over it and chosen once per instruction or catch-up, so every per-region number in it is
/// a constant: reading them from fields cost the NTSC demo 2.0% more host instructions (callgrind,
/// 300 frames).
pub trait RegionModel {
    /// The region's numbers (by value: read through a reference, the stepping loops kept
    /// loading some of them).
    const TIMING: RegionTiming;
}

/// [`Region::Ntsc`] as a type.
#[derive(Debug)]
pub enum NtscModel {}
/// [`Region::Pal`] as a type.
#[derive(Debug)]
pub enum PalModel {}
/// [`Region::Dendy`] as a type.
#[derive(Debug)]
pub enum DendyModel {}

impl RegionModel for NtscModel {
    const TIMING: RegionTiming = NTSC_TIMING;
}
impl RegionModel for PalModel {
    const TIMING: RegionTiming = PAL_TIMING;
}
impl RegionModel for DendyModel {
    const TIMING: RegionTiming = DENDY_TIMING;
}

/// Runs `$body` with `$model` naming the [`RegionModel`] of `$region`.
macro_rules! with_region_model {
    ($region:expr, $model:ident => $body:expr) => {
        match $region {
            $crate::region::Region::Ntsc => {
                type $model = $crate::region::NtscModel;
                $body
            }
            $crate::region::Region::Pal => {
                type $model = $crate::region::PalModel;
                $body
            }
            $crate::region::Region::Dendy => {
                type $model = $crate::region::DendyModel;
                $body
            }
        }
    };
}
pub(crate) use with_region_model;

/// The PPU's per-region numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PpuTiming {
    /// The region these numbers belong to.
    pub region: Region,
    /// Scanlines per frame, pre-render line included.
    pub scanlines_per_frame: u16,
    /// The line whose dot 1 sets the VBlank flag (and raises NMI when enabled).
    pub vblank_scanline: u16,
    /// The pre-render line (the last of the frame): its dot 1 clears the flags.
    pub pre_render_scanline: u16,
    /// True when odd frames skip the pre-render line's last dot while rendering (NTSC only).
    pub odd_frame_skip: bool,
    /// True when PPUMASK bit 5 emphasizes green and bit 6 red (the 2C07 and the Dendy's UA6538 swap
    /// them; nesdev "Colour emphasis").
    pub swap_red_green_emphasis: bool,
    /// The first and last scanline of the forced OAM refresh (the 2C07 only): OAMADDR counts up on
    /// every even dot from 2 to 340 of these lines, so every OAM row is read and kept from decaying
    /// through the long PAL VBlank. nesdev wiki: the refresh starts 24 lines after VBlank does; the
    /// per-dot pattern and the last line (310, before pre-render) are from the hardware research
    /// in nesdev-org/MesenCE#137, which also finds OAMADDR $8C further on at the end (170 x 46
    /// increments) and no refresh on a Dendy.
    pub forced_oam_refresh: Option<(u16, u16)>,
}

/// The APU's per-region numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApuTiming {
    /// The frame counter's step cycles.
    pub frame_steps: FrameSteps,
    /// Noise timer periods in APU cycles (the nesdev table's CPU-cycle periods halved), indexed by
    /// bits 3-0 of $400E.
    pub noise_periods: [u16; 16],
    /// DMC output periods in CPU cycles, indexed by bits 3-0 of $4010.
    pub dmc_rates: [u16; 16],
}

/// CPU cycles after the frame sequencer's reset at which its steps happen (the wiki's APU-cycle
/// numbers doubled: NTSC APU cycle 3728.5 is CPU cycle 7457).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSteps {
    /// First quarter frame (both modes).
    pub quarter_1: u16,
    /// Second quarter frame and first half frame (both modes).
    pub half_1: u16,
    /// Third quarter frame (both modes).
    pub quarter_3: u16,
    /// 4-step mode: the frame interrupt flag is set on this cycle and the next (even while the
    /// interrupt is inhibited); on the one after, it is set only if the interrupt is not inhibited.
    pub irq_first: u16,
    /// 4-step mode: fourth quarter frame and second half frame.
    pub half_2_four_step: u16,
    /// 4-step mode: the last cycle of the sequence; it is also cycle 0 of the next one.
    pub end_four_step: u16,
    /// 5-step mode: fourth quarter frame and second half frame.
    pub half_2_five_step: u16,
    /// 5-step mode: the last cycle of the sequence; it is also cycle 0 of the next one.
    pub end_five_step: u16,
    /// One bit per block of 128 sequencer cycles (the whole `u16` range): set where a block holds a
    /// step of either mode, so most ticks see that they reach none with one lookup.
    pub blocks: [u64; 8],
}

impl FrameSteps {
    /// The steps with their block bitmap.
    const fn new(steps: [u16; 8]) -> FrameSteps {
        let mut blocks = [0u64; 8];
        let mut i = 0;
        while i < steps.len() {
            let block = (steps[i] >> 7) as usize;
            blocks[block / 64] |= 1 << (block % 64);
            i += 1;
        }
        FrameSteps {
            quarter_1: steps[0],
            half_1: steps[1],
            quarter_3: steps[2],
            irq_first: steps[3],
            half_2_four_step: steps[4],
            end_four_step: steps[5],
            half_2_five_step: steps[6],
            end_five_step: steps[7],
            blocks,
        }
    }

    /// Every count at which the sequencer may act, whatever the mode.
    pub const fn all(&self) -> [u16; 8] {
        [
            self.quarter_1,
            self.half_1,
            self.quarter_3,
            self.irq_first,
            self.half_2_four_step,
            self.end_four_step,
            self.half_2_five_step,
            self.end_five_step,
        ]
    }
}

/// nesdev "APU Frame Counter", NTSC column: 3728.5, 7456.5, 11185.5, 14914, 14914.5, 14915 and
/// 18640.5, 18641 APU cycles.
const NTSC_FRAME_STEPS: FrameSteps = FrameSteps::new([7457, 14913, 22371, 29828, 29829, 29830, 37281, 37282]);
/// nesdev "APU Frame Counter", PAL column: 4156.5, 8313.5, 12469.5, 16626, 16626.5, 16627 and
/// 20782.5, 20783 APU cycles.
const PAL_FRAME_STEPS: FrameSteps = FrameSteps::new([8313, 16627, 24939, 33252, 33253, 33254, 41565, 41566]);

/// nesdev "APU Noise", NTSC: 4, 8, 16, 32, 64, 96, 128, 160, 202, 254, 380, 508, 762, 1016, 2034,
/// 4068 CPU cycles.
const NTSC_NOISE_PERIODS: [u16; 16] = [2, 4, 8, 16, 32, 48, 64, 80, 101, 127, 190, 254, 381, 508, 1017, 2034];
/// nesdev "APU Noise", PAL: 4, 8, 14, 30, 60, 88, 118, 148, 188, 236, 354, 472, 708, 944, 1890, 3778
/// CPU cycles.
const PAL_NOISE_PERIODS: [u16; 16] = [2, 4, 7, 15, 30, 44, 59, 74, 94, 118, 177, 236, 354, 472, 945, 1889];

/// nesdev "APU DMC", NTSC rates.
const NTSC_DMC_RATES: [u16; 16] =
    [428, 380, 340, 320, 286, 254, 226, 214, 190, 160, 142, 128, 106, 84, 72, 54];
/// nesdev "APU DMC", PAL rates.
const PAL_DMC_RATES: [u16; 16] = [398, 354, 316, 298, 276, 236, 210, 198, 176, 148, 132, 118, 98, 78, 66, 50];

/// nesdev "Cycle reference chart": NTSC master clock 236.25 MHz / 11.
const NTSC_MASTER_HZ: u64 = 21_477_272;
/// nesdev "Cycle reference chart": PAL (and Dendy) master clock 26.6017125 MHz.
const PAL_MASTER_HZ: u64 = 26_601_712;

/// The NTSC console.
pub static NTSC: RegionTiming = NTSC_TIMING;

const NTSC_TIMING: RegionTiming = RegionTiming {
    region: Region::Ntsc,
    master_clock_hz: NTSC_MASTER_HZ,
    master_per_cpu_cycle: 12,
    master_per_dot: 4,
    read_access_offset: 5,
    write_access_offset: 7,
    ppu: PpuTiming {
        region: Region::Ntsc,
        scanlines_per_frame: 262,
        vblank_scanline: 241,
        pre_render_scanline: 261,
        odd_frame_skip: true,
        swap_red_green_emphasis: false,
        forced_oam_refresh: None,
    },
    apu: ApuTiming {
        frame_steps: NTSC_FRAME_STEPS,
        noise_periods: NTSC_NOISE_PERIODS,
        dmc_rates: NTSC_DMC_RATES,
    },
};

/// The PAL console. The access offsets keep the NTSC cycle's proportions (data sampled 5/12 into a
/// read, driven 7/12 into a write), rounded to master clocks; no test ROM pins them on a 2A07 yet.
pub static PAL: RegionTiming = PAL_TIMING;

const PAL_TIMING: RegionTiming = RegionTiming {
    region: Region::Pal,
    master_clock_hz: PAL_MASTER_HZ,
    master_per_cpu_cycle: 16,
    master_per_dot: 5,
    read_access_offset: 7,
    write_access_offset: 9,
    ppu: PpuTiming {
        region: Region::Pal,
        scanlines_per_frame: 312,
        vblank_scanline: 241,
        pre_render_scanline: 311,
        odd_frame_skip: false,
        swap_red_green_emphasis: true,
        forced_oam_refresh: Some((265, 310)),
    },
    apu: ApuTiming {
        frame_steps: PAL_FRAME_STEPS,
        noise_periods: PAL_NOISE_PERIODS,
        dmc_rates: PAL_DMC_RATES,
    },
};

/// The Dendy: the NTSC APU tables and 3 dots per CPU cycle at the PAL master clock, with 50
/// post-render lines before VBlank, so VBlank lasts 20 lines after NMI as on NTSC. The access
/// offsets keep the NTSC cycle's proportions, rounded to master clocks.
pub static DENDY: RegionTiming = DENDY_TIMING;

const DENDY_TIMING: RegionTiming = RegionTiming {
    region: Region::Dendy,
    master_clock_hz: PAL_MASTER_HZ,
    master_per_cpu_cycle: 15,
    master_per_dot: 5,
    read_access_offset: 6,
    write_access_offset: 9,
    ppu: PpuTiming {
        region: Region::Dendy,
        scanlines_per_frame: 312,
        vblank_scanline: 291,
        pre_render_scanline: 311,
        odd_frame_skip: false,
        swap_red_green_emphasis: true,
        forced_oam_refresh: None,
    },
    apu: ApuTiming {
        frame_steps: NTSC_FRAME_STEPS,
        noise_periods: NTSC_NOISE_PERIODS,
        dmc_rates: NTSC_DMC_RATES,
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_cycles_per_frame_match_the_wiki() {
        // nesdev "Cycle reference chart": 29780.5 (NTSC), 33247.5 (PAL), 35464 (Dendy) CPU cycles
        // per frame; in master clocks, twice the frame over twice the cycle.
        for (region, twice_cycles) in [(Region::Ntsc, 59561), (Region::Pal, 66495), (Region::Dendy, 70928)] {
            let t = region.timing();
            let twice_master = t.master_per_dot * (2 * t.dots_per_frame() - u64::from(t.ppu.odd_frame_skip));
            assert_eq!(twice_master, twice_cycles * t.master_per_cpu_cycle, "{region}");
        }
    }

    #[test]
    fn frame_rates_match_the_wiki() {
        // nesdev "Cycle reference chart": 60.0988 Hz NTSC, 50.0070 Hz PAL, 50.0070 Hz Dendy.
        assert_eq!(NTSC.frame_rate_millihertz(), 60_098);
        assert_eq!(PAL.frame_rate_millihertz(), 50_006);
        assert_eq!(DENDY.frame_rate_millihertz(), 50_006);
    }

    #[test]
    fn names_round_trip_and_bytes_decode() {
        for region in Region::ALL {
            assert_eq!(Region::from_name(region.name()), Some(region));
            assert_eq!(Region::from_u8(region as u8), Some(region));
            assert_eq!(region.timing().region, region);
        }
        assert_eq!(Region::from_u8(3), None);
        assert_eq!(Region::from_name("secam"), None);
    }
}
