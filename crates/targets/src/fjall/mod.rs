//! fjall's options as plumb sets them. fjall is a pure-Rust LSM (the `fjall` crate), so
//! plumb can set a Rust LSM beside RocksDB and LevelDB. Written once, as for RocksDB: the
//! attributes give the command line, the suite keys, the stored provenance and
//! docs/options.md. `sync` and `cache_size` come from the engine-neutral `--sync` and
//! `--cache-size` flags (`plumb kv`) or the same keys in a suite's `[target.options]`.
//! Defaults are fjall's own (3.x), except the cache, which is plumb's 1 GiB for every
//! engine that has one.

#[cfg(feature = "fjall")]
pub(crate) mod engine;

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// The file fjall writes last when it creates a database (its format version) and reads
/// first to decide between creating and recovering one.
pub const VERSION_FILE: &str = "version";

/// Data block compression, as fjall lays it out by level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FjallCompression {
    /// fjall's default: LZ4 from L2 down; L0 and L1, soon rewritten, stay uncompressed.
    Lz4,
    /// No block compression in any level.
    None,
}

/// fjall options plumb sets; everything else is fjall's default and recorded as such.
/// The keyspace options (memtable, block size, compression, compaction) are stored in
/// the database when it is created and reused when it is reopened, so a reopen with
/// other values is refused instead of silently running the stored ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct FjallOptions {
    /// fjall: memtable size in bytes before it is sealed and flushed to L0 (RocksDB's
    /// write_buffer_size; not checked on reopen: fjall keeps it private).
    #[arg(long = "fjall-max-memtable-size", default_value_t = 64 << 20)]
    pub max_memtable_size: u64,
    /// fjall: total size of the journals in bytes before the memtables holding the
    /// oldest one are flushed so it can go (RocksDB's max_total_wal_size; at least
    /// 64 MiB).
    #[arg(long = "fjall-max-journaling-size", default_value_t = 512 << 20)]
    pub max_journaling_size: u64,
    /// fjall: data block size in bytes (1 KiB to 1 MiB).
    #[arg(
        long = "fjall-block-size",
        id = "fjall_block_size",
        default_value_t = 4096
    )]
    #[serde(rename = "block_size")]
    pub block_size: u32,
    /// fjall: data block compression, lz4 (from L2 down, fjall's default) or none.
    #[arg(
        long = "fjall-compression",
        id = "fjall_compression",
        value_enum,
        default_value = "lz4"
    )]
    #[serde(rename = "compression")]
    pub compression: FjallCompression,
    /// fjall: L0 tables that start an L0 to L1 compaction (RocksDB's
    /// level0_file_num_compaction_trigger).
    #[arg(long = "fjall-l0-threshold", default_value_t = 4)]
    pub l0_threshold: u8,
    /// fjall: target size of a table file in bytes (RocksDB's target_file_size_base).
    #[arg(long = "fjall-table-target-size", default_value_t = 64 << 20)]
    pub table_target_size: u64,
    /// fjall: background threads for flushes and compactions (0 = fjall's default,
    /// the CPU count up to 4).
    #[arg(long = "fjall-worker-threads", default_value_t = 0)]
    pub worker_threads: u32,
    /// Every write is fsynced in the journal (fjall's PersistMode::SyncAll) before it
    /// returns. Without it each write is flushed from fjall's journal buffer to the OS
    /// (PersistMode::Buffer, one write(2) per op, as RocksDB's WAL): a process crash
    /// loses none, a power cut may lose the last ones. That is fjall's default
    /// (`manual_journal_persist = false`), which plumb sets explicitly.
    #[arg(skip)]
    pub sync: bool,
    /// Block cache bytes (from `--cache-size`; fjall's own default is 32 MiB).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
}

impl Default for FjallOptions {
    /// The defaults declared in the attributes above, read through clap so they are
    /// written once.
    fn default() -> Self {
        crate::options::defaults::<FjallOptions>()
    }
}

impl crate::engine::Registered for FjallOptions {
    const NAME: &'static str = "fjall";
    const TITLE: &'static str = "fjall";
    const NOTE: &'static str = "All keys live in one keyspace; fjall stores a keyspace's \
        options when the database is created, so reopening it with a different block size, \
        compression or compaction setting is refused.";
    type Flags = Self;
}

