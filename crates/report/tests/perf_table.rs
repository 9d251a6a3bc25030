//! Seed 002's perf stat table in `plumb compare`, from recorded perf output: a base read
//! from perf stat's own CSV (a bare-metal x86 server, 22 events, multiplexed), and a new
//! version that is the same recording with known events scaled, so every ratio, mark and
//! verdict has an answer computed by hand.

mod fixtures;

use fixtures::{fig, run, version};
use plumb_core::{HwCounters, ServerCosts};
use plumb_probes::perfstat;
use plumb_report::perf_table::{PerfTable, MIN_SHARE, NO_PMU};
use plumb_report::{compare, comparison_text, markdown};
use plumb_store::StoredRun;

const MULTIPLEXED: &str = include_str!("../../probes/tests/fixtures/perf-stat-multiplexed.csv");
const NO_PMU_CSV: &str = include_str!("../../probes/tests/fixtures/perf-stat-nopmu.csv");

/// Queries in the recorded window: the divisor that turns counts into counts per query.
const QUERIES: u64 = 250_000;

/// `csv` with each named event's value multiplied, as perf would print a version that
/// did that much more of it in the same window.
fn scaled(csv: &str, by: &[(&str, f64)]) -> String {
    csv.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            match (f.first().and_then(|v| v.parse::<f64>().ok()), f.get(2)) {
                (Some(v), Some(ev)) => match by.iter().find(|(e, _)| e == ev) {
                    Some((_, k)) => format!("{},{}", v * k, f[1..].join(",")),
                    None => l.to_string(),
                },
                _ => l.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A SQL run whose step `point-query` has the server's counters per query from `csv`,
/// `qps` and the server CPU per query perf's task-clock gives.
fn sql_run(id: i64, tag: &str, csv: &str, qps: f64) -> StoredRun {
    let mut r = run(id, tag, &[fig("point-query", qps, Some(5.0))]);
    let per_q = perfstat::parse(csv).per_op(QUERIES);
    let srv = ServerCosts {
        cpu_us_query: per_q.get("task-clock-us").copied(),
        perf_query: per_q,
        queries: QUERIES,
        ..ServerCosts::default()
    };
    r.steps[0].0.summary.server = Some(srv);
    r
}

/// Modern against old, as the seed's scan table for MyRocks reads (fbmy8032.b against
/// fbmy5635.a): instructions 1.44, L1-icache misses 1.66, dTLB misses 0.93, cpu/o 1.47,
/// QPS 0.70. Cycles per query grow with the CPU per query (same GHz).
fn seed_like() -> Vec<plumb_report::Version> {
    let new = scaled(
        MULTIPLEXED,
        &[
            ("instructions", 1.44),
            ("instructions:u", 1.44),
            ("cycles", 1.47),
            ("cycles:u", 1.47),
            ("L1-icache-load-misses", 1.66),
            ("dTLB-load-misses", 0.93),
            ("task-clock", 1.47),
        ],
    );
    vec![
        version(
            "old",
            vec![
                sql_run(1, "old", MULTIPLEXED, 100.0),
                sql_run(2, "old", MULTIPLEXED, 100.0),
            ],
        ),
        version(
            "new",
            vec![sql_run(3, "new", &new, 70.0), sql_run(4, "new", &new, 70.0)],
        ),
    ]
}

fn row<'a>(t: &'a PerfTable, name: &str) -> &'a plumb_report::perf_table::PerfRow {
    t.rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name} in {:?}", t.rows))
}

fn close(x: Option<f64>, want: f64) -> bool {
    x.is_some_and(|x| (x - want).abs() < 1e-9 * want.max(1.0))
}

