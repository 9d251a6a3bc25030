//! `plumb icount`: instructions per op, counted exactly where no PMU exists. The `kv`
//! command after `--` runs under Valgrind's callgrind with collection off, and plumb's
//! kernel turns it on only in its measured threads while their window is open
//! (`plumb_runner::kernel::callgrind`), so the count is the ops' own: no setup, no
//! sampler, no background thread. Two runs of one build agree to far under 1%, so a
//! 1-2% CPU regression shows with one run a side, where wall time on a shared machine
//! needs dozens of slices.
//!
//! An LSM engine is settled before each read step (`kv --settle`: its memtable flushed
//! and its compactions waited for, as unmeasured steps in the plan), so each read step
//! starts from the same tree in every run. Unsettled, the reads pass through whatever
//! background flushes and compactions left, which differs from run to run, and through
//! the memtable, whose count differs too: RocksDB's skiplist draws each node's height
//! from a per-thread random seeded by the thread's id, so two identical runs build two
//! skiplists (readrandom after fillseq of 20000 keys counted 6117.6 or 6146.0
//! instructions per op, one tree, all in the memtable; settled, the reads go to one
//! SST file and agree to 0.003%). Each measured step stores the shape it started from
//! (`lsm_start`), and comparisons say when two counted runs' shapes differ.
//! `--no-settle` counts the plan as given.
//!
//! The run is stored like any other, its plan marked `under: callgrind`: its times are
//! callgrind's (~50× slow), so its runs are a history of their own, and `plumb check`,
//! `compare` and `history` judge their `instructions_op` (give `--metric
//! instructions_op`) against earlier counted runs of the same plan only.

use anyhow::{bail, Context};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

