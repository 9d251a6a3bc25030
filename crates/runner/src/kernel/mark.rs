//! What the sampler reads at the window's marks (its start, each second, its end): the
//! counters every family needs (this process's CPU, the machine's CPU by state for the
//! host's noise, the device's counters), and what the family adds through a [`Gauge`].

use crate::metrics::{self, HostNoise};
use plumb_probes::cpustat::{self, Reading};
use plumb_probes::diskstats::{DeviceStats, DiskCounters};
use plumb_probes::process::{self, ProcessCounters};
use std::time::Instant;

/// What a family reads beside the kernel's own counters, on the sampler thread only:
/// engine statistics, hardware counters, anything that spans the window.
pub trait Gauge {
    /// Read at every mark.
    type Reading: Copy;

    /// Reads it now.
    fn read(&mut self) -> Self::Reading;

    /// The window opened (its first mark is taken): start what spans it.
    fn opened(&mut self) {}

    /// The window closed (its last mark is taken): stop what spans it.
    fn closed(&mut self) {}
}

/// Nothing beyond the kernel's counters (the probes).
impl Gauge for () {
    type Reading = ();
    fn read(&mut self) {}
}

/// The counters at one instant.
#[derive(Debug, Clone, Copy)]
pub struct Mark<X> {
    /// When they were read.
    pub at: Instant,
    /// This process's CPU and context switches.
    pub process: ProcessCounters,
    /// The whole machine's CPU by state, for the host's noise beside `process`.
    pub machine: Option<Reading>,
    /// The device's counters; `None` without a device or when unreadable.
    pub disk: Option<DiskCounters>,
    /// What the family's [`Gauge`] read.
    pub extra: X,
}

impl<X: Copy> Mark<X> {
    /// Reads every counter now.
    pub fn read<G: Gauge<Reading = X>>(disk: Option<&DeviceStats>, gauge: &mut G) -> Mark<X> {
        Mark {
            at: Instant::now(),
            process: process::self_counters(),
            machine: cpustat::read().ok(),
            disk: disk.and_then(|d| d.read().ok()),
            extra: gauge.read(),
        }
    }

    /// The device's counters from `earlier` to this mark; `None` if either is missing.
    pub fn disk_since(&self, earlier: &Mark<X>) -> Option<DiskCounters> {
        Some(self.disk?.delta(&earlier.disk?))
    }

    /// The host's noise from `earlier` to this mark: whatever is measured runs in
    /// plumb's process (an embedded engine, a probe), so everything else busy on the
    /// machine is outside.
    pub fn noise_since(&self, earlier: &Mark<X>) -> HostNoise {
        metrics::host_noise(
            earlier.machine.as_ref(),
            self.machine.as_ref(),
            self.process.delta(&earlier.process).cpu_us(),
            Some(0),
        )
    }
}
