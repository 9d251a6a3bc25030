//! Starting the real servers the library's tests run against.

use plumb_sql::{Managed, ServerChoice, StartOptions};
use std::path::Path;

/// A managed `server` (with `engine` for MariaDB) in `dir`, 128 MiB of cache; panics
/// naming the server when it does not start.
pub fn start(server: &str, engine: Option<&str>, dir: &Path) -> Managed {
    Managed::start(
        &ServerChoice::parse(server, engine, None).unwrap(),
        &StartOptions {
            dir: Some(dir.to_path_buf()),
            keep: false,
            port: None,
            cache_mb: 128,
            config: None,
            waldir: None,
            ram_mb: None,
        },
    )
    .unwrap_or_else(|e| panic!("starting {server}: {e}"))
}
