//! Whole snapshots of fixture trees: a bare-metal NVMe host with turbo on and clocksource
//! hpet, a VM with a virtio disk, and a filesystem on dm on a partitioned md RAID on
//! partitions. Trees are written into a temp dir so each file's role is visible here.

use plumb_host::{render_text, snapshot, CannedTools, Options, Runner, Verdict};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn put(root: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let f = root.join(p.trim_start_matches('/'));
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }
}

fn mkdir(root: &Path, p: &str) {
    std::fs::create_dir_all(root.join(p.trim_start_matches('/'))).unwrap();
}

fn cpuinfo(model: &str, n: u32, cores: u32, flags: &str) -> String {
    (0..n)
        .map(|i| {
            format!(
                "processor\t: {i}\nvendor_id\t: GenuineIntel\nmodel name\t: {model}\ncpu MHz\t\t: 2100.000\nphysical id\t: 0\ncore id\t\t: {}\ncpu cores\t: {cores}\nflags\t\t: {flags}\n\n",
                i % cores
            )
        })
        .collect()
}

const MEMINFO: &str = "MemTotal:       65536000 kB\nMemFree:        60000000 kB\nMemAvailable:   62000000 kB\nBuffers:          100000 kB\nCached:          1000000 kB\nSwapCached:            0 kB\nActive:           100000 kB\nInactive:         100000 kB\nSwapTotal:       8388604 kB\nSwapFree:        8388604 kB\nDirty:                 0 kB\nWriteback:             0 kB\nAnonPages:        100000 kB\nMapped:           100000 kB\nShmem:              1000 kB\nSlab:             100000 kB\nSReclaimable:      50000 kB\nSUnreclaim:        50000 kB\nKernelStack:        1000 kB\nPageTables:         1000 kB\nNFS_Unstable:          0 kB\nBounce:                0 kB\nWritebackTmp:          0 kB\nCommitLimit:    40000000 kB\nCommitted_AS:    1000000 kB\nVmallocTotal:   34359738367 kB\nVmallocUsed:           0 kB\nVmallocChunk:          0 kB\n";

fn topology(root: &Path, cpus: u32, cores: u32) {
    for c in 0..cpus {
        let t = format!("/sys/devices/system/cpu/cpu{c}/topology");
        put(
            root,
            &[
                (&format!("{t}/physical_package_id"), "0\n"),
                (&format!("{t}/core_id"), &format!("{}\n", c % cores)),
            ],
        );
    }
    put(
        root,
        &[(
            "/sys/devices/system/cpu/online",
            &format!("0-{}\n", cpus - 1),
        )],
    );
}

fn queue(root: &Path, dev: &str, wc: &str, rota: &str, sched: &str, maxsec: &str) {
    let q = format!("/sys/block/{dev}/queue");
    put(
        root,
        &[
            (&format!("{q}/minimum_io_size"), "4096\n"),
            (&format!("{q}/optimal_io_size"), "0\n"),
            (&format!("{q}/physical_block_size"), "4096\n"),
            (&format!("{q}/logical_block_size"), "512\n"),
            (&format!("{q}/rotational"), rota),
            (&format!("{q}/scheduler"), sched),
            (&format!("{q}/nr_requests"), "1023\n"),
            (&format!("{q}/read_ahead_kb"), "128\n"),
            (&format!("{q}/max_sectors_kb"), maxsec),
            (&format!("{q}/max_hw_sectors_kb"), "2048\n"),
            (&format!("{q}/write_cache"), wc),
            (&format!("{q}/discard_granularity"), "512\n"),
        ],
    );
}

fn opts(root: &Path, dir: &str) -> Options {
    Options {
        root: root.to_path_buf(),
        dir: PathBuf::from(dir),
        data_bytes: None,
        io_size_kb: None,
        busy_sample: Duration::ZERO,
        runner: Runner::canned(CannedTools::none()),
    }
}

/// The tools on the bare-metal NVMe host: smartctl answers for nvme0n1, dumpe2fs for the
/// root filesystem.
fn nvme_tools() -> CannedTools {
    CannedTools::none()
        .with(
            "smartctl --json -a /dev/nvme0n1",
            0,
            include_str!("data/smartctl-nvme.json"),
        )
        .with(
            "dumpe2fs -h /dev/nvme0n1p1",
            0,
            include_str!("data/dumpe2fs-raid.txt"),
        )
}

