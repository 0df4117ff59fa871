//! The binary encoding: one tag byte per message, then its fields, little-endian (layouts in
//! [`encode_command`] and [`encode_reply`]); framing and checksums are [`super::frame`]'s.

use super::frame::{begin_frame, end_frame};
use super::{BuildInfo, HELLO_MAGIC, ProtocolError, Reply, WireInput, WireProbe, WireRecord, WorkerCommand};
use super::{check_batch_len, check_limits, tag};

/// Appends one binary frame holding `command`: `len u32`, the contents (tag and payload), then the
/// frame's checksum (blake3 of `len` and the contents, first 8 bytes).
///
/// Layouts (little-endian; `bytes` is a `u32` length and the bytes, `str` the same in UTF-8):
/// `Load` 0x01: `checkpoint_every u64, rom bytes[, region u8[, power_on str]]` (the region byte only
/// when chosen or followed by a profile: 0 NTSC, 1 PAL, 2 Dendy, 255 the ROM header's; the power-on
/// profile's name only when not the default); `Frames` 0x02: `first_seq u64, count u32,
/// count × [port1, port2, command]`; `Restore` 0x03: `seq u64, snapshot bytes`; `Snapshot` 0x04;
/// `Inject` 0x05: `spec str`; `Stall` 0x06: `millis u32`; `Shutdown` 0x07; `BeginFrame` 0x08:
/// `[port1, port2, command]`; `StepInstruction` 0x09; `Probe` 0x0A; `Record` 0x0B; `Disassemble` 0x0C;
/// `Picture` 0x0D.
pub fn encode_command(command: &WorkerCommand, out: &mut Vec<u8>) {
    let start = begin_frame(out);
    match command {
        WorkerCommand::Load { rom, checkpoint_every, region, power_on } => {
            out.push(tag::LOAD);
            out.extend_from_slice(&checkpoint_every.to_le_bytes());
            put_bytes(out, rom);
            match power_on {
                None => put_region(out, *region),
                Some(profile) => {
                    out.push(region.map_or(REGION_FROM_HEADER, |r| r as u8));
                    put_bytes(out, profile.to_string().as_bytes());
                }
            }
        }
        WorkerCommand::Frames { first_seq, inputs } => {
            out.push(tag::FRAMES);
            out.extend_from_slice(&first_seq.to_le_bytes());
            out.extend_from_slice(&(inputs.len() as u32).to_le_bytes());
            for input in inputs {
                out.extend_from_slice(&input.0);
            }
        }
        WorkerCommand::Restore { seq, snapshot } => {
            out.push(tag::RESTORE);
            out.extend_from_slice(&seq.to_le_bytes());
            put_bytes(out, snapshot);
        }
        WorkerCommand::Snapshot => out.push(tag::SNAPSHOT_REQUEST),
        WorkerCommand::Inject { spec } => {
            out.push(tag::INJECT);
            put_bytes(out, spec.as_bytes());
        }
        WorkerCommand::Stall { millis } => {
            out.push(tag::STALL);
            out.extend_from_slice(&millis.to_le_bytes());
        }
        WorkerCommand::Shutdown => out.push(tag::SHUTDOWN),
        WorkerCommand::BeginFrame { input } => {
            out.push(tag::BEGIN_FRAME);
            out.extend_from_slice(&input.0);
        }
        WorkerCommand::StepInstruction => out.push(tag::STEP_INSTRUCTION),
        WorkerCommand::Probe => out.push(tag::PROBE_REQUEST),
        WorkerCommand::Record => out.push(tag::RECORD_REQUEST),
        WorkerCommand::Disassemble => out.push(tag::DISASSEMBLE),
        WorkerCommand::Picture => out.push(tag::PICTURE_REQUEST),
    }
    end_frame(out, start);
}

