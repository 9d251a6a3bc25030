//! The formulas of DESIGN.md's metric table, as pure functions of counter deltas, so
//! each is tested on its own.

use plumb_core::{DeviceIo, EngineStats, Interval, OpLatency};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::DiskCounters;
use plumb_probes::process::ProcessCounters;

/// Bytes in the GB plumb reports (RocksDB's stats use 2^30 too).
pub const GB: f64 = (1u64 << 30) as f64;

/// `x / ops`, or `None` when there were no ops or no figure.
pub fn per_op(x: Option<f64>, ops: u64) -> Option<f64> {
    if ops == 0 {
        return None;
    }
    x.map(|v| v / ops as f64)
}

/// Device per-op figures: (rd_op, rkb_op, wr_op, wkb_op).
pub fn disk_per_op(d: Option<&DiskCounters>, ops: u64) -> [Option<f64>; 4] {
    match d {
        Some(d) => [
            per_op(Some(d.reads as f64), ops),
            per_op(Some(d.read_kb()), ops),
            per_op(Some(d.writes as f64), ops),
            per_op(Some(d.written_kb()), ops),
        ],
        None => [None; 4],
    }
}

/// The process's CPU per op, (user + system, user, system) µs: `cpu_us_op`, `usr_us_op`
/// and `sys_us_op`.
pub fn cpu_per_op(p: &ProcessCounters, ops: u64) -> [Option<f64>; 3] {
    [
        per_op(Some(p.cpu_us() as f64), ops),
        per_op(Some(p.user_us as f64), ops),
        per_op(Some(p.system_us as f64), ops),
    ]
}

/// The device over a window of `secs` as `iostat -x` shows it, from the counters' delta
/// over it ([`DiskCounters::device_io`] has the formulas); `None` without a device.
pub fn device_io(d: Option<&DiskCounters>, secs: f64) -> Option<DeviceIo> {
    d.and_then(|d| d.device_io(secs))
}

/// Device write amplification: device bytes written / user bytes written.
pub fn device_w_amp(d: Option<&DiskCounters>, user_bytes_written: u64) -> Option<f64> {
    if user_bytes_written == 0 {
        return None;
    }
    d.map(|d| d.written_bytes() as f64 / user_bytes_written as f64)
}

/// The engine's write amplification: (flush + compaction bytes written) / ingest, from
/// whichever of the two the engine reports (a B-tree such as WiredTiger reports all its
/// file writes as one figure, in `flush_write_bytes`).
pub fn engine_w_amp(e: &EngineStats) -> Option<f64> {
    let ingest = e.ingest_bytes?;
    if ingest == 0 || (e.flush_write_bytes.is_none() && e.compact_write_bytes.is_none()) {
        return None;
    }
    let written = e.flush_write_bytes.unwrap_or(0) + e.compact_write_bytes.unwrap_or(0);
    Some(written as f64 / ingest as f64)
}

/// Percent of a window of `secs` that writers were stalled.
pub fn stall_pct(e: &EngineStats, secs: f64) -> Option<f64> {
    if secs <= 0.0 {
        return None;
    }
    Some(e.stall_micros? as f64 / (secs * 1e6) * 100.0)
}

/// What the host did beside the measured processes over a window: the figures that
/// tell a result moved by the engine from one moved by a neighbour.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HostNoise {
    /// Steal, percent of the machine's CPU time ([`plumb_core::StepSummary::steal_pct`]).
    pub steal_pct: Option<f64>,
    /// Other processes' CPU, percent of the machine's capacity
    /// ([`plumb_core::StepSummary::outside_cpu_pct`]).
    pub outside_cpu_pct: Option<f64>,
}

/// The host's noise over a window, from the machine's `/proc/stat` readings at its
/// ends, plumb's own CPU in it (`ours_us`, getrusage) and the server's (`server_us`:
/// `Some(0)` for an embedded engine, which runs in plumb's process, `None` when the
/// server's processes were not read, so nothing can be called outside).
///
/// Over the window's capacity (its length × the online CPUs): steal% = steal /
/// capacity × 100, outside% = (busy − ours − server) / capacity × 100, where busy is
/// the capacity less idle, iowait and steal ([`cpustat::Window::busy_us`] says why not
/// user + system …). Interrupt time counts as outside: the kernel does not charge it to
/// a process. `/proc/stat` counts in 10 ms ticks per CPU, so a window's figures are good
/// to a tick or two per CPU (±1% over a second on 2 CPUs); a negative outside load
/// (ours read finer than the ticks) is 0. A window of less than
/// [`plumb_core::NOISE_MIN_CPU_SECS`] of machine time has neither figure: its ticks are
/// too few to say.
pub fn host_noise(
    earlier: Option<&Reading>,
    later: Option<&Reading>,
    ours_us: u64,
    server_us: Option<u64>,
) -> HostNoise {
    let Some(w) = later.zip(earlier).map(|(b, a)| b.since(a)) else {
        return HostNoise::default();
    };
    if w.capacity_us < plumb_core::NOISE_MIN_CPU_SECS * 1e6 {
        return HostNoise::default();
    }
    HostNoise {
        steal_pct: Some(100.0 * cpustat::ticks_to_us(w.times.steal) as f64 / w.capacity_us),
        outside_cpu_pct: server_us.map(|srv| {
            let outside = w.busy_us() - ours_us as f64 - srv as f64;
            (100.0 * outside / w.capacity_us).clamp(0.0, 100.0)
        }),
    }
}

