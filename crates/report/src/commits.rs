//! Durable commit scaling: commits per second against concurrent committers, set beside
//! the disk's fsync ceiling, so group commit can be seen rather than guessed.
//!
//! A commit that must reach stable media costs a device cache flush. One committer can
//! therefore commit no faster than the disk flushes (`plumb probe disk` measures that
//! rate as `disk.commit_per_sec.t1`: a 4 KiB write and fdatasync, one at a time). With
//! more committers an engine that groups commits (RocksDB's write group, PostgreSQL's
//! WAL flush of every waiting commit, InnoDB's and MyRocks' group commit) makes several
//! commits durable with one flush, and commits/s climbs above the fsync ceiling while
//! device flushes per commit fall below one. An engine that does not group stays at
//! the ceiling. Both figures are measured: commits/s by plumb, flushes by the kernel's
//! `/proc/diskstats` (kernels 5.5+).

use crate::format::{cell, fixed, sig};
use crate::sweep::{Axis, Curve, Point};
use plumb_store::CeilingRecord;

/// Device flushes per commit at the fewest committers from which a curve is read as
/// durable commits: a synced commit flushes at least once (fdatasync of the log), a
/// commit left to the OS almost never does.
pub const DURABLE_FLUSH_OP: f64 = 0.5;

/// Commits per device flush from which commits are said to be grouped: well above the
/// one flush per commit of a committer on its own.
pub const GROUPED: f64 = 1.5;

/// The disk's fsync ceiling: one committer's 4 KiB write + fdatasync rate.
pub const FSYNC_CEILING: &str = "disk.commit_per_sec.t1";

/// The fsync ceiling of a host: its value and the probe run that measured it.
pub fn fsync_ceiling(ceilings: &[CeilingRecord]) -> Option<(f64, i64)> {
    ceilings
        .iter()
        .find(|c| c.ceiling.name == FSYNC_CEILING)
        .map(|c| (c.ceiling.value, c.run_id))
}

/// Commits per second at a point: transactions on a server, ops on an embedded engine.
fn commits(p: &Point) -> f64 {
    p.tps.unwrap_or(p.ops_sec)
}

/// Device flushes per commit at a point.
fn flush_per_commit(p: &Point) -> Option<f64> {
    let f = p.flush_op? * p.ops_sec;
    let c = commits(p);
    (c > 0.0).then(|| f / c)
}

/// The curves that are durable commits against committers: swept over threads, not a
/// load, with at least [`DURABLE_FLUSH_OP`] device flushes per commit at the fewest
/// committers.
pub fn commit_curves(curves: &[Curve]) -> Vec<&Curve> {
    curves
        .iter()
        .filter(|c| c.axis == Axis::Threads && !c.load)
        .filter(|c| {
            c.points
                .first()
                .and_then(flush_per_commit)
                .is_some_and(|f| f >= DURABLE_FLUSH_OP)
        })
        .collect()
}

/// The header and rows of one commit curve's table.
pub fn rows(c: &Curve, ceiling: Option<(f64, i64)>) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let head = vec![
        "committers",
        "commits/s",
        "vs first",
        "flushes/s",
        "commits/flush",
        "× fsync ceiling",
        "p99 µs",
    ];
    let base = commits(&c.points[0]);
    let rows = c
        .points
        .iter()
        .map(|p| {
            let per = flush_per_commit(p);
            vec![
                p.x_label.clone(),
                sig(Some(commits(p)), 4),
                format!("{:.2}×", commits(p) / base),
                sig(p.flush_op.map(|f| f * p.ops_sec), 4),
                fixed(per.filter(|f| *f > 0.0).map(|f| 1.0 / f), 2),
                match ceiling {
                    Some((v, _)) if v > 0.0 => format!("{:.2}×", commits(p) / v),
                    _ => "n/a".into(),
                },
                sig(p.p99_us, 3),
            ]
        })
        .collect();
    (head, rows)
}

/// Where the fsync ceiling comes from, or how to measure it.
pub fn ceiling_line(ceiling: Option<(f64, i64)>) -> String {
    match ceiling {
        Some((v, run)) => format!(
            "fsync ceiling: {} commits/s, one committer's 4 KiB write + fdatasync (probe run {run}, {FSYNC_CEILING})",
            sig(Some(v), 4)
        ),
        None => "fsync ceiling: not measured on this host; `plumb probe disk --dir DIR --tests commit` measures it on the data's device".into(),
    }
}

/// One sentence on whether commits were grouped, read from the most committers.
pub fn verdict(c: &Curve, ceiling: Option<(f64, i64)>) -> String {
    let (first, last) = (&c.points[0], &c.points[c.points.len() - 1]);
    let per_flush = flush_per_commit(last).filter(|f| *f > 0.0).map(|f| 1.0 / f);
    let vs = match ceiling {
        Some((v, _)) if v > 0.0 => format!(", {:.2}× the fsync ceiling", commits(last) / v),
        _ => String::new(),
    };
    match per_flush {
        Some(k) if k >= GROUPED => format!(
            "group commit: at {} committers {:.1} commits share each device flush; {} commits/s, {:.2}× one committer's{vs}",
            last.x_label,
            k,
            sig(Some(commits(last)), 4),
            commits(last) / commits(first)
        ),
        Some(k) => format!(
            "no group commit seen: at {} committers each flush carries {:.2} commits, so commits/s ({}) stays bound by the flush rate{vs}",
            last.x_label,
            k,
            sig(Some(commits(last)), 4)
        ),
        None => format!(
            "at {} committers the device counted no flushes: commits/s ({}){vs}",
            last.x_label,
            sig(Some(commits(last)), 4)
        ),
    }
}

