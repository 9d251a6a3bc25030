//! Every check on its own: an input that passes and one that warns (or fails), each
//! with a reason, and a fix whenever the verdict is not ok.

use plumb_host::checks as k;
use plumb_host::{
    Bios, BlockDevice, BusyProcess, Check, CoreTypes, DiskHealth, FsGeometry, KernelLog, Queue,
    Verdict,
};

fn ok(c: Check) {
    assert_eq!(c.verdict, Verdict::Ok, "{c:?}");
    assert!(!c.reason.is_empty());
}

fn warn(c: Check) -> Check {
    assert_eq!(c.verdict, Verdict::Warn, "{c:?}");
    assert!(!c.reason.is_empty());
    assert!(c.fix.as_deref().is_some_and(|f| !f.is_empty()), "{c:?}");
    c
}

fn dev(name: &str, physical: bool, wc: &str, maxsec: u64) -> BlockDevice {
    BlockDevice {
        name: name.into(),
        kind: "nvme".into(),
        physical,
        queue: Queue {
            write_cache: Some(wc.into()),
            max_sectors_kb: Some(maxsec),
            max_hw_sectors_kb: Some(2048),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn turbo() {
    ok(k::turbo(
        Some(false),
        Some("/sys/devices/system/cpu/intel_pstate/no_turbo"),
    ));
    let c = warn(k::turbo(
        Some(true),
        Some("/sys/devices/system/cpu/intel_pstate/no_turbo"),
    ));
    assert!(c.fix.unwrap().contains("no_turbo"));
    let c = warn(k::turbo(
        Some(true),
        Some("/sys/devices/system/cpu/cpufreq/boost"),
    ));
    assert!(c.fix.unwrap().contains("cpufreq/boost"));
    assert_eq!(k::turbo(None, None).verdict, Verdict::Info);
}

#[test]
fn governor() {
    ok(k::governor(Some("performance")));
    warn(k::governor(Some("powersave")));
    warn(k::governor(Some("schedutil")));
    assert_eq!(k::governor(None).verdict, Verdict::Info);
}

#[test]
fn clocksource() {
    ok(k::clocksource(
        Some("tsc"),
        &s(&["tsc", "hpet"]),
        Some(false),
    ));
    ok(k::clocksource(Some("arch_sys_counter"), &[], None));
    let c = warn(k::clocksource(
        Some("kvm-clock"),
        &s(&["kvm-clock", "tsc"]),
        Some(false),
    ));
    assert!(c.fix.unwrap().contains("current_clocksource"));
    // tsc current, but the kernel log says it was marked unstable
    let c = warn(k::clocksource(Some("tsc"), &s(&["tsc"]), Some(true)));
    assert!(c.reason.contains("unstable"));
    let c = k::clocksource(Some("hpet"), &s(&["hpet", "acpi_pm"]), Some(true));
    assert_eq!(c.verdict, Verdict::Fail);
    assert!(c.fix.unwrap().contains("tsc=reliable"));
    let c = k::clocksource(Some("hpet"), &s(&["tsc", "hpet"]), None);
    assert!(c.reason.contains("not readable"));
    assert!(c.fix.unwrap().contains("echo tsc"));
}

#[test]
fn smt() {
    ok(k::smt(Some("off"), Some(8), Some(8)));
    ok(k::smt(Some("notsupported"), Some(2), Some(2)));
    let c = warn(k::smt(Some("on"), Some(16), Some(8)));
    assert!(c.reason.contains("16 threads on 8 cores"));
}

#[test]
fn thp() {
    ok(k::thp(Some("madvise")));
    ok(k::thp(Some("never")));
    warn(k::thp(Some("always")));
}

#[test]
fn swap() {
    ok(k::swap(Some(0), &[]));
    let c = warn(k::swap(Some(8 << 30), &s(&["/dev/sda2"])));
    assert!(c.reason.contains("/dev/sda2"));
    assert_eq!(k::swap(None, &[]).verdict, Verdict::Info);
}

#[test]
fn perf_paranoid() {
    ok(k::perf_paranoid(Some(1), Some(false)));
    ok(k::perf_paranoid(Some(-1), None));
    ok(k::perf_paranoid(Some(4), Some(true)));
    warn(k::perf_paranoid(Some(2), Some(false)));
    warn(k::perf_paranoid(Some(3), None));
}

#[test]
fn pmu_present() {
    ok(k::pmu(Some(true)));
    warn(k::pmu(Some(false)));
}

#[test]
fn virt() {
    ok(k::virt(Some(false), None, &[]));
    let c = warn(k::virt(
        Some(true),
        Some("KVM"),
        &s(&["clocksource kvm-clock"]),
    ));
    assert!(c.reason.contains("VM") && c.reason.contains("KVM"));
}

#[test]
fn noatime() {
    ok(k::noatime("xfs", &s(&["rw", "noatime"])));
    ok(k::noatime("tmpfs", &s(&["rw", "relatime"])));
    let c = warn(k::noatime("ext4", &s(&["rw", "relatime"])));
    assert!(c.reason.contains("relatime"));
}

#[test]
fn fill() {
    ok(k::fill(Some(50), Some(100)));
    let c = warn(k::fill(Some(5), Some(100)));
    assert!(c.reason.contains("nearly empty"));
    let c = warn(k::fill(Some(95), Some(100)));
    assert!(c.reason.contains("nearly full"));
    assert_eq!(k::fill(None, Some(1)).verdict, Verdict::Info);
}

#[test]
fn write_cache() {
    ok(k::write_cache(&[dev(
        "nvme0n1",
        true,
        "write through",
        128,
    )]));
    // a dm device above with write back does not count; the physical one does
    ok(k::write_cache(&[
        dev("dm-0", false, "write back", 128),
        dev("nvme0n1", true, "write through", 128),
    ]));
    let c = warn(k::write_cache(&[dev("sda", true, "write back", 128)]));
    assert!(c.reason.contains("sda"));
}

#[test]
fn max_sectors() {
    let d = [
        dev("p1", false, "write back", 1280),
        dev("sda", true, "write back", 256),
    ];
    ok(k::max_sectors(&d, Some(256)));
    ok(k::max_sectors(&d, None));
    let c = warn(k::max_sectors(&d, Some(1024)));
    assert!(c.reason.contains("sda") && c.reason.contains("256"));
    assert!(c
        .fix
        .unwrap()
        .contains("/sys/block/sda/queue/max_sectors_kb"));
}

#[test]
fn busy() {
    let p = |comm: &str, pct: f64| BusyProcess {
        pid: 7,
        comm: comm.into(),
        cpu_percent: pct,
    };
    ok(k::busy(Some(&[p("sshd", 0.5)])));
    ok(k::busy(Some(&[])));
    let c = warn(k::busy(Some(&[p("cc1plus", 98.0), p("sshd", 0.5)])));
    assert!(c.reason.contains("cc1plus") && !c.reason.contains("sshd"));
    assert_eq!(k::busy(None).verdict, Verdict::Info);
}

#[test]
fn data_vs_ram() {
    let g = 1u64 << 30;
    let c = k::data_vs_ram(Some(g), Some(64 * g));
    assert!(c.reason.contains("cached"));
    ok(c);
    let c = k::data_vs_ram(Some(500 * g), Some(64 * g));
    assert!(c.reason.contains("IO-bound"));
    ok(c);
    warn(k::data_vs_ram(Some(64 * g), Some(64 * g)));
    assert_eq!(k::data_vs_ram(None, Some(g)).verdict, Verdict::Info);
}

#[test]
fn verdict_json_is_lowercase() {
    assert_eq!(serde_json::to_string(&Verdict::Warn).unwrap(), "\"warn\"");
    let back: Verdict = serde_json::from_str("\"fail\"").unwrap();
    assert_eq!(back, Verdict::Fail);
}

fn info(c: Check) -> Check {
    assert_eq!(c.verdict, Verdict::Info, "{c:?}");
    assert!(!c.reason.is_empty());
    c
}

fn disk(dev: &str) -> DiskHealth {
    DiskHealth {
        device: dev.into(),
        source: Some("smartctl".into()),
        percentage_used: Some(10),
        available_spare: Some(100),
        available_spare_threshold: Some(10),
        media_errors: Some(0),
        critical_warning: Some(0),
        temperature_c: Some(45),
        power_on_hours: Some(1000),
        bytes_written: Some(10_000_000_000_000),
        smart_passed: Some(true),
        ..Default::default()
    }
}

#[test]
fn disk_health_thresholds() {
    let c = k::disk_health(&[disk("nvme0n1")]);
    assert!(
        c.reason.contains("10% of rated life used") && c.reason.contains("10.0 TB written"),
        "{c:?}"
    );
    ok(c);
    // Each threshold on its own, just below (ok) and at or past it (warn).
    type Edit = fn(&mut DiskHealth);
    let cases: Vec<(Edit, Edit, &str)> = vec![
        (
            |d| d.percentage_used = Some(79),
            |d| d.percentage_used = Some(80),
            "80% of rated life",
        ),
        (
            |d| d.available_spare = Some(10),
            |d| d.available_spare = Some(9),
            "spare 9% below threshold 10%",
        ),
        (
            |d| d.media_errors = Some(0),
            |d| d.media_errors = Some(1),
            "1 media",
        ),
        (
            |d| d.critical_warning = Some(0),
            |d| d.critical_warning = Some(0x10),
            "critical warning 0x10",
        ),
        (
            |d| d.temperature_c = Some(69),
            |d| d.temperature_c = Some(70),
            "70 °C",
        ),
        (
            |d| d.reallocated_sectors = Some(0),
            |d| d.reallocated_sectors = Some(4),
            "4 reallocated",
        ),
        (
            |d| d.pending_sectors = Some(0),
            |d| d.pending_sectors = Some(2),
            "2 pending",
        ),
        (
            |d| d.smart_passed = Some(true),
            |d| d.smart_passed = Some(false),
            "FAILED",
        ),
    ];
    for (fine, bad, says) in cases {
        let mut d = disk("sda");
        fine(&mut d);
        ok(k::disk_health(&[d.clone()]));
        bad(&mut d);
        let c = warn(k::disk_health(&[d]));
        assert!(c.reason.contains(says), "{says:?} in {c:?}");
    }
}

#[test]
fn disk_health_unavailable_is_never_ok() {
    let vda = DiskHealth {
        device: "vda".into(),
        unavailable: Some("virtio disk vda: no SMART (virtio exposes none)".into()),
        ..Default::default()
    };
    let c = info(k::disk_health(std::slice::from_ref(&vda)));
    assert_eq!(
        c.reason,
        "vda: unavailable: virtio disk vda: no SMART (virtio exposes none)"
    );
    // One readable and one unreadable device: info, naming both.
    let c = info(k::disk_health(&[disk("sda"), vda.clone()]));
    assert!(
        c.reason.contains("sda: ") && c.reason.contains("vda: unavailable"),
        "{c:?}"
    );
    // A problem on one device still warns.
    let mut worn = disk("sdb");
    worn.percentage_used = Some(95);
    warn(k::disk_health(&[worn, vda]));
    info(k::disk_health(&[]));
}

#[test]
fn kernel_io_errors_unreadable() {
    let c = info(k::kernel_io_errors(&KernelLog {
        unavailable: Some("kernel log unreadable: dmesg_restrict=1 and not root".into()),
        ..Default::default()
    }));
    assert!(c.reason.contains("dmesg_restrict=1"), "{c:?}");
}

#[test]
fn bios() {
    let c = info(k::bios(&Bios {
        vendor: Some("Dell Inc.".into()),
        version: Some("1.10.2".into()),
        date: Some("07/12/2023".into()),
        sys_vendor: Some("Dell Inc.".into()),
        product_name: Some("PowerEdge R750".into()),
        unavailable: None,
    }));
    assert_eq!(
        c.reason,
        "BIOS Dell Inc. 1.10.2 (07/12/2023); system Dell Inc. PowerEdge R750"
    );
    let c = info(k::bios(&Bios {
        unavailable: Some("no /sys/class/dmi".into()),
        ..Default::default()
    }));
    assert!(c.reason.contains("unavailable: no /sys/class/dmi"), "{c:?}");
}

#[test]
fn kernel_cmdline() {
    let c = info(k::cmdline(
        Some("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"),
        None,
    ));
    assert!(c.reason.contains("no result-changing"), "{c:?}");
    // mitigations=off alone is stated (info) with the reason and a fix.
    let c = info(k::cmdline(Some("ro quiet mitigations=off"), None));
    assert!(
        c.reason.contains("not comparable with mitigated hosts"),
        "{c:?}"
    );
    assert!(c.fix.is_some());
    for p in [
        "idle=poll",
        "nohz_full=2-7",
        "isolcpus=2-7",
        "intel_pstate=disable",
        "processor.max_cstate=1",
        "transparent_hugepage=never",
    ] {
        let c = warn(k::cmdline(Some(&format!("ro mitigations=off {p}")), None));
        assert!(
            c.reason.contains(p) && c.reason.contains("mitigations=off"),
            "{c:?}"
        );
    }
    // Arguments after "--" go to init, not the kernel.
    info(k::cmdline(Some("ro -- idle=poll"), None));
    let c = info(k::cmdline(None, Some("reading /proc/cmdline: denied")));
    assert!(
        c.reason.contains("unavailable: reading /proc/cmdline"),
        "{c:?}"
    );
}

#[test]
fn hybrid() {
    ok(k::hybrid(Some(&CoreTypes::default())));
    let c = warn(k::hybrid(Some(&CoreTypes {
        performance_cpus: (0..16).collect(),
        efficiency_cpus: (16..24).collect(),
    })));
    assert!(
        c.reason
            .starts_with("hybrid CPU: 16 performance + 8 efficiency CPUs; pin threads (taskset)"),
        "{c:?}"
    );
    info(k::hybrid(None));
}

#[test]
fn data_dir_on_the_os_device() {
    let c = warn(k::shared_with_os(
        Some(true),
        &s(&["nvme0n1"]),
        &s(&["nvme0n1"]),
    ));
    assert!(
        c.reason.starts_with(
            "data dir shares its device with the OS (nvme0n1): logs/swap/other IO compete"
        ),
        "{c:?}"
    );
    ok(k::shared_with_os(
        Some(false),
        &s(&["nvme1n1"]),
        &s(&["nvme0n1"]),
    ));
    info(k::shared_with_os(None, &[], &s(&["nvme0n1"])));
}

#[test]
fn fs_geometry() {
    let g = FsGeometry {
        source: Some("xfs_info".into()),
        block_size: Some(4096),
        sector_size: Some(512),
        stripe_unit_blocks: Some(16),
        stripe_width_blocks: Some(64),
        statvfs_bsize: Some(4096),
        ..Default::default()
    };
    let c = info(k::fs_geometry("xfs", Some(&g)));
    assert_eq!(
        c.reason,
        "xfs: block 4096 B, sector 512 B, stripe unit 16 blocks (64 KiB), width 64 blocks (256 KiB), from xfs_info, statvfs f_bsize 4096"
    );
    let g = FsGeometry {
        unavailable: Some("xfs_info not installed".into()),
        statvfs_bsize: Some(4096),
        ..Default::default()
    };
    let c = info(k::fs_geometry("xfs", Some(&g)));
    assert!(
        c.reason.contains("unavailable: xfs_info not installed"),
        "{c:?}"
    );
}

#[test]
fn ptrace_scope() {
    info(k::ptrace_scope(None, Some(false)));
    ok(k::ptrace_scope(Some(0), Some(false)));
    warn(k::ptrace_scope(Some(1), Some(false)));
    ok(k::ptrace_scope(Some(1), Some(true)));
    warn(k::ptrace_scope(Some(2), None));
    let c = warn(k::ptrace_scope(Some(3), Some(true)));
    assert!(c.reason.contains("not even root"), "{c:?}");
}

#[test]
fn remove_ipc() {
    info(k::remove_ipc(None, Some(false), Some(1000)));
    ok(k::remove_ipc(Some(false), Some(false), Some(1000)));
    // As root the server runs as its own system user; a system user is left alone too.
    ok(k::remove_ipc(Some(true), Some(true), Some(0)));
    ok(k::remove_ipc(Some(true), Some(false), Some(117)));
    let c = warn(k::remove_ipc(Some(true), Some(false), Some(1000)));
    assert!(c.reason.contains("loses them mid-run"), "{c:?}");
    assert!(c.fix.as_deref().unwrap().contains("RemoveIPC=no"), "{c:?}");
    // A recorded snapshot that does not say who ran it.
    info(k::remove_ipc(Some(true), None, None));
}

#[test]
fn kptr_restrict() {
    info(k::kptr_restrict(None, None));
    ok(k::kptr_restrict(Some(0), Some(false)));
    let c = warn(k::kptr_restrict(Some(1), Some(false)));
    assert!(
        c.reason.contains("perf cannot resolve kernel symbols"),
        "{c:?}"
    );
    ok(k::kptr_restrict(Some(1), Some(true)));
    warn(k::kptr_restrict(Some(2), Some(true)));
}
