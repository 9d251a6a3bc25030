//! Run selectors shared by `compare` and `report`: a run id (`12`), a group of
//! repeats (`g12`), the finished runs of a suite (`s3`), or a filter (`tag=new`, `engine=rocksdb`, `version=11.8.1`,
//! `opt.threads=2`, several joined by commas, all of which must match).

use anyhow::{bail, Context};
use plumb_report::Version;
use plumb_store::{RunRecord, Store};

fn field<'a>(r: &'a RunRecord, key: &str) -> Option<&'a str> {
    match key {
        "tag" => r.tag.as_deref(),
        "engine" => Some(&r.engine),
        "version" => Some(&r.engine_version),
        "plumb" => Some(&r.plumb_version),
        "git" => r.git_hash.as_deref(),
        "status" => Some(r.status.as_str()),
        "workload" => Some(&r.workload),
        k => r
            .options
            .get(k.strip_prefix("opt.").unwrap_or(k))
            .map(String::as_str),
    }
}

/// The run ids a selector names, in id order; errors name the selector.
pub fn run_ids(store: &Store, sel: &str) -> anyhow::Result<Vec<i64>> {
    if let Ok(id) = sel.parse::<i64>() {
        store.run(id).with_context(|| format!("selector {sel:?}"))?;
        return Ok(vec![id]);
    }
    if let Some(sid) = sel.strip_prefix('s').and_then(|s| s.parse::<i64>().ok()) {
        store
            .suite(sid)
            .with_context(|| format!("selector {sel:?}"))?;
        let ids: Vec<i64> = store
            .suite_runs(sid)?
            .into_iter()
            .filter(|r| r.status == plumb_core::RunStatus::Ok)
            .map(|r| r.id)
            .collect();
        if ids.is_empty() {
            bail!("selector {sel:?}: suite {sid} has no finished run yet");
        }
        return Ok(ids);
    }
    if let Some(g) = sel.strip_prefix('g').and_then(|g| g.parse::<i64>().ok()) {
        let ids = store.group(g)?;
        if ids.is_empty() {
            bail!("selector {sel:?}: no group {g}; `plumb runs` shows each run's group");
        }
        return Ok(ids);
    }
    let mut filters = Vec::new();
    for part in sel.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            bail!(
                "selector {sel:?}: use a run id (12), a group (g12), a suite (s3), or key=value filters \
                 (tag, engine, version, plumb, git, status, workload, opt.NAME)"
            );
        };
        filters.push((k.trim(), v.trim()));
    }
    let wants_status = filters.iter().any(|(k, _)| *k == "status");
    let mut ids: Vec<i64> = store
        .runs(usize::MAX >> 1)?
        .into_iter()
        .filter(|r| wants_status || r.status == plumb_core::RunStatus::Ok)
        .filter(|r| filters.iter().all(|(k, v)| field(r, k) == Some(*v)))
        .map(|r| r.id)
        .collect();
    if ids.is_empty() {
        bail!("selector {sel:?}: no finished run matches; `plumb runs` lists what the store holds");
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Loads each selector as one version; the first is the base.
pub fn versions(store: &Store, selectors: &[String]) -> anyhow::Result<Vec<Version>> {
    selectors
        .iter()
        .map(|sel| {
            let runs = run_ids(store, sel)?
                .into_iter()
                .map(|id| store.run(id))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Version {
                label: sel.clone(),
                runs,
            })
        })
        .collect()
}
