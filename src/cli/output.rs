//! The two ways a run is printed: the text report, or the one documented JSON shape
//! (see docs/json.md) shared by `kv --json` and `show --json`.

use plumb_report::{Reporter, TextReporter};
use plumb_store::StoredRun;
use serde_json::json;

/// The JSON document for a run: `{"run": {...}, "steps": [{..., "intervals": [...]}]}`.
pub fn to_json(r: &StoredRun) -> serde_json::Value {
    let steps: Vec<_> = r
        .steps
        .iter()
        .map(|(s, iv)| {
            let mut v = serde_json::to_value(s).expect("step serialises");
            v["intervals"] = serde_json::to_value(iv).expect("intervals serialise");
            v
        })
        .collect();
    json!({ "run": r.run, "steps": steps })
}

/// Prints a run to stdout.
pub fn print(r: &StoredRun, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        println!("{}", serde_json::to_string_pretty(&to_json(r))?);
    } else {
        print!("{}", TextReporter.render(r));
    }
    Ok(())
}
