//! The in-memory form of an input stream: runs of identical frames, as in the file.

use std::iter::FusedIterator;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::FrameInput;

/// The most frames a stream can hold: the binary format stores the count in 32 bits.
pub const MAX_FRAMES: usize = u32::MAX as usize;

/// A sequence of per-frame inputs, stored as runs of identical frames.
///
/// Memory follows the number of runs (input changes), not the number of frames. Reading frames in
/// order with [`InputStream::frame`] or [`InputStream::frames`] costs O(1) per frame and allocates
/// nothing; a jump costs a binary search over the runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputStream {
    /// The frame index just past each run, strictly increasing; the last one is the stream's length.
    run_ends: Vec<u32>,
    /// The input of each run. Neighbouring runs always differ, so equal streams have equal runs.
    run_inputs: Vec<FrameInput>,
    /// The run the last [`InputStream::frame`] call landed in.
    cursor: RunCursor,
}

/// A hint, not state: the runners read frames in order, so the next frame is almost always in the
/// same run or the next one. Atomic (relaxed) so a stream shared by two worker threads stays `Sync`;
/// a stale hint only costs a binary search, never a wrong answer.
#[derive(Debug, Default)]
struct RunCursor(AtomicUsize);

impl RunCursor {
    fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self, run: usize) {
        self.0.store(run, Ordering::Relaxed);
    }
}

impl Clone for RunCursor {
    fn clone(&self) -> RunCursor {
        RunCursor(AtomicUsize::new(self.get()))
    }
}

/// Streams compare by their frames; where a reader last was does not matter.
impl PartialEq for RunCursor {
    fn eq(&self, _: &RunCursor) -> bool {
        true
    }
}

impl Eq for RunCursor {}

/// One run of identical frames, as [`InputStream::runs`] lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputRun {
    /// Index of the run's first frame.
    pub start: usize,
    /// Frames in the run (at least 1).
    pub len: usize,
    /// The input of every frame of the run.
    pub input: FrameInput,
}

impl InputStream {
    /// An empty stream.
    pub fn new() -> InputStream {
        InputStream::default()
    }

    /// A stream of the given frames.
    ///
    /// # Panics
    /// If there are more than [`MAX_FRAMES`] frames.
    pub fn from_frames(frames: Vec<FrameInput>) -> InputStream {
        frames.into_iter().collect()
    }

    /// An empty stream with room for `runs` runs.
    pub(super) fn with_run_capacity(runs: usize) -> InputStream {
        InputStream {
            run_ends: Vec::with_capacity(runs),
            run_inputs: Vec::with_capacity(runs),
            ..Default::default()
        }
    }

    /// Appends a frame.
    ///
    /// # Panics
    /// If the stream already holds [`MAX_FRAMES`] frames.
    pub fn push(&mut self, frame: FrameInput) {
        self.push_repeated(frame, 1);
    }

    /// Appends `count` copies of `frame` (a button held for `count` frames) in constant time.
    ///
    /// # Panics
    /// If the stream would hold more than [`MAX_FRAMES`] frames; parsers check their counts first.
    pub fn push_repeated(&mut self, frame: FrameInput, count: usize) {
        if count == 0 {
            return;
        }
        let end = u32::try_from(count)
            .ok()
            .and_then(|count| self.len_u32().checked_add(count))
            .expect("an input stream holds at most 2^32 - 1 frames");
        match (self.run_ends.last_mut(), self.run_inputs.last()) {
            (Some(last_end), Some(&last)) if last == frame => *last_end = end,
            _ => {
                self.run_ends.push(end);
                self.run_inputs.push(frame);
            }
        }
    }

    /// Keeps the first `len` frames (nothing changes when the stream is not longer).
    pub fn truncate(&mut self, len: usize) {
        if len >= self.len() {
            return;
        }
        // `len` < the current length, which fits in u32.
        let len = len as u32;
        let kept = self.run_ends.partition_point(|&end| end < len);
        if len == 0 {
            self.run_ends.clear();
            self.run_inputs.clear();
        } else {
            self.run_ends.truncate(kept + 1);
            self.run_inputs.truncate(kept + 1);
            self.run_ends[kept] = len;
        }
    }

    /// Frames `range` (clamped to the stream) as a stream of their own. Time and memory follow the
    /// runs the range covers, never its frame count.
    pub fn slice(&self, range: Range<usize>) -> InputStream {
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        let mut out = InputStream::new();
        if start == end {
            return out;
        }
        // Both fit in u32: they are at most the length.
        let (start, end) = (start as u32, end as u32);
        for run in self.run_containing(start)..self.run_ends.len() {
            let run_start = self.run_start(run).max(start);
            if run_start >= end {
                break;
            }
            let run_end = self.run_ends[run].min(end);
            out.push_repeated(self.run_inputs[run], (run_end - run_start) as usize);
        }
        out
    }

