//! System and engine counters read at window boundaries: once at the start, once a
//! second, once at the end. Everything here is read by the sampler thread, never by a
//! worker.

use plumb_core::{EngineStats, Target};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::{DeviceStats, DiskCounters};
use plumb_probes::perf::{HwCounterGroup, HwReading};
use plumb_probes::process::{self, ProcessCounters};
use std::time::Instant;

/// Counters at one instant.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Snapshot {
    pub(crate) at: Instant,
    pub(crate) process: ProcessCounters,
    /// The whole machine's CPU by state, for the host's noise beside `process`.
    pub(crate) machine: Option<Reading>,
    pub(crate) disk: Option<DiskCounters>,
    pub(crate) engine: EngineStats,
    pub(crate) rss: Option<u64>,
    pub(crate) hw: Option<HwReading>,
}

/// Takes snapshots of the counters a step needs.
pub(crate) struct Sampler<'a> {
    pub(crate) target: &'a dyn Target,
    pub(crate) disk: Option<&'a DeviceStats>,
    pub(crate) hw: Option<&'a HwCounterGroup>,
}

impl Sampler<'_> {
    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot {
            at: Instant::now(),
            process: process::self_counters(),
            machine: cpustat::read().ok(),
            disk: self.disk.and_then(|d| d.read().ok()),
            engine: self.target.stats(),
            rss: process::self_rss_bytes(),
            hw: self.hw.map(|h| h.read()),
        }
    }
}

/// The host's noise between two snapshots: an embedded engine runs in plumb's
/// process, so everything else busy on the machine is outside.
pub(crate) fn noise(earlier: &Snapshot, later: &Snapshot) -> crate::metrics::HostNoise {
    crate::metrics::host_noise(
        earlier.machine.as_ref(),
        later.machine.as_ref(),
        later.process.delta(&earlier.process).cpu_us(),
        Some(0),
    )
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
    }
}
