//! A server's own counters second by second (`StepSummary::server_seconds`): in
//! `plumb show --intervals` a table beside the throughput and the device, and in the
//! HTML report a chart per step, so a checkpoint, a flush or a stall shows in time.
//! Only the counters that say most are drawn (commits, reads from the device, WAL and
//! redo written, syncs, pages written back), those that moved; all are in the JSON.

use crate::format::sig;
use plumb_core::{ServerSecond, StepSummary};

/// The counters shown, in this order, when they moved: PostgreSQL's, InnoDB's and
/// MyRocks'. Counters of bytes are shown in MB/s.
const SHOWN: &[&str] = &[
    "db.xact_commit",
    "questions",
    "db.blks_read",
    "innodb_buffer_pool_reads",
    "innodb_data_reads",
    "rocksdb_block_cache_miss",
    "wal.wal_bytes",
    "innodb_os_log_written",
    "rocksdb_wal_bytes",
    "wal.wal_sync",
    "innodb_data_fsyncs",
    "rocksdb_wal_synced",
    "checkpointer.buffers_written",
    "bgwriter.buffers_checkpoint",
    "bgwriter.buffers_clean",
    "bgwriter.buffers_backend",
    "innodb_pages_written",
    "innodb_data_written",
    "rocksdb_flush_write_bytes",
    "rocksdb_compact_write_bytes",
    "db.temp_bytes",
];

/// Whether a counter counts bytes (shown in MB/s).
fn bytes(name: &str) -> bool {
    name.contains("bytes") || name == "innodb_os_log_written" || name == "innodb_data_written"
}

/// A counter's column name: its name without the view's prefix, `MB/s` for bytes.
pub fn label(name: &str) -> String {
    let short = name.rsplit('.').next().unwrap_or(name);
    if bytes(name) {
        format!("{short} MB/s")
    } else {
        format!("{short}/s")
    }
}

/// A counter's rate as shown: MB/s for bytes, per second otherwise.
pub fn value(name: &str, rate: f64) -> f64 {
    if bytes(name) {
        rate / 1e6
    } else {
        rate
    }
}

/// The counters of [`SHOWN`] that moved in any of `seconds`, in its order.
pub fn moved(seconds: &[ServerSecond]) -> Vec<&'static str> {
    SHOWN
        .iter()
        .copied()
        .filter(|n| {
            seconds
                .iter()
                .any(|s| s.rates.get(*n).is_some_and(|r| *r > 0.0))
        })
        .collect()
}

/// The step's per-second table (`None` when the step has no server counters).
pub fn text(s: &StepSummary) -> Option<String> {
    let names = moved(&s.server_seconds);
    if names.is_empty() {
        return None;
    }
    let mut head: Vec<String> = vec!["t".into()];
    head.extend(names.iter().map(|n| label(n)));
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut t = crate::format::table_left(&head);
    for sec in &s.server_seconds {
        let mut row = vec![format!("{:.1}", sec.t)];
        row.extend(
            names
                .iter()
                .map(|n| sig(Some(sec.rates.get(*n).map_or(0.0, |r| value(n, *r))), 3)),
        );
        t.add_row(row);
    }
    Some(format!(
        "server counters each second (per second; every counter is in --json)\n{t}\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn the_counters_that_moved_are_shown_per_second() {
        let sec = |t: f64, commits: f64, wal: f64| ServerSecond {
            t,
            rates: BTreeMap::from([
                ("db.xact_commit".to_string(), commits),
                ("wal.wal_bytes".to_string(), wal),
            ]),
        };
        let s = StepSummary {
            server_seconds: vec![sec(1.0, 900.0, 2e6), sec(2.0, 1100.0, 0.0)],
            ..Default::default()
        };
        let t = text(&s).unwrap();
        assert!(t.contains("xact_commit/s"), "{t}");
        assert!(t.contains("wal_bytes MB/s"), "{t}");
        let rows: Vec<&str> = t.lines().skip(2).collect();
        assert_eq!(
            rows[0].split_whitespace().collect::<Vec<_>>(),
            ["1.0", "900", "2.00"]
        );
        assert_eq!(
            rows[1].split_whitespace().collect::<Vec<_>>(),
            ["2.0", "1100", "0"]
        );
        assert!(text(&StepSummary::default()).is_none());
    }
}
