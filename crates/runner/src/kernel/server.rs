//! A gauge for a system under test that runs in processes of its own (a database
//! server): their CPU and context switches over the window, read from /proc at its two
//! ends only. Walking the server's process tree costs CPU that would count as plumb's,
//! so it is never read every second: the intervals between carry no server figure.
//! [`ServerGauge`] adds what the SQL and insert-benchmark families both want over the
//! window: perf stat of the server's processes and a CPU profile, so neither family
//! keeps a gauge of its own.

use super::mark::{Gauge, Mark};
use crate::metrics::HostNoise;
use plumb_core::{Interval, PerfCounted};
use plumb_probes::perfwindow::PerfWindow;
use plumb_probes::process::ProcessCounters;
use plumb_probes::proctree::{self, TreeSnapshot};
use plumb_probes::profile::Profiling;
use plumb_probes::profile::Recording;

/// Where the system under test runs, for its share of the machine's CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sut {
    /// In plumb's process (an embedded engine): its CPU is plumb's own.
    InProcess,
    /// In the process tree of this pid; `None` when plumb cannot see it (a server
    /// someone else runs), so its CPU is not known.
    Server(Option<u32>),
}

/// Reads the server's process tree when the window opens and when it closes.
#[derive(Debug, Clone)]
pub struct ServerTree {
    sut: Sut,
    /// The tree at the window's start and at its end (`None`: not read or unreadable).
    pub ends: [Option<TreeSnapshot>; 2],
}

impl ServerTree {
    /// A gauge of `sut`.
    pub fn new(sut: Sut) -> Self {
        ServerTree {
            sut,
            ends: [None, None],
        }
    }

    /// The tree now, when the system under test is a server plumb can see.
    fn read_tree(&self) -> Option<TreeSnapshot> {
        match self.sut {
            Sut::Server(Some(pid)) => proctree::tree_snapshot(pid),
            _ => None,
        }
    }

    /// What the server's processes spent over the window; `None` in process or when
    /// the tree was not read at both ends.
    pub fn spent(&self) -> Option<ProcessCounters> {
        match &self.ends {
            [Some(a), Some(b)] => Some(b.delta(a)),
            _ => None,
        }
    }

    /// The host's noise from mark `a` to mark `b`, with the system under test's CPU
    /// not counted as outside where it is known: always in process (it is plumb's), a
    /// server's only over the `whole` window, from its first mark to its last (its tree
    /// is read there only); over an interval between, outside is not known.
    pub fn noise<X: Copy>(&self, a: &Mark<X>, b: &Mark<X>, whole: bool) -> HostNoise {
        let server_us = match self.sut {
            Sut::InProcess => Some(0),
            Sut::Server(_) if whole => self.spent().map(|s| s.cpu_us()),
            Sut::Server(_) => None,
        };
        b.noise_beside(a, server_us)
    }

    /// Interval `iv` (from mark `a` to `b` of the window `first`..`last`) with the
    /// host's noise beside the server: what a server family adds to the kernel's
    /// 1-second series (the server's CPU known over the whole window only).
    pub fn beside<X: Copy>(
        &self,
        (first, last): (&Mark<X>, &Mark<X>),
        a: &Mark<X>,
        b: &Mark<X>,
        iv: Interval,
    ) -> Interval {
        let noise = self.noise(a, b, a.at == first.at && b.at == last.at);
        Interval {
            steal_pct: noise.steal_pct,
            outside_cpu_pct: noise.outside_cpu_pct,
            ..iv
        }
    }
}

impl Gauge for ServerTree {
    type Reading = ();

    fn read(&mut self) {}

    fn opened(&mut self) {
        self.ends[0] = self.read_tree();
    }

    fn closed(&mut self) {
        self.ends[1] = self.read_tree();
    }
}