fn verdict(s: &plumb_host::HostSnapshot, id: &str) -> Verdict {
    s.check(id)
        .unwrap_or_else(|| panic!("no check {id}: {:?}", s.checks))
        .verdict
}

/// Bare-metal NVMe host: turbo on, governor powersave, clocksource hpet with the TSC marked
/// unstable in the kernel log, SMT on, THP always, swap on.
fn nvme_bare_metal(root: &Path) {
    put(
        root,
        &[
            ("/proc/cpuinfo", &cpuinfo("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", 4, 2, "fpu tsc constant_tsc nonstop_tsc")),
            ("/proc/meminfo", MEMINFO),
            ("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/nvme0n1p2 partition\t8388604\t0\t-2\n"),
            ("/proc/sys/kernel/osrelease", "6.1.0-13-amd64\n"),
            ("/proc/sys/kernel/hostname", "db1\n"),
            ("/proc/sys/kernel/perf_event_paranoid", "2\n"),
            ("/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n"),
            ("/proc/self/mountinfo", "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw,errors=remount-ro\n23 22 0:21 / /proc rw,nosuid - proc proc rw\n"),
            ("/sys/devices/system/cpu/intel_pstate/no_turbo", "0\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "powersave\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/scaling_driver", "intel_pstate\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference", "balance_power\n"),
            ("/sys/firmware/acpi/platform_profile", "balanced\n"),
            ("/sys/class/hwmon/hwmon0/name", "acpitz\n"),
            ("/sys/class/hwmon/hwmon0/temp1_input", "27800\n"),
            ("/sys/class/hwmon/hwmon1/name", "coretemp\n"),
            ("/sys/class/hwmon/hwmon1/temp2_label", "Core 0\n"),
            ("/sys/class/hwmon/hwmon1/temp2_input", "51000\n"),
            ("/sys/class/hwmon/hwmon1/temp1_label", "Package id 0\n"),
            ("/sys/class/hwmon/hwmon1/temp1_input", "54000\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/scaling_cur_freq", "2900000\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_min_freq", "800000\n"),
            ("/sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq", "3200000\n"),
            ("/sys/devices/system/cpu/smt/control", "on\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index0/level", "1\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index0/type", "Data\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index0/size", "48K\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index0/shared_cpu_list", "0,2\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index3/level", "3\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index3/type", "Unified\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index3/size", "49152K\n"),
            ("/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list", "0-3\n"),
            ("/sys/devices/system/clocksource/clocksource0/current_clocksource", "hpet\n"),
            ("/sys/devices/system/clocksource/clocksource0/available_clocksource", "hpet acpi_pm \n"),
            ("/dev/kmsg", &format!("4,512,1234567,-;clocksource: timekeeping watchdog on CPU3: Marking clocksource 'tsc' as unstable because the skew is too large:\n{}", include_str!("data/kmsg-errors.txt"))),
            ("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.1.0-13-amd64 root=UUID=0b8f1c2e ro quiet mitigations=off isolcpus=2-3\n"),
            ("/proc/sys/kernel/yama/ptrace_scope", "1\n"),
            ("/proc/sys/kernel/kptr_restrict", "1\n"),
            ("/sys/class/dmi/id/bios_vendor", "Dell Inc.\n"),
            ("/sys/class/dmi/id/bios_version", "1.10.2\n"),
            ("/sys/class/dmi/id/bios_date", "07/12/2023\n"),
            ("/sys/devices/cpu_core/cpus", "0-1\n"),
            ("/sys/devices/cpu_atom/cpus", "2-3\n"),
            ("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n"),
            ("/sys/kernel/mm/transparent_hugepage/defrag", "always defer [madvise] never\n"),
            ("/sys/devices/system/node/online", "0\n"),
            ("/sys/class/dmi/id/sys_vendor", "Dell Inc.\n"),
            ("/sys/class/dmi/id/product_name", "PowerEdge R750\n"),
            ("/sys/dev/block/259:1/uevent", "MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1p1\nDEVTYPE=partition\n"),
            ("/sys/block/nvme0n1/size", "3750748848\n"),
            ("/sys/block/nvme0n1/device/model", "SAMSUNG MZQL23T8HCLS-00A07\n"),
            ("/sys/block/nvme0n1/nvme0n1p1/partition", "1\n"),
            ("/sys/block/nvme0n1/nvme0n1p1/size", "3700000000\n"),
        ],
    );
    mkdir(root, "/sys/bus/event_source/devices/cpu");
    mkdir(root, "/sys/block/nvme0n1/slaves");
    topology(root, 4, 2);
    queue(
        root,
        "nvme0n1",
        "write back\n",
        "0\n",
        "[none] mq-deadline\n",
        "128\n",
    );
}

#[test]
fn nvme_bare_metal_turbo_hpet() {
    let t = tempfile::tempdir().unwrap();
    nvme_bare_metal(t.path());
    let mut o = opts(t.path(), "/data/db");
    o.io_size_kb = Some(512);
    o.data_bytes = Some(200 << 30);
    o.runner = Runner::canned(nvme_tools());
    let s = snapshot(&o);
    let text = render_text(&s);
    let inv = &s.inventory;
    assert_eq!(
        inv.cpu.model.as_deref(),
        Some("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz")
    );
    assert_eq!(
        (inv.cpu.sockets, inv.cpu.cores, inv.cpu.threads),
        (Some(1), Some(2), Some(4))
    );
    assert_eq!(inv.cpu.boost, Some(true));
    assert_eq!(inv.cpu.governor.as_deref(), Some("powersave"));
    // The power profile the deck names (EPP, the platform's), and the package's
    // temperature, not a core's or the ACPI zone's.
    assert_eq!(inv.cpu.epp.as_deref(), Some("balance_power"));
    assert_eq!(inv.cpu.platform_profile.as_deref(), Some("balanced"));
    assert_eq!(inv.cpu.temperature_c, Some(54.0));
    assert_eq!(
        (
            inv.cpu.freq_cur_mhz,
            inv.cpu.freq_min_mhz,
            inv.cpu.freq_max_mhz
        ),
        (Some(2900), Some(800), Some(3200))
    );
    assert_eq!(inv.cpu.caches.len(), 2);
    assert_eq!(inv.cpu.caches[1].size_kb, 49152);
    assert_eq!(inv.cpu.caches[0].shared_by, 2);
    assert_eq!(inv.clocksource.current.as_deref(), Some("hpet"));
    assert_eq!(inv.clocksource.tsc_unstable, Some(true));
    assert_eq!(inv.memory.total_bytes, Some(65_536_000 * 1024));
    assert_eq!(inv.memory.swap_devices, vec!["/dev/nvme0n1p2"]);
    assert_eq!(inv.memory.thp_enabled.as_deref(), Some("always"));
    assert_eq!(inv.numa_nodes, Some(1));
    assert_eq!(inv.kernel.as_deref(), Some("6.1.0-13-amd64"));
    assert_eq!(
        inv.distribution.as_deref(),
        Some("Debian GNU/Linux 12 (bookworm)")
    );
    assert_eq!(inv.virtualization.is_vm, Some(false));
    assert_eq!(inv.core_pmu, Some(true));
    assert_eq!(inv.running_as_root, None);

    let st = s.storage.as_ref().unwrap();
    assert_eq!(st.mount_point, Path::new("/"));
    assert_eq!(st.fs_type, "ext4");
    assert!(st.mount_options.contains(&"relatime".to_string()));
    let names: Vec<(&str, &str)> = st
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d.kind.as_str()))
        .collect();
    assert_eq!(names, vec![("nvme0n1p1", "partition"), ("nvme0n1", "nvme")]);
    let p1 = &st.devices[0];
    assert_eq!(
        p1.queue.max_sectors_kb,
        Some(128),
        "partition shows its disk's queue"
    );
    assert_eq!(p1.size_bytes, Some(3_700_000_000 * 512));
    assert_eq!(
        st.devices[1].model.as_deref(),
        Some("SAMSUNG MZQL23T8HCLS-00A07")
    );
    assert!(st.devices[1].physical && !p1.physical);

    assert_eq!(verdict(&s, "cpu.turbo"), Verdict::Warn);
    assert_eq!(verdict(&s, "cpu.governor"), Verdict::Warn);
    assert_eq!(verdict(&s, "cpu.smt"), Verdict::Warn);
    assert_eq!(verdict(&s, "clock.source"), Verdict::Fail);
    assert!(s.check("clock.source").unwrap().reason.contains("unstable"));
    assert_eq!(verdict(&s, "mem.thp"), Verdict::Warn);
    assert_eq!(verdict(&s, "mem.swap"), Verdict::Warn);
    assert_eq!(verdict(&s, "perf.paranoid"), Verdict::Warn);
    assert_eq!(verdict(&s, "perf.pmu"), Verdict::Ok);
    assert_eq!(verdict(&s, "host.virt"), Verdict::Ok);
    assert_eq!(verdict(&s, "fs.noatime"), Verdict::Warn);
    assert_eq!(verdict(&s, "disk.write_cache"), Verdict::Warn);
    assert_eq!(verdict(&s, "disk.max_sectors"), Verdict::Warn);
    assert_eq!(verdict(&s, "proc.busy"), Verdict::Info);
    assert_eq!(verdict(&s, "run.data_vs_ram"), Verdict::Ok);
    assert!(
        text.contains("nvme0n1p1") && text.contains("[fail] clock.source"),
        "{text}"
    );

    // Health: SMART of the physical device (not the partition), via smartctl.
    let h = &st.health;
    assert_eq!(h.len(), 1, "{h:?}");
    assert_eq!(
        (h[0].device.as_str(), h[0].source.as_deref()),
        ("nvme0n1", Some("smartctl"))
    );
    assert_eq!(h[0].percentage_used, Some(3));
    assert_eq!(verdict(&s, "disk.health"), Verdict::Ok);
    assert!(
        text.contains("health nvme0n1") && text.contains("3% of rated life used"),
        "{text}"
    );
    // The kernel log is read once: the TSC finding above and the I/O errors here.
    assert_eq!(inv.kernel_log.io_errors, Some(12));
    assert_eq!(inv.kernel_log.source.as_deref(), Some("/dev/kmsg"));
    assert_eq!(verdict(&s, "kernel.io_errors"), Verdict::Warn);
    assert_eq!(
        inv.bios.version.as_deref(),
        Some("1.10.2"),
        "{:?}",
        inv.bios
    );
    assert_eq!(verdict(&s, "host.bios"), Verdict::Info);
    assert!(
        text.contains("BIOS                 Dell Inc. 1.10.2 (07/12/2023)"),
        "{text}"
    );
    assert!(inv.cmdline.as_deref().unwrap().contains("isolcpus=2-3"));
    let cl = s.check("kernel.cmdline").unwrap();
    assert_eq!(cl.verdict, Verdict::Warn, "{cl:?}");
    assert!(cl.reason.contains("isolcpus=2-3") && cl.reason.contains("mitigations=off"));
    let ct = inv.cpu.core_types.as_ref().unwrap();
    assert_eq!(
        (ct.performance_cpus.len(), ct.efficiency_cpus.len()),
        (2, 2)
    );
    assert_eq!(verdict(&s, "cpu.hybrid"), Verdict::Warn);
    assert_eq!((inv.ptrace_scope, inv.kptr_restrict), (Some(1), Some(1)));
    assert_eq!(verdict(&s, "perf.ptrace_scope"), Verdict::Warn);
    assert_eq!(verdict(&s, "perf.kptr_restrict"), Verdict::Warn);
    // /data/db is on the root filesystem's disk.
    assert_eq!(st.shares_os_device, Some(true));
    assert_eq!(st.os_devices, vec!["nvme0n1"]);
    assert_eq!(verdict(&s, "disk.os_shared"), Verdict::Warn);
    let g = st.geometry.as_ref().unwrap();
    assert_eq!(g.source.as_deref(), Some("dumpe2fs"));
    assert_eq!(
        (g.block_size, g.stripe_unit_blocks, g.stripe_width_blocks),
        (Some(4096), Some(16), Some(64))
    );
    assert_eq!(verdict(&s, "fs.geometry"), Verdict::Info);
}

