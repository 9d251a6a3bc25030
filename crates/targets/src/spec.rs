//! Which engine a run targets and with what options, as data: a plan holds an
//! [`EngineSpec`], stores it as provenance, and opens the engine from it. Adding an
//! engine is a variant here, its options file, its engine file and a feature line.

use crate::rocks_options::RocksOptions;
use plumb_core::{Target, TargetError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// An engine and its typed options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "engine", content = "options", rename_all = "lowercase")]
pub enum EngineSpec {
    /// RocksDB through the `rocksdb` crate.
    Rocksdb(RocksOptions),
    /// A hash map in memory: tests and a harness baseline with real data.
    Memory,
    /// Does nothing: measures plumb's own cost per op.
    Null,
}

/// What an engine can do, as data, so a plan that asks for more is refused before it
/// runs, with the reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Keeps its data in a directory (disk counters, size, `use_existing_db`).
    pub keeps_files: bool,
    /// Reads return what was written, so they are verified.
    pub stores_data: bool,
}

/// Every engine name plumb knows, built into this binary or not.
pub const ENGINE_NAMES: &[&str] = &["rocksdb", "memory", "null"];

/// Refuses options for engines that take none, naming the key (and, from a suite
/// file, its line).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoOptions {}

impl EngineSpec {
    /// The engine as users name it.
    pub fn name(&self) -> &'static str {
        match self {
            EngineSpec::Rocksdb(_) => "rocksdb",
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
        match name {
            "rocksdb" => Ok(EngineSpec::Rocksdb(match options {
                Some(d) => RocksOptions::deserialize(d)?,
                None => RocksOptions::default(),
            })),
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

    /// What this engine can do.
    pub fn capabilities(&self) -> Capabilities {
        match self {
            EngineSpec::Rocksdb(_) => Capabilities {
                keeps_files: true,
                stores_data: true,
            },
            EngineSpec::Memory => Capabilities {
                keeps_files: false,
                stores_data: true,
            },
            EngineSpec::Null => Capabilities {
                keeps_files: false,
                stores_data: false,
            },
        }
    }

    /// Whether this binary was built with the engine (its cargo feature).
    pub fn built_in(&self) -> bool {
        match self {
            EngineSpec::Rocksdb(_) => cfg!(feature = "rocksdb"),
            EngineSpec::Memory | EngineSpec::Null => true,
        }
    }

    /// The engine version this binary would run, before opening it.
    pub fn version(&self) -> String {
        match self {
            #[cfg(feature = "rocksdb")]
            EngineSpec::Rocksdb(_) => crate::rocks::ROCKSDB_VERSION.to_string(),
            #[cfg(not(feature = "rocksdb"))]
            EngineSpec::Rocksdb(_) => "not built in".to_string(),
            EngineSpec::Memory | EngineSpec::Null => env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// Checks the options before anything is written; the error names the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        match self {
            EngineSpec::Rocksdb(o) => o.validate(),
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
            message: format!(
                "{} is not built into this plumb (build with --features {})",
                self.name(),
                self.name()
            ),
        })
    }

    /// Opens the engine; `dir` is its data directory when it keeps files.
    pub fn open(&self, dir: Option<&Path>) -> Result<Box<dyn Target>, TargetError> {
        self.check_built_in()?;
        self.validate()?;
        match self {
            #[cfg(feature = "rocksdb")]
            EngineSpec::Rocksdb(o) => {
                let dir = dir.ok_or_else(|| TargetError::engine("rocksdb", "needs a data dir"))?;
                Ok(Box::new(crate::rocks::RocksTarget::open(dir, o.clone())?))
            }
            #[cfg(not(feature = "rocksdb"))]
            EngineSpec::Rocksdb(_) => {
                let _ = dir;
                unreachable!("validate refuses engines not built in")
            }
            EngineSpec::Memory => Ok(Box::new(crate::MemoryTarget::new())),
            EngineSpec::Null => Ok(Box::new(crate::NullTarget)),
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
        assert!(e.contains("rocksdb, memory, null"), "{e}");
        assert_eq!(
            EngineSpec::default_for("memory").unwrap(),
            EngineSpec::Memory
        );
    }
}
