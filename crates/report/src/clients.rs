//! A multi-client run (`plumb sql --client-group NAME`) seen as one: per step, the
//! clients' rates added up and the percentiles of their merged HDR histograms. A
//! percentile of the whole is not the mean of the clients' percentiles (a slow client's
//! tail is diluted by the average); the mean is kept beside it only to show how far
//! off it would be.

use crate::select::SelectError;
use plumb_core::LatencyHistogram;
use plumb_store::clients::WHOLE_STEP;
use serde::Serialize;
use std::collections::BTreeMap;

/// One interval of the merged step.
#[derive(Debug, Serialize)]
pub struct MergedInterval {
    /// The interval's index in the step.
    pub idx: i64,
    /// Ops every client completed in it.
    pub ops: u64,
    /// p99 of the clients' merged histograms of the interval.
    pub p99_us: Option<f64>,
}

/// One step of the group, every client's histograms merged.
#[derive(Debug, Serialize)]
pub struct MergedStep {
    /// The step.
    pub name: String,
    /// Clients that ran it.
    pub clients: usize,
    /// Ops of every client.
    pub ops: u64,
    /// Latencies in the merged histogram: every client's every op.
    pub count: u64,
    /// The clients' rates added up.
    pub ops_sec: f64,
    /// Percentiles of the merged histogram.
    pub p50_us: Option<f64>,
    /// p99 of the whole.
    pub p99_us: Option<f64>,
    /// p99.9 of the whole.
    pub p999_us: Option<f64>,
    /// The slowest op of any client.
    pub pmax_us: Option<f64>,
    /// Each client's own p99, in run order.
    pub client_p99_us: Vec<Option<f64>>,
    /// Their mean: not a percentile of anything, shown to say how far off it is.
    pub mean_client_p99_us: Option<f64>,
    /// The merged step per interval.
    pub intervals: Vec<MergedInterval>,
}

/// A client group seen as one run.
#[derive(Debug, Serialize)]
pub struct Merged {
    /// The --client-group name.
    pub group: String,
    /// Its clients' runs.
    pub runs: Vec<i64>,
    /// Its steps in run order, merged.
    pub steps: Vec<MergedStep>,
}

fn decode(run: i64, step: &str, text: &str) -> Result<LatencyHistogram, SelectError> {
    LatencyHistogram::from_v2_base64(text)
        .map_err(|e| SelectError::Bad(format!("run {run} step {step}: stored histogram: {e}")))
}

/// The runs of client group `group` merged per step: rates added, histograms merged
/// (whole steps and per interval), each client's p99 kept beside the whole's.
pub fn merge(store: &plumb_store::Store, group: &str) -> Result<Merged, SelectError> {
    let runs = store.client_runs(group)?;
    if runs.is_empty() {
        return Err(SelectError::Bad(format!(
            "no runs of client group {group:?} in the store {}; `plumb sql --client-group \
             {group} --clients N` makes them",
            store.shown()
        )));
    }
    // step name -> (order, whole, per interval, client p99s, ops, ops/s)
    struct Acc {
        order: (usize, i64),
        whole: LatencyHistogram,
        intervals: BTreeMap<i64, (u64, LatencyHistogram)>,
        client_p99: Vec<Option<f64>>,
        ops: u64,
        ops_sec: f64,
    }
    let mut steps: BTreeMap<String, Acc> = BTreeMap::new();
    for (ri, r) in runs.iter().enumerate() {
        let stored = store.run(r.id)?;
        let hists = store.histograms(r.id)?;
        for (step, ivs) in &stored.steps {
            let acc = steps.entry(step.name.clone()).or_insert_with(|| Acc {
                order: (ri, step.seq),
                whole: LatencyHistogram::new(),
                intervals: BTreeMap::new(),
                client_p99: Vec::new(),
                ops: 0,
                ops_sec: 0.0,
            });
            acc.ops += step.summary.ops;
            acc.ops_sec += step.summary.ops_sec;
            acc.client_p99.push(step.summary.p99_us);
            for (i, iv) in ivs.iter().enumerate() {
                acc.intervals
                    .entry(i as i64)
                    .or_insert_with(|| (0, LatencyHistogram::new()))
                    .0 += iv.ops;
            }
            for (name, idx, text) in hists.iter().filter(|(n, _, _)| *n == step.name) {
                let h = decode(r.id, name, text)?;
                if *idx == WHOLE_STEP {
                    acc.whole.merge(&h);
                } else {
                    acc.intervals
                        .entry(*idx)
                        .or_insert_with(|| (0, LatencyHistogram::new()))
                        .1
                        .merge(&h);
                }
            }
        }
    }
    let mut out: Vec<(usize, i64, MergedStep)> = steps
        .into_iter()
        .map(|(name, a)| {
            let known: Vec<f64> = a.client_p99.iter().flatten().copied().collect();
            (
                a.order.0,
                a.order.1,
                MergedStep {
                    name,
                    clients: a.client_p99.len(),
                    ops: a.ops,
                    count: a.whole.count(),
                    ops_sec: a.ops_sec,
                    p50_us: a.whole.quantile_us(0.5),
                    p99_us: a.whole.quantile_us(0.99),
                    p999_us: a.whole.quantile_us(0.999),
                    pmax_us: a.whole.max_us(),
                    mean_client_p99_us: (!known.is_empty())
                        .then(|| known.iter().sum::<f64>() / known.len() as f64),
                    client_p99_us: a.client_p99,
                    intervals: a
                        .intervals
                        .into_iter()
                        .map(|(idx, (ops, h))| MergedInterval {
                            idx,
                            ops,
                            p99_us: h.quantile_us(0.99),
                        })
                        .collect(),
                },
            )
        })
        .collect();
    out.sort_by_key(|(r, seq, _)| (*r, *seq));
    Ok(Merged {
        group: group.to_string(),
        runs: runs.iter().map(|r| r.id).collect(),
        steps: out.into_iter().map(|(_, _, s)| s).collect(),
    })
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

/// The merged group as `plumb clients` prints it: the whole's percentiles beside each
/// client's p99 and their (misleading) mean.
pub fn text(m: &Merged) -> String {
    let mut o = format!(
        "client group {}: runs {} (percentiles of the merged histograms)\n",
        m.group,
        m.runs
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut t = crate::format::table_left(&[
        "step",
        "clients",
        "ops/s",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "p99 by client",
        "mean of p99s",
    ]);
    for s in &m.steps {
        t.add_row(vec![
            s.name.clone(),
            s.clients.to_string(),
            format!("{:.0}", s.ops_sec),
            us(s.p50_us),
            us(s.p99_us),
            us(s.p999_us),
            us(s.pmax_us),
            s.client_p99_us
                .iter()
                .map(|v| us(*v))
                .collect::<Vec<_>>()
                .join(" "),
            us(s.mean_client_p99_us),
        ]);
    }
    o.push_str(&format!("{t}\n"));
    o.push_str("(the mean of the clients' p99 is not a percentile of anything; it is shown to say how far off averaging would be)\n");
    o
}
