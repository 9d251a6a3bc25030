//! Multi-client steps: three `plumb sql` processes against one PostgreSQL, started
//! apart, meet at a barrier kept in a PostgreSQL store before each step, and `plumb
//! clients` reports percentiles of their merged histograms.

mod common;

use common::{external_server, ok_json, plumb, stderr};
use plumb_runner::LatencyHistogram;
use plumb_store::Store;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn three_clients_start_each_step_together_and_merge_their_histograms() {
    let dir = tempfile::tempdir().unwrap();
    let server = external_server(dir.path(), "postgres", None);
    let url = server.endpoint.redacted_url();
    // The store: another database on the same server.
    let db = &server.endpoint.database;
    server
        .endpoint
        .connect()
        .unwrap()
        .batch("CREATE DATABASE plumbstore")
        .unwrap();
    let store_url = url.replacen(&format!("/{db}"), "/plumbstore", 1);
    let store = Path::new(&store_url);
    let common = ["--url", &url, "--table-size", "5000"];

    // Refused: a group without a load done beforehand, or on a managed server.
    let o = plumb(
        store,
        &[
            &["sql"][..],
            &common,
            &["--client-group", "g", "--clients", "2"],
        ]
        .concat(),
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("load them once"), "{}", stderr(&o));
    let o = plumb(
        store,
        &[
            "sql",
            "--server",
            "postgres",
            "--steps",
            "point-query",
            "--client-group",
            "g",
            "--clients",
            "2",
        ],
    );
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--url"), "{}", stderr(&o));

    let o = plumb(
        store,
        &[&["sql"][..], &common, &["--steps", "load"]].concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));

    let args: Vec<&str> = [
        &["sql"][..],
        &common,
        &[
            "--steps",
            "point-query,read-only-10",
            "--duration",
            "1.5",
            "--warmup",
            "0.2",
            "--client-group",
            "g1",
            "--clients",
            "3",
            "--store",
            &store_url,
        ],
    ]
    .concat();
    let mut kids = Vec::new();
    for i in 0..3 {
        kids.push(
            Command::new(env!("CARGO_BIN_EXE_plumb"))
                .args(&args)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(dir.path().join(format!("c{i}.log"))).unwrap())
                .spawn()
                .unwrap(),
        );
        // Started apart: without the barrier the first would be done with its step.
        std::thread::sleep(Duration::from_millis(1500));
    }
    for (i, k) in kids.iter_mut().enumerate() {
        let st = k.wait().unwrap();
        let log = std::fs::read_to_string(dir.path().join(format!("c{i}.log"))).unwrap();
        assert!(st.success(), "client {i}: {log}");
        assert!(log.contains("all 3 clients here"), "{log}");
    }

    let s = Store::open(store).unwrap();
    let runs = s.client_runs("g1").unwrap();
    assert_eq!(runs.len(), 3);
    // No client's step began before the last client had started its run.
    let last_start = runs.iter().map(|r| r.started_at.clone()).max().unwrap();
    let stored: Vec<_> = runs.iter().map(|r| s.run(r.id).unwrap()).collect();
    for r in &stored {
        assert_eq!(r.steps.len(), 2);
        assert!(
            r.steps[0].0.started_at >= last_start,
            "{} < {last_start}",
            r.steps[0].0.started_at
        );
    }

    let m = ok_json(&plumb(store, &["clients", "g1", "--json"]));
    let steps = m["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "{m:#}");
    for (k, st) in steps.iter().enumerate() {
        assert_eq!(st["clients"], 3);
        let ops: u64 = stored.iter().map(|r| r.steps[k].0.summary.ops).sum();
        assert!(ops > 0);
        assert_eq!(st["ops"], ops);
        // Its percentiles are those of the clients' histograms added together, and
        // every latency of every client is in it: as many as in their 1-second
        // histograms, stored separately.
        let (mut whole, mut by_second) = (LatencyHistogram::new(), LatencyHistogram::new());
        for r in &runs {
            for (name, idx, text) in s.histograms(r.id).unwrap() {
                if name != st["name"] {
                    continue;
                }
                let h = LatencyHistogram::from_v2_base64(&text).unwrap();
                if idx == plumb_store::clients::WHOLE_STEP {
                    whole.merge(&h);
                } else {
                    by_second.merge(&h);
                }
            }
        }
        assert!(whole.count() > 0);
        assert_eq!(st["count"], whole.count(), "{st:#}");
        assert_eq!(by_second.count(), whole.count());
        assert_eq!(st["p99_us"].as_f64(), whole.quantile_us(0.99));
        assert_eq!(st["p50_us"].as_f64(), whole.quantile_us(0.5));
        // A percentile of the whole lies between the clients' own.
        let p99s: Vec<f64> = st["client_p99_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let p99 = st["p99_us"].as_f64().unwrap();
        let lo = p99s.iter().cloned().fold(f64::MAX, f64::min);
        let hi = p99s.iter().cloned().fold(0.0, f64::max);
        // (stored per-client p99s come from the same histograms, at 3 significant digits)
        assert!(
            p99 >= lo * 0.999 && p99 <= hi * 1.001,
            "{p99} not in [{lo}, {hi}]"
        );
        let iv_ops: u64 = st["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["ops"].as_u64().unwrap())
            .sum();
        assert_eq!(iv_ops, ops);
    }
    let text = plumb(store, &["clients", "g1"]);
    assert!(text.status.success());
    assert!(String::from_utf8_lossy(&text.stdout).contains("p99 by client"));
    // The name is spent: a fourth client is told, not let through.
    let o = plumb(store, &args[..args.len() - 2]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("already passed"), "{}", stderr(&o));
}
