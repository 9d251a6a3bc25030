//! The whole machine's CPU time by state, from the `cpu` line of `/proc/stat`.
//!
//! A benchmark on a shared host competes with what else runs there: a neighbour VM
//! takes the hypervisor's time (the guest sees it as `steal`), and another process on
//! this host takes the CPUs directly. Neither shows in plumb's own counters, so a
//! result that moved by 10% could be the engine or the neighbour. Two readings of this
//! line around a window, set beside the CPU plumb (and a server it measures) used in
//! it, tell the two apart (see `plumb_runner::metrics::host_noise`).

use crate::ProbeError;
use procfs_core::{ExplicitSystemInfo, FromReadSI, KernelStats};
use std::path::Path;
use std::time::Instant;

/// Where the kernel keeps the counters.
pub const PROC_STAT: &str = "/proc/stat";

/// Cumulative time all CPUs together spent in each state since boot, in `USER_HZ`
/// ticks (see [`ticks_per_sec`]). States a kernel does not report (`iowait` before
/// 2.5.41, `steal` before 2.6.11) read as 0. `guest` and `guest_nice` are not kept:
/// the kernel already counts them inside `user` and `nice`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Running user code.
    pub user: u64,
    /// Running niced user code.
    pub nice: u64,
    /// Running kernel code on behalf of a process.
    pub system: u64,
    /// Idle with nothing to wait for.
    pub idle: u64,
    /// Idle while some task waited for IO.
    pub iowait: u64,
    /// Servicing hardware interrupts.
    pub irq: u64,
    /// Servicing softirqs (network, block completion, timers).
    pub softirq: u64,
    /// Runnable, but the hypervisor ran someone else: the VM's neighbours.
    pub steal: u64,
}

impl CpuTimes {
    /// Ticks accumulated since `earlier`, state by state (saturating at zero: `iowait`
    /// may go backwards, and a counter that did is no time spent).
    pub fn delta(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// Every state together: the machine's CPU capacity over a window (its length
    /// times the number of CPUs), as the kernel counted it.
    pub fn total(&self) -> u64 {
        self.busy() + self.idle + self.iowait + self.steal
    }

    /// Time some CPU ran code of this machine: user, nice, system, irq and softirq.
    /// Idle, iowait (idle too) and steal (the hypervisor's, not ours) are left out.
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }
}

/// One reading of the machine: when, how many CPUs were online, and their times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// When it was read (the monotonic clock every window is timed with).
    pub at: Instant,
    /// Online CPUs (the `cpuN` lines).
    pub cpus: u32,
    /// All CPUs' time by state.
    pub times: CpuTimes,
}

/// The machine over a window between two readings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    /// Ticks spent in each state.
    pub times: CpuTimes,
    /// The CPUs' capacity, µs: the window's length times the online CPUs, or the ticks
    /// counted if those are more.
    pub capacity_us: f64,
}

impl Window {
    /// Time the CPUs ran this machine's code, µs: the capacity less idle, iowait and
    /// steal. Taken from the capacity rather than summed from user, system … because
    /// a tickless kernel times idle exactly but samples busy time on its tick, and
    /// misses bursts shorter than a tick (a SQL client and server passing queries back
    /// and forth on an otherwise quiet host left 15% of the machine's time uncounted).
    pub fn busy_us(&self) -> f64 {
        let t = &self.times;
        (self.capacity_us - ticks_to_us(t.idle + t.iowait + t.steal) as f64).max(0.0)
    }
}

impl Reading {
    /// The window from `earlier` to this reading.
    pub fn since(&self, earlier: &Reading) -> Window {
        let times = self.times.delta(&earlier.times);
        let wall_us = self.at.saturating_duration_since(earlier.at).as_secs_f64()
            * 1e6
            * f64::from(earlier.cpus.min(self.cpus));
        Window {
            times,
            capacity_us: wall_us.max(ticks_to_us(times.total()) as f64),
        }
    }
}

/// Reads `/proc/stat` now.
pub fn read() -> Result<Reading, ProbeError> {
    let text =
        std::fs::read_to_string(PROC_STAT).map_err(|e| ProbeError::io("reading", PROC_STAT, e))?;
    let at = Instant::now();
    let (times, cpus) = parse(&text, Path::new(PROC_STAT))?;
    Ok(Reading { at, cpus, times })
}

/// The `cpu` line of a `/proc/stat` text and the number of `cpuN` lines after it
/// (procfs-core's parser); `file` names it in errors.
pub fn parse(text: &str, file: &Path) -> Result<(CpuTimes, u32), ProbeError> {
    // Only the tick rate matters to the `cpu` lines; the rest is never read.
    let si = ExplicitSystemInfo {
        boot_time_secs: 0,
        ticks_per_second: ticks_per_sec(),
        page_size: 4096,
        is_little_endian: cfg!(target_endian = "little"),
    };
    let line = text
        .lines()
        .position(|l| l.starts_with("cpu "))
        .map_or(1, |i| i + 1);
    let ks = KernelStats::from_read(text.as_bytes(), &si).map_err(|e| ProbeError::Parse {
        file: file.to_path_buf(),
        line,
        reason: format!("not a /proc/stat `cpu` line with user nice system idle …: {e}"),
    })?;
    let t = ks.total;
    let cpus = u32::try_from(ks.cpu_time.len()).unwrap_or(u32::MAX).max(1);
    let times = CpuTimes {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
    };
    Ok((times, cpus))
}

