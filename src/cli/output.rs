//! The two ways a run is printed: the text report, or the one documented JSON shape
//! (see docs/json.md) shared by `kv --json` and `show --json`.

use plumb_report::attribution::bottom_up;
use plumb_report::{Reporter, TextReporter};
use plumb_store::{Store, StoredRun};

/// Prints a run to stdout; the text report ends with the run's steps read against this
/// host's disk ceilings, when `plumb probe disk` measured some.
pub fn print(r: &StoredRun, as_json: bool, store: &Store) -> anyhow::Result<()> {
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&plumb_report::json::run(r))?
        );
    } else {
        print!("{}", TextReporter.render(r));
        if r.run.engine == "probe" {
            print!("{}", plumb_hwprobe::text::stored_tables(r));
        }
        for line in bottom_up(r, store)? {
            println!("{line}");
        }
    }
    Ok(())
}
