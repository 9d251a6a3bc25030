//! LMDB's options as plumb sets them. Written once, as for RocksDB: the attributes give
//! the command line, the suite keys, the stored provenance and docs/options.md.
//! `sync` comes from the engine-neutral `--sync` flag (`plumb kv`) or `sync = true` in a
//! suite's `[target.options]`.

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::EngineCommon;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// LMDB options plumb sets; everything else is LMDB's default and recorded as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct LmdbOptions {
    /// LMDB: size of the memory map in bytes, the largest the database may grow
    /// (virtual space only; the file grows as pages are written).
    #[arg(long = "lmdb-map-size", default_value_t = 256 << 30)]
    pub map_size: u64,
    /// LMDB: MDB_WRITEMAP, write through a writable map instead of write(2).
    #[arg(long = "lmdb-write-map")]
    pub write_map: bool,
    /// LMDB: MDB_NORDAHEAD, no OS readahead on the map (helps random reads of a
    /// database larger than RAM).
    #[arg(long = "lmdb-no-readahead")]
    pub no_readahead: bool,
    /// Every commit is flushed to the device (without it: MDB_NOSYNC, the OS writes
    /// back; a process crash loses nothing, a power cut loses the last commits).
    #[arg(skip)]
    pub sync: bool,
}

impl Default for LmdbOptions {
    fn default() -> Self {
        crate::options::defaults::<LmdbOptions>()
    }
}

/// The file LMDB keeps its pages in, inside the data directory.
pub const DATA_FILE: &str = "data.mdb";

impl LmdbOptions {
    /// Refuses a map too small to hold anything, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.map_size < 1 << 20 {
            return Err(TargetError::Option {
                option: "map_size".into(),
                message: format!(
                    "{} bytes is below LMDB's useful minimum of 1 MiB",
                    self.map_size
                ),
            });
        }
        if usize::try_from(self.map_size).is_err() {
            return Err(opt_err(
                "map_size",
                "larger than this machine's address space",
            ));
        }
        Ok(())
    }

    /// Every option as provenance, with what LMDB itself is told.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        v.push(("env_flags".into(), self.env_flags_names().join("|")));
        v
    }

    /// The MDB_* environment flags these options ask for, by name.
    pub fn env_flags_names(&self) -> Vec<&'static str> {
        let mut f = Vec::new();
        if !self.sync {
            f.push("MDB_NOSYNC");
        }
        if self.write_map {
            f.push("MDB_WRITEMAP");
        }
        if self.no_readahead {
            f.push("MDB_NORDAHEAD");
        }
        if f.is_empty() {
            f.push("none");
        }
        f
    }
}

impl EngineKind for LmdbOptions {
    fn name(&self) -> &'static str {
        "lmdb"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities::FILE_ENGINE
    }
    fn durability(&self) -> Durability {
        Durability::of_sync(self.sync)
    }
    fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        self.sync = c.sync;
        if c.cache_size.is_some() {
            return Err(opt_err(
                "cache_size",
                "LMDB has no cache of its own: it reads through the OS page cache \
                 (drop --cache-size)",
            ));
        }
        Ok(())
    }
    fn validate(&self) -> Result<(), TargetError> {
        LmdbOptions::validate(self)
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(DATA_FILE)
    }
    crate::engine::feature_gated!("lmdb", crate::lmdb::lmdb_version(), crate::lmdb::LmdbTarget);
}

impl crate::engine::Registered for LmdbOptions {
    const NAME: &'static str = "lmdb";
    const TITLE: &'static str = "LMDB";
    type Flags = Self;
}
