//! The insert benchmark's report: the summary table its users read (inserts, deletes
//! and queries per second, what each cost, the 95% rule), the response-time buckets of
//! inserts and queries, and a per-second chart of each step's inserts and queries.

use crate::format::{esc, fixed, sig};
use crate::svg::{self, Look, Series};
use plumb_core::{IbSummary, StepStatus, IB_BUCKETS_US};
use plumb_store::{StepRecord, StoredRun};
use std::fmt::Write;

/// Whether a run holds insert-benchmark steps.
pub fn has_ib(r: &StoredRun) -> bool {
    r.steps.iter().any(|(s, _)| s.summary.ib.is_some())
}

fn ib_steps(r: &StoredRun) -> impl Iterator<Item = (&StepRecord, &IbSummary)> {
    r.steps
        .iter()
        .filter_map(|(s, _)| s.summary.ib.as_ref().map(|ib| (s, ib)))
}

/// The summary table's columns.
pub const SUMMARY_HEADER: [&str; 17] = [
    "ips", "dps", "qps", "rows/q", "i.p99", "i.max", "q.p99", "q.max", "r/op", "rKB/op", "wKB/i",
    "cpu/op", "csw/op", "dbGB", "rssGB", "rate", "step",
];

/// The 95% rule's verdict: `-` when inserts were not rate-limited.
fn rate_cell(ib: &IbSummary) -> String {
    match (ib.rate_ok, ib.target_ips) {
        (Some(true), Some(t)) => format!("ok {:.0}%", 100.0 * ib.ips / t),
        (Some(false), Some(t)) => format!("FAIL {:.0}%", 100.0 * ib.ips / t),
        _ => "-".into(),
    }
}

/// One row of the summary table per step. Costs are per inserted row for the insert
/// steps and per query for the query steps (the whole window's cost over its queries).
pub fn summary_rows(r: &StoredRun) -> Vec<Vec<String>> {
    ib_steps(r)
        .map(|(s, ib)| {
            let queries = ib.queries > 0;
            // A step that failed the 95% rule has a query rate that is not comparable.
            let qps = if !queries {
                "-".into()
            } else if ib.rate_ok == Some(false) {
                format!("({:.0})", ib.qps)
            } else {
                format!("{:.0}", ib.qps)
            };
            let name = if s.status == StepStatus::Ok {
                s.name.clone()
            } else {
                format!("{} ({})", s.name, s.status)
            };
            let maintenance = s.kind.is_maintenance();
            let cost = |v: Option<f64>| {
                if maintenance {
                    "-".into()
                } else {
                    sig(v, 3)
                }
            };
            vec![
                if ib.inserts > 0 {
                    format!("{:.0}", ib.ips)
                } else if s.summary.ops > 0 {
                    // l.x: rows indexed per second.
                    format!("{:.0}", s.summary.ops_sec)
                } else {
                    "-".into()
                },
                if ib.deletes > 0 {
                    format!("{:.0}", ib.dps)
                } else {
                    "-".into()
                },
                qps,
                ib.rows_query
                    .map(|v| format!("{v:.1}"))
                    .unwrap_or("-".into()),
                sig(ib.insert.p99_us, 3),
                sig(ib.insert.max_us, 3),
                sig(ib.query.p99_us, 3),
                sig(ib.query.max_us, 3),
                cost(ib.rd_op),
                cost(ib.rkb_op),
                cost(ib.wkb_ins),
                cost(ib.cpu_us_op),
                cost(ib.csw_op),
                sig(s.summary.db_gb, 3),
                sig(ib.rss_gb, 3),
                rate_cell(ib),
                name,
            ]
        })
        .collect()
}

/// The buckets' column names: ≤256us … ≤16s, >16s.
pub fn bucket_header() -> Vec<String> {
    let label = |us: u64| match us {
        u if u >= 1_000_000 => format!("≤{}s", u / 1_000_000),
        u if u >= 1_000 => format!("≤{}ms", u / 1_000),
        u => format!("≤{u}us"),
    };
    IB_BUCKETS_US
        .iter()
        .map(|b| label(*b))
        .chain(std::iter::once(format!(
            ">{}s",
            IB_BUCKETS_US[IB_BUCKETS_US.len() - 1] / 1_000_000
        )))
        .collect()
}

/// Response-time buckets: a row for the inserts and one for the queries of each step.
pub fn bucket_rows(r: &StoredRun) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for (s, ib) in ib_steps(r) {
        for (what, l) in [("insert", &ib.insert), ("query", &ib.query)] {
            if l.buckets.is_empty() {
                continue;
            }
            let mut row: Vec<String> = l.buckets.iter().map(u64::to_string).collect();
            row.push(format!("{} {what}", s.name));
            rows.push(row);
        }
    }
    rows
}

