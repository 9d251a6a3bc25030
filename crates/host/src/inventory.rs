//! What the machine is: CPU, clock, memory, kernel, virtualisation — read from /proc and /sys.

use crate::command::Runner;
use crate::kmsg::{self, KernelLog};
use crate::platform::{self, Bios, CoreTypes};
use crate::sysfs::{bracketed, parse_cpu_list, Fs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Everything about the host (not its storage) that can change a benchmark's result, so a
/// report can say what machine a figure came from and two runs can be compared fairly.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Inventory {
    /// Processor model, topology, caches, frequency policy.
    pub cpu: Cpu,
    /// The kernel's clock source: hpet or acpi_pm make every clock read a slow syscall.
    pub clocksource: Clocksource,
    /// RAM, swap and transparent huge pages.
    pub memory: Memory,
    /// Number of NUMA nodes (`/sys/devices/system/node/node*`).
    pub numa_nodes: Option<u32>,
    /// Kernel release (`/proc/sys/kernel/osrelease`).
    pub kernel: Option<String>,
    /// Distribution (`PRETTY_NAME` from `/etc/os-release`).
    pub distribution: Option<String>,
    /// Host name, to tell runs from different machines apart.
    pub hostname: Option<String>,
    /// Whether this is a VM and which hypervisor, with the evidence used.
    pub virtualization: Virtualization,
    /// `/proc/sys/kernel/perf_event_paranoid`: above 1 limits hardware counters for non-root.
    pub perf_event_paranoid: Option<i64>,
    /// Whether a CPU PMU is exposed (`/sys/bus/event_source/devices/cpu*`); VMs often lack one.
    pub core_pmu: Option<bool>,
    /// Whether plumb ran as root (only known on the live machine), which bypasses
    /// perf_event_paranoid.
    pub running_as_root: Option<bool>,
    /// BIOS vendor, version and date, and the machine's maker and model (DMI).
    pub bios: Bios,
    /// `/proc/cmdline`: boot parameters such as `mitigations=off` or `isolcpus=` change
    /// results.
    pub cmdline: Option<String>,
    /// Why `/proc/cmdline` could not be read.
    pub cmdline_unavailable: Option<String>,
    /// `/proc/sys/kernel/yama/ptrace_scope`; `None` when Yama is absent.
    pub ptrace_scope: Option<i64>,
    /// `/proc/sys/kernel/kptr_restrict`: at 1 non-root perf cannot resolve kernel symbols.
    pub kptr_restrict: Option<i64>,
    /// I/O, filesystem and PCIe errors in the kernel log since boot.
    pub kernel_log: KernelLog,
    /// systemd-logind's `RemoveIPC` as configured (`/etc/systemd/logind.conf`, then
    /// `logind.conf.d/*.conf` in order; systemd's default, yes, when none sets it):
    /// logind then removes a login user's shared memory when their last session ends,
    /// a PostgreSQL started as that user's among it (seed 003). `None` without logind's
    /// configuration.
    pub remove_ipc: Option<bool>,
    /// plumb's effective uid (live machine only): logind leaves system users (below
    /// 1000) alone.
    pub uid: Option<u32>,
}

/// The `RemoveIPC` logind reads: the last assignment in `[Login]` across
/// logind.conf and its drop-ins (read in name order, as systemd does), yes by default.
fn read_remove_ipc(fs: &Fs) -> Option<bool> {
    let main = fs.read("/etc/systemd/logind.conf").ok();
    let dropins: Vec<String> = fs
        .names("/etc/systemd/logind.conf.d")
        .into_iter()
        .filter(|n| n.ends_with(".conf"))
        .filter_map(|n| fs.read(format!("/etc/systemd/logind.conf.d/{n}")).ok())
        .collect();
    if main.is_none() && dropins.is_empty() {
        return None;
    }
    let mut value = true;
    for text in main.iter().chain(dropins.iter()) {
        let mut login = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                login = line == "[Login]";
            } else if let Some(v) = line.strip_prefix("RemoveIPC=").filter(|_| login) {
                match v.trim().to_ascii_lowercase().as_str() {
                    "yes" | "true" | "1" | "on" => value = true,
                    "no" | "false" | "0" | "off" => value = false,
                    _ => {}
                }
            }
        }
    }
    Some(value)
}

