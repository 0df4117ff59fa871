//! One worker's console and what it does with each [`WorkerCommand`], the other side of the protocol the
//! pipeline speaks: the same code runs on a worker thread and inside an `anes worker` child process
//! (`anes-workers` hosts it), and in this crate's simulator.

use std::time::Duration;

use anes_core::{NesConfig, Region};
use anes_machine::{Fault, Machine, NesMachine};

use crate::protocol::{Reply, WireInput, WorkerCommand};

/// Before a frame has been measured, a state fault due within this many CPU cycles makes the next frame
/// run instruction by instruction (an NTSC frame is about 29,781 cycles).
const INITIAL_FRAME_CYCLES_BOUND: u64 = 1 << 20;

/// What the host loop does after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Read the next command.
    Continue,
    /// Answer nothing for this long (a drill), then carry on.
    Stall(Duration),
    /// End the session: the engine answers nothing more and its caller exits.
    Shutdown,
}

/// What answers a worker's commands: the anes console ([`Engine`]) or a libretro core
/// (`anes_workers::retro_engine::RetroEngine`).
pub trait Handler {
    /// Handles one command, passing every reply to `reply` in order.
    fn handle(&mut self, command: WorkerCommand, reply: &mut dyn FnMut(Reply)) -> Flow;
}

impl Handler for Engine {
    fn handle(&mut self, command: WorkerCommand, reply: &mut dyn FnMut(Reply)) -> Flow {
        Engine::handle(self, command, reply)
    }
}

/// A fault waiting for its moment, with the lockstep runner's timing: a state fault fires at the end
/// of the instruction during which the CPU reaches its cycle; an input fault changes the input of one
/// frame (indexed by frames completed since power-on, as the lockstep runner indexes its input stream).
#[derive(Debug, Clone)]
struct PendingFault {
    fault: Fault,
    section: usize,
}

/// A console driven by protocol commands.
///
/// ```
/// use anes_pipeline::engine::{Engine, Flow};
/// use anes_pipeline::protocol::{WorkerCommand, Reply, WireInput};
/// let mut engine = Engine::new();
/// let mut replies = Vec::new();
/// let rom = anes_fixtures::tiny_rom();
/// engine.handle(WorkerCommand::Load { rom, checkpoint_every: 60, region: None, power_on: None }, &mut |r| replies.push(r));
/// let flow = engine.handle(WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0])] }, &mut |r| replies.push(r));
/// assert_eq!(flow, Flow::Continue);
/// assert!(matches!(replies.last(), Some(Reply::Record { seq: 0, record }) if record.frame == 1));
/// ```
#[derive(Debug, Default)]
pub struct Engine {
    machine: Option<NesMachine>,
    checkpoint_every: u64,
    next_seq: u64,
    faults: Vec<PendingFault>,
    frame_cycles_bound: u64,
    snapshot: Vec<u8>,
}

impl Engine {
    /// An engine with no ROM loaded yet.
    pub fn new() -> Engine {
        Engine { frame_cycles_bound: INITIAL_FRAME_CYCLES_BOUND, ..Engine::default() }
    }

