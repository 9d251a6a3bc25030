//! `plumb bisect` end to end on repositories the tests make: 32 commits after a good
//! one, a regression of known size entering at a known commit (the build's `args` file
//! gives `--value-size 100` before it and `2000` from it, so fillseq's instructions per
//! op on the memory engine rise by about 40%), one commit that does not build. Judged
//! by instruction counts (plumb icount under valgrind, installed by scripts/setup.sh),
//! so nothing here depends on how busy the machine is.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

/// The measured command: a short fill on the memory engine, one seed.
const KV: [&str; 8] = [
    "kv",
    "--engine",
    "memory",
    "--benchmarks",
    "fillseq",
    "--num",
    "2000",
    "--seed",
];

/// The tests' repository: 33 commits (0 good, 1..=32 after it).
fn repo(dir: &Path, size: impl Fn(usize) -> String) -> (PathBuf, Vec<String>) {
    common::bisect_repo(dir, 32, size)
}

fn build_cmd() -> String {
    common::bisect_build()
}

fn bisect(store: &Path, flags: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plumb"));
    c.args(["bisect", "--json", "--store"])
        .arg(store)
        .args(flags);
    c.output().expect("run plumb bisect")
}

/// `plumb bisect --repo … --good … --bad … --build …` with the test's flags and command.
fn start(d: &Path, r: &Path, c: &[String], flags: &[&str]) -> Output {
    start_cmd(d, r, c, &build_cmd(), flags)
        .output()
        .expect("run plumb bisect")
}

/// The command [`start`] runs, with `build` as the build.
fn start_cmd(d: &Path, r: &Path, c: &[String], build: &str, flags: &[&str]) -> Command {
    let repo = r.display().to_string();
    let builds = d.join("builds").display().to_string();
    let mut args: Vec<&str> = vec![
        "--repo",
        &repo,
        "--good",
        &c[0],
        "--bad",
        &c[32],
        "--build",
        build,
        "--builds",
        &builds,
        "--metric",
        "instructions",
    ];
    args.extend(flags);
    args.push("--");
    args.extend(KV);
    args.push("1");
    let mut c = Command::new(env!("CARGO_BIN_EXE_plumb"));
    c.args(["bisect", "--json", "--store"])
        .arg(d.join("s.sqlite"))
        .args(&args);
    c
}

