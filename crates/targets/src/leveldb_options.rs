//! LevelDB's options as plumb sets them. Defaults match what plumb gives RocksDB where
//! both have the knob (64 MiB memtable and files, 8 KiB blocks, 10-bit bloom filters,
//! no compression), so the two LSMs are compared on their designs, not on defaults
//! that differ by 16×. `sync` and `cache_size` come from the engine-neutral flags.

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// LevelDB options plumb sets; everything else is LevelDB's default and recorded as such.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct LeveldbOptions {
    /// LevelDB: memtable size in bytes.
    #[arg(
        long = "leveldb-write-buffer-size",
        id = "leveldb_write_buffer_size",
        default_value_t = 64 << 20
    )]
    #[serde(rename = "write_buffer_size")]
    pub write_buffer_size: u64,
    /// LevelDB: target size of a table file in bytes (LevelDB's own default is 2 MiB).
    #[arg(long = "leveldb-max-file-size", default_value_t = 64 << 20)]
    pub max_file_size: u64,
    /// LevelDB: data block size in bytes.
    #[arg(
        long = "leveldb-block-size",
        id = "leveldb_block_size",
        default_value_t = 8192
    )]
    #[serde(rename = "block_size")]
    pub block_size: u64,
    /// LevelDB: bloom filter bits per key (0 = no filter).
    #[arg(
        long = "leveldb-bloom-bits",
        id = "leveldb_bloom_bits",
        default_value_t = 10
    )]
    #[serde(rename = "bloom_bits")]
    pub bloom_bits: u32,
    /// LevelDB: Snappy block compression (off by default, as plumb's RocksDB).
    #[arg(long = "leveldb-snappy")]
    pub snappy: bool,
    /// LevelDB: table files kept open.
    #[arg(long = "leveldb-max-open-files", default_value_t = 10000)]
    pub max_open_files: u32,
    /// fsync the log on every write (from `--sync`).
    #[arg(skip)]
    pub sync: bool,
    /// Block cache bytes (from `--cache-size`; 0 = LevelDB's own 8 MiB default).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
}

impl Default for LeveldbOptions {
    fn default() -> Self {
        crate::options::defaults::<LeveldbOptions>()
    }
}

impl LeveldbOptions {
    /// Refuses values LevelDB would clamp or that measure nothing, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.write_buffer_size < 64 << 10 {
            return Err(opt_err("write_buffer_size", "must be at least 65536 bytes"));
        }
        if !(1 << 20..=1 << 30).contains(&self.max_file_size) {
            return Err(opt_err("max_file_size", "must be between 1 MiB and 1 GiB"));
        }
        if !(1 << 10..=4 << 20).contains(&self.block_size) {
            return Err(opt_err("block_size", "must be between 1 KiB and 4 MiB"));
        }
        if self.bloom_bits > 100 {
            return Err(opt_err("bloom_bits", "must be between 0 (off) and 100"));
        }
        if !(64..=1 << 20).contains(&self.max_open_files) {
            return Err(opt_err("max_open_files", "must be between 64 and 1048576"));
        }
        Ok(())
    }

    /// Every option as provenance.
    pub fn describe(&self) -> Vec<(String, String)> {
        crate::options::as_strings(self)
    }
}

impl EngineKind for LeveldbOptions {
    fn name(&self) -> &'static str {
        "leveldb"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            cache: true,
            compaction_stats: true,
            lsm: true,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        Durability::of_sync(self.sync)
    }
    crate::engine::takes_sync_and_cache!();
    fn validate(&self) -> Result<(), TargetError> {
        LeveldbOptions::validate(self)
    }
    fn how_to_build(&self) -> String {
        "install libleveldb-dev (`bash scripts/setup.sh`) and build with `--features leveldb`"
            .into()
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some("CURRENT")
    }
    crate::engine::feature_gated!(
        "leveldb",
        crate::leveldb::leveldb_version(),
        crate::leveldb::LeveldbTarget
    );
}

impl crate::engine::Registered for LeveldbOptions {
    const NAME: &'static str = "leveldb";
    const TITLE: &'static str = "LevelDB";
    type Flags = Self;
}
