//! The terminal report: a throughput/latency table in benchmark.sh's column order, a
//! per-op cost and QoS table, and notes for what tables cannot hold.

use crate::format::{sig, table, table_left};
use crate::reporter::Reporter;
use comfy_table::Table;
use plumb_store::StoredRun;
use std::fmt::Write as _;

/// Plain-text tables for a terminal or a log file.
#[derive(Debug, Default)]
pub struct TextReporter;

/// A run's first lines: who ran what, when, and the host checks it flagged.
fn run_header(stored: &StoredRun) -> String {
    let r = &stored.run;
    let mut out = format!(
        "run {} ({}) · {} {} · plumb {}{} · started {}{}\n\n",
        r.id,
        r.status,
        r.engine,
        r.engine_version,
        r.plumb_version,
        r.git_hash
            .as_deref()
            .map(|h| format!(" ({h})"))
            .unwrap_or_default(),
        r.started_at,
        r.tag
            .as_deref()
            .map(|t| format!(" · tag {t}"))
            .unwrap_or_default(),
    );

    if let Some(flagged) = r
        .host
        .as_ref()
        .map(flagged_checks)
        .filter(|f| !f.is_empty())
    {
        out.push_str(&format!(
            "host checks: {} (`plumb host` gives reasons and fixes)\n\n",
            flagged.join(", ")
        ));
    }
    out
}

/// The two tables of a run's steps (the main figures and the costs per op, in the
/// columns `text_main` and `text_cost` name) and the notes its steps leave.
fn step_tables(
    stored: &StoredRun,
    header: &dyn Fn(&[&str]) -> Vec<&'static str>,
    (text_main, text_cost): (&[&str], &[&str]),
) -> (Table, Table, Vec<String>) {
    use crate::metrics::metric;
    let mut main = table(&header(text_main));
    let mut cost = table(&header(text_cost));
    let mut notes = Vec::new();
    for (st, _) in &stored.steps {
        let s = &st.summary;
        let maintenance = st.kind.is_maintenance();
        let name = if st.status == plumb_core::StepStatus::Ok {
            st.name.clone()
        } else {
            format!("{} ({})", st.name, st.status)
        };
        // Maintenance steps have no ops: only the figures that mean something
        // without them (compaction written, size) are shown.
        let row = |ids: &[&str], dash_unless_maintenance: bool| -> Vec<String> {
            ids.iter()
                .map(|id| metric(id))
                .map(|m| {
                    if dash_unless_maintenance && maintenance && !m.maintenance {
                        "-".to_string()
                    } else {
                        m.show(s)
                    }
                })
                .chain(std::iter::once(name.clone()))
                .collect()
        };
        main.add_row(row(text_main, true));
        cost.add_row(row(text_cost, false));
        if let Some(w) = &s.writer {
            notes.push(format!(
                "{}: background writer {:.2} MB/s of {:.2} asked ({} writes, p50 {} µs, p99 {} µs from intended start)",
                st.name,
                w.mb_sec,
                w.target_mb_sec,
                w.ops,
                sig(Some(w.p50_us), 3),
                sig(Some(w.p99_us), 3)
            ));
        }
        if s.verify.not_found > 0 {
            notes.push(format!(
                "{}: {} keys not found (legitimately absent)",
                st.name, s.verify.not_found
            ));
        }
        if let Some(e) = &st.error {
            notes.push(format!("{}: {}", st.name, e));
        }
        notes.extend(crate::window::step_line(&st.name, s));
    }
    (main, cost, notes)
}

/// The evidence after the tables, each section where the run has it: latency per
/// kind of op, the open loop, the threads profile, waits, the device, the LSM and the
/// engine's own counters.
fn evidence(stored: &StoredRun, out: &mut String) {
    if let Some(by_op) = by_op_text(stored) {
        out.push('\n');
        out.push_str(&by_op);
    }
    if let Some(open) = open_loop_text(stored) {
        out.push('\n');
        out.push_str(&open);
    }
    if let Some(faults) = crate::faults::text(stored) {
        out.push('\n');
        out.push_str(&faults);
    }
    if let Some(clients) = threads_profile_text(stored) {
        out.push('\n');
        out.push_str(&clients);
    }
    if let Some(waits) = crate::explain::waits_text(stored) {
        out.push('\n');
        out.push_str(&waits);
    }
    if let Some(device) = crate::device::text(stored) {
        out.push('\n');
        out.push_str(&device);
    }
    if let Some(lsm) = crate::lsm::text(stored) {
        out.push('\n');
        out.push_str(&lsm);
    }
    if let Some(engine) = crate::explain::engine_perf_text(stored) {
        out.push('\n');
        out.push_str(&engine);
    }
}

