//! GGRS sync tests on the demo ROM: thousands of frames with a rollback every frame and no desync,
//! and a deliberately broken load that GGRS must catch (so the first test can fail).

use anes_frontend::Console;
use anes_frontend::anes_core::movie::{ConsoleCommand, InputStream};
use anes_ggrs::{AnesConfig, PlayerInput, RollbackConsole};
use ggrs::{GgrsError, SessionBuilder, SyncTestSession};

fn repo_file(path: &str) -> Vec<u8> {
    std::fs::read(format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn setup(check_distance: usize) -> (RollbackConsole, SyncTestSession<AnesConfig>, InputStream) {
    let console = Console::with_config(&repo_file("roms/demo/demo.nes"), Default::default(), None).unwrap();
    let input = InputStream::from_bytes(&repo_file("roms/demo/demo.input")).unwrap();
    let session = SessionBuilder::<AnesConfig>::new()
        .with_num_players(2)
        .unwrap()
        .with_check_distance(check_distance)
        .start_synctest_session()
        .unwrap();
    (RollbackConsole::new(console), session, input)
}

fn add_inputs(session: &mut SyncTestSession<AnesConfig>, input: &InputStream, frame: usize) {
    session.add_local_input(0, PlayerInput::from_frame(input.frame(frame), 0)).unwrap();
    session.add_local_input(1, PlayerInput::from_frame(input.frame(frame), 1)).unwrap();
}

#[test]
fn thousands_of_frames_with_a_rollback_every_frame_and_no_desync() {
    const FRAMES: usize = 5000;
    const CHECK_DISTANCE: usize = 2;
    let (mut game, mut session, input) = setup(CHECK_DISTANCE);
    // The whole bundled stream, its soft reset included: rollbacks across a reset too.
    assert_eq!(input.len(), FRAMES);
    let resets = (0..FRAMES).filter(|&frame| input.frame(frame).command != ConsoleCommand::None).count();
    assert_eq!(resets, 1, "the demo stream has one soft reset");
    for frame in 0..FRAMES {
        add_inputs(&mut session, &input, frame);
        let requests = session.advance_frame().unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        game.handle_requests(requests).unwrap();
    }
    let rollbacks = (FRAMES - CHECK_DISTANCE - 1) as u64;
    assert_eq!(game.loads(), rollbacks, "a rollback every frame once the window is full");
    assert_eq!(game.frames_advanced(), FRAMES as u64 + rollbacks * CHECK_DISTANCE as u64);
    // The machine after all the rollbacks is the machine of a straight run.
    let mut straight =
        Console::with_config(&repo_file("roms/demo/demo.nes"), Default::default(), None).unwrap();
    for frame in 0..FRAMES {
        straight.run_frame(input.frame(frame));
    }
    assert_eq!(game.console().state_hash(), straight.state_hash());
}

#[test]
fn a_load_that_changes_the_machine_is_caught() {
    let (mut game, mut session, input) = setup(2);
    let mut error = None;
    for frame in 0..100 {
        add_inputs(&mut session, &input, frame);
        let requests = match session.advance_frame() {
            Ok(requests) => requests,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        for request in requests {
            match request {
                ggrs::GgrsRequest::SaveGameState { cell, frame } => game.save(&cell, frame).unwrap(),
                ggrs::GgrsRequest::LoadGameState { cell, frame } => {
                    game.load(&cell, frame).unwrap();
                    // A broken restore: one bit of work RAM not brought back.
                    game.console_mut().system_ram_mut()[0x0700] ^= 1;
                }
                ggrs::GgrsRequest::AdvanceFrame { inputs } => game.advance(&inputs).unwrap(),
            }
        }
    }
    assert!(
        matches!(error, Some(GgrsError::MismatchedChecksum { .. })),
        "GGRS must report the broken restore, got {error:?}"
    );
}
