//! The 2A03's APU: pulse x2, triangle, noise, DMC, frame counter.
//!
//! Interface contract with the console:
//! - [`Apu::tick_cpu_cycle`] runs once per CPU cycle, before that cycle's bus access;
//! - the CPU bus calls [`Apu::write_register`] for $4000-$4013, $4015, $4017 and [`Apu::read_status`]
//!   for $4015;
//! - [`Apu::irq_line`] (frame counter or DMC IRQ) is sampled by the CPU at the end of each cycle;
//! - the DMC asks for sample bytes through [`Apu::dmc_wants_dma`] / [`Apu::dmc_dma_address`]; the bus's
//!   DMA unit answers with [`Apu::dmc_dma_complete`].

/// The APU.
#[derive(Debug, Clone, Default)]
pub struct Apu {}

impl Apu {
    /// An APU at power-on.
    pub fn new() -> Self {
        Apu {}
    }

    /// The reset button was pressed.
    pub fn reset(&mut self) {}

    /// One CPU cycle; `cpu_cycle` is the number of the cycle now running (its parity is the APU's
    /// get/put phase).
    #[inline]
    pub fn tick_cpu_cycle(&mut self, _cpu_cycle: u64) {}

    /// A CPU write of $4000-$4013, $4015 or $4017.
    pub fn write_register(&mut self, _addr: u16, _value: u8, _cpu_cycle: u64) {}

    /// A CPU read of $4015: the status byte (bit 5 is not driven; the caller fills it from open bus).
    pub fn read_status(&mut self) -> u8 {
        0
    }

    /// What a read of $4015 would return, without side effects.
    pub fn peek_status(&self) -> u8 {
        0
    }

    /// The APU's /IRQ output (frame counter or DMC).
    #[inline]
    pub fn irq_line(&self) -> bool {
        false
    }

    /// True while the DMC needs a sample byte fetched by DMA.
    #[inline]
    pub fn dmc_wants_dma(&self) -> bool {
        false
    }

    /// The address of the sample byte the DMC wants.
    #[inline]
    pub fn dmc_dma_address(&self) -> u16 {
        0xC000
    }

    /// The DMA unit fetched the sample byte the DMC asked for.
    pub fn dmc_dma_complete(&mut self, _value: u8) {}
}
