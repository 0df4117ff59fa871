//! What the shrinker removes from an input stream: [`ShrinkInput`], the parts of one frame's input
//! (buttons, a console command), and [`Atom`], one removable part at one frame.

use anes_core::movie::{ConsoleCommand, FrameInput};

use crate::input::EvidenceInput;

/// A frame's input as the shrinker takes it apart. A *press* is a frame whose input differs from
/// [`ShrinkInput::released`] (some button held); removing a press releases every button of that
/// frame and keeps the frame, so the stream keeps its length and every later frame its index.
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_core::input::buttons;
/// use anes_lockstep::ShrinkInput;
///
/// let input = FrameInput::buttons(buttons::UP | buttons::A, 0);
/// assert_eq!(input.held_buttons(), [(0, 0), (0, 4)]);
/// assert_eq!(input.without_button(0, 4), FrameInput::buttons(buttons::A, 0));
/// assert_eq!(input.released(), FrameInput::default());
/// assert_eq!(FrameInput::button_name(0, 4), "Up");
/// ```
pub trait ShrinkInput: EvidenceInput {
    /// The buttons held, as `(port, bit)` pairs in ascending order.
    fn held_buttons(&self) -> Vec<(u8, u8)>;

    /// This input with button `bit` of controller `port` released (unchanged if it was not held).
    fn without_button(self, port: u8, bit: u8) -> Self;

    /// This input with every button released; a console command stays.
    fn released(self) -> Self;

    /// The console command this input carries (`soft_reset`, `power_cycle`), if any. The default
    /// has none.
    fn command_name(&self) -> Option<&'static str> {
        None
    }

    /// This input without its console command. The default has none to remove.
    fn without_command(self) -> Self {
        self
    }

    /// The button's name in reports (`A`, `Up`). The default: `bit N`.
    fn button_name(port: u8, bit: u8) -> String {
        let _ = port;
        format!("bit {bit}")
    }
}

/// Button names by bit, `anes_core::input::buttons` order.
const NES_BUTTONS: [&str; 8] = ["A", "B", "Select", "Start", "Up", "Down", "Left", "Right"];

impl ShrinkInput for FrameInput {
    fn held_buttons(&self) -> Vec<(u8, u8)> {
        let mut held = Vec::new();
        for (port, pad) in (0u8..).zip(self.pads) {
            held.extend((0u8..8).filter(|bit| pad & (1 << bit) != 0).map(|bit| (port, bit)));
        }
        held
    }

    fn without_button(mut self, port: u8, bit: u8) -> FrameInput {
        if let (Some(pad), Some(mask)) =
            (self.pads.get_mut(usize::from(port)), 1u8.checked_shl(u32::from(bit)))
        {
            *pad &= !mask;
        }
        self
    }

    fn released(self) -> FrameInput {
        FrameInput { pads: [0, 0], command: self.command }
    }

    fn command_name(&self) -> Option<&'static str> {
        match self.command {
            ConsoleCommand::None => None,
            ConsoleCommand::SoftReset => Some("soft_reset"),
            ConsoleCommand::PowerCycle => Some("power_cycle"),
        }
    }

    fn without_command(self) -> FrameInput {
        FrameInput { pads: self.pads, command: ConsoleCommand::None }
    }

    fn button_name(_port: u8, bit: u8) -> String {
        NES_BUTTONS.get(usize::from(bit)).map_or_else(|| format!("bit {bit}"), |name| (*name).to_string())
    }
}

/// One removable part of the stream, as ddmin sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Atom {
    /// Every button of the frame.
    Press(u64),
    /// One button of the frame.
    Button { frame: u64, port: u8, bit: u8 },
    /// The frame's console command.
    ConsoleCommand(u64),
}

impl Atom {
    pub(crate) fn frame(self) -> u64 {
        match self {
            Atom::Press(frame) | Atom::ConsoleCommand(frame) | Atom::Button { frame, .. } => frame,
        }
    }

    /// Removes this part from `stream` (a frame past its end has nothing to remove).
    pub(crate) fn remove_from<I: ShrinkInput>(self, stream: &mut [I]) {
        let Some(input) = usize::try_from(self.frame()).ok().and_then(|n| stream.get_mut(n)) else { return };
        *input = match self {
            Atom::Press(_) => input.released(),
            Atom::Button { port, bit, .. } => input.without_button(port, bit),
            Atom::ConsoleCommand(_) => input.without_command(),
        };
    }
}

/// Which parts a pass removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    Presses,
    Buttons,
    Commands,
}

impl Pass {
    /// The atoms of this pass in `stream`, in frame order.
    pub(crate) fn atoms<I: ShrinkInput>(self, stream: &[I]) -> Vec<Atom> {
        let mut atoms = Vec::new();
        for (frame, input) in (0u64..).zip(stream) {
            match self {
                Pass::Presses if input.released() != *input => atoms.push(Atom::Press(frame)),
                Pass::Buttons => {
                    atoms.extend(input.held_buttons().into_iter().map(|(port, bit)| Atom::Button {
                        frame,
                        port,
                        bit,
                    }))
                }
                Pass::Commands if input.command_name().is_some() => atoms.push(Atom::ConsoleCommand(frame)),
                _ => {}
            }
        }
        atoms
    }
}

/// Frames of `stream` that hold a press.
pub(crate) fn count_presses<I: ShrinkInput>(stream: &[I]) -> u64 {
    stream.iter().filter(|input| input.released() != **input).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use anes_core::input::buttons;

    #[test]
    fn atoms_remove_what_they_name_and_keep_the_length() {
        let mut stream = vec![
            FrameInput::buttons(buttons::UP | buttons::B, buttons::START),
            FrameInput { pads: [0, 0], command: ConsoleCommand::SoftReset },
            FrameInput { pads: [buttons::A, 0], command: ConsoleCommand::PowerCycle },
        ];
        assert_eq!(Pass::Presses.atoms(&stream), [Atom::Press(0), Atom::Press(2)]);
        assert_eq!(Pass::Commands.atoms(&stream), [Atom::ConsoleCommand(1), Atom::ConsoleCommand(2)]);
        assert_eq!(Pass::Buttons.atoms(&stream).len(), 4);
        Atom::Button { frame: 0, port: 0, bit: 1 }.remove_from(&mut stream);
        assert_eq!(stream[0], FrameInput::buttons(buttons::UP, buttons::START));
        Atom::Press(2).remove_from(&mut stream);
        assert_eq!(stream[2], FrameInput { pads: [0, 0], command: ConsoleCommand::PowerCycle });
        Atom::ConsoleCommand(1).remove_from(&mut stream);
        assert_eq!(stream[1], FrameInput::default());
        Atom::Press(9).remove_from(&mut stream);
        assert_eq!(stream.len(), 3);
        assert_eq!(count_presses(&stream), 1);
    }
}
