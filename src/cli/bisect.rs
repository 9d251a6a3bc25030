//! `plumb bisect`: from a change between two commits to the commit that made it
//! (plumb_bisect: the search, the builds kept by commit, the three-way verdicts, the
//! state saved in the store after every step).

use super::execute::INTERRUPTED;
use super::StoreArg;
use anyhow::bail;
use plumb_bisect::run::{self, Bisect};
use plumb_bisect::state::{Asked, Metric};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// `plumb bisect`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb bisect --repo /src/rocksdb --good v9.9.3 --bad v10.4.2 --engine rocksdb -- \\\n    \
kv --engine rocksdb --num 20000 --ops 20000 --benchmarks fillseq,compact,readrandom --seed 1\n  \
plumb bisect --repo /src/postgres --good REL_17_0 --bad REL_17_2 --server postgres -- \\\n    \
sql --server postgres --table-size 10000 --steps load,point-query --duration 3\n  \
plumb bisect --repo . --good HEAD~30 --bad HEAD --build 'cargo build --release && cp target/release/plumb \"$PLUMB_BISECT_OUT\"/' \\\n    \
--metric duet -- kv --engine memory --benchmarks readrandom --duration 3\n  \
plumb bisect --resume 3          continue after Ctrl-C or --max-steps\n  \
plumb bisect --list\n\
The build runs with `sh -c` in a worktree of --repo at each commit, with PLUMB_BISECT_OUT (where \
it must leave `plumb`; an `args` file there, one argument a line, is appended to the measured \
command, `{out}` in it standing for the build's kept directory), PLUMB_BISECT_COMMIT and \
PLUMB_BISECT_JOBS. Builds are kept by commit under --builds; a failed build is skipped.")]
pub struct BisectArgs {
    /// The repository to search (a git checkout).
    #[arg(long, value_name = "PATH", required_unless_present_any = ["resume", "list"])]
    repo: Option<PathBuf>,
    /// A commit that measures as before the change.
    #[arg(long, value_name = "REV", required_unless_present_any = ["resume", "list"])]
    good: Option<String>,
    /// A later commit that measures with the change.
    #[arg(long, value_name = "REV", required_unless_present_any = ["resume", "list"])]
    bad: Option<String>,
    /// Build plumb against the RocksDB tree at each commit (scripts/build-rocksdb-release.sh
    /// tree:WORKTREE, through ccache when it is installed).
    #[arg(long, value_name = "ENGINE", value_parser = ["rocksdb"], conflicts_with = "build")]
    engine: Option<String>,
    /// Build the PostgreSQL tree at each commit (configure once in the worktree, make,
    /// install into the kept build) and measure it with this plumb, the measured
    /// `sql` or `ib` command given `--basedir` of that install.
    #[arg(long, value_name = "SERVER", value_parser = ["postgres"], conflicts_with_all = ["build", "engine"])]
    server: Option<String>,
    /// The build command, run with `sh -c` in the worktree at each commit; it must leave
    /// the binary to measure as $PLUMB_BISECT_OUT/plumb.
    #[arg(long, value_name = "CMD", required_unless_present_any = ["engine", "server", "resume", "list"])]
    build: Option<String>,
    /// What a midpoint is judged by: instructions (per op of the judged step, counted by
    /// plumb icount; kv only) or duet (ops/s, plumb ab --duet --until against each end)
    /// [default: instructions when the ends differ in them beyond their A/A floor].
    #[arg(long, value_enum)]
    metric: Option<MetricArg>,
    /// The step judged [default: the last measured step].
    #[arg(long, value_name = "NAME")]
    step: Option<String>,
    /// The most rounds a duet may take (the ends' duet takes all of them).
    #[arg(long, default_value_t = 20, value_name = "N")]
    rounds: u32,
    /// Where builds are kept by commit, and the worktree [default: /var/tmp/plumb-bisect].
    #[arg(long, value_name = "DIR")]
    builds: Option<PathBuf>,
    /// Parallel jobs a build may use (PLUMB_BISECT_JOBS) [default: the CPUs].
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// The change this bisect searches for (its id on the Changes page and in
    /// `plumb changes`): kept with the bisect, so the served change links to it.
    #[arg(long, value_name = "ID")]
    change: Option<i64>,
    /// Judge at most this many midpoints now, then stop (`--resume` continues).
    #[arg(long, value_name = "N")]
    max_steps: Option<usize>,
    /// The valgrind that counts instructions.
    #[arg(long, value_name = "PATH", default_value = "valgrind")]
    valgrind: PathBuf,
    /// Continue this bisect where it stopped (its id from the first run or --list).
    #[arg(long, value_name = "ID", conflicts_with_all = ["repo", "good", "bad", "engine", "server", "build", "change"])]
    resume: Option<i64>,
    /// List the bisects in the store.
    #[arg(long, conflicts_with = "resume")]
    list: bool,
    /// Print the bisect's state as JSON at the end.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
    /// The measured command after `--`: kv, sql or ib with its arguments.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `--metric`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum MetricArg {
    /// Instructions per op (plumb icount).
    Instructions,
    /// A duet with --until.
    Duet,
}

/// The build `--engine rocksdb` runs, with this source tree's script.
fn rocksdb_build() -> anyhow::Result<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/build-rocksdb-release.sh");
    Ok(plumb_bisect::build::rocksdb_command(&script)?)
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

pub fn run(a: BisectArgs) -> anyhow::Result<ExitCode> {
    if a.list {
        let store = a.store.open_existing()?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&store.bisects()?)?);
            return Ok(ExitCode::SUCCESS);
        }
        let mut t =
            plumb_report::table_left(&["id", "status", "repo", "good", "bad", "change", "updated"]);
        t.add_rows(store.bisects()?.into_iter().map(|b| {
            vec![
                b.id.to_string(),
                b.status,
                b.repo,
                short(&b.good),
                short(&b.bad),
                b.change.map_or(String::new(), |c| c.to_string()),
                b.updated_at,
            ]
        }));
        println!("{t}");
        return Ok(ExitCode::SUCCESS);
    }
    let store_path = a.store.path();
    let (id, mut state) = match a.resume {
        Some(id) => {
            let store = a.store.open_existing()?;
            let s = run::load(&store, id)?;
            if !matches!(s.status.as_str(), "running" | "stopped") {
                bail!(
                    "bisect {id} is {}: {}; nothing to resume",
                    s.status,
                    s.result.as_deref().unwrap_or("")
                );
            }
            (id, s)
        }
        None => {
            let store = plumb_store::Store::open(&store_path)?;
            let build = match (&a.build, &a.server) {
                (Some(b), _) => b.clone(),
                (None, Some(_)) => {
                    if !matches!(a.command.first().map(String::as_str), Some("sql" | "ib")) {
                        bail!(
                            "--server postgres builds a server, measured by `sql` or `ib` after \
                             --; give `-- sql --server postgres …` (it gets --basedir of each \
                             commit's install)"
                        );
                    }
                    plumb_bisect::build::postgres_command(&std::env::current_exe()?)
                }
                (None, None) => rocksdb_build()?,
            };
            let builds = a
                .builds
                .clone()
                .unwrap_or_else(|| "/var/tmp/plumb-bisect".into());
            let repo = a.repo.clone().expect("clap requires --repo");
            let repo = std::fs::canonicalize(&repo)
                .map_err(|e| anyhow::anyhow!("--repo {}: {e}", repo.display()))?;
            let asked = Asked {
                work: builds
                    .join(format!("work-{}", dir_name(&repo)))
                    .display()
                    .to_string(),
                cache: builds.join("builds").display().to_string(),
                repo: repo.display().to_string(),
                good: a.good.clone().expect("clap requires --good"),
                bad: a.bad.clone().expect("clap requires --bad"),
                command: a.command.clone(),
                build,
                step: a.step.clone(),
                metric: a.metric.map(|m| match m {
                    MetricArg::Instructions => Metric::Instructions,
                    MetricArg::Duet => Metric::Duet,
                }),
                rounds: a.rounds,
                jobs: a
                    .jobs
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
                valgrind: a.valgrind.display().to_string(),
                change: a.change,
            };
            let (id, s) = run::begin(&store, asked, &now())?;
            eprintln!(
                "plumb bisect {id}: {} commits between {} and {}, about {} steps",
                s.commits.len() - 1,
                s.commits[0].short(),
                s.commits[s.commits.len() - 1].short(),
                plumb_bisect::search::steps_left(s.commits.len() - 1, &[])
            );
            (id, s)
        }
    };
    let store = plumb_store::Store::open(&store_path)?;
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let mut say = |line: &str| eprintln!("plumb bisect {id}: {line}");
    let mut b = Bisect {
        store: &store,
        store_path: &store_path,
        id,
        interrupt: &INTERRUPTED,
        progress: &mut say,
        now,
    };
    let out = b.run(&mut state, a.max_steps);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&state)?);
    } else {
        print!("{}", state.text());
    }
    match out {
        Err(e @ plumb_bisect::BisectError::Interrupted(_)) => {
            eprintln!("plumb bisect {id}: {e}");
            return Ok(ExitCode::from(130));
        }
        other => other?,
    }
    Ok(match state.status.as_str() {
        "found" | "among" | "stopped" => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

fn short(h: &str) -> String {
    h.chars().take(10).collect()
}

/// A directory name for a repository's worktree: its last component.
fn dir_name(repo: &std::path::Path) -> String {
    repo.file_name()
        .map_or("repo".into(), |n| n.to_string_lossy().into_owned())
}
