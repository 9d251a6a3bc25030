//! The metric table: every per-step figure a report shows, once, with its unit, which
//! way is better, how it is printed and where it is read from. The text, Markdown and
//! HTML tables and `compare` take their columns from here, so a new metric is one row
//! here (and its ids in the views that show it) plus its formula in the runner.

use crate::format::{fixed, sig};
use plumb_core::StepSummary;

/// Which direction of change is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// More is better (throughput).
    Higher,
    /// Less is better (latency, costs per op).
    Lower,
    /// Neither: context, not a score (database size).
    Neither,
}

/// How a figure is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fmt {
    /// Significant digits.
    Sig(usize),
    /// Fixed decimals.
    Fixed(usize),
}

/// One metric.
pub struct Metric {
    /// Stable id: the name `compare`, JSON and CSV readers see.
    pub id: &'static str,
    /// Column header in the terminal and Markdown tables (benchmark.sh's names).
    pub short: &'static str,
    /// Column header in HTML.
    pub label: &'static str,
    /// Unit, for legends.
    pub unit: &'static str,
    /// Which way is better.
    pub better: Better,
    /// How it prints.
    pub fmt: Fmt,
    /// Shown for unmeasured maintenance steps (which have no ops).
    pub maintenance: bool,
    /// Reads it from a step summary; `None` when this host or engine cannot give it.
    pub get: fn(&StepSummary) -> Option<f64>,
}

impl Metric {
    /// The printed value (`n/a` when absent).
    pub fn show(&self, s: &StepSummary) -> String {
        let v = (self.get)(s);
        match self.fmt {
            Fmt::Sig(d) => sig(v, d),
            Fmt::Fixed(d) => fixed(v, d),
        }
    }
}

macro_rules! m {
    ($id:literal, $short:literal, $label:literal, $unit:literal, $better:ident, $fmt:expr, $maint:literal, $get:expr) => {
        Metric {
            id: $id,
            short: $short,
            label: $label,
            unit: $unit,
            better: Better::$better,
            fmt: $fmt,
            maintenance: $maint,
            get: $get,
        }
    };
}

/// The metrics named by `ids` (the `--metric` flags of noise, history and check), or
/// the first unknown one with every id there is: a typo is refused before any run.
pub fn named(ids: &[String]) -> Result<Vec<&'static Metric>, crate::select::SelectError> {
    ids.iter()
        .map(|id| {
            METRICS.iter().find(|m| m.id == id).ok_or_else(|| {
                crate::select::SelectError::Bad(format!(
                    "--metric {id}: no such metric; known: {}",
                    METRICS.iter().map(|m| m.id).collect::<Vec<_>>().join(", ")
                ))
            })
        })
        .collect()
}

