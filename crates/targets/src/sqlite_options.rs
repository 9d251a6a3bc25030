//! SQLite's options as plumb sets them when it measures SQLite as a key-value table.
//! `sync` and `cache_size` come from the engine-neutral `--sync` and `--cache-size`
//! flags (`plumb kv`) or the same keys in a suite's `[target.options]`.

use crate::engine::{Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The database file inside the data directory.
pub const DB_FILE: &str = "plumb-kv.sqlite";

/// SQLite's journal modes that keep a database recoverable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum JournalMode {
    /// Write-ahead log: readers never block the writer (the mode servers use).
    Wal,
    /// Rollback journal, deleted at each commit (SQLite's default).
    Delete,
    /// Rollback journal, truncated at each commit.
    Truncate,
}

impl fmt::Display for JournalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JournalMode::Wal => "wal",
            JournalMode::Delete => "delete",
            JournalMode::Truncate => "truncate",
        })
    }
}

/// SQLite options plumb sets; everything else is SQLite's default and recorded as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct SqliteOptions {
    /// SQLite: journal mode, wal, delete or truncate.
    #[arg(long = "sqlite-journal-mode", value_enum, default_value = "wal")]
    pub journal_mode: JournalMode,
    /// SQLite: database page size in bytes (a power of two, 512 to 65536).
    #[arg(long = "sqlite-page-size", default_value_t = 4096)]
    pub page_size: u32,
    /// SQLite: bytes of the database to map into memory (0 = read through the page
    /// cache only).
    #[arg(long = "sqlite-mmap-size", default_value_t = 0)]
    pub mmap_size: u64,
    /// Every commit is flushed to the device: synchronous=FULL (without it NORMAL,
    /// which in WAL mode keeps every commit through a process crash, not a power cut).
    #[arg(skip)]
    pub sync: bool,
    /// Page cache per connection in bytes (each worker thread has its own connection).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        crate::options::defaults::<SqliteOptions>()
    }
}

impl SqliteOptions {
    /// Refuses values SQLite would silently ignore, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if !(512..=65536).contains(&self.page_size) || !self.page_size.is_power_of_two() {
            return Err(TargetError::Option {
                option: "page_size".into(),
                message: format!(
                    "{} is not a power of two from 512 to 65536, so SQLite would ignore it",
                    self.page_size
                ),
            });
        }
        Ok(())
    }

    /// The `synchronous` level these options ask for.
    pub fn synchronous(&self) -> &'static str {
        if self.sync {
            "FULL"
        } else {
            "NORMAL"
        }
    }

    /// The pragmas every connection runs, in order, as SQL.
    pub fn pragmas(&self) -> Vec<String> {
        vec![
            format!("PRAGMA page_size = {}", self.page_size),
            format!("PRAGMA journal_mode = {}", self.journal_mode),
            format!("PRAGMA synchronous = {}", self.synchronous()),
            // Negative: a size in KiB rather than in pages.
            format!("PRAGMA cache_size = -{}", (self.cache_size / 1024).max(1)),
            format!("PRAGMA mmap_size = {}", self.mmap_size),
        ]
    }

    /// Every option as provenance, with the pragmas SQLite is given.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        v.push(("pragmas".into(), self.pragmas().join("; ")));
        v
    }
}

impl EngineKind for SqliteOptions {
    fn name(&self) -> &'static str {
        "sqlite"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cache: true,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        Durability::of_sync(self.sync)
    }
    crate::engine::takes_sync_and_cache!();
    fn validate(&self) -> Result<(), TargetError> {
        SqliteOptions::validate(self)
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(DB_FILE)
    }
    crate::engine::feature_gated!(
        "sqlite",
        rusqlite::version().to_string(),
        crate::sqlite::SqliteTarget
    );
}

impl crate::engine::Registered for SqliteOptions {
    const NAME: &'static str = "sqlite";
    const TITLE: &'static str = "SQLite";
    const NOTE: &'static str = "The table is `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`; each worker thread has its own connection.";
    type Flags = Self;
}
