//! The most bytes each kind of file the runner reads may hold, so a file in the wrong place is refused
//! instead of read until memory runs out (reads go through `anes_fs::read_capped`, which also refuses
//! FIFOs, directories and devices).

/// The largest manifest read: 1 MiB (the shared manifest of 88 ROMs is 31 KiB).
pub const MAX_MANIFEST_LEN: usize = 1 << 20;
/// The largest baseline read: 1 MiB (a line per ROM).
pub const MAX_BASELINE_LEN: usize = 1 << 20;
/// The largest golden trace log read: 16 MiB (nestest.log is 839 KiB).
pub const MAX_LOG_LEN: usize = 16 << 20;