/// The processor as the kernel sees it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Cpu {
    /// `model name` from /proc/cpuinfo (or `Hardware`/`CPU part` on Arm).
    pub model: Option<String>,
    /// `vendor_id` from /proc/cpuinfo.
    pub vendor: Option<String>,
    /// Distinct physical packages among online CPUs.
    pub sockets: Option<u32>,
    /// Distinct physical cores among online CPUs.
    pub cores: Option<u32>,
    /// Online logical CPUs.
    pub threads: Option<u32>,
    /// SMT (hyper-threading) state: `on`, `off`, `forceoff`, `notsupported`, … from
    /// `/sys/devices/system/cpu/smt/control`, or derived from threads/cores.
    pub smt: Option<String>,
    /// Caches of CPU 0.
    pub caches: Vec<Cache>,
    /// Current frequency of CPU 0 in MHz (cpufreq, else `cpu MHz` of /proc/cpuinfo).
    pub freq_cur_mhz: Option<u64>,
    /// Lowest hardware frequency in MHz.
    pub freq_min_mhz: Option<u64>,
    /// Highest hardware frequency in MHz.
    pub freq_max_mhz: Option<u64>,
    /// cpufreq scaling driver, e.g. `intel_pstate`, `amd-pstate-epp`, `acpi-cpufreq`.
    pub freq_driver: Option<String>,
    /// cpufreq governor of CPU 0; `None` when there is no cpufreq (typical in VMs).
    pub governor: Option<String>,
    /// Whether turbo/boost is enabled; `None` when no control file was found.
    pub boost: Option<bool>,
    /// The file the boost state came from.
    pub boost_source: Option<String>,
    /// Whether the `hypervisor` CPU flag is set.
    pub hypervisor_flag: bool,
    /// Performance and efficiency CPUs on a hybrid processor (efficiency empty when not
    /// hybrid); `None` when `/sys/devices` was not readable.
    pub core_types: Option<CoreTypes>,
    /// The OS's energy/performance preference of CPU 0 (`energy_performance_preference`:
    /// `performance`, `balance_performance`, `power` …, set by intel_pstate and
    /// amd-pstate-epp): how eagerly the hardware raises the clock, which the PostgreSQL
    /// deck (seed 004) names beside the BIOS power profile.
    pub epp: Option<String>,
    /// The platform's power profile (`/sys/firmware/acpi/platform_profile`:
    /// `performance`, `balanced`, `low-power`, `quiet`), the firmware's own knob.
    pub platform_profile: Option<String>,
    /// The processor's temperature when the snapshot was taken, °C (hwmon's coretemp
    /// `Package id 0`, k10temp `Tctl`/`Tdie`, or the `x86_pkg_temp` thermal zone): a hot
    /// CPU throttles; `None` where the kernel shows none (VMs).
    pub temperature_c: Option<f64>,
}

/// One CPU cache, as listed under `/sys/devices/system/cpu/cpu0/cache/index*`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Cache {
    /// 1, 2, 3…
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size of one instance in KiB.
    pub size_kb: u64,
    /// How many logical CPUs share one instance.
    pub shared_by: u32,
}

/// The clock source behind `clock_gettime`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Clocksource {
    /// `current_clocksource`.
    pub current: Option<String>,
    /// `available_clocksource`.
    pub available: Vec<String>,
    /// Whether the kernel log says the TSC was marked unstable; `None` when the log could
    /// not be read.
    pub tsc_unstable: Option<bool>,
}

/// Memory, swap and THP.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Memory {
    /// `MemTotal` in bytes.
    pub total_bytes: Option<u64>,
    /// `MemAvailable` in bytes.
    pub available_bytes: Option<u64>,
    /// `SwapTotal` in bytes.
    pub swap_total_bytes: Option<u64>,
    /// `SwapFree` in bytes.
    pub swap_free_bytes: Option<u64>,
    /// Active swap areas from `/proc/swaps`.
    pub swap_devices: Vec<String>,
    /// THP mode (`always`, `madvise`, `never`).
    pub thp_enabled: Option<String>,
    /// THP defrag mode.
    pub thp_defrag: Option<String>,
}

