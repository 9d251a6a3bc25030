//! Hygiene checks: each a small function from its inputs to a verdict, a reason and a fix,
//! so every rule can be tested on its own and read in one place.

use crate::busy::BusyProcess;
use crate::geometry::FsGeometry;
use crate::kmsg::KernelLog;
use crate::platform::{kernel_params, Bios, CoreTypes};
use crate::smart::DiskHealth;
use crate::storage::{BlockDevice, Storage};
use crate::{Check, Inventory, Verdict};

/// A process above this share of one CPU at start is reported as competing with the run.
pub const BUSY_PERCENT: f64 = 5.0;
/// Below this filesystem fill fraction the device is "nearly empty".
pub const EMPTY_FRACTION: f64 = 0.10;
/// Above this fill fraction the device is "nearly full".
pub const FULL_FRACTION: f64 = 0.90;
/// At or above this share of rated endurance used, an SSD is "worn".
pub const WEAR_WARN_PERCENT: u64 = 80;
/// At or above this temperature (°C) a device is hot enough to throttle.
pub const TEMP_WARN_C: i64 = 70;
/// How many kernel-log error lines a check's reason quotes.
pub const QUOTED_ERROR_LINES: usize = 3;

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

/// `disk.health`: a worn SSD, one with spare below threshold, media errors, a critical
/// warning, a high temperature or remapped sectors is slower (retries, throttling) and
/// may lose data; figures from such a device describe the device's fault.
pub fn disk_health(health: &[DiskHealth]) -> Check {
    let id = "disk.health";
    if health.is_empty() {
        return check(
            id,
            Verdict::Info,
            "no physical device under the data dir: SMART health unavailable",
            None,
        );
    }
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    let mut unavailable = false;
    for h in health {
        if let Some(why) = &h.unavailable {
            unavailable = true;
            lines.push(format!("{}: unavailable: {why}", h.device));
            continue;
        }
        let mut p = Vec::new();
        if let Some(u) = h.percentage_used.filter(|u| *u >= WEAR_WARN_PERCENT) {
            p.push(format!("{u}% of rated life used"));
        }
        if let (Some(s), Some(t)) = (h.available_spare, h.available_spare_threshold) {
            if s < t {
                p.push(format!("spare {s}% below threshold {t}%"));
            }
        }
        if let Some(e) = h.media_errors.filter(|e| *e > 0) {
            p.push(format!("{e} media/uncorrectable errors"));
        }
        if let Some(c) = h.critical_warning.filter(|c| *c != 0) {
            p.push(format!("critical warning 0x{c:02x}"));
        }
        if let Some(t) = h.temperature_c.filter(|t| *t >= TEMP_WARN_C) {
            p.push(format!("{t} °C"));
        }
        if let Some(r) = h.reallocated_sectors.filter(|r| *r > 0) {
            p.push(format!("{r} reallocated sectors"));
        }
        if let Some(r) = h.pending_sectors.filter(|r| *r > 0) {
            p.push(format!("{r} pending sectors"));
        }
        if h.smart_passed == Some(false) {
            p.push("SMART self-assessment FAILED".into());
        }
        if p.is_empty() {
            lines.push(format!(
                "{}: {} ({})",
                h.device,
                h.figures(),
                h.source.as_deref().unwrap_or("?")
            ));
        } else {
            problems.push(format!("{}: {}", h.device, p.join(", ")));
        }
    }
    if !problems.is_empty() {
        check(
            id,
            Verdict::Warn,
            problems.join("; "),
            Some("replace the device or benchmark elsewhere: worn or erroring flash retries reads and throttles; smartctl -a /dev/<dev> (or nvme smart-log) for the details"),
        )
    } else if unavailable {
        check(id, Verdict::Info, lines.join("; "), None)
    } else {
        check(id, Verdict::Ok, lines.join("; "), None)
    }
}

