//! `plumb ab`: an interleaved A/B. Two sides (two plumb binaries, e.g. built against
//! two RocksDB releases, or one binary with two option sets or environments) run the
//! same command slice by slice, alternately (A B, B A, A B, … so a steady drift falls on
//! both alike), on one prepared database where the command uses one
//! (`--db DIR --use-existing-db` with read-only steps). Every slice is stored as a run
//! tagged `TAG:A` or `TAG:B`; the verdict per step is a permutation test over the
//! slices (plumb_report::ab).

use super::StoreArg;
use anyhow::{bail, Context};
use plumb_report::Version;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// `plumb ab [SIDES] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb kv --db /data/ab --num 5000000 --benchmarks fillseq,compact   # prepare once\n  \
plumb ab --b-bin /var/tmp/plumb-rocksdb-releases/bin/plumb-rocksdb-8.6.7 \\\n      \
-- kv --db /data/ab --use-existing-db --benchmarks readrandom,fwdrange --duration 20\n  \
plumb ab --b-args \"--cache-size 1073741824\" -- kv --db /data/ab --use-existing-db --benchmarks readrandom\n\
Each slice is a run in the store (tags TAG:A and TAG:B): `plumb compare tag=TAG:A tag=TAG:B` \
shows its costs. Only read-only steps are fair to interleave on one database; a writing \
step is flagged.")]
pub struct AbArgs {
    /// Slices per side; the order alternates A B, B A, … (ABBA), so a linear drift
    /// cancels.
    #[arg(long, default_value_t = 5, value_name = "N")]
    rounds: u32,
    /// Side A's plumb binary [default: this one].
    #[arg(long, value_name = "PATH")]
    a_bin: Option<PathBuf>,
    /// Side B's plumb binary [default: this one].
    #[arg(long, value_name = "PATH")]
    b_bin: Option<PathBuf>,
    /// Arguments appended to side A's command (one string, split on spaces).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    a_args: Option<String>,
    /// Arguments appended to side B's command.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    b_args: Option<String>,
    /// An environment variable for side A's processes (KEY=VALUE, repeatable).
    #[arg(long = "a-env", value_name = "KEY=VALUE")]
    a_env: Vec<String>,
    /// An environment variable for side B's processes.
    #[arg(long = "b-env", value_name = "KEY=VALUE")]
    b_env: Vec<String>,
    /// The tag prefix of the slices' runs [default: ab-UNIXTIME].
    #[arg(long)]
    tag: Option<String>,
    /// Significance of the permutation test.
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    alpha: f64,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
    /// The command both sides run, after `--` (kv, sql or ib with its arguments).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// One side: its binary, extra arguments and environment.
struct Side {
    label: &'static str,
    bin: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn env_pairs(flag: &str, v: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    v.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .with_context(|| format!("{flag} {kv:?}: give KEY=VALUE"))
        })
        .collect()
}