fn state(o: &Output) -> Value {
    let text = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "not a bisect's state ({e}): {text}\nstderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// `plumb bisect --list` of a store.
fn list(store: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_plumb"))
        .args(["bisect", "--list", "--store"])
        .arg(store)
        .output()
        .expect("run plumb bisect --list");
    assert!(o.status.success(), "{}", err(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The id the first run printed ("plumb bisect ID: …").
fn id_of(o: &Output) -> String {
    let e = err(o);
    e.split("plumb bisect ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .unwrap_or_else(|| panic!("no id in {e}"))
        .to_string()
}

#[test]
fn it_finds_the_commit_past_one_that_does_not_build_and_resumes() {
    let d = tempfile::tempdir().unwrap();
    // The regression enters at commit 21; 16, the first midpoint, does not build.
    let (r, c) = repo(d.path(), |i| match i {
        16 => "broken".into(),
        i if i >= 21 => "2000".into(),
        _ => "100".into(),
    });
    let first = start(d.path(), &r, &c, &["--max-steps", "2"]);
    assert!(first.status.success(), "{}", err(&first));
    let s = state(&first);
    assert_eq!(s["status"], "stopped", "{s}");
    assert_eq!(s["ends"]["metric"], "instructions");
    assert_eq!(s["ends"]["step"], "fillseq");
    let steps = s["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(
        (steps[0]["index"].as_u64(), steps[0]["verdict"].as_str()),
        (Some(16), Some("skip"))
    );
    assert!(s["result"].as_str().unwrap().contains("--resume"), "{s}");

    // Interrupted there (as Ctrl-C or a reboot would leave it), it continues from the store.
    let id = id_of(&first);
    let done = bisect(&d.path().join("s.sqlite"), &["--resume", &id]);
    assert!(done.status.success(), "{}", err(&done));
    let s = state(&done);
    assert_eq!(s["status"], "found", "{s}");
    let result = s["result"].as_str().unwrap();
    assert!(
        result.contains(&c[21]) && result.contains("change 21"),
        "{result}"
    );
    // Every verdict agrees with the commit's size, and no commit was judged twice.
    let steps = s["steps"].as_array().unwrap();
    let mut seen = std::collections::HashSet::new();
    for st in steps {
        let i = st["index"].as_u64().unwrap() as usize;
        assert!(seen.insert(i), "{i} judged twice");
        let want = match i {
            16 => "skip",
            i if i >= 21 => "bad",
            _ => "good",
        };
        assert_eq!(st["verdict"], want, "commit {i}: {st}");
    }
    assert!(steps.len() <= 7, "{} steps for 32 commits", steps.len());
    // The costs that moved between the ends: values of 20 times the size copy more.
    let moved = s["moved"].as_array().unwrap();
    assert!(
        moved
            .iter()
            .any(|m| m.as_str().unwrap().starts_with("instructions_op")),
        "{s}"
    );

    // A second bisect of the same range builds nothing again.
    let again = start(d.path(), &r, &c, &["--max-steps", "2"]);
    assert!(again.status.success(), "{}", err(&again));
    let s = state(&again);
    for st in s["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|st| st["verdict"] != "skip")
    {
        assert_eq!(st["reused"], true, "{st}");
    }
    let text = list(&d.path().join("s.sqlite"));
    assert!(text.contains("found") && text.contains("stopped"), "{text}");
    let listed = state(&bisect(&d.path().join("s.sqlite"), &["--list"]));
    let statuses: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["stopped", "found"], "newest first: {listed}");
}

#[test]
fn ctrl_c_during_a_build_keeps_nothing_of_it_and_resume_builds_it_again() {
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    let (r, c) = repo(d.path(), |i| if i >= 21 { "2000" } else { "100" }.into());
    // The first midpoint's (16's) first build waits as a long compile would, until the
    // Ctrl-C; built again after it, it does not wait.
    let started = d.path().join("started");
    let build = format!(
        "if [ \"$PLUMB_BISECT_COMMIT\" = {} ] && [ ! -e '{s}' ]; then touch '{s}'; sleep 120; fi; {}",
        c[16],
        build_cmd(),
        s = started.display()
    );
    // Its own process group, as a terminal's foreground job: Ctrl-C reaches the build
    // as well as plumb.
    let mut cmd = start_cmd(d.path(), &r, &c, &build, &[]);
    let child = cmd
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start plumb bisect");
    let mut waited = 0;
    while !started.exists() {
        assert!(waited < 600, "the midpoint's build never started");
        std::thread::sleep(std::time::Duration::from_millis(500));
        waited += 1;
    }
    // SAFETY: kill(2) on the child's process group, which the test made.
    assert_eq!(unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", err(&o));
    let id = id_of(&o);
    assert!(err(&o).contains(&format!("--resume {id}")), "{}", err(&o));
    let s = state(&o);
    assert_eq!(s["status"], "running", "{s}");
    assert!(s["steps"].as_array().unwrap().is_empty(), "{s}");
    // Nothing of the stopped build is kept: neither as built nor as failed (builds are
    // kept under builds/builds/KEY/, a directory per build command).
    let roots: Vec<PathBuf> = std::fs::read_dir(d.path().join("builds/builds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(roots.len(), 1, "{roots:?}");
    assert!(
        roots[0].join(&c[0]).join("plumb").exists(),
        "the good end is kept"
    );
    assert!(!roots[0].join(&c[16]).exists());
    assert!(!roots[0].join(format!("{}.building", c[16])).exists());

    let done = bisect(&d.path().join("s.sqlite"), &["--resume", &id]);
    assert!(done.status.success(), "{}", err(&done));
    let s = state(&done);
    assert_eq!(s["status"], "found", "{s}");
    assert!(s["result"].as_str().unwrap().contains(&c[21]), "{s}");
    let first = &s["steps"][0];
    assert_eq!(
        (
            first["index"].as_u64(),
            first["verdict"].as_str(),
            first["reused"].as_bool()
        ),
        (Some(16), Some("good"), Some(false)),
        "{first}"
    );
}

#[test]
fn a_commit_like_neither_end_stops_the_search_as_unknown() {
    let d = tempfile::tempdir().unwrap();
    // Two changes in the range: 100 -> 1000 at 10, 1000 -> 2000 at 20. Commit 16
    // counts between the ends, like neither.
    let (r, c) = repo(d.path(), |i| match i {
        i if i >= 20 => "2000".into(),
        i if i >= 10 => "1000".into(),
        _ => "100".into(),
    });
    let o = start(d.path(), &r, &c, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let s = state(&o);
    assert_eq!(s["status"], "unknown", "{s}");
    let steps = s["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{s}");
    assert_eq!(
        (steps[0]["index"].as_u64(), steps[0]["verdict"].as_str()),
        (Some(16), Some("unknown"))
    );
    let result = s["result"].as_str().unwrap();
    assert!(
        result.contains(&c[16]) && result.contains("more than one change"),
        "{result}"
    );
}

#[test]
fn ends_that_do_not_differ_and_bad_ranges_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let (r, c) = repo(d.path(), |_| "100".into());
    let o = start(d.path(), &r, &c, &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(
        e.contains("within four floors") && e.contains("fillseq"),
        "{e}"
    );

    let repo = r.display().to_string();
    let refused = |args: &[&str], want: &str| {
        let o = bisect(&d.path().join("s.sqlite"), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(err(&o).contains(want), "{args:?}: {}", err(&o));
    };
    let base = ["--repo", &repo, "--build", "true"];
    refused(
        &[&base[..], &["--good", &c[5], "--bad", &c[2], "--", "kv"]].concat(),
        "is not an ancestor",
    );
    refused(
        &[
            &base[..],
            &["--good", "nosuchrev", "--bad", &c[2], "--", "kv"],
        ]
        .concat(),
        "--good nosuchrev: not a commit",
    );
    refused(
        &[
            &base[..],
            &["--good", &c[0], "--bad", &c[2], "--", "kv", "--store", "x"],
        ]
        .concat(),
        "--store after --",
    );
    refused(
        &[
            &base[..],
            &[
                "--good",
                &c[0],
                "--bad",
                &c[2],
                "--metric",
                "instructions",
                "--",
                "sql",
            ],
        ]
        .concat(),
        "use --metric duet",
    );
    refused(&["--resume", "99"], "no bisect 99");
    refused(
        &[
            &base[..],
            &["--good", &c[0], "--bad", &c[2], "--change", "5", "--", "kv"],
        ]
        .concat(),
        "no change 5",
    );
    refused(
        &[
            "--repo", &repo, "--good", &c[0], "--bad", &c[2], "--server", "postgres", "--", "kv",
        ],
        "--server postgres builds a server, measured by `sql` or `ib`",
    );
    // Only the bisect whose ends were measured is kept (refused); the refusals before
    // it kept nothing.
    let text = list(&d.path().join("s.sqlite"));
    assert_eq!(text.trim().lines().count(), 2, "{text}");
    assert!(text.contains("refused"), "{text}");
}