/// The commit curves as terminal tables; empty when there are none.
pub fn text(curves: &[Curve], ceiling: Option<(f64, i64)>) -> String {
    let cs = commit_curves(curves);
    if cs.is_empty() {
        return String::new();
    }
    let mut o = format!(
        "durable commits vs committers\n{}\n\n",
        ceiling_line(ceiling)
    );
    for c in cs {
        let (head, rows) = rows(c, ceiling);
        let mut t = crate::format::table_left(&head);
        for r in rows {
            t.add_row(r);
        }
        o.push_str(&format!(
            "{}: {}\n{t}\n{}\n\n",
            c.step,
            c.series,
            verdict(c, ceiling)
        ));
    }
    o
}

/// The commit curves as Markdown; empty when there are none.
pub fn markdown(curves: &[Curve], ceiling: Option<(f64, i64)>) -> String {
    let cs = commit_curves(curves);
    if cs.is_empty() {
        return String::new();
    }
    let mut o = format!(
        "## Durable commits vs committers\n\n{}\n\n",
        cell(&ceiling_line(ceiling))
    );
    for c in cs {
        o.push_str(&format!("### {}: {}\n\n", cell(&c.step), cell(&c.series)));
        let (head, rows) = rows(c, ceiling);
        o.push_str(&format!("| {} |\n", head.join(" | ")));
        o.push_str(&format!("|{}\n", "---:|".repeat(head.len())));
        for r in rows {
            let r: Vec<String> = r.iter().map(|x| cell(x)).collect();
            o.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        o.push_str(&format!("\n{}\n\n", cell(&verdict(c, ceiling))));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: u64, ops: f64, flush_op: Option<f64>, tps: Option<f64>) -> Point {
        Point {
            x: x as f64,
            x_label: x.to_string(),
            ops_sec: ops,
            cpu_us_op: None,
            rd_op: None,
            rkb_op: None,
            p99_us: Some(900.0),
            flush_op,
            tps,
            runs: 1,
        }
    }

    fn curve(axis: Axis, points: Vec<Point>) -> Curve {
        Curve {
            step: "fillrandom".into(),
            axis,
            series: "rocksdb-sync".into(),
            points,
            load: false,
        }
    }

    #[test]
    fn grouped_commits_are_read_against_the_ceiling() {
        // 1 committer: 1000 commits/s, 2 flushes each (log + journal); 8 committers:
        // 4000 commits/s with 1000 flushes/s, so 4 commits share a flush.
        let c = curve(
            Axis::Threads,
            vec![
                point(1, 1000.0, Some(2.0), None),
                point(8, 4000.0, Some(0.25), None),
            ],
        );
        let ceiling = Some((1250.0, 7));
        assert_eq!(commit_curves(std::slice::from_ref(&c)).len(), 1);
        let (_, rows) = rows(&c, ceiling);
        assert_eq!(rows[0][4], "0.50");
        assert_eq!(rows[1][3], "1000");
        assert_eq!(rows[1][4], "4.00");
        assert_eq!(rows[1][5], "3.20×");
        let v = verdict(&c, ceiling);
        assert!(
            v.starts_with("group commit: at 8 committers 4.0 commits share"),
            "{v}"
        );
        assert!(
            v.contains("4.00× one committer's, 3.20× the fsync ceiling"),
            "{v}"
        );
        let t = text(std::slice::from_ref(&c), ceiling);
        assert!(t.contains("probe run 7"), "{t}");
    }

    #[test]
    fn a_server_counts_transactions_and_an_ungrouped_engine_is_said_so() {
        // A server: 3 queries per transaction, one flush per transaction throughout.
        let c = curve(
            Axis::Threads,
            vec![
                point(1, 300.0, Some(1.0 / 3.0), Some(100.0)),
                point(4, 330.0, Some(1.0 / 3.0), Some(110.0)),
            ],
        );
        assert_eq!(commit_curves(std::slice::from_ref(&c)).len(), 1);
        let v = verdict(&c, None);
        assert!(v.starts_with("no group commit seen"), "{v}");
        assert!(v.contains("1.00 commits"), "{v}");
        assert!(text(std::slice::from_ref(&c), None).contains("not measured on this host"));
    }

    #[test]
    fn unsynced_writes_and_size_sweeps_are_not_commit_curves() {
        let nosync = curve(
            Axis::Threads,
            vec![
                point(1, 90000.0, Some(0.001), None),
                point(4, 200000.0, Some(0.0005), None),
            ],
        );
        let unknown = curve(
            Axis::Threads,
            vec![point(1, 1.0, None, None), point(2, 2.0, None, None)],
        );
        let size = curve(
            Axis::Size,
            vec![
                point(1000, 1000.0, Some(1.0), None),
                point(2000, 1000.0, Some(1.0), None),
            ],
        );
        let load = Curve {
            load: true,
            ..curve(
                Axis::Threads,
                vec![
                    point(1, 20000.0, Some(0.01), Some(100.0)),
                    point(2, 20000.0, Some(0.01), Some(100.0)),
                ],
            )
        };
        assert!(commit_curves(&[nosync, unknown, size, load]).is_empty());
        assert_eq!(text(&[], None), "");
        assert_eq!(markdown(&[], None), "");
    }
}