/// SMART sources in order: smartctl, then nvme-cli for NVMe, else the reason for each.
#[test]
fn disk_health_sources_and_reasons() {
    let t = tempfile::tempdir().unwrap();
    nvme_bare_metal(t.path());
    let health = |tools: CannedTools| {
        let mut o = opts(t.path(), "/data/db");
        o.runner = Runner::canned(tools);
        let s = snapshot(&o);
        let h = s.storage.unwrap().health;
        assert_eq!(h.len(), 1, "{h:?}");
        (
            h[0].clone(),
            s.checks
                .into_iter()
                .find(|c| c.id == "disk.health")
                .unwrap(),
        )
    };
    let (h, c) = health(CannedTools::none().with(
        "nvme smart-log -o json /dev/nvme0n1",
        0,
        include_str!("data/nvme-cli-smart-log.json"),
    ));
    assert_eq!(h.source.as_deref(), Some("nvme-cli"));
    assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
    assert!(c.reason.contains("91% of rated life used"), "{c:?}");

    let (h, c) = health(CannedTools::none());
    assert_eq!(
        h.unavailable.as_deref(),
        Some("smartctl not installed; nvme-cli not installed")
    );
    assert_eq!(c.verdict, Verdict::Info, "{c:?}");
    assert!(
        c.reason
            .contains("nvme0n1: unavailable: smartctl not installed"),
        "{c:?}"
    );

    let (h, _) = health(CannedTools::none().failing(
        "smartctl --json -a /dev/nvme0n1",
        plumb_host::command::ToolError::TimedOut {
            program: "smartctl".into(),
            secs: 4,
        },
    ));
    assert_eq!(
        h.unavailable.as_deref(),
        Some("smartctl timed out after 4 s; nvme-cli not installed")
    );
}

