//! redb's options as plumb sets them. Written once, as for RocksDB: the attributes give
//! the command line, the suite keys, the stored provenance and docs/options.md.
//! `sync` and `cache_size` come from the engine-neutral `--sync` and `--cache-size`
//! flags (`plumb kv`) or the same keys in a suite's `[target.options]`.

#[cfg(feature = "redb")]
pub(crate) mod engine;

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// The file redb keeps its database in, inside the data directory.
pub const DATA_FILE: &str = "data.redb";

/// The largest key plus value redb stores in one entry (its `MAX_PAIR_LENGTH`,
/// src/tree_store/page_store/base.rs: 3 GiB + 768 MiB), so a plan asking for more is
/// refused before it runs rather than failing on its first put.
pub const MAX_PAIR_BYTES: u64 = (3 << 30) + (768 << 20);

/// redb options plumb sets; everything else is redb's default and recorded as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct RedbOptions {
    /// Every commit is `Durability::Immediate`: on the device when it returns. Without
    /// it, `Durability::None`: the commit lives in redb's memory (the file header still
    /// names the last durable commit) until a durable commit or a clean close, so a
    /// process crash loses every commit since. On the command line: `--sync`, shared by
    /// every engine ([`crate::EngineCommon`]).
    #[arg(skip)]
    pub sync: bool,
    /// Bytes of redb's own page cache, read cache and write buffer together
    /// (`Builder::set_cache_size`). On the command line: `--cache-size`, shared by every
    /// engine with a cache ([`crate::EngineCommon`]).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
    /// redb: two-phase commit, a second fsync per durable commit so the new commit slot
    /// is made current only once it and its pages are on the device (needs --sync).
    #[arg(long = "redb-two-phase-commit")]
    pub two_phase_commit: bool,
    /// redb: quick-repair, each durable commit also saves the allocator state (and commits
    /// in two phases), so reopening after a crash skips the full repair walk (needs
    /// --sync).
    #[arg(long = "redb-quick-repair")]
    pub quick_repair: bool,
}

impl Default for RedbOptions {
    fn default() -> Self {
        crate::options::defaults::<RedbOptions>()
    }
}

impl crate::engine::Registered for RedbOptions {
    const NAME: &'static str = "redb";
    const TITLE: &'static str = "redb";
    const NOTE: &'static str = "One table of byte keys and values; each put and delete is \
        its own write transaction, each get its own read transaction.";
    type Flags = Self;
}

impl RedbOptions {
    /// Refuses options redb would silently ignore or cannot take, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if usize::try_from(self.cache_size).is_err() {
            return Err(opt_err(
                "cache_size",
                "larger than this machine's address space",
            ));
        }
        // Both only change durable commits; without --sync every commit is non-durable.
        for (on, option) in [
            (self.two_phase_commit, "two_phase_commit"),
            (self.quick_repair, "quick_repair"),
        ] {
            if on && !self.sync {
                return Err(opt_err(
                    option,
                    "only changes durable commits, and without --sync every redb commit is \
                     Durability::None (add --sync or drop it)",
                ));
            }
        }
        Ok(())
    }

    /// The `redb::Durability` each commit is given, by name.
    pub fn commit_durability(&self) -> &'static str {
        if self.sync {
            "Immediate"
        } else {
            "None"
        }
    }

    /// Every option as provenance, with what redb itself is told.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        v.push(("commit_durability".into(), self.commit_durability().into()));
        v
    }
}

impl EngineKind for RedbOptions {
    fn name(&self) -> &'static str {
        "redb"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cache: true,
            max_entry_bytes: Some(MAX_PAIR_BYTES),
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        // Not `of_sync`: a non-durable redb commit never reaches the file's header, so
        // unlike LMDB's MDB_NOSYNC a process crash (not only a power cut) loses it.
        if self.sync {
            Durability::Synced
        } else {
            Durability::Unlogged
        }
    }
    crate::engine::takes_sync_and_cache!();
    fn validate(&self) -> Result<(), TargetError> {
        RedbOptions::validate(self)
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(DATA_FILE)
    }
    crate::engine::feature_gated!(
        "redb",
        crate::redb::engine::redb_version(),
        crate::redb::engine::RedbTarget
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::EngineCommon;

    #[test]
    fn defaults_come_from_the_one_definition() {
        let d = RedbOptions::default();
        assert_eq!(d.cache_size, DEFAULT_CACHE_SIZE);
        assert!(!d.sync && !d.two_phase_commit && !d.quick_repair);
        let from_empty: RedbOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(from_empty, d);
        let e = serde_json::from_str::<RedbOptions>(r#"{"cache_sise": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cache_sise"), "{e}");
    }

    #[test]
    fn common_options_set_sync_cache_and_durability() {
        let mut o = RedbOptions::default();
        assert_eq!(o.durability(), Durability::Unlogged);
        o.apply_common(&EngineCommon {
            sync: true,
            cache_size: Some(64 << 20),
        })
        .unwrap();
        assert!(o.sync);
        assert_eq!(o.cache_size, 64 << 20);
        assert_eq!(o.durability(), Durability::Synced);
        assert!(o
            .describe()
            .contains(&("commit_durability".into(), "Immediate".into())));
    }

    #[test]
    fn commit_knobs_without_sync_are_refused() {
        let o = RedbOptions {
            quick_repair: true,
            ..RedbOptions::default()
        };
        assert!(o
            .validate()
            .unwrap_err()
            .to_string()
            .contains("quick_repair"));
        let o = RedbOptions {
            sync: true,
            quick_repair: true,
            two_phase_commit: true,
            ..RedbOptions::default()
        };
        o.validate().unwrap();
    }

    #[test]
    fn flags_are_prefixed_and_keys_plain() {
        let rows = crate::options::reference::<RedbOptions>();
        let flags: Vec<_> = rows
            .iter()
            .map(|r| (r.key.as_str(), r.flag.as_str()))
            .collect();
        assert_eq!(
            flags,
            [
                ("two_phase_commit", "--redb-two-phase-commit"),
                ("quick_repair", "--redb-quick-repair")
            ]
        );
    }
}
