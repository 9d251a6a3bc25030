//! What RocksDB says about itself, parsed: the LSM account cpp/rocks_admin.cc reads
//! (the "rocksdb.cfstats" map, level metadata and block cache tickers) and the OPTIONS
//! file RocksDB writes on every open (the options in force, defaults included).
//! Plain text in, plain values out, so both parse and are tested in any build; the
//! key names are those of the releases plumb builds against (write-stall keys were
//! renamed in 8.5, both spellings are read).

use plumb_core::{CacheLookups, LevelAccount, LsmAccount, StallLimits, Stalls};
use std::collections::BTreeMap;
use std::path::Path;

/// Bytes in RocksDB's "GB" (its internal_stats divide by 1024³).
const GIB: f64 = (1u64 << 30) as f64;

/// RocksDB's PerfContext report (`PerfContext::ToString`: `name = value, ` pairs, then
/// by-level counters as `name = 3@level0, 5@level1, `) as (name, value) pairs, zeros
/// and the by-level counters left out.
pub fn perf_report(text: &str) -> Vec<(String, u64)> {
    text.split(", ")
        .filter_map(|pair| {
            let (k, v) = pair.split_once(" = ")?;
            let v: u64 = v.trim().parse().ok()?;
            (v > 0).then(|| (k.trim().to_string(), v))
        })
        .collect()
}

/// The LSM account from the shim's `key=value` lines.
pub fn parse_lsm(text: &str) -> LsmAccount {
    let map: BTreeMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim(), v.trim()))
        .collect();
    let num = |k: &str| map.get(k).and_then(|v| v.parse::<f64>().ok());
    let count = |names: &[&str]| {
        names
            .iter()
            .find_map(|k| num(k))
            .map_or(0, |v| v.max(0.0) as u64)
    };
    let stalls = Stalls {
        l0_delays: count(&["l0-file-count-limit-delays", "io_stalls.level0_slowdown"]),
        l0_stops: count(&["l0-file-count-limit-stops", "io_stalls.level0_numfiles"]),
        pending_delays: count(&[
            "pending-compaction-bytes-delays",
            "io_stalls.slowdown_for_pending_compaction_bytes",
        ]),
        pending_stops: count(&[
            "pending-compaction-bytes-stops",
            "io_stalls.stop_for_pending_compaction_bytes",
        ]),
        memtable_delays: count(&["memtable-limit-delays", "io_stalls.memtable_slowdown"]),
        memtable_stops: count(&["memtable-limit-stops", "io_stalls.memtable_compaction"]),
    };
    let mut levels = Vec::new();
    for level in 0u32.. {
        let meta = |s: &str| num(&format!("meta.L{level}.{s}"));
        let comp = |s: &str| num(&format!("compaction.L{level}.{s}"));
        let (Some(files), Some(bytes)) = (meta("files"), meta("bytes")) else {
            break;
        };
        let l = LevelAccount {
            level,
            files: files as u64,
            bytes: bytes as u64,
            score: comp("Score"),
            read_bytes: comp("ReadGB").map_or(0, |g| (g * GIB).round() as u64),
            write_bytes: comp("WriteGB").map_or(0, |g| (g * GIB).round() as u64),
            comp_secs: comp("CompSec").unwrap_or(0.0),
        };
        if l.files > 0 || l.write_bytes > 0 || l.comp_secs > 0.0 {
            levels.push(l);
        }
    }
    let ticker = |s: &str| num(&format!("ticker.block.cache.{s}")).map(|v| v as u64);
    let cache = (|| {
        Some(CacheLookups {
            data_hit: ticker("data.hit")?,
            data_miss: ticker("data.miss")?,
            index_hit: ticker("index.hit")?,
            index_miss: ticker("index.miss")?,
            filter_hit: ticker("filter.hit")?,
            filter_miss: ticker("filter.miss")?,
        })
    })();
    LsmAccount {
        stalls,
        stall_us: num("ticker.stall.micros").map_or(0, |v| v as u64),
        comp_secs: num("compaction.Sum.CompSec").unwrap_or(0.0),
        // RocksDB's map names the CPU seconds "CompMergeCPU".
        comp_cpu_secs: num("compaction.Sum.CompMergeCPU").unwrap_or(0.0),
        comp_count: num("compaction.Sum.CompCount").map_or(0, |v| v as u64),
        levels,
        cache,
        // Not in the shim's text: read from RocksDB's properties by the caller.
        memtable_entries: None,
        // A step's, from its series of samples (plumb_core::lsm::stall_us_by_cause).
        stall_us_by_cause: None,
    }
}

