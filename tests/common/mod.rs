//! Helpers shared by the end-to-end tests of the `plumb` binary.

#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `plumb ARGS --store STORE` and returns what it printed.
pub fn plumb(store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(args)
        .arg("--store")
        .arg(store)
        .output()
        .expect("run plumb")
}

/// Parses stdout as JSON, showing stderr when it is not.
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Asserts the command succeeded (showing stderr if not) and parses stdout as JSON.
pub fn ok_json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    json_of(o)
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `plumb report SELECTORS --format html` into a file and returns the page.
pub fn html_report(store: &Path, selectors: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("report.html");
    let mut args = vec!["report"];
    args.extend_from_slice(selectors);
    args.extend(["--format", "html", "-o", file.to_str().expect("utf-8 path")]);
    let o = plumb(store, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::read_to_string(&file).expect("report written")
}

/// A step of a run's JSON, by stored name.
pub fn step<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}"))
}

/// Someone else's server for `--url` tests: started here through the library (in
/// `dir`, 64 MiB of cache), not by the run under test.
pub fn external_server(dir: &Path, server: &str, engine: Option<&str>) -> plumb_sql::Managed {
    let choice = plumb_sql::ServerChoice::parse(server, engine, None).unwrap();
    plumb_sql::Managed::start(
        &choice,
        &plumb_sql::StartOptions {
            dir: Some(dir.to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 64,
            config: None,
        },
    )
    .unwrap()
}
