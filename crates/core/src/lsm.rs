//! The LSM's own account of a step: why writers stalled, what compaction cost in time,
//! CPU and bytes per level, the tree's shape, and how the block cache served each kind
//! of block. The device and the process say what a step cost; this says which part of
//! the engine spent it (seed 000 looks at the LSM's shape after each state, seed 001
//! at compaction per release).
//!
//! An engine gives a cumulative [`LsmAccount`] at an instant; the runner keeps
//! `end.since(&start)` for a step: counters become the step's deltas, the shape stays
//! the one at the step's end.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Write stalls by cause and kind, counted by the engine. A delay slows writers to the
/// engine's delayed write rate; a stop blocks them. RocksDB counts the events by
/// cause but keeps their time only in total ([`LsmAccount::stall_us`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stalls {
    /// Delays because L0 reached level0_slowdown_writes_trigger files.
    pub l0_delays: u64,
    /// Stops because L0 reached level0_stop_writes_trigger files.
    pub l0_stops: u64,
    /// Delays because pending compaction bytes passed the soft limit.
    pub pending_delays: u64,
    /// Stops because pending compaction bytes passed the hard limit.
    pub pending_stops: u64,
    /// Delays because of too many immutable memtables waiting to flush.
    pub memtable_delays: u64,
    /// Stops because of too many memtables waiting to flush.
    pub memtable_stops: u64,
}

impl Stalls {
    fn since(&self, e: &Stalls) -> Stalls {
        Stalls {
            l0_delays: self.l0_delays.saturating_sub(e.l0_delays),
            l0_stops: self.l0_stops.saturating_sub(e.l0_stops),
            pending_delays: self.pending_delays.saturating_sub(e.pending_delays),
            pending_stops: self.pending_stops.saturating_sub(e.pending_stops),
            memtable_delays: self.memtable_delays.saturating_sub(e.memtable_delays),
            memtable_stops: self.memtable_stops.saturating_sub(e.memtable_stops),
        }
    }
    /// Every stall event, delays and stops of every cause.
    pub fn total(&self) -> u64 {
        self.l0_delays
            + self.l0_stops
            + self.pending_delays
            + self.pending_stops
            + self.memtable_delays
            + self.memtable_stops
    }
}

/// One level of the tree: its shape (a gauge) and what compaction into it cost
/// (counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelAccount {
    /// Level number (0 is L0).
    pub level: u32,
    /// Live files in the level.
    pub files: u64,
    /// Bytes of the level's live files.
    pub bytes: u64,
    /// The engine's compaction score (≥ 1 means it wants compacting); `None` when
    /// the engine gives none for the level.
    pub score: Option<f64>,
    /// Bytes compaction read to write into this level.
    pub read_bytes: u64,
    /// Bytes compaction (and, for L0, flush) wrote into this level.
    pub write_bytes: u64,
    /// Wall seconds of the compactions that wrote into this level.
    pub comp_secs: f64,
}

/// Block cache lookups by block type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheLookups {
    /// Data block hits.
    pub data_hit: u64,
    /// Data block misses (each one a read from the file).
    pub data_miss: u64,
    /// Index block hits.
    pub index_hit: u64,
    /// Index block misses.
    pub index_miss: u64,
    /// Filter block hits.
    pub filter_hit: u64,
    /// Filter block misses.
    pub filter_miss: u64,
}

impl CacheLookups {
    fn since(&self, e: &CacheLookups) -> CacheLookups {
        CacheLookups {
            data_hit: self.data_hit.saturating_sub(e.data_hit),
            data_miss: self.data_miss.saturating_sub(e.data_miss),
            index_hit: self.index_hit.saturating_sub(e.index_hit),
            index_miss: self.index_miss.saturating_sub(e.index_miss),
            filter_hit: self.filter_hit.saturating_sub(e.filter_hit),
            filter_miss: self.filter_miss.saturating_sub(e.filter_miss),
        }
    }
    /// Misses of every block type.
    pub fn misses(&self) -> u64 {
        self.data_miss + self.index_miss + self.filter_miss
    }
    /// Hits of every block type.
    pub fn hits(&self) -> u64 {
        self.data_hit + self.index_hit + self.filter_hit
    }
}

/// The write-stall limits an engine was at or past when read, a gauge beside its
/// counters. RocksDB (and Speedb) count stalls by cause but keep their time only in
/// total, so plumb splits a step's stall time by cause from which limits were past
/// around each second ([`stall_us_by_cause`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StallLimits {
    /// L0 files at level0_slowdown_writes_trigger (or its stop trigger) or past it.
    pub l0: bool,
    /// Immutable memtables waiting to flush at the count that delays or stops writes.
    pub memtable: bool,
    /// Pending compaction bytes at the soft (or hard) limit or past it.
    pub pending: bool,
}