/// Virtualisation: figures from a VM are not comparable with bare metal.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
#[serde(default)]
pub struct Virtualization {
    /// `Some(true)` for a VM, `Some(false)` for bare metal, `None` when nothing could be read.
    pub is_vm: Option<bool>,
    /// The hypervisor when it can be told, e.g. `KVM`, `Xen`, `VMware`, `Hyper-V`.
    pub hypervisor: Option<String>,
    /// What the verdict is based on, e.g. `cpuinfo flag hypervisor`, `clocksource kvm-clock`.
    pub evidence: Vec<String>,
}

pub(crate) fn read(fs: &Fs, runner: &Runner, notes: &mut Vec<String>) -> Inventory {
    let cpuinfo = read_cpuinfo(fs, notes);
    let cpu = read_cpu(fs, cpuinfo.as_ref());
    let running_as_root = fs.is_live().then(|| {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    });
    // The kernel log is read once, for the TSC finding and for I/O errors.
    let log = kmsg::read(fs, runner, running_as_root);
    let clocksource = read_clocksource(fs, log.as_ref().ok());
    let memory = read_memory(fs, notes);
    let virtualization = read_virt(fs, &cpu, &clocksource);
    let (cmdline, cmdline_unavailable) = match fs.read("/proc/cmdline") {
        Ok(t) => (Some(t.trim().to_string()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Inventory {
        numa_nodes: read_numa(fs),
        kernel: fs.string("/proc/sys/kernel/osrelease"),
        distribution: read_os_release(fs),
        hostname: fs.string("/proc/sys/kernel/hostname"),
        perf_event_paranoid: fs.i64("/proc/sys/kernel/perf_event_paranoid"),
        core_pmu: read_core_pmu(fs),
        running_as_root,
        bios: platform::read_bios(fs),
        cmdline,
        cmdline_unavailable,
        ptrace_scope: fs.i64("/proc/sys/kernel/yama/ptrace_scope"),
        kptr_restrict: fs.i64("/proc/sys/kernel/kptr_restrict"),
        kernel_log: kmsg::summarise(&log),
        remove_ipc: read_remove_ipc(fs),
        // SAFETY: geteuid has no preconditions and cannot fail.
        uid: fs.is_live().then(|| unsafe { libc::geteuid() }),
        cpu,
        clocksource,
        memory,
        virtualization,
    }
}

fn read_cpuinfo(fs: &Fs, notes: &mut Vec<String>) -> Option<procfs_core::CpuInfo> {
    let text = match fs.read("/proc/cpuinfo") {
        Ok(t) => t,
        Err(e) => {
            notes.push(e.to_string());
            return None;
        }
    };
    // procfs-core asserts at least one processor block; guard so we never panic.
    if !text.lines().any(|l| l.starts_with("processor")) {
        notes.push(format!(
            "{}: no processor entries",
            fs.path("/proc/cpuinfo").display()
        ));
        return None;
    }
    procfs_core::FromRead::from_read(text.as_bytes()).ok()
}

fn read_cpu(fs: &Fs, info: Option<&procfs_core::CpuInfo>) -> Cpu {
    let sys = "/sys/devices/system/cpu";
    let field = |k: &str| info.and_then(|i| i.get_field(0, k)).map(str::to_string);
    let model = field("model name")
        .or_else(|| field("Hardware"))
        .or_else(|| field("cpu model"))
        .or_else(|| field("CPU part").map(|p| format!("CPU part {p}")));
    let hypervisor_flag = info
        .and_then(|i| i.flags(0))
        .is_some_and(|f| f.contains(&"hypervisor"));

    let online: Vec<u32> = fs
        .string(format!("{sys}/online"))
        .map(|s| parse_cpu_list(&s))
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| {
            fs.names(sys)
                .iter()
                .filter_map(|n| n.strip_prefix("cpu")?.parse().ok())
                .collect()
        });
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for c in &online {
        let t = format!("{sys}/cpu{c}/topology");
        let pkg = fs.i64(format!("{t}/physical_package_id"));
        let die = fs.i64(format!("{t}/die_id")).unwrap_or(0);
        let core = fs.i64(format!("{t}/core_id"));
        if let Some(p) = pkg {
            packages.insert(p);
        }
        if let (Some(p), Some(k)) = (pkg, core) {
            cores.insert((p, die, k));
        }
    }
    // Fall back to /proc/cpuinfo's physical id / core id when sysfs topology is absent.
    if packages.is_empty() {
        if let Some(i) = info {
            for n in 0..i.num_cores() {
                let p = i.get_field(n, "physical id").and_then(|v| v.parse().ok());
                let k = i.get_field(n, "core id").and_then(|v| v.parse().ok());
                if let Some(p) = p {
                    packages.insert(p);
                    if let Some(k) = k {
                        cores.insert((p, 0, k));
                    }
                }
            }
        }
    }
    let threads = if online.is_empty() {
        info.map(|i| i.num_cores() as u32)
    } else {
        Some(online.len() as u32)
    };
    let cores_n = (!cores.is_empty()).then_some(cores.len() as u32);
    let smt = fs.string(format!("{sys}/smt/control")).or_else(|| {
        let (t, c) = (threads?, cores_n?);
        Some(if t > c { "on" } else { "off" }.to_string())
    });

    let mut caches = Vec::new();
    for idx in fs.names(format!("{sys}/cpu0/cache")) {
        if !idx.starts_with("index") {
            continue;
        }
        let d = format!("{sys}/cpu0/cache/{idx}");
        let size_kb = fs
            .string(format!("{d}/size"))
            .and_then(|s| parse_size_kb(&s));
        let (Some(level), Some(size_kb)) = (fs.u64(format!("{d}/level")), size_kb) else {
            continue;
        };
        caches.push(Cache {
            level: level as u32,
            kind: fs.string(format!("{d}/type")).unwrap_or_default(),
            size_kb,
            shared_by: fs
                .string(format!("{d}/shared_cpu_list"))
                .map(|s| parse_cpu_list(&s).len() as u32)
                .unwrap_or(1),
        });
    }

    let pol = if fs.exists(format!("{sys}/cpufreq/policy0")) {
        format!("{sys}/cpufreq/policy0")
    } else {
        format!("{sys}/cpu0/cpufreq")
    };
    let khz = |f: &str| fs.u64(format!("{pol}/{f}")).map(|v| v / 1000);
    let freq_cur_mhz = khz("scaling_cur_freq").or_else(|| {
        field("cpu MHz")
            .and_then(|m| m.parse::<f64>().ok())
            .map(|m| m.round() as u64)
    });
    let (boost, boost_source) = read_boost(fs, &pol);
    Cpu {
        model,
        vendor: field("vendor_id"),
        sockets: (!packages.is_empty()).then_some(packages.len() as u32),
        cores: cores_n,
        threads,
        smt,
        caches,
        freq_cur_mhz,
        freq_min_mhz: khz("cpuinfo_min_freq"),
        freq_max_mhz: khz("cpuinfo_max_freq"),
        freq_driver: fs.string(format!("{pol}/scaling_driver")),
        governor: fs.string(format!("{pol}/scaling_governor")),
        boost,
        boost_source,
        hypervisor_flag,
        core_types: platform::read_core_types(fs),
        epp: fs.string(format!("{pol}/energy_performance_preference")),
        platform_profile: fs.string("/sys/firmware/acpi/platform_profile"),
        temperature_c: cpu_temperature(fs),
    }
}

/// The CPU package's temperature, °C: hwmon's coretemp (`Package id 0`) or k10temp
/// (`Tctl`, else `Tdie`) sensors, else the `x86_pkg_temp` thermal zone.
fn cpu_temperature(fs: &Fs) -> Option<f64> {
    let milli = |p: String| fs.i64(p).map(|m| m as f64 / 1000.0);
    for hw in fs.names("/sys/class/hwmon") {
        let dir = format!("/sys/class/hwmon/{hw}");
        let want: &[&str] = match fs.string(format!("{dir}/name")).as_deref() {
            Some("coretemp") => &["Package id 0"],
            Some("k10temp" | "zenpower") => &["Tctl", "Tdie"],
            _ => continue,
        };
        let mut inputs: Vec<(String, String)> = fs
            .names(&dir)
            .into_iter()
            .filter_map(|f| {
                let n = f.strip_suffix("_label")?.to_string();
                Some((fs.string(format!("{dir}/{f}"))?, n))
            })
            .collect();
        inputs.sort();
        for label in want {
            if let Some((_, n)) = inputs.iter().find(|(l, _)| l == label) {
                if let Some(t) = milli(format!("{dir}/{n}_input")) {
                    return Some(t);
                }
            }
        }
    }
    fs.names("/sys/class/thermal")
        .into_iter()
        .filter(|z| z.starts_with("thermal_zone"))
        .find(|z| {
            fs.string(format!("/sys/class/thermal/{z}/type")).as_deref() == Some("x86_pkg_temp")
        })
        .and_then(|z| milli(format!("/sys/class/thermal/{z}/temp")))
}

/// `32K`, `1024K`, `32768 KB`, `2M` → KiB.
fn parse_size_kb(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().ok()?;
    let unit = s[digits.len()..].trim().to_ascii_uppercase();
    Some(match unit.chars().next() {
        Some('M') => n * 1024,
        Some('G') => n * 1024 * 1024,
        Some('K') => n,
        None => n / 1024,
        _ => return None,
    })
}

/// Turbo/boost from intel_pstate's `no_turbo`, the global cpufreq `boost`, or the per-policy
/// `boost` (amd-pstate).
fn read_boost(fs: &Fs, pol: &str) -> (Option<bool>, Option<String>) {
    let candidates = [
        ("/sys/devices/system/cpu/intel_pstate/no_turbo", true),
        ("/sys/devices/system/cpu/cpufreq/boost", false),
    ];
    for (p, inverted) in candidates {
        if let Some(v) = fs.u64(p) {
            return (Some((v != 0) != inverted), Some(p.to_string()));
        }
    }
    let p = format!("{pol}/boost");
    match fs.u64(&p) {
        Some(v) => (Some(v != 0), Some(p)),
        None => (None, None),
    }
}

fn read_clocksource(fs: &Fs, log: Option<&kmsg::Messages>) -> Clocksource {
    let d = "/sys/devices/system/clocksource/clocksource0";
    Clocksource {
        current: fs.string(format!("{d}/current_clocksource")),
        available: fs
            .string(format!("{d}/available_clocksource"))
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
        tsc_unstable: log.map(|m| kmsg::tsc_marked_unstable(&m.lines)),
    }
}

fn read_memory(fs: &Fs, notes: &mut Vec<String>) -> Memory {
    let mi: Option<procfs_core::Meminfo> = match fs.parse("/proc/meminfo") {
        Ok(m) => Some(m),
        Err(e) => {
            notes.push(e.to_string());
            None
        }
    };
    let swap_devices = fs
        .read("/proc/swaps")
        .map(|t| {
            t.lines()
                .skip(1)
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let thp = "/sys/kernel/mm/transparent_hugepage";
    Memory {
        total_bytes: mi.as_ref().map(|m| m.mem_total),
        available_bytes: mi.as_ref().and_then(|m| m.mem_available),
        swap_total_bytes: mi.as_ref().map(|m| m.swap_total),
        swap_free_bytes: mi.as_ref().map(|m| m.swap_free),
        swap_devices,
        thp_enabled: fs
            .string(format!("{thp}/enabled"))
            .and_then(|s| bracketed(&s)),
        thp_defrag: fs
            .string(format!("{thp}/defrag"))
            .and_then(|s| bracketed(&s)),
    }
}

fn read_numa(fs: &Fs) -> Option<u32> {
    let d = "/sys/devices/system/node";
    if let Some(s) = fs.string(format!("{d}/online")) {
        let n = parse_cpu_list(&s).len() as u32;
        if n > 0 {
            return Some(n);
        }
    }
    let n = fs
        .names(d)
        .iter()
        .filter(|n| {
            n.strip_prefix("node")
                .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit()))
        })
        .count() as u32;
    (n > 0).then_some(n)
}

fn read_os_release(fs: &Fs) -> Option<String> {
    let text = fs
        .read("/etc/os-release")
        .or_else(|_| fs.read("/usr/lib/os-release"))
        .ok()?;
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_string())
    };
    get("PRETTY_NAME").or_else(|| get("NAME"))
}