    /// Appends the frames of `other`, run by run.
    ///
    /// # Panics
    /// If the stream would hold more than [`MAX_FRAMES`] frames; check the lengths first.
    pub fn append(&mut self, other: &InputStream) {
        for run in other.runs() {
            self.push_repeated(run.input, run.len);
        }
    }

    /// The frames in order, decoded from the runs as they are read (nothing is allocated).
    pub fn frames(&self) -> Frames<'_> {
        Frames { stream: self, run: 0, next: 0 }
    }

    /// The runs of identical frames, in order.
    pub fn runs(&self) -> impl ExactSizeIterator<Item = InputRun> + '_ {
        (0..self.run_ends.len()).map(move |run| {
            let start = self.run_start(run);
            InputRun {
                start: start as usize,
                len: (self.run_ends[run] - start) as usize,
                input: self.run_inputs[run],
            }
        })
    }

    /// Number of frames.
    pub fn len(&self) -> usize {
        self.len_u32() as usize
    }

    /// True when the stream has no frames.
    pub fn is_empty(&self) -> bool {
        self.run_ends.is_empty()
    }

    /// Input for frame `index`; past the end, no buttons (a stream ends with the controllers released).
    pub fn frame(&self, index: usize) -> FrameInput {
        let Ok(index) = u32::try_from(index) else {
            return FrameInput::default();
        };
        if index >= self.len_u32() {
            return FrameInput::default();
        }
        let hint = self.cursor.get();
        let run = if self.run_contains(hint, index) {
            hint
        } else if self.run_contains(hint.wrapping_add(1), index) {
            hint + 1
        } else {
            self.run_containing(index)
        };
        self.cursor.set(run);
        self.run_inputs[run]
    }

    fn len_u32(&self) -> u32 {
        self.run_ends.last().copied().unwrap_or(0)
    }

    fn run_start(&self, run: usize) -> u32 {
        if run == 0 { 0 } else { self.run_ends[run - 1] }
    }

    fn run_contains(&self, run: usize, index: u32) -> bool {
        run < self.run_ends.len() && self.run_start(run) <= index && index < self.run_ends[run]
    }

    /// The run holding frame `index`, which must be below the length.
    fn run_containing(&self, index: u32) -> usize {
        self.run_ends.partition_point(|&end| end <= index)
    }
}

impl FromIterator<FrameInput> for InputStream {
    fn from_iter<I: IntoIterator<Item = FrameInput>>(frames: I) -> InputStream {
        let mut stream = InputStream::new();
        stream.extend(frames);
        stream
    }
}

impl Extend<FrameInput> for InputStream {
    fn extend<I: IntoIterator<Item = FrameInput>>(&mut self, frames: I) {
        for frame in frames {
            self.push(frame);
        }
    }
}

/// The frames of an [`InputStream`] in order ([`InputStream::frames`]).
#[derive(Debug, Clone)]
pub struct Frames<'a> {
    stream: &'a InputStream,
    /// The run holding frame `next` (when `next` is below the length).
    run: usize,
    /// Index of the next frame to yield.
    next: u32,
}

impl Iterator for Frames<'_> {
    type Item = FrameInput;

    fn next(&mut self) -> Option<FrameInput> {
        if self.next >= self.stream.len_u32() {
            return None;
        }
        // Runs are never empty, so the next frame is in this run or the next one.
        if self.stream.run_ends[self.run] <= self.next {
            self.run += 1;
        }
        self.next += 1;
        Some(self.stream.run_inputs[self.run])
    }

    fn nth(&mut self, n: usize) -> Option<FrameInput> {
        let len = self.stream.len_u32();
        let skip = u32::try_from(n).unwrap_or(u32::MAX);
        self.next = self.next.saturating_add(skip).min(len);
        if self.next < len {
            self.run = self.stream.run_containing(self.next);
        }
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.stream.len_u32() - self.next) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Frames<'_> {}

