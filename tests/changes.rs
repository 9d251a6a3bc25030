//! `plumb check` keeps the change it finds, once, and honours what `plumb changes set`
//! says of it, over a generated history with one known change (plumb_serve::generate:
//! real store rows through the store's own write path, figures known in advance).

use plumb_serve::generate::{self, Change, Spec};
use plumb_store::Store;
use std::path::Path;

mod common;

fn spec() -> Spec {
    Spec {
        groups: 6,
        change: Some(Change {
            plan: 0,
            at_group: 5,
            step: "readrandom".into(),
            factor: 0.8,
        }),
        intervals: 5,
        ..Spec::default()
    }
}

fn out(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn changes_json(store: &Path, state: &str) -> Vec<serde_json::Value> {
    let o = common::plumb(store, &["changes", "list", "--state", state, "--json"]);
    assert!(o.status.success(), "{}", out(&o));
    serde_json::from_slice::<Vec<serde_json::Value>>(&o.stdout).unwrap()
}

#[test]
fn a_change_is_kept_once_and_a_change_called_noise_stops_failing_the_gate() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s.sqlite");
    let g = {
        let mut store = Store::open(&path).unwrap();
        generate::history(&mut store, &spec()).unwrap()
    };
    let newest = &g.plans[0].groups[5];
    // The newest night is 20% slower than the five before it: a regression, kept.
    let o = common::plumb(&path, &["check", "--format", "github"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = out(&o);
    assert!(text.starts_with("❌ **plumb check: 1 slower"), "{text}");
    assert!(text.contains("change #1 (untriaged)"), "{text}");
    let kept = changes_json(&path, "untriaged");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        kept[0]["at_run"], newest[0],
        "the first run of the new level"
    );
    assert_eq!(kept[0]["step"], "readrandom");
    let ratio = kept[0]["ratio"].as_f64().unwrap();
    assert!((ratio - 0.8).abs() < 0.03, "{ratio}");
    // Checked again, the same change is seen again, not raised twice.
    let o = common::plumb(&path, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let kept = changes_json(&path, "all");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["seen"], 2);
    // Called noise, the gate passes and says who called it so.
    let o = common::plumb(
        &path,
        &[
            "changes",
            "set",
            "1",
            "not-a-change",
            "--note",
            "a neighbour's backup",
            "--by",
            "ana",
        ],
    );
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("not-a-change"), "{}", out(&o));
    let o = common::plumb(&path, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        out(&o).contains("change #1 was triaged not-a-change by ana: a neighbour's backup"),
        "{}",
        out(&o)
    );
    // A state that does not exist, and a change that does not, are one clear error each.
    let o = common::plumb(&path, &["changes", "set", "1", "done"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("not-a-change"), "{}", out(&o));
    let o = common::plumb(&path, &["changes", "set", "1,99", "fixed"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("no change 99"), "{}", out(&o));
    assert_eq!(
        changes_json(&path, "not-a-change").len(),
        1,
        "nothing set by the refused call"
    );
}

/// A store whose newest night regressed, checked once (so the change is kept as #1).
fn regressed() -> (tempfile::TempDir, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("s.sqlite");
    {
        let mut store = Store::open(&path).unwrap();
        generate::history(&mut store, &spec()).unwrap();
    }
    let o = common::plumb(&path, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    (d, path)
}

fn night(path: &Path, factor: f64) {
    let mut store = Store::open(path).unwrap();
    generate::append_group(&mut store, &spec(), 0, factor).unwrap();
}

#[test]
fn a_fixed_change_judges_the_next_nights_against_the_level_before_it() {
    let (_d, path) = regressed();
    let o = common::plumb(&path, &["changes", "set", "1", "fixed", "--by", "bo"]);
    assert!(o.status.success(), "{}", out(&o));
    // Back at the old level: judged against the nights before the change (the slow night
    // left out of the base), it passes.
    night(&path, 1.0);
    let o = common::plumb(&path, &["check"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        out(&o).contains("moved by triaged change #1"),
        "{}",
        out(&o)
    );
    // Slow again: a fixed change that comes back is a new change, and fails.
    night(&path, 0.8);
    let o = common::plumb(&path, &["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains("change #2 (untriaged)"), "{}", out(&o));
}

#[test]
fn an_expected_change_makes_the_new_level_the_base() {
    let (_d, path) = regressed();
    let o = common::plumb(&path, &["changes", "set", "1", "expected", "--by", "bo"]);
    assert!(o.status.success(), "{}", out(&o));
    night(&path, 0.8);
    let o = common::plumb(&path, &["check", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        report["base"]
            .as_str()
            .unwrap()
            .contains("moved by triaged change #1"),
        "{report}"
    );
}