    /// Handles one command, passing every reply to `reply` in order.
    pub fn handle(&mut self, command: WorkerCommand, reply: &mut dyn FnMut(Reply)) -> Flow {
        match command {
            WorkerCommand::Load { rom, checkpoint_every, region, power_on } => {
                self.load(&rom, checkpoint_every, region, power_on.unwrap_or_default().config(), reply)
            }
            WorkerCommand::Frames { first_seq, inputs } => self.frames(first_seq, &inputs, reply),
            WorkerCommand::Restore { seq, snapshot } => self.restore(seq, &snapshot, reply),
            WorkerCommand::Snapshot => match &self.machine {
                Some(_) => self.send_snapshot(reply),
                None => reply(not_loaded()),
            },
            WorkerCommand::Inject { spec } => self.inject(&spec, reply),
            WorkerCommand::Stall { millis } => return Flow::Stall(Duration::from_millis(u64::from(millis))),
            WorkerCommand::Shutdown => return Flow::Shutdown,
            WorkerCommand::BeginFrame { input } => match (self.machine.as_mut(), input.to_input()) {
                (None, _) => reply(not_loaded()),
                (Some(_), None) => reply(Reply::Error {
                    message: format!("begin_frame: unknown command byte {:#04x}", input.0[2]),
                }),
                (Some(machine), Some(input)) => {
                    machine.begin_frame(input);
                    reply(Reply::Probe { probe: machine.probe().into() });
                }
            },
            WorkerCommand::StepInstruction => match self.machine.as_mut() {
                None => reply(not_loaded()),
                Some(machine) => {
                    let done = machine.step_instruction();
                    if done {
                        self.next_seq += 1;
                    }
                    reply(Reply::Stepped { done, probe: machine.probe().into() });
                }
            },
            WorkerCommand::Probe => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => reply(Reply::Probe { probe: machine.probe().into() }),
            },
            WorkerCommand::Record => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => reply(Reply::Record { seq: self.next_seq, record: machine.record().into() }),
            },
            WorkerCommand::Disassemble => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => {
                    let mut text = String::new();
                    machine.disassemble(&mut text);
                    reply(Reply::Disassembly { opcode: machine.opcode(), text });
                }
            },
            WorkerCommand::Picture => match &self.machine {
                None => reply(not_loaded()),
                Some(machine) => {
                    let mut rgb = Vec::new();
                    machine.picture_rgb(&mut rgb);
                    let (width, height) = machine.picture_size().unwrap_or((0, 0));
                    reply(Reply::Picture { width, height, rgb });
                }
            },
        }
        Flow::Continue
    }

    fn load(
        &mut self,
        rom: &[u8],
        checkpoint_every: u64,
        region: Option<Region>,
        config: NesConfig,
        reply: &mut dyn FnMut(Reply),
    ) {
        if checkpoint_every == 0 {
            return reply(Reply::Error { message: "load: checkpoint_every must be at least 1".into() });
        }
        match NesMachine::from_ines_with_region(rom, config, region) {
            Ok(machine) => {
                let rom_identity = *machine.nes().rom_identity();
                let record = machine.record().into();
                let region = Some(machine.nes().region());
                self.machine = Some(machine);
                self.checkpoint_every = checkpoint_every;
                self.next_seq = 0;
                self.faults.clear();
                reply(Reply::Loaded { rom_identity, record, region });
                self.send_snapshot(reply);
            }
            Err(e) => reply(Reply::Error { message: format!("load: the ROM is refused: {e}") }),
        }
    }

    fn frames(&mut self, first_seq: u64, inputs: &[WireInput], reply: &mut dyn FnMut(Reply)) {
        if self.machine.is_none() {
            return reply(not_loaded());
        }
        if first_seq != self.next_seq {
            return reply(Reply::Error {
                message: format!("frames: expected sequence number {}, got {first_seq}", self.next_seq),
            });
        }
        for (i, input) in inputs.iter().enumerate() {
            let Some(input) = input.to_input() else {
                return reply(Reply::Error {
                    message: format!(
                        "frames: input {} (seq {}) has unknown command byte {:#04x}; the rest of the batch is dropped",
                        i,
                        first_seq + i as u64,
                        input.0[2]
                    ),
                });
            };
            let seq = self.next_seq;
            let record = self.run_frame(seq, input, reply);
            self.next_seq += 1;
            reply(Reply::Record { seq, record: record.into() });
            if self.next_seq % self.checkpoint_every == 0 {
                self.send_snapshot(reply);
            }
        }
    }

    fn run_frame(
        &mut self,
        seq: u64,
        mut input: anes_core::movie::FrameInput,
        reply: &mut dyn FnMut(Reply),
    ) -> anes_core::state::FrameRecord {
        let machine = self.machine.as_mut().expect("checked by the caller");
        let frame = machine.nes().frame();
        let start_cycle = machine.nes().cpu_cycle();
        let mut state_fault_due = false;
        let mut i = 0;
        while i < self.faults.len() {
            match self.faults[i].fault {
                Fault::CorruptInput { port, bit, frame: at } if at == frame => {
                    input.pads[usize::from(port)] ^= 1 << bit;
                    let spec = self.faults.remove(i).fault.to_string();
                    reply(Reply::FaultFired { seq, spec, refused: None });
                    continue;
                }
                Fault::CorruptInput { .. } => {}
                Fault::FlipBit { cpu_cycle, .. } | Fault::Stall { cpu_cycle, .. } => {
                    state_fault_due |= cpu_cycle <= start_cycle.saturating_add(self.frame_cycles_bound);
                }
            }
            i += 1;
        }
        let record = if state_fault_due {
            machine.begin_frame(input);
            loop {
                let done = machine.step_instruction();
                let cycle = machine.nes().cpu_cycle();
                let mut j = 0;
                while j < self.faults.len() {
                    let due = self.faults[j].fault.cpu_cycle().is_some_and(|at| at <= cycle);
                    if !due {
                        j += 1;
                        continue;
                    }
                    let PendingFault { fault, section } = self.faults.remove(j);
                    let result = match fault {
                        Fault::FlipBit { offset, bit, .. } => machine.flip_state_bit(section, offset, bit),
                        Fault::Stall { cycles, .. } => machine.stall_cycles(cycles),
                        Fault::CorruptInput { .. } => Ok(()),
                    };
                    reply(Reply::FaultFired {
                        seq,
                        spec: fault.to_string(),
                        refused: result.err().map(|e| e.to_string()),
                    });
                }
                if done {
                    break machine.record();
                }
            }
        } else {
            machine.run_frame(input)
        };
        // Twice the last frame is a safe bound for when a fault may come due within the next one.
        self.frame_cycles_bound = record.cpu_cycle.saturating_sub(start_cycle).max(1).saturating_mul(2);
        record
    }

    fn restore(&mut self, seq: u64, snapshot: &[u8], reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_mut() else {
            return reply(not_loaded());
        };
        match machine.load_state(snapshot) {
            Ok(()) => {
                self.next_seq = seq;
                reply(Reply::Restored { seq, record: machine.record().into() });
            }
            Err(e) => reply(Reply::Error { message: format!("restore: {e}") }),
        }
    }

    fn inject(&mut self, spec: &str, reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_ref() else {
            return reply(not_loaded());
        };
        // Without `@`, a state fault fires at the end of the next frame's first instruction and an input
        // fault changes the next frame's input.
        let full = if spec.contains('@') {
            spec.to_string()
        } else if spec.trim_start().starts_with("input") {
            format!("{spec}@{}", machine.nes().frame())
        } else {
            format!("{spec}@{}", machine.nes().cpu_cycle())
        };
        let fault: Fault = match full.parse() {
            Ok(f) => f,
            Err(e) => return reply(Reply::Error { message: format!("inject: {e}") }),
        };
        let mut section = 0;
        if let Fault::FlipBit { section: name, offset, .. } = &fault {
            let found = (0..machine.section_count()).find(|&i| machine.section_name(i) == name);
            let Some(index) = found else {
                let names: Vec<_> = (0..machine.section_count()).map(|i| machine.section_name(i)).collect();
                return reply(Reply::Error {
                    message: format!("inject {full}: no section {name:?} (sections: {})", names.join(", ")),
                });
            };
            let len = machine.section_bytes(index).len();
            if *offset >= len {
                return reply(Reply::Error {
                    message: format!(
                        "inject {full}: offset {offset:#x} is outside section {name} ({len} bytes)"
                    ),
                });
            }
            section = index;
        }
        self.faults.push(PendingFault { fault, section });
    }

    fn send_snapshot(&mut self, reply: &mut dyn FnMut(Reply)) {
        let Some(machine) = self.machine.as_ref() else { return };
        machine.save_state(&mut self.snapshot);
        reply(Reply::Snapshot {
            seq: self.next_seq,
            state_hash: machine.state_hash().0,
            bytes: self.snapshot.clone(),
        });
    }
}