/// Every metric, once: one row each.
#[rustfmt::skip]
pub const METRICS: &[Metric] = &[
    m!("ops_sec", "ops_sec", "ops/s", "ops/s", Higher, Fmt::Fixed(0), false, |s| Some(s.ops_sec)),
    m!("mb_sec", "mb_sec", "MB/s", "MiB/s", Higher, Fmt::Fixed(1), false, |s| s.mb_sec),
    m!("p50_us", "p50", "p50 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.p50_us),
    m!("p99_us", "p99", "p99 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.p99_us),
    m!("p99.9_us", "p99.9", "p99.9 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.p999_us),
    m!("p99.99_us", "p99.99", "p99.99 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.p9999_us),
    m!("pmax_us", "pmax", "pmax µs", "µs", Lower, Fmt::Sig(3), false, |s| s.pmax_us),
    m!("w_amp", "w_amp", "w_amp", "×", Lower, Fmt::Fixed(2), false, |s| s.w_amp),
    m!("c_wgb", "c_wgb", "compaction GB written", "GB", Lower, Fmt::Fixed(3), true, |s| s.c_wgb),
    m!("stall_pct", "stall%", "stall %", "%", Lower, Fmt::Fixed(1), false, |s| s.stall_pct),
    m!("cpu_us_op", "cpu_us_op", "cpu µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| s.cpu_us_op),
    m!("usr_us_op", "usr_us_op", "user cpu µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| s.usr_us_op),
    m!("sys_us_op", "sys_us_op", "system cpu µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| s.sys_us_op),
    m!("plumb_us_op", "plumb_us_op", "plumb µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| s.harness_us_op),
    m!("plumb_pct", "plumb%", "plumb % of cpu", "%", Lower, Fmt::Fixed(1), false, |s| plumb_pct(s)),
    m!("csw_op", "csw_op", "csw/op", "/op", Lower, Fmt::Sig(3), false, |s| s.csw_op),
    m!("majflt_op", "majflt_op", "major faults/op", "/op", Lower, Fmt::Sig(3), false, |s| s.majflt_op),
    m!("rd_op", "rd_op", "reads/op", "/op", Lower, Fmt::Sig(3), false, |s| s.rd_op),
    m!("rkb_op", "rkb_op", "rKB/op", "KB/op", Lower, Fmt::Sig(3), false, |s| s.rkb_op),
    m!("wr_op", "wr_op", "writes/op", "/op", Lower, Fmt::Sig(3), false, |s| s.wr_op),
    m!("wkb_op", "wkb_op", "wKB/op", "KB/op", Lower, Fmt::Sig(3), false, |s| s.wkb_op),
    // The device as `iostat -x` shows it over the step's window (DeviceIo): rates and
    // sizes are context, waits are costs. Maintenance steps have them too.
    m!("r_s", "r/s", "r/s", "/s", Neither, Fmt::Sig(3), true, |s| s.device.map(|d| d.r_s)),
    m!("rmb_s", "rMB/s", "rMB/s", "MiB/s", Neither, Fmt::Fixed(2), true, |s| s.device.map(|d| d.rmb_s)),
    m!("r_await", "r_await", "r_await ms", "ms", Lower, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.r_await_ms)),
    m!("rareq_sz", "rareq-sz", "rareq-sz KiB", "KiB", Neither, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.rareq_kb)),
    m!("w_s", "w/s", "w/s", "/s", Neither, Fmt::Sig(3), true, |s| s.device.map(|d| d.w_s)),
    m!("wmb_s", "wMB/s", "wMB/s", "MiB/s", Neither, Fmt::Fixed(2), true, |s| s.device.map(|d| d.wmb_s)),
    m!("w_await", "w_await", "w_await ms", "ms", Lower, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.w_await_ms)),
    m!("wareq_sz", "wareq-sz", "wareq-sz KiB", "KiB", Neither, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.wareq_kb)),
    m!("aqu_sz", "aqu-sz", "aqu-sz", "", Neither, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.aqu_sz)),
    m!("util", "%util", "%util", "%", Neither, Fmt::Fixed(2), true, |s| s.device.and_then(|d| d.util_pct)),
    m!("f_s", "f/s", "f/s", "/s", Neither, Fmt::Sig(3), true, |s| s.device.and_then(|d| d.f_s)),
    // Device cache flushes per op: 1 or more when every op is a durable commit that
    // flushes alone, below 1 when commits share flushes (group commit), 0 without sync.
    m!("flush_op", "flush_op", "device flushes/op", "/op", Lower, Fmt::Sig(3), false, |s| flush_op(s)),
    // The device's busy time per op: %util's share of the window over the ops in it, the
    // device's side of an op's time (history sets it against the change in time per op).
    m!("dev_us_op", "dev_us_op", "device busy µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| s.device.and_then(|d| d.util_pct).filter(|_| s.ops > 0).map(|u| u / 100.0 * s.secs * 1e6 / s.ops as f64)),
    m!("w_amp_eng", "w_amp_eng", "w_amp (engine)", "×", Lower, Fmt::Fixed(2), false, |s| s.w_amp_engine),
    m!("db_gb", "db_gb", "db GB", "GB", Neither, Fmt::Fixed(3), true, |s| s.db_gb),
    m!("eng_gb", "eng_gb", "engine's used GB", "GB", Neither, Fmt::Fixed(3), true, |s| s.eng_used_gb),
    m!("space_amp", "space_amp", "space_amp", "×", Lower, Fmt::Fixed(2), false, |s| s.space_amp),
    m!("rss_gb", "rss_gb", "rss GB", "GB", Lower, Fmt::Fixed(3), false, |s| s.rss_gb),
    m!("qos_min", "qos_min", "interval min", "ops/s", Higher, Fmt::Sig(3), false, |s| s.qos.map(|q| q.min)),
    m!("qos_p1", "qos_p1", "interval p1", "ops/s", Higher, Fmt::Sig(3), false, |s| s.qos.map(|q| q.p1)),
    m!("qos_p5", "qos_p5", "interval p5", "ops/s", Higher, Fmt::Sig(3), false, |s| s.qos.map(|q| q.p5)),
    m!("qos_p50", "qos_p50", "interval p50", "ops/s", Higher, Fmt::Sig(3), false, |s| s.qos.map(|q| q.p50)),
    m!("qos_cv", "qos_cv", "interval cv", "", Lower, Fmt::Fixed(3), false, |s| s.qos.map(|q| q.cv)),
    // The host's noise: what the hypervisor and other processes took from the machine
    // while the step ran. Context, not a score: they say whether a change is the
    // engine's or the neighbour's.
    m!("steal_pct", "steal%", "steal % of the machine's CPU", "%", Neither, Fmt::Fixed(1), true, |s| s.steal_pct),
    m!("outside_cpu_pct", "outside%", "other processes' CPU % of the machine", "%", Neither, Fmt::Fixed(1), true, |s| s.outside_cpu_pct),
    m!("verified", "verified", "values verified", "", Neither, Fmt::Fixed(0), false, |s| Some(s.verify.verified as f64)),
    m!("secs", "secs", "seconds", "s", Neither, Fmt::Fixed(1), false, |s| Some(s.secs)),
    m!("instructions_op", "instr_op", "instructions/op", "/op", Lower, Fmt::Sig(3), false, |s| s.hw.instructions_op),
    m!("cycles_op", "cycles_op", "cycles/op", "/op", Lower, Fmt::Sig(3), false, |s| s.hw.cycles_op),
    m!("cache_misses_op", "llc_miss_op", "cache misses/op", "/op", Lower, Fmt::Sig(3), false, |s| s.hw.cache_misses_op),
    m!("tps", "tps", "transactions/s", "txn/s", Higher, Fmt::Fixed(0), false, |s| s.server.as_ref().map(|v| v.tps)),
    m!("rows_q", "rows_q", "rows/query", "/query", Neither, Fmt::Sig(3), false, |s| s.server.as_ref().and_then(|v| v.rows_query)),
    m!("srv_cpu_us_q", "srv_us_q", "server cpu µs/query", "µs/query", Lower, Fmt::Sig(3), false, |s| s.server.as_ref().and_then(|v| v.cpu_us_query)),
    m!("srv_csw_q", "srv_csw_q", "server csw/query", "/query", Lower, Fmt::Sig(3), false, |s| s.server.as_ref().and_then(|v| v.csw_query)),
    m!("retries", "retries", "retried conflicts", "", Lower, Fmt::Fixed(0), false, |s| s.server.as_ref().map(|v| v.retries as f64)),
    // Open-loop steps: service time beside the response time of p50/p99 above, and what
    // the queue did. TPC-C's NOPM from its new-order count.
    m!("svc_p50_us", "svc_p50", "service p50 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.open_loop.as_ref().and_then(|o| o.service.p50_us)),
    m!("svc_p99_us", "svc_p99", "service p99 µs", "µs", Lower, Fmt::Sig(3), false, |s| s.open_loop.as_ref().and_then(|o| o.service.p99_us)),
    m!("lag_max_ms", "lag_ms", "longest wait to start, ms", "ms", Lower, Fmt::Sig(3), false, |s| s.open_loop.as_ref().map(|o| o.lag_max_ms)),
    m!("backlog", "backlog", "ops due, never started", "", Lower, Fmt::Fixed(0), false, |s| s.open_loop.as_ref().map(|o| o.backlog_ops as f64)),
    m!("nopm", "nopm", "new orders/min (TPC-C)", "/min", Higher, Fmt::Fixed(0), false, |s| s.by_op.get("new-order").filter(|_| s.secs > 0.0).map(|l| l.ops as f64 * 60.0 / s.secs)),
    m!("comp_cpu_us_op", "comp_cpu_us_op", "compaction cpu µs/op", "µs/op", Lower, Fmt::Sig(3), false, |s| lsm_per_op(s, |l| l.comp_cpu_secs * 1e6)),
    m!("comp_s", "comp_s", "compaction seconds", "s", Lower, Fmt::Fixed(2), true, |s| s.lsm.as_ref().map(|l| l.comp_secs)),
    m!("comp_rkb_op", "comp_rkb_op", "compaction KB read/op", "KB/op", Lower, Fmt::Sig(3), false, |s| lsm_per_op(s, |l| l.comp_read_bytes() as f64 / 1024.0)),
    m!("stalls", "stalls", "write stalls (delays + stops)", "", Lower, Fmt::Fixed(0), true, |s| s.lsm.as_ref().map(|l| l.stalls.total() as f64)),
    m!("block_miss_op", "block_miss_op", "block cache misses/op", "/op", Lower, Fmt::Sig(3), false, |s| lsm_per_op(s, |l| l.cache.map_or(f64::NAN, |c| c.misses() as f64))),
];

/// An LSM account figure divided by the step's ops; `None` without an account, ops or
/// the figure (NaN).
fn lsm_per_op(s: &StepSummary, f: impl Fn(&plumb_core::LsmAccount) -> f64) -> Option<f64> {
    let v = f(s.lsm.as_ref()?);
    (s.ops > 0 && v.is_finite()).then(|| v / s.ops as f64)
}

/// Device cache flushes per op (`f/s` over ops/s): `None` without the flush count or
/// ops.
pub fn flush_op(s: &StepSummary) -> Option<f64> {
    let f = s.device?.f_s?;
    (s.ops_sec > 0.0).then(|| f / s.ops_sec)
}

/// plumb's own share of the CPU an op cost: its time outside the engine call over the
/// process's CPU per op (engine background threads included).
fn plumb_pct(s: &StepSummary) -> Option<f64> {
    match (s.harness_us_op, s.cpu_us_op) {
        (Some(h), Some(c)) if c > 0.0 => Some(100.0 * h / c),
        _ => None,
    }
}

/// The metric with this id. Panics on an id not in the table: the views below are
/// constants, checked by a test.
pub fn metric(id: &str) -> &'static Metric {
    METRICS
        .iter()
        .find(|m| m.id == id)
        .unwrap_or_else(|| panic!("metric {id:?} is not in METRICS"))
}

/// The terminal report's first table (benchmark.sh's column order).
pub const TEXT_MAIN: &[&str] = &[
    "ops_sec",
    "mb_sec",
    "p50_us",
    "p99_us",
    "p99.9_us",
    "p99.99_us",
    "pmax_us",
    "w_amp",
    "c_wgb",
    "stall_pct",
    "cpu_us_op",
    "plumb_pct",
    "rkb_op",
    "wkb_op",
    "db_gb",
];

/// The terminal report's per-op and QoS table; it starts with cpu_us_op's user and
/// system parts.
pub const TEXT_COST: &[&str] = &[
    "usr_us_op",
    "sys_us_op",
    "plumb_us_op",
    "csw_op",
    "majflt_op",
    "rd_op",
    "wr_op",
    "flush_op",
    "w_amp_eng",
    "space_amp",
    "rss_gb",
    "qos_min",
    "qos_p1",
    "qos_p5",
    "qos_p50",
    "qos_cv",
    "steal_pct",
    "outside_cpu_pct",
    "verified",
    "secs",
];

/// The terminal report's first table for a run on a database server: ops are queries
/// (BEGIN and COMMIT included, as sysbench counts them), the client's CPU is plumb's.
pub const TEXT_SQL_MAIN: &[&str] = &[
    "ops_sec",
    "tps",
    "p50_us",
    "p99_us",
    "p99.9_us",
    "pmax_us",
    "cpu_us_op",
    "srv_cpu_us_q",
    "rkb_op",
    "wkb_op",
    "db_gb",
];

/// The per-query table of a server run.
pub const TEXT_SQL_COST: &[&str] = &[
    "usr_us_op",
    "sys_us_op",
    "rows_q",
    "csw_op",
    "srv_csw_q",
    "rd_op",
    "wr_op",
    "flush_op",
    "qos_min",
    "qos_p50",
    "qos_cv",
    "steal_pct",
    "outside_cpu_pct",
    "retries",
    "secs",
];

/// The Markdown run table.
pub const MARKDOWN_RUN: &[&str] = &[
    "ops_sec",
    "p50_us",
    "p99_us",
    "p99.9_us",
    "pmax_us",
    "cpu_us_op",
    "usr_us_op",
    "sys_us_op",
    "plumb_pct",
    "rkb_op",
    "wkb_op",
    "w_amp",
    "stall_pct",
    "db_gb",
    "steal_pct",
    "outside_cpu_pct",
];

/// The HTML step table.
pub const HTML_STEP: &[&str] = &[
    "ops_sec",
    "mb_sec",
    "p50_us",
    "p99_us",
    "p99.9_us",
    "p99.99_us",
    "pmax_us",
    "cpu_us_op",
    "usr_us_op",
    "sys_us_op",
    "plumb_pct",
    "majflt_op",
    "rkb_op",
    "wkb_op",
    "w_amp",
    "stall_pct",
    "qos_cv",
    "steal_pct",
    "outside_cpu_pct",
];

/// The device as `iostat -x` shows it, in iostat's column order: the terminal's and
/// Markdown's device table, the HTML device table, and the columns of `plumb show
/// --intervals` (each interval's own figures).
pub const DEVICE: &[&str] = &[
    "r_s", "rmb_s", "r_await", "rareq_sz", "w_s", "wmb_s", "w_await", "wareq_sz", "f_s", "aqu_sz",
    "util",
];

/// The per-op costs `compare` sets against the base (counters per op before dividing),
/// then the device's waits, request sizes, queue and utilisation over the window (its
/// rates are the per-op figures times ops/s, already there).
pub const COMPARE_COSTS: &[&str] = &[
    "cpu_us_op",
    "usr_us_op",
    "sys_us_op",
    "plumb_us_op",
    "csw_op",
    "majflt_op",
    "rd_op",
    "rkb_op",
    "wr_op",
    "wkb_op",
    "flush_op",
    "w_amp",
    "w_amp_eng",
    "p50_us",
    "p99_us",
    "p99.9_us",
    "instructions_op",
    "cycles_op",
    "cache_misses_op",
    "srv_cpu_us_q",
    "srv_csw_q",
    "svc_p50_us",
    "svc_p99_us",
    "r_await",
    "rareq_sz",
    "w_await",
    "wareq_sz",
    "aqu_sz",
    "util",
    "comp_cpu_us_op",
    "comp_rkb_op",
    "block_miss_op",
    "stalls",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_names_known_metrics_once() {
        for view in [
            TEXT_MAIN,
            TEXT_COST,
            TEXT_SQL_MAIN,
            TEXT_SQL_COST,
            MARKDOWN_RUN,
            HTML_STEP,
            DEVICE,
            COMPARE_COSTS,
        ] {
            for id in view {
                let _ = metric(id);
            }
            let mut v = view.to_vec();
            v.sort_unstable();
            v.dedup();
            assert_eq!(v.len(), view.len());
        }
        let mut ids: Vec<&str> = METRICS.iter().map(|m| m.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), METRICS.len(), "ids are unique");
    }

    #[test]
    fn lsm_rows_are_per_op_and_n_a_without_an_account() {
        let mut s = StepSummary {
            ops: 1000,
            ..StepSummary::default()
        };
        assert_eq!(metric("comp_cpu_us_op").show(&s), "n/a");
        s.lsm = Some(plumb_core::LsmAccount {
            comp_cpu_secs: 0.002,
            levels: vec![plumb_core::LevelAccount {
                read_bytes: 2048 * 1000,
                ..Default::default()
            }],
            ..Default::default()
        });
        assert_eq!((metric("comp_cpu_us_op").get)(&s), Some(2.0));
        assert_eq!((metric("comp_rkb_op").get)(&s), Some(2.0));
        // No block cache account: not zero misses.
        assert_eq!((metric("block_miss_op").get)(&s), None);
        assert_eq!((metric("stalls").get)(&s), Some(0.0));
    }

    #[test]
    fn device_rows_read_the_device_and_say_n_a_without_it() {
        let mut s = StepSummary::default();
        for id in DEVICE {
            assert_eq!(metric(id).show(&s), "n/a", "{id}");
        }
        s.device = Some(plumb_core::DeviceIo {
            r_s: 1520.0,
            rmb_s: 5.9375,
            r_await_ms: Some(0.2341),
            rareq_kb: Some(4.0),
            util_pct: Some(31.25),
            f_s: Some(760.0),
            ..plumb_core::DeviceIo::default()
        });
        let shown: Vec<String> = DEVICE.iter().map(|id| metric(id).show(&s)).collect();
        assert_eq!(
            shown,
            ["1520", "5.94", "0.23", "4.00", "0", "0.00", "n/a", "n/a", "760", "n/a", "31.25"]
        );
        // Flushes per op: 760 flushes/s over 1520 ops/s.
        s.ops_sec = 1520.0;
        assert_eq!((metric("flush_op").get)(&s), Some(0.5));
        s.ops_sec = 0.0;
        assert_eq!((metric("flush_op").get)(&s), None);
        let heads: Vec<&str> = DEVICE.iter().map(|id| metric(id).short).collect();
        assert_eq!(
            heads,
            [
                "r/s", "rMB/s", "r_await", "rareq-sz", "w/s", "wMB/s", "w_await", "wareq-sz",
                "f/s", "aqu-sz", "%util"
            ]
        );
        s.usr_us_op = Some(3.0);
        s.sys_us_op = Some(1.25);
        assert_eq!(
            (metric("usr_us_op").show(&s), metric("sys_us_op").show(&s)),
            ("3.00".into(), "1.25".into())
        );
    }

    #[test]
    fn noise_rows_read_the_summary() {
        let mut s = StepSummary::default();
        assert_eq!(metric("steal_pct").show(&s), "n/a");
        s.steal_pct = Some(12.04);
        s.outside_cpu_pct = Some(48.0);
        assert_eq!(metric("steal_pct").show(&s), "12.0");
        assert_eq!(metric("outside_cpu_pct").show(&s), "48.0");
        assert!(TEXT_COST.contains(&"outside_cpu_pct") && TEXT_SQL_COST.contains(&"steal_pct"));
    }

    #[test]
    fn absent_figures_print_as_unavailable() {
        let s = StepSummary::default();
        assert_eq!(metric("rkb_op").show(&s), "n/a");
        assert_eq!(metric("ops_sec").show(&s), "0");
    }
}
