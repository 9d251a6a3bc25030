//! CSV of every stored figure, long form (one figure per row) so no column set has to
//! be agreed in advance and nothing is left out.

use plumb_store::StoredRun;
use serde_json::Value;

/// Flattens a JSON object into `prefix.key` → number rows; strings and nulls are
/// skipped (a missing figure is absent, not 0).
fn flatten(prefix: &str, v: &Value, out: &mut Vec<(String, f64)>) {
    match v {
        Value::Number(n) => {
            if let Some(x) = n.as_f64() {
                out.push((prefix.to_string(), x));
            }
        }
        Value::Bool(b) => out.push((prefix.to_string(), f64::from(u8::from(*b)))),
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), v, out);
            }
        }
        _ => {}
    }
}

/// `run_id,group_id,tag,engine,engine_version,step_seq,step,interval,metric,value`:
/// summary figures have an empty `interval`; interval figures carry its index.
pub fn runs(runs: &[StoredRun]) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    let _ = w.write_record([
        "run_id",
        "group_id",
        "tag",
        "engine",
        "engine_version",
        "step_seq",
        "step",
        "interval",
        "metric",
        "value",
    ]);
    for r in runs {
        for (s, ivs) in &r.steps {
            let base = [
                r.run.id.to_string(),
                r.run.group_id.map(|g| g.to_string()).unwrap_or_default(),
                r.run.tag.clone().unwrap_or_default(),
                r.run.engine.clone(),
                r.run.engine_version.clone(),
                s.seq.to_string(),
                s.name.clone(),
            ];
            let mut rows = Vec::new();
            flatten(
                "",
                &serde_json::to_value(&s.summary).unwrap_or_default(),
                &mut rows,
            );
            for (k, v) in rows {
                let mut rec = base.to_vec();
                rec.extend([String::new(), k, v.to_string()]);
                let _ = w.write_record(&rec);
            }
            for (i, iv) in ivs.iter().enumerate() {
                let mut rows = Vec::new();
                flatten("", &serde_json::to_value(iv).unwrap_or_default(), &mut rows);
                for (k, v) in rows {
                    let mut rec = base.to_vec();
                    rec.extend([i.to_string(), k, v.to_string()]);
                    let _ = w.write_record(&rec);
                }
            }
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
