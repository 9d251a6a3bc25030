//! A plumb benchmark run as a child process, slice by slice (`plumb ab`) or block by
//! block (`plumb noise`): the command checked once before anything runs, each
//! invocation's runs read back from its `--json` output.

use anyhow::{bail, Context};

/// Refuses a command that is not a plumb benchmark, or that sets a flag the parent sets
/// for every `unit` it runs (`parent`: "plumb ab"; `unit`: "slice").
pub(super) fn check_command(command: &[String], parent: &str, unit: &str) -> anyhow::Result<()> {
    if !matches!(
        command.first().map(String::as_str),
        Some("kv" | "sql" | "ib")
    ) {
        bail!(
            "the command after -- must be a plumb benchmark (kv, sql or ib) with its arguments, \
             e.g. -- kv --db /data/ab --use-existing-db --benchmarks readrandom"
        );
    }
    for reserved in ["--tag", "--json", "--store", "--repeat"] {
        if command
            .iter()
            .any(|w| w == reserved || w.starts_with(&format!("{reserved}=")))
        {
            bail!("{reserved} after --: {parent} sets it for every {unit}; give it to {parent} instead (or drop it)");
        }
    }
    Ok(())
}

/// `PREFIX-UNIXTIME`: a tag for the runs of one invocation of the parent.
pub(super) fn default_tag(prefix: &str) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("{prefix}-{secs}")
}

/// The ids of the runs in a child's `--json` output (one run, or an array with
/// `--repeat`); `who` names the child in errors.
pub(super) fn run_ids(stdout: &[u8], who: &str) -> anyhow::Result<Vec<i64>> {
    let v: serde_json::Value = serde_json::from_slice(stdout)
        .with_context(|| format!("{who}: its --json output is not JSON"))?;
    let runs = match v {
        serde_json::Value::Array(a) => a,
        one => vec![one],
    };
    runs.iter()
        .map(|r| {
            r["run"]["id"]
                .as_i64()
                .with_context(|| format!("{who}: a run without an id in its output"))
        })
        .collect()
}
