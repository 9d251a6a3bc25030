//! Steps run end to end on the null and memory targets: intervals add up, reads are
//! verified, corruption and missing keys are caught.

mod common;

use common::{cfg, run};
use plumb_core::value::{VerifyMode, SAMPLE_EVERY};
use plumb_core::{StepStatus, Target};
use plumb_kv::{run_step, KeySpace, RunContext};
use plumb_runner::{NoProgress, StepOutcome};
use plumb_targets::{MemoryTarget, NullTarget};
use plumb_workloads::KeyFormat;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn assert_intervals_add_up(o: &StepOutcome) {
    assert!(!o.intervals.is_empty(), "no intervals stored");
    let sum: u64 = o.intervals.iter().map(|i| i.ops).sum();
    assert_eq!(
        sum, o.summary.ops,
        "interval ops must add up to the step's ops"
    );
    let t_last = o.intervals.last().unwrap().t;
    // The series ends with the step, unless the kernel dropped a closing sliver with
    // no op in it (under 50 ms: `metrics::empty_tail`), which a busy host makes longer
    // than a few ms; both come from the same marks, so nothing else may differ.
    let gap = o.summary.secs - t_last;
    assert!(
        gap.abs() < 1e-6 || (0.0..0.05).contains(&gap),
        "{t_last} vs {}",
        o.summary.secs
    );
}

#[test]
fn null_target_duration_step_spans_several_intervals() {
    let t = NullTarget;
    let mut c = cfg("readrandom", 0, 1000, 2);
    c.duration = Some(Duration::from_millis(2300));
    let o = run(&t, &c, &mut KeySpace::empty());
    assert_eq!(o.status, StepStatus::Ok);
    assert!(o.intervals.len() >= 3, "{} intervals", o.intervals.len());
    assert_intervals_add_up(&o);
    assert!(o.summary.ops > 1000);
    assert!(o.summary.p50_us.is_some() && o.summary.cpu_us_op.is_some());
    assert!(o.summary.qos.is_some());
    // No disk given: disk figures are unavailable, never zero.
    assert_eq!(o.summary.rkb_op, None);
    assert_eq!(o.summary.device, None);
    assert!(o.intervals.iter().all(|i| i.device.is_none()));
    assert_eq!(o.summary.hw.unsupported.as_deref(), Some("test"));
    // cpu_us_op is its user and system parts.
    let (cpu, usr, sys) = (
        o.summary.cpu_us_op.unwrap(),
        o.summary.usr_us_op.unwrap(),
        o.summary.sys_us_op.unwrap(),
    );
    assert!(
        (usr + sys - cpu).abs() <= 1e-9 * cpu.max(1.0),
        "{usr} + {sys} != {cpu}"
    );
}

/// With the device holding a directory, the step and each of its seconds carry it as
/// iostat shows it: rates always, %util and aqu-sz where the kernel keeps times.
#[test]
fn a_step_with_a_device_carries_it_for_the_window_and_each_second() {
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let disk = match plumb_probes::diskstats::DeviceStats::for_path(dir.path()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("no block device under /var/tmp here ({e}); skipping");
            return;
        }
    };
    let times = disk.read().unwrap().times_known;
    let t = NullTarget;
    let mut c = cfg("readrandom", 0, 1000, 1);
    c.duration = Some(Duration::from_millis(1500));
    let stop = AtomicBool::new(false);
    let ctx = RunContext {
        target: &t,
        disk: Some(&disk),
        hw: Err("test".into()),
        interrupt: &stop,
        progress: &NoProgress,
        profile: None,
    };
    let o = run_step(&ctx, &c, &mut KeySpace::empty());
    assert_eq!(o.status, StepStatus::Ok);
    let d = o.summary.device.expect("the step's device");
    assert!(d.r_s >= 0.0 && d.w_s >= 0.0 && d.rmb_s >= 0.0);
    assert_eq!(d.util_pct.is_some(), times);
    assert_eq!(d.aqu_sz.is_some(), times);
    // An await is there exactly when there were requests to average.
    assert_eq!(d.r_await_ms.is_some(), times && d.r_s > 0.0);
    assert!(o.intervals.len() >= 2);
    for i in &o.intervals {
        let id = i.device.expect("each second's device");
        let reads = i.rd.unwrap() as f64;
        assert!(
            (id.r_s * i.secs - reads).abs() < 1e-6,
            "r/s is the second's reads"
        );
    }
}