/// The terminal report of an insert-benchmark run.
pub fn text(r: &StoredRun) -> String {
    let mut out = String::new();
    let mut t = crate::format::table(&SUMMARY_HEADER);
    for row in summary_rows(r) {
        t.add_row(row);
    }
    out.push_str(&t.to_string());
    if let Some(waits) = crate::explain::waits_text(r) {
        out.push_str("\n\n");
        out.push_str(waits.trim_end());
    }
    out.push_str(
        "\n\nresponse time: commits (from their intended start when rate-limited) and \
         queries per bucket\n",
    );
    let h = bucket_header();
    let mut head: Vec<&str> = h.iter().map(String::as_str).collect();
    head.push("step");
    let mut b = crate::format::table(&head);
    for row in bucket_rows(r) {
        b.add_row(row);
    }
    out.push_str(&b.to_string());
    out.push('\n');
    let mut notes = Vec::new();
    for (s, ib) in ib_steps(r) {
        if let Some(e) = &s.error {
            notes.push(format!("{}: {e}", s.name));
        }
        if let Some(q) = &ib.ins_qos {
            if ib.target_ips.is_some() {
                notes.push(format!(
                    "{}: inserts/s per second min {:.0}, p5 {:.0}, median {:.0} (cv {:.2})",
                    s.name, q.min, q.p5, q.p50, q.cv
                ));
            }
        }
        if let Some(d) = s.config.get("did").and_then(|v| v.as_str()) {
            notes.push(format!("{}: {d} (unmeasured)", s.name));
        }
        if let (Some(c), false) = (ib.rows_counted, s.kind.is_maintenance()) {
            if c == ib.rows_expected {
                notes.push(format!("{}: {c} rows, as counted by the engine", s.name));
            }
        }
    }
    let noise: Vec<String> = ib_steps(r)
        .filter(|(s, _)| s.summary.steal_pct.is_some())
        .map(|(s, _)| {
            format!(
                "{} {}/{}",
                s.name,
                fixed(s.summary.steal_pct, 1),
                fixed(s.summary.outside_cpu_pct, 1)
            )
        })
        .collect();
    if !noise.is_empty() {
        notes.push(format!(
            "host noise per step, steal% / outside% of the machine's CPU: {}",
            noise.join(", ")
        ));
    }
    notes.extend(
        crate::warnings::run_noise(r)
            .into_iter()
            .map(|w| format!("warning: {w}")),
    );
    // On a server, plumb's own CPU is the client's: what the load generator cost
    // beside what the server spent (with an embedded engine they are one process).
    if r.run.options.contains_key("server.url") {
        let own: Vec<String> = ib_steps(r)
            .filter(|(s, _)| !s.kind.is_maintenance() && s.summary.ops > 0)
            .map(|(s, _)| format!("{} {}", s.name, sig(s.summary.cpu_us_op, 3)))
            .collect();
        notes.push(format!("plumb's own CPU per op, µs: {}", own.join(", ")));
    }
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out.push_str(
        "\nips/dps/qps: rows inserted, deleted, queries per second; (qps) in parentheses: \
         the step failed the 95% rule, its query rate is not comparable. i.* insert commits, \
         q.* queries, µs. Costs per inserted row in l.i*, per query in q* steps; cpu and csw \
         of the server's processes (plumb's own with an embedded engine).\n",
    );
    out
}

/// The HTML section: per run, the summary and bucket tables and each step's
/// per-second inserts and queries.
pub fn html_section(o: &mut String, runs: &[StoredRun]) {
    let runs: Vec<&StoredRun> = runs.iter().filter(|r| has_ib(r)).collect();
    if runs.is_empty() {
        return;
    }
    o.push_str(r#"<h2 id="ibench">Insert benchmark</h2><p class="note">Costs per inserted row in l.i*, per query in the q* steps. A query rate in parentheses belongs to a step that kept less than 95% of its insert rate: not comparable. Insert latency counts from each commit's intended start when inserts are rate-limited.</p>"#);
    let table = |o: &mut String, head: &[&str], rows: Vec<Vec<String>>, attr: &str| {
        let _ = write!(o, r#"<table data-table="{attr}"><thead><tr>"#);
        for h in head {
            let _ = write!(o, "<th>{}</th>", esc(h));
        }
        o.push_str("</tr></thead><tbody>");
        for row in rows {
            o.push_str("<tr>");
            for c in row {
                let _ = write!(o, "<td>{}</td>", esc(&c));
            }
            o.push_str("</tr>");
        }
        o.push_str("</tbody></table>");
    };
    for r in runs {
        let _ = write!(
            o,
            "<h3>run {} · {} {}</h3>",
            r.run.id,
            esc(&r.run.engine),
            esc(&r.run.engine_version)
        );
        table(o, &SUMMARY_HEADER, summary_rows(r), "ib-summary");
        let h = bucket_header();
        let mut head: Vec<&str> = h.iter().map(String::as_str).collect();
        head.push("step");
        table(o, &head, bucket_rows(r), "ib-buckets");
        let looks = [
            Look {
                label: "inserted rows/s".into(),
                colour: svg::PALETTE[0],
                dash: "",
            },
            Look {
                label: "queries/s".into(),
                colour: svg::PALETTE[1],
                dash: "",
            },
        ];
        for (s, ib) in ib_steps(r) {
            if ib.seconds.is_empty() {
                continue;
            }
            let per = |f: &dyn Fn(&plumb_core::IbSecond) -> u64| -> Vec<(f64, Option<f64>)> {
                ib.seconds
                    .iter()
                    .map(|x| (x.t, (x.secs > 0.0).then(|| f(x) as f64 / x.secs)))
                    .collect()
            };
            let mut series = vec![Series {
                look: &looks[0],
                points: per(&|x| x.ins),
            }];
            if ib.queries > 0 {
                series.push(Series {
                    look: &looks[1],
                    points: per(&|x| x.queries),
                });
            }
            let title = format!("run {} {}: per second", r.run.id, s.name);
            o.push_str("<figure>");
            o.push_str(&svg::line_chart(
                &[("data-chart", "ib-seconds"), ("data-step", &s.name)],
                &title,
                &series,
                "seconds",
                "per second",
                740.0,
            ));
            o.push_str("</figure>");
        }
    }
}
