//! Sweeps read as curves: the runs of a suite grouped by the axis they sweep
//! (measured threads, or database size), one curve per step and per series (the other
//! axes), each point the median of its repeats, with CPU and IO per op beside
//! throughput and a sentence on where throughput stops scaling. Whether a size is
//! cached or IO-bound is read from what was measured (device reads per op), never from
//! what was planned.

use crate::format::{cell, fixed, sig};
use crate::stats::median;
use plumb_core::StepStatus;
use plumb_store::StoredRun;
use std::collections::BTreeMap;

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Axis {
    /// Measured threads (clients).
    Threads,
    /// Keys in the database.
    Size,
}

impl Axis {
    /// A short key for data attributes and selectors: `threads`, `size`.
    pub fn key(self) -> &'static str {
        match self {
            Axis::Threads => "threads",
            Axis::Size => "size",
        }
    }

    /// The x-axis label.
    pub fn label(self) -> &'static str {
        match self {
            Axis::Threads => "threads",
            Axis::Size => "size (keys or rows)",
        }
    }
}

/// Device reads per op below which a step is served from memory.
pub const CACHED_READS_OP: f64 = 0.05;
/// Device reads per op from which a step is IO-bound (most ops read the device).
pub const IO_BOUND_READS_OP: f64 = 0.5;

/// One point of a curve: the median of the runs at one x.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The swept value.
    pub x: f64,
    /// The suite's name for it (the size name), or the number.
    pub x_label: String,
    /// Median ops/s.
    pub ops_sec: f64,
    /// Median CPU µs per op.
    pub cpu_us_op: Option<f64>,
    /// Median device reads per op.
    pub rd_op: Option<f64>,
    /// Median device KB read per op.
    pub rkb_op: Option<f64>,
    /// Median p99 latency, µs.
    pub p99_us: Option<f64>,
    /// Median device cache flushes per op ([`crate::metrics::flush_op`]).
    pub flush_op: Option<f64>,
    /// Median transactions per second on a server (a commit each), `None` for an
    /// embedded engine, whose ops are its commits.
    pub tps: Option<f64>,
    /// How many runs the medians come from.
    pub runs: usize,
}

impl Point {
    /// cached, partly cached or IO-bound, from the measured reads per op.
    pub fn regime(&self) -> Option<&'static str> {
        self.rd_op.map(|r| {
            if r < CACHED_READS_OP {
                "cached"
            } else if r < IO_BOUND_READS_OP {
                "partly cached"
            } else {
                "IO-bound"
            }
        })
    }
}

/// A step's throughput against one axis, for one series.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The step name.
    pub step: String,
    /// What is swept.
    pub axis: Axis,
    /// The other axes' values (target, workload, the other sweep), e.g. `leveled`.
    pub series: String,
    /// Points in x order.
    pub points: Vec<Point>,
    /// The step creates and fills tables (a server's load): its ops are rows, and its
    /// transactions are batches of them, never single commits.
    pub load: bool,
}

impl Curve {
    /// Where throughput stops scaling (threads), or how it falls as data outgrows
    /// memory (size), in one sentence.
    pub fn verdict(&self) -> String {
        let p = &self.points;
        let (first, last) = (&p[0], &p[p.len() - 1]);
        match self.axis {
            Axis::Threads => {
                // Scaling stops at the first point that no later point beats by 10%.
                for (i, a) in p.iter().enumerate().take(p.len() - 1) {
                    let rest = &p[i + 1..];
                    if rest.iter().all(|q| q.ops_sec < a.ops_sec * 1.10) {
                        let best = rest
                            .iter()
                            .max_by(|x, y| x.ops_sec.total_cmp(&y.ops_sec))
                            .expect("rest is not empty");
                        return format!(
                            "stops scaling at {} threads ({:.2}× the ops/s of {}): no more threads add 10% (best beyond it: {:+.0}% at {})",
                            a.x_label,
                            a.ops_sec / first.ops_sec,
                            first.x_label,
                            (best.ops_sec / a.ops_sec - 1.0) * 100.0,
                            best.x_label
                        );
                    }
                }
                let eff = (last.ops_sec / first.ops_sec) / (last.x / first.x);
                format!(
                    "still scaling at {} threads: {:.2}× the ops/s of {}, {:.0}% of linear",
                    last.x_label,
                    last.ops_sec / first.ops_sec,
                    first.x_label,
                    eff * 100.0
                )
            }
            Axis::Size => {
                let regime = |q: &Point| {
                    q.regime()
                        .map(|r| format!("{r}, {} reads/op", fixed(q.rd_op, 2)))
                        .unwrap_or_else(|| "reads/op n/a".into())
                };
                let first_io = p
                    .iter()
                    .find(|q| q.rd_op.is_some_and(|r| r >= IO_BOUND_READS_OP));
                format!(
                    "ops/s goes from {} at {} ({}) to {} at {} ({}), {:.2}× ; {}",
                    sig(Some(first.ops_sec), 3),
                    first.x_label,
                    regime(first),
                    sig(Some(last.ops_sec), 3),
                    last.x_label,
                    regime(last),
                    last.ops_sec / first.ops_sec,
                    match first_io {
                        Some(q) => format!("first IO-bound size: {}", q.x_label),
                        None => "no size was IO-bound (measured)".into(),
                    }
                )
            }
        }
    }
}

