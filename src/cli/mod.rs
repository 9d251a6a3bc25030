//! The command line: one subcommand per job, each in its own module.

mod ab;
mod bisect;
mod changes;
mod clients;
mod compare;
#[cfg(test)]
mod doc_examples;
mod durability;
mod exec_plan;
mod execute;
mod export;
mod families;
mod history;
mod host;
mod ib;
mod icount;
mod kv;
mod noise;
mod options;
mod output;
mod probe;
mod progress;
mod rerun;
mod runs;
mod serve;
mod server_args;
mod sql;
mod suite;
mod worker;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Bottom-up database benchmarking: every result explained by what each op cost.
#[derive(Debug, Parser)]
#[command(name = "plumb", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run db_bench-style steps on an embedded engine (RocksDB by default).
    Kv(Box<kv::KvArgs>),
    /// Run the sysbench microbenchmarks on PostgreSQL, MariaDB (InnoDB, MyRocks) or MySQL.
    Sql(Box<sql::SqlArgs>),
    /// Run the insert benchmark (l.i0 … qp1000) on a SQL server or an embedded engine.
    Ib(Box<ib::IbArgs>),
    /// Run a suite file: targets × workloads × sizes × threads × repeats, resumable.
    Run(suite::RunArgs),
    /// Take runs from a queue (`plumb run SUITE --queue NAME`) and run them, one host of a fleet.
    Worker(worker::WorkerArgs),
    /// Print a suite's matrix, estimated time and disk space, without running it.
    Plan(suite::PlanArgs),
    /// Run a stored run again from its stored plan, as a new run.
    Rerun(rerun::RerunArgs),
    /// Print the reference of every option (Markdown; docs/options.md is its output).
    Options(options::OptionsArgs),
    /// List stored runs, newest first.
    Runs(runs::RunsArgs),
    /// Print a stored run's summary.
    Show(runs::ShowArgs),
    /// Inventory and hygiene checks of this host and the storage under --dir.
    Host(host::HostArgs),
    /// Measure memory, CPU and disk ceilings (bottom-up, before the database).
    Probe(probe::ProbeArgs),
    /// Kill the process holding an engine again and again: is every acknowledged write kept?
    Durability(durability::DurabilityArgs),
    /// The writer `plumb durability` starts and kills (not for direct use).
    #[command(hide = true, name = "durability-writer")]
    DurabilityWriter(durability::WriterArgs),
    /// One planned run handed over by a plumb of another engine release (not for direct use).
    #[command(hide = true, name = "exec-plan")]
    ExecPlan(exec_plan::ExecPlanArgs),
    /// A multi-client run (plumb sql --client-group) as one: merged histograms' percentiles.
    Clients(clients::ClientsArgs),
    /// Compare runs relative to a base, with noise and fairness warnings.
    Compare(compare::CompareArgs),
    /// Write runs (and their comparison) as text, Markdown, HTML, CSV or JSON.
    Report(compare::ReportArgs),
    /// Runs out of plumb: Bencher's BMF, Otava's CSV, OpenMetrics, or a bundle for another store.
    Export(export::ExportArgs),
    /// Copy a bundle's runs (`plumb export --format bundle`) into the store; runs already there are kept once.
    Import(export::ImportArgs),
    /// A series of versions: where each step changed, and which per-op costs moved with it.
    History(history::HistoryArgs),
    /// The CI gate: new runs against a base or their plan's history; non-zero on a regression.
    Check(history::CheckArgs),
    /// The changes `check` kept, and their triage (untriaged, expected, fixed, not-a-change …).
    Changes(changes::ChangesArgs),
    /// An A/B on one machine: two binaries or option sets, slice by slice (interleaved, or at once with --duet).
    Ab(ab::AbArgs),
    /// A ratio with its 95% interval and p (permutation, or paired), for figures measured elsewhere.
    Ratio(ab::RatioArgs),
    /// A plan's noise floor on this host: blocks of repeats, and the drift between them.
    Noise(noise::NoiseArgs),
    /// Instructions per op counted exactly under callgrind, for a machine without a PMU.
    Icount(icount::IcountArgs),
    /// Serve the store as web pages: runs, compare, history, changes to triage, hosts.
    Serve(serve::ServeArgs),
    /// From a change between two commits to the commit that made it: each midpoint built and judged.
    Bisect(Box<bisect::BisectArgs>),
}

/// `plumb --version`: the version, then each engine built in with the release it runs,
/// so a binary from scripts/build-speedb.sh or build-rocksdb-release.sh says what it
/// links before it stores a run.
pub fn long_version() -> &'static str {
    let engines = plumb_targets::built_in_versions();
    let text = format!(
        "{}\nengines: {}",
        env!("CARGO_PKG_VERSION"),
        engines.join(", ")
    );
    // Built once per process, for clap, which keeps it for the process's life.
    Box::leak(text.into_boxed_str())
}

