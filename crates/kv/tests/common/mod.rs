//! What the runner's end-to-end tests share: a step's configuration with small,
//! fixed knobs, and a run of it outside any lifecycle.

use plumb_core::value::VerifyMode;
use plumb_core::Target;
use plumb_kv::{run_step, KeySpace, RunContext, StepConfig};
use plumb_runner::{NoProgress, StepOutcome};
use plumb_workloads::steps::parse_benchmarks;
use plumb_workloads::Distribution;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The db_bench step `step` as the `index`th of a run over `num` keys with `threads`
/// threads: 20-byte keys, 100-byte values, sampled verification, no warm-up.
pub fn cfg(step: &str, index: usize, num: u64, threads: usize) -> StepConfig {
    StepConfig {
        index,
        plan: parse_benchmarks(step).unwrap().remove(0),
        num,
        key_size: 20,
        value_size: 100,
        threads,
        duration: None,
        ops: None,
        warmup: Duration::ZERO,
        seed: 7,
        seek_nexts: 10,
        batch_size: 16,
        write_rate_mb: 1.0,
        distribution: Distribution::Uniform,
        verify: VerifyMode::Sample,
        pace: None,
        ycsb: Vec::new(),
        mix: None,
        mixgraph: Vec::new(),
        perf_groups: 0,
        perf_level: 2,
        clients: None,
    }
}

/// Runs one step on `target` with no device, no counters and no progress.
pub fn run(target: &dyn Target, c: &StepConfig, keys: &mut KeySpace) -> StepOutcome {
    let stop = AtomicBool::new(false);
    let ctx = RunContext {
        target,
        disk: None,
        hw: Err("test".into()),
        interrupt: &stop,
        progress: &NoProgress,
        profile: None,
    };
    run_step(&ctx, c, keys)
}