/// One second of a step from its window: `t` and `secs` in seconds, `ops` and their
/// histogram, the process's CPU over it and the device's counters (their delta, also
/// shown as `iostat -x` would over the interval) and the host's noise in it; the
/// engine-only figures (stall, RSS) are left for the caller.
pub fn interval(
    t: f64,
    secs: f64,
    ops: u64,
    h: &crate::LatencyHistogram,
    cpu_us: u64,
    disk: Option<DiskCounters>,
    noise: HostNoise,
) -> Interval {
    Interval {
        t,
        secs,
        ops,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        p50_us: h.quantile_us(0.5),
        p99_us: h.quantile_us(0.99),
        pmax_us: h.max_us(),
        cpu_us: Some(cpu_us as f64),
        rd: disk.map(|d| d.reads),
        rkb: disk.map(|d| d.read_kb()),
        wr: disk.map(|d| d.writes),
        wkb: disk.map(|d| d.written_kb()),
        device: device_io(disk.as_ref(), secs),
        stall_us: None,
        rss_gb: None,
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        target_ops_sec: None,
        threads: None,
    }
}

/// Whether the series ends in a closing sliver with nothing in it: an artefact of
/// stopping, not a second, to be dropped.
pub fn empty_tail(intervals: &[Interval]) -> bool {
    intervals.len() > 1
        && intervals
            .last()
            .is_some_and(|i| i.ops == 0 && i.secs < 0.05)
}

