//! Starting the real servers the library's tests run against, and reading their rows.
// Each test crate includes this module and uses part of it.
#![allow(dead_code)]

use plumb_servers::client::{SqlClient, TextRows};
use plumb_servers::{Managed, ServerChoice, StartOptions};
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

/// A started server and the directory it lives in; the server stops first (fields
/// drop in order).
pub struct Server {
    /// The server.
    pub m: Managed,
    _dir: tempfile::TempDir,
}

/// A managed `name` in a fresh directory under /var/tmp (0755: the server runs as the
/// postgres user when the tests run as root, and must reach its directory).
pub fn start_fresh(name: &str, engine: Option<&str>) -> Server {
    let dir = tempfile::Builder::new()
        .prefix("plumb-sql-test")
        .tempdir_in("/var/tmp")
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let m = start(name, engine, dir.path());
    Server { m, _dir: dir }
}

/// A query's rows, or a panic naming it.
pub fn rows(c: &mut dyn SqlClient, sql: &str) -> TextRows {
    c.rows(sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// A query's one integer, or a panic naming it.
pub fn int(c: &mut dyn SqlClient, sql: &str) -> i64 {
    let r = rows(c, sql);
    let v = r[0][0]
        .1
        .as_deref()
        .unwrap_or_else(|| panic!("{sql}: NULL"));
    v.parse().unwrap_or_else(|_| panic!("{sql}: {v:?}"))
}
