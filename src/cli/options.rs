//! `plumb options`: the reference of every option, printed from the same typed
//! definitions that parse them and hold their defaults (docs/options.md is this
//! command's output, and a test keeps it so).

use plumb_targets::options::reference;
use std::process::ExitCode;

/// `plumb options`.
#[derive(Debug, clap::Args)]
pub struct OptionsArgs {}

/// The whole reference as Markdown.
pub fn markdown() -> String {
    plumb_plan::options::markdown(
        &reference::<super::probe::ProbeArgs>()
            .into_iter()
            .filter(|r| r.key != "store")
            .collect::<Vec<_>>(),
    )
}

pub fn run(_: OptionsArgs) -> anyhow::Result<ExitCode> {
    print!("{}", markdown());
    Ok(ExitCode::SUCCESS)
}