/// Where a run sits in its suite, read from its stored plan.
struct Cell<'a> {
    target: &'a str,
    workload: &'a str,
    size: Option<&'a str>,
    /// A server family's (rows, client threads) from the plan: the same for every
    /// step of the run. `None` for key-value runs, whose steps say their own.
    family: Option<(u64, u64)>,
}

fn cell_of(r: &StoredRun) -> Option<Cell<'_>> {
    let p = r.run.plan.as_ref()?;
    let w = &p["workload"];
    let family = if let Some(sql) = w.get("sql") {
        let q = &sql["params"];
        Some((q["table_size"].as_u64()?, q["threads"].as_u64()?))
    } else if let Some(ib) = w.get("ib") {
        let q = &ib["params"];
        Some((q["rows"].as_u64()?, q["clients"].as_u64()?))
    } else {
        None
    };
    Some(Cell {
        target: p["target"]["name"].as_str()?,
        workload: w["name"].as_str()?,
        size: p["size"].as_str(),
        family,
    })
}

/// Every curve the runs hold: for each axis that takes two or more values, for each
/// measured step, one curve per series.
pub fn curves(runs: &[StoredRun]) -> Vec<Curve> {
    // (axis, step, series) -> x -> (label, summaries)
    type Key = (Axis, String, String);
    let mut acc: BTreeMap<Key, BTreeMap<u64, (String, Vec<&plumb_core::StepSummary>)>> =
        BTreeMap::new();
    let mut loads = std::collections::BTreeSet::new();
    for r in runs {
        let Some(c) = cell_of(r) else { continue };
        for (s, _) in &r.steps {
            if s.status != StepStatus::Ok || s.kind.is_maintenance() || s.summary.ops == 0 {
                continue;
            }
            if matches!(s.kind, plumb_workloads::Kind::Sql(k) if k.is_load()) {
                loads.insert(s.name.clone());
            }
            let (threads, num) = match c.family {
                Some((rows, clients)) => (Some(clients), Some(rows)),
                None => (s.config["threads"].as_u64(), s.config["num"].as_u64()),
            };
            let (Some(threads), Some(num)) = (threads, num) else {
                continue;
            };
            let size_label = c
                .size
                .map(str::to_string)
                .unwrap_or_else(|| num.to_string());
            let series_threads = format!(
                "{}{}{}",
                c.target,
                if c.workload.is_empty() { "" } else { " · " },
                c.workload
            );
            let with_size = match c.size {
                Some(sz) => format!("{series_threads} · {sz}"),
                None => series_threads.clone(),
            };
            acc.entry((Axis::Threads, s.name.clone(), with_size))
                .or_default()
                .entry(threads)
                .or_insert_with(|| (threads.to_string(), Vec::new()))
                .1
                .push(&s.summary);
            acc.entry((
                Axis::Size,
                s.name.clone(),
                format!("{series_threads} · t{threads}"),
            ))
            .or_default()
            .entry(num)
            .or_insert_with(|| (size_label, Vec::new()))
            .1
            .push(&s.summary);
        }
    }
    acc.into_iter()
        .filter(|(_, xs)| xs.len() >= 2)
        .map(|((axis, step, series), xs)| Curve {
            load: loads.contains(&step),
            step,
            axis,
            series,
            points: xs
                .into_iter()
                .map(|(x, (x_label, ss))| {
                    let med = |f: &dyn Fn(&plumb_core::StepSummary) -> Option<f64>| {
                        let v: Vec<f64> = ss.iter().filter_map(|s| f(s)).collect();
                        median(&v)
                    };
                    Point {
                        x: x as f64,
                        x_label,
                        ops_sec: med(&|s| Some(s.ops_sec)).unwrap_or(0.0),
                        cpu_us_op: med(&|s| s.cpu_us_op),
                        rd_op: med(&|s| s.rd_op),
                        rkb_op: med(&|s| s.rkb_op),
                        p99_us: med(&|s| s.p99_us),
                        flush_op: med(&crate::metrics::flush_op),
                        tps: med(&|s| s.server.as_ref().map(|v| v.tps)),
                        runs: ss.len(),
                    }
                })
                .collect(),
        })
        .collect()
}

