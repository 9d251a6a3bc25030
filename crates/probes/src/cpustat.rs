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

/// Reads `/proc/stat` now.
pub fn read() -> Result<CpuTimes, ProbeError> {
    let text =
        std::fs::read_to_string(PROC_STAT).map_err(|e| ProbeError::io("reading", PROC_STAT, e))?;
    parse(&text, Path::new(PROC_STAT))
}

/// The `cpu` line of a `/proc/stat` text (procfs-core's parser); `file` names it in
/// errors.
pub fn parse(text: &str, file: &Path) -> Result<CpuTimes, ProbeError> {
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
    Ok(CpuTimes {
        user: t.user,
        nice: t.nice,
        system: t.system,
        idle: t.idle,
        iowait: t.iowait.unwrap_or(0),
        irq: t.irq.unwrap_or(0),
        softirq: t.softirq.unwrap_or(0),
        steal: t.steal.unwrap_or(0),
    })
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
        let c = parse(STAT, Path::new("stat")).unwrap();
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
        let a = parse(STAT, Path::new("stat")).unwrap();
        // One second later on 2 CPUs: 200 ticks, 30 of them stolen, iowait went back.
        let later = STAT.replacen(
            "cpu  3964739 1828 943000 2720610 110642 0 19423 1962 0 0",
            "cpu  3964839 1828 943020 2720660 110600 0 19423 1992 0 0",
            1,
        );
        let b = parse(&later, Path::new("stat")).unwrap();
        let d = b.delta(&a);
        assert_eq!((d.user, d.system, d.idle, d.steal), (100, 20, 50, 30));
        assert_eq!(d.iowait, 0);
        assert_eq!((d.busy(), d.total()), (120, 200));
    }

    #[test]
    fn old_kernels_without_steal_read_as_zero() {
        let old = "cpu  10 0 5 100\ncpu0 10 0 5 100\nctxt 1\nbtime 1\nprocesses 1\n";
        let c = parse(old, Path::new("stat")).unwrap();
        assert_eq!((c.user, c.idle, c.iowait, c.steal), (10, 100, 0, 0));
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
        assert!(a.total() > 0 && a.busy() <= a.total());
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
            let c = parse(&line, Path::new("stat")).unwrap();
            prop_assert_eq!(
                [c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal],
                [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]]
            );
        }
    }
}
