//! The JSON documents plumb prints: one run (`kv --json`, `show --json`, docs/json.md)
//! and a report of several runs with their comparison (docs/report.schema.json).

use crate::compare::Comparison;
use plumb_store::StoredRun;
use serde_json::{json, Value};

/// `{"run": {...}, "steps": [{..., "intervals": [...]}]}`.
pub fn run(r: &StoredRun) -> Value {
    let steps: Vec<Value> = r
        .steps
        .iter()
        .map(|(s, iv)| {
            let mut v = serde_json::to_value(s).unwrap_or(Value::Null);
            v["intervals"] = serde_json::to_value(iv).unwrap_or(Value::Null);
            v
        })
        .collect();
    json!({ "run": r.run, "steps": steps })
}

/// `{"schema": "plumb-report/1", "runs": [run…], "comparison": {...} | null}`.
pub fn report(runs: &[StoredRun], comparison: Option<&Comparison>) -> Value {
    json!({
        "schema": "plumb-report/1",
        "runs": runs.iter().map(run).collect::<Vec<_>>(),
        "comparison": comparison,
    })
}
