//! `plumb kv --repeat`, `plumb compare` and `plumb report` end to end on the memory
//! engine (fast; the comparison logic itself is tested on fixtures in crates/report).

use serde_json::Value;
use std::path::Path;
use std::process::Output;

mod common;
use common::plumb;

fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn kv(store: &Path, tag: &str) -> Value {
    let out = ok(&plumb(
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
            "1.1",
            "--repeat",
            "2",
            "--tag",
            tag,
            "--json",
        ],
    ));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn repeats_group_and_compare_and_report_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    let base = kv(&store, "base");
    let runs = base.as_array().expect("--repeat 2 --json prints an array");
    assert_eq!(runs.len(), 2);
    let g = runs[0]["run"]["id"].as_i64().unwrap();
    assert_eq!(runs[1]["run"]["group_id"], g);
    assert_eq!(runs[1]["run"]["repeat_index"], 1);
    assert_ne!(
        runs[0]["run"]["seed"], runs[1]["run"]["seed"],
        "each repeat has its own seed"
    );
    kv(&store, "<script>alert(1)</script>");

    let c: Value = serde_json::from_str(&ok(&plumb(
        &store,
        &[
            "compare",
            &format!("g{g}"),
            "tag=<script>alert(1)</script>",
            "--json",
        ],
    )))
    .unwrap();
    assert_eq!(c["versions"].as_array().unwrap().len(), 2);
    assert_eq!(c["steps"], serde_json::json!(["fillseq", "readrandom"]));
    let cell = &c["ops_sec"]["rows"][1][1];
    assert!(cell["ratio"].as_f64().unwrap() > 0.0);
    assert!(cell["ci"].is_array(), "two repeats a side give an interval");
    let text = ok(&plumb(
        &store,
        &["compare", &format!("g{g}"), "tag=<script>alert(1)</script>"],
    ));
    assert!(text.contains("relative to"), "{text}");

    for (fmt, needle) in [
        ("md", "| test |"),
        ("csv", "run_id,group_id"),
        ("json", "plumb-report/1"),
        ("text", "ops_sec"),
    ] {
        let out = dir.path().join(format!("r.{fmt}"));
        ok(&plumb(
            &store,
            &[
                "report",
                &format!("g{g}"),
                "tag=<script>alert(1)</script>",
                "--format",
                fmt,
                "-o",
                out.to_str().unwrap(),
            ],
        ));
        let body = std::fs::read_to_string(&out).unwrap();
        assert!(body.contains(needle), "{fmt} lacks {needle}");
    }
    let html = dir.path().join("r.html");
    ok(&plumb(
        &store,
        &[
            "report",
            &format!("g{g}"),
            "tag=<script>alert(1)</script>",
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ],
    ));
    let body = std::fs::read_to_string(&html).unwrap();
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!body.contains("<script"), "no script element in the report");
}

#[test]
fn unknown_selectors_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("s.sqlite");
    ok(&plumb(
        &store,
        &[
            "kv",
            "--engine",
            "null",
            "--benchmarks",
            "readrandom",
            "--duration",
            "0.3",
        ],
    ));
    for sel in ["999", "g999", "tag=nothing", "bogus"] {
        let o = plumb(&store, &["compare", "1", sel]);
        assert_eq!(o.status.code(), Some(2), "{sel}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(sel), "{sel}: {e}");
    }
}
