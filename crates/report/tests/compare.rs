//! Comparisons on fixture runs: ratios and intervals against hand computation, the
//! `~` mark, every fairness warning on and off, Markdown and CSV snapshots.

mod fixtures;

use fixtures::{fig, run, version};
use plumb_report::{compare, markdown};

fn base_and_new() -> Vec<plumb_report::Version> {
    vec![
        version(
            "base",
            vec![
                run(
                    1,
                    "base",
                    &[
                        fig("readrandom", 100.0, Some(10.0)),
                        fig("overwrite", 50.0, Some(20.0)),
                    ],
                ),
                run(
                    2,
                    "base",
                    &[
                        fig("readrandom", 110.0, Some(10.0)),
                        fig("overwrite", 50.0, Some(20.0)),
                    ],
                ),
            ],
        ),
        version(
            "new",
            vec![
                run(
                    3,
                    "new",
                    &[
                        fig("readrandom", 120.0, Some(8.0)),
                        fig("overwrite", 51.0, Some(20.0)),
                    ],
                ),
                run(
                    4,
                    "new",
                    &[
                        fig("readrandom", 130.0, Some(8.0)),
                        fig("overwrite", 49.0, Some(20.0)),
                    ],
                ),
            ],
        ),
    ]
}

#[test]
fn relative_values_and_intervals_match_hand_computation() {
    let c = compare(&base_and_new());
    assert_eq!(c.steps, vec!["readrandom", "overwrite"]);
    let rr = &c.ops_sec.rows[0];
    assert_eq!(rr[0].median, Some(105.0));
    assert_eq!(rr[1].median, Some(125.0));
    assert_eq!(rr[0].ratio, None, "the base has no ratio to itself");
    let r = rr[1].ratio.unwrap();
    assert!((r - 125.0 / 105.0).abs() < 1e-12);
    // Hand computation: Welch on logs (see stats.rs for the formula).
    let (b, o) = ([100f64.ln(), 110f64.ln()], [120f64.ln(), 130f64.ln()]);
    let d = (o[0] + o[1]) / 2.0 - (b[0] + b[1]) / 2.0;
    let (vb, vo) = ((b[0] - b[1]).powi(2) / 2.0, (o[0] - o[1]).powi(2) / 2.0);
    let se = (vb / 2.0 + vo / 2.0).sqrt();
    let (lo, hi) = rr[1].ci.unwrap();
    // Welch df here is 1.94 (by hand: (a+b)^2/(a^2+b^2), a=vb/2, b=vo/2), where
    // t(0.975) is ~4.43: the interval is wide with two repeats.
    let t = (d - lo.ln()) / se;
    assert!(
        (t - (hi.ln() - d) / se).abs() < 1e-9,
        "symmetric in log space"
    );
    assert!(t > 4.40 && t < 4.46, "t = {t}");
    // cpu_us_op: 8 vs 10 exactly, no noise: 0.80, significant.
    let cpu = c.costs.iter().find(|t| t.metric == "cpu_us_op").unwrap();
    assert_eq!(cpu.rows[0][1].ratio, Some(0.8));
    assert!(cpu.rows[0][1].significant);
}

#[test]
fn identical_distributions_get_the_mark_and_a_ten_percent_shift_does_not() {
    let same = vec![
        version(
            "a",
            vec![
                run(1, "a", &[fig("x", 100.0, None)]),
                run(2, "a", &[fig("x", 102.0, None)]),
                run(3, "a", &[fig("x", 98.0, None)]),
            ],
        ),
        version(
            "b",
            vec![
                run(4, "b", &[fig("x", 100.0, None)]),
                run(5, "b", &[fig("x", 98.0, None)]),
                run(6, "b", &[fig("x", 102.0, None)]),
            ],
        ),
    ];
    let c = compare(&same);
    assert!(!c.ops_sec.rows[0][1].significant);
    assert!(markdown::comparison(&c).contains("1.00 ~"));

    let shifted = vec![
        version(
            "a",
            vec![
                run(1, "a", &[fig("x", 100.0, None)]),
                run(2, "a", &[fig("x", 101.0, None)]),
                run(3, "a", &[fig("x", 99.0, None)]),
            ],
        ),
        version(
            "b",
            vec![
                run(4, "b", &[fig("x", 110.0, None)]),
                run(5, "b", &[fig("x", 111.1, None)]),
                run(6, "b", &[fig("x", 108.9, None)]),
            ],
        ),
    ];
    let c = compare(&shifted);
    let cell = &c.ops_sec.rows[0][1];
    assert!(cell.significant, "{cell:?}");
    let text = plumb_report::compare::ratio_text(cell);
    assert!(text.starts_with("1.10 (") && !text.contains('~'), "{text}");
}

