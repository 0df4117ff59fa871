//! [`ProgramView`]: an anes console compared by what its program does, so that two consoles powered on
//! differently (issue 49's power-on profiles) can run in lockstep. Their whole states differ from the
//! first cycle by design (the config, RAM patterns, the PPU's flags); what must agree while the
//! program has not been affected by that difference is what the program does.

use anes_core::movie::FrameInput;
use anes_core::state::{FrameRecord, StateHash};
use anes_core::{Nes, NesConfig, Region};

use crate::machine::{Machine, MachineError, NesMachine, Probe};

/// The view's sections: (name, length).
const SECTIONS: [(&str, usize); 3] = [("cpu", CPU_LEN), ("ppu", PPU_LEN), ("picture", PICTURE_LEN)];
/// The most master clocks a PPU runs behind its CPU (the CPU/PPU phase is 0-3).
const PHASE_MAX: u64 = 3;
/// What a view's snapshot adds to its console's: the last picture's digest and `frame_end_at`.
const TRAILER_LEN: usize = PICTURE_LEN + 8;
/// PC (2 bytes), A, X, Y, SP, P.
const CPU_LEN: usize = 7;
/// PPUCTRL, PPUMASK, `t` (2 bytes), fine X, the write toggle.
const PPU_LEN: usize = 6;
/// blake3 of the last completed picture.
const PICTURE_LEN: usize = 32;
const VIEW_LEN: usize = CPU_LEN + PPU_LEN + PICTURE_LEN;

/// An anes console seen only through what its program does: the CPU's registers (and, in the
/// record, its cycle count), the PPU registers the program writes (PPUCTRL, PPUMASK, the scroll and
/// address latch `t`, fine X, the write toggle) and the pictures it renders (a blake3 digest of
/// each, taken at the frame's end; a frame that ends with rendering off counts as blank). Power-on
/// state the program has not acted on (RAM and OAM
/// patterns, palette RAM, PPUSTATUS's flags, the warm-up, where the PPU stands within a CPU cycle)
/// is left out: it shows only once the program reads it into a register, loses a write to it, or
/// draws with it.
///
/// Two views powered on with different [`anes_core::PowerOnProfile`]s run in lockstep until the first
/// instruction the program executes differently, or the first picture that differs: that is the
/// divergence the runner localizes and the shrinker keeps. State the program never touches (RAM it
/// never writes) is in no view; compare it separately. A view's frame ends where a console of any
/// CPU/PPU phase would end it (see `ProgramView::picture_frame_end`), which is at most a few
/// instructions after its console's own frame end: two phases running a program alike end their
/// frames on the same instruction, and the next frame's input is applied there.
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_core::PowerOnProfile;
/// use anes_lockstep::{Lockstep, LockstepConfig, Machine, ProgramView, RunOutcome};
/// # let rom = anes_fixtures::tiny_rom();
/// // tiny_rom turns rendering on at once: under the warm-up the write is lost.
/// let a = ProgramView::from_ines(&rom, PowerOnProfile::Default.config(), None).unwrap();
/// let b = ProgramView::from_ines(&rom, PowerOnProfile::Random(1).config(), None).unwrap();
/// assert_ne!(a.nes().state_hash(), b.nes().state_hash(), "different power-on states");
/// assert_eq!(a.state_hash(), b.state_hash(), "the same program, not run yet");
/// let mut lockstep = Lockstep::new(a, b, LockstepConfig::default()).unwrap();
/// let inputs = vec![FrameInput::default(); 10];
/// let same = PowerOnProfile::Random(1).config().ppu_warm_up == PowerOnProfile::Default.config().ppu_warm_up;
/// assert_eq!(matches!(lockstep.run(&inputs, 10), RunOutcome::Agreed { .. }), same);
/// ```
#[derive(Debug, Clone)]
pub struct ProgramView {
    machine: NesMachine,
    /// The sections' bytes as they are now (see [`ProgramView::refresh`]).
    view: [u8; VIEW_LEN],
    /// Once the console completed a picture: the master clock at or after which the view's frame
    /// ends (see [`ProgramView::picture_frame_end`]); 0 while none is pending.
    frame_end_at: u64,
}