/// A QEMU/KVM VM: hypervisor flag, DMI QEMU, virtio disk mounted noatime, no cpufreq.
#[test]
fn vm_with_virtio_disk() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    put(
        root,
        &[
            ("/proc/cpuinfo", &cpuinfo("AMD EPYC 7B13", 2, 2, "fpu tsc hypervisor")),
            ("/proc/meminfo", &MEMINFO.replace("SwapTotal:       8388604", "SwapTotal:             0")),
            ("/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"),
            ("/proc/sys/kernel/perf_event_paranoid", "1\n"),
            ("/proc/self/mountinfo", "22 1 253:0 / / rw,relatime - ext4 /dev/vda rw\n30 22 253:16 / /data rw,noatime - xfs /dev/vdb rw,attr2,inode64\n"),
            ("/sys/devices/system/cpu/smt/control", "notsupported\n"),
            ("/sys/devices/system/clocksource/clocksource0/current_clocksource", "kvm-clock\n"),
            ("/sys/devices/system/clocksource/clocksource0/available_clocksource", "kvm-clock tsc acpi_pm \n"),
            ("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n"),
            ("/sys/class/dmi/id/sys_vendor", "QEMU\n"),
            ("/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n"),
            ("/sys/dev/block/253:16/uevent", "MAJOR=253\nMINOR=16\nDEVNAME=vdb\nDEVTYPE=disk\n"),
            ("/sys/block/vdb/size", "209715200\n"),
            ("/sys/dev/block/253:0/uevent", "MAJOR=253\nMINOR=0\nDEVNAME=vda\nDEVTYPE=disk\n"),
            ("/sys/block/vda/size", "41943040\n"),
            ("/sys/block/vdb/device/modalias", "virtio:d00000002v00001AF4\n"),
        ],
    );
    mkdir(root, "/sys/block/vdb/slaves");
    mkdir(root, "/sys/block/vda/slaves");
    mkdir(root, "/sys/bus/event_source/devices/software");
    topology(root, 2, 2);
    queue(
        root,
        "vdb",
        "write through\n",
        "1\n",
        "[mq-deadline] none\n",
        "4096\n",
    );
    let mut o = opts(root, "/data/pg");
    o.io_size_kb = Some(1024);
    o.data_bytes = Some(10 << 30);
    o.runner = Runner::canned(CannedTools::none().with(
        "xfs_info /data",
        0,
        include_str!("data/xfs_info-raid.txt"),
    ));
    let s = snapshot(&o);
    let inv = &s.inventory;
    assert_eq!(inv.virtualization.is_vm, Some(true));
    assert_eq!(inv.virtualization.hypervisor.as_deref(), Some("KVM/QEMU"));
    assert_eq!(inv.cpu.governor, None);
    assert_eq!(inv.cpu.boost, None);
    assert_eq!(
        inv.cpu.freq_cur_mhz,
        Some(2100),
        "falls back to cpuinfo MHz"
    );
    assert_eq!(inv.core_pmu, Some(false));
    let st = s.storage.as_ref().unwrap();
    assert_eq!(st.mount_point, Path::new("/data"));
    assert_eq!(st.fs_type, "xfs");
    assert_eq!(st.devices.len(), 1);
    assert_eq!(st.devices[0].kind, "virtio");
    assert_eq!(
        st.devices[0].queue.scheduler.as_deref(),
        Some("mq-deadline")
    );
    assert_eq!(st.devices[0].queue.rotational, Some(true));

    assert_eq!(verdict(&s, "host.virt"), Verdict::Warn);
    assert!(s.check("host.virt").unwrap().reason.contains("VM"));
    assert_eq!(verdict(&s, "cpu.turbo"), Verdict::Info);
    assert_eq!(verdict(&s, "cpu.governor"), Verdict::Info);
    assert_eq!(verdict(&s, "cpu.smt"), Verdict::Ok);
    assert_eq!(verdict(&s, "clock.source"), Verdict::Warn);
    assert_eq!(verdict(&s, "mem.thp"), Verdict::Ok);
    assert_eq!(verdict(&s, "mem.swap"), Verdict::Ok);
    assert_eq!(verdict(&s, "perf.paranoid"), Verdict::Ok);
    assert_eq!(verdict(&s, "perf.pmu"), Verdict::Warn);
    assert_eq!(verdict(&s, "fs.noatime"), Verdict::Ok);
    assert_eq!(verdict(&s, "disk.write_cache"), Verdict::Ok);
    assert_eq!(verdict(&s, "disk.max_sectors"), Verdict::Ok);
    assert_eq!(verdict(&s, "run.data_vs_ram"), Verdict::Ok);

    // No SMART through virtio, said so; the data disk vdb is not the OS disk vda.
    assert_eq!(
        st.health[0].unavailable.as_deref(),
        Some("virtio disk vdb: no SMART (virtio exposes none)")
    );
    assert_eq!(verdict(&s, "disk.health"), Verdict::Info);
    assert_eq!(st.shares_os_device, Some(false), "{:?}", st.os_devices);
    assert_eq!(verdict(&s, "disk.os_shared"), Verdict::Ok);
    let g = st.geometry.as_ref().unwrap();
    assert_eq!(g.source.as_deref(), Some("xfs_info"));
    assert_eq!(
        (
            g.block_size,
            g.sector_size,
            g.stripe_unit_blocks,
            g.stripe_width_blocks
        ),
        (Some(4096), Some(512), Some(16), Some(64))
    );
    // No /dev/kmsg in this tree and no dmesg: unavailable, with why.
    let kl = &s.inventory.kernel_log;
    assert_eq!(kl.io_errors, None);
    assert!(
        kl.unavailable
            .as_deref()
            .is_some_and(|u| u.contains("dev/kmsg") && u.contains("dmesg not installed")),
        "{kl:?}"
    );
    assert_eq!(verdict(&s, "kernel.io_errors"), Verdict::Info);
    assert_eq!(verdict(&s, "cpu.hybrid"), Verdict::Ok);
}

