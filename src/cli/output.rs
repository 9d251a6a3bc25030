//! The two ways a run is printed: the text report, or the one documented JSON shape
//! (see docs/json.md) shared by `kv --json` and `show --json`.

use plumb_report::{Reporter, TextReporter};
use plumb_store::StoredRun;

/// Prints a run to stdout.
pub fn print(r: &StoredRun, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&plumb_report::json::run(r))?
        );
    } else {
        print!("{}", TextReporter.render(r));
    }
    Ok(())
}
