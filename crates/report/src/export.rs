//! Runs in the formats of the tools teams already run, so plumb's results reach them
//! without a converter of their own: Bencher's metric format (BMF JSON, for `bencher run
//! --adapter json`), Apache Otava's CSV (its `type: csv` test; docs/otava.md also reads
//! the PostgreSQL store directly), and OpenMetrics text (a Prometheus scrape target
//! behind any static file server). Pure functions of stored runs: no IO.
//!
//! Every format carries the measured steps (not maintenance such as a flush) that ended
//! ok, with the same three figures: ops/s, p99 latency and CPU per op, each in the unit
//! its format expects (named at each function).

use crate::stats::median;
use crate::version::{measured_steps, values, Version};
use plumb_core::{StepStatus, StepSummary};
use plumb_store::StoredRun;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// A figure every export carries, with how each format names it.
struct Figure {
    /// plumb's own name (Otava CSV columns: `STEP.NAME`).
    name: &'static str,
    /// Bencher's measure slug (its built-ins where one exists).
    bencher: &'static str,
    /// Factor from plumb's unit to Bencher's.
    bencher_scale: f64,
    /// The OpenMetrics family.
    family: &'static str,
    /// Factor from plumb's unit to the family's (base units: seconds).
    om_scale: f64,
    /// The family's unit, when its name ends with it (OpenMetrics requires that).
    om_unit: Option<&'static str>,
    /// The family's HELP text.
    help: &'static str,
    /// Whether higher is better (Otava's `direction`).
    higher_is_better: bool,
    get: fn(&StepSummary) -> Option<f64>,
}

/// The figures, in the order every format lists them.
const FIGURES: [Figure; 3] = [
    Figure {
        name: "ops_sec",
        bencher: "throughput",
        bencher_scale: 1.0,
        family: "plumb_step_ops_per_second",
        om_scale: 1.0,
        om_unit: None,
        help: "Operations per second over the step's measured window.",
        higher_is_better: true,
        get: |s| Some(s.ops_sec),
    },
    Figure {
        name: "p99_us",
        bencher: "latency",
        // Bencher's built-in Latency measure is in nanoseconds.
        bencher_scale: 1e3,
        family: "plumb_step_p99_seconds",
        om_scale: 1e-6,
        om_unit: Some("seconds"),
        help: "99th percentile of the step's op latency (merged HDR histogram).",
        higher_is_better: false,
        get: |s| s.p99_us,
    },
    Figure {
        name: "cpu_us_op",
        bencher: "cpu-per-op",
        bencher_scale: 1.0,
        family: "plumb_step_cpu_seconds_per_op",
        om_scale: 1e-6,
        om_unit: None,
        help: "User plus system CPU time of the measured process per op.",
        higher_is_better: false,
        get: |s| s.cpu_us_op,
    },
];

/// The step of a run by name, if it ended ok (the first, should a name repeat).
fn ok_step<'a>(r: &'a StoredRun, step: &str) -> Option<&'a StepSummary> {
    r.steps
        .iter()
        .find(|(s, _)| s.name == step)
        .filter(|(s, _)| s.status == StepStatus::Ok)
        .map(|(s, _)| &s.summary)
}

/// A figure of a run's step, when it has a finite one.
fn figure(r: &StoredRun, step: &str, f: &Figure) -> Option<f64> {
    ok_step(r, step).and_then(f.get).filter(|v| v.is_finite())
}

fn hostname(r: &StoredRun) -> Option<&str> {
    r.run.host.as_ref()?.inventory.hostname.as_deref()
}