/// `kernel.io_errors`: I/O, filesystem and PCIe (AER) errors in the kernel log since boot
/// mean the storage path is retrying or failing; correctable PCIe errors alone can cost
/// throughput long before anything breaks.
pub fn kernel_io_errors(log: &KernelLog) -> Check {
    let id = "kernel.io_errors";
    if let Some(why) = &log.unavailable {
        return check(id, Verdict::Info, why.clone(), None);
    }
    let src = log.source.as_deref().unwrap_or("kernel log");
    match log.io_errors {
        None => check(id, Verdict::Info, "kernel log not read", None),
        Some(0) => check(
            id,
            Verdict::Ok,
            format!(
                "no I/O, filesystem or PCIe error among {} kernel log messages since boot ({src})",
                log.records.unwrap_or(0)
            ),
            None,
        ),
        Some(n) => {
            let quoted: Vec<String> = log
                .io_error_lines
                .iter()
                .take(QUOTED_ERROR_LINES)
                .map(|l| format!("\u{ab}{l}\u{bb}"))
                .collect();
            check(
                id,
                Verdict::Warn,
                format!(
                    "{n} I/O, filesystem or PCIe error messages in the kernel log since boot ({src}): {}{}",
                    quoted.join(" "),
                    if n as usize > quoted.len() { " …" } else { "" }
                ),
                Some("find the cause before benchmarking: smartctl -a / nvme error-log for the disk, lspci -vvv and the slot or riser for AER, xfs_repair -n or e2fsck -fn for the filesystem (the log keeps old errors until reboot)"),
            )
        }
    }
}

/// `host.bios`: states the firmware, whose power, C-state and turbo settings shape results
/// and whose updates can change them.
pub fn bios(b: &Bios) -> Check {
    let id = "host.bios";
    if let Some(why) = &b.unavailable {
        return check(id, Verdict::Info, format!("BIOS unavailable: {why}"), None);
    }
    let o = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
    check(
        id,
        Verdict::Info,
        format!(
            "BIOS {} {} ({}); system {} {}",
            o(&b.vendor),
            o(&b.version),
            o(&b.date),
            o(&b.sys_vendor),
            o(&b.product_name)
        ),
        None,
    )
}

/// `kernel.cmdline`: boot parameters that change benchmark results (idle polling,
/// tickless or isolated CPUs, frequency driver, C-state limits, THP, mitigations).
pub fn cmdline(cmdline: Option<&str>, unavailable: Option<&str>) -> Check {
    let id = "kernel.cmdline";
    let Some(line) = cmdline else {
        return check(
            id,
            Verdict::Info,
            format!(
                "kernel command line unavailable: {}",
                unavailable.unwrap_or("not read")
            ),
            None,
        );
    };
    let params = kernel_params(line);
    let mut found: Vec<(Verdict, String)> = Vec::new();
    for p in &params {
        let why = if *p == "mitigations=off" {
            Some((Verdict::Info, "CPU vulnerability mitigations off: figures are not comparable with mitigated hosts"))
        } else if *p == "idle=poll" {
            Some((
                Verdict::Warn,
                "idle CPUs spin: lower wake-up latency, less turbo headroom",
            ))
        } else if p.starts_with("nohz_full=") {
            Some((
                Verdict::Warn,
                "tickless CPUs: timer and scheduling behaviour differ from a default kernel",
            ))
        } else if p.starts_with("isolcpus=") {
            Some((
                Verdict::Warn,
                "CPUs removed from scheduling: unpinned threads never run there",
            ))
        } else if *p == "intel_pstate=disable" {
            Some((
                Verdict::Warn,
                "intel_pstate disabled: frequency control falls back to acpi-cpufreq",
            ))
        } else if p.starts_with("processor.max_cstate=") || p.starts_with("intel_idle.max_cstate=")
        {
            Some((
                Verdict::Warn,
                "idle states limited: wake-up latency and turbo headroom differ",
            ))
        } else if p.starts_with("transparent_hugepage=") {
            Some((Verdict::Warn, "THP mode set at boot"))
        } else {
            None
        };
        if let Some((v, why)) = why {
            found.push((v, format!("{p} ({why})")));
        }
    }
    let Some(worst) = found.iter().map(|(v, _)| *v).max() else {
        return check(
            id,
            Verdict::Info,
            format!(
                "no result-changing boot parameters ({} kernel parameters)",
                params.len()
            ),
            None,
        );
    };
    check(
        id,
        worst,
        found
            .into_iter()
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join("; "),
        Some("compare only with hosts booted with the same parameters, or change them (GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub, reboot)"),
    )
}

