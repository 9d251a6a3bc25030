//! Host inventory and hygiene checks for plumb.
//!
//! Benchmark results are often wrong for reasons outside the database: turbo left on, a
//! clock source that turns every timestamp into a slow hardware read, an SSD that was
//! mostly empty, a write cache that lies, a VM. This crate describes the host and the
//! storage under a data directory by reading `/proc` and `/sys` directly (below a root path
//! that tests point at fixture trees), turns that into a list of checks — each with a
//! verdict, one line of reason and one line of fix — and is stored with every run so a
//! report can show which checks differed between two runs.
//!
//! Linux only.

#![warn(missing_docs)]

pub mod affinity;
mod busy;
pub mod cgroup;
pub mod checks;
pub mod command;
pub mod geometry;
mod inventory;
pub mod kmsg;
pub mod platform;
mod render;
pub mod smart;
mod storage;
mod sysfs;

pub use busy::{busy_between, BusyProcess};
pub use command::{CannedTools, Runner};
pub use geometry::FsGeometry;
pub use inventory::{Cache, Clocksource, Cpu, Inventory, Memory, Virtualization};
pub use kmsg::KernelLog;
pub use platform::{Bios, CoreTypes};
pub use render::render_text;
pub use smart::DiskHealth;
pub use storage::{BlockDevice, Queue, Storage};
pub use sysfs::HostError;

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Everything recorded about the host for one run: what it is, what holds the data, and
/// the verdict of every hygiene check, so results can be judged and runs compared.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct HostSnapshot {
    /// Seconds since the Unix epoch when the snapshot was taken.
    pub taken_at_unix: u64,
    /// The machine.
    pub inventory: Inventory,
    /// The storage under the data directory; `None` when it could not be resolved (the
    /// `storage.resolve` check says why).
    pub storage: Option<Storage>,
    /// Processes that used CPU while the snapshot sampled (busiest first); `None` when not
    /// sampled.
    pub busy_processes: Option<Vec<BusyProcess>>,
    /// Every check, in a stable order.
    pub checks: Vec<Check>,
    /// Files that could not be read or parsed, each naming the file.
    pub notes: Vec<String>,
}

/// One hygiene check's outcome: stable id, verdict, why, and how to fix it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Check {
    /// Stable identifier, e.g. `cpu.turbo`, so runs can be compared check by check.
    pub id: String,
    /// How much it matters.
    pub verdict: Verdict,
    /// One line: what was found and why it matters.
    pub reason: String,
    /// One line: the command or setting that fixes it, when there is one.
    pub fix: Option<String>,
}

/// How much a check's finding matters for the trustworthiness of results.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing to worry about.
    Ok,
    /// Stated for the record, or could not be determined.
    Info,
    /// Results may be misleading; the reason says how.
    Warn,
    /// Results are very likely wrong (e.g. clocksource hpet).
    Fail,
}

impl Verdict {
    /// Lower-case name as shown in text output and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Info => "info",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        }
    }
}

/// What to describe and how, so the same code serves `plumb host`, every run, and tests.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Where `/proc`, `/sys`, `/etc` and `/dev` are: `/` normally, a fixture tree in tests.
    /// Syscalls (statvfs, stat, geteuid) are only used when this is `/`.
    pub root: PathBuf,
    /// The data directory whose storage is described.
    pub dir: PathBuf,
    /// A run's data size, when known, for the cached-vs-IO-bound statement.
    pub data_bytes: Option<u64>,
    /// A requested readahead/IO size in KiB, checked against `max_sectors_kb`.
    pub io_size_kb: Option<u64>,
    /// How long to sample `/proc/[pid]/stat` for busy processes; zero skips the sampling.
    pub busy_sample: Duration,
    /// Runs smartctl, nvme, dmesg, xfs_info and dumpe2fs: the real programs normally,
    /// recorded answers in tests.
    pub runner: Runner,
}

impl Options {
    /// Options for the live machine, describing the storage under `dir`, sampling busy
    /// processes for [`Options::DEFAULT_BUSY_SAMPLE`].
    pub fn for_dir(dir: impl Into<PathBuf>) -> Options {
        Options {
            root: PathBuf::from("/"),
            dir: dir.into(),
            data_bytes: None,
            io_size_kb: None,
            busy_sample: Self::DEFAULT_BUSY_SAMPLE,
            runner: Runner::system(),
        }
    }