/// Bencher Metric Format: `{"BENCHMARK": {"MEASURE": {"value", "lower_value",
/// "upper_value"}}}`, one benchmark per measured step of each version (named `STEP`
/// with one version, `LABEL/STEP` with several, LABEL the selector), for `bencher run
/// --adapter json`. Measures, in Bencher's units:
///
/// - `throughput` (built in, operations / second): ops/s;
/// - `latency` (built in, nanoseconds): the step's p99 latency;
/// - `cpu-per-op` (created by Bencher on first use; microseconds): user + system CPU of
///   the measured process per op.
///
/// `value` is the median over the version's repeats; `lower_value` and `upper_value`
/// are the lowest and highest repeat, given with two repeats or more (Bencher draws them
/// as the figure's band). A figure no repeat has is left out.
pub fn bmf(versions: &[Version]) -> Value {
    let mut out = Map::new();
    for v in versions {
        for step in measured_steps(v.runs.iter()) {
            let mut measures = Map::new();
            for f in &FIGURES {
                let vals: Vec<f64> = values(v, &step, &|s| (f.get)(s))
                    .into_iter()
                    .map(|x| x * f.bencher_scale)
                    .collect();
                let Some(m) = median(&vals) else { continue };
                let mut metric = Map::new();
                metric.insert("value".into(), json!(m));
                if vals.len() >= 2 {
                    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    metric.insert("lower_value".into(), json!(lo));
                    metric.insert("upper_value".into(), json!(hi));
                }
                measures.insert(f.bencher.into(), Value::Object(metric));
            }
            if measures.is_empty() {
                continue;
            }
            let name = if versions.len() == 1 {
                step.clone()
            } else {
                format!("{}/{step}", v.label)
            };
            out.insert(name, Value::Object(measures));
        }
    }
    Value::Object(out)
}

/// Apache Otava's CSV: what its `type: csv` test reads.
#[derive(Debug, Clone, PartialEq)]
pub struct OtavaCsv {
    /// The file: a header, then one row per run, oldest first.
    pub text: String,
    /// The metric columns (`STEP.FIGURE`), in header order: what the test's `metrics:`
    /// lists.
    pub metrics: Vec<String>,
    /// Columns left out because some run lacks the figure: Otava reads every cell of a
    /// metric column as a number and refuses an empty one, so a column is written only
    /// when every run has it (select the runs of one plan to keep them all).
    pub left_out: Vec<String>,
}

/// The attribute columns of [`otava_csv`], after `time`.
pub const OTAVA_ATTRIBUTES: [&str; 7] =
    ["run", "commit", "engine", "version", "tag", "host", "group"];

/// Runs as Otava's CSV: one row per run, oldest first, with `time` (the run's start,
/// RFC 3339), the attributes `run`, `commit` (plumb's git commit), `engine`, `version`
/// (the engine's), `tag`, `host` and `group`, then one column per measured step and
/// figure, `STEP.ops_sec` (ops/s, higher is better), `STEP.p99_us` (µs) and
/// `STEP.cpu_us_op` (µs per op). docs/otava.md has the test configuration that reads it.
pub fn otava_csv(runs: &[StoredRun]) -> OtavaCsv {
    let mut runs: Vec<&StoredRun> = runs.iter().collect();
    runs.sort_by(|a, b| {
        (a.run.started_at.as_str(), a.run.id).cmp(&(b.run.started_at.as_str(), b.run.id))
    });
    let steps = measured_steps(runs.iter().copied());
    let mut columns: Vec<(String, &str, &Figure)> = Vec::new();
    let mut left_out = Vec::new();
    for step in &steps {
        for f in &FIGURES {
            let name = format!("{step}.{}", f.name);
            let everywhere = runs.iter().all(|r| figure(r, step, f).is_some());
            let anywhere = runs.iter().any(|r| figure(r, step, f).is_some());
            if everywhere && !runs.is_empty() {
                columns.push((name, step, f));
            } else if anywhere {
                left_out.push(name);
            }
        }
    }
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut header = vec!["time".to_string()];
    header.extend(OTAVA_ATTRIBUTES.iter().map(|a| a.to_string()));
    header.extend(columns.iter().map(|(n, _, _)| n.clone()));
    w.write_record(&header).expect("writing to memory");
    for r in &runs {
        let mut row = vec![
            r.run.started_at.clone(),
            r.run.id.to_string(),
            r.run.git_hash.clone().unwrap_or_default(),
            r.run.engine.clone(),
            r.run.engine_version.clone(),
            r.run.tag.clone().unwrap_or_default(),
            hostname(r).unwrap_or_default().to_string(),
            r.run.group_id.map(|g| g.to_string()).unwrap_or_default(),
        ];
        for (_, step, f) in &columns {
            row.push(
                figure(r, step, f)
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            );
        }
        w.write_record(&row).expect("writing to memory");
    }
    let text = String::from_utf8(w.into_inner().expect("writing to memory")).expect("utf-8 in");
    OtavaCsv {
        text,
        metrics: columns.into_iter().map(|(n, _, _)| n).collect(),
        left_out,
    }
}