fn warnings_of(vs: &[plumb_report::Version]) -> Vec<String> {
    compare(vs).warnings
}

#[test]
fn a_fair_comparison_has_no_warnings() {
    let w = warnings_of(&base_and_new());
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn a_skewed_reader_beside_a_writer_is_warned_about() {
    let skewed = |dist: &str, step: &'static str| {
        let mut r = run(7, "skew", &[fig(step, 100.0, None)]);
        r.run.options.insert("distribution".into(), dist.into());
        vec![fixtures::version("skew", vec![r])]
    };
    let w = warnings_of(&skewed("hotset:1000", "readwhilewriting"));
    assert!(
        w.iter()
            .any(|w| w.contains("readwhilewriting") && w.contains("memtable")),
        "{w:?}"
    );
    // Uniform keys, or no writer beside the readers: nothing to say.
    let memtable = |w: Vec<String>| w.iter().any(|w| w.contains("memtable"));
    assert!(!memtable(warnings_of(&skewed(
        "uniform",
        "readwhilewriting"
    ))));
    assert!(!memtable(warnings_of(&skewed("zipfian", "readrandom"))));
}

#[test]
fn options_that_differ_are_listed_and_places_are_not() {
    let mut v = base_and_new();
    for (i, r) in v.iter_mut().flat_map(|v| v.runs.iter_mut()).enumerate() {
        r.run.options.insert("target".into(), format!("t{i}"));
        r.run.options.insert(
            "rocksdb.effective.db.compaction_readahead_size".into(),
            if r.run.id < 3 { "0" } else { "2097152" }.into(),
        );
    }
    let d = compare(&v).options_differ;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].key, "rocksdb.effective.db.compaction_readahead_size");
    assert_eq!(
        d[0].values,
        vec![Some("0".to_string()), Some("2097152".to_string())]
    );
    // Repeats that disagree say so.
    v[1].runs[0].run.options.insert(
        "rocksdb.effective.db.compaction_readahead_size".into(),
        "1".into(),
    );
    assert_eq!(
        compare(&v).options_differ[0].values[1].as_deref(),
        Some("(varies)")
    );
}