fn not_loaded() -> Reply {
    Reply::Error { message: "no ROM loaded: send load first".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anes_fixtures::tiny_rom;

    fn run(engine: &mut Engine, command: WorkerCommand) -> (Vec<Reply>, Flow) {
        let mut replies = Vec::new();
        let flow = engine.handle(command, &mut |r| replies.push(r));
        (replies, flow)
    }

    fn frames(first_seq: u64, n: usize) -> WorkerCommand {
        WorkerCommand::Frames { first_seq, inputs: vec![WireInput([0, 0, 0]); n] }
    }

    #[test]
    fn records_snapshots_and_restores() {
        let mut engine = Engine::new();
        let (replies, _) = run(
            &mut engine,
            WorkerCommand::Load { rom: tiny_rom(), checkpoint_every: 4, region: None, power_on: None },
        );
        assert!(matches!(replies[0], Reply::Loaded { record, .. } if record.frame == 0));
        assert!(matches!(replies[1], Reply::Snapshot { seq: 0, .. }));
        let (replies, _) = run(&mut engine, frames(0, 5));
        let records: Vec<_> = replies.iter().filter(|r| matches!(r, Reply::Record { .. })).collect();
        assert_eq!(records.len(), 5);
        let Some(Reply::Snapshot { seq: 4, state_hash, bytes }) =
            replies.iter().find(|r| matches!(r, Reply::Snapshot { .. })).cloned()
        else {
            panic!("a snapshot after frame 3: {replies:?}")
        };
        let (replies, _) = run(&mut engine, WorkerCommand::Restore { seq: 4, snapshot: bytes });
        assert!(matches!(replies[0], Reply::Restored { seq: 4, record } if record.state_hash == state_hash));
        let (replies, _) = run(&mut engine, frames(9, 1));
        assert!(
            matches!(&replies[0], Reply::Error { message } if message.contains("expected sequence number 4"))
        );
    }

    #[test]
    fn an_injected_flip_changes_the_next_record() {
        let mut clean = Engine::new();
        let mut faulty = Engine::new();
        for e in [&mut clean, &mut faulty] {
            run(
                e,
                WorkerCommand::Load { rom: tiny_rom(), checkpoint_every: 60, region: None, power_on: None },
            );
            run(e, frames(0, 3));
        }
        let (replies, _) = run(&mut faulty, WorkerCommand::Inject { spec: "flip:ram:0x0010:3".into() });
        assert!(replies.is_empty(), "{replies:?}");
        let (a, _) = run(&mut clean, frames(3, 1));
        let (b, _) = run(&mut faulty, frames(3, 1));
        assert!(
            matches!(&b[0], Reply::FaultFired { seq: 3, spec, refused: None } if spec.starts_with("flip:ram:0x0010:3@"))
        );
        assert_ne!(a.last(), b.last());
        let (replies, _) = run(&mut faulty, WorkerCommand::Inject { spec: "flip:nope:1:1".into() });
        assert!(matches!(&replies[0], Reply::Error { message } if message.contains("no section")));
        assert_eq!(
            run(&mut faulty, WorkerCommand::Stall { millis: 5 }).1,
            Flow::Stall(Duration::from_millis(5))
        );
        assert_eq!(run(&mut faulty, WorkerCommand::Shutdown).1, Flow::Shutdown);
    }

    /// A worker powers its console on with the profile `Load` names: the same machine as a console
    /// built with it here, and another than the default's.
    #[test]
    fn a_load_with_a_power_on_profile_powers_that_console_on() {
        use anes_core::PowerOnProfile;
        for profile in [PowerOnProfile::QuickPowerCycle, PowerOnProfile::Random(3)] {
            let load = WorkerCommand::Load {
                rom: tiny_rom(),
                checkpoint_every: 60,
                region: None,
                power_on: Some(profile),
            };
            let (replies, _) = run(&mut Engine::new(), load);
            let Reply::Loaded { record, .. } = replies[0] else { panic!("{replies:?}") };
            let here = NesMachine::from_ines(&tiny_rom(), profile.config()).unwrap();
            assert_eq!(record.state_hash, here.state_hash().0, "{profile}");
            let default = NesMachine::from_ines(&tiny_rom(), NesConfig::default()).unwrap();
            assert_ne!(record.state_hash, default.state_hash().0, "{profile}");
        }
    }

    #[test]
    fn a_load_of_a_region_powers_that_console_on_and_refuses_another_regions_snapshot() {
        let load =
            |region| WorkerCommand::Load { rom: tiny_rom(), checkpoint_every: 60, region, power_on: None };
        let mut ntsc = Engine::new();
        let (replies, _) = run(&mut ntsc, load(None));
        assert!(matches!(replies[0], Reply::Loaded { region: Some(Region::Ntsc), .. }), "iNES 1.0: NTSC");
        let Some(Reply::Snapshot { bytes: ntsc_snapshot, .. }) = replies.get(1).cloned() else {
            panic!("the power-on snapshot: {replies:?}")
        };
        for region in [Region::Pal, Region::Dendy] {
            let mut engine = Engine::new();
            let (replies, _) = run(&mut engine, load(Some(region)));
            assert!(
                matches!(replies[0], Reply::Loaded { region: Some(r), .. } if r == region),
                "{replies:?}"
            );
            // 341 x 312 dots a frame (nesdev "Cycle reference chart"), 3.2 dots a CPU cycle on PAL, 3
            // on Dendy: 33,247.5 and 35,464 CPU cycles; tiny_rom's instructions end a frame at most 3
            // cycles late.
            let expected = if region == Region::Pal { 341 * 312 * 5 * 10 / 16 } else { 341 * 312 * 10 / 3 };
            let (replies, _) = run(&mut engine, frames(0, 12));
            let cycles: Vec<u64> = replies
                .iter()
                .filter_map(
                    |r| if let Reply::Record { record, .. } = r { Some(record.cpu_cycle) } else { None },
                )
                .collect();
            let ten_frames = cycles[11] - cycles[1];
            assert!(
                ten_frames.abs_diff(expected) <= 4,
                "{region}: {ten_frames} CPU cycles, expected {expected}"
            );
            let (replies, _) =
                run(&mut engine, WorkerCommand::Restore { seq: 0, snapshot: ntsc_snapshot.clone() });
            assert!(
                matches!(&replies[0], Reply::Error { message } if message.contains("ntsc console")),
                "{region}: {replies:?}"
            );
        }
    }
}
