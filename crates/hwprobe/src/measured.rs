//! A probe step through the runner's measuring kernel ([`plumb_runner::kernel`]), the
//! same timed loop and sampler as every workload step: a probe says what a thread sets
//! up and what one op is; the kernel times, samples and stops. What is probe-only here
//! is how the figures are stored, as the probes always stored them: MB/s in 10^6
//! bytes, the process's peak RSS, and the step's status under the probes' Ctrl-C.

use plumb_core::{Interval, StepStatus, StepSummary};
use plumb_probes::diskstats::DeviceStats;
use plumb_runner::kernel::{self, Lane, NoProgress, Spec};
use std::time::{Duration, SystemTime};

/// A finished timed step.
pub(crate) struct Measured {
    pub status: StepStatus,
    pub error: Option<String>,
    pub started: SystemTime,
    pub ended: SystemTime,
    pub summary: StepSummary,
    pub intervals: Vec<Interval>,
}

/// Runs `threads` threads of `body` for `duration` (or until Ctrl-C, an error, or every
/// thread is done; Ctrl-C sets `stop`), the device's counters read from `disk`. A body sets up (buffers,
/// rings: not timed), then drives its ops through its [`Lane`].
pub(crate) fn run<B>(
    threads: usize,
    duration: Duration,
    disk: Option<&DeviceStats>,
    stop: &std::sync::atomic::AtomicBool,
    body: B,
) -> Measured
where
    B: for<'l> Fn(&Lane<'l>) -> Result<(), String> + Sync,
{
    let spec = Spec {
        threads,
        writers: 0,
        thread_name: "plumb-w",
        classes: 0,
        warmup: Duration::ZERO,
        duration: Some(duration),
        disk,
        interrupt: stop,
        progress: &NoProgress,
        clients: None,
        on_open: None,
        faults: None,
    };
    let run = kernel::run(&spec, &mut (), |lane: &Lane<'_>, _: &mut ()| body(lane));
    let ended = SystemTime::now();
    let (secs, bytes) = (run.secs(), run.tally.bytes());
    let summary = StepSummary {
        mb_sec: (bytes > 0 && secs > 0.0).then(|| bytes as f64 / secs / 1e6),
        rss_gb: plumb_probes::process::self_peak_rss_bytes().map(|b| b as f64 / 1e9),
        ..run.summary()
    };
    let error = run.errors.first().cloned();
    let status = if error.is_some() {
        StepStatus::Failed
    } else if stop.load(std::sync::atomic::Ordering::Relaxed) {
        StepStatus::Interrupted
    } else {
        StepStatus::Ok
    };
    Measured {
        status,
        error,
        started: run.opened,
        ended,
        summary,
        intervals: run.intervals(|_, _, iv| iv),
    }
}

impl Measured {
    /// Turns it into a stored step.
    pub(crate) fn into_step(
        self,
        name: String,
        kind: plumb_workloads::ProbeKind,
        config: serde_json::Value,
    ) -> crate::ProbeStep {
        crate::ProbeStep {
            name,
            kind,
            status: self.status,
            error: self.error,
            started: self.started,
            ended: self.ended,
            config,
            summary: self.summary,
            intervals: self.intervals,
        }
    }
}
