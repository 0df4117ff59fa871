//! The codec's tests: both encodings, damage, limits, arbitrary bytes.

use super::*;
use proptest::prelude::*;

fn record() -> WireRecord {
    WireRecord { frame: 7, cpu_cycle: 208_000, scanline: 241, dot: 3, state_hash: [0xAB; 32] }
}

fn all_commands() -> Vec<WorkerCommand> {
    vec![
        WorkerCommand::Load { rom: vec![1, 2, 3], checkpoint_every: 60, region: None, power_on: None },
        WorkerCommand::Load {
            rom: vec![1, 2, 3],
            checkpoint_every: 60,
            region: Some(anes_core::Region::Pal),
            power_on: None,
        },
        WorkerCommand::Load {
            rom: vec![1, 2, 3],
            checkpoint_every: 60,
            region: None,
            power_on: Some(anes_core::PowerOnProfile::Random(7)),
        },
        WorkerCommand::Load {
            rom: vec![1, 2, 3],
            checkpoint_every: 60,
            region: Some(anes_core::Region::Dendy),
            power_on: Some(anes_core::PowerOnProfile::QuickPowerCycle),
        },
        WorkerCommand::Frames { first_seq: 9, inputs: vec![WireInput([1, 2, 0]), WireInput([0, 0, 1])] },
        WorkerCommand::Restore { seq: 60, snapshot: vec![9; 10] },
        WorkerCommand::Snapshot,
        WorkerCommand::Inject { spec: "flip:ram:0x0010:3".into() },
        WorkerCommand::Stall { millis: 1500 },
        WorkerCommand::Shutdown,
        WorkerCommand::BeginFrame { input: WireInput([0x80, 0x01, 2]) },
        WorkerCommand::StepInstruction,
        WorkerCommand::Probe,
        WorkerCommand::Record,
        WorkerCommand::Disassemble,
        WorkerCommand::Picture,
    ]
}

fn all_replies() -> Vec<Reply> {
    vec![
        Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() },
        Reply::Hello {
            protocol_version: 1,
            build: BuildInfo { version: "0.1.0".into(), git_commit: None, emulation_epoch: 1 },
        },
        Reply::Loaded { rom_identity: [3; 32], record: record(), region: None },
        Reply::Loaded { rom_identity: [3; 32], record: record(), region: Some(anes_core::Region::Dendy) },
        Reply::Record { seq: 6, record: record() },
        Reply::Snapshot { seq: 60, state_hash: [1; 32], bytes: vec![5; 33] },
        Reply::Restored { seq: 60, record: record() },
        Reply::FaultFired { seq: 4, spec: "stall:3@99".into(), refused: None },
        Reply::FaultFired { seq: 4, spec: "flip:cpu:0x0099:1@5".into(), refused: Some("no".into()) },
        Reply::Error { message: "bad".into() },
        Reply::Probe {
            probe: WireProbe {
                cpu_cycle: 29_781,
                scanline: 241,
                dot: 3,
                pc: 0xC004,
                registers: 0x0012_3456_789A,
            },
        },
        Reply::Stepped { done: true, probe: WireProbe::default() },
        Reply::Stepped { done: false, probe: WireProbe { pc: 0x8000, ..WireProbe::default() } },
        Reply::Disassembly { opcode: 0xAD, text: "LDA $4016 = 41".into() },
        Reply::Picture { width: 2, height: 1, rgb: vec![1, 2, 3, 4, 5, 6] },
    ]
}

#[test]
fn every_message_round_trips_in_both_encodings() {
    for command in all_commands() {
        let mut bytes = Vec::new();
        encode_command(&command, &mut bytes);
        let mut buf = Vec::new();
        assert!(read_frame(&mut &bytes[..], &mut buf).unwrap());
        assert_eq!(decode_command(&buf).unwrap(), command);
        let json = serde_json::to_string(&command).unwrap();
        assert_eq!(command_from_json(&json).unwrap(), command, "{json}");
    }
    for reply in all_replies() {
        let mut bytes = Vec::new();
        encode_reply(&reply, &mut bytes);
        let mut buf = Vec::new();
        assert!(read_frame(&mut &bytes[..], &mut buf).unwrap());
        assert_eq!(decode_reply(&buf).unwrap(), reply);
        let json = serde_json::to_string(&reply).unwrap();
        assert_eq!(reply_from_json(&json).unwrap(), reply, "{json}");
    }
}

