//! The two ways a run is printed: the text report, or the one documented JSON shape
//! (see docs/json.md) shared by `kv --json` and `show --json`.

use anyhow::Context;
use plumb_report::attribution::{attribution, cpu_attribution, disk_ceilings, HostCeilings};
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
            let zcav = r
                .steps
                .iter()
                .map(|(s, _)| (s.name.as_str(), &s.config, s.summary.mb_sec));
            if let Some(t) = plumb_hwprobe::text::zcav_table(zcav) {
                print!("\n{t}");
            }
            if let Some(t) = plumb_hwprobe::text::from_stored(r) {
                print!("\n{t}");
            }
        }
        for line in bottom_up(r, store)? {
            println!("{line}");
        }
    }
    Ok(())
}

/// The attribution lines (with a blank line first): the run's steps against the disk
/// ceilings `plumb probe disk` measured, and a server run's against the cached-SELECT
/// ceiling; none when the run's host is unknown or has neither.
fn bottom_up(r: &StoredRun, store: &Store) -> anyhow::Result<Vec<String>> {
    let Some(host) = r
        .run
        .host
        .as_ref()
        .and_then(|h| h.inventory.hostname.as_deref())
    else {
        return Ok(Vec::new());
    };
    let ceilings = store
        .ceilings(host)
        .with_context(|| format!("reading the ceilings of host {host}"))?;
    let mut lines = match disk_ceilings(&ceilings).first() {
        Some(c) => {
            let probe = store
                .run(c.run_id)
                .with_context(|| format!("reading probe run {}", c.run_id))?;
            attribution(
                r,
                &HostCeilings {
                    ceilings: &ceilings,
                    disk_device: probe.run.device.as_deref(),
                },
            )
        }
        None => Vec::new(),
    };
    lines.extend(cpu_attribution(r, &ceilings));
    if lines.is_empty() {
        return Ok(lines);
    }
    Ok(std::iter::once(String::new()).chain(lines).collect())
}
