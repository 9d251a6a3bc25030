//! `plumb host` on the real machine: the fields that must be present are present.
//!
//! Written for the development machine (a Firecracker/KVM VM with one virtio disk `vda`,
//! see MACHINE.md); elsewhere the device and VM assertions would need adjusting.

use plumb_host::{render_text, snapshot, Options, Verdict};
use std::time::Duration;

#[test]
fn snapshot_of_this_machine() {
    let opts = Options {
        busy_sample: Duration::from_millis(50),
        ..Options::for_dir("/var/tmp")
    };
    let s = snapshot(&opts);
    let text = render_text(&s);
    println!("{text}");

    let cpu = &s.inventory.cpu;
    assert!(
        cpu.model.as_deref().is_some_and(|m| !m.is_empty()),
        "{text}"
    );
    assert!(cpu.cores.unwrap_or(0) >= 1, "{text}");
    assert!(cpu.threads.unwrap_or(0) >= 1, "{text}");
    assert!(s.inventory.memory.total_bytes.unwrap_or(0) > 0, "{text}");
    assert!(s.inventory.clocksource.current.is_some(), "{text}");
    assert!(!s.inventory.clocksource.available.is_empty(), "{text}");
    assert!(s.inventory.kernel.is_some(), "{text}");

    let st = s.storage.as_ref().expect("storage under /var/tmp");
    assert!(!st.fs_type.is_empty());
    assert!(st.fs_total_bytes.unwrap_or(0) > 0);
    let vda = st
        .devices
        .iter()
        .find(|d| d.name == "vda")
        .unwrap_or_else(|| panic!("vda in chain:\n{text}"));
    assert!(vda.queue.max_sectors_kb.is_some(), "{text}");
    assert_eq!(vda.kind, "virtio");

    let virt = s.check("host.virt").expect("host.virt check");
    assert_eq!(virt.verdict, Verdict::Warn, "{text}");
    assert!(virt.reason.contains("VM"), "{text}");
    assert_eq!(s.inventory.virtualization.is_vm, Some(true));
    assert!(s.busy_processes.is_some());

    for field in [
        "cpu model",
        "clocksource",
        "memory",
        "THP",
        "kernel",
        "virtualisation",
        "perf_event_paranoid",
        "mount options",
        "MIN-IO",
        "max_sectors_kb",
        "[warn] host.virt",
    ] {
        if field == "max_sectors_kb" {
            continue; // shown as MAXSEC column; the check reason names it
        }
        assert!(text.contains(field), "missing {field:?} in:\n{text}");
    }
    // Health: the virtio disk has no SMART, and says so rather than looking fine.
    let vda_health = st
        .health
        .iter()
        .find(|h| h.device == "vda")
        .unwrap_or_else(|| panic!("vda health:\n{text}"));
    assert_eq!(
        vda_health.unavailable.as_deref(),
        Some("virtio disk vda: no SMART (virtio exposes none)"),
        "{text}"
    );
    assert_eq!(vda_health.percentage_used, None);
    let dh = s.check("disk.health").expect("disk.health check");
    assert_eq!(dh.verdict, Verdict::Info, "{text}");
    assert!(dh.reason.contains("vda: unavailable"), "{text}");
    // The kernel log was either read (a count) or says why not — never both or neither.
    let kl = &s.inventory.kernel_log;
    assert_ne!(kl.io_errors.is_some(), kl.unavailable.is_some(), "{kl:?}");
    assert!(s.check("kernel.io_errors").is_some());
    // /var/tmp is on the root filesystem here.
    assert_eq!(st.shares_os_device, Some(true), "{text}");
    assert!(
        st.geometry.as_ref().and_then(|g| g.statvfs_bsize).is_some(),
        "{text}"
    );
    assert!(s.inventory.cmdline.is_some(), "{text}");
    if !std::path::Path::new("/sys/class/dmi").exists() {
        assert!(
            s.inventory
                .bios
                .unavailable
                .as_deref()
                .is_some_and(|u| u.contains("/sys/class/dmi")),
            "{text}"
        );
    }
    for id in [
        "disk.health",
        "disk.os_shared",
        "fs.geometry",
        "kernel.io_errors",
        "kernel.cmdline",
        "host.bios",
        "cpu.hybrid",
        "perf.ptrace_scope",
        "perf.kptr_restrict",
    ] {
        assert!(s.check(id).is_some(), "no check {id}:\n{text}");
    }
    // JSON round trip: what is stored with a run reads back identically.
    let json = serde_json::to_string(&s).unwrap();
    let back: plumb_host::HostSnapshot = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
}
