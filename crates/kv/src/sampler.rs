//! What the key-value family reads beside the kernel's counters at each mark: the
//! engine's statistics, resident memory and hardware counters; and, at the window's
//! ends only, the LSM's account and a CPU profile. Everything here is read by the
//! sampler thread, never by a worker.

use plumb_core::{EngineStats, LsmAccount, Target};
use plumb_probes::perf::{HwCounterGroup, HwReading};
use plumb_probes::perfwindow::PerfWindow;
use plumb_probes::process;
use plumb_probes::profile::Profiling;
use plumb_probes::profile::Recording;
use plumb_runner::kernel::{Gauge, Mark};

/// A key-value step's mark.
pub(crate) type Snapshot = Mark<KvReading>;

/// The engine's side of a mark.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KvReading {
    pub(crate) engine: EngineStats,
    pub(crate) rss: Option<u64>,
    pub(crate) hw: Option<HwReading>,
}

/// Reads a key-value step's counters.
pub(crate) struct KvGauge<'a> {
    pub(crate) target: &'a dyn Target,
    pub(crate) hw: Option<&'a HwCounterGroup>,
    /// Where a CPU profile of the window goes and the step's index (its name there).
    pub(crate) profile: Option<(Profiling<'a>, usize)>,
    recording: Option<Result<Recording, String>>,
    /// The LSM's account at the window's start and end (never per second).
    pub(crate) lsm: [Option<LsmAccount>; 2],
    /// The window's CPU profile (folded stacks), when asked for, or why there is none.
    pub(crate) profiled: Option<Result<String, String>>,
    /// perf stat of plumb's own process, its groups in turn (`--perf-groups`), every
    /// event perf has where `hw` reads four (a run that asks for groups leaves `hw`
    /// closed, so the groups have the counters to themselves); `None` when not asked.
    pub(crate) perf: Option<PerfWindow>,
    /// The step's index, for perf's file names.
    index: usize,
}

impl<'a> KvGauge<'a> {
    /// A gauge of `target` and `hw` for the step at `index`, profiling into `profile`
    /// when given, and counting perf's events in groups of `perf_groups` seconds when
    /// above 0.
    pub(crate) fn new(
        target: &'a dyn Target,
        hw: Option<&'a HwCounterGroup>,
        index: usize,
        profile: Option<Profiling<'a>>,
        perf_groups: u32,
    ) -> Self {
        KvGauge {
            target,
            hw,
            profile: profile.map(|p| (p, index)),
            recording: None,
            lsm: [None, None],
            profiled: None,
            perf: (perf_groups > 0).then(|| PerfWindow::new(perf_groups)),
            index,
        }
    }
}

impl Gauge for KvGauge<'_> {
    type Reading = KvReading;

    fn read(&mut self) -> KvReading {
        if let Some(p) = &mut self.perf {
            p.mark();
        }
        KvReading {
            engine: self.target.stats(),
            rss: process::self_rss_bytes(),
            hw: self.hw.map(|h| h.read()),
        }
    }

    fn opened(&mut self) {
        self.recording = self.profile.map(|(p, index)| {
            plumb_probes::profile::start(p, &[std::process::id()], &format!("step{index}"))
        });
        self.lsm[0] = self.target.lsm();
        if let Some(p) = &mut self.perf {
            let me = std::process::id();
            p.open(&[me], &format!("plumb-{me}-kvstep{}", self.index));
        }
    }

    fn closed(&mut self) {
        self.lsm[1] = self.target.lsm();
        self.profiled = self.recording.take().map(|r| r.and_then(|r| r.stop()));
        if let Some(p) = &mut self.perf {
            p.close();
        }
    }
}

/// `later - earlier` for an optional counter; `None` if either side is missing.
pub(crate) fn delta(later: Option<u64>, earlier: Option<u64>) -> Option<u64> {
    Some(later?.saturating_sub(earlier?))
}

/// Engine counter deltas between two snapshots.
pub(crate) fn engine_delta(later: &EngineStats, earlier: &EngineStats) -> EngineStats {
    EngineStats {
        ingest_bytes: delta(later.ingest_bytes, earlier.ingest_bytes),
        flush_write_bytes: delta(later.flush_write_bytes, earlier.flush_write_bytes),
        compact_write_bytes: delta(later.compact_write_bytes, earlier.compact_write_bytes),
        compact_read_bytes: delta(later.compact_read_bytes, earlier.compact_read_bytes),
        stall_micros: delta(later.stall_micros, earlier.stall_micros),
        pending_compaction_bytes: later.pending_compaction_bytes,
        used_bytes: later.used_bytes,
        stall_limits: later.stall_limits,
    }
}
