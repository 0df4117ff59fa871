//! Helpers the operations benches share (each bench uses its own subset).

#![allow(dead_code)]

pub mod push;
