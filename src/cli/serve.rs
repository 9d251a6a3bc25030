//! `plumb serve`: the store as web pages (runs, a run, compare, history, changes,
//! hosts), each also as JSON; triage states are set there with a token.

use super::StoreArg;
use std::process::ExitCode;

/// `plumb serve`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Pages: / (runs), /run/ID, /compare?base=SEL&new=SEL, /history?plan=HASH, \
/changes, /hosts, /host/NAME; add ?format=json to any for the same content as JSON.\n\
Reading needs nothing; setting a change's triage state needs the token. Listening beyond \
loopback without a token is refused.\n\nExamples:\n  plumb serve\n  \
plumb serve --store postgres://bench@db1/plumb --listen 0.0.0.0:8470 --token \"$(openssl rand -hex 16)\""
)]
pub struct ServeArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Where to listen, HOST:PORT (port 0: any free port). An address other machines
    /// reach needs --token.
    #[arg(long, value_name = "HOST:PORT", default_value = plumb_serve::DEFAULT_LISTEN)]
    listen: String,
    /// The token every write (a triage state set from the Changes page) must carry
    /// [default: $PLUMB_SERVE_TOKEN; without one the pages are read-only].
    #[arg(long, value_name = "T")]
    token: Option<String>,
}

pub fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    // From the environment rather than the command line, a token stays out of `ps`.
    let token = a.token.or_else(|| {
        std::env::var("PLUMB_SERVE_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
    });
    let opts = plumb_serve::ServeOptions {
        listen: a.listen,
        token,
    };
    // Refuse a bad --listen (or a public one without a token) before opening the store.
    plumb_serve::check_options(&opts)?;
    let store = plumb_serve::open_store(&a.store.path())?;
    let server = plumb_serve::Server::bind(store, &opts)?;
    println!(
        "plumb serve: {} (store {}; {})",
        server.url(),
        server.store_shown(),
        if opts.token.is_some() {
            "triage needs the token"
        } else {
            "read-only: give --token to set triage states"
        }
    );
    // The request log, one line per answer, on stderr.
    server.run(|e| eprintln!("{e}"))?;
    Ok(ExitCode::SUCCESS)
}