/// Runs one slice and returns the ids of the runs it stored.
fn slice(
    side: &Side,
    command: &[String],
    tag: &str,
    store: &std::path::Path,
) -> anyhow::Result<Vec<i64>> {
    let mut c = Command::new(&side.bin);
    c.args(command)
        .args(&side.args)
        .args(["--tag", tag, "--json", "--store"])
        .arg(store)
        .envs(side.env.iter().map(|(k, v)| (k, v)))
        .stderr(std::process::Stdio::inherit());
    let out = c
        .output()
        .with_context(|| format!("side {}: cannot start {}", side.label, side.bin.display()))?;
    if !out.status.success() {
        bail!(
            "side {}: `{} {}` failed ({}); nothing more was run",
            side.label,
            side.bin.display(),
            command.join(" "),
            out.status
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("side {}: its --json output is not JSON", side.label))?;
    let runs = match v {
        serde_json::Value::Array(a) => a,
        one => vec![one],
    };
    runs.iter()
        .map(|r| {
            r["run"]["id"]
                .as_i64()
                .with_context(|| format!("side {}: a run without an id in its output", side.label))
        })
        .collect()
}

pub fn run(a: AbArgs) -> anyhow::Result<ExitCode> {
    if a.rounds < 2 {
        bail!("--rounds {}: at least 2 slices a side, or there is no noise to judge against (5 is the default)", a.rounds);
    }
    super::history::check_alpha(a.alpha)?;
    if !matches!(
        a.command.first().map(String::as_str),
        Some("kv" | "sql" | "ib")
    ) {
        bail!(
            "the command after -- must be a plumb benchmark (kv, sql or ib) with its arguments, \
             e.g. -- kv --db /data/ab --use-existing-db --benchmarks readrandom"
        );
    }
    for reserved in ["--tag", "--json", "--store", "--repeat"] {
        if a.command
            .iter()
            .any(|w| w == reserved || w.starts_with(&format!("{reserved}=")))
        {
            bail!("{reserved} after --: plumb ab sets it for every slice; give it to plumb ab instead (or drop it)");
        }
    }
    let me = std::env::current_exe().context("finding this plumb binary")?;
    let split = |s: &Option<String>| -> Vec<String> {
        s.as_deref()
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    };
    let sides = [
        Side {
            label: "A",
            bin: a.a_bin.clone().unwrap_or_else(|| me.clone()),
            args: split(&a.a_args),
            env: env_pairs("--a-env", &a.a_env)?,
        },
        Side {
            label: "B",
            bin: a.b_bin.clone().unwrap_or_else(|| me.clone()),
            args: split(&a.b_args),
            env: env_pairs("--b-env", &a.b_env)?,
        },
    ];
    for s in &sides {
        if !s.bin.is_file() {
            bail!(
                "--{}-bin {}: no such file",
                s.label.to_lowercase(),
                s.bin.display()
            );
        }
    }
    let tag = a.tag.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        format!("ab-{secs}")
    });
    let store = a.store.path();
    let mut ids: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
    for round in 0..a.rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            eprintln!(
                "plumb ab: round {}/{}, side {}",
                round + 1,
                a.rounds,
                sides[i].label
            );
            let t = format!("{tag}:{}", sides[i].label);
            ids[i].extend(slice(&sides[i], &a.command, &t, &store)?);
        }
    }
    let st = a.store.open_existing()?;
    let load = |label: &str, ids: &[i64]| -> anyhow::Result<Version> {
        Ok(Version {
            label: label.to_string(),
            runs: ids
                .iter()
                .map(|id| st.run(*id))
                .collect::<Result<Vec<_>, _>>()?,
        })
    };
    let (va, vb) = (load("A", &ids[0])?, load("B", &ids[1])?);
    let steps = plumb_report::ab::interleaved(&va, &vb, a.alpha);
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "tag": tag,
                "runs": {"A": ids[0], "B": ids[1]},
                "steps": steps,
            }))?
        );
    } else {
        print!("{}", plumb_report::ab::text(&steps, "A", "B"));
        println!(
            "slices: A runs {:?}, B runs {:?}; costs: plumb compare tag={tag}:A tag={tag}:B",
            ids[0], ids[1]
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `plumb ratio --base V,… --other V,…`: the statistics plumb judges with, for figures
/// measured elsewhere (the parity benches set db_bench's, sysbench's and fio's runs
/// against plumb's with it).
#[derive(Debug, clap::Args)]
pub struct RatioArgs {
    /// The base's values (e.g. db_bench's ops/s of each repeat), comma-separated.
    #[arg(long, value_name = "V,V,…", value_delimiter = ',', required = true)]
    base: Vec<f64>,
    /// The other side's values, comma-separated.
    #[arg(long, value_name = "V,V,…", value_delimiter = ',', required = true)]
    other: Vec<f64>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn ratio(a: RatioArgs) -> anyhow::Result<ExitCode> {
    if let Some(bad) = a
        .base
        .iter()
        .chain(&a.other)
        .find(|x| !(x.is_finite() && **x > 0.0))
    {
        bail!("--base/--other: {bad} is not a positive number; give each repeat's figure");
    }
    let r = plumb_report::stats::ratio(&a.base, &a.other)
        .context("--base/--other: no ratio of these values")?;
    let p = plumb_report::permtest::permutation_p(&a.base, &a.other, 9999, 0);
    if a.json {
        println!(
            "{}",
            serde_json::json!({"ratio": r.value, "ci": r.ci, "p": p, "significant_ci": r.significant()})
        );
    } else {
        let ci =
            r.ci.map_or("no interval: one value on a side".into(), |(lo, hi)| {
                format!("95% interval {lo:.3}-{hi:.3}")
            });
        let p = p.map_or("n/a".into(), |p| format!("{p:.4}"));
        println!("ratio {:.3} ({ci}), permutation p {p}", r.value);
    }
    Ok(ExitCode::SUCCESS)
}
