//! `plumb clients NAME`: a multi-client run (`plumb sql --client-group NAME`) seen as
//! one: per step, the clients' rates added up and the percentiles of their merged HDR
//! histograms. A percentile of the whole is not the mean of the clients' percentiles
//! (a slow client's tail is diluted by the average); the mean is printed beside it
//! only to show how far off it would be.

use super::StoreArg;
use std::process::ExitCode;

/// `plumb clients`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example, two hosts against one server, the store in PostgreSQL:\n  \
host1$ plumb sql --url postgres://bench@db/sb --steps point-query --client-group g7 --clients 2 --store postgres://…/plumb\n  \
host2$ (the same)\n  \
plumb clients g7 --store postgres://…/plumb"
)]
pub struct ClientsArgs {
    /// The --client-group name.
    group: String,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
}

pub fn run(a: ClientsArgs) -> anyhow::Result<ExitCode> {
    let m = plumb_report::clients::merge(&a.store.open_existing()?, &a.group)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&m)?);
    } else {
        print!("{}", plumb_report::clients::text(&m));
    }
    Ok(ExitCode::SUCCESS)
}