/// ext4 on an LVM volume (dm-0) on a partition of an md RAID1 (md0p1) over two SATA
/// partitions: the whole chain down to sda and sdb.
#[test]
fn partition_on_dm_on_md() {
    let t = tempfile::tempdir().unwrap();
    let root = t.path();
    put(
        root,
        &[
            ("/proc/cpuinfo", &cpuinfo("Intel(R) Core(TM) i7", 2, 2, "fpu tsc")),
            ("/proc/meminfo", MEMINFO),
            ("/proc/self/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n40 22 0:55 / /srv rw,noatime - ext4 /dev/mapper/vg0-srv rw\n"),
            ("/sys/block/dm-0/dm/name", "vg0-srv\n"),
            ("/sys/block/dm-0/size", "1000000\n"),
            ("/sys/block/dm-0/slaves/md0p1", ""),
            ("/sys/block/md0/md/level", "raid1\n"),
            ("/sys/block/md0/size", "2000000\n"),
            ("/sys/block/md0/md0p1/partition", "1\n"),
            ("/sys/block/md0/md0p1/size", "1999000\n"),
            ("/sys/block/md0/slaves/sda2", ""),
            ("/sys/block/md0/slaves/sdb2", ""),
            ("/sys/block/sda/device/model", "Samsung SSD 870\n"),
            ("/sys/block/sda/sda2/partition", "2\n"),
            ("/sys/block/sdb/device/model", "Samsung SSD 870\n"),
            ("/sys/block/sdb/sdb2/partition", "2\n"),
        ],
    );
    mkdir(root, "/sys/block/sda/slaves");
    mkdir(root, "/sys/block/sdb/slaves");
    queue(root, "dm-0", "write through\n", "0\n", "none\n", "512\n");
    queue(root, "md0", "write through\n", "0\n", "none\n", "256\n");
    queue(
        root,
        "sda",
        "write back\n",
        "0\n",
        "[mq-deadline] none\n",
        "1280\n",
    );
    queue(
        root,
        "sdb",
        "write back\n",
        "0\n",
        "[mq-deadline] none\n",
        "1280\n",
    );
    let mut o = opts(root, "/srv/mysql");
    o.io_size_kb = Some(512);
    let s = snapshot(&o);
    let st = s
        .storage
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", s.notes));
    let chain: Vec<(&str, &str, u32)> = st
        .devices
        .iter()
        .map(|d| (d.name.as_str(), d.kind.as_str(), d.depth))
        .collect();
    assert_eq!(
        chain,
        vec![
            ("dm-0", "dm", 0),
            ("md0p1", "partition", 1),
            ("md0", "md", 2),
            ("sda2", "partition", 3),
            ("sda", "scsi", 4),
            ("sdb2", "partition", 3),
            ("sdb", "scsi", 4),
        ]
    );
    assert_eq!(
        st.devices[0].model.as_deref(),
        Some("device-mapper vg0-srv")
    );
    assert_eq!(st.devices[2].model.as_deref(), Some("md raid1"));
    assert_eq!(st.devices[1].queue.max_sectors_kb, Some(256));
    let phys: Vec<&str> = st
        .devices
        .iter()
        .filter(|d| d.physical)
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(phys, vec!["sda", "sdb"]);
    assert_eq!(verdict(&s, "fs.noatime"), Verdict::Ok);
    assert_eq!(verdict(&s, "disk.write_cache"), Verdict::Warn);
    let ms = s.check("disk.max_sectors").unwrap();
    assert_eq!(
        ms.verdict,
        Verdict::Warn,
        "md0 (256) is the narrowest: {ms:?}"
    );
    assert!(ms.reason.contains("md0"));
    let text = render_text(&s);
    assert!(text.contains("sdb2") && text.contains("md raid1"), "{text}");
}

