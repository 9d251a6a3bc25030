//! What a new run is judged against when no base is named: the earlier runs of its
//! plan, moved by what people said of the plan's changes (an expected change starts
//! the base at its first run; a fixed one leaves its runs out), and the noise floors
//! learned from the store's other blocks of the same plan on the same host. `plumb
//! check`, `history`, `compare` and the served pages all pick a base here, so a figure
//! in the browser is the figure in the terminal.

use crate::select::{bail, SelectError};
use crate::version::Version;
use plumb_store::{ChangeRecord, RunRecord, Store, TriageState};
use std::collections::{BTreeMap, BTreeSet};

/// What makes two runs "the same plan" for a history: the stored plan without its seed
/// and repeat index (each invocation draws a seed from the clock, and each repeat has
/// its own), hashed as plumb_plan::hash_of hashes a plan (the store keeps it per run).
pub fn plan_identity(plan: Option<&serde_json::Value>) -> Option<String> {
    plumb_store::plan_key::plan_identity(plan?)
}

/// Whether a triaged change keeps run `id` out of its plan's base: runs before an
/// expected change's first run (the new level is the base), and the runs a fixed change
/// showed in (judged against the level before it).
pub fn left_out_by(changes: &[ChangeRecord], id: i64) -> Option<&ChangeRecord> {
    let newest_expected = changes
        .iter()
        .filter(|c| c.state == TriageState::Expected)
        .max_by_key(|c| c.at_run);
    if let Some(c) = newest_expected.filter(|c| id < c.at_run) {
        return Some(c);
    }
    changes
        .iter()
        .find(|c| c.state == TriageState::Fixed && (c.at_run..=c.last_run).contains(&id))
}