#[test]
fn fills_write_every_key_once_and_reads_verify_them() {
    for fill in ["fillseq", "filluniquerandom"] {
        let t = MemoryTarget::new();
        let mut keys = KeySpace::empty();
        let o = run(&t, &cfg(fill, 0, 5000, 3), &mut keys);
        assert_eq!(o.status, StepStatus::Ok);
        assert_eq!(o.summary.ops, 5000);
        assert_eq!(t.len(), 5000, "{fill} must write each key exactly once");
        assert_intervals_add_up(&o);
        assert!(keys.all_present);

        for (i, step) in ["readrandom", "multireadrandom", "fwdrange", "revrange"]
            .iter()
            .enumerate()
        {
            let mut c = cfg(step, i + 1, 5000, 2);
            c.ops = Some(2000);
            let o = run(&t, &c, &mut keys);
            assert_eq!(o.status, StepStatus::Ok, "{step}: {:?}", o.error);
            // multireadrandom counts keys and stops at the first batch boundary past
            // the quota: at most one batch (16) over per thread.
            let over = if *step == "multireadrandom" {
                2 * 16
            } else {
                0
            };
            assert!(
                (2000..=2000 + over).contains(&o.summary.ops),
                "{step}: {} ops",
                o.summary.ops
            );
            assert!(
                o.summary.verify.verified >= 2000,
                "{step}: {:?}",
                o.summary.verify
            );
            assert_eq!(o.summary.verify.mismatches + o.summary.verify.missing, 0);
            assert_intervals_add_up(&o);
        }
    }
}

#[test]
fn a_corrupted_value_is_detected_and_fails_the_step() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 20, 1), &mut keys);
    let f = KeyFormat { size: 20 };
    let mut k = f.buffer();
    f.encode(7, &mut k);
    assert!(t.corrupt(&k));
    let mut c = cfg("readrandom", 1, 20, 1);
    // The default mode checksums 1 value in SAMPLE_EVERY: 100k reads of 20 keys give
    // key 7 about 20 full checks (a miss has odds of about 1e-9).
    assert_eq!(c.verify, VerifyMode::Sample);
    c.ops = Some(100_000);
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Failed);
    assert!(o.summary.verify.mismatches > 0);
    assert!(o.error.unwrap().contains("checksum mismatches"));
}

#[test]
fn a_value_returned_for_another_key_is_caught_on_every_read_in_the_default_mode() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 4, 1), &mut keys);
    let f = KeyFormat { size: 20 };
    let (mut a, mut b) = (f.buffer(), f.buffer());
    f.encode(1, &mut a);
    f.encode(2, &mut b);
    assert!(t.swap(&a, &b));
    let mut c = cfg("readrandom", 1, 4, 1);
    c.ops = Some(4000);
    assert_eq!(c.verify, VerifyMode::Sample, "the default mode");
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Failed);
    let v = o.summary.verify;
    assert_eq!(v.verified, 4000);
    // Half the keys hold another key's value: each of their reads is caught by the
    // key tag, not only the sampled ones (1 in SAMPLE_EVERY get the full checksum).
    assert!(
        (1600..=2400).contains(&v.mismatches),
        "every read of keys 1 and 2 fails: {v:?}"
    );
    assert!(
        v.checksummed >= 4000 / SAMPLE_EVERY && v.checksummed <= 4000 / SAMPLE_EVERY + 1,
        "{v:?}"
    );
}

#[test]
fn values_loaded_with_verify_none_carry_no_checksum_but_their_key_is_still_checked() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    let mut fill = cfg("fillseq", 0, 100, 1);
    fill.verify = VerifyMode::None;
    run(&t, &fill, &mut keys);
    let mut c = cfg("readrandom", 1, 100, 1);
    c.ops = Some(500);
    c.verify = VerifyMode::All;
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Ok);
    assert_eq!(
        (o.summary.verify.verified, o.summary.verify.checksummed),
        (500, 0)
    );
    let f = KeyFormat { size: 20 };
    let (mut a, mut b) = (f.buffer(), f.buffer());
    f.encode(1, &mut a);
    f.encode(2, &mut b);
    assert!(t.swap(&a, &b));
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Failed);
    assert!(o.summary.verify.mismatches > 0);
}