/// An empty root: no panic, every check present, unknowns as Info.
#[test]
fn empty_root_never_panics() {
    let t = tempfile::tempdir().unwrap();
    let s = snapshot(&opts(t.path(), "/"));
    assert!(s.storage.is_none());
    assert_eq!(verdict(&s, "storage.resolve"), Verdict::Info);
    assert!(
        s.notes.iter().any(|n| n.contains("mountinfo")),
        "{:?}",
        s.notes
    );
    assert!(
        s.checks.iter().all(|c| c.verdict == Verdict::Info),
        "{:?}",
        s.checks
    );
    render_text(&s);
}

/// logind's RemoveIPC as systemd reads it: yes unless `[Login]` says no, the last
/// assignment winning, drop-ins after the main file in name order.
#[test]
fn remove_ipc_is_read_as_logind_reads_it() {
    let read = |files: &[(&str, &str)]| {
        let t = tempfile::tempdir().unwrap();
        put(t.path(), files);
        snapshot(&opts(t.path(), "/")).inventory.remove_ipc
    };
    assert_eq!(read(&[]), None);
    let main = "/etc/systemd/logind.conf";
    assert_eq!(read(&[(main, "[Login]\n#RemoveIPC=no\n")]), Some(true));
    assert_eq!(read(&[(main, "[Login]\nRemoveIPC=no\n")]), Some(false));
    assert_eq!(read(&[(main, "[Other]\nRemoveIPC=no\n")]), Some(true));
    assert_eq!(
        read(&[
            (main, "[Login]\nRemoveIPC=no\n"),
            (
                "/etc/systemd/logind.conf.d/10-a.conf",
                "[Login]\nRemoveIPC=yes\n"
            ),
            (
                "/etc/systemd/logind.conf.d/20-b.conf",
                "[Login]\nRemoveIPC=no\nRemoveIPC=yes\n"
            ),
            (
                "/etc/systemd/logind.conf.d/30-c.conf.bak",
                "[Login]\nRemoveIPC=no\n"
            ),
        ]),
        Some(true)
    );
    assert_eq!(
        read(&[(
            "/etc/systemd/logind.conf.d/plumb.conf",
            "[Login]\nRemoveIPC=no\n"
        )]),
        Some(false)
    );
}

