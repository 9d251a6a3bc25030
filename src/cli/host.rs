//! `plumb host`: the host inventory and hygiene checks that every run records.

use std::path::PathBuf;
use std::process::ExitCode;

/// Print the host inventory, the storage under a directory and the hygiene checks.
#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// Describe the storage under this directory (the data directory of a run).
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub dir: PathBuf,
    /// Print the snapshot as JSON (the form stored with every run).
    #[arg(long)]
    pub json: bool,
}

/// Takes a snapshot of this machine and prints it; exit status 0 whatever the verdicts,
/// since warnings describe the host rather than a failure of the command.
pub fn run(a: HostArgs) -> anyhow::Result<ExitCode> {
    if !a.dir.is_dir() {
        anyhow::bail!("--dir {}: not a directory", a.dir.display());
    }
    let snap = plumb_host::snapshot(&plumb_host::Options::for_dir(a.dir));
    if a.json {
        println!("{}", serde_json::to_string_pretty(&snap)?);
    } else {
        print!("{}", plumb_host::render_text(&snap));
    }
    Ok(ExitCode::SUCCESS)
}