#[test]
fn each_fairness_warning_fires_on_its_fixture() {
    let mut v = base_and_new();
    v[1].runs[0]
        .run
        .options
        .insert("rocksdb.sync".into(), "true".into());
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("durability differs")));

    let mut v = base_and_new();
    v[1].runs[1].run.options.insert("num".into(), "5000".into());
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("sizes or durations differ") && w.contains("num: 1000 vs 5000")));

    // One side held to a memory limit (a cgroup) and the other not.
    let mut v = base_and_new();
    for r in &mut v[1].runs {
        r.run.options.insert("memory_limit_mb".into(), "256".into());
    }
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("memory limits differ") && w.contains("256 vs unset")));

    // Runs stored before --verify checked every value: they stand as `all`.
    let mut v = base_and_new();
    assert!(!warnings_of(&v).iter().any(|w| w.contains("verification")));
    v[1].runs[1]
        .run
        .options
        .insert("verify".into(), "none".into());
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("verification differs (verify: all vs none)")));

    // Two engines side by side: one that never syncs beside one that does.
    let mut v = base_and_new();
    for r in &mut v[1].runs {
        r.run.engine = "splinterdb".into();
        r.run.options.insert("durability".into(), "unlogged".into());
    }
    for r in &mut v[0].runs {
        r.run.options.insert("durability".into(), "synced".into());
    }
    let w = warnings_of(&v);
    assert!(
        w.iter().any(|w| w.starts_with("durability differs")
            && w.contains("splinterdb unlogged")
            && w.contains("rocksdb synced")
            && w.contains("higher write rates")),
        "{w:?}"
    );

    let mut v = base_and_new();
    v[1].runs[0].run.host.as_mut().unwrap().inventory.hostname = Some("h2".into());
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.contains("different hosts")));

    let mut v = base_and_new();
    v[1].runs[0].run.host.as_mut().unwrap().checks[0].verdict = plumb_host::Verdict::Warn;
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.contains("host checks differ") && w.contains("cpu.turbo ok→warn")));

    let mut v = base_and_new();
    v[0].runs.pop();
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("base: only one run")));

    // Engines are named in the order the sides were given, base first, not sorted.
    let mut v = base_and_new();
    for r in &mut v[0].runs {
        r.run.engine_version = "9.9.3".into();
    }
    for r in &mut v[1].runs {
        r.run.engine_version = "11.8.1".into();
    }
    let w = warnings_of(&v);
    assert!(
        w.iter()
            .any(|w| w.ends_with("engines compared: rocksdb 9.9.3 vs rocksdb 11.8.1")),
        "{w:?}"
    );

    // One seed for every side is the fair comparison; within one side it is not.
    let mut v = base_and_new();
    v[1].runs[0].run.seed = v[0].runs[0].run.seed.clone();
    assert!(!warnings_of(&v).iter().any(|w| w.contains("same seed")));
    let mut v = base_and_new();
    v[0].runs[1].run.seed = v[0].runs[0].run.seed.clone();
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.starts_with("base: runs") && w.contains("same seed")));

    let mut v = base_and_new();
    v[1].runs[0].steps[0].0.summary.pending_compaction_gb_start = Some(0.5);
    assert!(warnings_of(&v)
        .iter()
        .any(|w| w.contains("compaction pending")));
    v[1].runs[0].steps[0].0.summary.pending_compaction_gb_start = Some(0.01);
    assert!(
        !warnings_of(&v)
            .iter()
            .any(|w| w.contains("compaction pending")),
        "below the threshold"
    );

    let mut v = base_and_new();
    // 95 µs/op at 20000 ops/s is 1.9 CPUs of 2.
    v[1].runs[0].steps[0].0.summary.cpu_us_op = Some(95.0);
    v[1].runs[0].steps[0].0.summary.ops_sec = 20_000.0;
    assert!(warnings_of(&v).iter().any(|w| w.contains("saturated CPU")));
}

#[test]
fn markdown_snapshot() {
    let c = compare(&base_and_new());
    insta::assert_snapshot!("comparison_md", markdown::comparison(&c));
    insta::assert_snapshot!("run_md", markdown::run(&base_and_new()[0].runs[0]));
}

#[test]
fn csv_snapshot_and_every_figure_present() {
    let runs = vec![run(
        7,
        "t,with \"quotes\"",
        &[fig("readrandom", 100.0, Some(10.0))],
    )];
    let csv = plumb_report::csv::runs(&runs);
    insta::assert_snapshot!("runs_csv", csv);
    assert!(csv.contains(",readrandom,,ops_sec,100"));
    assert!(
        csv.contains(",readrandom,1,ops_sec,100"),
        "interval rows carry their index"
    );
    assert!(!csv.contains("rkb_op"), "a missing figure is absent, not 0");
}

#[test]
fn markdown_escapes_what_a_renderer_would_run() {
    let v = vec![version(
        "<b>x</b>|y",
        vec![run(
            1,
            "<script>alert(1)</script>",
            &[fig("readrandom", 1.0, None)],
        )],
    )];
    let md = markdown::comparison(&compare(&v)) + &markdown::run(&v[0].runs[0]);
    assert!(!md.contains("<script>") && !md.contains("<b>"));
    assert!(md.contains("&lt;script&gt;") && md.contains("\\|y"));
}

