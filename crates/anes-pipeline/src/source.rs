//! A recorded input stream replayed into a pipeline: once or in a loop, at the console's real-time
//! rate or as fast as the pipeline takes records. Plain arithmetic on the time it is given.

use std::sync::Arc;
use std::time::Duration;

use anes_core::movie::{FrameInput, InputStream};

/// The frames of a stream, in order (a plain slice is `Sync`, so one recording can feed any number of
/// pipeline threads).
pub fn stream_frames(stream: &InputStream) -> Vec<FrameInput> {
    (0..stream.len()).map(|i| stream.frame(i)).collect()
}

/// NTSC frames per second (master clock / 4 / 341 / 262 + the odd short frame): 60.0988.
pub const NTSC_FRAMES_PER_SECOND: f64 = 60.0988;

/// How fast a replay runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// `speed` × real time (1.0: the console's frame rate, 60.0988 frames per second for NTSC; see
    /// [`ReplaySource::at_frame_rate`]).
    RealTime {
        /// Multiple of real time.
        speed: f64,
    },
    /// As fast as the pipeline accepts records.
    Max,
}

/// A replay of a recorded stream.
#[derive(Debug, Clone)]
pub struct ReplaySource {
    stream: Arc<[FrameInput]>,
    looping: bool,
    pace: Pace,
    started_at: Option<Duration>,
    /// Records handed out so far.
    produced: u64,
    /// Records a previous run handed out ([`ReplaySource::skip`]): the real-time clock starts after
    /// them.
    skipped: u64,
    /// The console's frames per second: real time for [`Pace::RealTime`].
    frames_per_second: f64,
}

impl ReplaySource {
    /// A replay of `stream`, once or looping, at `pace`. The clock starts at the first call to
    /// [`ReplaySource::due`].
    pub fn new(stream: Arc<[FrameInput]>, looping: bool, pace: Pace) -> ReplaySource {
        ReplaySource {
            stream,
            looping,
            pace,
            started_at: None,
            produced: 0,
            skipped: 0,
            frames_per_second: NTSC_FRAMES_PER_SECOND,
        }
    }

    /// The replay's real time is `frames_per_second` (a PAL or Dendy console's 50.0070) instead of
    /// NTSC's 60.0988.
    pub fn at_frame_rate(mut self, frames_per_second: f64) -> ReplaySource {
        self.frames_per_second = frames_per_second;
        self
    }

    /// True when a once-only replay has handed out its last record (or the stream is empty).
    pub fn finished(&self) -> bool {
        self.stream.is_empty() || (!self.looping && self.produced >= self.stream.len() as u64)
    }

    /// Records due by `now` and not yet handed out (for [`Pace::Max`], `room`, the records the pipeline
    /// can take now).
    pub fn due(&mut self, now: Duration, room: u64) -> u64 {
        if self.finished() {
            return 0;
        }
        let started = *self.started_at.get_or_insert(now);
        let due = match self.pace {
            Pace::RealTime { speed } => {
                let total =
                    (now.saturating_sub(started).as_secs_f64() * self.frames_per_second * speed) as u64 + 1;
                (total + self.skipped).saturating_sub(self.produced)
            }
            Pace::Max => room,
        };
        let left = if self.looping { u64::MAX } else { self.stream.len() as u64 - self.produced };
        due.min(left)
    }

    /// The next record; call only while [`ReplaySource::due`] says one is due.
    pub fn next_record(&mut self) -> FrameInput {
        let len = self.stream.len().max(1) as u64;
        let input = self.stream.get((self.produced % len) as usize).copied().unwrap_or_default();
        self.produced += 1;
        input
    }

    /// When the next record falls due (for [`Pace::Max`], at once).
    pub fn next_due_at(&self) -> Option<Duration> {
        if self.finished() {
            return None;
        }
        match (self.pace, self.started_at) {
            (Pace::RealTime { speed }, Some(started)) => {
                let seconds =
                    self.produced.saturating_sub(self.skipped) as f64 / (self.frames_per_second * speed);
                Some(started + Duration::from_secs_f64(seconds))
            }
            _ => Some(Duration::ZERO),
        }
    }

