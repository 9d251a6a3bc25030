//! `plumb ab`: an A/B on one machine. Two sides (two plumb binaries, e.g. built against
//! two RocksDB releases, or one binary with two option sets or environments) run the
//! same command slice by slice: alternately (A B, B A, A B, … so a steady drift falls on
//! both alike) on one prepared database where the command uses one
//! (`--db DIR --use-existing-db` with read-only steps), or with `--duet` both at once,
//! each on its own half of the CPUs and its own copy of the data, so both see the same
//! moment's interference and each round is a pair. Every slice is stored as a run
//! tagged `TAG:A` or `TAG:B`; the verdict per step is plumb_report::ab's, at a fixed
//! count of slices or, with `--until`, by a sequential rule that stops adding slices
//! once every judged step is settled.

use super::StoreArg;
use anyhow::Context;
use plumb_ab::ab::{AbPlan, Side};
use std::path::PathBuf;
use std::process::ExitCode;

/// `plumb ab [SIDES] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb kv --db /data/ab --num 5000000 --benchmarks fillseq,compact   # prepare once\n  \
plumb ab --b-bin /var/tmp/plumb-rocksdb-releases/bin/plumb-rocksdb-8.6.7 \\\n      \
-- kv --db /data/ab --use-existing-db --benchmarks readrandom,fwdrange --duration 20\n  \
plumb ab --b-args \"--cache-size 1073741824\" -- kv --db /data/ab --use-existing-db --benchmarks readrandom\n\
  plumb ab --duet --until 2% --b-env PLUMB_TEST_MEMORY_OP_NS=20 -- kv --engine memory --benchmarks fillseq,readrandom\n\
Each slice is a run in the store (tags TAG:A and TAG:B): `plumb compare tag=TAG:A tag=TAG:B` \
shows its costs. Only read-only steps are fair to interleave on one database; a writing \
step is flagged. On a 2-vCPU VM (bench/README.md) interleaved 3-s slices of one side \
scatter by about 5%, so 5% needs ~30 slices a side; duet pairs scatter by about 1%.")]
pub struct AbArgs {
    /// Slices per side [default: 5, in a duet 6; with --until, the most it may take:
    /// 20]. The order alternates A B, B A, … (ABBA), so a linear drift cancels; in a
    /// duet the CPUs swap sides every round and the rounds are judged two by two (an
    /// even count).
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// Run A and B at the same time, each pinned to its own half of the CPUs (swapped
    /// every round) and each on its own data (a copy of --db at DIR.duet-b for B), and
    /// judge each round's pair: both see the same neighbours and the same moment, so
    /// drift and interference cancel within a pair. For kv commands whose threads fit
    /// in half the CPUs; a server (sql, ib) keeps its threads on no side, so those run
    /// interleaved.
    #[arg(long)]
    duet: bool,
    /// Add slices until every judged step's interval is at most this wide (±PCT, e.g.
    /// 2%) or excludes 1, by alpha spending over the looks (the false-positive rate
    /// holds at every look), up to --rounds; the first look is at 3 slices a side (a
    /// duet: 6 rounds, then every 2).
    #[arg(long, value_name = "PCT", value_parser = plumb_ab::until::parse_pct)]
    until: Option<f64>,
    /// With --until: settle "no change" only once the A/B could see a change of PCT at
    /// 80% power (its interval about 40% narrower than ±PCT), so "no difference"
    /// means a PCT change was not there, not only that it was not seen.
    #[arg(long, requires = "until")]
    power: bool,
    /// A step to judge and, with --until, to wait for (repeatable) [default: every
    /// measured step that does not write, or every step when all write].
    #[arg(long = "step", value_name = "NAME")]
    steps: Vec<String>,
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
    /// Significance: of the permutation test (interleaved) or the paired t test
    /// (duet) at a fixed count; with --until, the false-positive rate spent over all
    /// the looks together.
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

pub fn run(a: AbArgs) -> anyhow::Result<ExitCode> {
    let me = std::env::current_exe().context("finding this plumb binary")?;
    let side = |label, bin: &Option<PathBuf>, args: &Option<String>, env, flag| {
        Side::new(
            label,
            bin.clone().unwrap_or_else(|| me.clone()),
            args.as_deref(),
            env,
            flag,
        )
    };
    let plan = AbPlan {
        sides: [
            side("A", &a.a_bin, &a.a_args, &a.a_env, "--a-env")?,
            side("B", &a.b_bin, &a.b_args, &a.b_env, "--b-env")?,
        ],
        command: a.command,
        rounds: a.rounds,
        duet: a.duet,
        until: a.until,
        power: a.power,
        alpha: a.alpha,
        steps: a.steps,
        tag: a.tag.unwrap_or_else(|| plumb_ab::child::default_tag("ab")),
        store: a.store.path(),
    };
    let o = plumb_ab::ab::run(&plan, &mut |s| eprintln!("plumb ab: {s}"))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&o.to_json())?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", o.text());
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
    /// The values are pairs measured together (base[i] beside other[i], as `plumb ab
    /// --duet` runs them): judge each pair's ratio with the paired t test.
    #[arg(long)]
    paired: bool,
    /// Judge this as one look of a sequence that adds repeats until the interval is
    /// within ±PCT or excludes 1 (as `plumb ab --until`): the interval is taken at the
    /// level alpha spending allows the look with this many values a side, and the answer
    /// says whether to stop (settled: changed or within) or add a repeat (open). The
    /// parity benches loop on it.
    #[arg(long, value_name = "PCT", value_parser = plumb_ab::until::parse_pct, requires = "cap")]
    until: Option<f64>,
    /// With --until: the most values a side the sequence may reach (its last look).
    #[arg(long, value_name = "N")]
    cap: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn ratio(a: RatioArgs) -> anyhow::Result<ExitCode> {
    let rule = match (a.until, a.cap) {
        (Some(target), Some(cap)) => Some((target, cap)),
        _ => None,
    };
    let v = plumb_report::ab::ratio_of(
        &a.base,
        &a.other,
        a.paired,
        rule,
        plumb_ab::until::FIRST_LOOK,
    )
    .map_err(anyhow::Error::msg)?;
    if a.json {
        println!("{}", v.to_json());
    } else {
        print!("{}", v.text(a.paired));
    }
    Ok(ExitCode::SUCCESS)
}
