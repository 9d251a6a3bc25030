//! Where every stored run begins, whatever its family (an engine's db_bench steps, a
//! server's sysbench or insert benchmark, the probes, the durability trials): its row,
//! the host snapshot beside it, the device under its data, its place in the suite, its
//! group of repeats and the observer's "run starting". One function, so a run row or a
//! snapshot cannot differ by the front end or family that began it.

use crate::lifecycle::{Observer, RunAt};
use crate::recording::Recording;
use plumb_plan::RunPlan;
use plumb_probes::diskstats::DeviceStats;
use plumb_store::{NewRun, Store, StoreError};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What the host snapshot and the run row need to know of where a run's data lives.
#[derive(Debug, Default, Clone)]
pub struct DataPlace {
    /// The data directory (the snapshot describes its filesystem and device); `None`
    /// for a remote server or an in-memory engine (the snapshot describes the temp dir).
    pub dir: Option<PathBuf>,
    /// The run's data size, when known, for the cached-vs-IO-bound statement.
    pub bytes: Option<u64>,
    /// An IO size in KiB the run will ask for, checked against the device's limit.
    pub io_size_kb: Option<u64>,
    /// The device measured when it is not the one under `dir` (a raw block device).
    pub device: Option<String>,
}

/// Who hears that the run starts, and the group of repeats it joins: a planned run
/// has both; `plumb probe` on its own has neither.
pub struct Announce<'o> {
    /// Told `run_starting` once the row exists.
    pub observer: &'o mut dyn Observer,
    /// Its place in the batch: (1-based index, total, estimated seconds left).
    pub at: (usize, usize, f64),
    /// `Some(group to join, or None to start one named after this run)`.
    pub group: Option<Option<i64>>,
}

/// A begun run: its open recording, the device under its data (for the steps' IO
/// counters) and the host snapshot stored with it (for what a family judges from it).
pub struct Begun<'s> {
    /// The run, open in the store.
    pub rec: Recording<'s>,
    /// The device under the data directory, when plumb can read its counters.
    pub disk: Option<DeviceStats>,
    /// The host as the run found it.
    pub host: plumb_host::HostSnapshot,
}

/// Where a run sits in its suite, as its recorded options say it (selectors such as
/// `s3,target=pg@16` and resume's groups read them).
pub fn place_options(plan: &RunPlan) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    o.insert("target".into(), plan.target.name.clone());
    o.insert("variant".into(), plan.variant.clone());
    if let Some(s) = &plan.size {
        o.insert("size".into(), s.clone());
    }
    o
}

/// Begins `run` (its provenance, plan, engine and options filled in by the family):
/// takes the host snapshot of `place`, finds the device under the data, records the
/// plan's place in its suite with the options, writes the row, joins the group and
/// tells the observer.
pub fn begin_run<'s>(
    store: &'s mut Store,
    mut run: NewRun,
    plan: &RunPlan,
    place: DataPlace,
    announce: Option<Announce<'_>>,
) -> Result<Begun<'s>, StoreError> {
    let disk = place
        .dir
        .as_deref()
        .and_then(|d| DeviceStats::for_path(d).ok());
    let host = plumb_host::snapshot(&plumb_host::Options {
        data_bytes: place.bytes,
        io_size_kb: place.io_size_kb,
        ..plumb_host::Options::for_dir(place.dir.clone().unwrap_or_else(std::env::temp_dir))
    });
    run.options.extend(place_options(plan));
    run.data_dir = place.dir.as_ref().map(|d| d.display().to_string());
    run.device = place
        .device
        .or_else(|| disk.as_ref().map(|d| d.name().to_string()));
    run.host = Some(host.clone());
    let mut rec = Recording::begin(store, &run)?;
    let run_id = rec.id();
    if let Some(a) = announce {
        if let Some(g) = a.group {
            rec.store()
                .set_group(run_id, g.unwrap_or(run_id), i64::from(plan.repeat))?;
        }
        a.observer.run_starting(RunAt {
            index: a.at.0,
            total: a.at.1,
            plan,
            run_id,
            dir: place.dir.as_deref(),
            secs_left: a.at.2,
        });
    }
    Ok(Begun { rec, disk, host })
}