#[test]
fn the_seed_table_reads_each_counter_per_query_and_marks_past_1_15() {
    let c = compare(&seed_like());
    assert_eq!(c.perf.len(), 1);
    let t = &c.perf[0];
    assert_eq!(
        (t.step.as_str(), t.whose.as_str()),
        ("point-query", "server")
    );
    assert!(!t.no_pmu);
    // Counts per query, relative: the recording's figures divided by the queries.
    let insn = row(t, "instructions");
    assert!(close(insn.base, 98808581600.0 / QUERIES as f64));
    assert!(close(insn.rel[0], 1.0) && close(insn.rel[1], 1.44));
    assert_eq!(insn.marked, [false, true]);
    assert!(close(insn.share[1], 0.44) && insn.ratio_only.is_none());
    // 9876 icache misses a query, 0.66 × more at 10 cycles each: 13% of the base's
    // 494,043 cycles per query, far past 1%.
    let icache = row(t, "L1-icache-load-misses");
    assert!(close(icache.rel[1], 1.66) && icache.marked[1]);
    let cycles_q = 123510727000.0 / QUERIES as f64;
    assert!(close(
        icache.share[1],
        2469135780.0 / QUERIES as f64 * 0.66 * 10.0 / cycles_q
    ));
    // Kernel events are charged nominal µs against the base's CPU time per query.
    let cs = row(t, "context-switches");
    assert!(cs.ratio_only.is_none() && cs.share[1].is_some(), "{cs:?}");
    let dtlb = row(t, "dTLB-load-misses");
    assert!(
        close(dtlb.rel[1], 0.93) && !dtlb.marked[1],
        "a drop is not marked"
    );
    let llc = row(t, "LLC-loads");
    assert!(close(llc.rel[1], 1.0) && !llc.marked[1]);
    // GHz: cycles and task-clock grew alike; ipc is 1.44 / 1.47.
    assert!(close(row(t, "GHz").rel[1], 1.0));
    assert!(close(row(t, "GHz").base, 123510727000.0 / 39842.17e6));
    assert!(close(row(t, "ipc").rel[1], 1.44 / 1.47));
    assert!(!row(t, "GHz").marked[1] && !row(t, "ipc").marked[1]);
    let cpu = row(t, "cpu/o");
    assert!(close(cpu.rel[1], 1.47) && cpu.marked[1]);
    let qps = row(t, "QPS");
    assert!(close(qps.rel[1], 0.70) && !qps.marked[1]);
    // The seed's order: names with case folded, cpu/o and QPS last.
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    let i = |n: &str| names.iter().position(|x| *x == n).unwrap();
    assert!(i("branch-misses") < i("dTLB-load-misses"));
    assert!(i("dTLB-loads") < i("GHz") && i("GHz") < i("instructions"));
    assert!(i("instructions:u") < i("ipc") && i("ipc") < i("L1-dcache-load-misses"));
    assert_eq!(names[names.len() - 2..], ["cpu/o", "QPS"]);
    // The reading: more instructions and more icache misses per query.
    assert_eq!(t.readings.len(), 1);
    assert_eq!(t.readings[0].version, "new");
    assert_eq!(t.readings[0].verdict, "code and memory-system bloat");
    assert!(
        t.readings[0]
            .explanation
            .contains("instructions/query +44.0% (> 3%)")
            && t.readings[0]
                .explanation
                .contains("L1-icache-load-misses +66.0%"),
        "{}",
        t.readings[0].explanation
    );
}