/// The `metrics:` block of an Otava test over [`otava_csv`]'s columns, each with its
/// direction (1: higher is better, -1: lower is better), indented for a test entry.
pub fn otava_metrics_yaml(metrics: &[String]) -> String {
    let mut out = String::from("    metrics:\n");
    for m in metrics {
        let up = FIGURES
            .iter()
            .find(|f| m.ends_with(&format!(".{}", f.name)))
            .is_none_or(|f| f.higher_is_better);
        let _ = writeln!(
            out,
            "      \"{m}\":\n        direction: {}",
            if up { 1 } else { -1 }
        );
    }
    out
}

/// A label value as OpenMetrics writes it: backslash, double quote and line feed
/// escaped (`\\`, `\"`, `\n`); every other character as it is.
pub fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// Runs as OpenMetrics text: one gauge family per figure, `plumb_step_ops_per_second`,
/// `plumb_step_p99_seconds` and `plumb_step_cpu_seconds_per_op` (base units: seconds),
/// one sample per run and measured step, labelled `run`, `group`, `step`, `engine`,
/// `version` (the engine's), `host` and `tag` (empty when unknown), ending with `# EOF`.
/// Samples carry no timestamp: Prometheus would drop a run's own start, hours old, as
/// out of bounds; `run` keeps every run its own series. A scrape target is this text
/// behind any static file server (docs/export.md says how).
pub fn openmetrics(runs: &[StoredRun]) -> String {
    let mut out = String::new();
    for f in &FIGURES {
        let _ = writeln!(out, "# TYPE {} gauge", f.family);
        if let Some(u) = f.om_unit {
            let _ = writeln!(out, "# UNIT {} {u}", f.family);
        }
        let _ = writeln!(out, "# HELP {} {}", f.family, f.help);
        for r in runs {
            for step in measured_steps(std::iter::once(r)) {
                let Some(v) = figure(r, &step, f) else {
                    continue;
                };
                let labels = [
                    ("run", r.run.id.to_string()),
                    (
                        "group",
                        r.run.group_id.map(|g| g.to_string()).unwrap_or_default(),
                    ),
                    ("step", step.clone()),
                    ("engine", r.run.engine.clone()),
                    ("version", r.run.engine_version.clone()),
                    ("host", hostname(r).unwrap_or_default().to_string()),
                    ("tag", r.run.tag.clone().unwrap_or_default()),
                ];
                let labels: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                let _ = writeln!(
                    out,
                    "{}{{{}}} {}",
                    f.family,
                    labels.join(","),
                    number(v * f.om_scale)
                );
            }
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A finite figure as OpenMetrics reads a float: Rust's shortest round-trip rendering,
/// which never uses an exponent and so is always a plain real number.
fn number(v: f64) -> String {
    let s = v.to_string();
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::RunStatus;
    use plumb_store::{RunRecord, StepRecord};

    /// A hostile label or cell: a quote, a backslash, a line feed, a comma.
    const HOSTILE: &str = "a\"b\\c\nd,e";

    /// A finished run of `steps` (name, ops/s, p99 µs, CPU µs/op).
    fn run(
        id: i64,
        group: Option<i64>,
        tag: &str,
        steps: &[(&str, f64, Option<f64>, Option<f64>)],
    ) -> StoredRun {
        let host = plumb_store::HostSnapshot {
            inventory: plumb_host::Inventory {
                hostname: Some("db7".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        StoredRun {
            run: RunRecord {
                id,
                status: RunStatus::Ok,
                tag: Some(tag.into()),
                command: "plumb kv".into(),
                workload: "readrandom".into(),
                engine: "rocksdb".into(),
                engine_version: "11.8.1".into(),
                plumb_version: "0.1.0".into(),
                git_hash: Some(format!("abc{id}")),
                options: Default::default(),
                seed: "1".into(),
                started_at: format!("2026-01-0{}T10:00:00.000Z", 9 - id),
                ended_at: Some("2026-01-09T11:00:00.000Z".into()),
                data_dir: None,
                device: None,
                host: Some(host),
                group_id: group,
                repeat_index: group.map(|_| 0),
                suite_id: None,
                plan: None,
                plan_hash: None,
            },
            steps: steps
                .iter()
                .enumerate()
                .map(|(i, (name, ops, p99, cpu))| {
                    (
                        StepRecord {
                            seq: i as i64,
                            name: name.to_string(),
                            kind: plumb_workloads::StepKind::ReadRandom.into(),
                            status: StepStatus::Ok,
                            error: None,
                            started_at: "a".into(),
                            ended_at: "b".into(),
                            config: json!({}),
                            summary: StepSummary {
                                ops_sec: *ops,
                                p99_us: *p99,
                                cpu_us_op: *cpu,
                                ..StepSummary::default()
                            },
                        },
                        Vec::new(),
                    )
                })
                .collect(),
        }
    }

    fn schema() -> jsonschema::Validator {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/bmf.schema.json"
        ))
        .unwrap();
        jsonschema::validator_for(&serde_json::from_str(&text).unwrap()).unwrap()
    }

    #[test]
    fn bmf_is_bencher_metric_format_with_medians_and_the_repeats_range() {
        let base = Version {
            label: "g1".into(),
            runs: vec![
                run(
                    1,
                    Some(1),
                    "a",
                    &[("readrandom", 100.0, Some(7.5), Some(2.0))],
                ),
                run(
                    2,
                    Some(1),
                    "a",
                    &[("readrandom", 120.0, Some(8.5), Some(2.5))],
                ),
                run(3, Some(1), "a", &[("readrandom", 110.0, None, Some(3.0))]),
            ],
        };
        let new = Version {
            label: "tag=new".into(),
            runs: vec![run(
                4,
                None,
                "new",
                &[("readrandom", 90.0, Some(9.0), None)],
            )],
        };
        let doc = bmf(&[base.clone(), new]);
        let v = schema();
        assert!(v.is_valid(&doc), "{doc:#}");
        let t = &doc["g1/readrandom"]["throughput"];
        assert_eq!(t["value"], 110.0);
        assert_eq!(
            (t["lower_value"].clone(), t["upper_value"].clone()),
            (json!(100.0), json!(120.0))
        );
        // p99 in Bencher's nanoseconds, over the two repeats that have one.
        assert_eq!(doc["g1/readrandom"]["latency"]["value"], 8000.0);
        assert_eq!(doc["g1/readrandom"]["cpu-per-op"]["value"], 2.5);
        let one = &doc["tag=new/readrandom"];
        assert_eq!(
            one["throughput"],
            json!({"value": 90.0}),
            "no range of one run"
        );
        assert!(one.get("cpu-per-op").is_none(), "{one}");
        // One version: benchmarks named by step alone.
        let single = bmf(std::slice::from_ref(&base));
        assert!(v.is_valid(&single));
        assert!(single.get("readrandom").is_some(), "{single}");
        // The schema does refuse what is not BMF.
        for bad in [
            json!({"readrandom": {"throughput": {"value": "110"}}}),
            json!({"readrandom": {"throughput": {"lower_value": 1.0}}}),
            json!({"readrandom": {"throughput": 110.0}}),
            json!({"readrandom": [1.0]}),
        ] {
            assert!(!v.is_valid(&bad), "{bad}");
        }
    }

    #[test]
    fn openmetrics_parses_back_with_every_label_and_a_hostile_one_intact() {
        let runs = [
            run(
                1,
                Some(1),
                HOSTILE,
                &[("readrandom", 1000.0, Some(250.0), Some(1.5))],
            ),
            run(
                2,
                None,
                "plain",
                &[
                    ("readrandom", 2e9, None, None),
                    ("overwrite", 3.0, Some(1.0), None),
                ],
            ),
        ];
        let text = openmetrics(&runs);
        assert!(text.ends_with("\n# EOF\n"), "{text}");
        // A line grammar check: descriptors, samples `name{k="v",…} number`, the end.
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# ") {
                let kw = rest.split(' ').next().unwrap();
                assert!(["TYPE", "UNIT", "HELP", "EOF"].contains(&kw), "{line}");
                continue;
            }
            let (name, rest) = line.split_once('{').expect(line);
            assert!(name.starts_with("plumb_step_"), "{line}");
            let (labels, value) = rest.rsplit_once("} ").expect(line);
            assert!(
                value.parse::<f64>().is_ok() && value.contains('.'),
                "{line}"
            );
            // Inside a quoted value only \\, \" and \n appear escaped, never raw.
            let mut chars = labels.chars();
            let mut quoted = false;
            while let Some(c) = chars.next() {
                match (quoted, c) {
                    (false, '"') | (true, '"') => quoted = !quoted,
                    (true, '\\') => {
                        assert!(matches!(chars.next(), Some('\\' | '"' | 'n')), "{line}")
                    }
                    (true, '\n') => panic!("raw newline"),
                    _ => {}
                }
            }
            assert!(!quoted, "{line}");
        }
        assert!(text.contains(r#"tag="a\"b\\c\nd,e""#), "{text}");
        // A real OpenMetrics parser reads it back, labels unescaped.
        let parsed =
            openmetrics_parser::openmetrics::parse_openmetrics(&text).expect("valid OpenMetrics");
        let ops = &parsed.families["plumb_step_ops_per_second"];
        assert_eq!(ops.iter_samples().count(), 3);
        let mut seen = Vec::new();
        for s in ops.iter_samples() {
            let l = s.get_labelset().unwrap();
            let get = |k| l.get_label_value(k).unwrap().to_string();
            let value = match &s.value {
                openmetrics_parser::OpenMetricsValue::Gauge(n) => n.as_f64(),
                other => panic!("not a gauge: {other:?}"),
            };
            seen.push((get("run"), get("step"), get("tag"), get("group"), value));
            assert_eq!(
                (get("engine"), get("version"), get("host")),
                ("rocksdb".into(), "11.8.1".into(), "db7".into())
            );
        }
        seen.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(
            seen,
            vec![
                (
                    "1".into(),
                    "readrandom".into(),
                    HOSTILE.to_string(),
                    "1".into(),
                    1000.0
                ),
                (
                    "2".into(),
                    "overwrite".into(),
                    "plain".into(),
                    String::new(),
                    3.0
                ),
                (
                    "2".into(),
                    "readrandom".into(),
                    "plain".into(),
                    String::new(),
                    2e9
                ),
            ]
        );
        let p99 = &parsed.families["plumb_step_p99_seconds"];
        assert_eq!(p99.unit, "seconds");
        let v: Vec<f64> = p99
            .iter_samples()
            .map(|s| match &s.value {
                openmetrics_parser::OpenMetricsValue::Gauge(n) => n.as_f64(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(v, vec![250e-6, 1e-6]);
        assert_eq!(
            parsed.families["plumb_step_cpu_seconds_per_op"]
                .iter_samples()
                .count(),
            1
        );
        // Without its end it is not OpenMetrics.
        assert!(openmetrics_parser::openmetrics::parse_openmetrics(
            text.trim_end_matches("# EOF\n")
        )
        .is_err());
        assert_eq!(
            openmetrics(&[]),
            format!("{}# EOF\n", openmetrics(&[]).trim_end_matches("# EOF\n"))
        );
    }

    #[test]
    fn otava_csv_has_a_row_per_run_oldest_first_and_only_full_columns() {
        let runs = [
            run(
                1,
                Some(1),
                HOSTILE,
                &[
                    ("readrandom", 100.5, Some(7.0), Some(1.0)),
                    ("overwrite", 5.0, None, None),
                ],
            ),
            run(
                2,
                Some(1),
                "b",
                &[("readrandom", 101.0, Some(8.0), Some(1.25))],
            ),
        ];
        let out = otava_csv(&runs);
        assert_eq!(
            out.metrics,
            [
                "readrandom.ops_sec",
                "readrandom.p99_us",
                "readrandom.cpu_us_op"
            ]
        );
        assert_eq!(out.left_out, ["overwrite.ops_sec"]);
        let mut r = ::csv::Reader::from_reader(out.text.as_bytes());
        let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        assert_eq!(
            header,
            [
                "time",
                "run",
                "commit",
                "engine",
                "version",
                "tag",
                "host",
                "group",
                "readrandom.ops_sec",
                "readrandom.p99_us",
                "readrandom.cpu_us_op"
            ]
        );
        let rows: Vec<Vec<String>> = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        // Run 2 started first (the 7th), so it comes first.
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0][..3], ["2026-01-07T10:00:00.000Z", "2", "abc2"]);
        assert_eq!(rows[1][5], HOSTILE, "a hostile tag reads back whole");
        assert_eq!(rows[1][6..], ["db7", "1", "100.5", "7", "1"]);
        for row in &rows {
            for cell in &row[8..] {
                assert!(
                    cell.parse::<f64>().is_ok(),
                    "every metric cell a number: {cell}"
                );
            }
        }
        let yaml = otava_metrics_yaml(&out.metrics);
        assert!(
            yaml.contains("\"readrandom.ops_sec\":\n        direction: 1"),
            "{yaml}"
        );
        assert!(
            yaml.contains("\"readrandom.p99_us\":\n        direction: -1"),
            "{yaml}"
        );
        assert_eq!(
            otava_csv(&[]).text,
            "time,run,commit,engine,version,tag,host,group\n"
        );
    }
}