#[test]
fn verify_none_checks_nothing_and_all_checksums_every_value() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 100, 1), &mut keys);
    for (mode, checked, summed) in [
        (VerifyMode::None, 0, 0),
        (VerifyMode::All, 1000, 1000),
        (VerifyMode::Sample, 1000, 1000 / SAMPLE_EVERY + 1),
    ] {
        let mut c = cfg("readrandom", 1, 100, 1);
        c.ops = Some(1000);
        c.verify = mode;
        let o = run(&t, &c, &mut keys);
        assert_eq!(o.status, StepStatus::Ok, "{mode}");
        let v = o.summary.verify;
        assert_eq!((v.verified, v.checksummed), (checked, summed), "{mode}");
        // plumb's own time per op is measured on a sample of ops and is part of each op.
        let h = o.summary.harness_us_op.expect("harness time measured");
        let per_op = o.summary.secs * 1e6 / o.summary.ops as f64;
        assert!(
            h > 0.0 && h <= per_op * 1.5,
            "{mode}: harness {h} µs of {per_op} µs per op"
        );
    }
}

#[test]
fn a_missing_key_that_must_exist_fails_but_after_deletes_it_does_not() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 20, 1), &mut keys);
    let f = KeyFormat { size: 20 };
    let mut k = f.buffer();
    f.encode(3, &mut k);
    t.session().unwrap().delete(&k).unwrap();
    let mut c = cfg("readrandom", 1, 20, 1);
    c.ops = Some(1000);
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Failed);
    assert!(o.summary.verify.missing > 0);

    // After plumb's own deleterandom, absence is legitimate.
    let mut d = cfg("deleterandom", 2, 20, 1);
    d.ops = Some(5);
    run(&t, &d, &mut keys);
    assert!(!keys.all_present);
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Ok);
    assert!(o.summary.verify.not_found > 0 && o.summary.verify.missing == 0);
}

#[test]
fn readwhilewriting_runs_a_paced_writer_beside_the_readers() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 1000, 1), &mut keys);
    let mut c = cfg("readwhilewriting", 1, 1000, 2);
    c.duration = Some(Duration::from_millis(1500));
    c.write_rate_mb = 0.5; // 0.5 MiB/s of 120-byte writes: ~4369 writes/s
    let o = run(&t, &c, &mut keys);
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    let w = o.summary.writer.expect("writer summary");
    let expect = 0.5 * 1024.0 * 1024.0 / 120.0 * o.summary.secs;
    let ratio = w.ops as f64 / expect;
    assert!(
        ratio > 0.8 && ratio < 1.05,
        "writer did {} of ~{expect:.0}",
        w.ops
    );
    assert_intervals_add_up(&o);
}

#[test]
fn an_interrupt_stops_the_step_and_keeps_what_ran() {
    let t = NullTarget;
    let stop = AtomicBool::new(true);
    let ctx = RunContext {
        target: &t,
        disk: None,
        hw: Err("test".into()),
        interrupt: &stop,
        progress: &NoProgress,
        profile: None,
    };
    let mut c = cfg("readrandom", 0, 100, 1);
    c.duration = Some(Duration::from_secs(30));
    let o = run_step(&ctx, &c, &mut KeySpace::empty());
    assert_eq!(o.status, StepStatus::Interrupted);
    assert!(o.summary.secs < 30.0);
    let sum: u64 = o.intervals.iter().map(|i| i.ops).sum();
    assert_eq!(sum, o.summary.ops);
}

#[test]
fn readseq_visits_every_key_once_and_stops_at_the_end() {
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 3000, 1), &mut keys);
    let o = run(&t, &cfg("readseq", 1, 3000, 2), &mut keys);
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    assert_eq!(o.summary.ops, 3000);
    assert_eq!(o.summary.verify.verified, 3000);
    // With half the keys deleted, the scan ends early instead of spinning.
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    run(&t, &cfg("fillseq", 0, 1000, 1), &mut keys);
    let o = run(&t, &cfg("readseq", 1, 2000, 1), &mut keys);
    assert_eq!(o.summary.ops, 1000);
}