impl StallLimits {
    /// The causes past, by db_bench's names for them.
    fn causes(self) -> Vec<&'static str> {
        [
            (self.l0, STALL_L0),
            (self.memtable, STALL_MEMTABLE),
            (self.pending, STALL_PENDING),
        ]
        .into_iter()
        .filter_map(|(past, name)| past.then_some(name))
        .collect()
    }
}

/// db_bench's name of the L0 cause (its `l0-file-count-limit-delays` and `-stops`).
pub const STALL_L0: &str = "l0-file-count-limit";
/// db_bench's name of the memtable cause.
pub const STALL_MEMTABLE: &str = "memtable-limit";
/// db_bench's name of the pending compaction bytes cause.
pub const STALL_PENDING: &str = "pending-compaction-bytes";
/// Stall time in a second when no limit was past at either end of it.
pub const STALL_UNATTRIBUTED: &str = "unattributed";

/// A step's stall time by cause, from its series of (stall µs so far, limits past)
/// samples a second apart: each second's stall time goes to the limits past at its
/// start or its end, in equal shares, and to [`STALL_UNATTRIBUTED`] when none was (a
/// stall that began and ended between two samples). An attribution, not the engine's
/// own split, which it does not keep. `None` when a sample lacks either figure (an
/// engine without them).
pub fn stall_us_by_cause(
    samples: impl IntoIterator<Item = (Option<u64>, Option<StallLimits>)>,
) -> Option<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    let mut prev: Option<(u64, StallLimits)> = None;
    for (us, limits) in samples {
        let now = (us?, limits?);
        if let Some((was_us, was)) = prev {
            let d = now.0.saturating_sub(was_us);
            if d > 0 {
                let both = StallLimits {
                    l0: was.l0 || now.1.l0,
                    memtable: was.memtable || now.1.memtable,
                    pending: was.pending || now.1.pending,
                };
                let mut causes = both.causes();
                if causes.is_empty() {
                    causes.push(STALL_UNATTRIBUTED);
                }
                let n = causes.len() as u64;
                for (i, c) in causes.into_iter().enumerate() {
                    // The remainder to the first, so the shares sum to the second's time.
                    let share = d / n + if i == 0 { d % n } else { 0 };
                    *out.entry(c.to_string()).or_insert(0) += share;
                }
            }
        }
        prev = Some(now);
    }
    Some(out)
}

/// The LSM's own account: cumulative counters and the shape at one instant, or (from
/// [`LsmAccount::since`]) a step's counters and its end shape.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LsmAccount {
    /// Write stalls by cause.
    pub stalls: Stalls,
    /// Microseconds writers were stalled, every cause together.
    pub stall_us: u64,
    /// Wall seconds of compaction (the sum over compactions: two at once count twice).
    pub comp_secs: f64,
    /// CPU seconds of compaction threads.
    pub comp_cpu_secs: f64,
    /// Compactions run.
    pub comp_count: u64,
    /// Per level, L0 first; levels with no files and no compaction are left out.
    pub levels: Vec<LevelAccount>,
    /// Block cache lookups; `None` without a block cache or statistics.
    pub cache: Option<CacheLookups>,
    /// Entries in the memtables (the active one and those waiting to flush), a gauge
    /// like the levels' files; `None` when the engine gives none, and in runs stored
    /// before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memtable_entries: Option<u64>,
    /// The step's stall time by cause, attributed second by second
    /// ([`stall_us_by_cause`]); `None` for an instant's account, from an engine
    /// without stall limits, and in runs stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_us_by_cause: Option<BTreeMap<String, u64>>,
}

impl LsmAccount {
    /// What happened since `earlier` (counters subtracted, saturating) with the shape
    /// (files, bytes, score) as it is now.
    pub fn since(&self, earlier: &LsmAccount) -> LsmAccount {
        let levels = self
            .levels
            .iter()
            .map(
                |l| match earlier.levels.iter().find(|e| e.level == l.level) {
                    Some(e) => LevelAccount {
                        read_bytes: l.read_bytes.saturating_sub(e.read_bytes),
                        write_bytes: l.write_bytes.saturating_sub(e.write_bytes),
                        comp_secs: (l.comp_secs - e.comp_secs).max(0.0),
                        ..*l
                    },
                    None => *l,
                },
            )
            .collect();
        LsmAccount {
            stalls: self.stalls.since(&earlier.stalls),
            stall_us: self.stall_us.saturating_sub(earlier.stall_us),
            comp_secs: (self.comp_secs - earlier.comp_secs).max(0.0),
            comp_cpu_secs: (self.comp_cpu_secs - earlier.comp_cpu_secs).max(0.0),
            comp_count: self.comp_count.saturating_sub(earlier.comp_count),
            levels,
            cache: match (self.cache, earlier.cache) {
                (Some(a), Some(b)) => Some(a.since(&b)),
                (a, _) => a,
            },
            memtable_entries: self.memtable_entries,
            stall_us_by_cause: None,
        }
    }

