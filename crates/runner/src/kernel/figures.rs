//! The figures every family computes the same way from a [`Run`]: its reports tallied
//! per interval and in all, its 1-second intervals, and the summary's common figures
//! (rates, latency, CPU and device per op, the host's noise). A family adds its own
//! (an engine's amplification, a probe's MB/s) on top.

use super::lane::Report;
use super::mark::Mark;
use super::outcome::Counts;
use super::run::Run;
use crate::histogram::LatencyHistogram;
use crate::metrics;
use crate::pacing::OpenTally;
use plumb_core::{HwCounters, Interval, StepSummary};

/// Ops, bytes and latencies over one stretch of a step.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// Ops counted.
    pub ops: u64,
    /// Bytes their ops reported.
    pub bytes: u64,
    /// The family's own counts ([`super::Outcome::count`]).
    pub counts: Counts,
    /// Their latencies (empty when untimed).
    pub hist: LatencyHistogram,
}

impl Part {
    fn add(&mut self, r: &Report) {
        self.ops += r.ops;
        self.bytes += r.bytes;
        for (all, c) in self.counts.iter_mut().zip(&r.counts) {
            *all += c;
        }
        self.hist.merge(&r.hist);
    }
}

/// What the threads reported over the measured window (warm-up left out).
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// The measured threads', one per interval between consecutive marks.
    pub intervals: Vec<Part>,
    /// The measured threads' over the whole window.
    pub total: LatencyHistogram,
    /// Open-loop service times and lateness.
    pub open: OpenTally,
    /// Latencies by kind of operation, as the step's classes index them.
    pub by_class: Vec<LatencyHistogram>,
    /// The unmeasured writers' over the whole window.
    pub writer: Part,
    /// The writers', one per interval as `intervals` (empty in a step without them).
    pub writer_intervals: Vec<Part>,
}

impl Tally {
    /// Tallies `reports` into `epochs` intervals (a report of a later epoch, sent after
    /// the closing mark, counts in the last) with `classes` kinds of operation, the
    /// writers' per interval too when the step has `writers`.
    pub(super) fn of(reports: Vec<Report>, epochs: usize, classes: usize, writers: bool) -> Tally {
        let parts = || (0..epochs).map(|_| Part::default()).collect();
        let mut t = Tally {
            intervals: parts(),
            by_class: (0..classes).map(|_| LatencyHistogram::new()).collect(),
            writer_intervals: if writers { parts() } else { Vec::new() },
            ..Tally::default()
        };
        for r in &reports {
            if r.epoch == 0 {
                continue; // warm-up
            }
            let i = (r.epoch as usize - 1).min(epochs - 1);
            if r.writer {
                t.writer.add(r);
                if let Some(p) = t.writer_intervals.get_mut(i) {
                    p.add(r);
                }
                continue;
            }
            t.intervals[i].add(r);
            t.total.merge(&r.hist);
            if let Some(o) = &r.open {
                t.open.merge(o);
            }
            for (all, h) in t.by_class.iter_mut().zip(&r.by_class) {
                all.merge(h);
            }
        }
        t
    }

    /// The measured ops.
    pub fn ops(&self) -> u64 {
        self.intervals.iter().map(|p| p.ops).sum()
    }

    /// The measured ops' bytes.
    pub fn bytes(&self) -> u64 {
        self.intervals.iter().map(|p| p.bytes).sum()
    }

    /// The measured threads' own counts of the family.
    pub fn counts(&self) -> Counts {
        let mut all = Counts::default();
        for p in &self.intervals {
            for (a, c) in all.iter_mut().zip(&p.counts) {
                *a += c;
            }
        }
        all
    }
}

/// The summary's figures that mean the same in every family, over the window from
/// `first` to `last` with `ops` ops of latencies `latency`: ops and their rate, latency
/// percentiles, CPU, context switches and device IO per op, the device as iostat shows
/// it, and the host's noise (everything but plumb counted as outside: see
/// [`Mark::noise_beside`] for a server's share). The rest is left at its default.
/// [`Run::summary`] is this over a step's window; a family's one-call step (an index
/// build) takes it over its two marks.
pub fn summary<X: Copy>(
    first: &Mark<X>,
    last: &Mark<X>,
    ops: u64,
    latency: &LatencyHistogram,
) -> StepSummary {
    let secs = (last.at - first.at).as_secs_f64();
    let disk = last.disk_since(first);
    let [rd_op, rkb_op, wr_op, wkb_op] = metrics::disk_per_op(disk.as_ref(), ops);
    let process = last.process.delta(&first.process);
    let [cpu_us_op, usr_us_op, sys_us_op] = metrics::cpu_per_op(&process, ops);
    let noise = last.noise_since(first);
    StepSummary {
        ops,
        secs,
        ops_sec: if secs > 0.0 { ops as f64 / secs } else { 0.0 },
        p50_us: latency.quantile_us(0.5),
        p99_us: latency.quantile_us(0.99),
        p999_us: latency.quantile_us(0.999),
        p9999_us: latency.quantile_us(0.9999),
        pmax_us: latency.max_us(),
        cpu_us_op,
        usr_us_op,
        sys_us_op,
        csw_op: metrics::per_op(Some(process.csw() as f64), ops),
        majflt_op: metrics::per_op(Some(process.major_faults as f64), ops),
        rd_op,
        rkb_op,
        wr_op,
        wkb_op,
        device: metrics::device_io(disk.as_ref(), secs),
        steal_pct: noise.steal_pct,
        outside_cpu_pct: noise.outside_cpu_pct,
        ..StepSummary::default()
    }
}

