//! Which engine a run targets and with what options, as data: a plan holds an
//! [`EngineSpec`], stores it as provenance, and opens the engine from it. Each engine
//! describes itself through [`EngineKind`] on its options type; this file only lists
//! the engines (a variant, its arms in `kind`, `kind_mut` and `with_options`, and its
//! section of the option reference).

use crate::engine::{refuse_common, EngineKind};
pub use crate::engine::{Capabilities, Durability};
use crate::leveldb_options::LeveldbOptions;
use crate::lmdb_options::LmdbOptions;
use crate::memory::MemoryKind;
use crate::null::NullKind;
use crate::options::{reference, EngineCommon, OptionDoc};
use crate::rocks_options::RocksOptions;
use crate::speedb_options::SpeedbOptions;
use crate::splinterdb_options::SplinterdbOptions;
use crate::sqlite_options::SqliteOptions;
use crate::wiredtiger_options::WiredtigerOptions;
use plumb_core::{Target, TargetError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An engine and its typed options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "engine", content = "options", rename_all = "lowercase")]
pub enum EngineSpec {
    /// RocksDB through its C API (librocksdb-sys).
    Rocksdb(RocksOptions),
    /// Speedb, RocksDB's options and code path, in a build of its own.
    Speedb(SpeedbOptions),
    /// LMDB through `heed`.
    Lmdb(LmdbOptions),
    /// SQLite as a key-value table through `rusqlite`.
    Sqlite(SqliteOptions),
    /// LevelDB through its C API (Debian's libleveldb).
    Leveldb(LeveldbOptions),
    /// SplinterDB through a C shim over its public API.
    Splinterdb(SplinterdbOptions),
    /// WiredTiger through a C shim over its C API (Debian's libwiredtiger).
    Wiredtiger(WiredtigerOptions),
    /// A hash map in memory: tests and a harness baseline with real data.
    Memory,
    /// Does nothing: measures plumb's own cost per op.
    Null,
}

/// Every engine name plumb knows, built into this binary or not.
pub const ENGINE_NAMES: &[&str] = &[
    "rocksdb",
    "speedb",
    "lmdb",
    "sqlite",
    "leveldb",
    "splinterdb",
    "wiredtiger",
    "memory",
    "null",
];

/// One section of the option reference (docs/options.md): the engine's title, what the
/// section is for, and its options.
pub struct OptionSection {
    /// The engine as a heading.
    pub title: &'static str,
    /// Where these options are given.
    pub intro: String,
    /// Its options.
    pub rows: Vec<OptionDoc>,
}

/// The option reference's engine sections, in ENGINE_NAMES order.
pub fn option_sections() -> Vec<OptionSection> {
    let section = |title, engine: &str, extra: &str, rows| OptionSection {
        title,
        intro: format!(
            "`plumb kv` flags with `--engine {engine}`, and the `[target.options]` table of \
             a suite target with `engine = \"{engine}\"` (a flag spelled `--{engine}-NAME` \
             has the key NAME).{extra}"
        ),
        rows,
    };
    vec![
        section("RocksDB", "rocksdb", "", reference::<RocksOptions>()),
        OptionSection {
            title: "Speedb",
            intro: "The RocksDB options above, with `--engine speedb` or `engine = \"speedb\"`, \
                    in the plumb that `bash scripts/build-speedb.sh` builds (Speedb exports \
                    RocksDB's symbols, so the two never share a binary)."
                .into(),
            rows: Vec::new(),
        },
        section("LMDB", "lmdb", "", reference::<LmdbOptions>()),
        section(
            "SQLite",
            "sqlite",
            " The table is `kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`; each worker \
             thread has its own connection.",
            reference::<SqliteOptions>(),
        ),
        section("LevelDB", "leveldb", "", reference::<LeveldbOptions>()),
        section(
            "SplinterDB",
            "splinterdb",
            " A build with `--features splinterdb`. SplinterDB keeps no configuration on \
             disk: reopen a database with the sizes it was created with. It never fsyncs, \
             so `sync` is refused.",
            reference::<SplinterdbOptions>(),
        ),
        section(
            "WiredTiger",
            "wiredtiger",
            " One table with raw byte keys and values; each op is its own transaction \
             through WiredTiger's log.",
            reference::<WiredtigerOptions>(),
        ),
    ]
}

/// Refuses options for engines that take none, naming the key (and, from a suite
/// file, its line).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOptions {}

impl EngineSpec {
    /// The same spec without the options only the engine's own parser reads (RocksDB's
    /// option string and OPTIONS file): what a plumb linking another release can
    /// check; the release that runs it parses the rest when it opens.
    pub fn without_engine_parsed_options(&self) -> EngineSpec {
        let mut s = self.clone();
        let rocks = match &mut s {
            EngineSpec::Rocksdb(o) => Some(o),
            EngineSpec::Speedb(o) => Some(&mut o.0),
            _ => None,
        };
        if let Some(o) = rocks {
            o.option_string = None;
            o.options_file = None;
        }
        s
    }

