//! The LSM's own account in the terminal report: per step, why writers stalled, what
//! compaction cost and how the block cache served each kind of block; then the tree's
//! shape at each step's end with what compaction moved into each level. Beside the
//! device's and the process's figures it says which part of the engine spent them.

use crate::format::{fixed, sig, table};
use plumb_core::LsmAccount;
use plumb_store::StoredRun;

const MIB: f64 = (1u64 << 20) as f64;

/// Misses over lookups, percent; `None` without lookups.
fn miss_pct(hit: u64, miss: u64) -> Option<f64> {
    let n = hit + miss;
    (n > 0).then(|| 100.0 * miss as f64 / n as f64)
}

/// `delays/stops`.
fn pair(d: u64, s: u64) -> String {
    format!("{d}/{s}")
}

/// The step's stall seconds by cause (`l0-file-count-limit 1.20, …`): "-" without
/// stall time, "n/a" from an engine without stall limits.
fn by_cause(a: &LsmAccount) -> String {
    match &a.stall_us_by_cause {
        None => "n/a".into(),
        Some(m) if m.values().all(|&us| us == 0) => "-".into(),
        Some(m) => m
            .iter()
            .filter(|(_, &us)| us > 0)
            .map(|(c, &us)| format!("{c} {:.2}", us as f64 / 1e6))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Both tables, or `None` when no step has an account (engines that keep none).
pub(crate) fn text(stored: &StoredRun) -> Option<String> {
    let steps: Vec<(&str, u64, &LsmAccount)> = stored
        .steps
        .iter()
        .filter_map(|(s, _)| Some((s.name.as_str(), s.summary.ops, s.summary.lsm.as_ref()?)))
        .collect();
    if steps.is_empty() {
        return None;
    }
    let mut t = table(&[
        "L0 stalls d/s",
        "pending d/s",
        "memtable d/s",
        "stall s",
        "stall s by cause",
        "comp s",
        "comp cpu s",
        "comp cpu µs/op",
        "compactions",
        "data miss%",
        "index miss%",
        "filter miss%",
        "step",
    ]);
    let mut levels = table(&[
        "level",
        "files",
        "MiB",
        "score",
        "read MiB",
        "written MiB",
        "comp s",
        "step",
    ]);
    for (name, ops, a) in &steps {
        let c = a.cache;
        let miss = |f: fn(&plumb_core::CacheLookups) -> (u64, u64)| {
            fixed(
                c.as_ref().and_then(|c| {
                    let (h, m) = f(c);
                    miss_pct(h, m)
                }),
                1,
            )
        };
        t.add_row(vec![
            pair(a.stalls.l0_delays, a.stalls.l0_stops),
            pair(a.stalls.pending_delays, a.stalls.pending_stops),
            pair(a.stalls.memtable_delays, a.stalls.memtable_stops),
            fixed(Some(a.stall_us as f64 / 1e6), 2),
            by_cause(a),
            fixed(Some(a.comp_secs), 2),
            fixed(Some(a.comp_cpu_secs), 2),
            sig((*ops > 0).then(|| a.comp_cpu_secs * 1e6 / *ops as f64), 3),
            a.comp_count.to_string(),
            miss(|c| (c.data_hit, c.data_miss)),
            miss(|c| (c.index_hit, c.index_miss)),
            miss(|c| (c.filter_hit, c.filter_miss)),
            name.to_string(),
        ]);
        for l in &a.levels {
            levels.add_row(vec![
                format!("L{}", l.level),
                l.files.to_string(),
                fixed(Some(l.bytes as f64 / MIB), 1),
                fixed(l.score, 2),
                fixed(Some(l.read_bytes as f64 / MIB), 1),
                fixed(Some(l.write_bytes as f64 / MIB), 1),
                fixed(Some(l.comp_secs), 2),
                name.to_string(),
            ]);
        }
    }
    Some(format!(
        "LSM, by the engine's own account (stalls as delays/stops by cause; stall time \
         is the engine's total, split by cause by plumb: each second's to the limits past \
         at its start or end)\n{t}\n\nLSM shape at each step's end, with what the step's \
         compactions (L0: flushes) read and wrote into each level\n{levels}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::{CacheLookups, LevelAccount, Stalls};

    #[test]
    fn misses_are_a_share_of_lookups() {
        assert_eq!(miss_pct(3, 1), Some(25.0));
        assert_eq!(miss_pct(0, 0), None);
        let a = LsmAccount {
            stalls: Stalls {
                l0_delays: 2,
                l0_stops: 1,
                ..Stalls::default()
            },
            comp_cpu_secs: 0.5,
            levels: vec![LevelAccount {
                level: 1,
                files: 3,
                bytes: 3 << 20,
                ..LevelAccount::default()
            }],
            cache: Some(CacheLookups {
                data_hit: 1,
                data_miss: 3,
                ..CacheLookups::default()
            }),
            ..LsmAccount::default()
        };
        assert_eq!(pair(a.stalls.l0_delays, a.stalls.l0_stops), "2/1");
        assert_eq!(by_cause(&a), "n/a");
        let split = LsmAccount {
            stall_us_by_cause: Some(
                [("l0-file-count-limit", 1_200_000), ("memtable-limit", 0)]
                    .iter()
                    .map(|(c, us)| (c.to_string(), *us))
                    .collect(),
            ),
            ..LsmAccount::default()
        };
        assert_eq!(by_cause(&split), "l0-file-count-limit 1.20");
        let calm = LsmAccount {
            stall_us_by_cause: Some(Default::default()),
            ..LsmAccount::default()
        };
        assert_eq!(by_cause(&calm), "-");
        assert_eq!(
            a.cache.map(|c| miss_pct(c.data_hit, c.data_miss)),
            Some(Some(75.0))
        );
    }
}