impl Reporter for TextReporter {
    fn render(&self, stored: &StoredRun) -> String {
        let mut out = run_header(stored);
        if crate::durability::has(stored) {
            let runs = std::slice::from_ref(stored);
            out.push_str(&crate::durability::text(runs).unwrap_or_default());
            for (st, _) in &stored.steps {
                if let Some(e) = &st.error {
                    out.push_str(&format!("{}: {e}\n", st.name));
                }
            }
            return out;
        }
        if crate::ibench::has_ib(stored) {
            out.push_str(&crate::ibench::text(stored));
            if let Some(device) = crate::device::text(stored) {
                out.push('\n');
                out.push_str(&device);
            }
            return out;
        }
        use crate::metrics::{metric, TEXT_COST, TEXT_MAIN, TEXT_SQL_COST, TEXT_SQL_MAIN};
        let sql = stored
            .steps
            .iter()
            .any(|(s, _)| matches!(s.kind, plumb_store::Kind::Sql(_)));
        let (text_main, text_cost) = if sql {
            (TEXT_SQL_MAIN, TEXT_SQL_COST)
        } else {
            (TEXT_MAIN, TEXT_COST)
        };
        let header = |ids: &[&str]| -> Vec<&'static str> {
            ids.iter()
                .map(|id| metric(id).short)
                .chain(std::iter::once("test"))
                .collect()
        };
        let (main, cost, mut notes) = step_tables(stored, &header, (text_main, text_cost));
        if let Some(n) = crate::window::note(&[stored]) {
            out.push_str(&n);
            out.push_str("\n\n");
        }
        // The answer first, one line a step; the tables after it are the evidence.
        let said = crate::explain::lines(stored);
        if !said.is_empty() {
            out.push_str(if sql {
                "where a query's time went (per client)\n"
            } else {
                "where an op's time went (per thread)\n"
            });
            for l in said {
                out.push_str(&l);
                out.push('\n');
            }
            out.push('\n');
        }
        out.push_str(&main.to_string());
        out.push_str(if sql {
            "\n\nper query and QoS (interval queries/s over the 1-second ticks)\n"
        } else {
            "\n\nper op and QoS (interval ops/s over the 1-second ticks)\n"
        });
        out.push_str(&cost.to_string());
        out.push('\n');
        evidence(stored, &mut out);
        notes.extend(crate::warnings::skew_with_writer(stored));
        notes.extend(
            crate::warnings::readahead_over_max_sectors(stored).map(|w| format!("warning: {w}")),
        );
        notes.extend(
            crate::warnings::run_noise(stored)
                .into_iter()
                .map(|w| format!("warning: {w}")),
        );
        let hw = stored.steps.iter().find_map(|(s, _)| {
            s.summary
                .hw
                .unsupported
                .clone()
                .filter(|_| s.summary.ops > 0)
        });
        if let Some(why) = hw {
            notes.push(format!("hardware counters unavailable: {why}"));
        }
        if !notes.is_empty() {
            out.push('\n');
            for n in notes {
                out.push_str(&n);
                out.push('\n');
            }
        }
        out.push_str(
            "\nlatency in µs; GB = 2^30 bytes; n/a = this host or engine cannot give it\n",
        );
        out
    }
}