/// The limits at which RocksDB delays or stops writers (its column family's
/// RecalculateWriteStallConditions), as the OPTIONS file holds them, so each second's
/// stall time can be given to the limits that were past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallThresholds {
    l0_slowdown: u64,
    l0_stop: u64,
    soft_pending: u64,
    hard_pending: u64,
    max_write_buffers: u64,
    /// RocksDB stalls on L0 files and pending bytes only while it compacts on its own.
    auto_compactions: bool,
}

impl StallThresholds {
    /// The thresholds from [`effective_options`]' pairs; `None` when one is missing.
    pub fn from_options(opts: &[(String, String)]) -> Option<StallThresholds> {
        let get = |k: &str| {
            opts.iter()
                .find(|(name, _)| name == &format!("effective.cf.{k}"))
                .and_then(|(_, v)| v.parse::<u64>().ok())
        };
        Some(StallThresholds {
            l0_slowdown: get("level0_slowdown_writes_trigger")?,
            l0_stop: get("level0_stop_writes_trigger")?,
            soft_pending: get("soft_pending_compaction_bytes_limit")?,
            hard_pending: get("hard_pending_compaction_bytes_limit")?,
            max_write_buffers: get("max_write_buffer_number")?,
            auto_compactions: opts
                .iter()
                .find(|(name, _)| name == "effective.cf.disable_auto_compactions")
                .is_none_or(|(_, v)| v != "true"),
        })
    }

    /// Which limits `l0` files, `imm` immutable memtables waiting to flush and
    /// `pending` compaction bytes are at or past: RocksDB's conditions for a delay or
    /// a stop (a memtable delay only with more than 3 write buffers; a pending-bytes
    /// limit of 0 is off; neither L0 nor pending bytes with auto compactions off).
    pub fn past(&self, l0: u64, imm: u64, pending: u64) -> StallLimits {
        let m = self.max_write_buffers;
        StallLimits {
            l0: self.auto_compactions && l0 >= self.l0_slowdown.min(self.l0_stop),
            memtable: imm >= m || (m > 3 && imm + 1 >= m),
            pending: self.auto_compactions
                && ((self.soft_pending > 0 && pending >= self.soft_pending)
                    || (self.hard_pending > 0 && pending >= self.hard_pending)),
        }
    }
}

/// The newest OPTIONS file RocksDB wrote in `dir` (OPTIONS-NNNNNN, highest number).
pub fn newest_options_file(dir: &Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let n: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, p)| p)
}

/// The options in force as RocksDB wrote them in `dir`'s newest OPTIONS file, as
/// `effective.<section>.<option>` pairs: `db` (DBOptions), `cf` (the default column
/// family's CFOptions), `table` (its block-based table options), `version` (the
/// release that wrote it); another column family's sections carry its name
/// (`cf.<name>`). Empty when there is no file.
pub fn effective_options(dir: &Path) -> Vec<(String, String)> {
    newest_options_file(dir)
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map_or_else(Vec::new, |t| parse_options_file(&t))
}

/// [`effective_options`] of an OPTIONS file's text.
pub fn parse_options_file(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(head) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = section_name(head);
            continue;
        }
        if let (Some(s), Some((k, v))) = (&section, line.split_once('=')) {
            out.push((format!("effective.{s}.{}", k.trim()), v.trim().to_string()));
        }
    }
    out
}