#[test]
fn terminal_markdown_html_and_json_carry_the_table() {
    let vs = seed_like();
    let c = compare(&vs);
    let text = comparison_text(&c);
    assert!(
        text.contains("perf stat, point-query: server's counters per query relative to old"),
        "{text}"
    );
    let line = |s: &str, name: &str| -> String {
        s.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name} in {s}"))
            .to_string()
    };
    let icache = line(&text, "L1-icache-load-misses");
    assert!(
        icache.contains("1.00") && icache.contains("1.66+"),
        "{icache}"
    );
    assert!(
        line(&text, "dTLB-load-misses ").contains("0.93")
            && !line(&text, "dTLB-load-misses ").contains('+')
    );
    assert!(text.contains("new: code and memory-system bloat: instructions/query +44.0%"));
    // The rule under the table, in one sentence, in every format.
    let rule = "marks a counter more than 1.15× the base's per query whose extra events could cost at least 1% of the base's query";
    assert!(text.contains(&format!("+ {rule}")), "{text}");
    let md = markdown::comparison(&c);
    assert!(md.contains("| L1-icache-load-misses |"), "{md}");
    assert!(md.contains("**1.66+**") && md.contains("| 0.93 |"));
    assert!(md.contains("- new: code and memory-system bloat"));
    assert!(md.contains(&format!("+ {rule}")), "{md}");
    let html = plumb_report::html::report(
        &vs.iter().flat_map(|v| v.runs.clone()).collect::<Vec<_>>(),
        Some(&c),
    );
    assert!(html.contains(r#"<table class="perf" data-step="point-query">"#));
    assert!(
        html.contains(r#"<td class="num hi">1.66</td>"#),
        "yellow, as the seed marks it"
    );
    assert!(html.contains(r#"<td class="num">0.93</td>"#));
    assert!(
        html.contains(&format!("yellow {}", rule.replace('\'', "&#39;"))),
        "the rule, escaped, in the HTML legend"
    );
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(
        j["perf"][0]["readings"][0]["verdict"],
        "code and memory-system bloat"
    );
}

#[test]
fn without_a_pmu_the_table_says_so_and_keeps_cpu_per_query() {
    let vs = vec![
        version("a", vec![sql_run(1, "a", NO_PMU_CSV, 100.0)]),
        version(
            "b",
            vec![sql_run(
                2,
                "b",
                &scaled(NO_PMU_CSV, &[("task-clock", 1.2)]),
                90.0,
            )],
        ),
    ];
    let c = compare(&vs);
    let t = &c.perf[0];
    assert!(t.no_pmu);
    assert!(t.rows.iter().all(|r| r.name != "GHz" && r.name != "ipc"));
    assert!(close(row(t, "cpu/o").rel[1], 1.2) && row(t, "cpu/o").marked[1]);
    assert!(close(row(t, "task-clock-us").rel[1], 1.2));
    assert!(t.readings[0].verdict.starts_with("unsupported"));
    let text = comparison_text(&c);
    assert!(text.contains(NO_PMU), "{text}");
    assert!(
        !text.contains("unsupported:"),
        "the no-PMU line replaces the reading"
    );
}

#[test]
fn a_kv_step_reads_plumbs_own_process_counters() {
    let kv = |id, tag, insn: f64, cycles: f64, cpu: f64| {
        let mut r = run(id, tag, &[fig("readrandom", 1000.0, Some(cpu))]);
        r.steps[0].0.summary.hw = HwCounters {
            instructions_op: Some(insn),
            cycles_op: Some(cycles),
            cache_misses_op: Some(10.0),
            branch_misses_op: Some(5.0),
            ..HwCounters::default()
        };
        r
    };
    let vs = vec![
        version("a", vec![kv(1, "a", 10_000.0, 8_000.0, 4.0)]),
        version("b", vec![kv(2, "b", 11_000.0, 8_800.0, 4.4)]),
    ];
    let c = compare(&vs);
    let t = &c.perf[0];
    assert_eq!(t.whose, "plumb's process");
    let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "branch-misses",
            "cache-misses",
            "cycles",
            "GHz",
            "instructions",
            "ipc",
            "task-clock-us",
            "cpu/o",
            "QPS"
        ]
    );
    // 8000 cycles in 4 µs: 2 GHz.
    assert!(close(row(t, "GHz").base, 2.0) && close(row(t, "GHz").rel[1], 1.0));
    assert_eq!(t.readings[0].verdict, "code bloat");
}

/// A run whose step `step` holds `csv`'s counts per op in `StepSummary::perf`, counted
/// in turn (whose: `plumb` or `server`), as `plumb kv --perf-groups` and `plumb ib`
/// store them.
fn counted_run(
    id: i64,
    tag: &str,
    step: &'static str,
    whose: &str,
    csv: &str,
    ops_sec: f64,
) -> StoredRun {
    let mut r = run(id, tag, &[fig(step, ops_sec, Some(5.0))]);
    let per_op = perfstat::parse(csv).per_op(QUERIES);
    let secs = per_op.keys().map(|e| (e.clone(), 8.0)).collect();
    r.steps[0].0.summary.perf = Some(plumb_core::PerfCounted {
        whose: whose.into(),
        per_op,
        unavailable: Vec::new(),
        counted_secs: secs,
    });
    r
}

#[test]
fn kv_and_ib_steps_counted_in_turn_read_every_event() {
    let new = scaled(
        MULTIPLEXED,
        &[("instructions", 1.44), ("instructions:u", 1.44)],
    );
    for (step, whose, said) in [
        ("readrandom", "plumb", "plumb's process"),
        ("qr100", "server", "server"),
    ] {
        let vs = vec![
            version(
                "a",
                vec![counted_run(1, "a", step, whose, MULTIPLEXED, 100.0)],
            ),
            version("b", vec![counted_run(2, "b", step, whose, &new, 100.0)]),
        ];
        let c = compare(&vs);
        assert_eq!(c.perf.len(), 1, "{step}");
        let t = &c.perf[0];
        assert_eq!((t.step.as_str(), t.whose.as_str()), (step, said));
        // Every event of the recording, not the four `HwCounters` hold.
        assert!(close(row(t, "instructions").rel[1], 1.44));
        assert!(close(row(t, "L1-icache-load-misses").rel[1], 1.0));
        assert!(
            t.in_turn,
            "counted_secs says the events were counted in turn"
        );
        assert_eq!(t.readings[0].verdict, "code bloat", "{step}");
    }
}

#[test]
fn steps_without_counters_and_a_single_version_have_no_table() {
    let one = vec![version("a", vec![sql_run(1, "a", MULTIPLEXED, 100.0)])];
    assert!(compare(&one).perf.is_empty());
    let plain = vec![
        version("a", vec![run(1, "a", &[fig("x", 1.0, None)])]),
        version("b", vec![run(2, "b", &[fig("x", 1.0, None)])]),
    ];
    assert!(compare(&plain).perf.is_empty());
}

/// A SQL run whose step `point-query` has exactly `per_query` as the server's counts per
/// query, and `cpu_us` server CPU per query.
fn built_run(id: i64, tag: &str, per_query: &[(&str, f64)], cpu_us: f64) -> StoredRun {
    let mut r = run(id, tag, &[fig("point-query", 100.0, Some(5.0))]);
    r.steps[0].0.summary.server = Some(ServerCosts {
        cpu_us_query: Some(cpu_us),
        perf_query: per_query.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        queries: QUERIES,
        ..ServerCosts::default()
    });
    r
}

/// The one table of a base and a new version built from counts per query.
fn built(base: &[(&str, f64)], new: &[(&str, f64)], cpu: (f64, f64)) -> plumb_report::Comparison {
    compare(&[
        version("base", vec![built_run(1, "base", base, cpu.0)]),
        version("new", vec![built_run(2, "new", new, cpu.1)]),
    ])
}

/// A query of 500,000 cycles and 400,000 instructions on both sides.
const QUERY: [(&str, f64); 2] = [("cycles", 500_000.0), ("instructions", 400_000.0)];

fn with(extra: &[(&'static str, f64)]) -> Vec<(&'static str, f64)> {
    QUERY.iter().copied().chain(extra.iter().copied()).collect()
}

#[test]
fn a_counter_rising_from_a_tiny_base_is_not_marked() {
    // 0.02 iTLB misses a query to 0.05: 2.5×, and 0.03 more a query at 100 cycles each
    // is 3 cycles of 500,000, 0.0006%.
    let c = built(
        &with(&[("iTLB-load-misses", 0.02)]),
        &with(&[("iTLB-load-misses", 0.05)]),
        (100.0, 100.0),
    );
    let t = &c.perf[0];
    let itlb = row(t, "iTLB-load-misses");
    assert!(close(itlb.rel[1], 2.5));
    assert_eq!(itlb.marked, [false, false], "{itlb:?}");
    assert!(close(itlb.share[1], 0.03 * 100.0 / 500_000.0), "{itlb:?}");
    assert!(itlb.ratio_only.is_none());
    // Said under the table, in every format.
    let note = "iTLB-load-misses: new 2.50× not marked: its 0.030 more a query could cost \
                0.00060% of base's cycles per query at 100 cycles each, under 1%";
    let text = comparison_text(&c);
    assert!(text.contains(note), "{text}");
    assert!(
        !line_of(&text, "iTLB-load-misses").contains("2.50+"),
        "{text}"
    );
    assert!(markdown::comparison(&c).contains(note));
}

#[test]
fn the_same_ratio_on_a_large_base_is_marked() {
    // 200 iTLB misses a query to 500: 2.5× again, and 300 more at 100 cycles each is
    // 30,000 cycles, 6% of the query.
    let c = built(
        &with(&[("iTLB-load-misses", 200.0)]),
        &with(&[("iTLB-load-misses", 500.0)]),
        (100.0, 100.0),
    );
    let t = &c.perf[0];
    let itlb = row(t, "iTLB-load-misses");
    assert!(close(itlb.rel[1], 2.5));
    assert_eq!(itlb.marked, [false, true], "{itlb:?}");
    assert!(close(itlb.share[1], 0.06));
    assert!(line_of(&comparison_text(&c), "iTLB-load-misses").contains("2.50+"));
    assert!(plumb_report::perf_table::notes(t, &c.versions).is_empty());
}

#[test]
fn the_share_threshold_is_one_percent_of_the_base_query() {
    // 1,000,000 cycles a query; LLC misses at 200 cycles each: 55 more is 1.1% (marked),
    // 45 more is 0.9% (not), both well past 1.15×.
    let base = [
        ("cycles", 1e6),
        ("instructions", 1e6),
        ("LLC-load-misses", 40.0),
    ];
    for (new, want) in [(95.0, true), (85.0, false)] {
        let c = built(
            &base,
            &[
                ("cycles", 1e6),
                ("instructions", 1e6),
                ("LLC-load-misses", new),
            ],
            (100.0, 100.0),
        );
        let llc = row(&c.perf[0], "LLC-load-misses");
        assert!(llc.rel[1].unwrap() > 2.0);
        assert_eq!(llc.marked[1], want, "{new}: {llc:?}");
        assert_eq!(llc.share[1].unwrap() >= MIN_SHARE, want);
    }
    // Branches are instructions: 2,000 → 5,000 is 3,000 of 1,000,000 instructions, 0.3%.
    let c = built(
        &[("cycles", 1e6), ("instructions", 1e6), ("branches", 2000.0)],
        &[("cycles", 1e6), ("instructions", 1e6), ("branches", 5000.0)],
        (100.0, 100.0),
    );
    let br = row(&c.perf[0], "branches");
    assert!(close(br.share[1], 0.003) && !br.marked[1], "{br:?}");
}

#[test]
fn instructions_cycles_and_cpu_rising_1_2_are_marked() {
    let c = built(
        &QUERY,
        &[("cycles", 600_000.0), ("instructions", 480_000.0)],
        (100.0, 120.0),
    );
    let t = &c.perf[0];
    for name in ["cycles", "instructions", "cpu/o"] {
        let r = row(t, name);
        assert!(close(r.rel[1], 1.2), "{name}: {r:?}");
        assert_eq!(r.marked, [false, true], "{name}: {r:?}");
        assert!(close(r.share[1], 0.2), "{name}: its own cost, {r:?}");
    }
    // Derived rows are never marked.
    assert!(!row(t, "ipc").marked[1] && !row(t, "QPS").marked[1]);
}

#[test]
fn a_ratio_of_1_1_is_never_marked() {
    // 1.1× everywhere, on bases whose extra events would cost 10% of the query, and on
    // events judged by the ratio alone.
    let c = built(
        &[
            ("cycles", 500_000.0),
            ("instructions", 400_000.0),
            ("L1-dcache-load-misses", 50_000.0),
            ("context-switches", 3.0),
        ],
        &[
            ("cycles", 550_000.0),
            ("instructions", 440_000.0),
            ("L1-dcache-load-misses", 55_000.0),
            ("context-switches", 3.3),
        ],
        (100.0, 110.0),
    );
    let t = &c.perf[0];
    for r in &t.rows {
        assert!(!r.marked.iter().any(|m| *m), "{r:?}");
    }
    // 5,000 more L1 misses at 10 cycles: 10% of the query, yet only 1.1×.
    assert!(close(row(t, "L1-dcache-load-misses").share[1], 0.1));
    assert!(plumb_report::perf_table::notes(t, &c.versions).is_empty());
}

#[test]
fn without_the_base_figure_to_weigh_against_the_ratio_alone_marks_and_says_so() {
    // No cycles counted: iTLB misses cannot be charged, so 2.5× from a tiny base is
    // marked as the seed would, and the row says why; the same for branches without
    // instructions, and for an event with no nominal cost.
    let c = built(
        &[
            ("iTLB-load-misses", 0.02),
            ("branches", 10.0),
            ("alignment-faults", 0.001),
        ],
        &[
            ("iTLB-load-misses", 0.05),
            ("branches", 25.0),
            ("alignment-faults", 0.002),
        ],
        (100.0, 100.0),
    );
    let t = &c.perf[0];
    for (name, why) in [
        ("iTLB-load-misses", "no base cycles per query"),
        ("branches", "no base instructions per query"),
        ("alignment-faults", "no nominal cost for alignment-faults"),
    ] {
        let r = row(t, name);
        assert_eq!(r.marked, [false, true], "{name}: {r:?}");
        assert!(
            r.ratio_only.as_deref().is_some_and(|w| w.contains(why)),
            "{name}: {r:?}"
        );
        assert_eq!(r.share, [None, None]);
    }
    let text = comparison_text(&c);
    assert!(
        text.contains(
            "iTLB-load-misses: new 2.50× marked on its ratio alone: no base cycles per query"
        ),
        "{text}"
    );
    let j = serde_json::to_value(&c).unwrap();
    let rows = j["perf"][0]["rows"].as_array().unwrap();
    let itlb = rows
        .iter()
        .find(|r| r["name"] == "iTLB-load-misses")
        .unwrap();
    assert!(itlb["ratio_only"].is_string() && itlb["share"][1].is_null());
}

/// The line of `s` that starts with `name`.
fn line_of(s: &str, name: &str) -> String {
    s.lines()
        .find(|l| l.trim_start().starts_with(name))
        .unwrap_or_else(|| panic!("no line for {name} in {s}"))
        .to_string()
}

#[test]
fn kernel_events_are_weighed_against_the_cpu_time_of_a_query() {
    // The seed's page faults at 0.0003 a query doubling: 0.0003 more a query at 1 µs
    // each is 0.0003 µs of a 50 µs query, never worth a mark; context switches from 0.5
    // to 1.5 a query at 2 µs each are 2 µs of 50, 4%, marked. Neither needs a PMU.
    let c = built(
        &[("page-faults", 0.0003), ("context-switches", 0.5)],
        &[("page-faults", 0.0006), ("context-switches", 1.5)],
        (50.0, 50.0),
    );
    let t = &c.perf[0];
    let pf = row(t, "page-faults");
    assert!(close(pf.rel[1], 2.0) && pf.ratio_only.is_none());
    assert_eq!(pf.marked, [false, false], "{pf:?}");
    assert!(close(pf.share[1], 0.0003 / 50.0), "{pf:?}");
    let cs = row(t, "context-switches");
    assert_eq!(cs.marked, [false, true], "{cs:?}");
    assert!(close(cs.share[1], 2.0 / 50.0), "{cs:?}");
    let notes = plumb_report::perf_table::notes(t, &c.versions);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("page-faults: new 2.00× not marked")
                && n.contains("CPU time per query at 1 µs each")),
        "{notes:?}"
    );
    // Without a CPU time per query to charge them against, the ratio alone, said so.
    let c = built(
        &[("page-faults", 0.0003)],
        &[("page-faults", 0.0006)],
        (0.0, 0.0),
    );
    let pf = row(&c.perf[0], "page-faults");
    assert!(pf
        .ratio_only
        .as_deref()
        .is_some_and(|w| w.contains("no base CPU time")));
    assert_eq!(pf.marked, [false, true]);
}

#[test]
fn repeats_give_every_ratio_its_interval() {
    // Two runs a side: instructions 1.5× with a spread of about 1%, so the interval
    // holds 1.5 and excludes 1; QPS and cpu/o get theirs from the runs' figures too.
    let c = compare(&[
        version(
            "base",
            vec![
                built_run(1, "base", &[("instructions", 400_000.0)], 100.0),
                built_run(2, "base", &[("instructions", 404_000.0)], 101.0),
            ],
        ),
        version(
            "new",
            vec![
                built_run(3, "new", &[("instructions", 600_000.0)], 150.0),
                built_run(4, "new", &[("instructions", 606_000.0)], 152.0),
            ],
        ),
    ]);
    let t = &c.perf[0];
    let insn = row(t, "instructions");
    assert_eq!(insn.ci[0], None, "the base has no interval against itself");
    let (lo, hi) = insn.ci[1].expect("two runs a side");
    assert!(lo > 1.0 && lo < 1.5 && hi > 1.5, "{:?}", insn.ci);
    assert!(row(t, "cpu/o").ci[1].is_some_and(|(lo, hi)| lo < 1.5 && hi > 1.5));
    assert!(row(t, "QPS").ci[1].is_some());
    // One run a side: no interval claimed.
    let one = built(&QUERY, &QUERY, (100.0, 100.0));
    assert!(one.perf[0]
        .rows
        .iter()
        .all(|r| r.ci.iter().all(Option::is_none)));
}
