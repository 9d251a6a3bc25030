//! CPU time, context switches and memory of this process.
//!
//! Counts cover every thread of the process, including an embedded engine's background
//! threads (compaction, flush), which is what the `cpu_us_op`, `csw_op` and `rss_gb` metrics
//! need for an in-process database.

/// Cumulative CPU time and context switches of the whole process, from `getrusage`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessCounters {
    /// User-mode CPU time in microseconds.
    pub user_us: u64,
    /// Kernel-mode CPU time in microseconds.
    pub system_us: u64,
    /// Voluntary context switches (blocked on I/O, locks, sleeps).
    pub voluntary_csw: u64,
    /// Involuntary context switches (preempted).
    pub involuntary_csw: u64,
    /// Major page faults: a page read from the device to satisfy a touch of mapped
    /// memory (an mmap engine's reads, a binary paged back in), the one IO a read(2)
    /// count never shows.
    pub major_faults: u64,
}

impl ProcessCounters {
    /// Counters accumulated since `earlier` (saturating at zero per field).
    pub fn delta(&self, earlier: &Self) -> Self {
        ProcessCounters {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            system_us: self.system_us.saturating_sub(earlier.system_us),
            voluntary_csw: self.voluntary_csw.saturating_sub(earlier.voluntary_csw),
            involuntary_csw: self.involuntary_csw.saturating_sub(earlier.involuntary_csw),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    /// User + system CPU microseconds, the numerator of `cpu_us_op`.
    pub fn cpu_us(&self) -> u64 {
        self.user_us + self.system_us
    }

    /// Voluntary + involuntary context switches, the numerator of `csw_op`.
    pub fn csw(&self) -> u64 {
        self.voluntary_csw + self.involuntary_csw
    }
}

/// Converts a `timeval` to microseconds (negative values, which the kernel never returns,
/// clamp to zero).
fn timeval_us(tv: libc::timeval) -> u64 {
    let us = i128::from(tv.tv_sec) * 1_000_000 + i128::from(tv.tv_usec);
    u64::try_from(us).unwrap_or(0)
}

/// Current counters of this process: `getrusage(RUSAGE_SELF)`, which on Linux sums all
/// threads, live and exited.
pub fn self_counters() -> ProcessCounters {
    // SAFETY: an all-zero rusage is a valid value, and getrusage only writes into it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: &mut ru is a valid pointer to an rusage; RUSAGE_SELF cannot fail.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 {
        return ProcessCounters::default();
    }
    ProcessCounters {
        user_us: timeval_us(ru.ru_utime),
        system_us: timeval_us(ru.ru_stime),
        voluntary_csw: u64::try_from(ru.ru_nvcsw).unwrap_or(0),
        involuntary_csw: u64::try_from(ru.ru_nivcsw).unwrap_or(0),
        major_faults: u64::try_from(ru.ru_majflt).unwrap_or(0),
    }
}

/// Current resident set size of this process in bytes (`VmRSS` of `/proc/self/status`);
/// `None` if procfs is unavailable.
pub fn self_rss_bytes() -> Option<u64> {
    parse_status_rss(&std::fs::read_to_string("/proc/self/status").ok()?)
}

/// Peak resident set size of this process in bytes (`VmHWM`), the value `rss_gb` reports;
/// `None` if procfs is unavailable.
pub fn self_peak_rss_bytes() -> Option<u64> {
    parse_status_kb(&std::fs::read_to_string("/proc/self/status").ok()?, "VmHWM")
}

/// `VmRSS` in bytes from the text of a `/proc/<pid>/status` file, so servers' RSS can be
/// read from their own status file with the same code.
pub fn parse_status_rss(text: &str) -> Option<u64> {
    parse_status_kb(text, "VmRSS")
}

/// A `kB` field (e.g. `VmRSS`, `VmHWM`) of a `/proc/<pid>/status` text, in bytes.
pub fn parse_status_kb(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, rest) = line.split_once(':')?;
        if k != key {
            return None;
        }
        let mut parts = rest.split_whitespace();
        let n: u64 = parts.next()?.parse().ok()?;
        match parts.next() {
            Some("kB") | None => n.checked_mul(1024),
            Some(_) => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const STATUS: &str = include_str!("../tests/fixtures/status");

    #[test]
    fn parses_status_fixture() {
        assert_eq!(parse_status_rss(STATUS), Some(1_234_568 * 1024));
        assert_eq!(parse_status_kb(STATUS, "VmHWM"), Some(2_345_676 * 1024));
        assert_eq!(parse_status_kb(STATUS, "VmRSS_missing"), None);
        assert_eq!(parse_status_rss("Name:\tkthreadd\nState:\tS\n"), None);
    }

    #[test]
    fn live_rss_is_plausible() {
        let rss = self_rss_bytes().expect("VmRSS in /proc/self/status");
        assert!(rss > 100 * 1024, "rss {rss}");
        assert!(self_peak_rss_bytes().unwrap() >= rss / 2);
    }

    /// This thread's CPU time, from the kernel's own clock (not /proc).
    fn thread_cpu() -> Duration {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec for the call to fill.
        let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
        Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
    }

    #[test]
    fn burning_cpu_raises_user_time() {
        // Burn until this thread has run 100 ms of CPU by the kernel's clock, however
        // long a busy machine makes that take in wall time (a wall-clock loop got
        // 17 ms of CPU in 60 ms on a loaded host): /proc's user time must show it, to
        // its 10 ms ticks.
        let before = self_counters();
        let start = thread_cpu();
        let mut x: u64 = 1;
        while thread_cpu() - start < Duration::from_millis(100) {
            for i in 0..10_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
            }
        }
        std::hint::black_box(x);
        let d = self_counters().delta(&before);
        assert!(
            d.cpu_us() >= 80_000,
            "cpu_us only {} after 100 ms of this thread's CPU",
            d.cpu_us()
        );
        assert!(
            d.user_us >= 50_000,
            "user_us only {} after 100 ms of this thread's CPU in a user-space loop",
            d.user_us
        );
        assert_eq!(d.cpu_us(), d.user_us + d.system_us);
    }

    #[test]
    fn delta_and_sums() {
        let a = ProcessCounters {
            user_us: 100,
            system_us: 50,
            voluntary_csw: 7,
            involuntary_csw: 3,
            major_faults: 9,
        };
        let b = ProcessCounters {
            user_us: 40,
            system_us: 60,
            voluntary_csw: 2,
            involuntary_csw: 1,
            major_faults: 4,
        };
        let d = a.delta(&b);
        assert_eq!(
            d,
            ProcessCounters {
                user_us: 60,
                system_us: 0,
                voluntary_csw: 5,
                involuntary_csw: 2,
                major_faults: 5,
            }
        );
        assert_eq!(d.cpu_us(), 60);
        assert_eq!(d.csw(), 7);
    }
}
