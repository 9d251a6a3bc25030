//! Hardware performance counters (instructions, cycles, cache and branch misses) for the
//! whole process, for the "hw counters / op" metrics.
//!
//! Each event is a separate counter opened on this process with `inherit` set, so threads
//! created *after* [`HwCounterGroup::open`] are counted too — open it before the engine
//! starts its background threads. Separate counters rather than a perf group because the
//! kernel refuses `inherit` on group members read with `PERF_FORMAT_GROUP` (before 5.13,
//! and for inherited groups still), and a group would fail as a whole where one event is
//! missing. Only user-mode events are counted, which works at `perf_event_paranoid` ≤ 2.
//!
//! Where the kernel refuses (no PMU in a VM, paranoid settings), `open` says why and the
//! report prints "unsupported" rather than inventing numbers.

use std::io;
use std::path::Path;
use std::sync::Mutex;

use perf_event::events::Hardware;
use perf_event::{Builder, Counter};

/// Open hardware counters for this process; read with [`HwCounterGroup::read`].
///
/// Instructions are required; cycles, cache misses and branch misses are each optional,
/// since some PMUs (notably in VMs) expose only part of the generic events.
#[derive(Debug)]
pub struct HwCounterGroup {
    instructions: Mutex<Counter>,
    cycles: Option<Mutex<Counter>>,
    cache_misses: Option<Mutex<Counter>>,
    branch_misses: Option<Mutex<Counter>>,
}

/// Cumulative counts since [`HwCounterGroup::open`] (or, after [`HwReading::delta`], over a
/// window). `None` means the event is unavailable here — report it as unsupported.
/// Values are scaled by enabled/running time when the kernel had to multiplex counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HwReading {
    /// Retired instructions (user mode).
    pub instructions: Option<u64>,
    /// CPU cycles (user mode).
    pub cycles: Option<u64>,
    /// Last-level cache misses.
    pub cache_misses: Option<u64>,
    /// Mispredicted branches.
    pub branch_misses: Option<u64>,
}

impl HwReading {
    /// Counts accumulated since `earlier`; an event missing from either reading is `None`.
    pub fn delta(&self, earlier: &Self) -> Self {
        fn d(now: Option<u64>, then: Option<u64>) -> Option<u64> {
            Some(now?.saturating_sub(then?))
        }
        HwReading {
            instructions: d(self.instructions, earlier.instructions),
            cycles: d(self.cycles, earlier.cycles),
            cache_misses: d(self.cache_misses, earlier.cache_misses),
            branch_misses: d(self.branch_misses, earlier.branch_misses),
        }
    }

    /// Instructions per cycle over this reading, when both counts are available.
    pub fn ipc(&self) -> Option<f64> {
        match (self.instructions, self.cycles) {
            (Some(i), Some(c)) if c > 0 => Some(i as f64 / c as f64),
            _ => None,
        }
    }
}

/// Directory names under `/sys/bus/event_source/devices` of CPU PMUs that back the generic
/// hardware events (x86, x86 hybrid, and Arm).
fn is_core_pmu_name(name: &str) -> bool {
    matches!(name, "cpu" | "cpu_core" | "cpu_atom") || name.starts_with("armv")
}

/// Whether the kernel exposes a CPU PMU (e.g. `/sys/bus/event_source/devices/cpu`); when it
/// does not — typical in VMs such as Firecracker — hardware counters cannot work.
pub fn core_pmu_present() -> bool {
    core_pmu_present_in(Path::new("/sys/bus/event_source/devices"))
}

fn core_pmu_present_in(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .any(|e| is_core_pmu_name(&e.file_name().to_string_lossy()))
        })
        .unwrap_or(false)
}

/// Symbolic name of the errno values `perf_event_open` commonly returns.
fn errno_name(e: &io::Error) -> String {
    let name = match e.raw_os_error() {
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EACCES) => "EACCES",
        Some(libc::EPERM) => "EPERM",
        Some(libc::EOPNOTSUPP) => "EOPNOTSUPP",
        Some(libc::ENODEV) => "ENODEV",
        Some(libc::ENOSYS) => "ENOSYS",
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::EMFILE) => "EMFILE",
        Some(libc::EBUSY) => "EBUSY",
        Some(libc::E2BIG) => "E2BIG",
        _ => return e.to_string(),
    };
    name.to_string()
}

/// A short human sentence explaining why opening a hardware counter failed.
fn refusal_reason(e: &io::Error) -> String {
    let errno = errno_name(e);
    let paranoid = || {
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) if !core_pmu_present() => {
            format!("no hardware PMU (perf_event_open: {errno})")
        }
        Some(libc::ENOENT) | Some(libc::EOPNOTSUPP) => {
            format!("hardware events not supported by this PMU (perf_event_open: {errno})")
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "refused by kernel.perf_event_paranoid={} (perf_event_open: {errno}); \
             lower it or grant CAP_PERFMON",
            paranoid()
        ),
        Some(libc::ENOSYS) => {
            format!("kernel built without perf events (perf_event_open: {errno})")
        }
        _ => format!("perf_event_open failed: {errno}"),
    }
}