impl FjallOptions {
    /// Refuses values fjall would panic on (journal size, block size) or that measure
    /// nothing, naming the option, before anything is written.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.max_memtable_size < 64 << 10 {
            return Err(opt_err("max_memtable_size", "must be at least 65536 bytes"));
        }
        if self.max_journaling_size < 64 << 20 {
            return Err(opt_err(
                "max_journaling_size",
                "must be at least 64 MiB (fjall's minimum)",
            ));
        }
        if !(1 << 10..=1 << 20).contains(&self.block_size) {
            return Err(opt_err("block_size", "must be between 1 KiB and 1 MiB"));
        }
        if self.l0_threshold == 0 {
            return Err(opt_err("l0_threshold", "must be at least 1"));
        }
        if self.table_target_size < 1 << 20 {
            return Err(opt_err("table_target_size", "must be at least 1 MiB"));
        }
        if self.worker_threads > 256 {
            return Err(opt_err(
                "worker_threads",
                "must be between 0 (fjall's default) and 256",
            ));
        }
        Ok(())
    }

    /// The background threads fjall runs: the option, or fjall's own default (the CPU
    /// count up to 4), so the provenance records the number, not "0".
    pub fn effective_worker_threads(&self) -> usize {
        if self.worker_threads > 0 {
            self.worker_threads as usize
        } else {
            std::thread::available_parallelism()
                .map_or(1, usize::from)
                .min(4)
        }
    }

    /// Every option as provenance, with how each write reaches the journal.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        let persist = if self.sync { "sync_all" } else { "buffer" };
        v.push(("journal_persist".into(), persist.into()));
        v
    }
}

impl EngineKind for FjallOptions {
    fn name(&self) -> &'static str {
        "fjall"
    }
    fn capabilities(&self) -> Capabilities {
        // No `wal`: every write goes through fjall's journal (only a sorted bulk
        // ingestion bypasses it), so there is no put_no_wal. No compaction_stats:
        // fjall counts compactions, not their bytes.
        Capabilities {
            cache: true,
            lsm: true,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        // Synced: each write waits for fjall's PersistMode::SyncAll (fsync). Otherwise
        // OsBuffered: fjall's default flushes its journal buffer to the OS on every
        // write (Keyspace::insert/remove persist with PersistMode::Buffer unless
        // manual_journal_persist, which plumb leaves off).
        Durability::of_sync(self.sync)
    }
    crate::engine::takes_sync_and_cache!();
    fn validate(&self) -> Result<(), TargetError> {
        FjallOptions::validate(self)
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(VERSION_FILE)
    }
    crate::engine::feature_gated!(
        "fjall",
        crate::fjall::engine::fjall_version(),
        crate::fjall::engine::FjallTarget
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::EngineCommon;

    #[test]
    fn defaults_are_fjalls_and_an_empty_table_means_them() {
        let d = FjallOptions::default();
        assert_eq!(d.max_memtable_size, 64 << 20);
        assert_eq!(d.max_journaling_size, 512 << 20);
        assert_eq!(d.block_size, 4096);
        assert_eq!(d.compression, FjallCompression::Lz4);
        assert_eq!(d.l0_threshold, 4);
        assert_eq!(d.table_target_size, 64 << 20);
        assert_eq!(d.cache_size, DEFAULT_CACHE_SIZE);
        assert!(!d.sync);
        let from_empty: FjallOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(from_empty, d);
        d.validate().unwrap();
    }

    #[test]
    fn suite_keys_are_plain_and_flags_are_prefixed() {
        let o: FjallOptions =
            serde_json::from_str(r#"{"block_size": 8192, "compression": "none"}"#).unwrap();
        assert_eq!(o.block_size, 8192);
        assert_eq!(o.compression, FjallCompression::None);
        let e = serde_json::from_str::<FjallOptions>(r#"{"fjall_block_size": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("fjall_block_size"), "{e}");
        let flags: Vec<String> = crate::options::reference::<FjallOptions>()
            .into_iter()
            .map(|r| r.flag)
            .collect();
        assert!(flags.iter().all(|f| f.starts_with("--fjall-")), "{flags:?}");
        assert!(flags.contains(&"--fjall-block-size".to_string()));
    }

    #[test]
    fn common_options_and_validation() {
        let mut o = FjallOptions::default();
        o.apply_common(&EngineCommon {
            sync: true,
            cache_size: Some(5 << 20),
        })
        .unwrap();
        assert!(o.sync && o.cache_size == 5 << 20);
        assert_eq!(o.durability(), Durability::Synced);
        assert_eq!(FjallOptions::default().durability(), Durability::OsBuffered);
        let bad = FjallOptions {
            max_journaling_size: 1 << 20,
            ..FjallOptions::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("max_journaling_size"));
        let bad = FjallOptions {
            block_size: 512,
            ..FjallOptions::default()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("block_size"));
        assert_eq!(o.marker_file(), Some("version"));
        assert!(o.capabilities().cache && !o.capabilities().wal);
    }
}
