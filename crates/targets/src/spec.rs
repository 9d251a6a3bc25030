//! Which engine a run targets and with what options, as data: a plan holds an
//! [`EngineSpec`], stores it as provenance, and opens the engine from it. Adding an
//! engine is a variant here, its options file, its engine file and a feature line.

use crate::leveldb_options::LeveldbOptions;
use crate::lmdb_options::LmdbOptions;
use crate::options::{EngineCommon, DEFAULT_CACHE_SIZE};
use crate::rocks_options::RocksOptions;
use crate::splinterdb_options::{SplinterdbOptions, PAGE_SIZE};
use crate::sqlite_options::SqliteOptions;
use plumb_core::{Target, TargetError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// An engine and its typed options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "engine", content = "options", rename_all = "lowercase")]
pub enum EngineSpec {
    /// RocksDB through the `rocksdb` crate.
    Rocksdb(RocksOptions),
    /// LMDB through `heed`.
    Lmdb(LmdbOptions),
    /// SQLite as a key-value table through `rusqlite`.
    Sqlite(SqliteOptions),
    /// LevelDB through its C API (Debian's libleveldb).
    Leveldb(LeveldbOptions),
    /// SplinterDB through a C shim over its public API.
    Splinterdb(SplinterdbOptions),
    /// A hash map in memory: tests and a harness baseline with real data.
    Memory,
    /// Does nothing: measures plumb's own cost per op.
    Null,
}

/// What an acknowledged write survives, as the engine is configured. Why: the seeds'
/// first complaint about published engine comparisons is an engine that syncs beside one
/// that does not; compare warns when the engines side by side differ in this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Durability {
    /// Nothing survives the process: the engine keeps no files.
    Volatile,
    /// A crash of the process can lose acknowledged writes still in the engine's memory
    /// (RocksDB without its WAL; SplinterDB, which never fsyncs).
    Unlogged,
    /// Each write reaches the OS before it is acknowledged: a process crash loses none,
    /// a power cut can lose the last ones.
    OsBuffered,
    /// Each write is on the device before it is acknowledged.
    Synced,
}

impl Durability {
    /// The stored name (the `durability` option of a run's target).
    pub fn name(self) -> &'static str {
        match self {
            Durability::Volatile => "volatile",
            Durability::Unlogged => "unlogged",
            Durability::OsBuffered => "os-buffered",
            Durability::Synced => "synced",
        }
    }

    /// The stored name read back.
    pub fn from_name(s: &str) -> Option<Durability> {
        [
            Durability::Volatile,
            Durability::Unlogged,
            Durability::OsBuffered,
            Durability::Synced,
        ]
        .into_iter()
        .find(|d| d.name() == s)
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What an engine can do, as data, so a plan that asks for more is refused before it
/// runs, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Keeps its data in a directory (disk counters, size, `use_existing_db`).
    pub keeps_files: bool,
    /// Reads return what was written, so they are verified.
    pub stores_data: bool,
    /// Can flush every write to the device before acknowledging it (`sync`).
    pub can_sync: bool,
    /// Has a write-ahead log that a load may skip (db_bench's fillseq without WAL).
    pub wal: bool,
    /// Reverse range scans (revrange).
    pub reverse_scan: bool,
    /// A batched multi-key read of its own (otherwise multireadrandom is one get per key).
    pub native_multi_get: bool,
    /// Deletes (deleterandom).
    pub delete: bool,
    /// O_DIRECT reads, so the OS page cache does not hide IO.
    pub direct_io: bool,
    /// A cache of its own sized by `cache_size`.
    pub cache: bool,
    /// Reports its flush and compaction bytes and stalls (w_amp_eng, stall%).
    pub compaction_stats: bool,
    /// The largest key plus value it can store, when it has a limit.
    pub max_entry_bytes: Option<u64>,
}

/// Every engine name plumb knows, built into this binary or not.
pub const ENGINE_NAMES: &[&str] = &[
    "rocksdb",
    "lmdb",
    "sqlite",
    "leveldb",
    "splinterdb",
    "memory",
    "null",
];

/// Refuses options for engines that take none, naming the key (and, from a suite
/// file, its line).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOptions {}

fn opt_err(option: &str, message: impl Into<String>) -> TargetError {
    TargetError::Option {
        option: option.into(),
        message: message.into(),
    }
}

