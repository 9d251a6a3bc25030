//! Bottom-up attribution: a run's device IO read against this host's disk ceilings, with
//! every expected figure computed by hand from the fixture.

mod fixtures;

use fixtures::{fig, run};
use plumb_report::attribution::{attribution, HostCeilings};
use plumb_store::{Ceiling, CeilingRecord, StoredRun};
use serde_json::json;

fn ceiling(run_id: i64, name: &str, value: f64, unit: &str) -> CeilingRecord {
    CeilingRecord {
        ceiling: Ceiling {
            name: name.into(),
            value,
            unit: unit.into(),
        },
        host: "h1".into(),
        run_id,
        measured_at: "2026-11-22T00:00:00Z".into(),
    }
}

fn ceilings() -> Vec<CeilingRecord> {
    vec![
        ceiling(7, "disk.randread_4k_iops.qd1", 1000.0, "IOPS"),
        ceiling(7, "disk.randread_4k_iops.j4.qd1", 4000.0, "IOPS"),
        ceiling(7, "disk.randread_4k_iops.qd4", 8000.0, "IOPS"),
        ceiling(7, "disk.seqread_1m_mbs", 100.0, "MB/s"),
        ceiling(7, "disk.seqwrite_1m_mbs", 50.0, "MB/s"),
        // Ignored: through the page cache, and an older probe run.
        ceiling(7, "disk.randread_4k_iops.buffered.qd1", 1e6, "IOPS"),
        ceiling(3, "disk.randread_4k_iops.qd32", 1e6, "IOPS"),
        ceiling(7, "mem.triad_gbs.t1", 20.0, "GB/s"),
    ]
}

/// readrandom with 4 threads: 2 device reads of 8 KiB per op at 1000 ops/s; fillseq with
/// 1 thread: 1 KiB written per op at 500 ops/s; a step without device counters.
fn kv_run() -> StoredRun {
    let mut r = run(
        1,
        "t",
        &[
            fig("readrandom", 1000.0, Some(10.0)),
            fig("fillseq", 500.0, Some(5.0)),
            fig("overwrite", 100.0, None),
        ],
    );
    let s = &mut r.steps[0].0;
    s.config = json!({"threads": 4});
    (s.summary.rd_op, s.summary.rkb_op, s.summary.wkb_op) = (Some(2.0), Some(16.0), Some(0.0));
    let s = &mut r.steps[1].0;
    s.config = json!({"threads": 1});
    (s.summary.rd_op, s.summary.rkb_op, s.summary.wkb_op) = (Some(0.0), Some(0.0), Some(1.0));
    r
}

#[test]
fn steps_are_read_against_the_newest_direct_ceilings_of_the_same_device() {
    let cs = ceilings();
    let lines = attribution(
        &kv_run(),
        &HostCeilings {
            ceilings: &cs,
            disk_device: Some("vda"),
        },
    );
    assert_eq!(
        lines,
        vec![
            "bottom-up, against the disk ceilings of probe run 7 (2026-11-22T00:00:00Z):"
                .to_string(),
            // 2 reads/op × 1000 ops/s = 2000/s; 4 threads → j4×qd1 (4000 IOPS) = 50%.
            // 16 KiB/op × 1000 ops/s = 16.4 MB/s of 100.
            "  readrandom: reads 2000/s = 50% of the 4 KiB random-read ceiling at 4 in flight \
             (4000 IOPS, j4×qd1; 4 thread(s)); 2.00 reads/op, 8.0 KiB each; \
             read 16.4 MB/s = 16% of sequential read (100 MB/s); \
             written 0.0 MB/s = 0% of sequential write (50 MB/s)"
                .to_string(),
            // 1 KiB/op × 500 ops/s = 0.512 MB/s of 50 → 1%.
            "  fillseq: reads 0/s = 0% of the 4 KiB random-read ceiling at 1 in flight \
             (1000 IOPS, j1×qd1; 1 thread(s)); 0.00 reads/op; \
             read 0.0 MB/s = 0% of sequential read (100 MB/s); \
             written 0.5 MB/s = 1% of sequential write (50 MB/s)"
                .to_string(),
        ]
    );
}

#[test]
fn ceilings_of_another_device_are_not_compared() {
    let cs = ceilings();
    let lines = attribution(
        &kv_run(),
        &HostCeilings {
            ceilings: &cs,
            disk_device: Some("nvme0n1"),
        },
    );
    assert_eq!(lines.len(), 1);
    assert!(
        lines[0].ends_with("measured on nvme0n1, this run's data is on vda; not compared"),
        "{lines:?}"
    );
}

#[test]
fn nothing_without_direct_disk_ceilings_or_device_counters() {
    let mem_only = vec![
        ceiling(7, "mem.triad_gbs.t1", 20.0, "GB/s"),
        ceiling(7, "disk.seqread_1m_mbs.buffered", 900.0, "MB/s"),
    ];
    let host = HostCeilings {
        ceilings: &mem_only,
        disk_device: None,
    };
    assert!(attribution(&kv_run(), &host).is_empty());
    let cs = ceilings();
    let no_counters = run(1, "t", &[fig("readrandom", 1000.0, Some(10.0))]);
    let lines = attribution(
        &no_counters,
        &HostCeilings {
            ceilings: &cs,
            disk_device: None,
        },
    );
    assert_eq!(lines[1], "  no step has device counters to compare");
}
