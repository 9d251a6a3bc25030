//! The last N seconds of each step, as seed 001 reads overwrite: a step's whole-run
//! throughput mixes the minutes before compaction debt built up with the steady state
//! after it, so the seed charts both the whole run and its last 300 seconds. `--window`
//! on show, report, compare, history and check recomputes every figure the 1-second
//! series holds over the window and leaves the rest the whole step's, saying which.

use plumb_core::{DeviceIo, Qos, StepSummary, Window, NOISE_MIN_CPU_SECS};
use plumb_store::StoredRun;

/// What a window recomputes, for the note every windowed report prints.
pub const RECOMPUTED: &str = "ops/s, MB/s, CPU/op, device IO per op and iostat's columns, \
stall%, steal%, outside% and QoS over the window; latency percentiles (except max), the LSM's \
and the server's account and hardware counters stay the whole step's";

/// Restricts every step of `run` that lasted longer than `secs` to its last `secs`
/// seconds (whole 1-second intervals, counted back from the step's end), keeping the
/// whole step's throughput in [`StepSummary::window`]. Steps no longer than the window,
/// or without a series, are left as they are.
pub fn apply(run: &mut StoredRun, secs: f64) {
    for (step, intervals) in &mut run.steps {
        if let Some(s) = last(&step.summary, intervals, secs) {
            step.summary = s;
        }
    }
}

/// The step's summary over its last `secs` seconds, or `None` when the step is no
/// longer than that (its whole window is already the last `secs`).
pub fn last(
    whole: &StepSummary,
    intervals: &[plumb_core::Interval],
    secs: f64,
) -> Option<StepSummary> {
    let end = intervals.last()?.t;
    if end <= secs + 1e-9 || whole.window.is_some() {
        return None;
    }
    // An interval belongs to the window when it ends inside it: the window starts on an
    // interval boundary, so its length is the sum of whole intervals, never a fraction.
    let kept: Vec<_> = intervals
        .iter()
        .filter(|i| i.t > end - secs + 1e-9)
        .collect();
    let span: f64 = kept.iter().map(|i| i.secs).sum();
    if kept.is_empty() || span <= 0.0 {
        return None;
    }
    let ops: u64 = kept.iter().map(|i| i.ops).sum();
    let per_op = |total: Option<f64>| total.filter(|_| ops > 0).map(|t| t / ops as f64);
    let sum = |f: &dyn Fn(&plumb_core::Interval) -> Option<f64>| -> Option<f64> {
        kept.iter().map(|i| f(i)).sum::<Option<f64>>()
    };
    // Steal and outside load are measured only over intervals long enough to hold them
    // (a short last interval has none): their mean over the intervals that have one,
    // if those hold at least a second.
    let noise = |f: &dyn Fn(&plumb_core::Interval) -> Option<f64>| -> Option<f64> {
        let (t, v) = kept
            .iter()
            .filter_map(|i| f(i).map(|v| (i.secs, v * i.secs)))
            .fold((0.0, 0.0), |(t, a), (s, v)| (t + s, a + v));
        (t >= NOISE_MIN_CPU_SECS).then(|| v / t)
    };
    let ops_sec = ops as f64 / span;
    let mut s = whole.clone();
    s.window = Some(Window {
        last_secs: secs,
        whole_secs: whole.secs,
        whole_ops: whole.ops,
        whole_ops_sec: whole.ops_sec,
    });
    s.ops = ops;
    s.secs = span;
    s.ops_sec = ops_sec;
    // Bytes per op do not change with the window: the op's key and value sizes are fixed.
    s.mb_sec = whole
        .mb_sec
        .filter(|_| whole.ops_sec > 0.0)
        .map(|mb| mb / whole.ops_sec * ops_sec);
    s.pmax_us = kept
        .iter()
        .filter_map(|i| i.pmax_us)
        .reduce(f64::max)
        .or(whole.pmax_us);
    s.cpu_us_op = per_op(sum(&|i| i.cpu_us));
    // The series holds a process's whole CPU per second, not its user/system split nor
    // plumb's own share: those are not known for the window.
    s.usr_us_op = None;
    s.sys_us_op = None;
    s.harness_us_op = None;
    s.csw_op = None;
    s.majflt_op = None;
    s.rd_op = per_op(sum(&|i| i.rd.map(|v| v as f64)));
    s.rkb_op = per_op(sum(&|i| i.rkb));
    s.wr_op = per_op(sum(&|i| i.wr.map(|v| v as f64)));
    s.wkb_op = per_op(sum(&|i| i.wkb));
    s.device = device(&kept);
    s.stall_pct = sum(&|i| i.stall_us.map(|v| v as f64)).map(|us| us / (span * 1e6) * 100.0);
    s.steal_pct = noise(&|i| i.steal_pct);
    s.outside_cpu_pct = noise(&|i| i.outside_cpu_pct);
    s.qos = Qos::of(&kept.iter().map(|i| **i).collect::<Vec<_>>());
    s.rss_gb = kept.iter().filter_map(|i| i.rss_gb).reduce(f64::max);
    Some(s)
}