impl ProgramView {
    /// Views `machine`.
    pub fn new(machine: NesMachine) -> ProgramView {
        // No picture completed yet: its part of the view stays zero until the first frame's end.
        let mut view = ProgramView { machine, view: [0; VIEW_LEN], frame_end_at: 0 };
        view.refresh();
        view
    }

    /// Parses an iNES file and powers a console on with `config`, of `region` (`None`: the header's).
    pub fn from_ines(
        rom: &[u8],
        config: NesConfig,
        region: Option<Region>,
    ) -> Result<ProgramView, anes_core::RomError> {
        Ok(ProgramView::new(NesMachine::from_ines_with_region(rom, config, region)?))
    }

    /// The console viewed.
    pub fn nes(&self) -> &Nes {
        self.machine.nes()
    }

    /// The CPU's and the PPU registers' part of the view, after any change.
    fn refresh(&mut self) {
        let nes = self.machine.nes();
        let cpu = nes.cpu();
        let [pc_lo, pc_hi] = cpu.pc.to_le_bytes();
        self.view[..CPU_LEN].copy_from_slice(&[pc_lo, pc_hi, cpu.a, cpu.x, cpu.y, cpu.sp, cpu.p]);
        let regs = nes.ppu().regs();
        let [t_lo, t_hi] = regs.t.to_le_bytes();
        self.view[CPU_LEN..CPU_LEN + PPU_LEN]
            .copy_from_slice(&[regs.ctrl, regs.mask, t_lo, t_hi, regs.x, regs.w]);
    }

    /// The picture's part of the view, at a frame's end: blake3 of its pixels as little-endian
    /// bytes, fed through a fixed buffer (nothing allocated per frame); zero for a picture that ends
    /// with rendering off, a forced blank showing only the backdrop, which is palette RAM's power-on
    /// value until the program writes it (nesdev "PPU palettes": the backdrop colour).
    fn refresh_picture(&mut self) {
        const RENDERING: u8 = 0x18;
        let picture = &mut self.view[CPU_LEN + PPU_LEN..];
        if self.machine.nes().ppu().regs().mask & RENDERING == 0 {
            picture.fill(0);
            return;
        }
        let mut hasher = blake3::Hasher::new();
        let mut bytes = [0u8; 2 * 1024];
        for pixels in self.machine.nes().ppu().frame_buffer().chunks(1024) {
            for (pair, pixel) in bytes.chunks_exact_mut(2).zip(pixels) {
                pair.copy_from_slice(&pixel.to_le_bytes());
            }
            hasher.update(&bytes[..2 * pixels.len()]);
        }
        picture.copy_from_slice(hasher.finalize().as_bytes());
    }

    /// Where the view's frame ends, for the picture the console just completed: the first instruction
    /// boundary at or after the picture's end plus [`PHASE_MAX`], the picture's end measured on the
    /// PPU's own clock. The console's own frame ends at the first boundary after its PPU got there,
    /// which is up to 3 master clocks later on a console of another CPU/PPU phase: the same program
    /// could end its frames one instruction apart there. This boundary is the same for every phase.
    fn picture_frame_end(&self) -> u64 {
        let nes = self.machine.nes();
        // The PPU stands on the picture's end line (241), `dot` dots past its start.
        let (_, dot) = nes.ppu_position();
        let per_dot = nes.region().timing().master_per_dot;
        nes.ppu_clock().saturating_sub(u64::from(dot) * per_dot) + PHASE_MAX
    }

    /// After a step of the console: true when the view's frame has ended.
    fn frame_ended(&mut self, picture_completed: bool) -> bool {
        if picture_completed {
            self.frame_end_at = self.picture_frame_end();
        }
        if self.frame_end_at != 0 && self.machine.nes().master_clock() >= self.frame_end_at {
            self.frame_end_at = 0;
            self.refresh_picture();
            return true;
        }
        false
    }

    fn section_range(index: usize) -> Option<core::ops::Range<usize>> {
        let start: usize = SECTIONS.iter().take(index).map(|(_, len)| len).sum();
        SECTIONS.get(index).map(|(_, len)| start..start + len)
    }
}

impl Machine for ProgramView {
    type Input = FrameInput;

    fn begin_frame(&mut self, input: FrameInput) {
        self.machine.begin_frame(input);
        self.refresh();
    }

