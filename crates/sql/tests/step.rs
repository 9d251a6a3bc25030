//! A SQL step end to end on a managed PostgreSQL, through the runner's kernel: the load
//! and a point-query step closed and open loop, each checked for the figures every
//! stored step carries (intervals adding up, the server's costs per query, its counters
//! covering every query the clients sent, warm-up included).

mod common;

use plumb_core::StepStatus;
use plumb_runner::{NoProgress, StepOutcome};
use plumb_servers::CounterReader;
use plumb_sql::run::YcsbState;
use plumb_sql::{run_sql_step, Shape, SqlContext, SqlStepConfig};
use plumb_workloads::{Arrivals, Distribution, Pace};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn shape() -> Shape {
    Shape {
        tables: 1,
        table_size: 3000,
        range_size: 100,
        engine_clause: String::new(),
        postgres: true,
        scale: 1,
        warehouses: 1,
        spec_timing: false,
        ycsb_records: 1000,
        ycsb_props: Vec::new(),
        scripts: None,
        lua: None,
    }
}

fn cfg(index: usize, step: &str, secs: f64, warmup: f64, pace: Option<Pace>) -> SqlStepConfig {
    SqlStepConfig {
        index,
        plan: plumb_workloads::sql::parse_steps(step).unwrap().remove(0),
        threads: 2,
        duration: Duration::from_secs_f64(secs),
        warmup: Duration::from_secs_f64(warmup),
        seed: 7,
        shape: shape(),
        distribution: Distribution::Uniform,
        pace,
        perf_groups: 0,
        clients: None,
        wait_hz: 10.0,
        faults: None,
    }
}

/// The 1-second series adds up to the step, ends with it, and has a histogram each.
fn intervals_add_up(name: &str, o: &StepOutcome) {
    let s = &o.summary;
    assert_eq!(o.status, StepStatus::Ok, "{name}: {:?}", o.error);
    assert!(!o.intervals.is_empty(), "{name}");
    let sum: u64 = o.intervals.iter().map(|i| i.ops).sum();
    assert_eq!(sum, s.ops, "{name}: intervals add up");
    let t_last = o.intervals.last().unwrap().t;
    // The series ends with the step, unless the kernel dropped a closing sliver with
    // no op in it (under 50 ms: `metrics::empty_tail`), which a busy host makes longer
    // than a few ms; both come from the same marks, so nothing else may differ.
    let gap = s.secs - t_last;
    assert!(
        gap.abs() < 1e-6 || (0.0..0.05).contains(&gap),
        "{name}: {t_last} vs {}",
        s.secs
    );
    let h = o.histograms.as_ref().expect("histograms");
    assert_eq!(h.intervals.len(), o.intervals.len(), "{name}");
    let events: u64 = h.intervals.iter().map(|h| h.count()).sum();
    assert_eq!(events, h.total.count(), "{name}");
}