/// iostat's columns over several intervals, from their rates: requests and bytes are
/// rates × seconds, awaits and request sizes are weighted by requests, queue size and
/// %util by time, exactly as iostat would give them over the longer window.
fn device(kept: &[&plumb_core::Interval]) -> Option<DeviceIo> {
    let d: Vec<(f64, DeviceIo)> = kept
        .iter()
        .map(|i| i.device.map(|d| (i.secs, d)))
        .collect::<Option<_>>()?;
    let span: f64 = d.iter().map(|(s, _)| s).sum();
    let total = |f: &dyn Fn(&DeviceIo) -> f64| d.iter().map(|(s, x)| f(x) * s).sum::<f64>();
    let reads = total(&|x| x.r_s);
    let writes = total(&|x| x.w_s);
    let per_request =
        |n: f64, f: &dyn Fn(&DeviceIo) -> Option<f64>, rate: &dyn Fn(&DeviceIo) -> f64| {
            (n > 0.0)
                .then(|| {
                    d.iter()
                        .filter(|(_, x)| rate(x) > 0.0)
                        .map(|(s, x)| f(x).map(|v| v * rate(x) * s))
                        .sum::<Option<f64>>()
                        .map(|t| t / n)
                })
                .flatten()
        };
    let time_mean = |f: &dyn Fn(&DeviceIo) -> Option<f64>| {
        d.iter()
            .map(|(s, x)| f(x).map(|v| v * s))
            .sum::<Option<f64>>()
            .map(|t| t / span)
    };
    Some(DeviceIo {
        r_s: reads / span,
        rmb_s: total(&|x| x.rmb_s) / span,
        r_await_ms: per_request(reads, &|x| x.r_await_ms, &|x| x.r_s),
        rareq_kb: (reads > 0.0).then(|| total(&|x| x.rmb_s) * 1024.0 / reads),
        w_s: writes / span,
        wmb_s: total(&|x| x.wmb_s) / span,
        w_await_ms: per_request(writes, &|x| x.w_await_ms, &|x| x.w_s),
        wareq_kb: (writes > 0.0).then(|| total(&|x| x.wmb_s) * 1024.0 / writes),
        aqu_sz: time_mean(&|x| x.aqu_sz),
        util_pct: time_mean(&|x| x.util_pct),
        f_s: time_mean(&|x| x.f_s),
    })
}

/// The line a windowed report opens with, or `None` when no step was windowed.
pub fn note(runs: &[&StoredRun]) -> Option<String> {
    let secs = runs
        .iter()
        .flat_map(|r| r.steps.iter())
        .find_map(|(s, _)| s.summary.window.as_ref())?
        .last_secs;
    Some(format!(
        "window: the last {secs} s of each step longer than that ({RECOMPUTED})"
    ))
}

/// "overwrite: 200 ops/s over its last 300 s, 600 over the whole 1800 s": both of the
/// seed's figures for a windowed step, or `None` for a step left whole.
pub fn step_line(step: &str, s: &StepSummary) -> Option<String> {
    let w = s.window.as_ref()?;
    Some(format!(
        "{step}: {} ops/s over its last {:.1} s, {} over the whole {:.1} s ({})",
        crate::format::sig(Some(s.ops_sec), 3),
        s.secs,
        crate::format::sig(Some(w.whole_ops_sec), 3),
        w.whole_secs,
        match w.whole_ops_sec > 0.0 {
            true => format!("{:.2}×", s.ops_sec / w.whole_ops_sec),
            false => "-".into(),
        }
    ))
}