/// Latency per kind of operation of the steps that mix kinds (YCSB's read, update …;
/// TPC-C's transactions, whose new-order per minute is NOPM); `None` when none does.
fn by_op_text(stored: &StoredRun) -> Option<String> {
    let mut t = table(&[
        "ops", "per_sec", "per_min", "p50", "p99", "p99.9", "max", "op", "test",
    ]);
    let mut any = false;
    for (st, _) in &stored.steps {
        let s = &st.summary;
        for (op, l) in &s.by_op {
            any = true;
            let per_sec = (s.secs > 0.0).then(|| l.ops as f64 / s.secs);
            t.add_row(vec![
                l.ops.to_string(),
                sig(per_sec, 4),
                sig(per_sec.map(|r| r * 60.0), 4),
                sig(l.p50_us, 3),
                sig(l.p99_us, 3),
                sig(l.p999_us, 3),
                sig(l.max_us, 3),
                op.clone(),
                st.name.clone(),
            ]);
        }
    }
    any.then(|| format!("by kind of operation (TPC-C: new-order per_min is NOPM)\n{t}\n"))
}

/// The open-loop steps of a run: the rate offered and served, response time (from each
/// op's intended start) beside service time (from its actual start), how late ops
/// started and the backlog left; `None` when every step ran closed-loop.
fn open_loop_text(stored: &StoredRun) -> Option<String> {
    let mut t = table(&[
        "target/s", "served/s", "resp_p99", "svc_p50", "svc_p99", "svc_max", "lag_ms", "late%",
        "backlog", "test",
    ]);
    let mut any = false;
    let mut profiles = String::new();
    for (st, ivs) in &stored.steps {
        let s = &st.summary;
        let Some(o) = &s.open_loop else { continue };
        any = true;
        if let Some(p) = &o.profile {
            let _ = writeln!(
                profiles,
                "{}: offered {p} (target/s is its mean; each second's is in --intervals)",
                st.name
            );
            profiles.push_str(&phase_table(&st.name, p, ivs));
        }
        let served = s.server.as_ref().map_or(s.ops_sec, |x| x.tps);
        t.add_row(vec![
            sig(Some(o.target_ops_sec), 4),
            sig(Some(served), 4),
            sig(s.p99_us, 3),
            sig(o.service.p50_us, 3),
            sig(o.service.p99_us, 3),
            sig(o.service.max_us, 3),
            sig(Some(o.lag_max_ms), 3),
            sig(Some(o.late_pct), 2),
            o.backlog_ops.to_string(),
            st.name.clone(),
        ]);
    }
    any.then(|| {
        format!(
            "open loop: response time counts from each op's intended start, service time from \
             its actual start; backlog = ops due but never started\n{t}\n{profiles}"
        )
    })
}

/// A step's phases under its profile (rate or threads): what each asked for beside
/// what it served; empty when the profile does not parse.
fn phase_table(step: &str, profile: &str, ivs: &[plumb_core::Interval]) -> String {
    let Some(rows) = crate::phases::phase_rows(profile, ivs) else {
        return String::new();
    };
    let threads = rows.iter().any(|r| r.threads.is_some());
    let asked = if threads { "threads" } else { "offered/s" };
    let mut pt = table(&["from_s", "secs", asked, "served/s", "worst_p99", "phase"]);
    for r in rows {
        pt.add_row(vec![
            format!("{:.0}", r.start),
            format!("{:.0}", r.secs),
            sig(if threads { r.threads } else { r.offered }, 4),
            sig(Some(r.served), 4),
            sig(r.p99_worst_us, 3),
            r.phase,
        ]);
    }
    format!("{step} phase by phase (worst_p99: its worst second's p99 response, µs)\n{pt}\n")
}

/// The closed-loop steps run under a threads profile, phase by phase; `None` when no
/// step had one.
fn threads_profile_text(stored: &StoredRun) -> Option<String> {
    let mut out = String::new();
    for (st, ivs) in &stored.steps {
        let Some(p) = &st.summary.threads_profile else {
            continue;
        };
        let _ = writeln!(
            out,
            "{}: clients {p} (each second's count is in --intervals)",
            st.name
        );
        out.push_str(&phase_table(&st.name, p, ivs));
    }
    (!out.is_empty()).then_some(out)
}

/// `verdict id` for every host check that warned or failed, from a stored snapshot.
fn flagged_checks(host: &plumb_store::HostSnapshot) -> Vec<String> {
    host.checks
        .iter()
        .filter(|c| c.verdict >= plumb_host::Verdict::Warn)
        .map(|c| format!("{} {}", c.verdict.as_str(), c.id))
        .collect()
}