/// `cpu.hybrid`: on Intel P/E hybrids a thread's speed depends on which core type the
/// scheduler gives it, so unpinned results vary between runs.
pub fn hybrid(types: Option<&CoreTypes>) -> Check {
    let id = "cpu.hybrid";
    match types {
        None => check(id, Verdict::Info, "core types unknown (/sys/devices not readable)", None),
        Some(t) if t.efficiency_cpus.is_empty() => check(
            id,
            Verdict::Ok,
            "not a hybrid CPU (no /sys/devices/cpu_atom)",
            None,
        ),
        Some(t) => check(
            id,
            Verdict::Warn,
            format!(
                "hybrid CPU: {} performance + {} efficiency CPUs; pin threads (taskset) or results depend on scheduling",
                t.performance_cpus.len(),
                t.efficiency_cpus.len()
            ),
            Some("taskset -c <performance CPUs> plumb … (or disable the E-cores in the BIOS)"),
        ),
    }
}

/// `disk.os_shared`: when the data directory's device also holds `/`, the OS's logs,
/// swap and other I/O compete with the benchmark's.
pub fn shared_with_os(shares: Option<bool>, data: &[String], os: &[String]) -> Check {
    let id = "disk.os_shared";
    match shares {
        Some(true) => check(
            id,
            Verdict::Warn,
            format!(
                "data dir shares its device with the OS ({}): logs/swap/other IO compete",
                data.iter()
                    .filter(|d| os.contains(d))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some("put the data directory on a device of its own (not a partition of the OS disk)"),
        ),
        Some(false) => check(
            id,
            Verdict::Ok,
            format!(
                "data dir on {}, OS on {}: not shared",
                data.join(", "),
                os.join(", ")
            ),
            None,
        ),
        None => check(
            id,
            Verdict::Info,
            "cannot tell whether the data dir shares a device with the OS (no block device under one of them)",
            None,
        ),
    }
}

/// `fs.geometry`: states block size and stripe alignment, against which a database's
/// page size and I/O size can be judged.
pub fn fs_geometry(fs_type: &str, g: Option<&FsGeometry>) -> Check {
    let id = "fs.geometry";
    let Some(g) = g else {
        return check(
            id,
            Verdict::Info,
            format!("{fs_type}: geometry not read"),
            None,
        );
    };
    let mut parts = Vec::new();
    if let Some(b) = g.block_size {
        parts.push(format!("block {b} B"));
    }
    if let Some(s) = g.sector_size {
        parts.push(format!("sector {s} B"));
    }
    match (g.stripe_unit_blocks, g.stripe_width_blocks) {
        (None, None) => {}
        (u, w) => {
            let show = |v: Option<u64>| {
                v.map(|v| match g.block_size {
                    Some(b) if v > 0 => format!("{v} blocks ({} KiB)", v * b / 1024),
                    _ => v.to_string(),
                })
                .unwrap_or("?".into())
            };
            parts.push(format!("stripe unit {}, width {}", show(u), show(w)));
        }
    }
    if let Some(src) = &g.source {
        parts.push(format!("from {src}"));
    }
    if let Some(why) = &g.unavailable {
        parts.push(format!("unavailable: {why}"));
    }
    if let Some(b) = g.statvfs_bsize {
        parts.push(format!("statvfs f_bsize {b}"));
    }
    check(
        id,
        Verdict::Info,
        format!("{fs_type}: {}", parts.join(", ")),
        None,
    )
}

/// `os.remove_ipc`: with systemd-logind's RemoveIPC=yes (its default), a login user's
/// shared memory and /dev/shm files go when their last session ends, and a PostgreSQL
/// started as that user loses them mid-run (seed 003 names it: "I always forget
/// these"). As root plumb starts servers as their own system users, which logind leaves
/// alone; as a login user it starts them as that user.
pub fn remove_ipc(remove: Option<bool>, as_root: Option<bool>, uid: Option<u32>) -> Check {
    let id = "os.remove_ipc";
    match (remove, as_root, uid) {
        (None, _, _) => check(id, Verdict::Info, "no systemd-logind configuration: nothing removes a user's shared memory at logout", None),
        (Some(false), _, _) => check(id, Verdict::Ok, "RemoveIPC=no: a server's shared memory outlives its user's logins", None),
        (Some(true), Some(true), _) => check(
            id,
            Verdict::Ok,
            "RemoveIPC=yes, but plumb runs as root and starts servers as their system users (postgres, mysql), which logind leaves alone",
            None,
        ),
        (Some(true), _, Some(uid)) if uid < 1000 => check(
            id,
            Verdict::Ok,
            format!("RemoveIPC=yes, but plumb runs as system user {uid}, which logind leaves alone"),
            None,
        ),
        (Some(true), _, None) => check(
            id,
            Verdict::Info,
            "RemoveIPC=yes: a server started as a login user loses its shared memory when that user's last session ends (who plumb ran as is not known here)",
            None,
        ),
        (Some(true), _, Some(_)) => check(
            id,
            Verdict::Warn,
            "RemoveIPC=yes: when your last login session ends, systemd-logind removes your shared memory and /dev/shm files, and a PostgreSQL plumb started as you loses them mid-run",
            Some("add RemoveIPC=no under [Login] in /etc/systemd/logind.conf, then systemctl restart systemd-logind"),
        ),
    }
}

/// `perf.ptrace_scope`: Yama's ptrace_scope decides whether debuggers and stack samplers
/// (gdb, eu-stack, the poor man's profiler) can attach to a running server.
pub fn ptrace_scope(scope: Option<i64>, as_root: Option<bool>) -> Check {
    let id = "perf.ptrace_scope";
    let fix = Some("sysctl kernel.yama.ptrace_scope=0 (or attach as root / with CAP_SYS_PTRACE)");
    match (scope, as_root) {
        (None, _) => check(
            id,
            Verdict::Info,
            "/proc/sys/kernel/yama/ptrace_scope absent (Yama not enabled): attaching is limited only by ordinary permissions",
            None,
        ),
        (Some(0), _) => check(id, Verdict::Ok, "ptrace_scope=0: debuggers and stack samplers can attach to own processes", None),
        (Some(3), _) => check(
            id,
            Verdict::Warn,
            "ptrace_scope=3: no process may attach, not even root, until reboot",
            Some("boot without kernel.yama.ptrace_scope=3 (it cannot be lowered at run time)"),
        ),
        (Some(s), Some(true)) => check(
            id,
            Verdict::Ok,
            format!("ptrace_scope={s}, but running as root: attaching allowed"),
            None,
        ),
        (Some(1), _) => check(
            id,
            Verdict::Warn,
            "ptrace_scope=1: only a parent may attach; gdb/eu-stack on a running server need root or CAP_SYS_PTRACE",
            fix,
        ),
        (Some(s), _) => check(
            id,
            Verdict::Warn,
            format!("ptrace_scope={s}: only root (CAP_SYS_PTRACE) may attach to a running server"),
            fix,
        ),
    }
}

/// `perf.kptr_restrict`: with kernel pointers hidden, perf cannot resolve kernel symbols
/// and the kernel's share of a profile shows as `[unknown]`.
pub fn kptr_restrict(level: Option<i64>, as_root: Option<bool>) -> Check {
    let id = "perf.kptr_restrict";
    let fix = Some("sysctl kernel.kptr_restrict=0 (or profile as root)");
    match (level, as_root) {
        (None, _) => check(id, Verdict::Info, "kptr_restrict not readable", None),
        (Some(0), _) => check(id, Verdict::Ok, "kptr_restrict=0: perf resolves kernel symbols", None),
        (Some(1), Some(true)) => check(
            id,
            Verdict::Ok,
            "kptr_restrict=1, but running as root: perf resolves kernel symbols",
            None,
        ),
        (Some(1), _) => check(
            id,
            Verdict::Warn,
            "kptr_restrict=1 and not root: perf cannot resolve kernel symbols (kernel frames show as [unknown])",
            fix,
        ),
        (Some(l), _) => check(
            id,
            Verdict::Warn,
            format!("kptr_restrict={l}: kernel addresses hidden even from root; perf cannot resolve kernel symbols"),
            Some("sysctl kernel.kptr_restrict=0"),
        ),
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
        ptrace_scope(inv.ptrace_scope, inv.running_as_root),
        remove_ipc(inv.remove_ipc, inv.running_as_root, inv.uid),
        kptr_restrict(inv.kptr_restrict, inv.running_as_root),
        hybrid(c.core_types.as_ref()),
        cmdline(inv.cmdline.as_deref(), inv.cmdline_unavailable.as_deref()),
        bios(&inv.bios),
        kernel_io_errors(&inv.kernel_log),
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
            v.push(disk_health(&s.health));
            v.push(shared_with_os(
                s.shares_os_device,
                &s.physical_devices(),
                &s.os_devices,
            ));
            v.push(fs_geometry(&s.fs_type, s.geometry.as_ref()));
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
