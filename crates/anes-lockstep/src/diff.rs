//! Field-level differences between two machines' states, grouped by section.

use serde::Serialize;

use crate::machine::Machine;

/// What changed a byte last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCause {
    /// An instruction (or the interrupt sequence, or DMA it was halted for).
    Instruction,
    /// A fault injected by the harness.
    Fault,
}

/// The last change of a byte during the replayed interval: the instruction that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LastWrite {
    /// Program counter of the instruction.
    pub pc: u64,
    /// CPU cycle at the start of the instruction.
    pub cpu_cycle: u64,
    /// Input-stream index of the frame it ran in.
    pub frame: u64,
    /// Instruction or injected fault.
    pub cause: WriteCause,
}

/// One field whose value differs between the machines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// Section name (`ram`, `cpu`, `ppu`).
    pub section: &'static str,
    /// Field name (`ram[$0342]`, `cpu.p`).
    pub name: String,
    /// Machine A's value (`$17`; wide counters in decimal).
    pub a: String,
    /// Machine B's value.
    pub b: String,
    /// Last change of the field in A during the replayed interval (none: unchanged since the checkpoint).
    pub last_write_a: Option<LastWrite>,
    /// Last change of the field in B during the replayed interval.
    pub last_write_b: Option<LastWrite>,
    #[serde(skip)]
    pub(crate) section_index: usize,
    #[serde(skip)]
    pub(crate) bytes: core::ops::Range<usize>,
}

/// Bytes a named field may span (a `u64` counter); longer runs of one name are split.
const MAX_FIELD_BYTES: usize = 8;

fn format_value(bytes: &[u8]) -> String {
    let mut le = [0u8; 8];
    le[..bytes.len()].copy_from_slice(bytes);
    let value = u64::from_le_bytes(le);
    match bytes.len() {
        1 => format!("${value:02X}"),
        2 => format!("${value:04X}"),
        _ => value.to_string(),
    }
}

/// Every field whose bytes differ, section by section in the machines' order; at most `max_fields`
/// (the rest are counted).
pub(crate) fn diff_fields(
    a: &(impl Machine + ?Sized),
    b: &(impl Machine + ?Sized),
    max_fields: usize,
) -> (Vec<FieldDiff>, usize) {
    let mut fields = Vec::new();
    let mut omitted = 0;
    let mut name = String::new();
    let mut neighbour = String::new();
    for section in 0..a.section_count().min(b.section_count()) {
        let (bytes_a, bytes_b) = (a.section_bytes(section), b.section_bytes(section));
        if bytes_a.len() != bytes_b.len() {
            fields.push(FieldDiff {
                section: a.section_name(section),
                name: format!("{} length", a.section_name(section)),
                a: bytes_a.len().to_string(),
                b: bytes_b.len().to_string(),
                last_write_a: None,
                last_write_b: None,
                section_index: section,
                bytes: 0..0,
            });
            continue;
        }
        let mut offset = 0;
        while offset < bytes_a.len() {
            if bytes_a[offset] == bytes_b[offset] {
                offset += 1;
                continue;
            }
            name.clear();
            a.field_name(section, offset, &mut name);
            let same_name = |at: usize, scratch: &mut String| {
                scratch.clear();
                a.field_name(section, at, scratch);
                *scratch == name
            };
            let mut start = offset;
            while start > 0 && offset - start < MAX_FIELD_BYTES - 1 && same_name(start - 1, &mut neighbour) {
                start -= 1;
            }
            let mut end = offset + 1;
            while end < bytes_a.len() && end - start < MAX_FIELD_BYTES && same_name(end, &mut neighbour) {
                end += 1;
            }
            if fields.len() < max_fields {
                fields.push(FieldDiff {
                    section: a.section_name(section),
                    name: name.clone(),
                    a: format_value(&bytes_a[start..end]),
                    b: format_value(&bytes_b[start..end]),
                    last_write_a: None,
                    last_write_b: None,
                    section_index: section,
                    bytes: start..end,
                });
            } else {
                omitted += 1;
            }
            offset = end;
        }
    }
    (fields, omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_formatted_by_width() {
        assert_eq!(format_value(&[0x17]), "$17");
        assert_eq!(format_value(&[0x40, 0x2C]), "$2C40");
        assert_eq!(format_value(&1_234_567u64.to_le_bytes()), "1234567");
    }
}
