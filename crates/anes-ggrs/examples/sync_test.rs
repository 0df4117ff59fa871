//! A GGRS `SyncTestSession` on the bundled demo ROM with its bundled input stream: every frame GGRS
//! rolls back `CHECK_DISTANCE` frames, re-runs them and compares the checksums (the state hash) with
//! the first run's. Any difference is a desync. At the end the machine is also compared with a
//! straight run of the same inputs, without GGRS.
//!
//! `cargo run --release -p anes-ggrs --example sync_test -- [FRAMES] [CHECK_DISTANCE]`
//! (defaults 5000 and 7; the check distance must be 2-7: GGRS's prediction window is 8).

use anes_frontend::Console;
use anes_frontend::anes_core::movie::InputStream;
use anes_ggrs::{AnesConfig, PlayerInput, RollbackConsole};
use ggrs::{GgrsError, SessionBuilder};

const ROM: &[u8] = include_bytes!("../../../roms/demo/demo.nes");
const INPUT: &[u8] = include_bytes!("../../../roms/demo/demo.input");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let frames: usize = args.next().map_or(Ok(5000), |a| a.parse())?;
    let check_distance: usize = args.next().map_or(Ok(7), |a| a.parse())?;
    let input = InputStream::from_bytes(INPUT)?;
    let console = Console::with_config(ROM, Default::default(), None)?;
    let mut game = RollbackConsole::new(console);
    let mut session = SessionBuilder::<AnesConfig>::new()
        .with_num_players(2)?
        .with_check_distance(check_distance)
        .start_synctest_session()?;
    let start = std::time::Instant::now();
    for frame in 0..frames {
        session.add_local_input(0, PlayerInput::from_frame(input.frame(frame), 0))?;
        session.add_local_input(1, PlayerInput::from_frame(input.frame(frame), 1))?;
        match session.advance_frame() {
            Ok(requests) => game.handle_requests(requests)?,
            Err(GgrsError::MismatchedChecksum { current_frame, mismatched_frames }) => {
                return Err(
                    format!("DESYNC at frame {current_frame}: frames {mismatched_frames:?} differ").into()
                );
            }
            Err(other) => return Err(other.into()),
        }
    }
    let mut straight = Console::with_config(ROM, Default::default(), None)?;
    for frame in 0..frames {
        straight.run_frame(input.frame(frame));
    }
    let same = straight.state_hash() == game.console().state_hash();
    println!(
        "{frames} frames, check distance {check_distance}: {} rollbacks, {} frames run in all, {:.1} s",
        game.loads(),
        game.frames_advanced(),
        start.elapsed().as_secs_f64()
    );
    println!("final state hash {}", game.console().state_hash());
    if !same {
        return Err(format!(
            "the rolled-back machine differs from a straight run ({})",
            straight.state_hash()
        )
        .into());
    }
    println!("no desync; the final machine equals a straight run of the same inputs");
    Ok(())
}