    /// The tree's shape now: what a read passes through.
    pub fn shape(&self) -> LsmShape {
        LsmShape {
            memtable_entries: self.memtable_entries,
            levels: self
                .levels
                .iter()
                .filter(|l| l.files > 0)
                .map(|l| LevelShape {
                    level: l.level,
                    files: l.files,
                    bytes: l.bytes,
                })
                .collect(),
        }
    }

    /// Bytes compaction read, every level.
    pub fn comp_read_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.read_bytes).sum()
    }

    /// Bytes written into every level (flush into L0 included).
    pub fn write_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.write_bytes).sum()
    }
}

/// One level of an [`LsmShape`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LevelShape {
    /// Level number (0 is L0).
    pub level: u32,
    /// Live files in the level.
    pub files: u64,
    /// Bytes of the level's live files.
    pub bytes: u64,
}

/// The tree's shape at one instant, what a point read passes through: the memtables'
/// entries and each level's files and bytes (levels without files left out). Stored
/// at each measured step's start (`StepSummary::lsm_start`), where flushes and
/// compactions still running from the step before leave it different from run to run
/// unless the engine was settled first (`plumb kv --settle`, which `plumb icount`
/// turns on).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LsmShape {
    /// Entries in the memtables; `None` when the engine gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memtable_entries: Option<u64>,
    /// Per level with files, L0 first.
    #[serde(default)]
    pub levels: Vec<LevelShape>,
}

/// Relative difference in a level's bytes within which two shapes are the same tree:
/// identical runs write SST files a few bytes apart (each file's properties hold its
/// creation time and the session that wrote it), never 1% apart.
pub const SHAPE_BYTES_TOLERANCE: f64 = 0.01;

impl LsmShape {
    /// Whether `other` is the same tree: the same memtable entries (where both give
    /// them), the same levels with the same files, each level's bytes within
    /// [`SHAPE_BYTES_TOLERANCE`].
    pub fn same_as(&self, other: &LsmShape) -> bool {
        let memtable = match (self.memtable_entries, other.memtable_entries) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        memtable
            && self.levels.len() == other.levels.len()
            && self.levels.iter().zip(&other.levels).all(|(a, b)| {
                let (x, y) = (a.bytes as f64, b.bytes as f64);
                a.level == b.level
                    && a.files == b.files
                    && (x - y).abs() <= SHAPE_BYTES_TOLERANCE * x.max(y)
            })
    }

