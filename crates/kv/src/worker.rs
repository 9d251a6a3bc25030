//! The key-value family's handle on a step's thread: what the step asks of the thread
//! (its role, the engine, the payload, the permutation) over the kernel's [`Lane`],
//! whose loop times every op (see [`plumb_runner::kernel`]).

use crate::config::StepConfig;
use plumb_core::{Target, TargetError};
use plumb_runner::kernel::{Lane, OpClock};
use plumb_runner::pacing::Pacer;
use plumb_workloads::Permutation;

/// Which part a worker plays in its step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A measured worker with index `t` among `cfg.threads`.
    Measured(usize),
    /// The rate-limited writer beside the readers of a *whilewriting step.
    Writer,
}

/// Read-only inputs shared by a step's workers.
pub(crate) struct WorkerEnv<'a> {
    pub(crate) cfg: &'a StepConfig,
    pub(crate) target: &'a dyn Target,
    pub(crate) payload: &'a [u8],
    pub(crate) perm: &'a Permutation,
    pub(crate) all_present: bool,
}

/// A worker thread's handle on the runner, given to [`crate::Workload::run`]: what the
/// step asks of this thread, and [`Worker::drive`], the only way its ops get timed.
pub struct Worker<'a> {
    env: &'a WorkerEnv<'a>,
    lane: &'a Lane<'a>,
}

impl<'a> Worker<'a> {
    /// The thread's lane, for what an op needs of the kernel beside its clock (where
    /// the step is in time: [`Lane::since_open`]).
    pub fn lane(&self) -> &'a Lane<'a> {
        self.lane
    }

    /// The handle of the thread of `lane`.
    pub(crate) fn new(env: &'a WorkerEnv<'a>, lane: &'a Lane<'a>) -> Self {
        Worker { env, lane }
    }

    /// This thread's part: a measured worker (and its index) or the paced writer.
    pub fn role(&self) -> Role {
        if self.lane.writer() {
            Role::Writer
        } else {
            Role::Measured(self.lane.index())
        }
    }

    /// The thread's index for seeding and slicing: 0..threads for measured workers,
    /// `threads` for the writer.
    pub fn index(&self) -> usize {
        self.lane.index()
    }

    /// The step's parameters.
    pub fn cfg(&self) -> &'a StepConfig {
        self.env.cfg
    }

    /// The engine the step runs against.
    pub fn target(&self) -> &'a dyn Target {
        self.env.target
    }

    /// The step's shared value payload (compressible as db_bench's).
    pub fn payload(&self) -> &'a [u8] {
        self.env.payload
    }

    /// The step's bijection of 0..num (for filluniquerandom).
    pub fn permutation(&self) -> &'a Permutation {
        self.env.perm
    }

    /// Every key in 0..num is known to exist, so a read that misses is an error.
    pub fn all_present(&self) -> bool {
        self.env.all_present
    }

    /// Runs `op` until `quota` measured ops, the step's end or an error: closed-loop
    /// (each op starts when the previous ended), or open-loop when the step has a
    /// [`StepConfig::pace`], this thread taking its share of the rate. `op` returns
    /// (ops counted, user bytes); zero ops means this thread has nothing left to do.
    #[inline]
    pub fn drive<F>(&mut self, quota: u64, op: F) -> Result<(), TargetError>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), TargetError>,
    {
        let cfg = self.env.cfg;
        match cfg.pace.as_ref().filter(|_| !self.lane.writer()) {
            Some(p) => {
                let (t, start) = (self.lane.index(), self.lane.window_start());
                let seed = plumb_workloads::distribution::worker_seed(cfg.seed, cfg.index, t);
                let mut pacer = Pacer::share(p, cfg.threads, start, seed ^ 0x9ace);
                self.lane.drive(quota, Some(&mut pacer), op)
            }
            None => self.lane.drive(quota, None, op),
        }
    }

    /// Runs `op` open-loop at `ops_per_sec` (> 0) until the step ends: latency counts
    /// from each op's intended start, so a stall is not hidden by sending less. Every
    /// paced thread of a step shares one start instant.
    #[inline]
    pub fn drive_paced<F>(&mut self, ops_per_sec: f64, op: F) -> Result<(), TargetError>
    where
        F: FnMut(&OpClock) -> Result<(u64, u64), TargetError>,
    {
        let mut pacer = Pacer::new(ops_per_sec, self.lane.window_start());
        self.lane.drive(u64::MAX, Some(&mut pacer), op)
    }
}
