//! A gauge for a system under test that runs in processes of its own (a database
//! server): their CPU and context switches over the window, read from /proc at its two
//! ends only. Walking the server's process tree costs CPU that would count as plumb's,
//! so it is never read every second: the intervals between carry no server figure.

use super::mark::{Gauge, Mark};
use crate::metrics::HostNoise;
use plumb_probes::process::ProcessCounters;
use plumb_probes::proctree::{self, TreeSnapshot};

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
