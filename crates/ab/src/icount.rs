//! Instructions per op, counted exactly where no PMU exists: a `kv` command runs under
//! Valgrind's callgrind with collection off, and plumb's kernel turns it on only in its
//! measured threads while their window is open (`plumb_runner::kernel::callgrind`), so
//! the count is the ops' own. Two runs of one build agree to far under 1%, so a 1-2%
//! CPU regression shows with one run a side: what `plumb icount` prints and what a
//! bisect judges a midpoint by when the change is in instructions.

use crate::ChildError;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One counted run.
#[derive(Debug, Clone)]
pub struct IcountPlan {
    /// The valgrind to run.
    pub valgrind: PathBuf,
    /// The plumb binary counted.
    pub bin: PathBuf,
    /// The `kv` command, as the user gave it.
    pub command: Vec<String>,
    /// Settle an LSM engine before each read step (`kv --settle`), so each read step
    /// starts from the same tree in every run.
    pub settle: bool,
}

/// Refuses what callgrind around plumb cannot count, before valgrind starts.
fn check(command: &[String]) -> Result<(), ChildError> {
    let refuse = |s: String| Err(ChildError::Refused(s));
    match command.first().map(String::as_str) {
        Some("kv") => {}
        Some(c @ ("sql" | "ib")) => {
            return refuse(format!(
                "plumb icount -- {c}: a server's instructions are spent in its own process, \
                 which callgrind around plumb does not see; where a PMU exists, `plumb {c}` \
                 reads them with perf (instructions per query)"
            ))
        }
        _ => {
            return refuse(
                "the command after -- must be `kv` with its arguments, e.g. -- kv --engine \
                 memory --benchmarks fillseq,readrandom --ops 50000"
                    .into(),
            )
        }
    }
    if command
        .iter()
        .any(|w| w == "--repeat" || w.starts_with("--repeat="))
    {
        return refuse(
            "--repeat after --: a counted run does not vary; run plumb icount again for another"
                .into(),
        );
    }
    if !cfg!(target_arch = "x86_64") {
        return refuse(
            "plumb icount counts with callgrind's client requests, which plumb issues on x86-64 only"
                .into(),
        );
    }
    Ok(())
}

/// The plumb command callgrind runs: the `kv` command given, printing JSON, and (when
/// settling) `--settle`, neither given twice; refused when callgrind around plumb
/// could not count it.
pub fn child_args(p: &IcountPlan) -> Result<Vec<String>, ChildError> {
    check(&p.command)?;
    let has = |flag: &str| p.command.iter().any(|w| w == flag);
    let mut child = p.command.clone();
    if !has("--json") {
        child.push("--json".into());
    }
    if !p.settle {
        if has("--settle") {
            return Err(ChildError::Refused(
                "--no-settle with --settle after --: give one of them".into(),
            ));
        }
    } else if !has("--settle") {
        child.push("--settle".into());
    }
    Ok(child)
}

/// Runs the count with callgrind's dumps and log in `dir` and returns the child's
/// `--json` document as it printed it. A failure ends with valgrind's log, and says
/// when valgrind met an instruction it cannot decode.
pub fn run(p: &IcountPlan, dir: &Path) -> Result<Vec<u8>, ChildError> {
    let child = child_args(p)?;
    let out_file = dir.join("callgrind.out");
    let log = dir.join("valgrind.log");
    let mut cmd = Command::new(&p.valgrind);
    cmd.arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--dump-instr=no")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(format!("--log-file={}", log.display()))
        .arg(&p.bin)
        .args(&child);
    cmd.env(plumb_runner::kernel::callgrind::OUT_ENV, &out_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out = cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ChildError::Refused(format!(
                "{} not found: install valgrind (apt-get install valgrind; scripts/setup.sh \
                 does) or give --valgrind PATH",
                p.valgrind.display()
            ))
        } else {
            ChildError::Start {
                who: "the counted run".into(),
                bin: p.valgrind.display().to_string(),
                source: e,
            }
        }
    })?;
    if !out.status.success() {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let illegal = text.contains("unhandled instruction") || text.contains("SIGILL");
        return Err(ChildError::Output {
            who: "the counted run".into(),
            what: format!(
                "failed ({}){}\nvalgrind's log ends:\n{}",
                out.status,
                if illegal {
                    "; valgrind met an instruction it cannot decode: this plumb was built for \
                     a CPU level valgrind does not know (AVX-512?); .cargo/config.toml's \
                     target-cpu=haswell builds one it runs"
                } else {
                    ""
                },
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            ),
        });
    }
    Ok(out.stdout)
}

