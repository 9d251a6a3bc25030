//! The HTML report, read back with an HTML parser: charts for every step, nothing
//! executable, and run-supplied strings rendered as text.

use plumb_core::{Interval, StepSummary};
use plumb_report::compare::{compare, Version};
use plumb_report::html;
use plumb_store::{RunRecord, StepRecord, StoredRun};
use scraper::{Html, Selector};
use std::collections::BTreeMap;

const EVIL: &str = "<script>alert(1)</script>";
const STEPS: &[&str] = &["fillrandom", "readrandom"];

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn host(numa: &str) -> plumb_store::HostSnapshot {
    serde_json::from_value(serde_json::json!({
        "inventory": { "hostname": "bench1", "cpu": { "threads": 64 } },
        "checks": [
            { "id": "cpu.governor", "verdict": "ok", "reason": "performance", "fix": null },
            { "id": "numa.balancing", "verdict": numa, "reason": "automatic NUMA balancing <on>", "fix": "echo 0 > /proc/sys/kernel/numa_balancing" }
        ]
    }))
    .expect("a partial host snapshot reads back")
}

fn run(id: i64, tag: Option<&str>, block_size: &str, speed: f64, numa: &str) -> StoredRun {
    let mut options = BTreeMap::new();
    options.insert("num".to_string(), "1000000".to_string());
    options.insert("rocksdb.block_size".to_string(), block_size.to_string());
    options.insert("threads".to_string(), "4".to_string());
    let steps = STEPS
        .iter()
        .enumerate()
        .map(|(seq, name)| {
            let base = if seq == 0 { 200_000.0 } else { 500_000.0 } * speed;
            let intervals: Vec<Interval> = (1..=10)
                .map(|t| {
                    let ops_sec = base * (1.0 + 0.05 * ((t as f64) * 1.7 + id as f64).sin());
                    Interval {
                        t: t as f64,
                        secs: 1.0,
                        ops: ops_sec as u64,
                        ops_sec,
                        p50_us: Some(4.0),
                        p99_us: Some(40.0),
                        pmax_us: Some(900.0),
                        ..Default::default()
                    }
                })
                .collect();
            let summary = StepSummary {
                ops: intervals.iter().map(|i| i.ops).sum(),
                secs: 10.0,
                ops_sec: base,
                p50_us: Some(4.0 / speed),
                p99_us: Some(40.0 / speed),
                p999_us: Some(300.0 / speed),
                p9999_us: None,
                pmax_us: Some(9000.0),
                cpu_us_op: Some(6.0 / speed),
                wkb_op: Some(0.4),
                ..Default::default()
            };
            (
                StepRecord {
                    seq: seq as i64,
                    name: name.to_string(),
                    kind: name.parse().expect("a db_bench step"),
                    status: plumb_core::StepStatus::Ok,
                    error: None,
                    started_at: "2026-05-01T10:00:00Z".into(),
                    ended_at: "2026-05-01T10:00:10Z".into(),
                    config: serde_json::json!({}),
                    summary,
                },
                intervals,
            )
        })
        .collect();
    StoredRun {
        run: RunRecord {
            id,
            status: plumb_core::RunStatus::Ok,
            tag: tag.map(str::to_string),
            command: format!("plumb kv --steps fillrandom,readrandom --block-size {block_size}"),
            workload: "fillrandom,readrandom".into(),
            engine: "rocksdb".into(),
            engine_version: "11.8.1".into(),
            plumb_version: "0.1.0".into(),
            git_hash: Some("abc123".into()),
            options,
            seed: format!("{}", 1000 + id),
            started_at: "2026-05-01T10:00:00Z".into(),
            ended_at: Some("2026-05-01T10:00:30Z".into()),
            data_dir: Some(format!("/tmp/plumb-{id}")),
            device: Some("nvme0n1".into()),
            host: Some(host(numa)),
            group_id: None,
            repeat_index: None,
            suite_id: None,
            plan: None,
            plan_hash: None,
        },
        steps,
    }
}

fn fixture() -> (Vec<StoredRun>, String) {
    let runs = vec![
        run(1, Some("base"), "4096", 1.0, "ok"),
        run(2, Some(EVIL), "8192", 1.2, "warn"),
        run(3, None, "4096", 0.8, "ok"),
    ];
    let versions: Vec<Version> = runs
        .iter()
        .map(|r| Version {
            label: r.run.id.to_string(),
            runs: vec![r.clone()],
        })
        .collect();
    let c = compare(&versions);
    let page = html::report(&runs, Some(&c));
    (runs, page)
}

