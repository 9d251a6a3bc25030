//! RocksDB's options as plumb sets them, with db_bench's names. One typed definition
//! serves the command line (`plumb kv --cache-size …`), suite files (`[target.options]`),
//! the stored provenance (its serde form) and the option reference (docs/options.md):
//! each default and each line of help is written once, in the attributes below.
//! It compiles without the `rocksdb` feature so a plan can name RocksDB options in a
//! build that cannot run them (and say so).

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;

/// Leveled or universal compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CompactionStyle {
    /// Leveled compaction (RocksDB's default).
    Leveled,
    /// Universal (tiered) compaction.
    Universal,
}

/// The block cache implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CacheType {
    /// The LRU block cache.
    Lru,
    /// The hyper clock cache (lock-free reads; the seeds' favourite).
    #[value(name = "hyperclock")]
    HyperClock,
}

/// Block compression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// No compression.
    None,
    /// LZ4.
    Lz4,
    /// Zstandard.
    Zstd,
}

macro_rules! display_as_value {
    ($($t:ty),+) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let v = clap::ValueEnum::to_possible_value(self).expect("no skipped variants");
                f.write_str(v.get_name())
            }
        }
    )+};
}
display_as_value!(CompactionStyle, CacheType, Compression);

/// RocksDB options plumb sets; everything not listed is RocksDB's default and is
/// recorded as such. Defaults follow tools/benchmark.sh where db_bench's own are
/// unhelpful (8 KiB blocks, 10-bit bloom filters), RocksDB's otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct RocksOptions {
    /// RocksDB: leveled or universal compaction.
    #[arg(
        long,
        alias = "compaction_style",
        value_enum,
        default_value = "leveled"
    )]
    pub compaction_style: CompactionStyle,
    /// Block cache capacity in bytes (0 = no block cache). On the command line:
    /// `--cache-size`, shared by every engine with a cache ([`crate::EngineCommon`]).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
    /// RocksDB: block cache implementation, lru or hyperclock.
    #[arg(long, alias = "cache_type", value_enum, default_value = "lru")]
    pub cache_type: CacheType,
    /// RocksDB: the hyper clock cache's estimated_entry_charge in bytes; unset, the
    /// block size, as db_bench's fixed_hyper_clock_cache (and its hyper_clock_cache in
    /// the 8.x releases the seeds ran) sizes the table; 0, RocksDB's auto-sized variant
    /// (AutoHyperClockCache).
    #[arg(long, alias = "estimated_entry_charge", value_name = "BYTES")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimated_entry_charge: Option<u64>,
    /// RocksDB: the block cache in 2^N shards (db_bench's cache_numshardbits), for
    /// either cache; -1, RocksDB's own choice from the capacity.
    #[arg(
        long,
        alias = "cache_numshardbits",
        default_value_t = -1,
        allow_negative_numbers = true
    )]
    #[serde(skip_serializing_if = "rocksdb_picks_shards")]
    pub cache_numshardbits: i32,
    /// RocksDB: O_DIRECT for user reads, so the OS page cache does not hide IO.
    #[arg(long, alias = "use_direct_reads")]
    pub use_direct_reads: bool,
    /// RocksDB: O_DIRECT for flush and compaction IO.
    #[arg(long, alias = "use_direct_io_for_flush_and_compaction")]
    pub use_direct_io_for_flush_and_compaction: bool,
    /// RocksDB: block compression, none, lz4 or zstd.
    #[arg(long, alias = "compression_type", value_enum, default_value = "none")]
    pub compression: Compression,
    /// RocksDB: no WAL for any write (fillseq never uses it).
    #[arg(long, alias = "disable_wal")]
    pub disable_wal: bool,
    /// fsync the WAL on every write. On the command line: `--sync`, shared by every
    /// engine ([`crate::EngineCommon`]).
    #[arg(skip)]
    pub sync: bool,
    /// RocksDB: bloom filter bits per key (0 = no filter).
    #[arg(long, alias = "bloom_bits", default_value_t = 10.0)]
    pub bloom_bits: f64,
    /// RocksDB: memtable size in bytes.
    #[arg(long, alias = "write_buffer_size", default_value_t = 64 << 20)]
    pub write_buffer_size: u64,
    /// RocksDB: flush + compaction threads.
    #[arg(long, alias = "max_background_jobs", default_value_t = 2)]
    pub max_background_jobs: i32,
    /// RocksDB: data block size in bytes.
    #[arg(long, alias = "block_size", default_value_t = 8192)]
    pub block_size: u64,
    /// RocksDB: an OPTIONS file (RocksDB writes one, OPTIONS-NNNNNN, in every database
    /// directory) whose DBOptions and default column family replace the options above;
    /// parsed by the linked release itself.
    #[arg(long, alias = "options_file", value_name = "PATH")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub options_file: Option<PathBuf>,
    /// RocksDB: any of its options as RocksDB's own string, applied last, e.g.
    /// "compaction_readahead_size=2097152;block_based_table_factory={block_size=16384}"
    /// (Speedb's own too, e.g. use_dynamic_delay=true). A misspelt name is an error.
    #[arg(
        long = "rocksdb-options",
        alias = "rocksdb_options",
        id = "rocksdb_option_string",
        value_name = "K=V;K=V"
    )]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_string: Option<String>,
}

