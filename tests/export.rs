//! `plumb export` and `plumb import` end to end: a bundle of two groups carried into an
//! empty store compares as the original does; Bencher's, Otava's and OpenMetrics' text
//! come out in their formats; bad input gets one clear error.

mod common;

use common::{ok_json, plumb, stderr};
use serde_json::Value;
use std::path::Path;

/// Two groups of two repeats of the memory engine, tagged `base` and `new`.
fn two_groups(store: &Path) {
    for tag in ["base", "new"] {
        let o = plumb(
            store,
            &[
                "kv",
                "--engine",
                "memory",
                "--benchmarks",
                "fillseq,readrandom",
                "--num",
                "2000",
                "--duration",
                "0.5",
                "--repeat",
                "2",
                "--tag",
                tag,
                "--json",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

fn text(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", stderr(o));
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// `plumb compare tag=base tag=new --json`'s figures: the steps and every table, without
/// the run ids (a store's own).
fn figures(store: &Path) -> Value {
    let c = ok_json(&plumb(store, &["compare", "tag=base", "tag=new", "--json"]));
    serde_json::json!({
        "versions": c["versions"],
        "steps": c["steps"],
        "ops_sec": c["ops_sec"],
        "costs": c["costs"],
        "n": c["run_ids"].as_array().unwrap().iter().map(|v| v.as_array().unwrap().len()).collect::<Vec<_>>(),
    })
}

#[test]
fn a_bundle_carries_two_groups_into_an_empty_store_and_compares_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sqlite");
    two_groups(&a);
    let bundle = dir.path().join("results.plumb");
    let b = bundle.to_str().unwrap();
    let o = plumb(
        &a,
        &[
            "export", "tag=base", "tag=new", "--format", "bundle", "-o", b,
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("4 runs"), "{}", stderr(&o));
    // Written once: a second export refuses to replace it, --force does.
    let o = plumb(&a, &["export", "tag=base", "--format", "bundle", "-o", b]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));

    let c = dir.path().join("c.sqlite");
    let out = text(&plumb(&c, &["import", b]));
    assert_eq!(out.matches("copied as run").count(), 4, "{out}");
    let again = text(&plumb(&c, &["import", b]));
    assert_eq!(
        again.matches("already here").count(),
        4,
        "imported once: {again}"
    );

    let want = figures(&a);
    assert_eq!(want["n"], serde_json::json!([2, 2]));
    assert_eq!(figures(&c), want, "the imported store compares the same");
    assert_eq!(figures(&bundle), want, "the bundle is a store itself");
    // Groups are groups under their new ids.
    let runs = ok_json(&plumb(&c, &["runs", "--json"]));
    let groups: std::collections::BTreeSet<i64> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group_id"].as_i64().unwrap())
        .collect();
    assert_eq!(groups.len(), 2, "{runs}");
    let g = groups.iter().next().unwrap();
    text(&plumb(&c, &["compare", &format!("g{g}"), "tag=new"]));
    // The plan travelled too: the run can be run again there.
    let id = runs[0]["id"].as_i64().unwrap().to_string();
    let o = plumb(&c, &["rerun", &id, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = plumb(
        &a,
        &[
            "export", "tag=base", "--format", "bundle", "-o", b, "--force",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = plumb(&bundle, &["runs", "--json"]);
    assert_eq!(ok_json(&o).as_array().unwrap().len(), 2);
}

#[test]
fn text_formats_are_bencher_otava_and_openmetrics() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sqlite");
    two_groups(&a);

    // Bencher Metric Format, as its JSON Schema (crates/report/tests/fixtures) says:
    // benchmark -> measure -> {value, lower_value?, upper_value?}, all numbers.
    let bmf: Value = serde_json::from_str(&text(&plumb(
        &a,
        &["export", "tag=base", "tag=new", "--format", "bmf"],
    )))
    .unwrap();
    let benches = bmf.as_object().unwrap();
    assert!(benches.contains_key("tag=base/readrandom"), "{bmf}");
    assert!(benches.contains_key("tag=new/fillseq"), "{bmf}");
    for (name, measures) in benches {
        assert!(!name.is_empty());
        for (slug, m) in measures.as_object().unwrap() {
            assert!(m["value"].is_number(), "{name} {slug}: {m}");
            for (k, v) in m.as_object().unwrap() {
                assert!(
                    ["value", "lower_value", "upper_value"].contains(&k.as_str()),
                    "{k}"
                );
                assert!(v.is_number(), "{name} {slug} {k}: {v}");
            }
        }
    }
    let t = &bmf["tag=base/readrandom"]["throughput"];
    assert!(
        t["lower_value"].as_f64() <= t["value"].as_f64()
            && t["value"].as_f64() <= t["upper_value"].as_f64(),
        "{t}"
    );
    // One selector: named by step alone. None: every finished run.
    let one: Value =
        serde_json::from_str(&text(&plumb(&a, &["export", "--format", "bmf"]))).unwrap();
    assert!(one.get("readrandom").is_some(), "{one}");

    let om = text(&plumb(&a, &["export", "--format", "openmetrics"]));
    assert!(om.ends_with("# EOF\n"), "{om}");
    assert!(
        om.contains("# TYPE plumb_step_ops_per_second gauge"),
        "{om}"
    );
    assert_eq!(
        om.matches("plumb_step_ops_per_second{").count(),
        8,
        "4 runs x 2 steps: {om}"
    );
    assert!(
        om.contains("tag=\"new\"") && om.contains("engine=\"memory\""),
        "{om}"
    );

    let csv_path = dir.path().join("o.csv");
    let o = plumb(
        &a,
        &[
            "export",
            "tag=base",
            "--format",
            "otava",
            "-o",
            csv_path.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("time,run,commit,engine,version,tag,host,group,"),
        "{csv}"
    );
    assert!(lines[0].contains("readrandom.ops_sec"), "{csv}");
    assert_eq!(lines.len(), 3, "a header and a row per run: {csv}");
}

#[test]
fn bad_input_gets_one_clear_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sqlite");
    let o = plumb(&a, &["export", "--format", "bmf"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("a.sqlite") && stderr(&o).contains("no such file"),
        "{}",
        stderr(&o)
    );
    let o = plumb(&a, &["export", "--format", "xml"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("xml") && stderr(&o).contains("bmf"),
        "{}",
        stderr(&o)
    );
    let o = plumb(&a, &["export", "--format", "bundle"]);
    assert!(stderr(&o).contains("-o FILE"), "{}", stderr(&o));
    let missing = dir.path().join("missing.plumb");
    let o = plumb(&a, &["import", missing.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("missing.plumb") && stderr(&o).contains("no such file"),
        "{}",
        stderr(&o)
    );
    let junk = dir.path().join("notes.txt");
    std::fs::write(&junk, "not a store").unwrap();
    let o = plumb(&a, &["import", junk.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("notes.txt") && stderr(&o).contains("not a plumb store"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(&junk).unwrap(),
        "not a store",
        "left untouched"
    );
}