#[test]
fn every_step_has_a_throughput_and_a_latency_chart() {
    let (runs, page) = fixture();
    let doc = Html::parse_document(&page);
    for step in STEPS {
        for kind in ["throughput", "latency"] {
            let s = sel(&format!(r#"svg[data-chart="{kind}"][data-step="{step}"]"#));
            let charts: Vec<_> = doc.select(&s).collect();
            assert_eq!(charts.len(), 1, "{kind} chart for {step}");
            // One line (or set of markers) per run, each named in a legend.
            let series = charts[0].select(&sel("g.series")).count();
            assert_eq!(series, runs.len(), "{kind} {step} series");
            let legend: String = charts[0]
                .select(&sel("g.legend"))
                .flat_map(|g| g.text())
                .collect();
            for r in &runs {
                assert!(legend.contains(&format!("run {}", r.run.id)), "{legend}");
            }
        }
        let thr = doc
            .select(&sel(&format!(
                r#"svg[data-chart="throughput"][data-step="{step}"]"#
            )))
            .next()
            .unwrap();
        assert_eq!(thr.select(&sel("polyline")).count(), runs.len());
    }
}

#[test]
fn nothing_executes_and_the_evil_tag_is_text() {
    let (_, page) = fixture();
    let doc = Html::parse_document(&page);
    assert_eq!(
        doc.select(&sel("script")).count(),
        0,
        "no <script> element anywhere"
    );
    assert!(
        !page.contains("<script"),
        "the raw tag never reaches the markup"
    );
    for el in doc.select(&sel("*")) {
        for (name, _) in el.value().attrs() {
            assert!(!name.starts_with("on"), "event handler attribute {name}");
        }
    }
    let body_text: String = doc.root_element().text().collect();
    assert!(body_text.contains(EVIL), "the tag shows as text");
    // Inside SVG too: the legend names the run by its tag (in full in its tooltip).
    let svg_text: String = doc
        .select(&sel(r#"svg[data-chart="throughput"] g.legend title"#))
        .flat_map(|t| t.text())
        .collect();
    assert!(svg_text.contains(EVIL), "{svg_text}");
    // Nothing fetched from the network.
    assert_eq!(
        doc.select(&sel("link, img, iframe, object, embed")).count(),
        0
    );
}

#[test]
fn relative_bars_for_every_non_base_version() {
    let (_, page) = fixture();
    let doc = Html::parse_document(&page);
    let chart = doc
        .select(&sel(r#"svg[data-chart="relative"][data-metric="ops_sec"]"#))
        .next()
        .expect("relative ops_sec chart");
    for version in ["2", "3"] {
        for step in STEPS {
            let s = sel(&format!(
                r#"g.row[data-step="{step}"][data-version="{version}"]"#
            ));
            let row = chart
                .select(&s)
                .next()
                .unwrap_or_else(|| panic!("bar {step} {version}"));
            assert_eq!(row.select(&sel("rect.bar")).count(), 1);
            // One repeat each: no interval, so nothing is significant: greyed, marked ~.
            assert!(row.value().classes().any(|c| c == "insignificant"));
            let text: String = row
                .select(&sel("text.value"))
                .flat_map(|t| t.text())
                .collect();
            assert!(text.ends_with('~'), "{text}");
        }
    }
    assert_eq!(
        chart.select(&sel(r#"g.row[data-version="1"]"#)).count(),
        0,
        "no bar for the base"
    );
    assert_eq!(
        chart.select(&sel("line.one")).count(),
        1,
        "reference line at 1.0"
    );
    // Per-op costs compared too.
    assert!(doc
        .select(&sel(r#"svg[data-chart="cost"][data-metric="cpu_us_op"]"#))
        .next()
        .is_some());
}

#[test]
fn provenance_highlights_what_differs() {
    let (_, page) = fixture();
    let doc = Html::parse_document(&page);
    let prov = doc
        .select(&sel("table.provenance"))
        .next()
        .expect("provenance table");
    let differing = prov
        .select(&sel(r#"tr.differs[data-option="rocksdb.block_size"]"#))
        .next()
        .expect("block_size highlighted");
    let cells: Vec<String> = differing
        .select(&sel("td"))
        .map(|t| t.text().collect())
        .collect();
    assert_eq!(cells, ["4096", "8192", "4096"]);
    assert!(
        prov.select(&sel(r#"tr[data-option="num"]"#))
            .next()
            .is_none(),
        "equal options are not listed as differing"
    );
    let all = doc
        .select(&sel("table.options"))
        .next()
        .expect("all options");
    let num = all.select(&sel(r#"tr[data-option="num"]"#)).next().unwrap();
    assert!(!num.value().classes().any(|c| c == "differs"));
    // Host checks: the one whose verdict changed is highlighted, the same one is not.
    assert!(prov
        .select(&sel(r#"tr.differs[data-check="numa.balancing"]"#))
        .next()
        .is_some());
    assert!(prov
        .select(&sel(r#"tr.differs[data-check="cpu.governor"]"#))
        .next()
        .is_none());
    let text: String = prov.text().collect();
    assert!(
        text.contains("automatic NUMA balancing <on>"),
        "reasons are text"
    );
    assert!(text.contains("abc123") && text.contains("nvme0n1") && text.contains("1002"));
}

#[test]
fn missing_figures_print_na_and_a_single_run_needs_no_comparison() {
    let (runs, _) = fixture();
    let page = html::report(&runs[..1], None);
    let doc = Html::parse_document(&page);
    for step in STEPS {
        assert!(doc
            .select(&sel(&format!(
                r#"svg[data-chart="throughput"][data-step="{step}"]"#
            )))
            .next()
            .is_some());
    }
    assert_eq!(doc.select(&sel(r#"svg[data-chart="relative"]"#)).count(), 0);
    let summary: Vec<String> = doc
        .select(&sel("table.summary td"))
        .map(|t| t.text().collect())
        .collect();
    assert!(
        summary.iter().any(|c| c == "n/a"),
        "p99.99 is missing: {summary:?}"
    );
    assert!(!summary.iter().any(|c| c == "NaN" || c == "inf"));
}

#[test]
fn escape_covers_attributes() {
    assert_eq!(
        html::esc(r#"<a href="x" onclick='y'>&"#),
        "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;"
    );
}

/// Two versions of three repeats each: the faster one is significantly better.
fn repeats() -> String {
    let old: Vec<StoredRun> = (1..=3)
        .map(|i| run(i, Some("old"), "4096", 1.0 + 0.01 * i as f64, "ok"))
        .collect();
    let new: Vec<StoredRun> = (4..=6)
        .map(|i| {
            run(
                i,
                Some(EVIL),
                "8192",
                1.3 + 0.01 * i as f64,
                if i == 5 { "warn" } else { "ok" },
            )
        })
        .collect();
    let versions = vec![
        Version {
            label: "tag=old".into(),
            runs: old.clone(),
        },
        Version {
            label: "tag=new".into(),
            runs: new.clone(),
        },
    ];
    let c = compare(&versions);
    html::report(&[old, new].concat(), Some(&c))
}

#[test]
fn significant_differences_are_coloured_by_direction() {
    let doc = Html::parse_document(&repeats());
    let ops = doc
        .select(&sel(
            r#"svg[data-chart="relative"][data-metric="ops_sec"] g.row.better rect.bar"#,
        ))
        .count();
    assert_eq!(ops, STEPS.len(), "faster is better for ops/s");
    let cpu = doc
        .select(&sel(
            r#"svg[data-chart="cost"][data-metric="cpu_us_op"] g.row.better"#,
        ))
        .count();
    assert_eq!(cpu, STEPS.len(), "less CPU per op is better");
    // Repeats of one version share a colour and differ by dash.
    let chart = doc
        .select(&sel(
            r#"svg[data-chart="throughput"][data-step="readrandom"]"#,
        ))
        .next()
        .unwrap();
    let strokes: Vec<(String, String)> = chart
        .select(&sel("polyline"))
        .map(|p| {
            let a = |k| p.value().attr(k).unwrap_or("").to_string();
            (a("stroke"), a("stroke-dasharray"))
        })
        .collect();
    assert_eq!(strokes.len(), 6);
    let unique: std::collections::BTreeSet<_> = strokes.iter().collect();
    assert_eq!(unique.len(), 6, "every run is distinguishable: {strokes:?}");
}

/// Writes the fixture page for a look in a browser:
/// `cargo test --release -p plumb-report --test html -- --ignored write_page`.
#[test]
#[ignore]
fn write_page() {
    std::fs::write("/tmp/plumb-report.html", repeats()).unwrap();
}

#[test]
fn a_probe_runs_position_scan_is_drawn_as_mb_s_by_offset() {
    let mut probe = run(7, None, "4096", 1.0, "ok");
    let template = probe.steps[0].clone();
    probe.steps = (0..4u64)
        .map(|i| {
            let (mut s, iv) = template.clone();
            s.name = format!("zcav.{i:03}");
            s.kind = "seqread".parse().expect("a probe step kind");
            s.config = serde_json::json!({"pattern": "zcav", "offset": i << 30});
            s.summary.mb_sec = Some(200.0 - 20.0 * i as f64);
            (s, iv)
        })
        .collect();
    let page = html::report(std::slice::from_ref(&probe), None);
    let doc = Html::parse_document(&page);
    let chart = doc
        .select(&sel(r#"svg[data-chart="zcav"]"#))
        .next()
        .expect("a zcav chart");
    // One line through the four slices.
    let line = chart
        .select(&sel("polyline"))
        .next()
        .expect("a line")
        .value()
        .attr("points")
        .unwrap()
        .to_string();
    assert_eq!(line.split_whitespace().count(), 4, "{line}");
    // Without zcav steps there is no such chart.
    let plain = html::report(&[run(8, None, "4096", 1.0, "ok")], None);
    assert!(!plain.contains(r#"data-chart="zcav""#));
}