/// Latency per kind of operation, by name, for the kinds that ran: what is stored for a
/// step that times kinds apart (`classes[i]` names `hists[i]`).
pub fn by_op(
    classes: &[&str],
    hists: &[crate::LatencyHistogram],
) -> std::collections::BTreeMap<String, OpLatency> {
    classes
        .iter()
        .zip(hists)
        .filter(|(_, h)| h.count() > 0)
        .map(|(name, h)| (name.to_string(), h.op_latency()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_op_and_disk_figures() {
        let d = DiskCounters {
            reads: 10,
            sectors_read: 80, // 40 KB
            writes: 5,
            sectors_written: 2048, // 1 MiB
            read_ms: 25,
            write_ms: 40,
            io_ms: 50,
            queue_ms: 70,
            times_known: true,
            flushes: Some(3),
        };
        let [rd, rkb, wr, wkb] = disk_per_op(Some(&d), 10);
        assert_eq!(
            (rd, rkb, wr, wkb),
            (Some(1.0), Some(4.0), Some(0.5), Some(102.4))
        );
        assert_eq!(disk_per_op(None, 10), [None; 4]);
        assert_eq!(per_op(Some(1.0), 0), None);
        // 1 MiB on the device for 256 KiB of user writes is 4x.
        assert_eq!(device_w_amp(Some(&d), 256 * 1024), Some(4.0));
        assert_eq!(device_w_amp(Some(&d), 0), None);
        // Over 0.5 s: 20 reads/s of 4 KiB, 2.5 ms each; 10 writes/s of 204.8 KiB, 8 ms
        // each; busy 50 ms of 500 (10%), 70 ms of request time (0.14 queued).
        let io = device_io(Some(&d), 0.5).unwrap();
        assert_eq!((io.r_s, io.w_s), (20.0, 10.0));
        assert_eq!(io.wmb_s, 2.0);
        assert_eq!((io.r_await_ms, io.rareq_kb), (Some(2.5), Some(4.0)));
        assert_eq!((io.w_await_ms, io.wareq_kb), (Some(8.0), Some(204.8)));
        assert_eq!((io.util_pct, io.aqu_sz), (Some(10.0), Some(0.14)));
        assert_eq!(device_io(None, 1.0), None);
        assert_eq!(device_io(Some(&d), 0.0), None);
    }

    #[test]
    fn cpu_split_per_op() {
        let p = ProcessCounters {
            user_us: 300,
            system_us: 100,
            ..ProcessCounters::default()
        };
        assert_eq!(cpu_per_op(&p, 100), [Some(4.0), Some(3.0), Some(1.0)]);
        assert_eq!(cpu_per_op(&p, 0), [None; 3]);
    }

    #[test]
    fn interval_carries_the_device() {
        let h = crate::LatencyHistogram::new();
        let d = DiskCounters {
            reads: 100,
            sectors_read: 800,
            io_ms: 250,
            times_known: true,
            ..DiskCounters::default()
        };
        let i = interval(2.0, 0.5, 10, &h, 7, Some(d), HostNoise::default());
        let io = i.device.unwrap();
        assert_eq!((i.rd, io.r_s, io.util_pct), (Some(100), 200.0, Some(50.0)));
        assert_eq!(io.r_await_ms, Some(0.0));
        assert_eq!(io.w_await_ms, None);
        assert_eq!(
            interval(2.0, 0.5, 10, &h, 7, None, HostNoise::default()).device,
            None
        );
    }

    #[test]
    fn host_noise_is_steal_and_what_others_used() {
        use plumb_probes::cpustat::CpuTimes;
        let tick = cpustat::ticks_to_us(1);
        let at = std::time::Instant::now();
        let a = Reading {
            at,
            cpus: 2,
            times: CpuTimes::default(),
        };
        // 2 CPUs over 1 s: 200 ticks. 20 stolen, 60 idle, so 120 busy, of which the
        // kernel's tick saw 110 (user, system, softirq).
        let b = Reading {
            at: at + std::time::Duration::from_secs(1),
            cpus: 2,
            times: CpuTimes {
                user: 90,
                system: 15,
                softirq: 5,
                steal: 20,
                idle: 60,
                ..CpuTimes::default()
            },
        };
        // plumb used 50 ticks' worth, the server 10: 60 of 120 busy were someone else's.
        let n = host_noise(Some(&a), Some(&b), 50 * tick, Some(10 * tick));
        assert_eq!(n.steal_pct, Some(10.0));
        assert_eq!(n.outside_cpu_pct, Some(30.0));
        // An embedded engine: the server's share is plumb's.
        let n = host_noise(Some(&a), Some(&b), 60 * tick, Some(0));
        assert_eq!(n.outside_cpu_pct, Some(30.0));
        // A server not read: steal is known, the outside load is not.
        let n = host_noise(Some(&a), Some(&b), 50 * tick, None);
        assert_eq!((n.steal_pct, n.outside_cpu_pct), (Some(10.0), None));
        // plumb's finer clock above the ticks is no negative load.
        let n = host_noise(Some(&a), Some(&b), 130 * tick, Some(0));
        assert_eq!(n.outside_cpu_pct, Some(0.0));
        assert_eq!(host_noise(None, Some(&b), 0, Some(0)), HostNoise::default());
        assert_eq!(
            host_noise(Some(&a), Some(&a), 0, Some(0)),
            HostNoise::default()
        );
    }

    #[test]
    fn a_window_of_a_few_ticks_has_no_noise_figure() {
        use plumb_probes::cpustat::CpuTimes;
        let at = std::time::Instant::now();
        let a = Reading {
            at,
            cpus: 2,
            times: CpuTimes::default(),
        };
        // A 0.05 s compaction wait on 2 CPUs: 10 ticks, 9 of them busy while plumb's own
        // finer clock counted 0.04 s: "outside" would read 50% on one tick's rounding.
        let short = Reading {
            at: at + std::time::Duration::from_millis(50),
            cpus: 2,
            times: CpuTimes {
                user: 9,
                idle: 1,
                ..CpuTimes::default()
            },
        };
        assert_eq!(
            host_noise(Some(&a), Some(&short), 40_000, Some(0)),
            HostNoise::default()
        );
        // Half a second on 2 CPUs is the least judged (100 ticks), and is.
        let half = Reading {
            at: at + std::time::Duration::from_millis(500),
            cpus: 2,
            times: CpuTimes {
                user: 50,
                idle: 50,
                ..CpuTimes::default()
            },
        };
        let n = host_noise(Some(&a), Some(&half), 300_000, Some(0));
        assert_eq!(n.outside_cpu_pct, Some(20.0));
    }

    #[test]
    fn engine_amp_and_stalls() {
        let e = EngineStats {
            ingest_bytes: Some(100),
            flush_write_bytes: Some(100),
            compact_write_bytes: Some(250),
            stall_micros: Some(250_000),
            ..EngineStats::default()
        };
        assert_eq!(engine_w_amp(&e), Some(3.5));
        assert_eq!(stall_pct(&e, 2.0), Some(12.5));
        // An engine that reports its file writes as one figure (WiredTiger).
        let one = EngineStats {
            ingest_bytes: Some(100),
            flush_write_bytes: Some(250),
            ..EngineStats::default()
        };
        assert_eq!(engine_w_amp(&one), Some(2.5));
        assert_eq!(engine_w_amp(&EngineStats::default()), None);
        assert_eq!(stall_pct(&EngineStats::default(), 1.0), None);
    }
}