/// `--window SECS` read: a number of seconds (`300` or `300s`), at least 1, the
/// series' interval.
pub fn parse_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim_end_matches('s')
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds (e.g. 300 or 300s)"))?;
    if !(v.is_finite() && v >= 1.0) {
        return Err(format!(
            "`{s}`: a window is at least 1 s, the series' interval"
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::Interval;

    fn interval(t: f64, secs: f64, ops: u64, r_s: f64, rareq: f64, await_ms: f64) -> Interval {
        Interval {
            t,
            secs,
            ops,
            ops_sec: ops as f64 / secs,
            p50_us: None,
            p99_us: None,
            pmax_us: Some(t * 10.0),
            cpu_us: Some(ops as f64 * 2.0),
            rd: Some((r_s * secs) as u64),
            rkb: Some(r_s * secs * rareq),
            wr: None,
            wkb: None,
            device: Some(DeviceIo {
                r_s,
                rmb_s: r_s * rareq / 1024.0,
                r_await_ms: Some(await_ms),
                rareq_kb: Some(rareq),
                util_pct: Some(50.0),
                ..Default::default()
            }),
            stall_us: Some(100_000),
            rss_gb: Some(t),
            steal_pct: Some(1.0),
            outside_cpu_pct: None,
            target_ops_sec: None,
            threads: None,
        }
    }

    /// A step that ran 1000 ops/s for 5 s and then 200 ops/s for 5 s (compaction debt),
    /// with small slow reads at the end: the whole step reads 600 ops/s, its last 5 s 200.
    fn step() -> (StepSummary, Vec<Interval>) {
        let mut iv = Vec::new();
        for t in 1..=5 {
            iv.push(interval(t as f64, 1.0, 1000, 100.0, 128.0, 1.0));
        }
        for t in 6..=10 {
            iv.push(interval(t as f64, 1.0, 200, 1000.0, 4.0, 0.1));
        }
        let whole = StepSummary {
            ops: 6000,
            secs: 10.0,
            ops_sec: 600.0,
            mb_sec: Some(6.0),
            p99_us: Some(42.0),
            usr_us_op: Some(1.5),
            ..Default::default()
        };
        (whole, iv)
    }

    #[test]
    fn the_last_seconds_are_recomputed_from_the_series() {
        let (whole, iv) = step();
        let s = last(&whole, &iv, 5.0).unwrap();
        assert_eq!(s.ops, 1000);
        assert_eq!(s.secs, 5.0);
        assert_eq!(s.ops_sec, 200.0);
        assert!((s.mb_sec.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(s.cpu_us_op, Some(2.0));
        assert_eq!(s.rd_op, Some(5.0));
        assert_eq!(s.pmax_us, Some(100.0));
        assert_eq!(s.stall_pct, Some(10.0));
        assert_eq!(s.steal_pct, Some(1.0));
        assert_eq!(s.outside_cpu_pct, None);
        let q = s.qos.unwrap();
        assert_eq!((q.intervals, q.min, q.cv), (5, 200.0, 0.0));
        assert_eq!(s.rss_gb, Some(10.0));
        let d = s.device.unwrap();
        assert_eq!(d.r_s, 1000.0);
        assert!((d.rareq_kb.unwrap() - 4.0).abs() < 1e-9);
        assert!((d.r_await_ms.unwrap() - 0.1).abs() < 1e-9);
        // Kept from the whole step, and said so: percentiles, the split of CPU is gone.
        assert_eq!(s.p99_us, Some(42.0));
        assert_eq!(s.usr_us_op, None);
        let w = s.window.unwrap();
        assert_eq!(
            (w.last_secs, w.whole_ops, w.whole_ops_sec),
            (5.0, 6000, 600.0)
        );
    }

    #[test]
    fn iostat_columns_over_a_longer_window_weigh_by_requests() {
        let (whole, iv) = step();
        // The last 7 s: 2 s of 100 reads of 128 KiB at 1 ms, 5 s of 1000 of 4 KiB at 0.1 ms.
        let d = last(&whole, &iv, 7.0).unwrap().device.unwrap();
        let reads = 200.0 + 5000.0;
        assert!((d.r_s - reads / 7.0).abs() < 1e-9);
        assert!((d.rareq_kb.unwrap() - (200.0 * 128.0 + 5000.0 * 4.0) / reads).abs() < 1e-9);
        assert!((d.r_await_ms.unwrap() - (200.0 * 1.0 + 5000.0 * 0.1) / reads).abs() < 1e-9);
        assert_eq!(d.util_pct, Some(50.0));
    }

    #[test]
    fn a_step_no_longer_than_the_window_is_left_whole() {
        let (whole, iv) = step();
        assert!(last(&whole, &iv, 10.0).is_none());
        assert!(last(&whole, &iv, 30.0).is_none());
        assert!(last(&whole, &[], 5.0).is_none());
    }

    #[test]
    fn a_partial_last_interval_is_kept_whole_and_counted_by_its_length() {
        let (whole, mut iv) = step();
        iv.push(interval(10.5, 0.5, 100, 0.0, 0.0, 0.0));
        let s = last(&whole, &iv, 3.0).unwrap();
        // Intervals ending at 8, 9, 10 and 10.5 end after 7.5: 3.5 s, 700 ops.
        assert_eq!(s.secs, 3.5);
        assert_eq!(s.ops, 700);
        // A short last interval without a steal figure does not hide the others'.
        let mut iv2 = iv.clone();
        iv2.last_mut().unwrap().steal_pct = None;
        assert_eq!(last(&whole, &iv2, 3.0).unwrap().steal_pct, Some(1.0));
        // Nor is a figure made from less than a second of intervals that have it.
        iv2.iter_mut()
            .rev()
            .skip(1)
            .for_each(|i| i.steal_pct = None);
        iv2.last_mut().unwrap().steal_pct = Some(3.0);
        assert_eq!(last(&whole, &iv2, 3.0).unwrap().steal_pct, None);
    }
}

#[cfg(test)]
mod parse_tests {
    use super::parse_secs;

    #[test]
    fn a_window_is_seconds_with_or_without_its_unit_and_at_least_one() {
        assert_eq!(parse_secs("300"), Ok(300.0));
        assert_eq!(parse_secs("300s"), Ok(300.0));
        assert!(parse_secs("0.5").unwrap_err().contains("at least 1 s"));
        assert!(parse_secs("five")
            .unwrap_err()
            .contains("not a number of seconds"));
    }
}