impl Default for RocksOptions {
    /// The defaults declared in the attributes above, read through clap so they are
    /// written once.
    fn default() -> Self {
        crate::options::defaults::<RocksOptions>()
    }
}

/// Whether the shard count is left to RocksDB (-1), so runs recorded before the option
/// existed keep the same recorded options.
fn rocksdb_picks_shards(bits: &i32) -> bool {
    *bits < 0
}

/// What universal compaction may hold on disk at its peak, per byte of live data.
pub const UNIVERSAL_PEAK_SPACE_FACTOR: f64 = 3.0;

impl EngineKind for RocksOptions {
    fn name(&self) -> &'static str {
        "rocksdb"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            wal: true,
            native_multi_get: true,
            direct_io: true,
            cache: true,
            compaction_stats: true,
            lsm: true,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        if self.disable_wal {
            Durability::Unlogged
        } else {
            Durability::of_sync(self.sync)
        }
    }
    crate::engine::takes_sync_and_cache!();
    /// Universal compaction needs room for a full compaction's new copy of every file
    /// beside the old ones until it finishes (RocksDB issue 10533: seed 000 ran out of disk
    /// and cut its rows to 75%), on top of the size amplification it allows between
    /// compactions: three times the live data.
    fn peak_space_factor(&self) -> f64 {
        match self.compaction_style {
            CompactionStyle::Universal => UNIVERSAL_PEAK_SPACE_FACTOR,
            CompactionStyle::Leveled => crate::engine::DEFAULT_PEAK_SPACE_FACTOR,
        }
    }
    fn validate(&self) -> Result<(), TargetError> {
        RocksOptions::validate(self)
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some("CURRENT")
    }
    crate::engine::feature_gated!(
        "rocksdb",
        crate::rocks::ROCKSDB_VERSION.to_string(),
        crate::rocks::RocksTarget
    );
}

impl RocksOptions {
    /// Refuses values and combinations RocksDB would reject or that measure nothing,
    /// before anything is written.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.sync && self.disable_wal {
            return Err(opt_err(
                "sync",
                "sync (--sync) syncs the WAL, but disable_wal (--disable-wal) turns it off; \
                 drop one of them",
            ));
        }
        if !(self.bloom_bits >= 0.0 && self.bloom_bits <= 100.0) {
            return Err(opt_err("bloom_bits", "must be between 0 (off) and 100"));
        }
        if self.write_buffer_size < 64 << 10 {
            return Err(opt_err("write_buffer_size", "must be at least 65536 bytes"));
        }
        if !(1..=256).contains(&self.max_background_jobs) {
            return Err(opt_err("max_background_jobs", "must be between 1 and 256"));
        }
        if !(256..=(256 << 20)).contains(&self.block_size) {
            return Err(opt_err(
                "block_size",
                "must be between 256 bytes and 256 MiB",
            ));
        }
        if self.cache_size == 0 && self.cache_type == CacheType::HyperClock {
            return Err(opt_err(
                "cache_size",
                "the hyper clock cache needs a capacity > 0; use cache_type lru for no cache",
            ));
        }
        if !(-1..=19).contains(&self.cache_numshardbits) {
            return Err(opt_err(
                "cache_numshardbits",
                "must be between -1 (RocksDB's choice) and 19 (RocksDB caps a cache at 2^19 \
                 shards)",
            ));
        }
        if let Some(charge) = self.estimated_entry_charge {
            if self.cache_type != CacheType::HyperClock {
                return Err(opt_err(
                    "estimated_entry_charge",
                    "sizes the hyper clock cache only; add cache_type hyperclock or drop it",
                ));
            }
            if charge > self.cache_size {
                return Err(opt_err(
                    "estimated_entry_charge",
                    format!(
                        "{charge} bytes per entry exceeds the cache's {} bytes; give about \
                         the block size ({}), or 0 for the auto-sized cache",
                        self.cache_size, self.block_size
                    ),
                ));
            }
        }
        if let Some(f) = &self.options_file {
            if !f.is_file() {
                return Err(opt_err(
                    "options_file",
                    format!(
                        "{}: no such file; name an OPTIONS file, such as the OPTIONS-NNNNNN \
                         RocksDB writes in every database directory",
                        f.display()
                    ),
                ));
            }
        }
        if self
            .option_string
            .as_deref()
            .is_some_and(|s| s.contains('\0'))
        {
            return Err(opt_err("option_string", "contains a NUL byte"));
        }
        // The linked release parses both now, so a misspelt name stops the run before
        // anything is written.
        #[cfg(any(feature = "rocksdb", feature = "speedb"))]
        if self.options_file.is_some() || self.option_string.is_some() {
            self.to_raw()?;
        }
        Ok(())
    }

    /// The hyper clock cache's charge per entry as given to RocksDB: the block size
    /// unless set, so a run records and repeats the fixed-size cache db_bench ran.
    pub fn hyper_clock_charge(&self) -> u64 {
        self.estimated_entry_charge.unwrap_or(self.block_size)
    }

    /// Every option plumb sets, as recorded provenance (the serde form, flattened to
    /// strings for the store's option column).
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        if self.cache_type == CacheType::HyperClock && self.estimated_entry_charge.is_none() {
            v.push((
                "estimated_entry_charge".into(),
                self.hyper_clock_charge().to_string(),
            ));
        }
        v.push(("statistics".into(), "except_histogram_or_timers".into()));
        v
    }
}