/// `plumb icount [--valgrind PATH] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb icount -- kv --engine memory --benchmarks fillseq,readrandom --num 20000 --ops 50000\n  \
plumb icount -- kv --engine rocksdb --num 20000 --ops 20000 --benchmarks fillseq,compact,readrandom --seed 1\n  \
plumb check --metric instructions_op --threshold 1      judge the newest counted run against earlier ones\n\
Counted: every instruction the measured threads execute while the window is open (the engine's \
and plumb's own per-op work). Not counted: the engine's background threads (flush, compaction), \
setup, and all that costs time but no instruction (IO, waits, cache and TLB misses). Give a \
fixed --seed and --ops so two runs do the same ops; steps without a fixed op count (fills \
cover --num) count too. An LSM engine (RocksDB, LevelDB, fjall) is settled before each read \
step (kv --settle: memtable flushed, compactions waited for) unless --no-settle.")]
pub struct IcountArgs {
    /// The valgrind to run [default: valgrind on PATH].
    #[arg(long, value_name = "PATH", default_value = "valgrind")]
    valgrind: PathBuf,
    /// Print the child's JSON document (docs/json.md) instead of the table.
    #[arg(long)]
    json: bool,
    /// Keep callgrind's dumps (one per step, `callgrind.out.N`) and its log in this
    /// directory, for `callgrind_annotate` (which functions the instructions went to)
    /// [default: a temporary directory, removed].
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Count the plan as given, without settling an LSM engine before each read step.
    /// By default the run gets `kv --settle`: the memtable is flushed and compactions
    /// are waited for (unmeasured steps settle.flush, settle.waitforcompaction), so each
    /// read step starts from the same tree in every run. Without it the reads pass
    /// through what background flushes and compactions left, and through a memtable
    /// whose skiplist is built differently in every run (RocksDB seeds its node heights
    /// from the thread's id): RocksDB's readrandom then moves by 0.5% between identical
    /// runs. For counting memtable reads or an unsettled tree, or a history counted
    /// before plumb settled.
    #[arg(long)]
    no_settle: bool,
    /// The run counted, after `--`: `kv` with its arguments (--store, --tag, --seed … go
    /// there).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn run(a: IcountArgs) -> anyhow::Result<ExitCode> {
    match a.command.first().map(String::as_str) {
        Some("kv") => {}
        Some(c @ ("sql" | "ib")) => bail!(
            "plumb icount -- {c}: a server's instructions are spent in its own process, which \
             callgrind around plumb does not see; where a PMU exists, `plumb {c}` reads them \
             with perf (instructions per query)"
        ),
        _ => bail!(
            "the command after -- must be `kv` with its arguments, e.g. -- kv --engine memory \
             --benchmarks fillseq,readrandom --ops 50000"
        ),
    }
    if a.command
        .iter()
        .any(|w| w == "--repeat" || w.starts_with("--repeat="))
    {
        bail!("--repeat after --: a counted run does not vary; run plumb icount again for another");
    }
    let child = child_args(&a)?;
    if !cfg!(target_arch = "x86_64") {
        bail!("plumb icount counts with callgrind's client requests, which plumb issues on x86-64 only");
    }
    let me = std::env::current_exe().context("finding this plumb binary")?;
    let temp;
    let dir = match &a.keep {
        Some(d) => {
            std::fs::create_dir_all(d)
                .with_context(|| format!("--keep {}: creating it", d.display()))?;
            d.as_path()
        }
        None => {
            temp = tempfile::Builder::new()
                .prefix("plumb-icount-")
                .tempdir()
                .context("creating a directory for callgrind's dumps")?;
            temp.path()
        }
    };
    let out_file = dir.join("callgrind.out");
    let log = dir.join("valgrind.log");
    let mut cmd = Command::new(&a.valgrind);
    cmd.arg("--tool=callgrind")
        .arg("--collect-atstart=no")
        .arg("--dump-instr=no")
        .arg(format!("--callgrind-out-file={}", out_file.display()))
        .arg(format!("--log-file={}", log.display()))
        .arg(&me)
        .args(&child);
    cmd.env(plumb_runner::kernel::callgrind::OUT_ENV, &out_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    eprintln!("plumb icount: running under callgrind (about 50× slower than natively)");
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "{} not found: install valgrind (apt-get install valgrind; scripts/setup.sh does) \
             or give --valgrind PATH",
            a.valgrind.display()
        ),
        Err(e) => return Err(e).with_context(|| format!("running {}", a.valgrind.display())),
    };
    if !out.status.success() {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(12).collect();
        let illegal = text.contains("unhandled instruction") || text.contains("SIGILL");
        bail!(
            "the counted run failed ({}){}\nvalgrind's log ends:\n{}",
            out.status,
            if illegal {
                "; valgrind met an instruction it cannot decode: this plumb was built for a \
                 CPU level valgrind does not know (AVX-512?); .cargo/config.toml's \
                 target-cpu=haswell builds one it runs"
            } else {
                ""
            },
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    if a.json {
        std::io::Write::write_all(&mut std::io::stdout(), &out.stdout)?;
        return Ok(ExitCode::SUCCESS);
    }
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("the counted run's --json output")?;
    print!("{}", table(&doc)?);
    Ok(ExitCode::SUCCESS)
}

/// The plumb command callgrind runs: the `kv` command given, printing JSON, and (unless
/// `--no-settle`) settling an LSM engine before each read step.
fn child_args(a: &IcountArgs) -> anyhow::Result<Vec<String>> {
    let has = |flag: &str| a.command.iter().any(|w| w == flag);
    let mut child = a.command.clone();
    if !has("--json") {
        child.push("--json".into());
    }
    if a.no_settle {
        if has("--settle") {
            bail!("--no-settle with --settle after --: give one of them");
        }
    } else if !has("--settle") {
        child.push("--settle".into());
    }
    Ok(child)
}

/// The counted steps: ops and instructions per op, with the run's id.
fn table(doc: &serde_json::Value) -> anyhow::Result<String> {
    let id = doc["run"]["id"]
        .as_i64()
        .context("the counted run's output has no run id")?;
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::NOTHING)
        .set_header(["step", "ops", "instructions/op"]);
    let mut counted = 0;
    for s in doc["steps"].as_array().into_iter().flatten() {
        let ops = s["summary"]["ops"].as_u64().unwrap_or(0);
        if ops == 0 {
            continue;
        }
        let per = s["summary"]["hw"]["instructions_op"].as_f64();
        counted += usize::from(per.is_some());
        t.add_row([
            s["name"].as_str().unwrap_or("?").to_string(),
            ops.to_string(),
            per.map_or("n/a".into(), |v| format!("{v:.1}")),
        ]);
    }
    if counted == 0 {
        bail!("run {id}: no step was counted (was plumb built without callgrind's requests?)");
    }
    Ok(format!(
        "{t}\n\nrun {id}, counted by callgrind: the measured threads' instructions in the window \
         (not background threads, IO or waits)\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Icount {
        #[command(flatten)]
        a: IcountArgs,
    }

    fn child(args: &[&str]) -> anyhow::Result<Vec<String>> {
        let a = Icount::try_parse_from(std::iter::once("icount").chain(args.iter().copied()))
            .unwrap()
            .a;
        child_args(&a)
    }

    #[test]
    fn the_counted_kv_run_settles_before_reads_unless_told_not_to() {
        let kv = [
            "--",
            "kv",
            "--engine",
            "rocksdb",
            "--benchmarks",
            "fillseq,readrandom",
        ];
        let settled = child(&kv).unwrap();
        assert_eq!(
            settled[..4],
            ["kv", "--engine", "rocksdb", "--benchmarks"],
            "the command as given"
        );
        assert!(
            settled.ends_with(&["--json".into(), "--settle".into()]),
            "{settled:?}"
        );
        let given: Vec<&str> = ["--no-settle"].into_iter().chain(kv).collect();
        let unsettled = child(&given).unwrap();
        assert!(!unsettled.iter().any(|w| w == "--settle"), "{unsettled:?}");
        assert!(unsettled.iter().any(|w| w == "--json"));
        // Given after -- already, it is not given twice (kv would refuse it).
        let twice: Vec<&str> = kv.into_iter().chain(["--settle", "--json"]).collect();
        let once = child(&twice).unwrap();
        assert_eq!(once.iter().filter(|w| *w == "--settle").count(), 1);
        assert_eq!(once.iter().filter(|w| *w == "--json").count(), 1);
        let both: Vec<&str> = ["--no-settle"].into_iter().chain(twice).collect();
        let e = child(&both).unwrap_err().to_string();
        assert!(e.contains("--no-settle") && e.contains("--settle"), "{e}");
    }
}
