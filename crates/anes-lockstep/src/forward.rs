//! [`forward_machine!`](crate::forward_machine): a [`Machine`](crate::Machine) wrapper that changes
//! one or two methods forwards the rest to the machine it wraps.

/// Implements the listed [`Machine`](crate::Machine) methods by forwarding each to a field of
/// `self` (a wrapper that overrides a few methods and delegates the others, e.g. to inject a
/// behaviour or hide a capability). Use it inside the `impl Machine for ...` block, after the
/// methods written by hand; list the field (`0` for a tuple struct) and the methods to forward.
/// Methods left out keep the trait's default.
///
/// ```
/// use anes_core::movie::FrameInput;
/// use anes_core::state::FrameRecord;
/// use anes_fixtures::FakeMachine;
/// use anes_lockstep::{Machine, forward_machine};
///
/// /// A machine that counts the frames it ran.
/// #[derive(Debug, Clone)]
/// struct Counting(FakeMachine, u64);
///
/// impl Machine for Counting {
///     type Input = FrameInput;
///     fn run_frame(&mut self, input: FrameInput) -> FrameRecord {
///         self.1 += 1;
///         self.0.run_frame(input)
///     }
///     forward_machine!(0 => record, probe, state_hash, section_count, section_name, section_bytes,
///         field_name, snapshot_len, save_state, load_state);
/// }
///
/// let mut counting = Counting(FakeMachine::new(1), 0);
/// counting.run_frame(FrameInput::default());
/// assert_eq!((counting.1, counting.record().frame), (1, 1));
/// ```
#[macro_export]
macro_rules! forward_machine {
    ($field:tt => $($method:ident),+ $(,)?) => {
        $( $crate::forward_machine!(@method $field $method); )+
    };
    (@method $f:tt steps_instructions) => {
        fn steps_instructions(&self) -> bool { self.$f.steps_instructions() }
    };
    (@method $f:tt begin_frame) => {
        fn begin_frame(&mut self, input: Self::Input) { self.$f.begin_frame(input) }
    };
    (@method $f:tt step_instruction) => {
        fn step_instruction(&mut self) -> bool { self.$f.step_instruction() }
    };
    (@method $f:tt run_frame) => {
        fn run_frame(&mut self, input: Self::Input) -> $crate::__forward::FrameRecord { self.$f.run_frame(input) }
    };
    (@method $f:tt step_to_next_line) => {
        fn step_to_next_line(&mut self) -> bool { self.$f.step_to_next_line() }
    };
    (@method $f:tt lag_signature) => {
        fn lag_signature(&self) -> Option<u64> { self.$f.lag_signature() }
    };
    (@method $f:tt step_instruction_lagging) => {
        fn step_instruction_lagging(&mut self) -> bool { self.$f.step_instruction_lagging() }
    };
    (@method $f:tt step_to_next_line_lagging) => {
        fn step_to_next_line_lagging(&mut self) -> bool { self.$f.step_to_next_line_lagging() }
    };
    (@method $f:tt lagging_sync_record) => {
        fn lagging_sync_record(&self) -> ($crate::__forward::FrameRecord, u64) { self.$f.lagging_sync_record() }
    };
    (@method $f:tt settle) => {
        fn settle(&mut self) { self.$f.settle() }
    };
    (@method $f:tt record) => {
        fn record(&self) -> $crate::__forward::FrameRecord { self.$f.record() }
    };
    (@method $f:tt probe) => {
        fn probe(&self) -> $crate::Probe { self.$f.probe() }
    };
    (@method $f:tt sync_record) => {
        fn sync_record(&self) -> ($crate::__forward::FrameRecord, u64) { self.$f.sync_record() }
    };
    (@method $f:tt state_hash) => {
        fn state_hash(&self) -> $crate::__forward::StateHash { self.$f.state_hash() }
    };
    (@method $f:tt whole_state_hash) => {
        fn whole_state_hash(&self) -> Option<$crate::__forward::StateHash> { self.$f.whole_state_hash() }
    };
    (@method $f:tt section_count) => {
        fn section_count(&self) -> usize { self.$f.section_count() }
    };
    (@method $f:tt section_name) => {
        fn section_name(&self, index: usize) -> &'static str { self.$f.section_name(index) }
    };
    (@method $f:tt section_bytes) => {
        fn section_bytes(&self, index: usize) -> &[u8] { self.$f.section_bytes(index) }
    };
    (@method $f:tt field_name) => {
        fn field_name(&self, index: usize, offset: usize, out: &mut String) { self.$f.field_name(index, offset, out) }
    };
    (@method $f:tt section_digest) => {
        fn section_digest(&self, index: usize) -> $crate::__forward::StateHash { self.$f.section_digest(index) }
    };
    (@method $f:tt snapshot_len) => {
        fn snapshot_len(&self) -> usize { self.$f.snapshot_len() }
    };
    (@method $f:tt save_state) => {
        fn save_state(&self, out: &mut Vec<u8>) { self.$f.save_state(out) }
    };
    (@method $f:tt load_state) => {
        fn load_state(&mut self, bytes: &[u8]) -> Result<(), $crate::MachineError> { self.$f.load_state(bytes) }
    };
    (@method $f:tt disassemble) => {
        fn disassemble(&self, out: &mut String) { self.$f.disassemble(out) }
    };
    (@method $f:tt opcode) => {
        fn opcode(&self) -> u8 { self.$f.opcode() }
    };
    (@method $f:tt picture_size) => {
        fn picture_size(&self) -> Option<(u32, u32)> { self.$f.picture_size() }
    };
    (@method $f:tt picture_rgb) => {
        fn picture_rgb(&self, out: &mut Vec<u8>) -> bool { self.$f.picture_rgb(out) }
    };
    (@method $f:tt flip_state_bit) => {
        fn flip_state_bit(&mut self, index: usize, offset: usize, bit: u8) -> Result<(), $crate::MachineError> {
            self.$f.flip_state_bit(index, offset, bit)
        }
    };
    (@method $f:tt stall_cycles) => {
        fn stall_cycles(&mut self, cycles: u32) -> Result<(), $crate::MachineError> { self.$f.stall_cycles(cycles) }
    };
}