    /// True for a [`Pace::RealTime`] replay.
    pub fn is_real_time(&self) -> bool {
        matches!(self.pace, Pace::RealTime { .. })
    }

    /// Continues after `n` records (a restart: the pipeline received that many before). The real-time
    /// clock counts from the next record, not from the stream's start: counting from the start would
    /// hold the replay back for as long as the previous run lasted.
    pub fn skip(&mut self, n: u64) {
        self.produced = n;
        self.skipped = n;
    }

    /// Takes back the last `n` records handed out (the pipeline could not store them).
    pub fn rewind(&mut self, n: u64) {
        self.produced = self.produced.saturating_sub(n);
    }

    /// Records handed out so far.
    pub fn produced(&self) -> u64 {
        self.produced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(n: usize) -> Arc<[FrameInput]> {
        let recorded = InputStream::from_frames((0..n).map(|i| FrameInput::buttons(i as u8, 0)).collect());
        stream_frames(&recorded).into()
    }

    #[test]
    fn real_time_pace_and_looping() {
        let mut source = ReplaySource::new(stream(3), true, Pace::RealTime { speed: 1.0 });
        let t0 = Duration::from_secs(100);
        assert_eq!(source.due(t0, 0), 1);
        let first = source.next_record();
        assert_eq!(first, FrameInput::buttons(0, 0));
        assert_eq!(source.due(t0 + Duration::from_secs(1), 0), 60, "60.0988 frames in a second");
        for _ in 0..60 {
            source.next_record();
        }
        assert_eq!(source.produced(), 61);
        let next = source.next_due_at().unwrap() - t0;
        assert!((next.as_secs_f64() - 61.0 / NTSC_FRAMES_PER_SECOND).abs() < 1e-6);
        assert_eq!(source.next_record(), FrameInput::buttons(1, 0), "61 % 3 == 1: it loops");
    }

    /// A restarted service continues its replay where the previous run stopped; the real-time pace
    /// restarts with it, so the first record is due at once (not after as long as the previous run).
    #[test]
    fn a_skipped_real_time_replay_continues_at_once_and_at_pace() {
        let mut source = ReplaySource::new(stream(3), true, Pace::RealTime { speed: 1.0 });
        // The previous run lasted 20 s: 1,202 records.
        source.skip(1202);
        let t0 = Duration::from_secs(7);
        assert_eq!(source.due(t0, 0), 1, "the next record is due at start");
        assert_eq!(source.next_record(), FrameInput::buttons((1202 % 3) as u8, 0));
        assert_eq!(source.next_due_at(), Some(t0 + Duration::from_secs_f64(1.0 / NTSC_FRAMES_PER_SECOND)));
        assert_eq!(source.due(t0 + Duration::from_secs(1), 0), 60, "then 60.0988 a second");
    }

    #[test]
    fn a_pal_replay_runs_at_50_frames_a_second() {
        // nesdev "Clock rate": a PAL frame is 341 x 312 dots of 5 master clocks at 26.6017125 MHz.
        let pal = 26_601_712.5 / (5.0 * 341.0 * 312.0);
        let mut source = ReplaySource::new(stream(3), true, Pace::RealTime { speed: 1.0 }).at_frame_rate(pal);
        let t0 = Duration::from_secs(3);
        assert_eq!(source.due(t0, 0), 1);
        source.next_record();
        // 50.007 frames a second: 500 in 10 s, and the first, due at once.
        assert_eq!(source.due(t0 + Duration::from_secs(10), 0), 500);
        let next = source.next_due_at().unwrap() - t0;
        assert!((next.as_secs_f64() - 1.0 / 50.007).abs() < 1e-5, "{next:?}");
    }

    #[test]
    fn once_stops_and_max_fills_the_room() {
        let mut source = ReplaySource::new(stream(5), false, Pace::Max);
        assert_eq!(source.due(Duration::ZERO, 3), 3);
        for _ in 0..3 {
            source.next_record();
        }
        assert_eq!(source.due(Duration::ZERO, 100), 2);
        source.next_record();
        source.next_record();
        assert!(source.finished());
        assert_eq!(source.due(Duration::ZERO, 100), 0);
        assert_eq!(source.next_due_at(), None);
    }
}