/// The header and rows of one curve's table.
pub fn rows(c: &Curve) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        match c.axis {
            Axis::Threads => "threads",
            Axis::Size => "size",
        },
        "ops/s",
        "vs first",
        "cpu_us_op",
        "rd_op",
        "rkb_op",
        "p99 µs",
        "measured",
        "runs",
    ];
    let base = c.points[0].ops_sec;
    let rows = c
        .points
        .iter()
        .map(|p| {
            vec![
                p.x_label.clone(),
                sig(Some(p.ops_sec), 4),
                format!("{:.2}×", p.ops_sec / base),
                fixed(p.cpu_us_op, 2),
                fixed(p.rd_op, 3),
                fixed(p.rkb_op, 2),
                sig(p.p99_us, 3),
                p.regime().unwrap_or("n/a").to_string(),
                p.runs.to_string(),
            ]
        })
        .collect();
    (head, rows)
}

/// The sweeps as Markdown: a table and a verdict per curve.
pub fn markdown(curves: &[Curve]) -> String {
    let mut o = String::new();
    for c in curves {
        o.push_str(&format!(
            "### {} vs {}: {}\n\n",
            cell(&c.step),
            c.axis.label(),
            cell(&c.series)
        ));
        let (head, rows) = rows(c);
        o.push_str(&format!("| {} |\n", head.join(" | ")));
        o.push_str(&format!("|{}\n", "---:|".repeat(head.len())));
        for r in rows {
            let r: Vec<String> = r.iter().map(|x| cell(x)).collect();
            o.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        o.push_str(&format!("\n{}\n\n", cell(&c.verdict())));
    }
    o
}

/// The sweeps as terminal tables.
pub fn text(curves: &[Curve]) -> String {
    let mut o = String::new();
    for c in curves {
        let (head, rows) = rows(c);
        let mut t = crate::format::table_left(&head);
        for r in rows {
            t.add_row(r);
        }
        o.push_str(&format!(
            "{} vs {}: {}\n{t}\n{}\n\n",
            c.step,
            c.axis.label(),
            c.series,
            c.verdict()
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(axis: Axis, pts: &[(f64, f64, Option<f64>)]) -> Curve {
        Curve {
            step: "readrandom".into(),
            axis,
            series: "rocksdb".into(),
            points: pts
                .iter()
                .map(|&(x, y, rd)| Point {
                    x,
                    x_label: format!("{x}"),
                    ops_sec: y,
                    cpu_us_op: None,
                    rd_op: rd,
                    rkb_op: None,
                    p99_us: None,
                    flush_op: None,
                    tps: None,
                    runs: 1,
                })
                .collect(),
            load: false,
        }
    }

    #[test]
    fn scaling_stops_where_a_step_adds_little() {
        let c = curve(
            Axis::Threads,
            &[
                (1.0, 100.0, None),
                (2.0, 190.0, None),
                (4.0, 200.0, None),
                (8.0, 205.0, None),
            ],
        );
        let v = c.verdict();
        assert!(v.starts_with("stops scaling at 2 threads (1.90×"), "{v}");
        // A dip that later points recover from is noise, not the end of scaling.
        let c = curve(
            Axis::Threads,
            &[(1.0, 100.0, None), (2.0, 104.0, None), (4.0, 170.0, None)],
        );
        assert!(
            c.verdict().starts_with("still scaling at 4 threads"),
            "{}",
            c.verdict()
        );
        let c = curve(Axis::Threads, &[(1.0, 100.0, None), (2.0, 180.0, None)]);
        assert!(
            c.verdict().starts_with("still scaling at 2 threads"),
            "{}",
            c.verdict()
        );
    }

    #[test]
    fn sizes_are_labelled_from_measured_reads() {
        let c = curve(
            Axis::Size,
            &[
                (1e4, 300e3, Some(0.0)),
                (1e6, 150e3, Some(0.3)),
                (4e6, 20e3, Some(1.1)),
            ],
        );
        assert_eq!(c.points[0].regime(), Some("cached"));
        assert_eq!(c.points[1].regime(), Some("partly cached"));
        assert_eq!(c.points[2].regime(), Some("IO-bound"));
        let v = c.verdict();
        assert!(v.contains("first IO-bound size: 4000000"), "{v}");
        assert!(curve(Axis::Size, &[(1.0, 1.0, None), (2.0, 1.0, None)])
            .verdict()
            .contains("no size was IO-bound"));
    }
}
