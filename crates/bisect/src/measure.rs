//! The figures a verdict rests on, measured by plumb's own children: a build's
//! instructions per op (`plumb icount`, its run stored and tagged), or two builds'
//! duet (`plumb ab --duet`, with `--until` for a midpoint). Each build's extra
//! arguments (its `args` file) are appended to the command its side runs.

use crate::error::BisectError;
use plumb_ab::ab::{AbPlan, Side};
use plumb_ab::icount::IcountPlan;
use plumb_report::ab::AbStep;
use std::path::Path;

/// A built side: its binary and the arguments it adds.
#[derive(Debug, Clone)]
pub struct Built<'a> {
    /// The commit, for messages and tags.
    pub commit: &'a str,
    /// The binary.
    pub bin: &'a Path,
    /// Arguments appended to the command.
    pub args: &'a [String],
}

/// Flags the bisect gives the measured command itself.
pub const OWNED: [&str; 4] = ["--store", "--tag", "--json", "--repeat"];

/// One counted run of `b`: the judged step (`step`, or the last counted one) and its
/// instructions per op, with the run's id.
pub fn count(
    b: &Built<'_>,
    command: &[String],
    step: Option<&str>,
    valgrind: &Path,
    store: &Path,
    tag: &str,
) -> Result<(String, f64, i64), BisectError> {
    let fail = |source| BisectError::Measure {
        commit: b.commit.to_string(),
        source: Box::new(source),
    };
    let mut cmd = command.to_vec();
    cmd.extend(["--store".into(), store.display().to_string()]);
    cmd.extend(["--tag".into(), tag.to_string()]);
    cmd.extend(b.args.iter().cloned());
    let plan = IcountPlan {
        valgrind: valgrind.to_path_buf(),
        bin: b.bin.to_path_buf(),
        command: cmd,
        settle: true,
    };
    let dir = tempfile::Builder::new()
        .prefix("plumb-bisect-")
        .tempdir()
        .map_err(|source| BisectError::Io {
            what: "creating a directory for callgrind's dumps".into(),
            source,
        })?;
    let out = plumb_ab::icount::run(&plan, dir.path()).map_err(fail)?;
    let doc: serde_json::Value = serde_json::from_slice(&out).map_err(|e| {
        fail(plumb_ab::ChildError::Output {
            who: "the counted run".into(),
            what: format!("its --json output did not parse: {e}"),
        })
    })?;
    let run = doc["run"]["id"].as_i64().unwrap_or(0);
    let counted: Vec<(String, f64)> = doc["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| {
            Some((
                s["name"].as_str()?.to_string(),
                s["summary"]["hw"]["instructions_op"].as_f64()?,
            ))
        })
        .collect();
    let found = match step {
        Some(name) => counted.iter().find(|(n, _)| n == name),
        None => counted.last(),
    };
    let (name, v) = found.cloned().ok_or_else(|| {
        let names: Vec<&str> = counted.iter().map(|(n, _)| n.as_str()).collect();
        fail(plumb_ab::ChildError::Output {
            who: format!("run {run}"),
            what: match step {
                Some(s) => format!("no counted step {s:?} (counted: {})", names.join(", ")),
                None => "no step was counted".into(),
            },
        })
    })?;
    Ok((name, v, run))
}

/// Whether `command`'s A/B is a duet (an embedded engine's `kv`) or interleaved (a
/// server's `sql` or `ib`: its processes cannot be held to half the CPUs, and a duet
/// refuses them).
pub fn is_duet(command: &[String]) -> bool {
    command.first().map(String::as_str) == Some("kv")
}

/// What one duet asks.
#[derive(Debug, Clone)]
pub struct DuetAsk<'a> {
    /// The command both sides run.
    pub command: &'a [String],
    /// The judged step, or the default.
    pub step: Option<&'a str>,
    /// Rounds at a fixed count, or the cap under `until`.
    pub rounds: u32,
    /// Stop once settled within ±this (a fraction), or changed.
    pub until: Option<f64>,
    /// Where the slices' runs go.
    pub store: &'a Path,
    /// Their tag prefix.
    pub tag: String,
}

/// `a` against `b` as a duet, or interleaved for a server's command ([`is_duet`]): the
/// judged step's verdict and the runs it rests on.
pub fn duet(
    a: &Built<'_>,
    b: &Built<'_>,
    ask: &DuetAsk<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<(AbStep, Vec<i64>), BisectError> {
    let fail = |source| BisectError::Measure {
        commit: format!("{} against {}", b.commit, a.commit),
        source: Box::new(source),
    };
    let side = |label, s: &Built<'_>| Side {
        label,
        bin: s.bin.to_path_buf(),
        args: s.args.to_vec(),
        env: Vec::new(),
    };
    let plan = AbPlan {
        sides: [side("A", a), side("B", b)],
        command: ask.command.to_vec(),
        rounds: Some(ask.rounds),
        duet: is_duet(ask.command),
        until: ask.until,
        power: false,
        alpha: 0.05,
        steps: ask.step.map(String::from).into_iter().collect(),
        tag: ask.tag.clone(),
        store: ask.store.to_path_buf(),
    };
    let o = plumb_ab::ab::run(&plan, progress).map_err(fail)?;
    let runs: Vec<i64> = o.runs[0].iter().chain(&o.runs[1]).copied().collect();
    let step = match ask.step {
        Some(name) => o.steps.iter().find(|s| s.step == name),
        None => o.steps.last(),
    }
    .cloned()
    .ok_or_else(|| {
        fail(plumb_ab::ChildError::Output {
            who: ask.tag.clone(),
            what: format!(
                "no judged step {}",
                ask.step.map_or(String::new(), |s| format!("{s:?}"))
            ),
        })
    })?;
    Ok((step, runs))
}