#[test]
fn open_loop_response_time_counts_a_stall_for_every_op_behind_it_and_service_time_does_not() {
    use plumb_workloads::{Arrivals, Pace};
    // 2000 ops/s offered; a 300 ms stall 700 ms in holds one op, and the ~600 due
    // behind it wait for it.
    let run_with = |pace: Option<Pace>| {
        let t = MemoryTarget::with_stall(Duration::from_millis(700), Duration::from_millis(300));
        let mut c = cfg("readrandom", 0, 1000, 1);
        c.duration = Some(Duration::from_millis(2000));
        c.pace = pace;
        run(&t, &c, &mut KeySpace::empty())
    };
    let o = run_with(Some(Pace::constant(2000.0, Arrivals::Constant)));
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    let s = &o.summary;
    let ol = s.open_loop.as_ref().expect("an open-loop step says so");
    assert_eq!(
        (ol.target_ops_sec, ol.arrivals.as_str()),
        (2000.0, "constant")
    );
    // Every due op ran: the pacer catches up after the stall instead of sending less.
    assert!(s.ops as f64 >= 0.95 * 2000.0 * 2.0, "{} ops", s.ops);
    // Caught up: the ~600 ops the stall held are gone by the end. What is left is the
    // last few ms of the step, and a host that preempts the thread near the end leaves
    // more of those (24 seen under load), so the bound is a tenth of the stall's, not 0.
    assert!(ol.backlog_ops < 60, "backlog {}", ol.backlog_ops);
    // Response time: ~10% of the ops waited 100-300 ms, so p99 is most of the stall …
    let p99 = s.p99_us.unwrap();
    assert!(p99 >= 150_000.0, "response p99 {p99} µs");
    assert!(ol.lag_max_ms >= 250.0, "lag {}", ol.lag_max_ms);
    assert!(ol.late_pct >= 5.0, "late {}%", ol.late_pct);
    // … service time: one op of ~4000 took the stall, the others their own few µs.
    let svc = &ol.service;
    assert_eq!(svc.ops, s.ops);
    assert!(svc.max_us.unwrap() >= 290_000.0, "{svc:?}");
    assert!(
        svc.p99_us.unwrap() < 5_000.0,
        "service p99 {:?}",
        svc.p99_us
    );
    let above_64ms: u64 = svc.buckets[5..].iter().sum();
    assert_eq!(above_64ms, 1, "{:?}", svc.buckets);
    // Closed loop, the same stall hides: the client waits and sends nothing meanwhile.
    let o = run_with(None);
    assert!(o.summary.open_loop.is_none());
    assert!(
        o.summary.p99_us.unwrap() < 5_000.0,
        "{:?}",
        o.summary.p99_us
    );
    assert!(o.summary.pmax_us.unwrap() >= 290_000.0);
}

#[test]
fn a_rate_profile_is_offered_second_by_second_and_a_stall_shows_as_lateness_not_a_lower_rate() {
    use plumb_workloads::{Arrivals, Pace};
    // 1000 ops/s for a second, then 3000; a 300 ms stall 500 ms in.
    let t = MemoryTarget::with_stall(Duration::from_millis(500), Duration::from_millis(300));
    let mut c = cfg("readrandom", 0, 1000, 1);
    c.duration = Some(Duration::from_millis(2000));
    let profile = "hold:1k/1s,hold:3k/1s".parse().unwrap();
    c.pace = Some(Pace::profiled(profile, Arrivals::Constant));
    let o = run(&t, &c, &mut KeySpace::empty());
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    let ol = o.summary.open_loop.as_ref().unwrap();
    assert_eq!(ol.profile.as_deref(), Some("hold:1k/1s,hold:3k/1s"));
    // Each interval stores what it was offered: the profile's mean over it, whatever
    // was served.
    let offered: Vec<f64> = o
        .intervals
        .iter()
        .map(|i| i.target_ops_sec.unwrap())
        .collect();
    assert!(offered.len() >= 2, "{offered:?}");
    assert!((offered[0] - 1000.0).abs() < 20.0 && (offered[1] - 3000.0).abs() < 60.0);
    assert!(
        (ol.target_ops_sec - 2000.0).abs() < 40.0,
        "{}",
        ol.target_ops_sec
    );
    // The stall held ~300 ops due behind it: they ran late, from their intended
    // starts, rather than being skipped (the pacer catches up; nothing is sent less).
    assert!(ol.lag_max_ms >= 250.0, "lag {}", ol.lag_max_ms);
    assert!(ol.late_pct >= 5.0, "late {}%", ol.late_pct);
    assert!(
        o.summary.ops as f64 >= 0.95 * 4000.0,
        "{} ops",
        o.summary.ops
    );
    assert!(
        o.summary.p99_us.unwrap() >= 100_000.0,
        "{:?}",
        o.summary.p99_us
    );
}

