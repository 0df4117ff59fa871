//! The peer group's machinery: a minimal libretro host ([`libretro`]) that runs Nestopia's libretro
//! core ([`nestopia`]) for the peer benchmark (`benches/peer_group.rs`), the host instructions per
//! frame (`examples/libretro_frames.rs`, `instructions-per-frame.sh`) and the peer conformance
//! table (`examples/conformance.rs`), beside anes and tetanes-core.

pub mod libretro;
pub mod nestopia;
