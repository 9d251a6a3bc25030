//! A probe run as text: its steps and ceilings, the rated-against-measured table and
//! the write-cache verdict of a disk probe, and the position scan; after a run (`plumb
//! probe`) and from a stored one (`plumb show`). The judging is [`crate::judged`]'s.

use crate::judged::{cache_line, Judged, CACHE_KEY, READ_AHEAD_KEY, SEEK_KEY};
use crate::rated::{self, Rated, StepView};
use crate::ProbeReport;
use plumb_report::{fixed, sig, table_left};
use plumb_store::StoredRun;

/// The judgement: the ratio table, then the write-cache verdict.
pub fn render(j: &Judged) -> String {
    let mut out = String::new();
    if let Some(r) = &j.rated {
        let model = r.model.as_deref().unwrap_or("the device");
        out.push_str(&format!("rated against measured ({model}, O_DIRECT)\n"));
        let mut t = table_left(&[
            "figure",
            "rated",
            "measured",
            "unit",
            "measured/rated",
            "verdict",
            "from",
        ]);
        for x in &j.ratios {
            t.add_row(vec![
                x.what.clone(),
                sig(Some(x.rated), 4),
                sig(x.measured, 4),
                x.unit.to_string(),
                x.ratio.map_or("-".into(), |v| format!("{v:.2}")),
                x.verdict.to_string(),
                x.source.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
        if let Some(tbw) = r.endurance_tbw {
            out.push_str(&format!(
                "note: endurance {} TBW rated; the probe cannot read how much the device has \
                 written (see its SMART data)\n",
                sig(Some(tbw), 4)
            ));
        }
    }
    if let Some(c) = &j.cache {
        out.push_str(&format!("commit durability: {}\n", cache_line(c)));
    }
    if let Some(m) = &j.seek {
        out.push_str(&format!("seek model: {}\n", m.message));
    }
    for r in &j.read_ahead {
        out.push_str(&format!("read-ahead: {}\n", r.message));
    }
    out
}

/// The table for a stored probe run, rebuilt from its steps and its `rated.*` options,
/// with the cache verdict stored at the time; `None` when the run holds neither.
pub fn from_stored(run: &StoredRun) -> Option<String> {
    let rated = Rated::from_options(&run.run.options);
    let views: Vec<StepView> = run
        .steps
        .iter()
        .map(|(s, _)| StepView {
            name: &s.name,
            config: &s.config,
            summary: &s.summary,
        })
        .collect();
    let mut out = String::new();
    if let Some(r) = &rated {
        let j = Judged {
            ratios: rated::ratios(r, &views),
            rated: rated.clone(),
            ..Judged::default()
        };
        out.push_str(&render(&j));
    }
    if let Some(c) = run.run.options.get(CACHE_KEY) {
        out.push_str(&format!("commit durability: {c}\n"));
    }
    if let Some(m) = run.run.options.get(SEEK_KEY) {
        out.push_str(&format!("seek model: {m}\n"));
    }
    for (_, r) in run
        .run
        .options
        .iter()
        .filter(|(k, _)| k.starts_with(READ_AHEAD_KEY))
    {
        out.push_str(&format!("read-ahead: {r}\n"));
    }
    (!out.is_empty()).then_some(out)
}

/// What a stored probe run's text report ends with: the position scan's table, then
/// the rated table and the commit verdict, each after a blank line; empty when it has
/// neither.
pub fn stored_tables(run: &StoredRun) -> String {
    let zcav = run
        .steps
        .iter()
        .map(|(s, _)| (s.name.as_str(), &s.config, s.summary.mb_sec));
    let mut out = String::new();
    for t in [zcav_table(zcav), from_stored(run)].into_iter().flatten() {
        out.push_str(&format!("\n{t}"));
    }
    out
}

/// The position scan's slices as a table: where each starts and how fast it read.
pub fn zcav_table<'a>(
    steps: impl Iterator<Item = (&'a str, &'a serde_json::Value, Option<f64>)>,
) -> Option<String> {
    let mut t = table_left(&["slice", "offset GiB", "MB/s"]);
    let mut n = 0;
    for (name, cfg, mbs) in steps.filter(|(n, _, _)| n.starts_with("zcav.")) {
        let off = cfg["offset"].as_u64().unwrap_or(0) as f64 / (1u64 << 30) as f64;
        t.add_row(vec![name.to_string(), format!("{off:.2}"), sig(mbs, 4)]);
        n += 1;
    }
    (n > 0).then(|| format!("read speed by position (zcav)\n{t}\n"))
}

/// The terminal report of a probe run: one row per step, the ceilings kept, and the
/// notes.
pub fn report(r: &ProbeReport, run_id: i64, quick: bool) -> String {
    let mut t = table_left(&[
        "step",
        "ops/s",
        "MB/s",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "CPU µs/op",
        "engine",
        "status",
    ]);
    for s in &r.steps {
        let m = &s.summary;
        t.add_row(vec![
            s.name.clone(),
            sig(Some(m.ops_sec), 4),
            sig(m.mb_sec, 4),
            sig(m.p50_us, 3),
            sig(m.p99_us, 3),
            sig(m.p999_us, 3),
            sig(m.pmax_us, 3),
            fixed(m.cpu_us_op, 2),
            s.config
                .get("engine")
                .and_then(|v| v.as_str())
                .unwrap_or("-")
                .to_string(),
            s.status.as_str().to_string(),
        ]);
    }
    let mut c = table_left(&["ceiling", "value", "unit"]);
    for x in &r.ceilings {
        c.add_row(vec![x.name.clone(), sig(Some(x.value), 4), x.unit.clone()]);
    }
    let mut out = format!("run {run_id}: probe steps\n{t}\n\nceilings kept for this host\n{c}\n");
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if quick {
        out.push_str(
            "note: --quick figures are indicative; run without --quick for ceilings to rely on\n",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judged::judge;
    use crate::rated::DeviceFacts;
    use plumb_core::StepSummary;
    use serde_json::json;

    #[test]
    fn a_judgement_is_stored_as_options_and_rendered() {
        let r = rated::parse(
            "[device]\nclass = \"hdd\"\nrpm = 7200\n[rated]\nseqread_mbps = 200\n",
            "x",
        )
        .unwrap();
        let cfg = [
            json!({"pattern": "seqread", "mode": "direct", "bs": 1048576}),
            json!({"pattern": "commit", "mode": "direct", "jobs": 1}),
        ];
        let sums = [
            StepSummary {
                ops: 10,
                ops_sec: 80.0,
                mb_sec: Some(84.0),
                ..StepSummary::default()
            },
            StepSummary {
                ops: 10,
                ops_sec: 1048.0,
                ..StepSummary::default()
            },
        ];
        let views = [
            StepView {
                name: "seqread.direct",
                config: &cfg[0],
                summary: &sums[0],
            },
            StepView {
                name: "commit.direct.t1",
                config: &cfg[1],
                summary: &sums[1],
            },
        ];
        let j = judge(Some(&r), &views, DeviceFacts::default());
        let o = j.options();
        assert_eq!(
            o["rated.seqread_mbps.ratio"],
            "0.42 far below rated (84.0 MB/s)"
        );
        assert!(
            o[CACHE_KEY].starts_with("warn: write cache likely volatile"),
            "{o:?}"
        );
        assert_eq!(o["durability.commit_bound"], "240");
        let text = render(&j);
        assert!(
            text.contains("far below rated") && text.contains("hdparm -W0"),
            "{text}"
        );
    }
}
