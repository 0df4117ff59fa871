//! What the binary carries: the demo ROM and its input stream, the default of `lockstep`, `shrink`,
//! `run`, `serve` and `canary`.

/// The bundled demo ROM (roms/demo/demo.nes).
pub const DEMO_ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
/// Its bundled 5,000-frame input stream (roms/demo/demo.input).
pub const DEMO_INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");