/// Every key the committed schema requires is in the JSON the report prints.
#[test]
fn report_json_has_every_key_the_schema_requires() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/report.schema.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let vs = base_and_new();
    let runs: Vec<_> = vs.iter().flat_map(|v| v.runs.clone()).collect();
    let c = compare(&vs);
    let doc = plumb_report::json::report(&runs, Some(&c));
    let required = |v: &serde_json::Value| -> Vec<String> {
        v["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let defs = &schema["$defs"];
    let check = |obj: &serde_json::Value, schema_obj: &serde_json::Value, what: &str| {
        for k in required(schema_obj) {
            assert!(obj.get(&k).is_some(), "{what} lacks required {k}");
        }
    };
    check(&doc, &schema, "report");
    check(&doc["runs"][0], &defs["run_doc"], "run doc");
    check(
        &doc["runs"][0]["run"],
        &defs["run_doc"]["properties"]["run"],
        "run",
    );
    check(
        &doc["runs"][0]["steps"][0]["summary"],
        &defs["summary"],
        "summary",
    );
    check(
        &doc["runs"][0]["steps"][0]["intervals"][0],
        &defs["interval"],
        "interval",
    );
    check(&doc["comparison"], &defs["comparison"], "comparison");
    check(
        &doc["comparison"]["ops_sec"]["rows"][0][1],
        &defs["cell"],
        "cell",
    );
    assert_eq!(doc["schema"], schema["properties"]["schema"]["const"]);
}

/// A PostgreSQL-like base and a MariaDB-like other, two repeats each with the same
/// figures: two counters both have (common1 ×1.1, common2 ×3 per query), two only
/// the base has and one only the other has.
fn counters_on_two_engines() -> Vec<plumb_report::Version> {
    let a = |id| {
        fixtures::with_counters(
            run(id, "A", &[fig("x", 100.0, None)]),
            "x",
            &[
                ("common1", 10.0),
                ("common2", 2.0),
                ("onlyA1", 5.0),
                ("onlyA2", 7.0),
            ],
        )
    };
    let b = |id| {
        fixtures::with_counters(
            run(id, "B", &[fig("x", 100.0, None)]),
            "x",
            &[("common1", 11.0), ("common2", 6.0), ("onlyB", 4.0)],
        )
    };
    vec![
        version("A", vec![a(1), a(2)]),
        version("B", vec![b(3), b(4)]),
    ]
}

fn metrics_of(c: &plumb_report::Comparison, idx: &[usize]) -> Vec<String> {
    idx.iter()
        .map(|&i| c.server_counters[i].metric.clone())
        .collect()
}

#[test]
fn counters_both_sides_have_print_most_moved_first_and_the_rest_in_one_line() {
    let vs = counters_on_two_engines();
    let c = compare(&vs);
    assert_eq!(
        metrics_of(&c, &c.server_counters_shown),
        vec!["common2/query", "common1/query"]
    );
    let left: Vec<(&str, Vec<&str>)> = c
        .server_counters_left_out
        .iter()
        .map(|l| {
            (
                l.counter.as_str(),
                l.missing_from.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        left,
        vec![
            ("onlyA1", vec!["B"]),
            ("onlyA2", vec!["B"]),
            ("onlyB", vec!["A"])
        ]
    );
    for l in &c.server_counters_left_out {
        assert_eq!(
            c.server_counters[l.index].metric,
            format!("{}/query", l.counter)
        );
    }

    let text = plumb_report::comparison_text(&c);
    let at = |s: &str| {
        text.find(s)
            .unwrap_or_else(|| panic!("no {s:?} in\n{text}"))
    };
    assert!(
        at("server common2/query") < at("server common1/query"),
        "{text}"
    );
    for name in ["onlyA1", "onlyA2", "onlyB"] {
        assert!(
            !text.contains(&format!("server {name}/query")),
            "{name} has a table:\n{text}"
        );
    }
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    let line = lines[0];
    assert!(line.starts_with("server counters: 3 left out"), "{line}");
    assert!(
        line.contains("only A has 2: onlyA1, onlyA2") && line.contains("only B has 1: onlyB"),
        "{line}"
    );
    assert!(line.contains("--json") && line.contains("HTML"), "{line}");
    assert!(!line.contains('…'), "nothing more to elide: {line}");

    let md = markdown::comparison(&c);
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("no {s:?} in\n{md}"));
    assert!(at("**server common2/query**") < at("**server common1/query**"));
    assert!(!md.contains("**server only"), "{md}");
    assert_eq!(md.matches("left out").count(), 1, "{md}");
    assert!(md.contains("only B has 1: onlyB"), "{md}");

    // The JSON keeps all five, and says which it showed and why the rest were not.
    let json = serde_json::to_value(&c).unwrap();
    let names: Vec<&str> = json["server_counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        vec![
            "common1/query",
            "common2/query",
            "onlyA1/query",
            "onlyA2/query",
            "onlyB/query"
        ]
    );
    assert_eq!(json["server_counters_shown"], serde_json::json!([1, 0]));
    assert_eq!(
        json["server_counters_left_out"][2],
        serde_json::json!({"index": 4, "counter": "onlyB", "missing_from": ["A"]})
    );

    // The page keeps every counter, the left-out ones after and marked.
    let runs: Vec<_> = vs.iter().flat_map(|v| v.runs.clone()).collect();
    let html = plumb_report::html::report(&runs, Some(&c));
    let at = |s: &str| {
        html.find(s)
            .unwrap_or_else(|| panic!("no {s:?} in the page"))
    };
    assert!(at(r#"data-counter="common2""#) < at(r#"data-counter="common1""#));
    assert!(at(r#"data-counter="common1""#) < at(r#"data-counter="onlyA1""#));
    for (name, missing) in [("onlyA1", "B"), ("onlyA2", "B"), ("onlyB", "A")] {
        assert!(
            html.contains(&format!(
                r#"data-counter="{name}" class="left-out" data-missing="{missing}""#
            )),
            "{name} is not marked as left out"
        );
    }
}

#[test]
fn the_left_out_line_names_a_few_of_each_side_then_elides() {
    let many = |prefix: &str| -> Vec<(String, f64)> {
        (0..20).map(|i| (format!("{prefix}{i:02}"), 1.0)).collect()
    };
    let side = |id, label: &str, own: &[(String, f64)]| {
        let mut cs: Vec<(&str, f64)> = own.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        cs.push(("common", 1.0));
        fixtures::with_counters(run(id, label, &[fig("x", 100.0, None)]), "x", &cs)
    };
    let (pg, my) = (many("blks_"), many("innodb_"));
    let c = compare(&[
        version("pg", vec![side(1, "pg", &pg)]),
        version("myrocks", vec![side(2, "myrocks", &my)]),
    ]);
    assert_eq!(c.server_counters.len(), 41);
    assert_eq!(
        metrics_of(&c, &c.server_counters_shown),
        vec!["common/query"]
    );
    let line = plumb_report::compare::left_out_line(&c).unwrap();
    assert!(!line.contains('\n'));
    assert!(line.starts_with("server counters: 40 left out"), "{line}");
    assert!(
        line.contains("only pg has 20: blks_00, blks_01, blks_02, blks_03, …"),
        "{line}"
    );
    assert!(
        line.contains("only myrocks has 20: innodb_00, innodb_01, innodb_02, innodb_03, …"),
        "{line}"
    );
    assert!(
        !line.contains("blks_04") && !line.contains("innodb_04"),
        "{line}"
    );
    assert_eq!(line.matches('…').count(), 2, "{line}");
}

#[test]
fn counters_rank_by_their_largest_move_either_way_and_unrankable_ones_go_last() {
    let r = |id, label: &str, two: [&[(&str, f64)]; 2]| {
        let r = run(id, label, &[fig("s1", 100.0, None), fig("s2", 100.0, None)]);
        fixtures::with_counters(fixtures::with_counters(r, "s1", two[0]), "s2", two[1])
    };
    let base = r(
        1,
        "base",
        [
            &[
                ("a_tripled", 1.0),
                ("b_fifth", 10.0),
                ("c_gone", 1.0),
                ("d_new", 0.0),
            ],
            &[("a_tripled", 1.0), ("b_fifth", 10.0), ("e_same", 4.0)],
        ],
    );
    let new = r(
        2,
        "new",
        [
            // b_fifth moves ×1.1 here but ÷5 in s2: its largest move counts.
            &[
                ("a_tripled", 3.0),
                ("b_fifth", 11.0),
                ("c_gone", 0.0),
                ("d_new", 2.0),
            ],
            &[("a_tripled", 3.0), ("b_fifth", 2.0), ("e_same", 4.0)],
        ],
    );
    let c = compare(&[version("base", vec![base]), version("new", vec![new])]);
    assert!(c.server_counters_left_out.is_empty());
    assert_eq!(
        metrics_of(&c, &c.server_counters_shown),
        vec![
            // A drop to zero is the furthest move there is.
            "c_gone/query",
            // ÷5 is further than ×3.
            "b_fifth/query",
            "a_tripled/query",
            "e_same/query",
            // From zero has no ratio to rank by.
            "d_new/query",
        ]
    );
}

#[test]
fn sides_run_in_separate_blocks_are_warned_and_interleaved_ones_are_not() {
    let at = |id: i64, tag: &str, minute: u32| {
        let mut r = run(id, tag, &[fig("readrandom", 100.0, None)]);
        r.run.started_at = format!("2026-11-22T00:{minute:02}:00.000Z");
        r.run.ended_at = Some(format!("2026-11-22T00:{minute:02}:30.000Z"));
        r
    };
    let blocked = [
        version("a", vec![at(1, "a", 1), at(2, "a", 2)]),
        version("b", vec![at(3, "b", 3), at(4, "b", 4)]),
    ];
    let w = plumb_report::warnings::blocked(&blocked);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("separate blocks") && w[0].contains("plumb ab"),
        "{w:?}"
    );
    assert!(compare(&blocked)
        .warnings
        .iter()
        .any(|x| x.contains("separate blocks")));
    let interleaved = [
        version("a", vec![at(1, "a", 1), at(3, "a", 3)]),
        version("b", vec![at(2, "b", 2), at(4, "b", 4)]),
    ];
    assert!(plumb_report::warnings::blocked(&interleaved).is_empty());
}

/// Sets every run of a side's steps to this host noise.
fn with_noise(v: &mut plumb_report::Version, steal: f64, outside: f64) {
    for r in &mut v.runs {
        for (s, _) in &mut r.steps {
            s.summary.steal_pct = Some(steal);
            s.summary.outside_cpu_pct = Some(outside);
        }
    }
}

#[test]
fn a_step_beside_a_neighbour_is_warned_with_reason_and_fix() {
    let mut v = base_and_new();
    with_noise(&mut v[0], 0.5, 2.0);
    with_noise(&mut v[1], 0.5, 2.0);
    assert!(!warnings_of(&v).iter().any(|w| w.contains("neighbour")));
    // Just above each threshold: warned, with the figure, the reason and the fix.
    with_noise(&mut v[1], plumb_report::warnings::STEAL_PCT + 1.0, 48.0);
    let w = warnings_of(&v);
    let outside: Vec<&String> = w
        .iter()
        .filter(|w| w.contains("another process used 48% of the machine's CPU"))
        .collect();
    assert_eq!(outside.len(), 4, "two runs × two steps: {w:#?}");
    assert!(outside[0].starts_with("new run 3 step readrandom: "));
    assert!(
        outside[0].contains("`plumb host` lists busy processes") && outside[0].contains("taskset")
    );
    assert!(w
        .iter()
        .any(|w| w.contains("6% of this VM's CPU time") && w.contains("steal")));
    // At the thresholds themselves: not warned.
    with_noise(
        &mut v[1],
        plumb_report::warnings::STEAL_PCT,
        plumb_report::warnings::OUTSIDE_CPU_PCT,
    );
    assert!(!warnings_of(&v).iter().any(|w| w.contains("neighbour")));
}

#[test]
fn compare_marks_steps_whose_sides_ran_beside_different_noise() {
    let mut v = base_and_new();
    with_noise(&mut v[0], 0.0, 1.0);
    with_noise(&mut v[1], 3.0, 4.0);
    let c = compare(&v);
    assert!(
        c.noise.is_empty(),
        "3 points apart is within the noise: {:?}",
        c.noise
    );
    with_noise(&mut v[1], 12.0, 4.0);
    let c = compare(&v);
    assert_eq!(c.noise.len(), 2, "both steps");
    let n = &c.noise[0];
    assert_eq!((n.step.as_str(), n.version.as_str()), ("readrandom", "new"));
    assert_eq!(n.steal_pct, [Some(0.0), Some(12.0)]);
    assert!(
        n.note
            .starts_with("readrandom: new had 12% steal, base 0%: the difference may be the host"),
        "{}",
        n.note
    );
    let text = plumb_report::comparison_text(&c);
    assert!(text.contains("readrandom *"), "{text}");
    assert!(text.contains("* readrandom: new had 12% steal"), "{text}");
    let md = markdown::comparison(&c);
    assert!(
        md.contains("readrandom \\*") && md.contains("\\* readrandom: new had 12%"),
        "{md}"
    );
    // Outside load alone also marks.
    with_noise(&mut v[1], 0.0, 30.0);
    let c = compare(&v);
    assert!(c.noise[0]
        .note
        .contains("other processes used 30% of the machine beside new, 1% beside base"));
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["noise"][0]["outside_cpu_pct"][1], 30.0);
}

#[test]
fn no_neighbour_warning_on_a_maintenance_step_or_a_window_of_a_few_ticks() {
    let outside = |v: &[plumb_report::Version]| {
        warnings_of(v)
            .iter()
            .filter(|w| w.contains("another process used"))
            .count()
    };
    let mut v = base_and_new();
    with_noise(&mut v[1], 0.0, 44.0);
    let all = outside(&v);
    assert!(all > 0, "a measured step beside a neighbour is warned");
    // The same figure on a compaction wait (a maintenance step): silent.
    let mut m = v.clone();
    for r in &mut m[1].runs {
        for (s, _) in &mut r.steps {
            s.name = "waitforcompaction".into();
            s.kind = plumb_workloads::StepKind::WaitForCompaction.into();
        }
    }
    assert_eq!(outside(&m), 0);
    // A measured step of 0.3 s on 2 CPUs: 60 of /proc/stat's ticks, too few to judge.
    let mut short = v.clone();
    for r in &mut short[1].runs {
        for (s, _) in &mut r.steps {
            s.summary.secs = 0.3;
        }
    }
    assert_eq!(outside(&short), 0);
    // Half a second on 2 CPUs is the least judged, and is warned.
    for r in &mut short[1].runs {
        for (s, _) in &mut r.steps {
            s.summary.secs = 0.5;
        }
    }
    assert_eq!(outside(&short), all);
    // A run whose host did not say its CPUs counts as one CPU: 0.5 s is too short.
    for r in &mut short[1].runs {
        r.run.host = None;
    }
    assert_eq!(outside(&short), 0);
}

/// `r` with a wait profile on step `x`: `lock` of 20 sessions seen in a row lock, the
/// rest on a CPU, 10 samples over the 2-second step (2 sessions active on average).
fn with_waits(mut r: plumb_store::StoredRun, lock: u64) -> plumb_store::StoredRun {
    use plumb_core::{WaitProfile, WaitShare};
    for (s, _) in r.steps.iter_mut() {
        s.summary.waits = Some(WaitProfile {
            source: "pg_stat_activity".into(),
            hz: 5.0,
            samples: 10,
            secs: 2.0,
            sessions: 20,
            events: vec![
                WaitShare {
                    class: "Lock".into(),
                    event: "tuple".into(),
                    samples: lock,
                },
                WaitShare {
                    class: "CPU".into(),
                    event: "CPU".into(),
                    samples: 20 - lock,
                },
            ],
            ..Default::default()
        });
    }
    r
}

/// Each wait's µs per query is set against the base as a server counter is: a lock
/// that held sessions three times as long per query reads × 3.
#[test]
fn waits_per_query_compare_against_the_base() {
    let vs = vec![
        version(
            "A",
            vec![with_waits(run(1, "A", &[fig("x", 100.0, None)]), 5)],
        ),
        version(
            "B",
            vec![with_waits(run(2, "B", &[fig("x", 100.0, None)]), 15)],
        ),
    ];
    let c = compare(&vs);
    let t = c
        .server_counters
        .iter()
        .find(|t| t.metric == "wait.Lock:tuple/query")
        .unwrap_or_else(|| {
            panic!(
                "no wait row: {:?}",
                c.server_counters
                    .iter()
                    .map(|t| &t.metric)
                    .collect::<Vec<_>>()
            )
        });
    // 2 active × 2 s / 200 queries = 20000 µs per query, a quarter of it in the lock.
    assert_eq!(t.rows[0][0].median, Some(5000.0));
    assert_eq!(t.rows[0][1].median, Some(15000.0));
    assert!((t.rows[0][1].ratio.unwrap() - 3.0).abs() < 1e-9);
}
