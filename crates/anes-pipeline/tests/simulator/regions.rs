//! A pipeline's region: both workers run consoles of it, and a worker of another region is refused.

use anes_core::Region;

use super::*;

/// A PAL pipeline whose workers' `Load`s ask for `regions`.
fn pal_pipeline(seed: u64, regions: [Option<Region>; 2]) -> Sim {
    let settings = PipelineSettings { region: Some(Region::Pal), ..settings(RollbackPolicy::Immediate) };
    let mut sim = Sim::new(settings, seed);
    sim.load_regions = regions;
    // The first `Load`s were queued by `new`: they ask for the regions too.
    for (inbox, region) in sim.inbox.iter_mut().zip(regions) {
        for command in inbox.iter_mut() {
            if let WorkerCommand::Load { region: asked, .. } = command {
                *asked = region;
            }
        }
    }
    sim
}

#[test]
fn a_pal_pipeline_runs_pal_consoles_on_both_workers() {
    let mut sim = pal_pipeline(41, [Some(Region::Pal); 2]);
    sim.offer(100);
    sim.settle(Duration::from_secs(10));
    let status = sim.pipeline.status();
    assert_eq!(status.frames_verified, 100, "{:?}", status.workers);
    let (first, last) = (&sim.stored[1], sim.stored.last().expect("checkpoints stored"));
    // The snapshot header's region byte (offset 12): 1 is PAL.
    assert!(sim.stored.iter().all(|c| c.snapshot[12] == 1), "every checkpoint is of a PAL console");
    // 341 x 312 dots a frame at 3.2 dots a CPU cycle (nesdev "Cycle reference chart"): 33,247.5
    // CPU cycles; tiny_rom ends a frame at most 3 cycles late.
    let frames = last.seq - first.seq;
    let expected = frames * 341 * 312 * 5 / 16;
    assert!((last.cpu_cycle - first.cpu_cycle).abs_diff(expected) <= 4, "{first:?} .. {last:?}");
}

#[test]
fn a_worker_of_another_region_is_refused() {
    // Worker B's Load names no region: tiny_rom is iNES 1.0, so its console is NTSC.
    let mut sim = pal_pipeline(42, [Some(Region::Pal), None]);
    sim.offer(20);
    sim.settle(Duration::from_secs(5));
    let status = sim.pipeline.status();
    assert_eq!(status.frames_verified, 0, "nothing is verified against a worker of another region");
    let exit = status.workers[1].last_exit.clone().unwrap_or_default();
    assert_eq!(exit, "refused: its console region is ntsc, this pipeline's is pal");
    assert_eq!(status.workers[0].last_exit, None);
}