    /// The release of this engine the binary links (`11.8.1`; Speedb's own version),
    /// or `None` when it is not built in: which `release` of a plan runs here.
    pub fn linked_release(&self) -> Option<String> {
        #[cfg(feature = "rocksdb")]
        if matches!(self, EngineSpec::Rocksdb(_)) && !crate::rocks::ROCKSDB_TREE.is_empty() {
            return Some(format!("tree:{}", crate::rocks::ROCKSDB_TREE));
        }
        let v = self.version();
        let first = v.split_whitespace().next()?;
        first
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
            .then(|| first.to_string())
    }

    /// The engine's description of itself.
    fn kind(&self) -> &dyn EngineKind {
        match self {
            EngineSpec::Rocksdb(o) => o,
            EngineSpec::Speedb(o) => o,
            EngineSpec::Lmdb(o) => o,
            EngineSpec::Sqlite(o) => o,
            EngineSpec::Leveldb(o) => o,
            EngineSpec::Splinterdb(o) => o,
            EngineSpec::Wiredtiger(o) => o,
            EngineSpec::Memory => &MemoryKind,
            EngineSpec::Null => &NullKind,
        }
    }

    /// The engine's options, for engines that have some.
    fn kind_mut(&mut self) -> Option<&mut dyn EngineKind> {
        match self {
            EngineSpec::Rocksdb(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Speedb(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Lmdb(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Sqlite(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Leveldb(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Splinterdb(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Wiredtiger(o) => Some(o as &mut dyn EngineKind),
            EngineSpec::Memory | EngineSpec::Null => None,
        }
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
            "speedb" => Ok(EngineSpec::Speedb(read(options)?)),
            "lmdb" => Ok(EngineSpec::Lmdb(read(options)?)),
            "sqlite" => Ok(EngineSpec::Sqlite(read(options)?)),
            "leveldb" => Ok(EngineSpec::Leveldb(read(options)?)),
            "splinterdb" => Ok(EngineSpec::Splinterdb(read(options)?)),
            "wiredtiger" => Ok(EngineSpec::Wiredtiger(read(options)?)),
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

    /// The engine as users name it.
    pub fn name(&self) -> &'static str {
        self.kind().name()
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

    /// Applies the engine-neutral command-line options (`--sync`, `--cache-size`);
    /// the error names the option when this engine has no such thing.
    pub fn apply_common(&mut self, c: &EngineCommon) -> Result<(), TargetError> {
        let name = self.name();
        match self.kind_mut() {
            Some(k) => k.apply_common(c),
            None => refuse_common(name, c),
        }
    }

    /// What this engine can do.
    pub fn capabilities(&self) -> Capabilities {
        self.kind().capabilities()
    }

    /// What an acknowledged write survives with these options.
    pub fn durability(&self) -> Durability {
        self.kind().durability()
    }

    /// Whether `dir` holds a database of this engine (for `use_existing_db`).
    pub fn holds_database(&self, dir: &Path) -> bool {
        self.kind()
            .marker_file()
            .is_some_and(|f| dir.join(f).exists())
    }

    /// Whether this binary was built with the engine (its cargo feature).
    pub fn built_in(&self) -> bool {
        self.kind().built_in()
    }

    /// The engine version this binary would run, before opening it.
    pub fn version(&self) -> String {
        if self.built_in() {
            self.kind().version()
        } else {
            "not built in".to_string()
        }
    }

    /// Checks the options before anything is written; the error names the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        self.kind().validate()
    }

    /// Refuses an engine this binary cannot open, saying how to get one that can.
    pub fn check_built_in(&self) -> Result<(), TargetError> {
        if self.built_in() {
            return Ok(());
        }
        Err(TargetError::Option {
            option: "engine".into(),
            message: format!(
                "{} is not built into this plumb: {}",
                self.name(),
                self.kind().how_to_build()
            ),
        })
    }

    /// Opens the engine; `dir` is its data directory when it keeps files.
    pub fn open(&self, dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError> {
        self.check_built_in()?;
        self.validate()?;
        self.kind().open(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_form_round_trips() {
        for spec in [
            EngineSpec::Rocksdb(RocksOptions::default()),
            EngineSpec::Speedb(SpeedbOptions::default()),
            EngineSpec::Lmdb(LmdbOptions::default()),
            EngineSpec::Sqlite(SqliteOptions::default()),
            EngineSpec::Leveldb(LeveldbOptions::default()),
            EngineSpec::Splinterdb(SplinterdbOptions::default()),
            EngineSpec::Wiredtiger(WiredtigerOptions::default()),
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
            e.contains(
                "rocksdb, speedb, lmdb, sqlite, leveldb, splinterdb, wiredtiger, memory, null"
            ),
            "{e}"
        );
        assert_eq!(
            EngineSpec::default_for("memory").unwrap(),
            EngineSpec::Memory
        );
    }

    #[test]
    fn every_engine_name_parses_to_its_engine_and_has_a_reference_section() {
        for name in ENGINE_NAMES {
            assert_eq!(EngineSpec::default_for(name).unwrap().name(), *name);
        }
        let titled: Vec<String> = option_sections()
            .iter()
            .map(|s| s.title.to_lowercase())
            .collect();
        for name in ENGINE_NAMES
            .iter()
            .filter(|n| !["memory", "null"].contains(n))
        {
            assert!(
                titled.iter().any(|t| t == name),
                "{name}: no option section"
            );
        }
    }
}
