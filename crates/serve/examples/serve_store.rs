//! `plumb serve` without the plumb binary (whose build compiles RocksDB): the same
//! server over the same store, for looking at the pages or timing them while the
//! binary builds.
//!
//! ```text
//! cargo run --release -p plumb-serve --example serve_store -- --store S [--listen A] [--token T]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut opts = plumb_serve::ServeOptions::default();
    let mut store = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next();
        match (a.as_str(), v) {
            ("--store", Some(v)) => store = Some(std::path::PathBuf::from(v)),
            ("--listen", Some(v)) => opts.listen = v,
            ("--token", Some(v)) => opts.token = Some(v),
            _ => {
                eprintln!("usage: serve_store --store PATH|URL [--listen HOST:PORT] [--token T]");
                return ExitCode::from(2);
            }
        }
    }
    let Some(store) = store else {
        eprintln!("serve_store: --store is required");
        return ExitCode::from(2);
    };
    let run = || -> Result<(), plumb_serve::ServeError> {
        plumb_serve::check_options(&opts)?;
        let server = plumb_serve::Server::bind(plumb_serve::open_store(&store)?, &opts)?;
        println!(
            "serve_store: {} (store {})",
            server.url(),
            server.store_shown()
        );
        server.run(|e| eprintln!("{e}"))
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve_store: {e}");
            ExitCode::from(1)
        }
    }
}
