//! The frontend path allocates nothing per frame: running with audio, adjusting the audio rate,
//! converting the picture in every format, saving into and loading from a fixed buffer (Game Genie
//! codes included), checking the battery RAM. Proven with a counting global allocator.

use anes_frontend::anes_core::movie::InputStream;
use anes_frontend::{Console, GameGenieCode, Overscan, PixelFormat};

#[global_allocator]
static GLOBAL: anes_alloc_count::Counting = anes_alloc_count::Counting;

fn allocations() -> u64 {
    anes_alloc_count::thread_allocations()
}

fn repo_file(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn the_frontend_path_allocates_nothing_per_frame() {
    let input = InputStream::from_bytes(&repo_file("roms/demo/demo.input")).unwrap();
    let mut console = Console::new(&repo_file("roms/demo/demo.nes")).unwrap();
    let mut rgba = vec![0u8; 256 * 240 * 4];
    let mut xrgb = vec![0u8; 256 * 240 * 4];
    let mut rgb565 = vec![0u8; 256 * 240 * 2];
    let mut state = vec![0u8; console.snapshot_len()];
    let reset = u16::from_le_bytes([console.nes().peek(0xFFFC), console.nes().peek(0xFFFD)]);
    let code = GameGenieCode { address: reset, value: 0xEA, compare: Some(0x00) };
    console.run_frame(input.frame(0));
    let before = allocations();
    let mut samples = 0;
    for i in 1..600 {
        console.run_frame(input.frame(i));
        samples += console.audio().len();
        // A frontend keeping audio in sync nudges the rate every frame.
        let nudge = 1.0 + 0.004 * ((i % 7) as f64 - 3.0) / 3.0;
        console.set_audio_rate(Some(48_000.0 * nudge)).unwrap();
        console.write_picture(PixelFormat::Rgba8888, Overscan::NONE, &mut rgba).unwrap();
        console.write_picture(PixelFormat::Xrgb8888, Overscan::NTSC_TV, &mut xrgb).unwrap();
        console.write_picture(PixelFormat::Rgb565, Overscan::NTSC_TV, &mut rgb565).unwrap();
        std::hint::black_box(console.battery_ram_dirty());
        std::hint::black_box(console.system_ram()[0]);
        if i % 50 == 0 {
            console.save_state_into(&mut state).unwrap();
            // Loading across a change of codes: the codes come back with the snapshot.
            console.set_game_genie_codes(&[code]).unwrap();
            console.load_state(&state).unwrap();
            std::hint::black_box(console.state_hash());
        }
    }
    let count = allocations() - before;
    assert_eq!(count, 0, "{count} heap allocations in 599 frames");
    assert!(samples > 599 * 2 * 790, "{samples} samples");
}