#[test]
fn json_lines_are_readable() {
    let json = serde_json::to_string(&Reply::Record { seq: 6, record: record() }).unwrap();
    assert!(json.starts_with(r#"{"type":"record","seq":6,"record":{"frame":7,"cpu_cycle":208000"#), "{json}");
    assert!(json.contains(&"ab".repeat(32)));
}

#[test]
fn damage_is_named() {
    let mut bytes = Vec::new();
    encode_reply(&Reply::Record { seq: 1, record: record() }, &mut bytes);
    let frame = &bytes[4..bytes.len() - FRAME_CHECKSUM_LEN];
    assert_eq!(
        decode_reply(&frame[..frame.len() - 1]),
        Err(ProtocolError::Truncated { message: "record", field: "record.state_hash" })
    );
    let mut long = frame.to_vec();
    long.push(0);
    assert_eq!(decode_reply(&long), Err(ProtocolError::TrailingBytes { message: "record", extra: 1 }));
    assert_eq!(decode_reply(&[0x7f]), Err(ProtocolError::UnknownTag(0x7f)));
    let huge = (MAX_FRAME_LEN as u32 + 1).to_le_bytes();
    assert!(matches!(read_frame(&mut &huge[..], &mut Vec::new()), Err(ProtocolError::FrameTooLong { .. })));
    assert_eq!(
        read_frame(&mut &bytes[..10], &mut Vec::new()),
        Err(ProtocolError::UnexpectedEof { missing: bytes.len() - 10 })
    );
    assert!(command_from_json(r#"{"type":"frames","first_seq":1}"#).is_err());
    assert!(command_from_json(r#"{"type":"stall","millis":1,"extra":1}"#).is_err());
}

/// Every message of a stream, a bit flipped at every offset: never read as another message.
#[test]
fn a_flipped_bit_anywhere_in_a_frame_is_detected() {
    let mut stream = Vec::new();
    for reply in all_replies().into_iter().skip(2) {
        encode_reply(&reply, &mut stream);
    }
    for command in all_commands() {
        encode_command(&command, &mut stream);
    }
    let read_all = |bytes: &[u8]| -> Result<Vec<Vec<u8>>, ProtocolError> {
        let mut reader = bytes;
        let mut frames = Vec::new();
        let mut frame = Vec::new();
        while read_frame(&mut reader, &mut frame)? {
            frames.push(frame.clone());
        }
        Ok(frames)
    };
    let clean = read_all(&stream).unwrap();
    assert_eq!(clean.len(), all_replies().len() - 2 + all_commands().len());
    for offset in 0..stream.len() {
        for bit in [0, 3, 7] {
            let mut damaged = stream.clone();
            damaged[offset] ^= 1 << bit;
            let result = read_all(&damaged);
            assert!(result.is_err(), "bit {bit} of byte {offset} flipped, yet the stream read: {result:?}");
        }
    }
}

#[test]
fn a_hello_of_another_version_is_read_far_enough_to_name_it() {
    // Version 1's hello: no checksum after it, and the child then waits for a command.
    let mut v1 = Vec::new();
    encode_reply(&Reply::Hello { protocol_version: 1, build: BuildInfo::current() }, &mut v1);
    v1.truncate(v1.len() - FRAME_CHECKSUM_LEN);
    let mut reader = &v1[..];
    let mut frame = Vec::new();
    assert!(read_hello_frame(&mut reader, &mut frame).unwrap());
    assert!(matches!(decode_reply(&frame), Ok(Reply::Hello { protocol_version: 1, .. })));
    // This version's hello is checked like any frame.
    let mut v2 = Vec::new();
    encode_reply(&Reply::Hello { protocol_version: PROTOCOL_VERSION, build: BuildInfo::current() }, &mut v2);
    assert!(read_hello_frame(&mut &v2[..], &mut frame).unwrap());
    assert!(matches!(decode_reply(&frame), Ok(Reply::Hello { protocol_version: PROTOCOL_VERSION, .. })));
    let last = v2.len() - 1;
    v2[last] ^= 1;
    assert!(matches!(
        read_hello_frame(&mut &v2[..], &mut frame),
        Err(ProtocolError::ChecksumMismatch { .. })
    ));
}

/// The limits hold in both encodings, each with the same message.
#[test]
fn both_encodings_refuse_what_exceeds_the_limits() {
    let too_many =
        WorkerCommand::Frames { first_seq: 0, inputs: vec![WireInput([0, 0, 0]); MAX_BATCH_FRAMES + 1] };
    let too_long = WorkerCommand::Stall { millis: MAX_STALL_MILLIS + 1 };
    for (command, field) in [(too_many, "count"), (too_long, "millis")] {
        let mut bytes = Vec::new();
        encode_command(&command, &mut bytes);
        let mut frame = Vec::new();
        assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
        let binary = decode_command(&frame).unwrap_err();
        let json = command_from_json(&serde_json::to_string(&command).unwrap()).unwrap_err();
        assert!(matches!(&binary, ProtocolError::BadField { field: f, .. } if *f == field), "{binary}");
        assert_eq!(binary, json);
    }
    let at_limit = WorkerCommand::Stall { millis: MAX_STALL_MILLIS };
    assert_eq!(command_from_json(&serde_json::to_string(&at_limit).unwrap()).unwrap(), at_limit);
}

#[test]
fn a_line_over_the_limit_is_skipped_without_being_kept() {
    let mut stream = vec![b'x'; MAX_JSON_LINE_LEN + 1];
    stream.extend_from_slice(b"\n{\"type\":\"probe\"}\nlast");
    let mut reader = std::io::BufReader::new(&stream[..]);
    let mut line = Vec::new();
    assert_eq!(read_line(&mut reader, &mut line), Err(ProtocolError::LineTooLong { max: MAX_JSON_LINE_LEN }));
    assert!(line.capacity() <= 64 << 10, "the long line was not kept: {}", line.capacity());
    assert!(read_line(&mut reader, &mut line).unwrap());
    assert_eq!(line, br#"{"type":"probe"}"#);
    assert!(read_line(&mut reader, &mut line).unwrap());
    assert_eq!(line, b"last");
    assert!(!read_line(&mut reader, &mut line).unwrap());
    let at_limit = vec![b'y'; MAX_JSON_LINE_LEN];
    assert!(read_line(&mut std::io::BufReader::new(&at_limit[..]), &mut line).unwrap());
    assert_eq!(line.len(), MAX_JSON_LINE_LEN);
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_command(&bytes);
        let _ = decode_reply(&bytes);
        let mut buf = Vec::new();
        let mut reader = &bytes[..];
        while let Ok(true) = read_frame(&mut reader, &mut buf) {
            let _ = decode_reply(&buf);
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = command_from_json(&text);
        let _ = reply_from_json(&text);
    }

    #[test]
    fn arbitrary_frames_after_a_valid_tag_never_panic(tag in 0u8..=0x90, payload in proptest::collection::vec(any::<u8>(), 0..120)) {
        let mut frame = vec![tag];
        frame.extend_from_slice(&payload);
        let _ = decode_command(&frame);
        let _ = decode_reply(&frame);
    }
}

#[test]
fn the_region_is_an_optional_last_field_and_a_bad_one_is_refused() {
    use anes_core::Region;
    let load =
        |region| WorkerCommand::Load { rom: vec![1, 2, 3], checkpoint_every: 60, region, power_on: None };
    let contents = |command: &WorkerCommand| {
        let mut bytes = Vec::new();
        encode_command(command, &mut bytes);
        let mut frame = Vec::new();
        assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
        frame
    };
    // Without a region, the layout of builds before regions: tag, checkpoint_every, rom.
    let without = contents(&load(None));
    assert_eq!(without, [&[0x01][..], &60u64.to_le_bytes(), &3u32.to_le_bytes(), &[1, 2, 3]].concat());
    for region in Region::ALL {
        let with = contents(&load(Some(region)));
        assert_eq!(with, [&without[..], &[region as u8]].concat(), "{region}");
        assert_eq!(decode_command(&with).unwrap(), load(Some(region)));
    }
    let mut bad = without.clone();
    bad.push(3);
    assert_eq!(
        decode_command(&bad),
        Err(ProtocolError::BadField {
            message: "load",
            field: "region",
            problem: "3 is not a region (0 NTSC, 1 PAL, 2 Dendy)".into()
        })
    );
    // After the region, only a power-on profile's name may follow.
    let mut trailing = contents(&load(Some(Region::Pal)));
    trailing.push(0);
    assert_eq!(
        decode_command(&trailing),
        Err(ProtocolError::Truncated { message: "load", field: "power_on" })
    );
    let json = r#"{"type":"load","rom":"010203","checkpoint_every":60,"region":"pal"}"#;
    assert_eq!(command_from_json(json).unwrap(), load(Some(Region::Pal)));
    assert_eq!(serde_json::to_string(&load(Some(Region::Pal))).unwrap(), json);
    assert!(command_from_json(&json.replace("pal", "secam")).is_err());
}

#[test]
fn the_power_on_profile_follows_the_region_and_a_bad_one_is_refused() {
    use anes_core::{PowerOnProfile, Region};
    let load =
        |region, power_on| WorkerCommand::Load { rom: vec![1, 2, 3], checkpoint_every: 60, region, power_on };
    let contents = |command: &WorkerCommand| {
        let mut bytes = Vec::new();
        encode_command(command, &mut bytes);
        let mut frame = Vec::new();
        assert!(read_frame(&mut &bytes[..], &mut frame).unwrap());
        frame
    };
    let without = contents(&load(None, None));
    let name = |text: &str| [&(text.len() as u32).to_le_bytes()[..], text.as_bytes()].concat();
    // No region chosen: 255 stands for the ROM header's before the profile's name.
    let warm = contents(&load(None, Some(PowerOnProfile::WarmUp)));
    assert_eq!(warm, [&without[..], &[255], &name("warm-up")].concat());
    assert_eq!(decode_command(&warm).unwrap(), load(None, Some(PowerOnProfile::WarmUp)));
    let pal = contents(&load(Some(Region::Pal), Some(PowerOnProfile::Random(9))));
    assert_eq!(pal, [&without[..], &[1], &name("random:9")].concat());
    // The region byte 255 alone names no region.
    let mut lone = without.clone();
    lone.push(255);
    assert!(matches!(decode_command(&lone), Err(ProtocolError::BadField { field: "region", .. })));
    let mut trailing = pal.clone();
    trailing.push(0);
    assert_eq!(decode_command(&trailing), Err(ProtocolError::TrailingBytes { message: "load", extra: 1 }));
    let bad = [&without[..], &[255], &name("tepid")].concat();
    match decode_command(&bad) {
        Err(ProtocolError::BadField { message: "load", field: "power_on", problem }) => {
            assert!(problem.contains("\"tepid\"") && problem.contains("random:SEED"), "{problem}");
        }
        other => panic!("{other:?}"),
    }
    let json = r#"{"type":"load","rom":"010203","checkpoint_every":60,"power_on":"random:9"}"#;
    assert_eq!(command_from_json(json).unwrap(), load(None, Some(PowerOnProfile::Random(9))));
    assert_eq!(serde_json::to_string(&load(None, Some(PowerOnProfile::Random(9)))).unwrap(), json);
    assert!(command_from_json(&json.replace("random:9", "random:x")).is_err());
}
