//! What a family hands the one run lifecycle: a [`Subject`] brought up for one planned
//! run (an engine opened in its directory, a server started, the probes checked) that
//! says what it is, runs one step at a time through the kernel, says whether it died,
//! and closes. Everything around it (the data directory, the memory limit, the run row
//! and host snapshot, page-cache drops, the stop rule, the rate search, storing steps,
//! the finish) is [`crate::lifecycle`]'s, once for every family.

use crate::begin::DataPlace;
use crate::recording::Recording;
use crate::step::{Progress, StepOutcome};
use plumb_probes::diskstats::DeviceStats;
use plumb_probes::perf::HwCounterGroup;
use plumb_store::{Kind, StepRecord, Store, StoreError};
/// The paces and bounds a subject's steps run at, as its signatures name them.
pub use plumb_workloads::pace::{LatencyBound, Pace};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// Where a family brings its subject up for one run.
pub struct Place<'a> {
    /// The run's own directory, made by the lifecycle when the family asks for one
    /// ([`crate::family::Family::own_dir`]) and removed or kept after it.
    pub dir: Option<PathBuf>,
    /// Where the family makes what it makes itself (a server's root, the trials'
    /// files); `None`: the family's default.
    pub root: Option<PathBuf>,
    /// Keep what the run leaves on disk (its path is said).
    pub keep: bool,
    /// Where what happens while it comes up is said (an orphan swept, a server started).
    pub notes: &'a dyn Progress,
}

/// What the run row records of a subject, and what the lifecycle needs of it.
#[derive(Debug, Default)]
pub struct Header {
    /// The engine label, as compare groups runs by it.
    pub engine: String,
    /// Its release.
    pub version: String,
    /// Every option and setting recorded with the run (the memory limit and page-cache
    /// drops are added by the lifecycle).
    pub options: BTreeMap<String, String>,
    /// Where its data is, for the host snapshot and the device's counters.
    pub place: DataPlace,
    /// A server's root process, moved into the plan's memory limit with its children
    /// (an engine runs in this process, which enters the limit before it opens).
    pub pid: Option<u32>,
    /// Store each step's latency histograms (a client group's percentiles come from
    /// the merged counts).
    pub keep_histograms: bool,
}

/// The open run a subject's steps are stored in, with what a step needs to run.
pub struct Steps<'r, 's> {
    pub(crate) rec: &'r mut Recording<'s>,
    /// The run's id in the store.
    pub run_id: i64,
    /// The device under the run's data, for the steps' IO counters.
    pub disk: Option<&'r DeviceStats>,
    /// Hardware counters opened before any engine, or why there are none.
    pub hw: Result<&'r HwCounterGroup, String>,
    /// Set by Ctrl-C: a step stops at its next op.
    pub interrupt: &'r AtomicBool,
    /// Progress and notes.
    pub notes: &'r dyn Progress,
    /// Profile each measured window (perf's files go there).
    pub profile: Option<plumb_probes::profile::Profiling<'r>>,
    pub(crate) keep_histograms: bool,
}

impl Steps<'_, '_> {
    /// Stores a step as it ran under `name` and `kind`, its knobs in `config`: its
    /// record and intervals, its profile (or why there is none, said), its histograms
    /// when the subject keeps them. Returns the step's id. Every family's steps are
    /// stored here.
    pub fn store(
        &mut self,
        name: &str,
        kind: Kind,
        out: &StepOutcome,
        config: serde_json::Value,
    ) -> Result<i64, StoreError> {
        let step_id = self.rec.outcome(name, kind, out, config)?;
        if let (true, Some(h)) = (self.keep_histograms, &out.histograms) {
            let mut hists = vec![(plumb_store::clients::WHOLE_STEP, h.total.to_v2_base64())];
            hists.extend(
                h.intervals
                    .iter()
                    .enumerate()
                    .map(|(i, h)| (i as i64, h.to_v2_base64())),
            );
            self.rec.store().add_histograms(step_id, &hists)?;
        }
        match &out.profile {
            Some(Ok(folded)) => self.rec.store().add_profile(step_id, folded)?,
            Some(Err(why)) => self
                .notes
                .note(&format!("no profile of step {name}: {why}")),
            None => {}
        }
        Ok(step_id)
    }

    /// Stores a step a family measured without the kernel's outcome (a probe's
    /// report row), as the run's next one.
    pub fn record(
        &mut self,
        step: StepRecord,
        intervals: &[plumb_core::Interval],
    ) -> Result<i64, StoreError> {
        self.rec.step(step, intervals)
    }

    /// Something outside a step failed (a probe that could not set up): the run fails.
    pub fn fail(&mut self) {
        self.rec.fail();
    }

    /// The store, for what is written beside the run (a client group, a barrier,
    /// ceilings, options judged after the steps).
    pub fn store_mut(&mut self) -> &mut Store {
        self.rec.store()
    }
}

/// One family's subject, brought up for one planned run by
/// [`crate::family::Family::prepare`]. A family writes what only it knows: what the
/// subject is, how one step runs and is recorded, whether it died, how it closes.
/// Its errors are messages for the user, with their context.
pub trait Subject {
    /// What the run row records of it; asked once, before the run begins.
    fn header(&mut self) -> crate::failure::FamilyResult<Header>;

    /// Told once the run's row exists, before its first step (a client group to join,
    /// the run's first line).
    fn begun(&mut self, _steps: &mut Steps<'_, '_>) -> crate::failure::FamilyResult<()> {
        Ok(())
    }

    /// The steps' names, in the order they run.
    fn steps(&self) -> Vec<String>;

    /// Whether the page cache is dropped before step `i` when the plan asks for drops:
    /// every measured step but the first.
    fn drops_caches_before(&self, i: usize) -> bool {
        i > 0
    }

    /// Runs step `i` under `name` at `pace` (its planned pace when `None`) through
    /// the kernel and stores it in `steps`; returns the outcome that decides whether
    /// the run goes on.
    fn run_at(
        &mut self,
        i: usize,
        name: &str,
        pace: Option<Pace>,
        steps: &mut Steps<'_, '_>,
    ) -> crate::failure::FamilyResult<StepOutcome>;

    /// The latency bound step `i`'s rate search keeps (`--rate-search`), when it
    /// searches.
    fn search_bound(&self, _i: usize) -> Option<LatencyBound> {
        None
    }

    /// What is stored of step `i` run under `name` at exactly `pace`: its kind and
    /// config. A rate search stores its best probe with it as `STEP@max`, the search's
    /// account added under `rate_search`; `None` for a family that does not search.
    fn recorded(
        &self,
        _i: usize,
        _name: &str,
        _pace: Option<Pace>,
    ) -> Option<(Kind, serde_json::Value)> {
        None
    }

    /// Why the subject is gone (a server that died during a step), once it is: the
    /// run stops and fails with the steps it finished stored.
    fn died(&self) -> Option<String> {
        None
    }

    /// After the last step, before the run is closed: what the family keeps of the
    /// whole run (ceilings, verdicts judged over its steps). `host` is the snapshot
    /// taken when it began.
    fn finish(
        &mut self,
        _steps: &mut Steps<'_, '_>,
        _host: &plumb_host::HostSnapshot,
    ) -> crate::failure::FamilyResult<()> {
        Ok(())
    }

    /// Stops what it started (a server), closes what it opened; returns what stays
    /// on disk with `keep`, for the lifecycle to say.
    fn close(&mut self, _keep: bool) -> crate::failure::FamilyResult<Option<PathBuf>> {
        Ok(None)
    }
}