fn read_core_pmu(fs: &Fs) -> Option<bool> {
    if fs.is_live() {
        return Some(plumb_probes::perf::core_pmu_present());
    }
    let d = "/sys/bus/event_source/devices";
    if !fs.exists(d) {
        return None;
    }
    Some(
        fs.names(d).iter().any(|n| {
            matches!(n.as_str(), "cpu" | "cpu_core" | "cpu_atom") || n.starts_with("armv")
        }),
    )
}

/// Decides VM or bare metal, and which hypervisor, from the signs the guest kernel exposes.
fn read_virt(fs: &Fs, cpu: &Cpu, cs: &Clocksource) -> Virtualization {
    let mut evidence = Vec::new();
    let mut hypervisor: Option<String> = None;
    let set = |h: &str, hv: &mut Option<String>| {
        if hv.is_none() {
            *hv = Some(h.to_string());
        }
    };
    if let Some(t) = fs.string("/sys/hypervisor/type") {
        evidence.push(format!("/sys/hypervisor/type {t}"));
        set(&capitalise_hv(&t), &mut hypervisor);
    }
    let dmi = |f: &str| fs.string(format!("/sys/class/dmi/id/{f}"));
    let vendor = dmi("sys_vendor").unwrap_or_default();
    let product = dmi("product_name").unwrap_or_default();
    let bios = dmi("bios_vendor").unwrap_or_default();
    let all = format!("{vendor} {product} {bios}");
    let known = [
        ("QEMU", "KVM/QEMU"),
        ("KVM", "KVM"),
        ("Amazon EC2", "KVM (Amazon Nitro)"),
        ("Google Compute Engine", "KVM (Google)"),
        ("VMware", "VMware"),
        ("VirtualBox", "VirtualBox"),
        ("innotek", "VirtualBox"),
        ("Xen", "Xen"),
        ("Parallels", "Parallels"),
        ("BHYVE", "bhyve"),
        ("Virtual Machine", "Hyper-V"),
        ("OpenStack", "KVM (OpenStack)"),
        ("Cloud Hypervisor", "Cloud Hypervisor"),
        ("Firecracker", "KVM (Firecracker)"),
    ];
    if let Some((_, hv)) = known.iter().find(|(p, _)| all.contains(p)) {
        evidence.push(format!("DMI {}", all.trim()));
        set(hv, &mut hypervisor);
    }
    if cpu.hypervisor_flag {
        evidence.push("cpuinfo flag hypervisor".into());
    }
    for c in &cs.available {
        let hv = match c.as_str() {
            "kvm-clock" => "KVM",
            "xen" => "Xen",
            "hyperv_clocksource_tsc_page" | "hyperv_clocksource_msr" => "Hyper-V",
            "vmware-tsc" => "VMware",
            _ => continue,
        };
        evidence.push(format!("clocksource {c}"));
        set(hv, &mut hypervisor);
    }
    if fs.exists("/proc/device-tree/hypervisor") {
        evidence.push("/proc/device-tree/hypervisor".into());
        set("hypervisor (device tree)", &mut hypervisor);
    }
    let vm = !evidence.is_empty();
    let anything_read = vm
        || fs.exists("/proc/cpuinfo")
        || fs.exists("/sys/class/dmi/id")
        || !cs.available.is_empty();
    Virtualization {
        is_vm: anything_read.then_some(vm),
        hypervisor: if vm {
            Some(hypervisor.unwrap_or_else(|| "unknown hypervisor".into()))
        } else {
            None
        },
        evidence,
    }
}

fn capitalise_hv(t: &str) -> String {
    match t {
        "xen" => "Xen".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes() {
        assert_eq!(parse_size_kb("32K"), Some(32));
        assert_eq!(parse_size_kb("2M"), Some(2048));
        assert_eq!(parse_size_kb("1024 KB"), Some(1024));
        assert_eq!(parse_size_kb("x"), None);
    }

    #[test]
    fn tsc_unstable_lines() {
        let lines = |t: &str| kmsg::parse_records(t);
        assert!(kmsg::tsc_marked_unstable(&lines(
            "[ 12.3] clocksource: timekeeping watchdog on CPU3: Marking clocksource 'tsc' as unstable because the skew is too large:"
        )));
        assert!(kmsg::tsc_marked_unstable(&lines(
            "6,1,2,-;tsc: Marking TSC unstable due to check_tsc_sync_source failed"
        )));
        assert!(!kmsg::tsc_marked_unstable(&lines(
            "clocksource: Switched to clocksource tsc"
        )));
    }
}