/// Appends one binary frame holding `reply`, framed as [`encode_command`] frames a command.
///
/// Layouts: `Hello` 0x81: `magic "ANWP", protocol_version u16, emulation_epoch u32, version str,
/// git_commit str (empty: none)`; `Loaded` 0x82: `rom_identity [32], record[, region u8]` (as in
/// `Load`; absent from builds older than regions); `Record` 0x83: `seq u64,
/// record`; `Snapshot` 0x84: `seq u64, state_hash [32], bytes`; `Restored` 0x85: `seq u64, record`;
/// `FaultFired` 0x86: `seq u64, spec str, refused str (empty: none)`; `Error` 0x87: `message str`;
/// `Probe` 0x88: `probe`; `Stepped` 0x89: `done u8 (0 or 1), probe`; `Disassembly` 0x8A: `opcode u8,
/// text str`; `Picture` 0x8B: `width u32, height u32, rgb bytes`.
/// A record is `frame u64, cpu_cycle u64, scanline u16, dot u16, state_hash [32]` (52 bytes); a probe
/// `cpu_cycle u64, scanline u16, dot u16, pc u16, registers u64` (22 bytes).
pub fn encode_reply(reply: &Reply, out: &mut Vec<u8>) {
    let start = begin_frame(out);
    match reply {
        Reply::Hello { protocol_version, build } => {
            out.push(tag::HELLO);
            out.extend_from_slice(&HELLO_MAGIC);
            out.extend_from_slice(&protocol_version.to_le_bytes());
            out.extend_from_slice(&build.emulation_epoch.to_le_bytes());
            put_bytes(out, build.version.as_bytes());
            put_bytes(out, build.git_commit.as_deref().unwrap_or("").as_bytes());
        }
        Reply::Loaded { rom_identity, record, region } => {
            out.push(tag::LOADED);
            out.extend_from_slice(rom_identity);
            put_record(out, record);
            put_region(out, *region);
        }
        Reply::Record { seq, record } => {
            out.push(tag::RECORD);
            out.extend_from_slice(&seq.to_le_bytes());
            put_record(out, record);
        }
        Reply::Snapshot { seq, state_hash, bytes } => {
            out.push(tag::SNAPSHOT);
            out.extend_from_slice(&seq.to_le_bytes());
            out.extend_from_slice(state_hash);
            put_bytes(out, bytes);
        }
        Reply::Restored { seq, record } => {
            out.push(tag::RESTORED);
            out.extend_from_slice(&seq.to_le_bytes());
            put_record(out, record);
        }
        Reply::FaultFired { seq, spec, refused } => {
            out.push(tag::FAULT_FIRED);
            out.extend_from_slice(&seq.to_le_bytes());
            put_bytes(out, spec.as_bytes());
            put_bytes(out, refused.as_deref().unwrap_or("").as_bytes());
        }
        Reply::Error { message } => {
            out.push(tag::ERROR);
            put_bytes(out, message.as_bytes());
        }
        Reply::Probe { probe } => {
            out.push(tag::PROBE);
            put_probe(out, probe);
        }
        Reply::Stepped { done, probe } => {
            out.push(tag::STEPPED);
            out.push(u8::from(*done));
            put_probe(out, probe);
        }
        Reply::Disassembly { opcode, text } => {
            out.push(tag::DISASSEMBLY);
            out.push(*opcode);
            put_bytes(out, text.as_bytes());
        }
        Reply::Picture { width, height, rgb } => {
            out.push(tag::PICTURE);
            out.extend_from_slice(&width.to_le_bytes());
            out.extend_from_slice(&height.to_le_bytes());
            put_bytes(out, rgb);
        }
    }
    end_frame(out, start);
}

/// An optional last field: absent for `None`, so messages without it keep their older layout.
/// `Load`'s region byte when no region is chosen but a power-on profile follows.
const REGION_FROM_HEADER: u8 = 255;

fn put_region(out: &mut Vec<u8>, region: Option<anes_core::Region>) {
    if let Some(region) = region {
        out.push(region as u8);
    }
}

