//! Hygiene checks: each a small function from its inputs to a verdict, a reason and a fix,
//! so every rule can be tested on its own and read in one place.

use crate::busy::BusyProcess;
use crate::storage::{BlockDevice, Storage};
use crate::{Check, Inventory, Verdict};

/// A process above this share of one CPU at start is reported as competing with the run.
pub const BUSY_PERCENT: f64 = 5.0;
/// Below this filesystem fill fraction the device is "nearly empty".
pub const EMPTY_FRACTION: f64 = 0.10;
/// Above this fill fraction the device is "nearly full".
pub const FULL_FRACTION: f64 = 0.90;

fn check(id: &str, verdict: Verdict, reason: impl Into<String>, fix: Option<&str>) -> Check {
    Check {
        id: id.to_string(),
        verdict,
        reason: reason.into(),
        fix: fix.map(str::to_string),
    }
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// `cpu.turbo`: turbo/boost makes the clock rate depend on temperature and on how many
/// cores are busy, so results drift between runs.
pub fn turbo(boost: Option<bool>, source: Option<&str>) -> Check {
    let id = "cpu.turbo";
    match (boost, source) {
        (Some(true), src) => check(
            id,
            Verdict::Warn,
            format!(
                "turbo/boost is on ({}): clock rate varies with temperature and load",
                src.unwrap_or("?")
            ),
            Some(if src.is_some_and(|s| s.contains("intel_pstate")) {
                "echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo"
            } else {
                "echo 0 > /sys/devices/system/cpu/cpufreq/boost"
            }),
        ),
        (Some(false), _) => check(id, Verdict::Ok, "turbo/boost is off", None),
        (None, _) => check(
            id,
            Verdict::Info,
            "no turbo/boost control visible (no cpufreq, e.g. in a VM): cannot tell",
            None,
        ),
    }
}

/// `cpu.governor`: any governor but `performance` changes frequency under the benchmark.
pub fn governor(gov: Option<&str>) -> Check {
    let id = "cpu.governor";
    match gov {
        Some("performance") => check(id, Verdict::Ok, "cpufreq governor is performance", None),
        Some(g) => check(
            id,
            Verdict::Warn,
            format!("cpufreq governor is {g}: frequency ramps with load, adding warm-up noise"),
            Some("cpupower frequency-set -g performance"),
        ),
        None => check(
            id,
            Verdict::Info,
            "no cpufreq governor (no cpufreq directory; a VM or a fixed-frequency host)",
            None,
        ),
    }
}

/// `clock.source`: with hpet or acpi_pm every timestamp is a slow syscall (a seed saw 50%
/// of CPU in read_hpet); a TSC marked unstable means the kernel already gave up on it.
pub fn clocksource(
    current: Option<&str>,
    available: &[String],
    tsc_unstable: Option<bool>,
) -> Check {
    let id = "clock.source";
    let tsc_avail = available.iter().any(|c| c == "tsc");
    let fix_switch = "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource";
    let fix_boot = "fix the TSC (BIOS power settings, invariant TSC) or boot with tsc=reliable if it is known good";
    let log_note = match tsc_unstable {
        Some(true) => "; kernel log: TSC marked unstable",
        Some(false) => "",
        None => " (kernel log not readable: TSC stability unknown)",
    };
    match current {
        None => check(id, Verdict::Info, "clocksource not readable", None),
        Some("tsc") | Some("arch_sys_counter") if tsc_unstable != Some(true) => check(
            id,
            Verdict::Ok,
            format!("clocksource is {}{log_note}", current.unwrap_or_default()),
            None,
        ),
        Some(c @ ("hpet" | "acpi_pm" | "jiffies" | "refined-jiffies")) => check(
            id,
            Verdict::Fail,
            format!("clocksource is {c}: every clock read is a slow hardware access{log_note}"),
            Some(if tsc_avail && tsc_unstable != Some(true) {
                fix_switch
            } else {
                fix_boot
            }),
        ),
        Some(c) => check(
            id,
            Verdict::Warn,
            format!("clocksource is {c}, not tsc{log_note}"),
            Some(if tsc_avail && tsc_unstable != Some(true) {
                fix_switch
            } else {
                fix_boot
            }),
        ),
    }
}

/// `cpu.smt`: states SMT; with it on, two threads share a core's caches and ports, so
/// thread-count scaling past the core count measures contention.
pub fn smt(state: Option<&str>, threads: Option<u32>, cores: Option<u32>) -> Check {
    let id = "cpu.smt";
    let topo = match (threads, cores) {
        (Some(t), Some(c)) => format!(" ({t} threads on {c} cores)"),
        _ => String::new(),
    };
    match state {
        Some("on") => check(
            id,
            Verdict::Warn,
            format!("SMT is on{topo}: sibling threads share a core; scaling past the core count measures contention"),
            Some("echo off > /sys/devices/system/cpu/smt/control (or pin one thread per core)"),
        ),
        Some(s) => check(id, Verdict::Ok, format!("SMT is {s}{topo}"), None),
        None => check(id, Verdict::Info, format!("SMT state unknown{topo}"), None),
    }
}

/// `mem.thp`: THP `always` brings khugepaged and compaction stalls into latency tails.
pub fn thp(mode: Option<&str>) -> Check {
    let id = "mem.thp";
    match mode {
        Some("always") => check(
            id,
            Verdict::Warn,
            "transparent huge pages: always (compaction and khugepaged stalls show up in tail latency)",
            Some("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled"),
        ),
        Some(m) => check(id, Verdict::Ok, format!("transparent huge pages: {m}"), None),
        None => check(id, Verdict::Info, "transparent huge pages not configurable here", None),
    }
}

/// `mem.swap`: with swap on, memory pressure turns into disk I/O the benchmark did not ask for.
pub fn swap(total_bytes: Option<u64>, devices: &[String]) -> Check {
    let id = "mem.swap";
    match total_bytes {
        Some(t) if t > 0 || !devices.is_empty() => check(
            id,
            Verdict::Warn,
            format!(
                "swap is on ({} on {}): memory pressure becomes hidden disk I/O",
                gib(t),
                if devices.is_empty() {
                    "?".to_string()
                } else {
                    devices.join(", ")
                }
            ),
            Some("swapoff -a"),
        ),
        Some(_) => check(id, Verdict::Ok, "no swap", None),
        None => check(
            id,
            Verdict::Info,
            "swap state unknown (/proc/meminfo unreadable)",
            None,
        ),
    }
}

/// `perf.paranoid`: above 1, non-root processes cannot count kernel-side events (above 2,
/// nothing at all), so per-op CPU counters miss the kernel's share of the work.
pub fn perf_paranoid(level: Option<i64>, as_root: Option<bool>) -> Check {
    let id = "perf.paranoid";
    let fix = Some("sysctl kernel.perf_event_paranoid=1 (or run as root / with CAP_PERFMON)");
    match (level, as_root) {
        (None, _) => check(id, Verdict::Info, "perf_event_paranoid not readable", None),
        (Some(l), Some(true)) => check(
            id,
            Verdict::Ok,
            format!("perf_event_paranoid={l}, but running as root: all counters allowed"),
            None,
        ),
        (Some(l), _) if l >= 3 => check(
            id,
            Verdict::Warn,
            format!("perf_event_paranoid={l}: unprivileged perf events disabled"),
            fix,
        ),
        (Some(2), _) => check(
            id,
            Verdict::Warn,
            "perf_event_paranoid=2: user-space only; counters miss the kernel's share of each op",
            fix,
        ),
        (Some(l), _) => check(
            id,
            Verdict::Ok,
            format!("perf_event_paranoid={l}: kernel and user counting allowed"),
            None,
        ),
    }
}

/// `perf.pmu`: without a CPU PMU (typical in VMs) hardware counters (instructions, cycles,
/// cache misses) cannot be measured at all; only software events remain.
pub fn pmu(present: Option<bool>) -> Check {
    let id = "perf.pmu";
    match present {
        Some(true) => check(id, Verdict::Ok, "CPU PMU present: hardware counters available", None),
        Some(false) => check(
            id,
            Verdict::Warn,
            "no CPU PMU: hardware counters (instructions, cycles, cache misses) unavailable; only software events",
            Some("run on bare metal, or enable vPMU in the hypervisor (e.g. KVM -cpu host,pmu=on)"),
        ),
        None => check(id, Verdict::Info, "PMU presence unknown", None),
    }
}

/// `host.virt`: a VM's figures include the hypervisor's scheduling and I/O path and are
/// not comparable with bare metal.
pub fn virt(is_vm: Option<bool>, hypervisor: Option<&str>, evidence: &[String]) -> Check {
    let id = "host.virt";
    match is_vm {
        Some(true) => check(
            id,
            Verdict::Warn,
            format!(
                "running in a VM ({}; {}): figures are not comparable with bare metal",
                hypervisor.unwrap_or("unknown hypervisor"),
                evidence.join(", ")
            ),
            Some("compare only with runs on the same VM type, or run on bare metal"),
        ),
        Some(false) => check(id, Verdict::Ok, "bare metal (no hypervisor signs)", None),
        None => check(id, Verdict::Info, "virtualisation unknown", None),
    }
}

/// `fs.noatime`: without noatime, reads can cause inode writes (relatime: at least daily
/// and after each modification).
pub fn noatime(fs_type: &str, mount_options: &[String]) -> Check {
    let id = "fs.noatime";
    let has = |o: &str| mount_options.iter().any(|m| m == o);
    if has("noatime") {
        check(id, Verdict::Ok, format!("{fs_type} mounted noatime"), None)
    } else if matches!(fs_type, "tmpfs" | "ramfs") {
        check(
            id,
            Verdict::Ok,
            format!("{fs_type}: atime updates stay in memory"),
            None,
        )
    } else {
        let mode = ["relatime", "strictatime", "lazytime"]
            .into_iter()
            .find(|o| has(o))
            .unwrap_or("atime");
        check(
            id,
            Verdict::Warn,
            format!("{fs_type} mounted {mode}, not noatime: reads can write inodes"),
            Some("mount -o remount,noatime <mount point> (and add noatime in /etc/fstab)"),
        )
    }
}

/// `fs.fill`: a nearly empty device reads unwritten blocks faster than real ones and has
/// no fragmentation or garbage collection; a nearly full one is slowed by both.
pub fn fill(used: Option<u64>, total: Option<u64>) -> Check {
    let id = "fs.fill";
    let (Some(u), Some(t)) = (used, total) else {
        return check(id, Verdict::Info, "filesystem usage unknown", None);
    };
    if t == 0 {
        return check(id, Verdict::Info, "filesystem reports size 0", None);
    }
    let f = u as f64 / t as f64;
    let pct = format!("{:.0}% used ({} of {})", f * 100.0, gib(u), gib(t));
    if f < EMPTY_FRACTION {
        check(
            id,
            Verdict::Warn,
            format!("{pct}: a nearly empty SSD serves reads and writes faster than it will when full"),
            Some("precondition: fill the device (e.g. fio sequential write over the whole range) before measuring"),
        )
    } else if f > FULL_FRACTION {
        check(
            id,
            Verdict::Warn,
            format!(
                "{pct}: nearly full; allocation, fragmentation and SSD garbage collection slow it"
            ),
            Some("free space or use a larger device"),
        )
    } else {
        check(id, Verdict::Ok, pct, None)
    }
}

/// `disk.write_cache`: a volatile ("write back") cache makes flushes the real cost of a
/// commit; without power-loss protection acknowledged writes can vanish, and some devices
/// ignore flushes altogether ("a disk write cache that lies").
pub fn write_cache(devices: &[BlockDevice]) -> Check {
    let id = "disk.write_cache";
    let wb: Vec<&str> = devices
        .iter()
        .filter(|d| d.physical && d.queue.write_cache.as_deref() == Some("write back"))
        .map(|d| d.name.as_str())
        .collect();
    let known: Vec<&BlockDevice> = devices
        .iter()
        .filter(|d| d.physical && d.queue.write_cache.is_some())
        .collect();
    if !wb.is_empty() {
        check(
            id,
            Verdict::Warn,
            format!(
                "{}: write cache is write back and power-loss protection is not known; fsync cost depends on flushes being honoured",
                wb.join(", ")
            ),
            Some("confirm power-loss protection in the datasheet; otherwise hdparm -W0 /dev/<dev> (SATA) or nvme set-feature -f 6 -v 0 (NVMe), and measure fsync rates"),
        )
    } else if known.is_empty() {
        check(id, Verdict::Info, "write cache mode not readable", None)
    } else {
        check(
            id,
            Verdict::Ok,
            format!(
                "{}: write through (no volatile cache to flush)",
                known
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None,
        )
    }
}

/// `disk.max_sectors`: requests above `max_sectors_kb` are split, and readahead above it is
/// not issued as one I/O, so a requested readahead/IO size larger than it is not what runs.
pub fn max_sectors(devices: &[BlockDevice], io_size_kb: Option<u64>) -> Check {
    let id = "disk.max_sectors";
    let smallest = devices
        .iter()
        .filter_map(|d| Some((d.queue.max_sectors_kb?, d)))
        .min_by_key(|(k, _)| *k);
    let Some((kb, dev)) = smallest else {
        return check(id, Verdict::Info, "max_sectors_kb not readable", None);
    };
    match io_size_kb {
        Some(io) if io > kb => check(
            id,
            Verdict::Warn,
            format!(
                "requested {io} KiB I/O/readahead is above {}'s max_sectors_kb={kb}: it is split into {kb} KiB requests",
                dev.name
            ),
            Some(&format!(
                "echo {io} > /sys/block/{}/queue/max_sectors_kb (up to max_hw_sectors_kb={})",
                dev.name,
                dev.queue
                    .max_hw_sectors_kb
                    .map(|v| v.to_string())
                    .unwrap_or("?".into())
            )),
        ),
        Some(io) => check(
            id,
            Verdict::Ok,
            format!("requested {io} KiB fits max_sectors_kb={kb} ({})", dev.name),
            None,
        ),
        None => check(
            id,
            Verdict::Ok,
            format!("max_sectors_kb={kb} on {} (no I/O size requested)", dev.name),
            None,
        ),
    }
}

/// `proc.busy`: other processes using CPU at start compete with the benchmark.
pub fn busy(procs: Option<&[BusyProcess]>) -> Check {
    let id = "proc.busy";
    let Some(procs) = procs else {
        return check(id, Verdict::Info, "busy processes not sampled", None);
    };
    let hot: Vec<&BusyProcess> = procs
        .iter()
        .filter(|p| p.cpu_percent > BUSY_PERCENT)
        .collect();
    if hot.is_empty() {
        check(
            id,
            Verdict::Ok,
            format!("no other process above {BUSY_PERCENT:.0}% CPU at start"),
            None,
        )
    } else {
        let list: Vec<String> = hot
            .iter()
            .take(5)
            .map(|p| format!("{} (pid {}) {:.0}%", p.comm, p.pid, p.cpu_percent))
            .collect();
        check(
            id,
            Verdict::Warn,
            format!("other processes busy at start: {}", list.join(", ")),
            Some("stop them or wait until they finish; pin the benchmark to idle CPUs (taskset)"),
        )
    }
}

/// `run.data_vs_ram`: states whether a run's data fits in RAM (a page-cache benchmark) or
/// is far larger (an I/O benchmark); in between, results depend on what happens to be cached.
pub fn data_vs_ram(data_bytes: Option<u64>, mem_total: Option<u64>) -> Check {
    let id = "run.data_vs_ram";
    let (Some(d), Some(m)) = (data_bytes, mem_total) else {
        return check(
            id,
            Verdict::Info,
            "run size unknown: cached vs IO-bound not stated",
            None,
        );
    };
    let r = d as f64 / m.max(1) as f64;
    let s = format!("data {} vs RAM {} ({:.2}x)", gib(d), gib(m), r);
    if r <= 0.5 {
        check(
            id,
            Verdict::Ok,
            format!("{s}: cached (reads come from the page cache)"),
            None,
        )
    } else if r >= 2.0 {
        check(
            id,
            Verdict::Ok,
            format!("{s}: IO-bound (most reads go to the device)"),
            None,
        )
    } else {
        check(
            id,
            Verdict::Warn,
            format!("{s}: partly cached; results depend on what is resident"),
            Some("make the data clearly smaller than half of RAM (cached) or more than twice RAM (IO-bound), or limit memory with a cgroup"),
        )
    }
}

/// All checks for a snapshot.
pub(crate) fn all(
    inv: &Inventory,
    st: Option<&Storage>,
    storage_err: Option<&str>,
    busy_procs: Option<&[BusyProcess]>,
    data_bytes: Option<u64>,
    io_size_kb: Option<u64>,
) -> Vec<Check> {
    let c = &inv.cpu;
    let mut v = vec![
        turbo(c.boost, c.boost_source.as_deref()),
        governor(c.governor.as_deref()),
        smt(c.smt.as_deref(), c.threads, c.cores),
        clocksource(
            inv.clocksource.current.as_deref(),
            &inv.clocksource.available,
            inv.clocksource.tsc_unstable,
        ),
        thp(inv.memory.thp_enabled.as_deref()),
        swap(inv.memory.swap_total_bytes, &inv.memory.swap_devices),
        perf_paranoid(inv.perf_event_paranoid, inv.running_as_root),
        pmu(inv.core_pmu),
        virt(
            inv.virtualization.is_vm,
            inv.virtualization.hypervisor.as_deref(),
            &inv.virtualization.evidence,
        ),
    ];
    match st {
        Some(s) => {
            v.push(noatime(&s.fs_type, &s.mount_options));
            v.push(fill(s.fs_used_bytes, s.fs_total_bytes));
            v.push(write_cache(&s.devices));
            v.push(max_sectors(&s.devices, io_size_kb));
        }
        None => v.push(check(
            "storage.resolve",
            Verdict::Info,
            format!(
                "storage not described: {}",
                storage_err.unwrap_or("unknown reason")
            ),
            None,
        )),
    }
    v.push(busy(busy_procs));
    v.push(data_vs_ram(data_bytes, inv.memory.total_bytes));
    v
}
