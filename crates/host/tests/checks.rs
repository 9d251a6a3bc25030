//! Every check on its own: an input that passes and one that warns (or fails), each
//! with a reason, and a fix whenever the verdict is not ok.

use plumb_host::checks as k;
use plumb_host::{BlockDevice, BusyProcess, Check, Queue, Verdict};

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
