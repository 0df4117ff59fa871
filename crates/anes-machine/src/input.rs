//! Inputs for any machine: [`EvidenceInput`], what the runner needs from one frame's input (a value
//! it can copy, compare, corrupt for fault injection and keep in the evidence bundle), and
//! [`InputSource`], where the runner reads frame `n`'s input from (an anes [`InputStream`], a slice
//! or a `Vec` of inputs).

use core::fmt::Debug;

use anes_core::movie::{FrameInput, InputStream};

/// One frame's input of a [`crate::Machine`], as the runner handles it.
///
/// ```
/// use anes_machine::EvidenceInput;
///
/// /// One byte of buttons.
/// #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
/// struct Pad(u8);
///
/// impl EvidenceInput for Pad {
///     fn encode_inputs(inputs: &[Pad], out: &mut Vec<u8>) {
///         out.extend(inputs.iter().map(|p| p.0));
///     }
///     fn flip_button(&mut self, port: u8, bit: u8) -> bool {
///         let ok = port == 0 && bit < 8;
///         if ok {
///             self.0 ^= 1 << bit;
///         }
///         ok
///     }
/// }
///
/// let mut bytes = Vec::new();
/// Pad::encode_inputs(&[Pad(1), Pad(2)], &mut bytes);
/// assert_eq!(bytes, [1, 2]);
/// ```
pub trait EvidenceInput: Copy + Eq + Debug + Default + Send + Sync + 'static {
    /// Appends `inputs` (frames 0, 1, ... in order) to `out` as the bundle's `inputs.input` file, in
    /// a format the core's own tools can replay.
    fn encode_inputs(inputs: &[Self], out: &mut Vec<u8>);

    /// Fault injection (`input:PORT:BIT@FRAME`): inverts button `bit` of controller `port`. Returns
    /// `false` (and changes nothing) when the input has no such button; the fault is then refused.
    /// The default has no buttons.
    fn flip_button(&mut self, port: u8, bit: u8) -> bool {
        let _ = (port, bit);
        false
    }
}

impl EvidenceInput for FrameInput {
    /// The anes input stream format ([`InputStream::to_bytes`]).
    fn encode_inputs(inputs: &[FrameInput], out: &mut Vec<u8>) {
        out.extend_from_slice(&InputStream::from_frames(inputs.to_vec()).to_bytes());
    }

    fn flip_button(&mut self, port: u8, bit: u8) -> bool {
        let Some(pad) = self.pads.get_mut(usize::from(port)) else { return false };
        let Some(mask) = 1u8.checked_shl(u32::from(bit)) else { return false };
        *pad ^= mask;
        true
    }
}

/// Where the runner reads each frame's input: frame `n` (input-stream index, from 0) of a recording.
/// Past the end of a recording, the input is the default one (nothing pressed).
///
/// ```
/// use anes_machine::InputSource;
///
/// let inputs: &[u8] = &[1, 2, 3];
/// assert_eq!(inputs.input(1), 2);
/// assert_eq!(inputs.input(7), 0, "past the end: the default");
/// ```
pub trait InputSource<I> {
    /// The input of input-stream frame `frame`.
    fn input(&self, frame: u64) -> I;
}

impl InputSource<FrameInput> for InputStream {
    #[inline]
    fn input(&self, frame: u64) -> FrameInput {
        self.frame(usize::try_from(frame).unwrap_or(usize::MAX))
    }
}

impl<I: Copy + Default> InputSource<I> for [I] {
    #[inline]
    fn input(&self, frame: u64) -> I {
        usize::try_from(frame).ok().and_then(|n| self.get(n)).copied().unwrap_or_default()
    }
}

impl<I: Copy + Default> InputSource<I> for Vec<I> {
    #[inline]
    fn input(&self, frame: u64) -> I {
        self.as_slice().input(frame)
    }
}

impl<I: Copy + Default, const N: usize> InputSource<I> for [I; N] {
    #[inline]
    fn input(&self, frame: u64) -> I {
        self.as_slice().input(frame)
    }
}
