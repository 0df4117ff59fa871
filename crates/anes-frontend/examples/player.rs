//! A minimal windowed player: `cargo run --release -p anes-frontend --features player --example player
//! -- ROM.nes [PALETTE.pal]`.
//!
//! Arrows: D-pad; X: A; Z: B; Enter: Start; Right Shift: Select; F5 / F7: save / load a snapshot in
//! memory; F2: reset; Escape: quit. Pad 1 only. A battery save is read from and written to `ROM.sav`
//! beside the ROM (written when the battery RAM changed, at exit).
//!
//! Audio/video sync: frames are paced by the clock at 60.0988 per second and the audio rate is
//! nudged every frame so the device's queue stays near three frames (the on-the-fly rate of
//! `Console::set_audio_rate`).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anes_frontend::anes_core::input::buttons;
use anes_frontend::anes_core::movie::FrameInput;
use anes_frontend::{Console, FRAMES_PER_SECOND, Overscan, Palette, PixelFormat};
use cpal::traits::{DeviceTrait, HostTrait, StreamTrait};
use minifb::{Key, KeyRepeat, Scale, Window, WindowOptions};

/// Frames of audio the device queue should hold.
const TARGET_QUEUE_FRAMES: f64 = 3.0;

type Queue = Arc<Mutex<VecDeque<i16>>>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let rom_path = PathBuf::from(args.next().ok_or("usage: player ROM.nes [PALETTE.pal]")?);
    let rom = std::fs::read(&rom_path).map_err(|e| format!("{}: {e}", rom_path.display()))?;
    let mut console = Console::new(&rom)?;
    if let Some(palette) = args.next() {
        console.set_palette(Palette::load(palette.as_ref())?);
    }
    let save_path = rom_path.with_extension("sav");
    if console.battery_ram().is_some() {
        if let Ok(save) = std::fs::read(&save_path) {
            console.load_battery_ram(&save)?;
        }
    }

    let queue: Queue = Arc::new(Mutex::new(VecDeque::with_capacity(48_000)));
    let (stream, device_rate) = match open_audio(queue.clone()) {
        Ok((stream, rate)) => (Some(stream), rate),
        Err(why) => {
            eprintln!("no audio: {why}");
            (None, 48_000.0)
        }
    };
    console.set_audio_rate(Some(device_rate))?;

    let crop = Overscan::NTSC_TV;
    let (width, height) = crop.visible_size();
    let mut window = Window::new(
        "anes",
        width as usize,
        height as usize,
        WindowOptions { scale: Scale::X2, ..WindowOptions::default() },
    )?;
    let mut picture = vec![0u32; (width * height) as usize];
    let mut picture_bytes = vec![0u8; picture.len() * 4];
    let mut snapshot = vec![0u8; console.snapshot_len()];
    let mut have_snapshot = false;
    let frame_time = Duration::from_secs_f64(1.0 / FRAMES_PER_SECOND);
    let mut next_frame = Instant::now();

    while window.is_open() && !window.is_key_down(Key::Escape) {
        if window.is_key_pressed(Key::F5, KeyRepeat::No) {
            console.save_state_into(&mut snapshot)?;
            have_snapshot = true;
        }
        if window.is_key_pressed(Key::F7, KeyRepeat::No) && have_snapshot {
            console.load_state(&snapshot)?;
        }
        if window.is_key_pressed(Key::F2, KeyRepeat::No) {
            console.reset();
        }
        let held = |key, bit| if window.is_key_down(key) { bit } else { 0 };
        let pad = held(Key::X, buttons::A)
            | held(Key::Z, buttons::B)
            | held(Key::RightShift, buttons::SELECT)
            | held(Key::Enter, buttons::START)
            | held(Key::Up, buttons::UP)
            | held(Key::Down, buttons::DOWN)
            | held(Key::Left, buttons::LEFT)
            | held(Key::Right, buttons::RIGHT);
        console.run_frame(FrameInput { pads: [pad, 0], ..FrameInput::default() });

        if stream.is_some() {
            let mut queue = queue.lock().map_err(|_| "audio thread panicked")?;
            queue.extend(console.audio());
            // Nudge the rate toward the target queue length (at most 0.5% either way).
            let queued_frames = queue.len() as f64 / 2.0 / (device_rate / FRAMES_PER_SECOND);
            let error = (TARGET_QUEUE_FRAMES - queued_frames) / TARGET_QUEUE_FRAMES;
            console.set_audio_rate(Some(device_rate * (1.0 + 0.005 * error.clamp(-1.0, 1.0))))?;
        }

        console.write_picture(PixelFormat::Xrgb8888, crop, &mut picture_bytes)?;
        for (word, bytes) in picture.iter_mut().zip(picture_bytes.chunks_exact(4)) {
            *word = u32::from_ne_bytes(bytes.try_into().expect("4 bytes"));
        }
        window.update_with_buffer(&picture, width as usize, height as usize)?;

        next_frame += frame_time;
        let now = Instant::now();
        if next_frame > now {
            std::thread::sleep(next_frame - now);
        } else {
            next_frame = now;
        }
    }
    drop(stream);
    if console.battery_ram_dirty() {
        if let Some(ram) = console.battery_ram() {
            std::fs::write(&save_path, ram).map_err(|e| format!("{}: {e}", save_path.display()))?;
        }
    }
    Ok(())
}

/// Opens the default output device; its callback plays the queue (silence when it runs dry).
fn open_audio(queue: Queue) -> Result<(cpal::Stream, f64), Box<dyn std::error::Error>> {
    let device = cpal::default_host().default_output_device().ok_or("no output device")?;
    let config = device.default_output_config()?;
    let channels = usize::from(config.channels());
    let rate = f64::from(config.sample_rate().0);
    let error = |e| eprintln!("audio: {e}");
    let stream = match config.sample_format() {
        cpal::SampleFormat::I16 => device.build_output_stream(
            &config.into(),
            move |out: &mut [i16], _| play(&queue, out, channels, |s| s),
            error,
            None,
        )?,
        cpal::SampleFormat::F32 => device.build_output_stream(
            &config.into(),
            move |out: &mut [f32], _| play(&queue, out, channels, |s| f32::from(s) / 32768.0),
            error,
            None,
        )?,
        other => return Err(format!("unsupported sample format {other:?}").into()),
    };
    stream.play()?;
    Ok((stream, rate))
}

fn play<T: Copy + Default>(queue: &Queue, out: &mut [T], channels: usize, convert: impl Fn(i16) -> T) {
    let Ok(mut queue) = queue.lock() else { return };
    for frame in out.chunks_mut(channels) {
        let left = queue.pop_front().unwrap_or(0);
        let right = queue.pop_front().unwrap_or(left);
        for (channel, sample) in frame.iter_mut().enumerate() {
            *sample = match channel {
                0 => convert(left),
                1 => convert(right),
                _ => T::default(),
            };
        }
    }
}
