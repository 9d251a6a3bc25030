//! SplinterDB's options as plumb sets them. SplinterDB keeps its data in one file of a
//! fixed logical size and keeps no configuration on disk, so the sizes here are part of
//! the database: reopening it (`--use-existing-db`) needs the same values, which every
//! run records. `cache_size` comes from the engine-neutral `--cache-size`; SplinterDB
//! cannot sync (upstream docs/limitations.md), so it refuses `--sync`.

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::{EngineCommon, DEFAULT_CACHE_SIZE};
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// The database file inside the data directory.
pub const DB_FILE: &str = "splinterdb.db";

/// SplinterDB's page size, fixed upstream: a key plus its value must fit in one page.
pub const PAGE_SIZE: u64 = 4096;

/// SplinterDB options plumb sets; everything else is SplinterDB's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct SplinterdbOptions {
    /// SplinterDB: the database file's logical size in bytes, the most it can ever
    /// hold (the file grows as extents are used).
    #[arg(long = "splinterdb-disk-size", default_value_t = 32 << 30)]
    pub disk_size: u64,
    /// SplinterDB: memtable capacity in bytes.
    #[arg(long = "splinterdb-memtable-capacity", default_value_t = 24 << 20)]
    pub memtable_capacity: u64,
    /// SplinterDB: background threads for memtable work (0 = foreground threads do it).
    #[arg(long = "splinterdb-memtable-bg-threads", default_value_t = 1)]
    pub memtable_bg_threads: u64,
    /// SplinterDB: background threads for compaction work (with one memtable thread,
    /// the two background threads RocksDB gets by default).
    #[arg(long = "splinterdb-normal-bg-threads", default_value_t = 1)]
    pub normal_bg_threads: u64,
    /// SplinterDB: O_DIRECT for all IO, so the OS page cache does not hide reads.
    #[arg(long = "splinterdb-direct-io")]
    pub direct_io: bool,
    /// Cache bytes (from `--cache-size`).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
}

impl Default for SplinterdbOptions {
    fn default() -> Self {
        crate::options::defaults::<SplinterdbOptions>()
    }
}

impl SplinterdbOptions {
    /// Refuses sizes SplinterDB cannot open with, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.disk_size < 256 << 20 {
            return Err(opt_err(
                "disk_size",
                "must be at least 268435456 bytes (256 MiB)",
            ));
        }
        if self.cache_size < 16 << 20 {
            return Err(opt_err(
                "cache_size",
                "SplinterDB needs a cache of at least 16777216 bytes (16 MiB)",
            ));
        }
        if self.memtable_capacity < 1 << 20 || self.memtable_capacity > self.disk_size / 8 {
            return Err(opt_err(
                "memtable_capacity",
                "must be at least 1 MiB and at most an eighth of disk_size",
            ));
        }
        if self.memtable_bg_threads > 64 || self.normal_bg_threads > 64 {
            return Err(opt_err(
                "normal_bg_threads",
                "at most 64 background threads",
            ));
        }
        Ok(())
    }

    /// Every option as provenance, with the limits that come with SplinterDB.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        v.push(("page_size".into(), PAGE_SIZE.to_string()));
        v.push((
            "fsync".into(),
            "never (SplinterDB has no durable-write API; no crash recovery)".into(),
        ));
        v
    }
}

impl EngineKind for SplinterdbOptions {
    fn name(&self) -> &'static str {
        "splinterdb"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            can_sync: false,
            direct_io: true,
            cache: true,
            max_entry_bytes: Some(PAGE_SIZE - 1),
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        Durability::Unlogged
    }
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        if c.sync {
            return Err(opt_err(
                "sync",
                "SplinterDB cannot flush a write to the device (it has no fsync API and no \
                 crash recovery, per its docs/limitations.md); run it without --sync and \
                 read its write figures as unsynced",
            ));
        }
        self.cache_size = c.cache_size.unwrap_or(DEFAULT_CACHE_SIZE);
        Ok(())
    }
    fn validate(&self) -> Result<(), TargetError> {
        SplinterdbOptions::validate(self)
    }
    fn how_to_build(&self) -> String {
        "run `bash scripts/build-splinterdb.sh`, then build with `cargo build --release \
         --features splinterdb`"
            .into()
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(DB_FILE)
    }
    crate::engine::feature_gated!(
        "splinterdb",
        crate::splinterdb::splinterdb_version(),
        crate::splinterdb::SplinterdbTarget
    );
}

impl crate::engine::Registered for SplinterdbOptions {
    const NAME: &'static str = "splinterdb";
    const TITLE: &'static str = "SplinterDB";
    const NOTE: &'static str = "A build with `--features splinterdb`. SplinterDB keeps no configuration on disk: reopen a database with the sizes it was created with. It never fsyncs, so `sync` is refused.";
    type Flags = Self;
}
