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

/// The cells of phase `phase`'s row in `plumb show`'s phase table of `step` (from_s,
/// secs, what it asked for, served/s, worst_p99, phase).
pub fn phase_row(show: &str, step: &str, phase: &str) -> Vec<String> {
    let table = show
        .split(&format!("{step} phase by phase"))
        .nth(1)
        .unwrap_or_else(|| panic!("no phase table of {step}: {show}"));
    table
        .lines()
        .find(|l| l.trim_end().ends_with(phase))
        .unwrap_or_else(|| panic!("no row {phase}: {table}"))
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Someone else's server for `--url` tests: started here through the library (in
/// `dir`, 64 MiB of cache), not by the run under test.
pub fn external_server(dir: &Path, server: &str, engine: Option<&str>) -> plumb_servers::Managed {
    let choice = plumb_servers::ServerChoice::parse(server, engine, None).unwrap();
    plumb_servers::Managed::start(
        &choice,
        &plumb_servers::StartOptions {
            dir: Some(dir.to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 64,
            config: None,
            waldir: None,
            ram_mb: None,
        },
    )
    .unwrap()
}

/// Every run in the store, oldest first, as `plumb runs --json` lists them.
pub fn runs_json(store: &Path) -> Vec<Value> {
    ok_json(&plumb(store, &["runs", "--json", "--limit", "1000"]))
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .cloned()
        .collect()
}

/// Waits until a suite under way has stored at least `n` runs (`secs` at most).
pub fn wait_for_runs(store: &Path, n: usize, secs: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let have = if store.exists() {
            let o = plumb(store, &["runs", "--json"]);
            serde_json::from_slice::<Value>(&o.stdout)
                .ok()
                .and_then(|v| v.as_array().map(|a| a.len()))
                .unwrap_or(0)
        } else {
            0
        };
        if have >= n {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the suite never reached its run {n} (has {have})"
        );
    }
}

/// How many times each planned run (by plan hash) finished ok; any run that is neither
/// ok nor interrupted fails the test.
pub fn ok_per_plan(runs: &[Value]) -> std::collections::BTreeMap<String, usize> {
    let mut ok = std::collections::BTreeMap::new();
    for r in runs {
        match r["status"].as_str().unwrap() {
            "ok" => {
                *ok.entry(r["plan_hash"].as_str().unwrap().into())
                    .or_default() += 1
            }
            "interrupted" => {}
            s => panic!("run {} is {s}", r["id"]),
        }
    }
    ok
}

/// Resumes a suite that was killed once and asserts what resume promises: it says it
/// resumes, every one of the `planned` runs finished ok exactly once, and the killed
/// run stays stored as interrupted. Returns the runs after it.
pub fn resumed_once(store: &Path, suite: &str, planned: usize) -> Vec<Value> {
    let o = plumb(store, &["run", suite, "--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming suite"), "{}", stderr(&o));
    let after = runs_json(store);
    let ok = ok_per_plan(&after);
    assert_eq!(ok.len(), planned, "no run missing: {after:?}");
    assert!(ok.values().all(|&n| n == 1), "none run twice: {ok:?}");
    let interrupted = after.iter().filter(|r| r["status"] == "interrupted");
    assert_eq!(interrupted.count(), 1);
    after
}

/// Seed 002's counting of one step (`--perf-groups`) holds: the software events counted
/// over the window less at most its last partial second (they are in every group), a
/// figure per op for task-clock, and each hardware event either counted over its own
/// groups' seconds (about a fifth of the window with five groups in turn) or refused by
/// perf with its reason: never silently absent. `per_op`, `counted` and `unavailable` are
/// the step's maps and list, as `summary.server` or `summary.perf` names them.
pub fn assert_counted_in_turn(
    name: &str,
    secs: f64,
    per_op: &Value,
    counted: &Value,
    unavailable: &Value,
) {
    let counted = counted.as_object().expect("counted in turn");
    let task = counted["task-clock"].as_f64().unwrap();
    assert!(
        task > secs - 1.0 && task <= secs + 1e-6,
        "{name}: {task} of {secs}"
    );
    assert!(
        per_op["task-clock-us"].as_f64().unwrap() > 0.0,
        "{name}: {per_op}"
    );
    let unavailable: Vec<&str> = unavailable
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default();
    for e in [
        "cycles",
        "instructions",
        "branches",
        "LLC-loads",
        "dTLB-load-misses",
    ] {
        match counted.get(e) {
            Some(t) => assert!(
                t.as_f64().unwrap() < secs * 0.5,
                "{name} {e}: {t} of {secs}"
            ),
            None => assert!(
                unavailable.iter().any(|u| u.starts_with(&format!("{e}:"))),
                "{name}: {e} neither counted nor refused: {unavailable:?}"
            ),
        }
    }
    assert!(
        !unavailable.iter().any(|u| u.contains("No such file")),
        "{name}: {unavailable:?}"
    );
}

/// A step summary's CPU per op is its user and system parts (`usr_us_op` +
/// `sys_us_op` = `cpu_us_op`).
pub fn assert_cpu_split(name: &str, sum: &Value) {
    let (cpu, usr, sys) = (
        sum["cpu_us_op"].as_f64().unwrap(),
        sum["usr_us_op"].as_f64().unwrap(),
        sum["sys_us_op"].as_f64().unwrap(),
    );
    assert!(
        (usr + sys - cpu).abs() <= 1e-6 * cpu.max(1.0),
        "{name}: {sum}"
    );
}

/// Whether a window of `secs` holds enough machine time for the host's noise to be
/// measured (plumb_core::NOISE_MIN_CPU_SECS of seconds × CPUs): `Some(true)` or
/// `Some(false)` clear of the line, `None` within 5% of it, where the tick count decides.
pub fn noise_expected(secs: f64) -> Option<bool> {
    let cpus = f64::from(plumb_probes::cpustat::read().expect("/proc/stat").cpus);
    let m = secs * cpus / plumb_core::NOISE_MIN_CPU_SECS;
    if m >= 1.05 {
        Some(true)
    } else if m < 0.95 {
        Some(false)
    } else {
        None
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A repository for `plumb bisect` to search (`dir/repo`): commit 0 and `n` after it,
/// commit i's `size` file holding `size(i)`, a value size for [`bisect_build`] or
/// anything else for a commit that does not build; commit i's subject is "change i".
pub fn bisect_repo(
    dir: &Path,
    n: usize,
    size: impl Fn(usize) -> String,
) -> (std::path::PathBuf, Vec<String>) {
    let r = dir.join("repo");
    std::fs::create_dir_all(&r).unwrap();
    git(&r, &["init", "--quiet"]);
    let mut commits = Vec::new();
    for i in 0..=n {
        std::fs::write(r.join("size"), size(i)).unwrap();
        git(&r, &["add", "size"]);
        let subject = format!("change {i}");
        git(&r, &["commit", "--quiet", "--allow-empty", "-m", &subject]);
        commits.push(git(&r, &["rev-parse", "HEAD"]));
    }
    (r, commits)
}

/// The build [`bisect_repo`]'s commits stand for: this plumb, with the commit's value
/// size as its extra arguments (`kv … --value-size SIZE`), so a regression of known
/// size enters where the size changes.
pub fn bisect_build() -> String {
    format!(
        "grep -qx '[0-9]*' size && ln -s '{}' \"$PLUMB_BISECT_OUT/plumb\" && \
         printf -- '--value-size\\n%s\\n' \"$(cat size)\" > \"$PLUMB_BISECT_OUT/args\"",
        env!("CARGO_BIN_EXE_plumb")
    )
}