/// Busy-process sampling over a fixture: two reads of the same files show no CPU use.
#[test]
fn busy_sampling_on_fixture() {
    let t = tempfile::tempdir().unwrap();
    put(t.path(), &[("/proc/42/stat", "42 (mysqld) S 1 42 42 0 -1 4194560 100 0 0 0 500 100 0 0 20 0 30 0 100 1000000 1000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")]);
    let mut o = opts(t.path(), "/");
    o.busy_sample = Duration::from_millis(1);
    let s = snapshot(&o);
    assert_eq!(s.busy_processes, Some(vec![]));
    assert_eq!(verdict(&s, "proc.busy"), Verdict::Ok);
}

/// Snapshots of two hosts differ in exactly the checks whose verdicts differ.
#[test]
fn differing_checks_between_hosts() {
    let t = tempfile::tempdir().unwrap();
    nvme_bare_metal(t.path());
    let a = snapshot(&opts(t.path(), "/"));
    let mut b = a.clone();
    assert!(plumb_host::differing_checks(&a, &b).is_empty());
    b.checks.retain(|c| c.id != "mem.swap");
    b.checks
        .iter_mut()
        .find(|c| c.id == "cpu.turbo")
        .unwrap()
        .verdict = Verdict::Ok;
    let d = plumb_host::differing_checks(&a, &b);
    let ids: Vec<&str> = d.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["cpu.turbo", "mem.swap"]);
    assert!(d[1].b.is_none());
}