/// The base made of the plan's history: the last `groups` groups of runs of the same
/// plan as `new` (equal but for seed and repeat), made before it, without the runs its
/// triaged changes leave out. The label says when a change moved it.
pub fn history_base(store: &Store, new: &Version, groups: usize) -> Result<Version, SelectError> {
    let hashes: BTreeSet<String> = new
        .runs
        .iter()
        .filter_map(|r| plan_identity(r.run.plan.as_ref()))
        .collect();
    let Some(first) = new.runs.iter().map(|r| r.run.id).min() else {
        bail!("check: {} holds no run", new.label);
    };
    if hashes.is_empty() {
        bail!(
            "check: the runs of {} carry no plan hash (stored before plans were kept); \
             give --base SELECTOR",
            new.label
        );
    }
    let mut triaged: Vec<ChangeRecord> = Vec::new();
    for h in &hashes {
        triaged.extend(store.base_changes(h)?);
    }
    let mut moved_by: BTreeSet<i64> = BTreeSet::new();
    let keys: Vec<String> = hashes.iter().cloned().collect();
    let mut earlier: Vec<RunRecord> = store
        .runs_of_plans(&keys)?
        .into_iter()
        .filter(|r| r.id < first && r.status == plumb_core::RunStatus::Ok)
        .filter(|r| match left_out_by(&triaged, r.id) {
            Some(c) => {
                moved_by.insert(c.id);
                false
            }
            None => true,
        })
        .collect();
    earlier.sort_by_key(|r| std::cmp::Reverse(r.id));
    let mut picked: Vec<i64> = Vec::new();
    let mut seen_groups: Vec<i64> = Vec::new();
    for r in earlier {
        let g = r.group_id.unwrap_or(r.id);
        if !seen_groups.contains(&g) {
            if seen_groups.len() == groups {
                break;
            }
            seen_groups.push(g);
        }
        picked.push(r.id);
    }
    if picked.is_empty() {
        if !moved_by.is_empty() {
            bail!(
                "check: no earlier run of the plan of {} after its triaged change(s) {} \
                 (expected: the base starts at the change's first run); run it once more \
                 at the new level, or give --base SELECTOR",
                new.label,
                moved_by
                    .iter()
                    .map(|i| format!("#{i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        bail!(
            "check: no earlier run of the plan of {} (the same plan but for its seed); run \
             it before the change, or give --base SELECTOR",
            new.label
        );
    }
    picked.sort_unstable();
    let runs = picked
        .iter()
        .map(|id| store.run(*id))
        .collect::<Result<Vec<_>, _>>()?;
    let moved = if moved_by.is_empty() {
        String::new()
    } else {
        format!(
            ", moved by triaged change {}",
            moved_by
                .iter()
                .map(|i| format!("#{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Ok(Version {
        label: format!("history ({} earlier runs of its plan{moved})", picked.len()),
        runs,
    })
}

/// Whether both sides were counted by callgrind (`plumb icount`); refuses a check
/// with counted runs on one side only, whose times are callgrind's (~50× slow).
pub fn counted_sides(base: &Version, new: &Version) -> Result<bool, SelectError> {
    let all: Vec<bool> = base
        .runs
        .iter()
        .chain(new.runs.iter())
        .map(crate::warnings::counted)
        .collect();
    if all.iter().all(|&c| c) {
        return Ok(true);
    }
    if all.iter().any(|&c| c) {
        bail!(
            "check: {} and {} mix runs counted under callgrind (plumb icount) with native \
             ones; callgrind's times are ~50× slow and its instructions exact: check counted \
             runs against counted runs",
            base.label,
            new.label
        );
    }
    Ok(false)
}

/// The blocks of history a noise floor is learned from: the groups of repeats of the
/// same plan (but for seed and repeat), the same engine build and the same host as
/// the base's runs, oldest first, the newest [`crate::noise::MAX_GROUPS`] of them,
/// leaving out the runs judged.
pub fn noise_blocks(
    store: &Store,
    base: &[RunRecord],
    judged: &[i64],
) -> Result<Vec<Version>, SelectError> {
    type Key = (String, String, Option<String>);
    let key = |r: &RunRecord| -> Option<Key> {
        Some((
            plan_identity(r.plan.as_ref())?,
            r.engine_version.clone(),
            r.host.as_ref().and_then(|h| h.inventory.hostname.clone()),
        ))
    };
    let keys: BTreeSet<Key> = base.iter().filter_map(key).collect();
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let plans: Vec<String> = keys
        .iter()
        .map(|k| k.0.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut groups: BTreeMap<i64, Vec<i64>> = Default::default();
    for r in store.runs_of_plans(&plans)? {
        if r.status == plumb_core::RunStatus::Ok
            && !judged.contains(&r.id)
            && key(&r).is_some_and(|k| keys.contains(&k))
        {
            groups
                .entry(r.group_id.unwrap_or(r.id))
                .or_default()
                .push(r.id);
        }
    }
    let newest = groups.len().saturating_sub(crate::noise::MAX_GROUPS);
    groups
        .into_iter()
        .skip(newest)
        .map(|(g, ids)| {
            // Floors read summaries only: the blocks' intervals are never loaded.
            Ok(Version {
                label: format!("g{g}"),
                runs: store.runs_summaries(&ids)?,
            })
        })
        .collect()
}

/// The ops/s floors of the first version's plan on its host, learned from every other
/// block in the store (none of `versions`' runs among them): what `compare`, `history`
/// and `ab` print beside each change.
pub fn learned_floors(
    store: &Store,
    versions: &[Version],
) -> Result<BTreeMap<(String, String), crate::noise::Floor>, SelectError> {
    let Some(base) = versions.first() else {
        return Ok(Default::default());
    };
    let judged: Vec<i64> = versions
        .iter()
        .flat_map(|v| v.runs.iter().map(|r| r.run.id))
        .collect();
    let blocks = noise_blocks(
        store,
        &base.runs.iter().map(|r| r.run.clone()).collect::<Vec<_>>(),
        &judged,
    )?;
    Ok(crate::noise::floors(
        &blocks,
        &crate::version::measured_steps(versions.iter().flat_map(|v| v.runs.iter())),
        &[crate::metrics::metric("ops_sec")],
    ))
}

#[cfg(test)]
mod unit {
    use super::*;

    fn change(id: i64, state: TriageState, at: i64, last: i64) -> ChangeRecord {
        ChangeRecord {
            id,
            plan: "p".into(),
            label: "l".into(),
            step: "s".into(),
            metric: "ops_sec".into(),
            direction: "regression".into(),
            at_run: at,
            before_run: None,
            last_run: last,
            ratio: 0.8,
            cause: None,
            host: None,
            reference: false,
            at_time: String::new(),
            seen: 1,
            first_seen: String::new(),
            last_seen: String::new(),
            state,
            note: None,
            set_by: None,
            set_at: None,
            host_wide: false,
        }
    }

    #[test]
    fn an_expected_change_starts_the_base_and_a_fixed_one_leaves_its_runs_out() {
        let cs = [
            change(1, TriageState::Expected, 10, 12),
            change(2, TriageState::Fixed, 20, 22),
            change(3, TriageState::Expected, 5, 6),
        ];
        // The newest expected change (first run 10) starts the base.
        assert_eq!(left_out_by(&cs, 9).map(|c| c.id), Some(1));
        assert_eq!(left_out_by(&cs, 10), None);
        assert_eq!(left_out_by(&cs, 21).map(|c| c.id), Some(2));
        assert_eq!(left_out_by(&cs, 23), None);
    }

    #[test]
    fn the_plan_identity_ignores_seed_and_repeat_only() {
        let a = serde_json::json!({"seed": 1, "repeat": 0, "step": "readrandom"});
        let b = serde_json::json!({"seed": 2, "repeat": 3, "step": "readrandom"});
        let c = serde_json::json!({"seed": 2, "repeat": 3, "step": "readseq"});
        assert_eq!(plan_identity(Some(&a)), plan_identity(Some(&b)));
        assert_ne!(plan_identity(Some(&a)), plan_identity(Some(&c)));
        assert_eq!(plan_identity(None), None);
    }
}