/// `--window SECS`, shared by the commands that read runs: each step's figures over its
/// last seconds (seed 001 reads overwrite over its last 300 s, after compaction debt
/// has built up, beside the whole run).
#[derive(Debug, Clone, clap::Args)]
pub struct WindowArg {
    /// Read each step longer than SECS over its last SECS seconds (ops/s, CPU/op, device
    /// IO and iostat's columns from the 1-second series), the whole step's ops/s beside
    /// it; latency percentiles and the LSM's and server's account stay the whole step's.
    #[arg(long, value_name = "SECS", value_parser = plumb_report::window::parse_secs)]
    pub window: Option<f64>,
}

impl WindowArg {
    /// Restricts every step of these runs to the window, if one was given.
    pub fn apply<'a>(&self, runs: impl IntoIterator<Item = &'a mut plumb_store::StoredRun>) {
        if let Some(secs) = self.window {
            for r in runs {
                plumb_report::window::apply(r, secs);
            }
        }
    }
}

/// Where the run store is, shared by every subcommand.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StoreArg {
    /// Where runs are kept: a SQLite file, or a PostgreSQL database shared by a team
    /// and a fleet (postgres://USER[:PASSWORD]@HOST[:PORT]/DB) [default: $PLUMB_STORE,
    /// else $XDG_DATA_HOME/plumb/plumb.sqlite, else ~/.local/share/plumb/plumb.sqlite].
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<PathBuf>,
}

impl StoreArg {
    /// The store path to use.
    pub fn path(&self) -> PathBuf {
        self.store
            .clone()
            .unwrap_or_else(plumb_store::Store::default_path)
    }

    /// Opens a store that must already hold runs (for the commands that read them): a
    /// missing file is an error rather than a new empty store.
    pub fn open_existing(&self) -> anyhow::Result<plumb_store::Store> {
        Ok(plumb_store::Store::open_existing(&self.path())?)
    }
}

/// Runs the parsed command; `Err` is bad input or a failure before any result.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Kv(a) => kv::run(*a),
        Command::Sql(a) => sql::run(*a),
        Command::Ib(a) => ib::run(*a),
        Command::Run(a) => suite::run_cmd(a),
        Command::Plan(a) => suite::plan_cmd(a),
        Command::Worker(a) => worker::run(a),
        Command::Clients(a) => clients::run(a),
        Command::Rerun(a) => rerun::run(a),
        Command::Options(a) => options::run(a),
        Command::Runs(a) => runs::list(a),
        Command::Show(a) => runs::show(a),
        Command::Host(a) => host::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Durability(a) => durability::run(a),
        Command::DurabilityWriter(a) => durability::writer(a),
        Command::ExecPlan(a) => exec_plan::run(a),
        Command::Compare(a) => compare::compare_cmd(a),
        Command::Report(a) => compare::report_cmd(a),
        Command::Export(a) => export::export_cmd(a),
        Command::Import(a) => export::import_cmd(a),
        Command::History(a) => history::history_cmd(a),
        Command::Check(a) => history::check_cmd(a),
        Command::Changes(a) => changes::changes_cmd(a),
        Command::Ab(a) => ab::run(a),
        Command::Ratio(a) => ab::ratio(a),
        Command::Noise(a) => noise::run(a),
        Command::Icount(a) => icount::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Bisect(a) => bisect::run(*a),
    }
}

/// Fuzzing by property: any command line, made of plumb's own words and flags and any
/// values, parses or gives clap's error, never a panic.
#[cfg(test)]
mod fuzz {
    use super::Cli;
    use clap::{CommandFactory, Parser};
    use proptest::prelude::*;

    /// Every subcommand's name and every flag it takes, as clap knows them, so a new
    /// flag is fuzzed without an edit here.
    fn words(cmd: &clap::Command, out: &mut Vec<String>) {
        for a in cmd.get_arguments() {
            out.extend(a.get_long().map(|l| format!("--{l}")));
            out.extend(a.get_short().map(|c| format!("-{c}")));
        }
        for sub in cmd.get_subcommands() {
            out.push(sub.get_name().to_string());
            words(sub, out);
        }
    }

    fn word() -> impl Strategy<Value = String> {
        let mut known = vec!["--".to_string(), "-".into(), "=".into()];
        words(&Cli::command(), &mut known);
        known.sort();
        known.dedup();
        prop_oneof![
            prop::sample::select(known),
            any::<String>(),
            "-{1,2}[a-z-]{0,12}(=[a-z0-9]{0,6})?",
            "[0-9.e+-]{0,8}",
        ]
    }

    #[test]
    fn the_words_are_plumbs_own() {
        let mut known = Vec::new();
        words(&Cli::command(), &mut known);
        for w in [
            "kv", "check", "--a-bin", "--junit", "--engine", "-o", "list",
        ] {
            assert!(known.iter().any(|k| k == w), "{w} missing from {known:?}");
        }
    }

    proptest! {
        #[test]
        fn any_command_line_parses_or_is_refused(args in proptest::collection::vec(word(), 0..8)) {
            let _ = Cli::try_parse_from(std::iter::once("plumb".to_string()).chain(args));
        }
    }
}
