//! Run selectors shared by `compare`, `report`, `history` and `check`: a run id (`12`),
//! a range of them (`12-16`), a group of repeats (`g12`), the finished runs of a suite (`s3`), or a filter (`tag=new`, `engine=rocksdb`, `version=11.8.1`,
//! `opt.threads=2`, `host=db7`, `cpu=…`, several joined by commas, all of which must
//! match). `host` makes the host a dimension of a fleet's runs: `plumb compare
//! s3,host=a s3,host=b` sets one host's runs of a suite against another's.

use crate::version::Version;
use plumb_store::{RunRecord, Store, StoreError};
use thiserror::Error;

/// A selector that names no runs, or a store that could not be read while resolving
/// one; the message names the selector and what to type instead.
#[derive(Debug, Error)]
pub enum SelectError {
    /// The selector (or the base it implies) names nothing usable; the text says why.
    #[error("{0}")]
    Bad(String),
    /// The store failed while a selector was read.
    #[error("selector {sel:?}: {source}")]
    Store {
        /// The selector.
        sel: String,
        /// The store's error.
        source: StoreError,
    },
    /// The store failed.
    #[error(transparent)]
    Db(#[from] StoreError),
}

macro_rules! bail {
    ($($t:tt)*) => { return Err(SelectError::Bad(format!($($t)*))) };
}
pub(crate) use bail;

/// A run's value for a selector key (`tag`, `engine`, `opt.NAME` …).
pub fn field<'a>(r: &'a RunRecord, key: &str) -> Option<&'a str> {
    match key {
        "tag" => r.tag.as_deref(),
        "engine" => Some(&r.engine),
        "version" => Some(&r.engine_version),
        "plumb" => Some(&r.plumb_version),
        "git" => r.git_hash.as_deref(),
        "status" => Some(r.status.as_str()),
        "workload" => Some(&r.workload),
        "host" => r.host.as_ref()?.inventory.hostname.as_deref(),
        "cpu" => r.host.as_ref()?.inventory.cpu.model.as_deref(),
        k => r
            .options
            .get(k.strip_prefix("opt.").unwrap_or(k))
            .map(String::as_str),
    }
}