/// `DBOptions` → db, `CFOptions "default"` → cf, `TableOptions/BlockBasedTable
/// "default"` → table, `Version` → version; another family's name is appended.
fn section_name(head: &str) -> Option<String> {
    let (kind, cf) = match head.split_once(' ') {
        Some((k, n)) => (k, Some(n.trim().trim_matches('"'))),
        None => (head, None),
    };
    let base = match kind {
        "Version" => "version",
        "DBOptions" => "db",
        "CFOptions" => "cf",
        k if k.starts_with("TableOptions/") => "table",
        _ => return None,
    };
    Some(match cf {
        Some(n) if n != "default" => format!("{base}.{n}"),
        _ => base.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perf_context_report_becomes_named_counts() {
        let text = "user_key_comparison_count = 12, block_cache_hit_count = 0, \
                    block_read_time = 3400, bloom_filter_useful = 3@level0, 5@level1, \
                    get_from_memtable_count = 2, ";
        assert_eq!(
            perf_report(text),
            vec![
                ("user_key_comparison_count".to_string(), 12),
                ("block_read_time".to_string(), 3400),
                ("get_from_memtable_count".to_string(), 2),
            ]
        );
    }

    /// The shape of RocksDB 8.5+'s output (the "cfstats" map, as the shim prints it).
    const LSM_85: &str = "\
compaction.L0.CompCount=3.000000
compaction.L0.CompSec=0.500000
compaction.L0.NumFiles=2.000000
compaction.L0.ReadGB=0.000000
compaction.L0.Score=0.500000
compaction.L0.WriteGB=0.125000
compaction.L1.CompSec=1.250000
compaction.L1.ReadGB=0.250000
compaction.L1.Score=1.100000
compaction.L1.WriteGB=0.240000
compaction.Sum.CompMergeCPU=1.500000
compaction.Sum.CompCount=5.000000
compaction.Sum.CompSec=1.750000
l0-file-count-limit-delays=4
l0-file-count-limit-stops=1
memtable-limit-delays=0
memtable-limit-stops=2
pending-compaction-bytes-delays=3
pending-compaction-bytes-stops=0
total-delays=7
meta.L0.files=2
meta.L0.bytes=1000
meta.L1.files=5
meta.L1.bytes=9000
meta.L2.files=0
meta.L2.bytes=0
ticker.block.cache.data.hit=100
ticker.block.cache.data.miss=7
ticker.block.cache.index.hit=50
ticker.block.cache.index.miss=1
ticker.block.cache.filter.hit=40
ticker.block.cache.filter.miss=2
ticker.stall.micros=12345
";

    #[test]
    fn the_account_reads_every_figure() {
        let a = parse_lsm(LSM_85);
        assert_eq!(
            a.stalls,
            Stalls {
                l0_delays: 4,
                l0_stops: 1,
                pending_delays: 3,
                pending_stops: 0,
                memtable_delays: 0,
                memtable_stops: 2,
            }
        );
        assert_eq!(a.stall_us, 12345);
        assert_eq!((a.comp_secs, a.comp_cpu_secs, a.comp_count), (1.75, 1.5, 5));
        // L2 is empty and never compacted into: left out.
        assert_eq!(a.levels.len(), 2);
        let l1 = a.levels[1];
        assert_eq!((l1.level, l1.files, l1.bytes), (1, 5, 9000));
        assert_eq!(l1.read_bytes, 1 << 28);
        assert_eq!(l1.score, Some(1.1));
        assert_eq!(a.levels[0].write_bytes, 1 << 27);
        let c = a.cache.unwrap();
        assert_eq!((c.data_hit, c.data_miss, c.filter_miss), (100, 7, 2));
    }

    #[test]
    fn stall_limits_are_rocksdbs_conditions_for_a_delay_or_a_stop() {
        let opts: Vec<(String, String)> = [
            ("level0_slowdown_writes_trigger", "20"),
            ("level0_stop_writes_trigger", "36"),
            ("soft_pending_compaction_bytes_limit", "1000"),
            ("hard_pending_compaction_bytes_limit", "0"),
            ("max_write_buffer_number", "4"),
        ]
        .iter()
        .map(|(k, v)| (format!("effective.cf.{k}"), v.to_string()))
        .collect();
        let t = StallThresholds::from_options(&opts).unwrap();
        assert_eq!(t.past(19, 2, 999), StallLimits::default());
        let all = StallLimits {
            l0: true,
            memtable: true,
            pending: true,
        };
        // 4 write buffers: 3 waiting to flush delay writers.
        assert_eq!(t.past(20, 3, 1000), all);
        // A hard limit of 0 is off; the soft one still counts.
        assert!(t.past(0, 0, u64::MAX).pending);
        // With 2 write buffers (the default) only a full set stops writers.
        let two: Vec<_> = opts
            .iter()
            .map(|(k, v)| {
                let v = if k.ends_with("max_write_buffer_number") {
                    "2"
                } else {
                    v
                };
                (k.clone(), v.to_string())
            })
            .collect();
        let t2 = StallThresholds::from_options(&two).unwrap();
        assert!(!t2.past(0, 1, 0).memtable && t2.past(0, 2, 0).memtable);
        assert_eq!(StallThresholds::from_options(&opts[1..]), None);
        // Without auto compactions RocksDB never stalls on L0 files or pending bytes.
        let mut off = opts.clone();
        off.push((
            "effective.cf.disable_auto_compactions".into(),
            "true".into(),
        ));
        let t3 = StallThresholds::from_options(&off).unwrap();
        assert_eq!(
            t3.past(100, 3, u64::MAX),
            StallLimits {
                memtable: true,
                ..StallLimits::default()
            }
        );
    }

    #[test]
    fn releases_before_8_5_name_stalls_otherwise() {
        let old = "io_stalls.level0_slowdown=6\nio_stalls.level0_numfiles=2\n\
                   io_stalls.slowdown_for_pending_compaction_bytes=1\n\
                   io_stalls.stop_for_pending_compaction_bytes=5\n\
                   io_stalls.memtable_slowdown=3\nio_stalls.memtable_compaction=4\n";
        let s = parse_lsm(old).stalls;
        assert_eq!(
            (
                s.l0_delays,
                s.l0_stops,
                s.pending_delays,
                s.pending_stops,
                s.memtable_delays,
                s.memtable_stops
            ),
            (6, 2, 1, 5, 3, 4)
        );
        // Nothing known: zero counts, no cache, no levels.
        let none = parse_lsm("");
        assert_eq!(none.stalls.total(), 0);
        assert!(none.cache.is_none() && none.levels.is_empty());
    }

    #[test]
    fn options_files_flatten_by_section() {
        let text = r#"
# This is a RocksDB option file.
[Version]
  rocksdb_version=8.6.7
  options_file_version=1.1

[DBOptions]
  compaction_readahead_size=2097152
  max_background_jobs=2

[CFOptions "default"]
  write_buffer_size=67108864

[TableOptions/BlockBasedTable "default"]
  block_size=8192

[CFOptions "other"]
  write_buffer_size=1
"#;
        let o: BTreeMap<String, String> = parse_options_file(text).into_iter().collect();
        assert_eq!(o["effective.version.rocksdb_version"], "8.6.7");
        assert_eq!(o["effective.db.compaction_readahead_size"], "2097152");
        assert_eq!(o["effective.cf.write_buffer_size"], "67108864");
        assert_eq!(o["effective.table.block_size"], "8192");
        assert_eq!(o["effective.cf.other.write_buffer_size"], "1");
        assert_eq!(o.len(), 7);
    }

    #[test]
    fn the_newest_options_file_is_read() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("OPTIONS-000005"), "[DBOptions]\n a=old\n").unwrap();
        std::fs::write(d.path().join("OPTIONS-000012"), "[DBOptions]\n a=new\n").unwrap();
        std::fs::write(
            d.path().join("OPTIONS-000013.dbtmp"),
            "[DBOptions]\n a=tmp\n",
        )
        .unwrap();
        assert_eq!(
            effective_options(d.path()),
            vec![("effective.db.a".to_string(), "new".to_string())]
        );
        assert!(effective_options(&d.path().join("absent")).is_empty());
    }
}