/// A server's gauge, the same for every family that drives one (the SQL steps and the
/// insert benchmark): its process tree at the window's ends ([`ServerTree`]), perf stat
/// of its processes over the window ([`PerfWindow`], all events at once or one group at
/// a time on the marks), and, when asked, a CPU profile of plumb and the server.
pub struct ServerGauge<'a> {
    /// The server's processes at the window's ends.
    pub tree: ServerTree,
    /// perf stat of the server's processes over the window.
    pub perf: PerfWindow,
    /// Where the profile's data goes, when one is asked for, and the step's index (its
    /// name among the profiles and perf's files).
    profile: Option<Profiling<'a>>,
    index: usize,
    /// Seconds per group of perf events (0: all at once).
    perf_groups: u32,
    recording: Option<Result<Recording, String>>,
    /// The window's profile (folded stacks), when asked for, or why there is none.
    pub profiled: Option<Result<String, String>>,
    /// Whose processes perf counted: `server`, `plumb` (an embedded engine's, counted
    /// only when groups were asked for, as a key-value step does), or `None`.
    pub perf_whose: Option<&'static str>,
}

impl<'a> ServerGauge<'a> {
    /// A gauge of `sut` for the step at `index`, its perf events in groups of
    /// `perf_groups` seconds (0: all at once), profiling into `profile` when given.
    pub fn new(sut: Sut, index: usize, perf_groups: u32, profile: Option<Profiling<'a>>) -> Self {
        ServerGauge {
            tree: ServerTree::new(sut),
            perf: PerfWindow::new(perf_groups),
            profile,
            index,
            perf_groups,
            recording: None,
            profiled: None,
            perf_whose: None,
        }
    }
}

impl Gauge for ServerGauge<'_> {
    type Reading = ();

    fn read(&mut self) {
        self.perf.mark();
    }

    fn opened(&mut self) {
        self.tree.opened();
        // Every server process alive now, its root first: the step's backends connected
        // before the window opened; what the root forks later perf counts through it.
        let root = match self.tree.sut {
            Sut::Server(Some(pid)) => Some(pid),
            _ => None,
        };
        let server: Option<Vec<u32>> = self.tree.ends[0].as_ref().map(|s| {
            root.into_iter()
                .chain(s.procs.keys().copied().filter(|p| Some(*p) != root))
                .collect()
        });
        self.recording = self.profile.map(|p| {
            let mut pids = vec![std::process::id()];
            pids.extend(server.iter().flatten());
            plumb_probes::profile::start(p, &pids, &format!("step{}", self.index))
        });
        let counted = match (server, self.tree.sut) {
            (Some(pids), _) => Some((pids, "server")),
            // An embedded engine (the insert benchmark on a key-value engine) runs in
            // plumb's process: counted in turn when asked, as `plumb kv` does.
            (None, Sut::InProcess) if self.perf_groups > 0 => {
                Some((vec![std::process::id()], "plumb"))
            }
            _ => None,
        };
        if let Some((pids, whose)) = counted {
            let name = format!("plumb-{}-step{}", std::process::id(), self.index);
            self.perf.open(&pids, &name);
            self.perf_whose = Some(whose);
        }
    }

    fn closed(&mut self) {
        self.tree.closed();
        self.profiled = self.recording.take().map(|r| r.and_then(|r| r.stop()));
        self.perf.close();
    }
}

/// What `perf` counted over a step's window per op, as a step stores it: counted in turn,
/// each event over its slices' seconds divided by those seconds' ops (from the step's
/// 1-second series `intervals`); at once, over the window's `total` ops. `None` when
/// nothing was started (no processes to count); perf's refusal is kept in
/// `unavailable`.
pub fn perf_counted(
    perf: &PerfWindow,
    whose: &str,
    intervals: &[Interval],
    total: u64,
) -> Option<PerfCounted> {
    let ops: Vec<u64> = intervals.iter().map(|i| i.ops).collect();
    let secs: Vec<f64> = intervals.iter().map(|i| i.secs).collect();
    Some(match perf.figures(&ops, &secs, total)? {
        Ok(f) => PerfCounted {
            whose: whose.to_string(),
            unavailable: f.unavailable(),
            per_op: f.per_op,
            counted_secs: f.counted_secs,
        },
        Err(why) => PerfCounted {
            whose: whose.to_string(),
            unavailable: vec![why],
            ..PerfCounted::default()
        },
    })
}