/// The run ids a selector names, in id order; errors name the selector.
pub fn run_ids(store: &Store, sel: &str) -> Result<Vec<i64>, SelectError> {
    if let Ok(id) = sel.parse::<i64>() {
        if store.run_records(&[id])?.is_empty() {
            return Err(SelectError::Store {
                sel: sel.to_string(),
                source: plumb_store::StoreError::NoRun {
                    store: store.shown().to_string(),
                    run: id,
                },
            });
        }
        return Ok(vec![id]);
    }
    if let Some(sid) = sel.strip_prefix('s').and_then(|s| s.parse::<i64>().ok()) {
        store.suite(sid).map_err(|source| SelectError::Store {
            sel: sel.to_string(),
            source,
        })?;
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
    // A range of run ids, `12-16` (a subset of repeats, a stretch of history).
    if let Some((a, b)) = sel
        .split_once('-')
        .and_then(|(a, b)| Some((a.parse::<i64>().ok()?, b.parse::<i64>().ok()?)))
    {
        if a > b {
            bail!("selector {sel:?}: a range runs from the lower id to the higher (e.g. 12-16)");
        }
        // Heads only (id, group, status): a range never reads the runs' snapshots.
        let mut ids: Vec<i64> = store
            .run_heads()?
            .into_iter()
            .filter(|r| r.id >= a && r.id <= b && r.status == plumb_core::RunStatus::Ok)
            .map(|r| r.id)
            .collect();
        ids.sort_unstable();
        if ids.is_empty() {
            bail!("selector {sel:?}: no finished run with an id from {a} to {b}");
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
    // A suite narrowed by filters: `s3,host=db7`.
    let (within, rest) = match sel.split_once(',') {
        Some((head, rest)) if head.starts_with('s') && head[1..].parse::<i64>().is_ok() => {
            (Some(run_ids(store, head)?), rest)
        }
        _ => (None, sel),
    };
    let mut filters = Vec::new();
    for part in rest.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            bail!(
                "selector {sel:?}: use a run id (12), a range (12-16), a group (g12), a suite (s3), or key=value filters \
                 (tag, engine, version, plumb, git, status, workload, host, cpu, opt.NAME), \
                 after a suite if you like (s3,host=db7)"
            );
        };
        filters.push((k.trim(), v.trim()));
    }
    let wants_status = filters.iter().any(|(k, _)| *k == "status");
    // The filters the store's columns answer narrow the runs read in SQL; every filter
    // is then checked on the runs read (the host's LIKE may match more than the name).
    let mut sql = plumb_store::pages::RunFilter::default();
    for (k, v) in &filters {
        let v = Some(v.to_string());
        match *k {
            "engine" => sql.engine = v,
            "workload" => sql.workload = v,
            "tag" => sql.tag = v,
            "host" => sql.host = v,
            "status" => {
                if let Some(Ok(st)) = v.as_deref().map(str::parse::<plumb_core::RunStatus>) {
                    sql.status = Some(st);
                }
            }
            _ => {}
        }
    }
    if !wants_status {
        sql.status = Some(plumb_core::RunStatus::Ok);
    }
    let mut ids: Vec<i64> = store
        .runs_page(&sql)?
        .0
        .into_iter()
        .filter(|r| wants_status || r.status == plumb_core::RunStatus::Ok)
        .filter(|r| within.as_ref().is_none_or(|w| w.contains(&r.id)))
        .filter(|r| filters.iter().all(|(k, v)| field(r, k) == Some(*v)))
        .map(|r| r.id)
        .collect();
    if ids.is_empty() {
        bail!("selector {sel:?}: no finished run matches; `plumb runs` lists what the store holds");
    }
    ids.sort_unstable();
    Ok(ids)
}

/// The newest finished run's group of repeats (or the run itself) as a selector: what
/// `plumb check` judges when given none.
pub fn newest(store: &Store) -> Result<String, SelectError> {
    let Some(r) = store
        .runs(1)?
        .into_iter()
        .find(|r| r.status == plumb_core::RunStatus::Ok)
    else {
        return Err(SelectError::Bad(
            "check: the store holds no finished run; run a benchmark first".into(),
        ));
    };
    Ok(match r.group_id {
        Some(g) => format!("g{g}"),
        None => r.id.to_string(),
    })
}

/// The versions `selectors` name, or with none, every finished run of the store as one
/// version ("all"): what an export of the whole store reads.
pub fn versions_or_all(store: &Store, selectors: &[String]) -> Result<Vec<Version>, SelectError> {
    if !selectors.is_empty() {
        return versions(store, selectors);
    }
    let runs = store
        .runs(usize::MAX >> 1)?
        .into_iter()
        .filter(|r| r.status == plumb_core::RunStatus::Ok)
        .rev()
        .map(|r| store.run(r.id))
        .collect::<Result<Vec<_>, _>>()?;
    if runs.is_empty() {
        return Err(SelectError::Bad(format!(
            "store {}: no finished run to export; `plumb runs` lists what it holds",
            store.shown()
        )));
    }
    Ok(vec![Version {
        label: "all".into(),
        runs,
    }])
}

/// Each run of `versions` once, oldest first, for the formats that list runs rather
/// than versions.
pub fn distinct_runs(versions: &[Version]) -> Vec<plumb_store::StoredRun> {
    let mut runs: Vec<plumb_store::StoredRun> = Vec::new();
    for r in versions.iter().flat_map(|v| v.runs.iter()) {
        if !runs.iter().any(|x| x.run.id == r.run.id) {
            runs.push(r.clone());
        }
    }
    runs.sort_by_key(|r| r.run.id);
    runs
}

/// Run ids as ranges (`runs 1-3, run 7`), as a message names many runs.
pub fn ids_text(ids: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let mut j = i;
        while j + 1 < ids.len() && ids[j + 1] == ids[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("runs {}-{}", ids[i], ids[j])
        } else {
            format!("run {}", ids[i])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// Loads each selector as one version; the first is the base.
pub fn versions(store: &Store, selectors: &[String]) -> Result<Vec<Version>, SelectError> {
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

/// The one version a selector names (a run, a group, a suite, filters).
pub fn one(store: &Store, sel: &str) -> Result<Version, SelectError> {
    Ok(versions(store, &[sel.to_string()])?.remove(0))
}

/// Splits each version into one per value of `key` (`--by host`: the runs of one suite
/// on each host of a fleet), labelled `SELECTOR key=value`, in order of first run.
pub fn split_by(versions: Vec<Version>, key: &str) -> Result<Vec<Version>, SelectError> {
    let mut out: Vec<Version> = Vec::new();
    for v in versions {
        let mut parts: Vec<(String, Version)> = Vec::new();
        for r in v.runs {
            let value = field(&r.run, key).unwrap_or("unknown").to_string();
            match parts.iter_mut().find(|(k, _)| *k == value) {
                Some((_, p)) => p.runs.push(r),
                None => parts.push((
                    value.clone(),
                    Version {
                        label: format!("{} {key}={value}", v.label),
                        runs: vec![r],
                    },
                )),
            }
        }
        out.extend(parts.into_iter().map(|(_, p)| p));
    }
    if out.len() < 2 {
        bail!(
            "--by {key}: every run selected has the same {key} ({}), so there is nothing to \
             compare; select more runs, or another key (host, cpu, engine, version, tag, opt.NAME)",
            out.first().map_or("none".into(), |v| v.label.clone())
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_read_as_ranges() {
        assert_eq!(
            super::ids_text(&[1, 2, 3, 7, 9, 10]),
            "runs 1-3, run 7, runs 9-10"
        );
        assert_eq!(super::ids_text(&[4]), "run 4");
        assert_eq!(super::ids_text(&[]), "");
    }
}
