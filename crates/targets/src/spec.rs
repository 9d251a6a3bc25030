//! Which engine a run targets and with what options, as data: a plan holds an
//! [`EngineSpec`], stores it as provenance, and opens the engine from it. Each engine
//! describes itself through [`EngineKind`] and [`Registered`] on its options type; the
//! registry below is the one list of engines: one line each makes its variant, its name,
//! its section of the option reference and its `plumb kv` flags.

use crate::engine::{refuse_common, EngineKind, Registered};
pub use crate::engine::{Capabilities, Durability};
use crate::fjall::FjallOptions;
use crate::leveldb_options::LeveldbOptions;
use crate::lmdb_options::LmdbOptions;
use crate::memory::MEMORY_KIND;
use crate::null::NULL_KIND;
use crate::options::{EngineCommon, OptionDoc};
use crate::redb::RedbOptions;
use crate::rocks_options::RocksOptions;
use crate::speedb_options::SpeedbOptions;
use crate::splinterdb_options::SplinterdbOptions;
use crate::sqlite_options::SqliteOptions;
use crate::wiredtiger_options::WiredtigerOptions;
use plumb_core::{Target, TargetError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Makes the registry from one line per engine: `field: Variant(OptionsType)`, where
/// the variant lowercased is the engine's name (serde's tag) and the field names its
/// flags in [`EngineFlags`].
macro_rules! registry {
    ($($(#[$doc:meta])* $field:ident: $variant:ident($opts:ty),)*) => {
        /// An engine and its typed options.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "engine", content = "options", rename_all = "lowercase")]
        pub enum EngineSpec {
            $($(#[$doc])* $variant($opts),)*
            /// A hash map in memory: tests and a harness baseline with real data.
            Memory,
            /// Does nothing: measures plumb's own cost per op.
            Null,
        }

        /// Every engine name plumb knows, built into this binary or not.
        pub const ENGINE_NAMES: &[&str] = &[$(<$opts as Registered>::NAME,)* "memory", "null"];

        /// Every engine's own flags, as `plumb kv` takes them (each under its heading).
        #[derive(Debug, Clone, clap::Args)]
        pub struct EngineFlags {
            $(
                #[allow(missing_docs)]
                #[command(flatten, next_help_heading = <$opts as Registered>::HEADING)]
                pub $field: <$opts as Registered>::Flags,
            )*
        }

        impl EngineFlags {
            /// The engine `name` with the options its flags give, or `None` for an
            /// engine without options of its own (memory, null) or an unknown name.
            pub fn spec(&self, name: &str) -> Option<EngineSpec> {
                $(if name == <$opts as Registered>::NAME {
                    return Some(EngineSpec::$variant(<$opts as Registered>::from_flags(
                        &self.$field,
                        self,
                    )));
                })*
                None
            }
        }

        /// The option reference's engine sections, in ENGINE_NAMES order.
        pub fn option_sections() -> Vec<OptionSection> {
            vec![$(<$opts as Registered>::section(),)*]
        }

        impl EngineSpec {
            /// The engine's description of itself.
            fn kind(&self) -> &dyn EngineKind {
                match self {
                    $(EngineSpec::$variant(o) => o,)*
                    EngineSpec::Memory => &MEMORY_KIND,
                    EngineSpec::Null => &NULL_KIND,
                }
            }

            /// The engine's options, for engines that have some.
            fn kind_mut(&mut self) -> Option<&mut dyn EngineKind> {
                match self {
                    $(EngineSpec::$variant(o) => Some(o as &mut dyn EngineKind),)*
                    EngineSpec::Memory | EngineSpec::Null => None,
                }
            }

            /// The engine `name` with options read from `options` (a suite file's table,
            /// with its positions), or its defaults when there is none.
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
                $(if name == <$opts as Registered>::NAME {
                    return Ok(EngineSpec::$variant(read(options)?));
                })*
                match name {
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
        }

        #[cfg(test)]
        /// Every registered engine with its default options.
        fn every_spec() -> Vec<EngineSpec> {
            vec![$(EngineSpec::$variant(<$opts>::default()),)* EngineSpec::Memory, EngineSpec::Null]
        }
    };
}

registry! {
    /// RocksDB through its C API (librocksdb-sys).
    rocksdb: Rocksdb(RocksOptions),
    /// Speedb, RocksDB's options and code path, in a build of its own.
    speedb: Speedb(SpeedbOptions),
    /// LMDB through `heed`.
    lmdb: Lmdb(LmdbOptions),
    /// SQLite as a key-value table through `rusqlite`.
    sqlite: Sqlite(SqliteOptions),
    /// LevelDB through its C API (Debian's libleveldb).
    leveldb: Leveldb(LeveldbOptions),
    /// SplinterDB through a C shim over its public API.
    splinterdb: Splinterdb(SplinterdbOptions),
    /// WiredTiger through a C shim over its C API (Debian's libwiredtiger).
    wiredtiger: Wiredtiger(WiredtigerOptions),
    /// redb, a pure-Rust copy-on-write B-tree.
    redb: Redb(RedbOptions),
    /// fjall, a pure-Rust LSM.
    fjall: Fjall(FjallOptions),
}

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

    /// Disk bytes at a run's peak per byte of live data (see
    /// [`crate::engine::EngineKind::peak_space_factor`]).
    pub fn peak_space_factor(&self) -> f64 {
        self.kind().peak_space_factor()
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
        for spec in every_spec() {
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
                "rocksdb, speedb, lmdb, sqlite, leveldb, splinterdb, wiredtiger, redb, fjall, memory, null"
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