fn put_probe(out: &mut Vec<u8>, p: &WireProbe) {
    out.extend_from_slice(&p.cpu_cycle.to_le_bytes());
    out.extend_from_slice(&p.scanline.to_le_bytes());
    out.extend_from_slice(&p.dot.to_le_bytes());
    out.extend_from_slice(&p.pc.to_le_bytes());
    out.extend_from_slice(&p.registers.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_record(out: &mut Vec<u8>, r: &WireRecord) {
    out.extend_from_slice(&r.frame.to_le_bytes());
    out.extend_from_slice(&r.cpu_cycle.to_le_bytes());
    out.extend_from_slice(&r.scanline.to_le_bytes());
    out.extend_from_slice(&r.dot.to_le_bytes());
    out.extend_from_slice(&r.state_hash);
}

/// Longest name-like string (a fault spec, a build's version or commit, a power-on profile): a
/// peer's string is kept (in notices, a worker's build), so its size is bounded well below a frame's.
pub(crate) const MAX_NAME_LEN: usize = 1 << 10;

/// Longest free text (an error message, a refusal, a disassembly).
pub(crate) const MAX_TEXT_LEN: usize = 4 << 10;

/// Widest and tallest picture (an NES picture is 256 by 240; a libretro core's may be larger).
pub(crate) const MAX_PICTURE_SIDE: u32 = 4096;

/// Checks a picture's size and that `rgb_len` is exactly its RGB bytes, so no reader of a
/// [`Reply::Picture`] computes `width * height * 3` on values that overflow.
pub(crate) fn check_picture(width: u32, height: u32, rgb_len: usize) -> Result<(), ProtocolError> {
    let bad = |field, problem| Err(ProtocolError::BadField { message: "picture", field, problem });
    for (field, side) in [("width", width), ("height", height)] {
        if side > MAX_PICTURE_SIDE {
            return bad(field, format!("{side} pixels is more than the {MAX_PICTURE_SIDE}-pixel limit"));
        }
    }
    let expected = (width as usize).checked_mul(height as usize).and_then(|n| n.checked_mul(3));
    if expected != Some(rgb_len) {
        // Sides within the limit: the product fits.
        let wanted = u64::from(width) * u64::from(height) * 3;
        return bad("rgb", format!("{rgb_len} bytes, but a {width}x{height} picture has {wanted}"));
    }
    Ok(())
}

/// Reads fields from a payload, naming the message and field in every error.
struct Fields<'a> {
    message: &'static str,
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], ProtocolError> {
        if self.rest.len() < n {
            return Err(ProtocolError::Truncated { message: self.message, field });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, field: &'static str) -> Result<[u8; N], ProtocolError> {
        let bytes = self.take(N, field)?;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    fn u16(&mut self, field: &'static str) -> Result<u16, ProtocolError> {
        Ok(u16::from_le_bytes(self.array(field)?))
    }

    fn u32(&mut self, field: &'static str) -> Result<u32, ProtocolError> {
        Ok(u32::from_le_bytes(self.array(field)?))
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, ProtocolError> {
        Ok(u64::from_le_bytes(self.array(field)?))
    }

    fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], ProtocolError> {
        let len = self.u32(field)? as usize;
        self.take(len, field)
    }

    fn string(&mut self, field: &'static str, max: usize) -> Result<String, ProtocolError> {
        let bytes = self.bytes(field)?;
        if bytes.len() > max {
            return Err(ProtocolError::BadField {
                message: self.message,
                field,
                problem: format!("{} bytes is longer than the {max}-byte limit", bytes.len()),
            });
        }
        String::from_utf8(bytes.to_vec()).map_err(|_| ProtocolError::BadField {
            message: self.message,
            field,
            problem: "not UTF-8".to_string(),
        })
    }

    fn record(&mut self) -> Result<WireRecord, ProtocolError> {
        Ok(WireRecord {
            frame: self.u64("record.frame")?,
            cpu_cycle: self.u64("record.cpu_cycle")?,
            scanline: self.u16("record.scanline")?,
            dot: self.u16("record.dot")?,
            state_hash: self.array("record.state_hash")?,
        })
    }

    fn probe(&mut self) -> Result<WireProbe, ProtocolError> {
        Ok(WireProbe {
            cpu_cycle: self.u64("probe.cpu_cycle")?,
            scanline: self.u16("probe.scanline")?,
            dot: self.u16("probe.dot")?,
            pc: self.u16("probe.pc")?,
            registers: self.u64("probe.registers")?,
        })
    }

    /// The optional region byte that may end a message ([`put_region`]).
    fn region(&mut self) -> Result<Option<anes_core::Region>, ProtocolError> {
        let Some((&byte, rest)) = self.rest.split_first() else { return Ok(None) };
        self.rest = rest;
        anes_core::Region::from_u8(byte).map(Some).ok_or_else(|| ProtocolError::BadField {
            message: self.message,
            field: "region",
            problem: format!("{byte} is not a region (0 NTSC, 1 PAL, 2 Dendy)"),
        })
    }

    /// `Load`'s optional tail: a region byte (255: the ROM header's, only before a profile), then
    /// a power-on profile's name.
    fn region_and_power_on(
        &mut self,
    ) -> Result<(Option<anes_core::Region>, Option<anes_core::PowerOnProfile>), ProtocolError> {
        let Some((&byte, rest)) = self.rest.split_first() else { return Ok((None, None)) };
        let region = if byte == REGION_FROM_HEADER && !rest.is_empty() {
            self.rest = rest;
            None
        } else {
            self.region()?
        };
        let power_on = if self.rest.is_empty() { None } else { Some(self.power_on()?) };
        Ok((region, power_on))
    }

    fn power_on(&mut self) -> Result<anes_core::PowerOnProfile, ProtocolError> {
        let text = self.string("power_on", MAX_NAME_LEN)?;
        text.parse().map_err(|e: anes_core::PowerOnError| ProtocolError::BadField {
            message: self.message,
            field: "power_on",
            problem: e.to_string(),
        })
    }

    fn finish<T>(self, value: T) -> Result<T, ProtocolError> {
        if self.rest.is_empty() {
            Ok(value)
        } else {
            Err(ProtocolError::TrailingBytes { message: self.message, extra: self.rest.len() })
        }
    }
}

fn split_tag(frame: &[u8]) -> Result<(u8, &[u8]), ProtocolError> {
    frame.split_first().map(|(t, rest)| (*t, rest)).ok_or(ProtocolError::EmptyFrame)
}

/// Decodes a binary frame's contents (tag and payload, without the length prefix and checksum) as a
/// command, within the protocol's limits.
pub fn decode_command(frame: &[u8]) -> Result<WorkerCommand, ProtocolError> {
    decode_command_unchecked(frame).and_then(check_limits)
}

fn decode_command_unchecked(frame: &[u8]) -> Result<WorkerCommand, ProtocolError> {
    let (tag, payload) = split_tag(frame)?;
    let fields = |message| Fields { message, rest: payload };
    match tag {
        tag::LOAD => {
            let mut f = fields("load");
            let checkpoint_every = f.u64("checkpoint_every")?;
            let rom = f.bytes("rom")?.to_vec();
            let (region, power_on) = f.region_and_power_on()?;
            f.finish(WorkerCommand::Load { rom, checkpoint_every, region, power_on })
        }
        tag::FRAMES => {
            let mut f = fields("frames");
            let first_seq = f.u64("first_seq")?;
            let count = f.u32("count")? as usize;
            // Checked before the inputs are allocated, with the limit every encoding shares.
            check_batch_len(count)?;
            let body = f.take(count.saturating_mul(3), "inputs")?;
            let inputs = body.chunks_exact(3).map(|c| WireInput([c[0], c[1], c[2]])).collect();
            f.finish(WorkerCommand::Frames { first_seq, inputs })
        }
        tag::RESTORE => {
            let mut f = fields("restore");
            let seq = f.u64("seq")?;
            let snapshot = f.bytes("snapshot")?.to_vec();
            f.finish(WorkerCommand::Restore { seq, snapshot })
        }
        tag::SNAPSHOT_REQUEST => fields("snapshot").finish(WorkerCommand::Snapshot),
        tag::INJECT => {
            let mut f = fields("inject");
            let spec = f.string("spec", MAX_NAME_LEN)?;
            f.finish(WorkerCommand::Inject { spec })
        }
        tag::STALL => {
            let mut f = fields("stall");
            let millis = f.u32("millis")?;
            f.finish(WorkerCommand::Stall { millis })
        }
        tag::SHUTDOWN => fields("shutdown").finish(WorkerCommand::Shutdown),
        tag::BEGIN_FRAME => {
            let mut f = fields("begin_frame");
            let input = WireInput(f.array("input")?);
            f.finish(WorkerCommand::BeginFrame { input })
        }
        tag::STEP_INSTRUCTION => fields("step_instruction").finish(WorkerCommand::StepInstruction),
        tag::PROBE_REQUEST => fields("probe").finish(WorkerCommand::Probe),
        tag::RECORD_REQUEST => fields("record").finish(WorkerCommand::Record),
        tag::DISASSEMBLE => fields("disassemble").finish(WorkerCommand::Disassemble),
        tag::PICTURE_REQUEST => fields("picture").finish(WorkerCommand::Picture),
        other => Err(ProtocolError::UnknownTag(other)),
    }
}

/// Decodes a binary frame's contents (tag and payload) as a reply.
pub fn decode_reply(frame: &[u8]) -> Result<Reply, ProtocolError> {
    let (tag, payload) = split_tag(frame)?;
    let fields = |message| Fields { message, rest: payload };
    match tag {
        tag::HELLO => {
            let mut f = fields("hello");
            let magic: [u8; 4] = f.array("magic")?;
            if magic != HELLO_MAGIC {
                return Err(ProtocolError::BadField {
                    message: "hello",
                    field: "magic",
                    problem: format!("expected \"ANWP\", found {magic:02X?}: not an anes worker"),
                });
            }
            let protocol_version = f.u16("protocol_version")?;
            let emulation_epoch = f.u32("emulation_epoch")?;
            let version = f.string("version", MAX_NAME_LEN)?;
            let git_commit = Some(f.string("git_commit", MAX_NAME_LEN)?).filter(|s| !s.is_empty());
            f.finish(Reply::Hello {
                protocol_version,
                build: BuildInfo { version, git_commit, emulation_epoch },
            })
        }
        tag::LOADED => {
            let mut f = fields("loaded");
            let rom_identity = f.array("rom_identity")?;
            let record = f.record()?;
            let region = f.region()?;
            f.finish(Reply::Loaded { rom_identity, record, region })
        }
        tag::RECORD => {
            let mut f = fields("record");
            let seq = f.u64("seq")?;
            let record = f.record()?;
            f.finish(Reply::Record { seq, record })
        }
        tag::SNAPSHOT => {
            let mut f = fields("snapshot");
            let seq = f.u64("seq")?;
            let state_hash = f.array("state_hash")?;
            let bytes = f.bytes("bytes")?.to_vec();
            f.finish(Reply::Snapshot { seq, state_hash, bytes })
        }
        tag::RESTORED => {
            let mut f = fields("restored");
            let seq = f.u64("seq")?;
            let record = f.record()?;
            f.finish(Reply::Restored { seq, record })
        }
        tag::FAULT_FIRED => {
            let mut f = fields("fault_fired");
            let seq = f.u64("seq")?;
            let spec = f.string("spec", MAX_NAME_LEN)?;
            let refused = Some(f.string("refused", MAX_TEXT_LEN)?).filter(|s| !s.is_empty());
            f.finish(Reply::FaultFired { seq, spec, refused })
        }
        tag::ERROR => {
            let mut f = fields("error");
            let message = f.string("message", MAX_TEXT_LEN)?;
            f.finish(Reply::Error { message })
        }
        tag::PROBE => {
            let mut f = fields("probe");
            let probe = f.probe()?;
            f.finish(Reply::Probe { probe })
        }
        tag::STEPPED => {
            let mut f = fields("stepped");
            let done = match f.array::<1>("done")?[0] {
                0 => false,
                1 => true,
                other => {
                    return Err(ProtocolError::BadField {
                        message: "stepped",
                        field: "done",
                        problem: format!("{other} is neither 0 nor 1"),
                    });
                }
            };
            let probe = f.probe()?;
            f.finish(Reply::Stepped { done, probe })
        }
        tag::DISASSEMBLY => {
            let mut f = fields("disassembly");
            let [opcode] = f.array("opcode")?;
            let text = f.string("text", MAX_TEXT_LEN)?;
            f.finish(Reply::Disassembly { opcode, text })
        }
        tag::PICTURE => {
            let mut f = fields("picture");
            let width = f.u32("width")?;
            let height = f.u32("height")?;
            let rgb = f.bytes("rgb")?;
            check_picture(width, height, rgb.len())?;
            let rgb = rgb.to_vec();
            f.finish(Reply::Picture { width, height, rgb })
        }
        other => Err(ProtocolError::UnknownTag(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::FRAME_CHECKSUM_LEN;
    use super::*;

    /// The contents of `reply`'s frame (tag and payload), as a peer could send them.
    fn contents(reply: &Reply) -> Vec<u8> {
        let mut bytes = Vec::new();
        encode_reply(reply, &mut bytes);
        bytes[4..bytes.len() - FRAME_CHECKSUM_LEN].to_vec()
    }

    fn refused(reply: &Reply) -> (&'static str, &'static str, String) {
        match decode_reply(&contents(reply)) {
            Err(ProtocolError::BadField { message, field, problem }) => (message, field, problem),
            other => panic!("{reply:.80?} decoded as {other:.200?}"),
        }
    }

    #[test]
    fn strings_longer_than_their_limit_are_refused_by_name() {
        let long = |n| "x".repeat(n);
        let fault = |spec, refused| Reply::FaultFired { seq: 1, spec, refused };
        let hello = |version| Reply::Hello {
            protocol_version: 2,
            build: BuildInfo { version, git_commit: None, emulation_epoch: 1 },
        };
        for (reply, message, field, max) in [
            (fault(long(MAX_NAME_LEN + 1), None), "fault_fired", "spec", MAX_NAME_LEN),
            (fault("stall:1".into(), Some(long(MAX_TEXT_LEN + 1))), "fault_fired", "refused", MAX_TEXT_LEN),
            (Reply::Error { message: long(16 << 20) }, "error", "message", MAX_TEXT_LEN),
            (hello(long(MAX_NAME_LEN + 1)), "hello", "version", MAX_NAME_LEN),
            (
                Reply::Disassembly { opcode: 0, text: long(MAX_TEXT_LEN + 1) },
                "disassembly",
                "text",
                MAX_TEXT_LEN,
            ),
        ] {
            let (m, f, problem) = refused(&reply);
            assert_eq!((m, f), (message, field));
            assert!(problem.contains(&format!("{max}-byte limit")), "{problem}");
        }
        // At the limit, still a message.
        let at_limit = [
            fault(long(MAX_NAME_LEN), Some(long(MAX_TEXT_LEN))),
            Reply::Error { message: long(MAX_TEXT_LEN) },
            hello(long(MAX_NAME_LEN)),
        ];
        for reply in at_limit {
            assert_eq!(decode_reply(&contents(&reply)).as_ref(), Ok(&reply));
        }
    }

    #[test]
    fn a_picture_is_refused_unless_its_bytes_are_its_size() {
        let picture = |width, height, len| Reply::Picture { width, height, rgb: vec![7; len] };
        for (width, height, len, field) in [
            (u32::MAX, u32::MAX, 0, "width"),
            (2, MAX_PICTURE_SIDE + 1, 0, "height"),
            (0x8000_0000, 2, 0, "width"),
            (2, 1, 5, "rgb"),
            (2, 1, 7, "rgb"),
            (MAX_PICTURE_SIDE, MAX_PICTURE_SIDE, 3, "rgb"),
        ] {
            let (message, f, problem) = refused(&picture(width, height, len));
            assert_eq!((message, f), ("picture", field), "{width}x{height}: {problem}");
        }
        for (width, height) in [(0, 0), (2, 1), (256, 240)] {
            let reply = picture(width, height, (width * height * 3) as usize);
            assert_eq!(decode_reply(&contents(&reply)).as_ref(), Ok(&reply));
        }
    }

    #[test]
    fn an_inject_s_spec_is_limited_like_a_fault_s() {
        let mut bytes = Vec::new();
        encode_command(&WorkerCommand::Inject { spec: "f".repeat(MAX_NAME_LEN + 1) }, &mut bytes);
        let frame = &bytes[4..bytes.len() - FRAME_CHECKSUM_LEN];
        assert!(matches!(
            decode_command(frame),
            Err(ProtocolError::BadField { message: "inject", field: "spec", .. })
        ));
    }
}
