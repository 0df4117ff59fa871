//! The .fm2 export of a stream of 2^32 - 1 frames (some 99 GB of movie text) into a sink that only
//! counts: every byte accounted for, and no allocation at all while it is written, so memory does
//! not follow the stream's length.

use anes_core::Region;
use anes_core::input::buttons;
use anes_core::movie::{FrameInput, InputStream};

#[global_allocator]
static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;

/// Counts what it is given and keeps the first bytes.
struct Counter {
    bytes: u64,
    calls: u64,
    head: [u8; 4096],
    kept: usize,
}

impl core::fmt::Write for Counter {
    fn write_str(&mut self, text: &str) -> core::fmt::Result {
        let room = self.head.len() - self.kept;
        let keep = text.len().min(room);
        self.head[self.kept..self.kept + keep].copy_from_slice(&text.as_bytes()[..keep]);
        self.kept += keep;
        self.bytes += text.len() as u64;
        self.calls += 1;
        Ok(())
    }
}

#[test]
fn a_movie_of_4_billion_frames_is_written_with_no_allocation() {
    let mut stream = InputStream::new();
    stream.push_repeated(FrameInput::buttons(buttons::A, 0), 3);
    stream.push_repeated(FrameInput::default(), u32::MAX as usize - 3);
    let header = {
        let empty = InputStream::new().to_fm2_of_region("game.nes", Region::Pal);
        empty.len() as u64
    };
    let mut counter = Counter { bytes: 0, calls: 0, head: [0; 4096], kept: 0 };
    let before = anes_alloc_count::thread_allocations();
    stream.write_fm2_of_region("game.nes", Region::Pal, &mut counter).unwrap();
    assert_eq!(anes_alloc_count::thread_allocations(), before, "allocations while writing");
    // One 23-byte line per frame after the header.
    assert_eq!(counter.bytes, header + 23 * u64::from(u32::MAX));
    assert!(
        counter.calls < u64::from(u32::MAX) / 100,
        "{} calls: lines are written in blocks",
        counter.calls
    );
    let head = std::str::from_utf8(&counter.head[..counter.kept]).unwrap();
    assert!(head.contains("\npalFlag 1\n"), "{head}");
    let log: Vec<&str> = head.lines().skip_while(|l| !l.starts_with('|')).take(5).collect();
    assert_eq!(
        log,
        ["|0|.......A|........||"; 3].into_iter().chain(["|0|........|........||"; 2]).collect::<Vec<_>>()
    );
}

#[test]
fn a_streamed_export_is_the_in_memory_one() {
    let mut stream = InputStream::new();
    for (i, len) in [1usize, 177, 178, 179, 1000, 1].into_iter().enumerate() {
        stream.push_repeated(FrameInput::buttons(i as u8, 0x80 >> i), len);
    }
    let whole = stream.to_fm2_of_region("x.nes", Region::Ntsc);
    assert_eq!(whole.lines().filter(|l| l.starts_with('|')).count(), stream.len());
    assert_eq!(InputStream::from_fm2(whole.as_bytes()).unwrap(), stream);
    // A writer that fails ends the export with its error.
    struct Full(usize);
    impl core::fmt::Write for Full {
        fn write_str(&mut self, text: &str) -> core::fmt::Result {
            self.0 = self.0.checked_sub(text.len()).ok_or(core::fmt::Error)?;
            Ok(())
        }
    }
    assert!(stream.write_fm2_of_region("x.nes", Region::Ntsc, &mut Full(whole.len())).is_ok());
    assert!(stream.write_fm2_of_region("x.nes", Region::Ntsc, &mut Full(whole.len() - 1)).is_err());
}