/// Opens one inherited, enabled, user-mode counter on this process.
fn open_counter(event: Hardware) -> io::Result<Counter> {
    Builder::new(event)
        .observe_self()
        .any_cpu()
        .inherit(true)
        .enabled(true)
        .build()
}

/// Reads a counter, scaling for multiplexing; `None` if it never ran or the read failed.
fn read_scaled(counter: &Mutex<Counter>) -> Option<u64> {
    let mut c = counter.lock().unwrap_or_else(|p| p.into_inner());
    let cat = c.read_count_and_time().ok()?;
    if cat.time_running == 0 {
        return None;
    }
    if cat.time_running >= cat.time_enabled {
        return Some(cat.count);
    }
    let scaled =
        u128::from(cat.count) * u128::from(cat.time_enabled) / u128::from(cat.time_running);
    Some(u64::try_from(scaled).unwrap_or(u64::MAX))
}

impl HwCounterGroup {
    /// Opens the counters, counting from now on, for this process and every thread it
    /// creates afterwards.
    ///
    /// Err(reason) when the kernel refuses (no PMU in a VM, perf_event_paranoid): the reason
    /// is a short human sentence, e.g. "no hardware PMU (perf_event_open: ENOENT)", never a
    /// panic.
    pub fn open() -> Result<HwCounterGroup, String> {
        let instructions = open_counter(Hardware::INSTRUCTIONS).map_err(|e| refusal_reason(&e))?;
        let optional = |ev| open_counter(ev).ok().map(Mutex::new);
        Ok(HwCounterGroup {
            instructions: Mutex::new(instructions),
            cycles: optional(Hardware::CPU_CYCLES),
            cache_misses: optional(Hardware::CACHE_MISSES),
            branch_misses: optional(Hardware::BRANCH_MISSES),
        })
    }

    /// Current cumulative counts; events that are unavailable or unreadable are `None`.
    pub fn read(&self) -> HwReading {
        HwReading {
            instructions: read_scaled(&self.instructions),
            cycles: self.cycles.as_ref().and_then(read_scaled),
            cache_misses: self.cache_misses.as_ref().and_then(read_scaled),
            branch_misses: self.branch_misses.as_ref().and_then(read_scaled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy_loop() -> u64 {
        let mut x: u64 = 1;
        for i in 0..5_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
        }
        x
    }

    #[test]
    fn open_works_or_explains_and_matches_the_pmu() {
        let pmu = core_pmu_present();
        match HwCounterGroup::open() {
            Ok(g) => {
                assert!(
                    pmu,
                    "counters opened although no CPU PMU is exposed in sysfs"
                );
                let before = g.read();
                std::hint::black_box(busy_loop());
                // A thread started after open is inherited and counted too.
                std::thread::spawn(|| std::hint::black_box(busy_loop()))
                    .join()
                    .unwrap();
                let d = g.read().delta(&before);
                let instr = d.instructions.expect("instructions counter readable");
                assert!(instr > 5_000_000, "only {instr} instructions");
            }
            Err(reason) => {
                assert!(!reason.trim().is_empty());
                eprintln!("hardware counters unavailable: {reason}");
                if !pmu {
                    assert!(reason.contains("no hardware PMU"), "{reason}");
                }
            }
        }
        if !Path::new("/sys/bus/event_source/devices/cpu").exists() && !pmu {
            assert!(
                HwCounterGroup::open().is_err(),
                "no cpu PMU dir: Err is required"
            );
        }
    }

    #[test]
    fn group_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<HwCounterGroup>();
    }

    #[test]
    fn reading_delta_and_ipc() {
        let a = HwReading {
            instructions: Some(1000),
            cycles: Some(500),
            cache_misses: None,
            branch_misses: Some(10),
        };
        let b = HwReading {
            instructions: Some(400),
            cycles: Some(200),
            cache_misses: Some(3),
            branch_misses: Some(4),
        };
        let d = a.delta(&b);
        assert_eq!(
            d,
            HwReading {
                instructions: Some(600),
                cycles: Some(300),
                cache_misses: None,
                branch_misses: Some(6)
            }
        );
        assert_eq!(d.ipc(), Some(2.0));
        assert_eq!(HwReading::default().ipc(), None);
    }

    #[test]
    fn pmu_detection_on_fixture_dirs() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["software", "tracepoint", "breakpoint", "msr"] {
            std::fs::create_dir(dir.path().join(n)).unwrap();
        }
        assert!(!core_pmu_present_in(dir.path()));
        std::fs::create_dir(dir.path().join("cpu")).unwrap();
        assert!(core_pmu_present_in(dir.path()));
    }
}