/// The counted steps of a run's `--json` document: ops and instructions per op, with
/// the run's id; refused when no step was counted (a build without callgrind's
/// requests counts nothing, and a table of n/a would pass for a result).
pub fn table(doc: &serde_json::Value) -> Result<String, ChildError> {
    let bad = |what: String| ChildError::Output {
        who: "the counted run".into(),
        what,
    };
    let id = doc["run"]["id"]
        .as_i64()
        .ok_or_else(|| bad("its output has no run id".into()))?;
    let mut t = plumb_report::table_left(&["step", "ops", "instructions/op"]);
    let mut counted = 0;
    for s in doc["steps"].as_array().into_iter().flatten() {
        let ops = s["summary"]["ops"].as_u64().unwrap_or(0);
        if ops == 0 {
            continue;
        }
        let per = s["summary"]["hw"]["instructions_op"].as_f64();
        counted += usize::from(per.is_some());
        t.add_row(vec![
            s["name"].as_str().unwrap_or("?").to_string(),
            ops.to_string(),
            per.map_or("n/a".into(), |v| format!("{v:.1}")),
        ]);
    }
    if counted == 0 {
        return Err(bad(format!(
            "run {id}: no step was counted (was plumb built without callgrind's requests?)"
        )));
    }
    Ok(format!(
        "{t}\n\nrun {id}, counted by callgrind: the measured threads' instructions in the window \
         (not background threads, IO or waits)\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(command: &[&str], settle: bool) -> IcountPlan {
        IcountPlan {
            valgrind: "valgrind".into(),
            bin: "plumb".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            settle,
        }
    }

    #[test]
    fn the_counted_kv_run_settles_before_reads_unless_told_not_to() {
        let kv = [
            "kv",
            "--engine",
            "rocksdb",
            "--benchmarks",
            "fillseq,readrandom",
        ];
        let settled = child_args(&plan(&kv, true)).unwrap();
        assert_eq!(settled[..5], kv, "the command as given");
        assert!(
            settled.ends_with(&["--json".into(), "--settle".into()]),
            "{settled:?}"
        );
        let unsettled = child_args(&plan(&kv, false)).unwrap();
        assert!(!unsettled.iter().any(|w| w == "--settle"), "{unsettled:?}");
        assert!(unsettled.iter().any(|w| w == "--json"));
        // Given after -- already, it is not given twice (kv would refuse it).
        let twice: Vec<&str> = kv.into_iter().chain(["--settle", "--json"]).collect();
        let once = child_args(&plan(&twice, true)).unwrap();
        assert_eq!(once.iter().filter(|w| *w == "--settle").count(), 1);
        assert_eq!(once.iter().filter(|w| *w == "--json").count(), 1);
        let e = child_args(&plan(&twice, false)).unwrap_err().to_string();
        assert!(e.contains("--no-settle") && e.contains("--settle"), "{e}");
    }

    #[test]
    fn servers_and_repeats_are_refused_before_valgrind_starts() {
        let e = run(
            &plan(&["sql", "--server", "postgres"], true),
            Path::new("/nonexistent"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("plumb icount -- sql: a server's instructions"),
            "{e}"
        );
        let e = check(&["kv".into(), "--repeat=2".into()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--repeat after --"), "{e}");
        let e = run(
            &IcountPlan {
                valgrind: "/no/such/valgrind".into(),
                ..plan(&["kv"], true)
            },
            Path::new("/tmp"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("/no/such/valgrind not found: install valgrind"),
            "{e}"
        );
    }

    #[test]
    fn the_table_shows_counted_steps_and_refuses_a_run_with_none() {
        let doc = json!({"run": {"id": 4}, "steps": [
            {"name": "fillseq", "summary": {"ops": 100, "hw": {"instructions_op": 1234.56}}},
            {"name": "settle.flush", "summary": {"ops": 0}},
            {"name": "readrandom", "summary": {"ops": 50, "hw": {}}},
        ]});
        let t = table(&doc).unwrap();
        assert!(
            t.contains("1234.6") && t.contains("readrandom") && t.contains("n/a"),
            "{t}"
        );
        assert!(!t.contains("settle.flush"), "{t}");
        assert!(t.contains("run 4, counted by callgrind"), "{t}");
        let none =
            json!({"run": {"id": 5}, "steps": [{"name": "r", "summary": {"ops": 9, "hw": {}}}]});
        assert!(table(&none)
            .unwrap_err()
            .to_string()
            .contains("run 5: no step was counted"));
    }
}