#[test]
fn a_step_runs_through_the_kernel_with_the_servers_costs_per_query() {
    let d = tempfile::tempdir().unwrap();
    let server = common::start("postgres", None, d.path());
    let ep = &server.endpoint;
    let mut counters = CounterReader::connect(ep).unwrap();
    let stop = AtomicBool::new(false);
    let (mut all_present, mut ycsb) = (false, YcsbState::default());
    let mut step = |c: &SqlStepConfig| {
        let mut ctx = SqlContext {
            endpoint: ep,
            server_pid: Some(server.pid),
            data_dir: Some(&server.data_dir),
            disk: None,
            counters: &mut counters,
            interrupt: &stop,
            progress: &NoProgress,
            all_present: &mut all_present,
            profile: None,
            ycsb: &mut ycsb,
            faults: None,
        };
        run_sql_step(&mut ctx, c)
    };

    // The load: its ops are rows, its events chunks and table work.
    let load = step(&cfg(0, "load", 0.0, 0.0, None));
    intervals_add_up("load", &load);
    assert_eq!(load.summary.ops, 3000);
    let srv = load.summary.server.as_ref().unwrap();
    assert!(srv.queries >= 3 + 2, "{srv:?}");
    assert!(srv.cpu_us_query.is_some_and(|c| c > 0.0), "{srv:?}");
    assert!(load.summary.db_gb.is_some());

    // Closed loop, with a warm-up whose queries the server's counters still see.
    let pq = step(&cfg(1, "point-query", 2.2, 0.5, None));
    intervals_add_up("point-query", &pq);
    let s = &pq.summary;
    let srv = s.server.as_ref().unwrap();
    assert!(s.ops > 100, "{}", s.ops);
    assert_eq!(srv.queries, s.ops, "a point query is one query, one op");
    assert_eq!(srv.rows_query, Some(1.0));
    assert_eq!(srv.retries, 0);
    assert!((srv.tps - s.ops_sec).abs() < 1e-6 * s.ops_sec, "{srv:?}");
    let scans = srv.counters_query["tables.idx_scan"];
    assert!((scans - 1.0).abs() <= 0.02, "{scans} index scans per query");
    assert!(srv.cpu_us_query.is_some_and(|c| c > 0.0) && srv.csw_query.is_some());
    assert!(srv.cpu_unavailable.is_none());
    assert!(s.cpu_us_op.is_some() && s.p99_us.is_some() && s.qos.is_some());
    assert!(s.open_loop.is_none());
    assert!((2.2..3.0).contains(&s.secs), "{}", s.secs);
    // The server's CPU is read at the window's ends only: the host's noise beside it is
    // known for the step, not for its seconds.
    assert!(pq.intervals.len() >= 3, "{:?}", pq.intervals);
    assert!(s.steal_pct.is_some() && s.outside_cpu_pct.is_some());
    assert!(pq.intervals.iter().all(|i| i.outside_cpu_pct.is_none()));
    // Steal each second, over a window long enough to count (a closing sliver is not).
    let cpus = f64::from(plumb_probes::cpustat::read().unwrap().cpus);
    for i in &pq.intervals {
        let m = i.secs * cpus / plumb_core::NOISE_MIN_CPU_SECS;
        if m >= 1.05 {
            assert!(i.steal_pct.is_some(), "{i:?}");
        } else if m < 0.95 {
            assert!(i.steal_pct.is_none(), "{i:?}");
        }
    }

    // Open loop: the rate offered, not more, each query timed from its intended start.
    let pace = Pace::constant(200.0, Arrivals::Constant);
    let ol = step(&cfg(2, "point-query", 2.0, 0.0, Some(pace)));
    intervals_add_up("point-query@200/s", &ol);
    let s = &ol.summary;
    assert!((340..=420).contains(&s.ops), "{} queries", s.ops);
    let o = s.open_loop.as_ref().expect("open-loop figures");
    assert_eq!(o.target_ops_sec, 200.0);
    assert_eq!(o.service.ops, s.ops);
    assert!(o.backlog_ops <= 2, "{o:?}");
    assert!(s.p99_us.unwrap() >= o.service.p99_us.unwrap() * 0.99);

    // A rate that changes over time: 100 queries/s for a second, then 400, shared by
    // the two clients; each interval stores what it was offered.
    let profile = "hold:100/1s,hold:400/1s".parse().unwrap();
    let pace = Pace::profiled(profile, Arrivals::Constant);
    let ol = step(&cfg(3, "point-query", 2.0, 0.0, Some(pace)));
    intervals_add_up("point-query@profile", &ol);
    let s = &ol.summary;
    assert!((425..=525).contains(&s.ops), "{} queries", s.ops);
    let o = s.open_loop.as_ref().expect("open-loop figures");
    assert_eq!(o.profile.as_deref(), Some("hold:100/1s,hold:400/1s"));
    let offered: Vec<f64> = ol
        .intervals
        .iter()
        .filter_map(|i| i.target_ops_sec)
        .collect();
    assert_eq!(offered.len(), ol.intervals.len());
    assert!(
        (offered[0] - 100.0).abs() < 5.0 && (offered[1] - 400.0).abs() < 20.0,
        "{offered:?}"
    );
    // Served follows offered: the second second ran more than twice the first's queries.
    assert!(
        ol.intervals[1].ops > 2 * ol.intervals[0].ops,
        "{:?}",
        ol.intervals
    );
}