    fn step_instruction(&mut self) -> bool {
        let completed = self.machine.step_instruction();
        let done = self.frame_ended(completed);
        self.refresh();
        done
    }

    fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
        self.machine.begin_frame(input);
        self.machine.nes_mut().run_until_frame_end();
        let mut done = self.frame_ended(true);
        while !done {
            self.machine.nes_mut().step_in_frame();
            done = self.frame_ended(false);
        }
        self.refresh();
        self.record()
    }

    fn record(&self) -> FrameRecord {
        // The raster position is left out: where the PPU stands at an instruction's end depends on
        // the CPU/PPU phase chosen at power-on, which the program sees only through what it reads.
        // Between the console's frame end and the view's, the console has counted the frame.
        let nes = self.machine.nes();
        FrameRecord {
            frame: nes.frame() - u64::from(self.frame_end_at != 0),
            cpu_cycle: nes.cpu_cycle(),
            ppu_scanline: 0,
            ppu_dot: 0,
            state_hash: self.state_hash(),
        }
    }

    fn probe(&self) -> Probe {
        Probe { scanline: 0, dot: 0, ..self.machine.probe() }
    }

    fn state_hash(&self) -> StateHash {
        StateHash(*blake3::hash(&self.view).as_bytes())
    }

    fn whole_state_hash(&self) -> Option<StateHash> {
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.machine.nes().state_hash().as_bytes());
        hasher.update(&self.view[CPU_LEN + PPU_LEN..]);
        hasher.update(&self.frame_end_at.to_le_bytes());
        Some(StateHash(*hasher.finalize().as_bytes()))
    }

    fn section_count(&self) -> usize {
        SECTIONS.len()
    }

    fn section_name(&self, index: usize) -> &'static str {
        SECTIONS.get(index).map_or("none", |(name, _)| name)
    }

    fn section_bytes(&self, index: usize) -> &[u8] {
        ProgramView::section_range(index).map_or(&[], |range| &self.view[range])
    }

    fn field_name(&self, index: usize, offset: usize, out: &mut String) {
        const CPU: [&str; CPU_LEN] = ["cpu.pc", "cpu.pc", "cpu.a", "cpu.x", "cpu.y", "cpu.sp", "cpu.p"];
        const PPU: [&str; PPU_LEN] = ["ppu.ctrl", "ppu.mask", "ppu.t", "ppu.t", "ppu.x", "ppu.w"];
        let name = match index {
            0 => CPU.get(offset).copied(),
            1 => PPU.get(offset).copied(),
            2 if offset < PICTURE_LEN => Some("picture"),
            _ => None,
        };
        out.push_str(name.unwrap_or("none"));
    }

    fn snapshot_len(&self) -> usize {
        self.machine.snapshot_len() + TRAILER_LEN
    }

    /// The console's snapshot followed by the last picture's digest (the picture itself is output,
    /// not state, and a restored console has none) and where a pending frame end is (8 bytes).
    fn save_state(&self, out: &mut Vec<u8>) {
        self.machine.save_state(out);
        out.extend_from_slice(&self.view[CPU_LEN + PPU_LEN..]);
        out.extend_from_slice(&self.frame_end_at.to_le_bytes());
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), MachineError> {
        let split = bytes.len().checked_sub(TRAILER_LEN).ok_or_else(|| {
            MachineError::Snapshot(format!("{} bytes: too short for a program view's snapshot", bytes.len()))
        })?;
        let (console, trailer) = bytes.split_at(split);
        let (picture, frame_end_at) = trailer.split_at(PICTURE_LEN);
        self.machine.load_state(console)?;
        self.view[CPU_LEN + PPU_LEN..].copy_from_slice(picture);
        self.frame_end_at = u64::from_le_bytes(frame_end_at.try_into().expect("8 bytes"));
        self.refresh();
        Ok(())
    }

    fn disassemble(&self, out: &mut String) {
        self.machine.disassemble(out);
    }

    fn opcode(&self) -> u8 {
        self.machine.opcode()
    }

    fn picture_size(&self) -> Option<(u32, u32)> {
        self.machine.picture_size()
    }

    fn picture_rgb(&self, out: &mut Vec<u8>) -> bool {
        self.machine.picture_rgb(out)
    }
}