/// The comparison as terminal tables: warnings, absolute ops/s, then each figure
/// relative to the base ("Relative to: base"), `~` marking insignificant differences.
/// Server counters only some versions have get one line, not a table each: between
/// engines they are most of the counters and none can be read against the other side.
pub fn comparison_text(c: &crate::compare::Comparison) -> String {
    use crate::compare::ratio_text;
    let mut out = String::new();
    for w in &c.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if !c.warnings.is_empty() {
        out.push('\n');
    }
    let mut h: Vec<String> = vec!["test".into()];
    h.extend(c.versions.iter().map(|v| format!("{v} ops/s")));
    let hr: Vec<&str> = h.iter().map(String::as_str).collect();
    let mut t = table_left(&hr);
    for (i, step) in c.steps.iter().enumerate() {
        let mark = if crate::compare::noisy(c, step) {
            " *"
        } else {
            ""
        };
        let mut r = vec![format!("{step}{mark}")];
        r.extend(c.ops_sec.rows[i].iter().map(|cl| match cl.median {
            Some(m) => format!("{m:.0} (n={})", cl.n),
            None => "n/a".into(),
        }));
        t.add_row(r);
    }
    out.push_str(&t.to_string());
    out.push('\n');
    for n in &c.noise {
        out.push_str(&format!("* {}\n", n.note));
    }
    for f in &c.floors {
        out.push_str(&format!("floor: {}\n", f.note));
    }
    for r in &c.reach {
        out.push_str(&format!("reach: {}\n", r.note));
    }
    if !c.options_differ.is_empty() {
        out.push_str("\noptions that differ\n");
        let mut h: Vec<String> = vec!["option".into()];
        h.extend(c.versions.iter().cloned());
        let hr: Vec<&str> = h.iter().map(String::as_str).collect();
        let mut t = table_left(&hr);
        for d in &c.options_differ {
            let mut r = vec![d.key.clone()];
            // A nested option's whole value is in the JSON; a terminal gets its head.
            r.extend(d.values.iter().map(|v| match v {
                None => "-".into(),
                Some(v) if v.chars().count() > 40 => {
                    format!("{}…", v.chars().take(39).collect::<String>())
                }
                Some(v) => v.clone(),
            }));
            t.add_row(r);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
    if c.versions.len() > 1 {
        let mut tables = vec![&c.ops_sec];
        tables.extend(c.costs.iter());
        for tb in tables {
            out.push_str(&format!(
                "\n{} relative to: {} (~ = not significant; 95% interval in parentheses)\n",
                tb.metric, c.versions[0]
            ));
            let mut h: Vec<String> = vec!["test".into()];
            h.extend(c.versions[1..].iter().cloned());
            let hr: Vec<&str> = h.iter().map(String::as_str).collect();
            let mut t = table_left(&hr);
            for (i, step) in c.steps.iter().enumerate() {
                let mut r = vec![step.clone()];
                r.extend(tb.rows[i][1..].iter().map(ratio_text));
                t.add_row(r);
            }
            out.push_str(&t.to_string());
            out.push('\n');
        }
        if !c.groups.is_empty() {
            out.push_str(&format!(
                "\nrelative QPS by group, relative to: {} (median, min-max over the group's microbenchmarks)\n",
                c.versions[0]
            ));
            let mut t = table_left(&["group", "version", "n", "median", "min", "max"]);
            for g in &c.groups {
                t.add_row(vec![
                    g.group.clone(),
                    g.version.clone(),
                    g.n.to_string(),
                    format!("{:.2}", g.median),
                    format!("{:.2}", g.min),
                    format!("{:.2}", g.max),
                ]);
            }
            out.push_str(&t.to_string());
            out.push('\n');
        }
        perf_tables(c, &mut out);
        phase_tables(c, &mut out);
        server_counter_tables(c, &mut out);
    }
    out
}

/// The perf counter tables of a comparison: each counter per op relative to the base,
/// marked where it moved past the rule, with its notes and what each version's
/// counters read as.
fn perf_tables(c: &crate::compare::Comparison, out: &mut String) {
    for p in &c.perf {
        out.push_str(&format!(
            "\n{}\n",
            crate::perf_table::title(p, &c.versions[0])
        ));
        let mut h: Vec<String> = vec!["counter".into(), format!("{} figure", c.versions[0])];
        h.extend(c.versions.iter().cloned());
        let hr: Vec<&str> = h.iter().map(String::as_str).collect();
        let mut t = table_left(&hr);
        for row in &p.rows {
            let mut r = vec![row.name.clone(), crate::format::sig(row.base, 3)];
            r.extend(
                row.rel
                    .iter()
                    .zip(&row.marked)
                    .map(|(x, m)| crate::perf_table::cell(*x, *m)),
            );
            t.add_row(r);
        }
        out.push_str(&t.to_string());
        out.push('\n');
        out.push_str(&format!(
            "{}.\n",
            crate::perf_table::rule(crate::perf_table::MARK)
        ));
        for n in crate::perf_table::notes(p, &c.versions) {
            out.push_str(&format!("  {n}\n"));
        }
        if p.no_pmu {
            out.push_str(&format!("{}\n", crate::perf_table::NO_PMU));
        } else {
            for rd in &p.readings {
                out.push_str(&format!("{}: {}\n", rd.version, rd.explanation));
            }
        }
    }
}

/// A rate profile's steps phase by phase: each version's served rate, its ratio to
/// the base, and its worst second's p99.
fn phase_tables(c: &crate::compare::Comparison, out: &mut String) {
    for pc in &c.phases {
        out.push_str(&format!(
            "\n{} phase by phase under {} (served ops/s, and each version's worst second's p99 µs)\n",
            pc.step, pc.profile
        ));
        let mut h: Vec<String> = vec!["phase".into()];
        h.extend(c.versions.iter().map(|v| format!("{v} served/s")));
        h.extend(
            c.versions[1..]
                .iter()
                .map(|v| format!("{v}/{}", c.versions[0])),
        );
        h.extend(c.versions.iter().map(|v| format!("{v} p99")));
        let hr: Vec<&str> = h.iter().map(String::as_str).collect();
        let mut t = table_left(&hr);
        for (i, ph) in pc.phase.iter().enumerate() {
            let served = &pc.served[i];
            let mut r = vec![ph.clone()];
            r.extend(served.iter().map(|s| crate::format::sig(*s, 4)));
            r.extend(served[1..].iter().map(|s| match (s, served[0]) {
                (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
                _ => "-".into(),
            }));
            r.extend(pc.p99_worst_us[i].iter().map(|s| crate::format::sig(*s, 3)));
            t.add_row(r);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
}

/// The server counters every version has, per query relative to the base (the seeds'
/// method), most moved first.
fn server_counter_tables(c: &crate::compare::Comparison, out: &mut String) {
    if !c.server_counters_shown.is_empty() {
        out.push_str(&format!(
            "\nserver counters every version has: {}, most moved per query first\n",
            c.server_counters_shown.len()
        ));
    }
    if let Some(line) = crate::compare::left_out_line(c) {
        out.push_str(&format!("\n{line}\n"));
    }
    for tb in c
        .server_counters_shown
        .iter()
        .filter_map(|&i| c.server_counters.get(i))
    {
        out.push_str(&format!(
            "\nserver {} relative to: {} (the seeds' method: a counter per query beside the relative QPS)\n",
            tb.metric, c.versions[0]
        ));
        let mut h: Vec<String> = vec!["test".into(), format!("{} /query", c.versions[0])];
        h.extend(c.versions[1..].iter().cloned());
        let hr: Vec<&str> = h.iter().map(String::as_str).collect();
        let mut t = table_left(&hr);
        for (i, step) in c.steps.iter().enumerate() {
            let mut r = vec![step.clone(), crate::format::sig(tb.rows[i][0].median, 3)];
            r.extend(tb.rows[i][1..].iter().map(crate::compare::ratio_text));
            t.add_row(r);
        }
        out.push_str(&t.to_string());
        out.push('\n');
    }
}