impl crate::engine::Registered for RocksOptions {
    const NAME: &'static str = "rocksdb";
    const TITLE: &'static str = "RocksDB";
    const HEADING: &'static str = "RocksDB (and Speedb)";
    type Flags = Self;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_one_definition() {
        let d = RocksOptions::default();
        assert_eq!(d.cache_size, 1 << 30);
        assert_eq!(d.block_size, 8192);
        assert_eq!(d.compaction_style, CompactionStyle::Leveled);
        assert_eq!(d.bloom_bits, 10.0);
        // An empty table in a suite file means the same defaults.
        let from_empty: RocksOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(from_empty, d);
    }

    #[test]
    fn unknown_keys_and_bad_choices_are_refused() {
        let e = serde_json::from_str::<RocksOptions>(r#"{"cache_sise": 1}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cache_sise") && e.contains("cache_size"), "{e}");
        let e = serde_json::from_str::<RocksOptions>(r#"{"compaction_style": "tiered"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tiered") && e.contains("universal"), "{e}");
        assert_eq!(CacheType::HyperClock.to_string(), "hyperclock");
    }

    #[test]
    fn cache_shards_and_charges_are_checked_before_anything_runs() {
        let err = |o: RocksOptions| o.validate().unwrap_err().to_string();
        let e = err(RocksOptions {
            cache_numshardbits: 20,
            ..RocksOptions::default()
        });
        assert!(e.contains("cache_numshardbits"), "{e}");
        let e = err(RocksOptions {
            estimated_entry_charge: Some(4096),
            ..RocksOptions::default()
        });
        assert!(
            e.contains("estimated_entry_charge") && e.contains("hyperclock"),
            "{e}"
        );
        let hcc = RocksOptions {
            cache_type: CacheType::HyperClock,
            cache_size: 1 << 20,
            ..RocksOptions::default()
        };
        let e = err(RocksOptions {
            estimated_entry_charge: Some(2 << 20),
            ..hcc.clone()
        });
        assert!(e.contains("exceeds the cache"), "{e}");
        assert_eq!(hcc.hyper_clock_charge(), 8192, "the block size by default");
        let auto = RocksOptions {
            estimated_entry_charge: Some(0),
            ..hcc
        };
        assert_eq!(auto.hyper_clock_charge(), 0);
        // Left to RocksDB, the shard count is not recorded, as before it was an option.
        assert!(!RocksOptions::default()
            .describe()
            .iter()
            .any(|(k, _)| k == "cache_numshardbits"));
    }

    #[test]
    fn validation_names_the_option() {
        let o = RocksOptions {
            sync: true,
            disable_wal: true,
            ..RocksOptions::default()
        };
        assert!(o.validate().unwrap_err().to_string().contains("sync"));
    }
}