    /// The busy-process sampling interval used by `plumb host`: long enough to see a busy
    /// process, short enough not to delay a run.
    pub const DEFAULT_BUSY_SAMPLE: Duration = Duration::from_millis(200);
}

impl Default for Options {
    /// The live machine, the current directory.
    fn default() -> Self {
        Options::for_dir(".")
    }
}

/// Takes a snapshot of the host and the storage under `opts.dir`.
///
/// Never panics: anything unreadable becomes `None` and, where it matters, an `info` check
/// or a note naming the file.
pub fn snapshot(opts: &Options) -> HostSnapshot {
    let fs = sysfs::Fs::new(&opts.root);
    let mut notes = Vec::new();
    let inventory = inventory::read(&fs, &opts.runner, &mut notes);
    let (storage, storage_err) = match storage::describe(&fs, &opts.dir) {
        Ok(s) => (Some(with_health(&fs, &opts.runner, s, &mut notes)), None),
        Err(e) => {
            notes.push(format!("storage: {e}"));
            (None, Some(e))
        }
    };
    let busy_processes = busy::measure(&fs, opts.busy_sample);
    let checks = checks::all(
        &inventory,
        storage.as_ref(),
        storage_err.as_deref(),
        busy_processes.as_deref(),
        opts.data_bytes,
        opts.io_size_kb,
    );
    HostSnapshot {
        taken_at_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        inventory,
        storage,
        busy_processes,
        checks,
        notes,
    }
}

/// Adds what is learnt by running tools (SMART, filesystem geometry) and the comparison
/// with the OS's device to a described storage.
fn with_health(
    fs: &sysfs::Fs,
    runner: &Runner,
    mut st: Storage,
    notes: &mut Vec<String>,
) -> Storage {
    st.health = smart::read(&st.devices, runner);
    let bsize = st.geometry.as_ref().and_then(|g| g.statvfs_bsize);
    st.geometry = Some(geometry::read(&st, runner, bsize));
    let data = st.physical_devices();
    match storage::describe(fs, std::path::Path::new("/")) {
        Ok(root) => {
            st.os_devices = root.physical_devices();
            st.shares_os_device = (!data.is_empty() && !st.os_devices.is_empty())
                .then(|| data.iter().any(|d| st.os_devices.contains(d)));
        }
        Err(e) => notes.push(format!("storage of /: {e}")),
    }
    st
}

impl HostSnapshot {
    /// The check with this id, if present.
    pub fn check(&self, id: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.id == id)
    }

    /// The worst verdict among the checks, for a one-word summary and exit codes.
    pub fn worst(&self) -> Verdict {
        self.checks
            .iter()
            .map(|c| c.verdict)
            .max()
            .unwrap_or(Verdict::Ok)
    }
}

/// How one check differs between two snapshots, so a comparison report can say the hosts
/// were not in the same state.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CheckChange {
    /// The check id.
    pub id: String,
    /// The check in the first snapshot, if it had it.
    pub a: Option<Check>,
    /// The check in the second snapshot, if it had it.
    pub b: Option<Check>,
}

/// The checks whose verdict differs between `a` and `b` (or that only one has), in `a`'s
/// order then `b`'s extras; reasons alone (e.g. a different free-space figure) don't count.
pub fn differing_checks(a: &HostSnapshot, b: &HostSnapshot) -> Vec<CheckChange> {
    let mut out = Vec::new();
    for ca in &a.checks {
        let cb = b.check(&ca.id);
        if cb.map(|c| c.verdict) != Some(ca.verdict) {
            out.push(CheckChange {
                id: ca.id.clone(),
                a: Some(ca.clone()),
                b: cb.cloned(),
            });
        }
    }
    for cb in &b.checks {
        if a.check(&cb.id).is_none() {
            out.push(CheckChange {
                id: cb.id.clone(),
                a: None,
                b: Some(cb.clone()),
            });
        }
    }
    out
}