/// A snapshot stored before the health fields existed still loads, with them empty.
#[test]
fn snapshot_without_health_fields_loads() {
    let t = tempfile::tempdir().unwrap();
    nvme_bare_metal(t.path());
    let mut o = opts(t.path(), "/data/db");
    o.runner = Runner::canned(nvme_tools());
    let s = snapshot(&o);
    let mut j = serde_json::to_value(&s).unwrap();
    let new_inventory = [
        "bios",
        "cmdline",
        "cmdline_unavailable",
        "ptrace_scope",
        "kptr_restrict",
        "kernel_log",
    ];
    for k in new_inventory {
        assert!(
            j["inventory"].as_object_mut().unwrap().remove(k).is_some(),
            "{k}"
        );
    }
    j["inventory"]["cpu"]
        .as_object_mut()
        .unwrap()
        .remove("core_types")
        .unwrap();
    for k in ["health", "geometry", "os_devices", "shares_os_device"] {
        assert!(
            j["storage"].as_object_mut().unwrap().remove(k).is_some(),
            "{k}"
        );
    }
    let old: plumb_host::HostSnapshot = serde_json::from_value(j).unwrap();
    assert_eq!(old.inventory.cpu.model, s.inventory.cpu.model);
    assert_eq!(old.inventory.kernel_log, plumb_host::KernelLog::default());
    assert!(old.storage.as_ref().unwrap().health.is_empty());
    assert_eq!(old.storage.unwrap().shares_os_device, None);
}
