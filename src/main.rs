//! plumb: benchmarks databases bottom-up and explains every result per operation.

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("plumb: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
