//! A plan's noise floor on this host, measured on purpose: the command runs as several
//! separate blocks of repeats (each block one invocation, as a CI job or a person would
//! run it), and the floor is the drift between the blocks' medians
//! (plumb_report::noise). The blocks are ordinary runs in the store, so `plumb check`
//! learns the same floor from them later, beside whatever history the plan had.

use crate::child;
use crate::ChildError;
use plumb_report::metrics::Metric;
use plumb_report::noise::Floor;
use plumb_store::Store;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// What a noise measurement runs.
#[derive(Clone)]
pub struct BlocksPlan {
    /// The plumb binary each block runs.
    pub bin: PathBuf,
    /// The command measured (`kv …`, `sql …`, `ib …`).
    pub command: Vec<String>,
    /// Blocks, each a separate invocation (at least [`plumb_report::noise::MIN_GROUPS`]).
    pub blocks: usize,
    /// Repeats per block.
    pub repeat: u32,
    /// The wait between blocks, so they sample more of the host's moods.
    pub pause: Duration,
    /// The figures whose floor is measured.
    pub metrics: Vec<&'static Metric>,
    /// The blocks' runs' tag.
    pub tag: String,
    /// Where the blocks store their runs.
    pub store: PathBuf,
}

/// The floors found.
#[derive(Debug, Clone)]
pub struct BlocksOutcome {
    /// The blocks the floors were learned from (this plan's history included), oldest
    /// first.
    pub blocks: Vec<String>,
    /// The measured steps.
    pub steps: Vec<String>,
    /// Each (step, metric id)'s floor, where enough blocks had a figure.
    pub floors: BTreeMap<(String, String), Floor>,
}

impl BlocksOutcome {
    /// The floors as `plumb noise --json` prints them, under the blocks' `tag`.
    pub fn to_json(&self, tag: &str) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .floors
            .iter()
            .map(|((step, metric), f)| serde_json::json!({"step": step, "metric": metric, "floor": f}))
            .collect();
        serde_json::json!({
            "tag": tag,
            "blocks": self.blocks,
            "floors": rows,
        })
    }

    /// The floors as `plumb noise` prints them: one line per step and metric of
    /// `metrics`, saying what blocked repeats can tell apart, or that no floor was found.
    pub fn text(&self, metrics: &[&Metric]) -> String {
        let mut out = format!(
            "noise floors on this host, from {} blocks of its plan ({}):\n",
            self.blocks.len(),
            self.blocks.join(" ")
        );
        for step in &self.steps {
            for m in metrics {
                out.push_str(&match self.floors.get(&(step.clone(), m.id.to_string())) {
                    Some(f) => format!(
                        "  {step} {}: floor {:.1}%, last A/A {:+.1}%: blocked repeats tell apart changes beyond {:.1}%\n",
                        m.id,
                        100.0 * f.floor,
                        100.0 * f.aa,
                        100.0 * f.floor
                    ),
                    None => format!(
                        "  {step} {}: no floor (fewer than {} blocks with a figure)\n",
                        m.id,
                        plumb_report::noise::MIN_GROUPS
                    ),
                });
            }
        }
        out
    }
}

/// Refuses a plan whose floor could not be learned, before any block runs.
fn check(p: &BlocksPlan) -> Result<(), ChildError> {
    let min = plumb_report::noise::MIN_GROUPS;
    if p.blocks < min {
        return Err(ChildError::Refused(format!(
            "--blocks {}: a floor needs at least {min} blocks (three differences between them)",
            p.blocks
        )));
    }
    if p.repeat == 0 {
        return Err(ChildError::Refused(
            "--repeat 0: give at least one run per block".into(),
        ));
    }
    child::check_command(&p.command, "plumb noise", "block")
}

/// Runs the blocks one after another (`progress` hears each) and learns the floors
/// from them and the plan's earlier blocks. A failed block stops it; the blocks before
/// it are kept in the store.
pub fn run(p: &BlocksPlan, progress: &mut dyn FnMut(&str)) -> Result<BlocksOutcome, ChildError> {
    check(p)?;
    let mut last: Vec<i64> = Vec::new();
    for b in 0..p.blocks {
        if b > 0 && !p.pause.is_zero() {
            std::thread::sleep(p.pause);
        }
        let who = format!("block {}", b + 1);
        progress(&format!("block {}/{}", b + 1, p.blocks));
        let mut cmd = Command::new(&p.bin);
        cmd.args(&p.command)
            .args(["--repeat", &p.repeat.to_string(), "--tag", &p.tag, "--json"])
            .arg("--store")
            .arg(&p.store)
            .stderr(std::process::Stdio::inherit());
        last = child::run(
            cmd,
            &who,
            "plumb",
            &p.command,
            "the blocks before it are kept in the store",
        )?;
    }
    let store = Store::open(&p.store)?;
    let runs: Vec<plumb_store::StoredRun> = last
        .iter()
        .map(|id| store.run(*id))
        .collect::<Result<_, _>>()?;
    let base: Vec<_> = runs.iter().map(|r| r.run.clone()).collect();
    let blocks = plumb_report::base::noise_blocks(&store, &base, &[])?;
    let steps = plumb_report::compare::measured_steps(runs.iter());
    let floors = plumb_report::noise::floors(&blocks, &steps, &p.metrics);
    Ok(BlocksOutcome {
        blocks: blocks.into_iter().map(|b| b.label).collect(),
        steps,
        floors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_blocks_or_repeats_are_refused_before_any_runs() {
        let mut p = BlocksPlan {
            bin: "/bin/false".into(),
            command: vec!["kv".into()],
            blocks: 3,
            repeat: 3,
            pause: Duration::ZERO,
            metrics: vec![],
            tag: "t".into(),
            store: "/nonexistent/s.sqlite".into(),
        };
        let e = run(&p, &mut |_| panic!("no block may start")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--blocks 3: a floor needs at least 4"),
            "{e}"
        );
        p.blocks = 4;
        p.repeat = 0;
        assert!(check(&p).unwrap_err().to_string().starts_with("--repeat 0"));
        p.repeat = 1;
        p.command = vec!["kv".into(), "--repeat".into(), "2".into()];
        assert!(check(&p)
            .unwrap_err()
            .to_string()
            .starts_with("--repeat after --"));
    }

    #[test]
    fn a_failed_block_is_named_and_says_what_was_kept() {
        let p = BlocksPlan {
            bin: "/bin/false".into(),
            command: vec!["kv".into()],
            blocks: 4,
            repeat: 1,
            pause: Duration::ZERO,
            metrics: vec![],
            tag: "t".into(),
            store: "/nonexistent/s.sqlite".into(),
        };
        let mut heard = Vec::new();
        let e = run(&p, &mut |s| heard.push(s.to_string()))
            .unwrap_err()
            .to_string();
        assert_eq!(heard, ["block 1/4"]);
        assert!(e.starts_with("block 1: `plumb kv` failed"), "{e}");
        assert!(
            e.ends_with("the blocks before it are kept in the store"),
            "{e}"
        );
    }
}
