//! plumb: benchmarks databases bottom-up and explains every result per operation.

mod cli;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    // `--version` lists the engines this binary runs and their versions, so a build
    // made by scripts/build-speedb.sh or build-rocksdb-release.sh says what it holds.
    let matches = cli::Cli::command()
        .long_version(cli::long_version())
        .get_matches();
    let args = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // What users' scripts print (Lua's print, pgbench's debug()) goes to stderr, as
    // sysbench and pgbench write it.
    plumb_sql::script_output::set_sink(|line| eprintln!("{line}"));
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("plumb: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