#[test]
fn poisson_arrivals_keep_their_rate_across_threads() {
    use plumb_workloads::{Arrivals, Pace};
    let t = MemoryTarget::new();
    let mut c = cfg("readrandom", 0, 1000, 2);
    c.duration = Some(Duration::from_millis(1500));
    c.pace = Some(Pace::constant(4000.0, Arrivals::Poisson));
    let o = run(&t, &c, &mut KeySpace::empty());
    assert_eq!(o.status, StepStatus::Ok);
    let rate = o.summary.ops_sec;
    assert!((rate / 4000.0 - 1.0).abs() < 0.1, "{rate} ops/s");
    assert_eq!(o.summary.open_loop.as_ref().unwrap().arrivals, "poisson");
    assert_intervals_add_up(&o);
}

#[test]
fn ycsb_phases_load_ycsbs_keys_and_time_each_kind_of_operation() {
    use plumb_workloads::ycsb::build_key_name;
    let t = MemoryTarget::new();
    let mut keys = KeySpace::empty();
    let load = run(&t, &cfg("ycsb-load", 0, 1000, 2), &mut keys);
    assert_eq!(load.status, StepStatus::Ok, "{:?}", load.error);
    assert_eq!(load.summary.ops, 1000);
    assert!(keys.ycsb_loaded && keys.ycsb_next == Some(1000));
    // The records are exactly YCSB's keys for 0..1000 in hashed order.
    let stored = |t: &MemoryTarget| {
        let mut s = t.session().unwrap();
        let mut got = std::collections::BTreeSet::new();
        s.scan(b"", 1_000_000, false, &mut |k, _| {
            got.insert(String::from_utf8(k.to_vec()).unwrap());
        })
        .unwrap();
        got
    };
    let want: std::collections::BTreeSet<String> =
        (0..1000).map(|k| build_key_name(k, 1, false)).collect();
    assert_eq!(stored(&t), want);

    let mut a = cfg("ycsb-a", 1, 1000, 2);
    a.duration = Some(Duration::from_millis(600));
    let o = run(&t, &a, &mut keys);
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    let by = &o.summary.by_op;
    let (r, u) = (by["read"].ops as f64, by["update"].ops as f64);
    assert_eq!((r + u) as u64, o.summary.ops);
    assert!(
        (r / (r + u) - 0.5).abs() < 0.05,
        "read share {}",
        r / (r + u)
    );
    assert_eq!(o.summary.verify.missing, 0);

    let mut e = cfg("ycsb-e", 2, 1000, 1);
    e.duration = Some(Duration::from_millis(600));
    let o = run(&t, &e, &mut keys);
    assert_eq!(o.status, StepStatus::Ok, "{:?}", o.error);
    let by = &o.summary.by_op;
    let (scans, inserts) = (by["scan"].ops, by["insert"].ops);
    assert!(
        inserts > 0 && scans > 10 * inserts,
        "{scans} scans, {inserts} inserts"
    );
    // Inserts went past the loaded records, and the next phase starts after them.
    let next = keys.ycsb_next.unwrap();
    assert_eq!(next, 1000 + inserts as i64);
    assert_eq!(stored(&t).len() as i64, next);
    assert_eq!(o.summary.verify.missing, 0);
}