    /// One line: `memtable 0 entries, L0 1 file 2.1 MiB, L1 3 files 6.0 MiB`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(n) = self.memtable_entries {
            parts.push(format!("memtable {n} entries"));
        }
        for l in &self.levels {
            parts.push(format!(
                "L{} {} file{} {:.1} MiB",
                l.level,
                l.files,
                if l.files == 1 { "" } else { "s" },
                l.bytes as f64 / (1u64 << 20) as f64
            ));
        }
        if self.levels.is_empty() {
            parts.push("no files".into());
        }
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(level: u32, files: u64, read: u64, write: u64, secs: f64) -> LevelAccount {
        LevelAccount {
            level,
            files,
            bytes: files << 20,
            score: Some(0.5),
            read_bytes: read,
            write_bytes: write,
            comp_secs: secs,
        }
    }

    #[test]
    fn each_seconds_stall_time_goes_to_the_limits_past_around_it() {
        let none = StallLimits::default();
        let l0 = StallLimits { l0: true, ..none };
        let both = StallLimits {
            l0: true,
            pending: true,
            ..none
        };
        let got = stall_us_by_cause([
            (Some(0), Some(none)),
            // L0 past at this second's end: its 1000 µs are L0's.
            (Some(1000), Some(l0)),
            // Still past at the start, pending too at the end: 501 split, the odd µs
            // to the first cause.
            (Some(1501), Some(both)),
            // No stall time: nothing given, whatever is past.
            (Some(1501), Some(both)),
            // Past at the start only: still the second's causes.
            (Some(1701), Some(none)),
            // Nothing past at either end: unattributed.
            (Some(1711), Some(none)),
        ])
        .unwrap();
        let want: BTreeMap<String, u64> = [
            (STALL_L0, 1000 + 251 + 100),
            (STALL_PENDING, 250 + 100),
            (STALL_UNATTRIBUTED, 10),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        assert_eq!(got, want);
        // The shares sum to the engine's total.
        assert_eq!(got.values().sum::<u64>(), 1711);
        // An engine without limits (or without stall time) gets none.
        assert_eq!(stall_us_by_cause([(Some(0), None), (Some(5), None)]), None);
        assert_eq!(stall_us_by_cause([(None, Some(l0))]), None);
    }

    #[test]
    fn a_step_keeps_its_counters_and_its_end_shape() {
        let start = LsmAccount {
            stalls: Stalls {
                l0_delays: 3,
                ..Stalls::default()
            },
            stall_us: 1000,
            comp_secs: 2.0,
            comp_cpu_secs: 1.5,
            comp_count: 4,
            levels: vec![level(0, 4, 0, 100, 0.5), level(1, 2, 50, 60, 1.5)],
            cache: Some(CacheLookups {
                data_hit: 10,
                data_miss: 5,
                ..CacheLookups::default()
            }),
            memtable_entries: Some(900),
            stall_us_by_cause: None,
        };
        let end = LsmAccount {
            stalls: Stalls {
                l0_delays: 5,
                pending_stops: 1,
                ..Stalls::default()
            },
            stall_us: 4000,
            comp_secs: 5.0,
            comp_cpu_secs: 3.0,
            comp_count: 7,
            levels: vec![
                level(0, 1, 0, 300, 0.5),
                level(1, 5, 250, 460, 3.5),
                level(2, 3, 10, 20, 0.25),
            ],
            cache: Some(CacheLookups {
                data_hit: 30,
                data_miss: 9,
                filter_hit: 2,
                ..CacheLookups::default()
            }),
            memtable_entries: Some(12),
            stall_us_by_cause: None,
        };
        let d = end.since(&start);
        assert_eq!(d.stalls.l0_delays, 2);
        assert_eq!(d.stalls.pending_stops, 1);
        assert_eq!(d.stalls.total(), 3);
        assert_eq!(d.stall_us, 3000);
        assert_eq!((d.comp_secs, d.comp_cpu_secs, d.comp_count), (3.0, 1.5, 3));
        // The shape is the end's; bytes are the step's; a new level is all the step's.
        assert_eq!(d.levels[0].files, 1);
        assert_eq!(d.levels[0].write_bytes, 200);
        assert_eq!(
            (d.levels[1].read_bytes, d.levels[1].write_bytes),
            (200, 400)
        );
        assert_eq!(d.levels[1].comp_secs, 2.0);
        assert_eq!(d.levels[2].read_bytes, 10);
        assert_eq!(d.comp_read_bytes(), 210);
        assert_eq!(d.write_bytes(), 620);
        let c = d.cache.unwrap();
        assert_eq!((c.hits(), c.misses()), (22, 4));
        // The memtable is a gauge: the end's.
        assert_eq!(d.memtable_entries, Some(12));
    }

    #[test]
    fn shapes_are_the_same_tree_within_a_few_bytes_and_differ_by_a_file_or_the_memtable() {
        let tree = |mem: Option<u64>, l0: u64, l0_bytes: u64| {
            LsmAccount {
                levels: vec![
                    LevelAccount {
                        bytes: l0_bytes,
                        ..level(0, l0, 0, 0, 0.0)
                    },
                    level(1, 3, 0, 0, 0.0),
                    // A level compaction emptied is no part of the shape.
                    level(2, 0, 5, 5, 0.1),
                ],
                memtable_entries: mem,
                ..LsmAccount::default()
            }
            .shape()
        };
        let a = tree(Some(0), 1, 2_000_000);
        assert_eq!(a.levels.len(), 2, "{a:?}");
        // SST files of identical runs differ by a few bytes of properties.
        assert!(a.same_as(&tree(Some(0), 1, 2_000_040)));
        assert!(!a.same_as(&tree(Some(0), 1, 2_100_000)), "5% more bytes");
        assert!(!a.same_as(&tree(Some(0), 2, 2_000_000)), "another L0 file");
        assert!(
            !a.same_as(&tree(Some(20000), 1, 2_000_000)),
            "an unflushed memtable"
        );
        // An engine that gives no memtable count is judged on its files alone.
        assert!(a.same_as(&tree(None, 1, 2_000_000)));
        assert_eq!(
            a.describe(),
            "memtable 0 entries, L0 1 file 1.9 MiB, L1 3 files 3.0 MiB"
        );
        assert_eq!(LsmShape::default().describe(), "no files");
    }
}
