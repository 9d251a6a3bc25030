//! A plumb benchmark run as a child process: the command checked once before anything
//! runs, each invocation's runs read back from its `--json` output.

use crate::ChildError;

/// Refuses a command that is not a plumb benchmark, or that sets a flag the parent sets
/// for every `unit` it runs (`parent`: "plumb ab"; `unit`: "slice"), before the first
/// child starts rather than at its failure.
pub fn check_command(command: &[String], parent: &str, unit: &str) -> Result<(), ChildError> {
    if !matches!(
        command.first().map(String::as_str),
        Some("kv" | "sql" | "ib")
    ) {
        return Err(ChildError::Refused(
            "the command after -- must be a plumb benchmark (kv, sql or ib) with its arguments, \
             e.g. -- kv --db /data/ab --use-existing-db --benchmarks readrandom"
                .into(),
        ));
    }
    for reserved in ["--tag", "--json", "--store", "--repeat"] {
        if command
            .iter()
            .any(|w| w == reserved || w.starts_with(&format!("{reserved}=")))
        {
            return Err(ChildError::Refused(format!(
                "{reserved} after --: {parent} sets it for every {unit}; give it to {parent} instead (or drop it)"
            )));
        }
    }
    Ok(())
}

/// `PREFIX-UNIXTIME`: a tag for the runs of one invocation of the parent, so its runs
/// can be selected together later without the user naming them.
pub fn default_tag(prefix: &str) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("{prefix}-{secs}")
}

/// Runs a prepared child (`who` and `bin` name it in errors, `command` is what it was
/// asked, `kept` says what a failure leaves stored) and returns the ids of the runs
/// it stored.
pub fn run(
    mut cmd: std::process::Command,
    who: &str,
    bin: &str,
    command: &[String],
    kept: &'static str,
) -> Result<Vec<i64>, ChildError> {
    let out = cmd.output().map_err(|source| ChildError::Start {
        who: who.to_string(),
        bin: bin.to_string(),
        source,
    })?;
    if !out.status.success() {
        return Err(ChildError::Failed {
            who: who.to_string(),
            bin: bin.to_string(),
            command: command.join(" "),
            status: out.status,
            kept,
        });
    }
    run_ids(&out.stdout, who)
}

/// The ids of the runs in a child's `--json` output (one run, or an array with
/// `--repeat`); `who` names the child in errors. The ids, not the figures, are read:
/// every judgement reads the stored runs, so a child's output and the store never
/// disagree.
pub fn run_ids(stdout: &[u8], who: &str) -> Result<Vec<i64>, ChildError> {
    let bad = |what: &str| ChildError::Output {
        who: who.to_string(),
        what: what.to_string(),
    };
    let v: serde_json::Value =
        serde_json::from_slice(stdout).map_err(|_| bad("its --json output is not JSON"))?;
    let runs = match v {
        serde_json::Value::Array(a) => a,
        one => vec![one],
    };
    runs.iter()
        .map(|r| {
            r["run"]["id"]
                .as_i64()
                .ok_or_else(|| bad("a run without an id in its output"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_command_must_be_a_benchmark_without_the_flags_the_parent_sets() {
        assert!(check_command(&words("kv --benchmarks readrandom"), "plumb ab", "slice").is_ok());
        let e = check_command(&words("probe disk"), "plumb ab", "slice").unwrap_err();
        assert!(e.to_string().contains("kv, sql or ib"), "{e}");
        let e = check_command(&words("kv --tag=x"), "plumb noise", "block").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--tag after --: plumb noise sets it for every block; give it to plumb noise instead (or drop it)"
        );
    }

    #[test]
    fn run_ids_read_one_run_or_an_array_and_name_the_child_when_not() {
        assert_eq!(run_ids(br#"{"run":{"id":7}}"#, "side A").unwrap(), vec![7]);
        assert_eq!(
            run_ids(br#"[{"run":{"id":7}},{"run":{"id":9}}]"#, "block 1").unwrap(),
            vec![7, 9]
        );
        let e = run_ids(b"steps: 3", "side B").unwrap_err();
        assert_eq!(e.to_string(), "side B: its --json output is not JSON");
        let e = run_ids(br#"{"run":{}}"#, "block 2").unwrap_err();
        assert_eq!(e.to_string(), "block 2: a run without an id in its output");
    }
}