impl EngineSpec {
    /// The engine as users name it.
    pub fn name(&self) -> &'static str {
        match self {
            EngineSpec::Rocksdb(_) => "rocksdb",
            EngineSpec::Lmdb(_) => "lmdb",
            EngineSpec::Sqlite(_) => "sqlite",
            EngineSpec::Leveldb(_) => "leveldb",
            EngineSpec::Splinterdb(_) => "splinterdb",
            EngineSpec::Memory => "memory",
            EngineSpec::Null => "null",
        }
    }

    /// The engine `name` with default options.
    pub fn default_for(name: &str) -> Result<EngineSpec, TargetError> {
        Self::with_options(name, None::<serde_json::Value>).map_err(|e: serde_json::Error| {
            TargetError::Option {
                option: "engine".into(),
                message: e.to_string(),
            }
        })
    }

    /// The engine `name` with options read from `options` (a suite file's table, with
    /// its positions), or its defaults when there is none.
    pub fn with_options<'de, E, D>(name: &str, options: Option<D>) -> Result<EngineSpec, E>
    where
        D: serde::Deserializer<'de, Error = E>,
        E: serde::de::Error,
    {
        fn read<'de, T: Deserialize<'de> + Default, D: serde::Deserializer<'de>>(
            options: Option<D>,
        ) -> Result<T, D::Error> {
            match options {
                Some(d) => T::deserialize(d),
                None => Ok(T::default()),
            }
        }
        match name {
            "rocksdb" => Ok(EngineSpec::Rocksdb(read(options)?)),
            "lmdb" => Ok(EngineSpec::Lmdb(read(options)?)),
            "sqlite" => Ok(EngineSpec::Sqlite(read(options)?)),
            "leveldb" => Ok(EngineSpec::Leveldb(read(options)?)),
            "splinterdb" => Ok(EngineSpec::Splinterdb(read(options)?)),
            "memory" | "null" => {
                if let Some(d) = options {
                    NoOptions::deserialize(d)?;
                }
                Ok(if name == "memory" {
                    EngineSpec::Memory
                } else {
                    EngineSpec::Null
                })
            }
            other => Err(E::custom(format!(
                "unknown engine {other:?}; plumb knows: {}",
                ENGINE_NAMES.join(", ")
            ))),
        }
    }

    /// Applies the engine-neutral command-line options (`--sync`, `--cache-size`);
    /// the error names the flag's option when this engine has no such thing.
    pub fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        let cache = c.cache_size;
        match self {
            EngineSpec::Rocksdb(o) => {
                o.sync = c.sync;
                o.cache_size = cache.unwrap_or(DEFAULT_CACHE_SIZE);
            }
            EngineSpec::Lmdb(o) => {
                o.sync = c.sync;
                if cache.is_some() {
                    return Err(opt_err(
                        "cache_size",
                        "LMDB has no cache of its own: it reads through the OS page cache \
                         (drop --cache-size, or size the page cache with the machine's memory)",
                    ));
                }
            }
            EngineSpec::Sqlite(o) => {
                o.sync = c.sync;
                o.cache_size = cache.unwrap_or(DEFAULT_CACHE_SIZE);
            }
            EngineSpec::Leveldb(o) => {
                o.sync = c.sync;
                o.cache_size = cache.unwrap_or(DEFAULT_CACHE_SIZE);
            }
            EngineSpec::Splinterdb(o) => {
                if c.sync {
                    return Err(opt_err(
                        "sync",
                        "SplinterDB cannot flush a write to the device (it has no fsync API and \
                         no crash recovery, per its docs/limitations.md); run it without --sync \
                         and read its write figures as unsynced",
                    ));
                }
                o.cache_size = cache.unwrap_or(DEFAULT_CACHE_SIZE);
            }
            EngineSpec::Memory | EngineSpec::Null => {
                if c.sync {
                    return Err(opt_err(
                        "sync",
                        format!("the {} engine keeps nothing to sync", self.name()),
                    ));
                }
                if cache.is_some() {
                    return Err(opt_err(
                        "cache_size",
                        format!("the {} engine has no cache", self.name()),
                    ));
                }
            }
        }
        Ok(())
    }

    /// What this engine can do.
    pub fn capabilities(&self) -> Capabilities {
        let files = Capabilities {
            keeps_files: true,
            stores_data: true,
            can_sync: true,
            wal: false,
            reverse_scan: true,
            native_multi_get: false,
            delete: true,
            direct_io: false,
            cache: false,
            compaction_stats: false,
            max_entry_bytes: None,
        };
        match self {
            EngineSpec::Rocksdb(_) => Capabilities {
                wal: true,
                native_multi_get: true,
                direct_io: true,
                cache: true,
                compaction_stats: true,
                ..files
            },
            EngineSpec::Lmdb(_) => files,
            EngineSpec::Sqlite(_) => Capabilities {
                cache: true,
                ..files
            },
            EngineSpec::Leveldb(_) => Capabilities {
                wal: false,
                cache: true,
                compaction_stats: true,
                ..files
            },
            EngineSpec::Splinterdb(_) => Capabilities {
                can_sync: false,
                direct_io: true,
                cache: true,
                max_entry_bytes: Some(PAGE_SIZE - 1),
                ..files
            },
            EngineSpec::Memory => Capabilities {
                keeps_files: false,
                can_sync: false,
                ..files
            },
            EngineSpec::Null => Capabilities {
                keeps_files: false,
                stores_data: false,
                can_sync: false,
                ..files
            },
        }
    }

    /// What an acknowledged write survives with these options.
    pub fn durability(&self) -> Durability {
        match self {
            EngineSpec::Rocksdb(o) if o.disable_wal => Durability::Unlogged,
            EngineSpec::Rocksdb(o) if o.sync => Durability::Synced,
            EngineSpec::Lmdb(o) if o.sync => Durability::Synced,
            EngineSpec::Sqlite(o) if o.sync => Durability::Synced,
            EngineSpec::Leveldb(o) if o.sync => Durability::Synced,
            EngineSpec::Splinterdb(_) => Durability::Unlogged,
            EngineSpec::Rocksdb(_)
            | EngineSpec::Lmdb(_)
            | EngineSpec::Sqlite(_)
            | EngineSpec::Leveldb(_) => Durability::OsBuffered,
            EngineSpec::Memory | EngineSpec::Null => Durability::Volatile,
        }
    }

    /// Whether `dir` holds a database of this engine (for `use_existing_db`).
    pub fn holds_database(&self, dir: &Path) -> bool {
        match self {
            EngineSpec::Rocksdb(_) => dir.join("CURRENT").exists(),
            EngineSpec::Lmdb(_) => dir.join("data.mdb").exists(),
            EngineSpec::Sqlite(_) => dir.join("plumb-kv.sqlite").exists(),
            EngineSpec::Leveldb(_) => dir.join("CURRENT").exists(),
            EngineSpec::Splinterdb(_) => dir.join("splinterdb.db").exists(),
            EngineSpec::Memory | EngineSpec::Null => false,
        }
    }

    /// Whether this binary was built with the engine (its cargo feature).
    pub fn built_in(&self) -> bool {
        match self {
            EngineSpec::Rocksdb(_) => cfg!(feature = "rocksdb"),
            EngineSpec::Lmdb(_) => cfg!(feature = "lmdb"),
            EngineSpec::Sqlite(_) => cfg!(feature = "sqlite"),
            EngineSpec::Leveldb(_) => cfg!(feature = "leveldb"),
            EngineSpec::Splinterdb(_) => cfg!(feature = "splinterdb"),
            EngineSpec::Memory | EngineSpec::Null => true,
        }
    }

    /// The engine version this binary would run, before opening it.
    pub fn version(&self) -> String {
        if !self.built_in() {
            return "not built in".to_string();
        }
        match self {
            #[cfg(feature = "rocksdb")]
            EngineSpec::Rocksdb(_) => crate::rocks::ROCKSDB_VERSION.to_string(),
            #[cfg(feature = "lmdb")]
            EngineSpec::Lmdb(_) => crate::lmdb::lmdb_version(),
            #[cfg(feature = "sqlite")]
            EngineSpec::Sqlite(_) => rusqlite::version().to_string(),
            #[cfg(feature = "leveldb")]
            EngineSpec::Leveldb(_) => crate::leveldb::leveldb_version(),
            #[cfg(feature = "splinterdb")]
            EngineSpec::Splinterdb(_) => crate::splinterdb::splinterdb_version(),
            EngineSpec::Memory | EngineSpec::Null => env!("CARGO_PKG_VERSION").to_string(),
            #[allow(unreachable_patterns)]
            _ => "not built in".to_string(),
        }
    }

    /// Checks the options before anything is written; the error names the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        match self {
            EngineSpec::Rocksdb(o) => o.validate(),
            EngineSpec::Lmdb(o) => o.validate(),
            EngineSpec::Sqlite(o) => o.validate(),
            EngineSpec::Leveldb(o) => o.validate(),
            EngineSpec::Splinterdb(o) => o.validate(),
            EngineSpec::Memory | EngineSpec::Null => Ok(()),
        }
    }

    /// Refuses an engine this binary cannot open, saying how to get one that can.
    pub fn check_built_in(&self) -> Result<(), TargetError> {
        if self.built_in() {
            return Ok(());
        }
        Err(TargetError::Option {
            option: "engine".into(),
            message: match self {
                EngineSpec::Splinterdb(_) => "splinterdb is not built into this plumb: run \
                     `bash scripts/build-splinterdb.sh`, then build with `cargo build --release \
                     --features splinterdb`"
                    .to_string(),
                EngineSpec::Leveldb(_) => "leveldb is not built into this plumb: install \
                     libleveldb-dev (`bash scripts/setup.sh`) and build with `--features leveldb`"
                    .to_string(),
                _ => format!(
                    "{} is not built into this plumb (build with --features {})",
                    self.name(),
                    self.name()
                ),
            },
        })
    }

    /// Opens the engine; `dir` is its data directory when it keeps files.
    pub fn open(&self, dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError> {
        self.check_built_in()?;
        self.validate()?;
        let need_dir = || dir.ok_or_else(|| TargetError::engine(self.name(), "needs a data dir"));
        match self {
            #[cfg(feature = "rocksdb")]
            EngineSpec::Rocksdb(o) => Ok(Box::new(crate::rocks::RocksTarget::open(
                need_dir()?,
                o.clone(),
            )?)),
            #[cfg(feature = "lmdb")]
            EngineSpec::Lmdb(o) => Ok(Box::new(crate::lmdb::LmdbTarget::open(
                need_dir()?,
                o.clone(),
            )?)),
            #[cfg(feature = "sqlite")]
            EngineSpec::Sqlite(o) => Ok(Box::new(crate::sqlite::SqliteTarget::open(
                need_dir()?,
                o.clone(),
            )?)),
            #[cfg(feature = "leveldb")]
            EngineSpec::Leveldb(o) => Ok(Box::new(crate::leveldb::LeveldbTarget::open(
                need_dir()?,
                o.clone(),
            )?)),
            #[cfg(feature = "splinterdb")]
            EngineSpec::Splinterdb(o) => Ok(Box::new(crate::splinterdb::SplinterdbTarget::open(
                need_dir()?,
                o.clone(),
            )?)),
            EngineSpec::Memory => Ok(Box::new(crate::MemoryTarget::new())),
            EngineSpec::Null => Ok(Box::new(crate::NullTarget)),
            #[allow(unreachable_patterns)]
            _ => {
                let _ = need_dir;
                unreachable!("check_built_in refuses engines not built in")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_form_round_trips() {
        for spec in [
            EngineSpec::Rocksdb(RocksOptions::default()),
            EngineSpec::Lmdb(LmdbOptions::default()),
            EngineSpec::Sqlite(SqliteOptions::default()),
            EngineSpec::Leveldb(LeveldbOptions::default()),
            EngineSpec::Splinterdb(SplinterdbOptions::default()),
            EngineSpec::Memory,
            EngineSpec::Null,
        ] {
            let j = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<EngineSpec>(&j).unwrap(), spec, "{j}");
        }
    }

    #[test]
    fn engines_without_options_refuse_them_and_unknown_engines_list_the_known() {
        let bad = serde_json::json!({"cache_size": 1});
        let e = EngineSpec::with_options("null", Some(&bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cache_size"), "{e}");
        let e = EngineSpec::default_for("rocks").unwrap_err().to_string();
        assert!(
            e.contains("rocksdb, lmdb, sqlite, leveldb, splinterdb, memory, null"),
            "{e}"
        );
        assert_eq!(
            EngineSpec::default_for("memory").unwrap(),
            EngineSpec::Memory
        );
    }
}
