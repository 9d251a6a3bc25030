//! What one step is asked to do, and what the runner knows about the keys that exist.

use plumb_core::value::VerifyMode;
use plumb_workloads::{steps::StepPlan, Distribution};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Everything a step needs, resolved from the command line and the sequence.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepConfig {
    /// Position in the run; part of every worker's seed.
    pub index: usize,
    /// Kind and stored name.
    pub plan: StepPlan,
    /// Key space size (db_bench's --num).
    pub num: u64,
    /// Bytes per key.
    pub key_size: usize,
    /// Bytes per value, its 8-byte header included.
    pub value_size: usize,
    /// Measured worker threads (readers, for *whilewriting).
    pub threads: usize,
    /// Stop after this long (whichever of duration and ops comes first).
    pub duration: Option<Duration>,
    /// Stop after this many measured ops in total across threads.
    pub ops: Option<u64>,
    /// Unmeasured time before the window opens (not for fills).
    pub warmup: Duration,
    /// The run's seed; workers derive their own from it.
    pub seed: u64,
    /// next() calls after each seek in range steps.
    pub seek_nexts: usize,
    /// Keys per multireadrandom call.
    pub batch_size: usize,
    /// The *whilewriting writer's rate, MiB/s of key + value.
    pub write_rate_mb: f64,
    /// Key distribution for non-fill steps.
    pub distribution: Distribution,
    /// What reads check.
    #[serde(default)]
    pub verify: VerifyMode,
    /// Open loop: the rate the measured threads are offered (each takes an equal
    /// share), each op timed from its intended start; `None` runs closed-loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<plumb_workloads::Pace>,
    /// YCSB properties over each YCSB phase's preset (`--ycsb NAME=VALUE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ycsb: Vec<(String, String)>,
    /// The `mix` step's file, as the run keeps it (name, text, hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<plumb_plan::ScriptSource>,
    /// db_bench mixgraph's parameters over its defaults (`--mixgraph NAME=VALUE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mixgraph: Vec<(String, String)>,
    /// Seconds per group of perf events counted in turn on plumb's own process over the
    /// window (`--perf-groups`); 0 counts none beyond the four hardware counters.
    #[serde(default)]
    pub perf_groups: u32,
    /// RocksDB's PerfContext level on each measured thread (`--perf-level`, db_bench's
    /// numbers); 1 or less counts nothing.
    #[serde(default = "rocksdb_default_level")]
    pub perf_level: u8,
    /// Closed loop whose running threads follow this profile (`threads` is its peak);
    /// `None` runs all `threads` throughout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<plumb_workloads::ThreadsProfile>,
}

impl StepConfig {
    /// The op quota across all threads: fills write --num keys; a sequence may fix a
    /// fraction of --num; otherwise --ops; `None` means run for the duration only.
    pub fn total_ops(&self) -> Option<u64> {
        if self.plan.kind.is_fill() || self.plan.kind == plumb_workloads::StepKind::ReadSeq {
            return Some(self.num);
        }
        if let Some(f) = self.plan.ops_fraction_of_num {
            return Some(((self.num as f64) * f).ceil().max(1.0) as u64);
        }
        self.ops
    }

    /// The ops measured thread `t` runs before it stops, so that the threads together
    /// run [`Self::total_ops`]: its [`Self::share`] of them, or no limit (`u64::MAX`)
    /// when the step runs for its duration only.
    pub fn thread_quota(&self, t: usize) -> u64 {
        self.total_ops().map_or(u64::MAX, |total| {
            let (lo, hi) = StepConfig::share(total, self.threads, t);
            hi - lo
        })
    }

    /// One thread's share of `total`: the first `total % threads` threads get one more.
    pub fn share(total: u64, threads: usize, t: usize) -> (u64, u64) {
        let threads = threads as u64;
        let t = t as u64;
        let base = total / threads;
        let rem = total % threads;
        let lo = t * base + t.min(rem);
        let len = base + u64::from(t < rem);
        (lo, lo + len)
    }
}

/// What the runner knows about which keys exist, carried from step to step so reads
/// know whether a missing key is an error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct KeySpace {
    /// Every key in 0..num was written and none deleted since.
    pub all_present: bool,
    /// Expected number of live keys, for space amplification.
    pub expected_live: f64,
    /// YCSB's records (its own keys): `ycsb-load` finished, so a read that misses one
    /// is an error.
    pub ycsb_loaded: bool,
    /// The first YCSB key no phase has inserted yet (`None`: right after the load's).
    pub ycsb_next: Option<i64>,
}

impl KeySpace {
    /// A fresh, empty database.
    pub fn empty() -> Self {
        KeySpace {
            all_present: false,
            expected_live: 0.0,
            ycsb_loaded: false,
            ycsb_next: None,
        }
    }

    /// An existing database of unknown history: keys may be missing legitimately.
    pub fn unknown(num: u64) -> Self {
        KeySpace {
            all_present: false,
            expected_live: num as f64,
            ycsb_loaded: false,
            ycsb_next: None,
        }
    }

    /// Updates the state after a step of `kind` completed `ops` ops over `num` keys.
    pub fn after(&mut self, kind: plumb_workloads::StepKind, ops: u64, num: u64, finished: bool) {
        use plumb_workloads::StepKind::*;
        let n = num as f64;
        match kind {
            FillSeq | FillUniqueRandom => {
                // Each op wrote a distinct key; a full pass covers the whole space.
                self.expected_live = self.expected_live.max(ops as f64).min(n);
                self.all_present = self.all_present || (finished && ops >= num);
            }
            FillRandom | Overwrite => {
                // Each uniform write misses a given absent key with p = 1 - 1/n.
                let absent = (n - self.expected_live).max(0.0);
                let still_absent = absent * (1.0 - 1.0 / n).powf(ops as f64);
                self.expected_live = n - still_absent;
            }
            DeleteRandom => {
                let live = self.expected_live * (1.0 - 1.0 / n).powf(ops as f64);
                self.expected_live = live;
                if ops > 0 {
                    self.all_present = false;
                }
            }
            _ => {}
        }
    }
}

/// RocksDB's own PerfContext level for configs stored before `perf_level` existed.
fn rocksdb_default_level() -> u8 {
    2
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_workloads::StepKind;

    #[test]
    fn shares_cover_the_range_exactly() {
        for (total, threads) in [(10, 3), (3, 4), (1_000_001, 7), (0, 2)] {
            let mut next = 0;
            for t in 0..threads {
                let (lo, hi) = StepConfig::share(total, threads, t);
                assert_eq!(lo, next);
                next = hi;
            }
            assert_eq!(next, total);
        }
    }

    #[test]
    fn key_space_follows_fills_and_deletes() {
        let mut k = KeySpace::empty();
        k.after(StepKind::FillSeq, 100, 100, true);
        assert!(k.all_present);
        assert_eq!(k.expected_live, 100.0);
        k.after(StepKind::DeleteRandom, 10, 100, true);
        assert!(!k.all_present);
        assert!(k.expected_live < 91.0 && k.expected_live > 89.0);

        let mut r = KeySpace::empty();
        r.after(StepKind::FillRandom, 1000, 1000, true);
        // 1 - 1/e of the keys are expected live.
        assert!((r.expected_live - 632.3).abs() < 1.0, "{}", r.expected_live);
        assert!(!r.all_present);

        let mut cut = KeySpace::empty();
        cut.after(StepKind::FillSeq, 50, 100, false);
        assert!(!cut.all_present);
    }
}