impl FusedIterator for Frames<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::movie::ConsoleCommand;

    /// Frames with runs of lengths 1, 3, 2 and a reset in the middle of them.
    fn sample() -> Vec<FrameInput> {
        let a = FrameInput::buttons(1, 0);
        let b = FrameInput::buttons(0, 2);
        let reset = FrameInput { pads: [0, 2], command: ConsoleCommand::SoftReset };
        vec![a, b, b, b, reset, a]
    }

    #[test]
    fn identical_neighbours_share_a_run() {
        let stream = InputStream::from_frames(sample());
        let runs: Vec<(usize, usize)> = stream.runs().map(|run| (run.start, run.len)).collect();
        assert_eq!(runs, [(0, 1), (1, 3), (4, 1), (5, 1)]);
        assert_eq!(stream.len(), 6);
    }

    #[test]
    fn frame_answers_in_any_order_and_past_the_end() {
        let frames = sample();
        let stream = InputStream::from_frames(frames.clone());
        for order in [[0, 1, 2, 3, 4, 5], [5, 0, 4, 1, 3, 2], [3, 3, 5, 5, 0, 0]] {
            for index in order {
                assert_eq!(stream.frame(index), frames[index], "frame {index}");
            }
        }
        assert_eq!(stream.frame(6), FrameInput::default());
        assert_eq!(stream.frame(usize::MAX), FrameInput::default());
    }

    #[test]
    fn frames_iterates_skips_and_counts() {
        let frames = sample();
        let stream = InputStream::from_frames(frames.clone());
        assert!(stream.frames().eq(frames.iter().copied()));
        assert_eq!(stream.frames().len(), 6);
        for skip in 0..8 {
            assert!(stream.frames().skip(skip).eq(frames.iter().copied().skip(skip)), "skip {skip}");
        }
        let mut iter = stream.frames();
        assert_eq!(iter.nth(usize::MAX), None);
        assert_eq!(iter.next(), None);
    }

    #[test]
    fn truncate_keeps_a_prefix_and_stays_canonical() {
        let frames = sample();
        for len in 0..8 {
            let mut stream = InputStream::from_frames(frames.clone());
            stream.truncate(len);
            let expected: Vec<FrameInput> = frames.iter().copied().take(len).collect();
            assert!(stream.frames().eq(expected.iter().copied()), "len {len}");
            assert_eq!(stream, InputStream::from_frames(expected), "len {len}");
        }
    }

    #[test]
    fn slice_and_append_match_the_frames() {
        let frames = sample();
        let stream = InputStream::from_frames(frames.clone());
        for start in 0..8 {
            for end in 0..8usize {
                let expected: Vec<FrameInput> =
                    frames.iter().copied().skip(start).take(end.saturating_sub(start)).collect();
                let slice = stream.slice(start..end);
                assert_eq!(slice, InputStream::from_frames(expected.clone()), "{start}..{end}");
                let mut joined = stream.slice(0..start);
                joined.append(&stream.slice(start..frames.len()));
                assert_eq!(joined, stream, "split at {start}");
            }
        }
    }

    #[test]
    fn a_slice_of_billions_of_frames_costs_its_runs() {
        let mut stream = InputStream::new();
        stream.push_repeated(FrameInput::buttons(1, 0), MAX_FRAMES - 2);
        stream.push(FrameInput::buttons(2, 0));
        stream.push(FrameInput::buttons(1, 0));
        let tail = stream.slice(5..MAX_FRAMES);
        assert_eq!((tail.len(), tail.runs().len()), (MAX_FRAMES - 5, 3));
        assert_eq!(tail.frame(MAX_FRAMES - 7), FrameInput::buttons(2, 0));
        assert_eq!(tail.frame(MAX_FRAMES - 8), FrameInput::buttons(1, 0));
        let mut twice = tail.slice(0..3);
        twice.append(&tail.slice(0..3));
        assert_eq!((twice.len(), twice.runs().len()), (6, 1));
    }

    #[test]
    fn push_repeated_holds_billions_of_frames_in_one_run() {
        let mut stream = InputStream::new();
        stream.push_repeated(FrameInput::buttons(1, 0), MAX_FRAMES - 1);
        stream.push(FrameInput::buttons(1, 0));
        stream.push_repeated(FrameInput::buttons(2, 0), 0);
        assert_eq!((stream.len(), stream.runs().len()), (MAX_FRAMES, 1));
        assert_eq!(stream.frame(MAX_FRAMES - 1), FrameInput::buttons(1, 0));
    }

    #[test]
    #[should_panic(expected = "at most 2^32 - 1 frames")]
    fn a_frame_past_max_frames_is_refused() {
        let mut stream = InputStream::new();
        stream.push_repeated(FrameInput::default(), MAX_FRAMES);
        stream.push(FrameInput::default());
    }

    #[test]
    fn equality_ignores_where_the_last_read_was() {
        let stream = InputStream::from_frames(sample());
        let read = stream.clone();
        read.frame(5);
        assert_eq!(stream, read);
        assert_ne!(stream, InputStream::from_frames(sample()[1..].to_vec()));
    }
}
