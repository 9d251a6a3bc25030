//! WiredTiger's options as plumb sets them (the engine under MongoDB; Debian 12 ships
//! 3.2.1). Writes go through WiredTiger's log; `sync` and `cache_size` come from the
//! engine-neutral `--sync` and `--cache-size`.

use crate::engine::{opt_err, Capabilities, Durability, EngineKind};
use crate::options::DEFAULT_CACHE_SIZE;
use plumb_core::TargetError;
use serde::{Deserialize, Serialize};

/// The file WiredTiger creates in its home directory.
pub const MARKER_FILE: &str = "WiredTiger";

/// WiredTiger options plumb sets; everything else is WiredTiger's default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, clap::Args)]
#[serde(default, deny_unknown_fields)]
pub struct WiredtigerOptions {
    /// WiredTiger: seconds between background checkpoints (0 = only the ones plumb's
    /// flush step asks for).
    #[arg(long = "wiredtiger-checkpoint-wait", default_value_t = 60)]
    pub checkpoint_wait: u64,
    /// WiredTiger: O_DIRECT for data files (direct_io=[data]), so the OS page cache does
    /// not hide reads.
    #[arg(long = "wiredtiger-direct-io", id = "wiredtiger_direct_io")]
    #[serde(rename = "direct_io")]
    pub direct_io: bool,
    /// Flush the log at every commit (from `--sync`): transaction_sync method fsync
    /// instead of none (written to the OS, not flushed).
    #[arg(skip)]
    pub sync: bool,
    /// Cache bytes (from `--cache-size`).
    #[arg(skip = DEFAULT_CACHE_SIZE)]
    pub cache_size: u64,
}

impl Default for WiredtigerOptions {
    fn default() -> Self {
        crate::options::defaults::<WiredtigerOptions>()
    }
}

impl WiredtigerOptions {
    /// Refuses values WiredTiger would reject at open, naming the option.
    pub fn validate(&self) -> Result<(), TargetError> {
        if self.cache_size < 1 << 20 {
            return Err(opt_err(
                "cache_size",
                "WiredTiger needs a cache of at least 1048576 bytes (1 MiB)",
            ));
        }
        if self.checkpoint_wait > 100_000 {
            return Err(opt_err("checkpoint_wait", "at most 100000 seconds"));
        }
        Ok(())
    }

    /// The `wiredtiger_open` configuration string these options make.
    pub fn config(&self) -> String {
        let mut c = format!(
            "create,cache_size={},log=(enabled=true),transaction_sync=(enabled=true,method={}),\
             checkpoint=(wait={}),statistics=(fast)",
            self.cache_size,
            if self.sync { "fsync" } else { "none" },
            self.checkpoint_wait
        );
        if self.direct_io {
            c.push_str(",direct_io=[data]");
        }
        c
    }

    /// Every option as provenance, with the configuration WiredTiger is given.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut v = crate::options::as_strings(self);
        v.push(("config".into(), self.config()));
        v
    }
}

impl EngineKind for WiredtigerOptions {
    fn name(&self) -> &'static str {
        "wiredtiger"
    }
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            direct_io: true,
            cache: true,
            compaction_stats: true,
            ..Capabilities::FILE_ENGINE
        }
    }
    fn durability(&self) -> Durability {
        Durability::of_sync(self.sync)
    }
    crate::engine::takes_sync_and_cache!();
    fn validate(&self) -> Result<(), TargetError> {
        WiredtigerOptions::validate(self)
    }
    fn how_to_build(&self) -> String {
        "install libwiredtiger-dev (`bash scripts/setup.sh`) and build with `--features \
         wiredtiger`"
            .into()
    }
    fn marker_file(&self) -> Option<&'static str> {
        Some(MARKER_FILE)
    }
    crate::engine::feature_gated!(
        "wiredtiger",
        crate::wiredtiger::wiredtiger_version(),
        crate::wiredtiger::WiredtigerTarget
    );
}

impl crate::engine::Registered for WiredtigerOptions {
    const NAME: &'static str = "wiredtiger";
    const TITLE: &'static str = "WiredTiger";
    const NOTE: &'static str = "One table with raw byte keys and values; each op is its own transaction through WiredTiger's log.";
    type Flags = Self;
}