/// `USER_HZ`: the ticks per second `/proc/stat` counts in (100 on Linux everywhere).
pub fn ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(t).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// Ticks of `/proc/stat` as microseconds, the unit of plumb's own CPU counters.
pub fn ticks_to_us(ticks: u64) -> u64 {
    ticks.saturating_mul(1_000_000) / ticks_per_sec()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = include_str!("../tests/fixtures/stat");

    #[test]
    fn parses_the_cpu_line_of_a_real_file() {
        let (c, cpus) = parse(STAT, Path::new("stat")).unwrap();
        assert_eq!(cpus, 2);
        assert_eq!(
            c,
            CpuTimes {
                user: 3_964_739,
                nice: 1_828,
                system: 943_000,
                idle: 2_720_610,
                iowait: 110_642,
                irq: 0,
                softirq: 19_423,
                steal: 1_962,
            }
        );
        assert_eq!(c.busy(), 3_964_739 + 1_828 + 943_000 + 19_423);
        assert_eq!(c.total(), c.busy() + 2_720_610 + 110_642 + 1_962);
    }

    #[test]
    fn delta_is_per_state_and_never_negative() {
        let (a, _) = parse(STAT, Path::new("stat")).unwrap();
        // One second later on 2 CPUs: 200 ticks, 30 of them stolen, iowait went back.
        let later = STAT.replacen(
            "cpu  3964739 1828 943000 2720610 110642 0 19423 1962 0 0",
            "cpu  3964839 1828 943020 2720660 110600 0 19423 1992 0 0",
            1,
        );
        let (b, _) = parse(&later, Path::new("stat")).unwrap();
        let d = b.delta(&a);
        assert_eq!((d.user, d.system, d.idle, d.steal), (100, 20, 50, 30));
        assert_eq!(d.iowait, 0);
        assert_eq!((d.busy(), d.total()), (120, 200));
    }

    #[test]
    fn a_window_is_wall_time_times_cpus_and_busy_is_what_is_not_idle() {
        let at = Instant::now();
        let a = Reading {
            at,
            cpus: 2,
            times: CpuTimes::default(),
        };
        // A tickless kernel counted only 170 of 2 CPUs × 1 s: the 30 missing are busy.
        let b = Reading {
            at: at + std::time::Duration::from_secs(1),
            cpus: 2,
            times: CpuTimes {
                user: 60,
                system: 10,
                idle: 90,
                steal: 10,
                ..CpuTimes::default()
            },
        };
        let w = b.since(&a);
        assert_eq!(w.capacity_us, 2e6);
        assert_eq!(w.busy_us(), 2e6 - ticks_to_us(100) as f64);
        // Ticks beyond the clock (a reading late on a loaded host) widen the window.
        let late = Reading {
            at: at + std::time::Duration::from_millis(500),
            ..b
        };
        assert_eq!(late.since(&a).capacity_us, ticks_to_us(170) as f64);
    }

    #[test]
    fn old_kernels_without_steal_read_as_zero() {
        let old = "cpu  10 0 5 100\ncpu0 10 0 5 100\nctxt 1\nbtime 1\nprocesses 1\n";
        let (c, cpus) = parse(old, Path::new("stat")).unwrap();
        assert_eq!(
            (c.user, c.idle, c.iowait, c.steal, cpus),
            (10, 100, 0, 0, 1)
        );
    }

    #[test]
    fn bad_input_names_the_file_and_line() {
        let bad = "intr 1\ncpu  10 x 5 100\nctxt 1\nbtime 1\nprocesses 1\n";
        let e = parse(bad, Path::new("/proc/stat")).unwrap_err().to_string();
        assert!(e.starts_with("/proc/stat:2: "), "{e}");
        let e = parse("", Path::new("/proc/stat")).unwrap_err().to_string();
        assert!(e.starts_with("/proc/stat:1: "), "{e}");
    }

    #[test]
    fn the_live_machine_counts_time() {
        let a = read().unwrap();
        assert!(a.times.total() > 0 && a.times.busy() <= a.times.total());
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        assert!(a.cpus >= cpus, "{} cpuN lines, {cpus} CPUs usable", a.cpus);
        assert_eq!(ticks_to_us(ticks_per_sec()), 1_000_000);
    }
}

/// Fuzzing by property: any text never panics the parser.
#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn stat_never_panics(t in any::<String>()) {
            let _ = parse(&t, Path::new("stat"));
        }

        #[test]
        fn cpu_lines_read_back(v in proptest::collection::vec(0u64..1 << 50, 8)) {
            let line = format!(
                "cpu  {} {} {} {} {} {} {} {} 0 0\nctxt 1\nbtime 1\nprocesses 1\n",
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
            );
            let (c, _) = parse(&line, Path::new("stat")).unwrap();
            prop_assert_eq!(
                [c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal],
                [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]
            );
        }
    }
}