/// The hardware counters of a step run under `plumb icount`: callgrind's exact
/// instructions per op; a PMU's cycles and misses under Valgrind would be Valgrind's,
/// so none are kept.
fn counted(instructions: u64, ops: u64) -> HwCounters {
    HwCounters {
        instructions_op: metrics::per_op(Some(instructions as f64), ops),
        unsupported: Some(
            "counted by callgrind (plumb icount): instructions only, no cycles or misses".into(),
        ),
        ..HwCounters::default()
    }
}

impl<T, X: Copy> Run<T, X> {
    /// The window's first mark.
    pub fn first(&self) -> &Mark<X> {
        &self.marks[0]
    }

    /// The window's closing mark.
    pub fn last(&self) -> &Mark<X> {
        self.marks.last().expect("a run has a closing mark")
    }

    /// The measured window's length, s.
    pub fn secs(&self) -> f64 {
        (self.last().at - self.first().at).as_secs_f64()
    }

    /// The 1-second series, its ops adding up to the step's: each interval's figures
    /// from its two marks, then whatever `extra` adds from them (an engine's stalls);
    /// a closing sliver with nothing in it is dropped.
    pub fn intervals(
        &self,
        extra: impl Fn(&Mark<X>, &Mark<X>, Interval) -> Interval,
    ) -> Vec<Interval> {
        let first = self.first();
        let mut v: Vec<Interval> = self
            .tally
            .intervals
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (a, b) = (&self.marks[i], &self.marks[i + 1]);
                let iv = metrics::interval(
                    (b.at - first.at).as_secs_f64(),
                    (b.at - a.at).as_secs_f64(),
                    p.ops,
                    &p.hist,
                    b.process.delta(&a.process).cpu_us(),
                    b.disk_since(a),
                    b.noise_since(a),
                );
                let iv = Interval {
                    threads: self
                        .clients
                        .as_ref()
                        .map(|c| c.mean_between(iv.t - iv.secs, iv.t)),
                    ..iv
                };
                extra(a, b, iv)
            })
            .collect();
        if metrics::empty_tail(&v) {
            v.pop();
        }
        v
    }

    /// A timed step's 1-second series and summary with every figure the families
    /// share, computed here once: [`Self::intervals`] (with `extra`'s additions), the
    /// open loop's schedule against what ran when `pace` paced it (each interval's
    /// offered rate included), QoS over the series, the latencies per kind of op
    /// (`classes`, in the workload's order), plumb's own share per op, the measured
    /// threads' instructions per op under `plumb icount`, and [`Self::summary`]'s. A
    /// family adds what only it knows.
    pub fn figures(
        &self,
        extra: impl Fn(&Mark<X>, &Mark<X>, Interval) -> Interval,
        classes: &[&str],
        pace: Option<&plumb_workloads::Pace>,
    ) -> (Vec<Interval>, StepSummary) {
        let mut intervals = self.intervals(extra);
        let open_loop = pace.map(|p| self.tally.open.summary(p, self.backlog, &mut intervals));
        let summary = StepSummary {
            qos: plumb_core::Qos::of(&intervals),
            by_op: metrics::by_op(classes, &self.tally.by_class),
            open_loop,
            harness_us_op: metrics::per_op(Some(self.harness.ns as f64 / 1e3), self.harness.ops),
            hw: self
                .instructions
                .map(|n| counted(n, self.tally.ops()))
                .unwrap_or_default(),
            ..self.summary()
        };
        (intervals, summary)
    }

    /// The summary's figures that mean the same in every family: ops and their rate,
    /// latency percentiles, CPU, context switches and device IO per op, the device as
    /// iostat shows it, and the host's noise. The rest is left at its default.
    pub fn summary(&self) -> StepSummary {
        StepSummary {
            threads_profile: self.clients.as_ref().map(ToString::to_string),
            ..summary(
                self.first(),
                self.last(),
                self.tally.ops(),
                &self.tally.total,
            )
        }
    }
}

impl<T, X> Run<T, X> {
    /// What the step's faults cost, read from its timelines and its 1-second
    /// histograms ([`super::faults::report`]); `None` for a step without faults.
    pub fn fault_report(&self) -> Option<plumb_core::FaultReport> {
        let f = self.faults.as_ref()?;
        let seconds: Vec<&LatencyHistogram> =
            self.tally.intervals.iter().map(|p| &p.hist).collect();
        let window = match (self.marks.first(), self.marks.last()) {
            (Some(a), Some(b)) => b.at.saturating_duration_since(a.at).as_secs_f64(),
            _ => 0.0,
        };
        Some(super::faults::report(f, &seconds, window))
    }
}
