//! The human output of `plumb host`.

use crate::HostSnapshot;
use std::fmt::Write;

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|v| v.to_string())
        .unwrap_or_else(|| "-".into())
}

fn bytes(v: Option<u64>) -> String {
    match v {
        None => "-".into(),
        Some(b) if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        Some(b) if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        Some(b) => format!("{b} B"),
    }
}

/// The CPU's lines of the inventory: model, topology, caches, frequency and its
/// governor, power profile, temperature, boost.
fn cpu_lines(kv: &mut dyn FnMut(&str, String), c: &crate::inventory::Cpu) {
    kv("cpu model", opt(&c.model));
    kv(
        "topology",
        format!(
            "{} sockets, {} cores, {} threads, SMT {}",
            opt(&c.sockets),
            opt(&c.cores),
            opt(&c.threads),
            opt(&c.smt)
        ),
    );
    let caches: Vec<String> = c
        .caches
        .iter()
        .map(|k| {
            format!(
                "L{} {} {} KiB (shared by {})",
                k.level, k.kind, k.size_kb, k.shared_by
            )
        })
        .collect();
    kv(
        "caches",
        if caches.is_empty() {
            "-".into()
        } else {
            caches.join(", ")
        },
    );
    kv(
        "frequency MHz",
        format!(
            "cur {} min {} max {}",
            opt(&c.freq_cur_mhz),
            opt(&c.freq_min_mhz),
            opt(&c.freq_max_mhz)
        ),
    );
    kv(
        "governor",
        format!("{} (driver {})", opt(&c.governor), opt(&c.freq_driver)),
    );
    kv(
        "power profile",
        format!("EPP {}, platform {}", opt(&c.epp), opt(&c.platform_profile)),
    );
    if let Some(t) = c.temperature_c {
        kv("CPU temperature", format!("{t:.0} °C"));
    }
    kv(
        "turbo/boost",
        match c.boost {
            Some(true) => "on".into(),
            Some(false) => "off".into(),
            None => "-".into(),
        },
    );
}

/// The rest of the inventory: clock, memory, kernel, virtualisation, counters, BIOS,
/// core types, command line, and the kernel log's errors.
fn system_lines(kv: &mut dyn FnMut(&str, String), i: &crate::inventory::Inventory) {
    let c = &i.cpu;
    kv(
        "clocksource",
        format!(
            "{} (available: {})",
            opt(&i.clocksource.current),
            i.clocksource.available.join(" ")
        ),
    );
    kv(
        "memory",
        format!(
            "{} total, {} available",
            bytes(i.memory.total_bytes),
            bytes(i.memory.available_bytes)
        ),
    );
    kv(
        "swap",
        format!(
            "{} ({})",
            bytes(i.memory.swap_total_bytes),
            if i.memory.swap_devices.is_empty() {
                "no swap areas".into()
            } else {
                i.memory.swap_devices.join(", ")
            }
        ),
    );
    kv(
        "THP",
        format!(
            "{} (defrag {})",
            opt(&i.memory.thp_enabled),
            opt(&i.memory.thp_defrag)
        ),
    );
    kv("NUMA nodes", opt(&i.numa_nodes));
    kv("kernel", opt(&i.kernel));
    kv("distribution", opt(&i.distribution));
    kv(
        "virtualisation",
        match i.virtualization.is_vm {
            Some(true) => format!(
                "VM: {} ({})",
                opt(&i.virtualization.hypervisor),
                i.virtualization.evidence.join(", ")
            ),
            Some(false) => "bare metal".into(),
            None => "-".into(),
        },
    );
    kv(
        "perf_event_paranoid",
        format!(
            "{}{}",
            opt(&i.perf_event_paranoid),
            match i.core_pmu {
                Some(true) => ", CPU PMU present",
                Some(false) => ", no CPU PMU",
                None => "",
            }
        ),
    );
    let b = &i.bios;
    kv(
        "BIOS",
        match &b.unavailable {
            Some(why) => format!("unavailable: {why}"),
            None => format!(
                "{} {} ({}); system {} {}",
                opt(&b.vendor),
                opt(&b.version),
                opt(&b.date),
                opt(&b.sys_vendor),
                opt(&b.product_name)
            ),
        },
    );
    kv(
        "core types",
        match &c.core_types {
            None => "unknown".into(),
            Some(t) if t.efficiency_cpus.is_empty() => "not hybrid".into(),
            Some(t) => format!(
                "hybrid: {} performance CPUs, {} efficiency CPUs",
                t.performance_cpus.len(),
                t.efficiency_cpus.len()
            ),
        },
    );
    kv(
        "kernel cmdline",
        match (&i.cmdline, &i.cmdline_unavailable) {
            (Some(l), _) => l.clone(),
            (None, Some(why)) => format!("unavailable: {why}"),
            (None, None) => "-".into(),
        },
    );
    kv(
        "ptrace/kptr",
        format!(
            "ptrace_scope {}, kptr_restrict {}",
            i.ptrace_scope
                .map(|v| v.to_string())
                .unwrap_or_else(|| "absent (no Yama)".into()),
            opt(&i.kptr_restrict)
        ),
    );
    let kl = &i.kernel_log;
    kv(
        "kernel log errors",
        match (&kl.unavailable, kl.io_errors) {
            (Some(why), _) => format!("unavailable: {why}"),
            (None, Some(n)) => format!(
                "{n} I/O, filesystem or PCIe errors in {} messages ({})",
                opt(&kl.records),
                opt(&kl.source)
            ),
            (None, None) => "-".into(),
        },
    );
    for l in &kl.io_error_lines {
        kv("", l.clone());
    }
}

/// The storage chain under the directory: filesystem, mount, space, every device
/// down to the disk with its queue, the geometry, whether it shares the OS's device,
/// and each device's health.
fn storage_text(o: &mut String, st: &crate::storage::Storage) {
    let _ = writeln!(o, "\nStorage under {}", st.dir.display());
    let _ = writeln!(
        o,
        "  {:<20} {} on {} ({}, dev {})",
        "filesystem",
        st.fs_type,
        st.mount_point.display(),
        st.source.as_deref().unwrap_or("-"),
        st.majmin
    );
    let _ = writeln!(
        o,
        "  {:<20} {}",
        "mount options",
        st.mount_options.join(",")
    );
    let _ = writeln!(o, "  {:<20} {}", "fs options", st.super_options.join(","));
    let _ = writeln!(
        o,
        "  {:<20} {} total, {} used, {} free",
        "space",
        bytes(st.fs_total_bytes),
        bytes(st.fs_used_bytes),
        bytes(st.fs_free_bytes)
    );
    let _ = writeln!(
        o,
        "  {:<16} {:<9} {:>9} {:>6} {:>6} {:>7} {:>7} {:>4} {:<11} {:>7} {:>6} {:>7} {:>7} {:<13} {:>9}  model",
        "device", "kind", "size", "MIN-IO", "OPT-IO", "PHY-SEC", "LOG-SEC", "ROTA", "SCHED",
        "RQ-SIZE", "RA", "MAXSEC", "MAXHW", "WCACHE", "DISC-GRAN"
    );
    for d in &st.devices {
        let q = &d.queue;
        let name = format!("{}{}", "  ".repeat(d.depth as usize), d.name);
        let _ = writeln!(
            o,
            "  {:<16} {:<9} {:>9} {:>6} {:>6} {:>7} {:>7} {:>4} {:<11} {:>7} {:>6} {:>7} {:>7} {:<13} {:>9}  {}",
            name,
            d.kind,
            bytes(d.size_bytes),
            opt(&q.min_io),
            opt(&q.opt_io),
            opt(&q.phy_sec),
            opt(&q.log_sec),
            q.rotational.map(|r| if r { "1" } else { "0" }).unwrap_or("-"),
            opt(&q.scheduler),
            opt(&q.nr_requests),
            opt(&q.read_ahead_kb),
            opt(&q.max_sectors_kb),
            opt(&q.max_hw_sectors_kb),
            opt(&q.write_cache),
            opt(&q.discard_granularity),
            opt(&d.model),
        );
    }
    if let Some(g) = &st.geometry {
        let _ = writeln!(
            o,
            "  {:<20} block {}, sector {}, stripe unit {}, width {} (blocks; {}), statvfs f_bsize {}",
            "geometry",
            opt(&g.block_size),
            opt(&g.sector_size),
            opt(&g.stripe_unit_blocks),
            opt(&g.stripe_width_blocks),
            match (&g.source, &g.unavailable) {
                (Some(src), _) => src.clone(),
                (None, Some(why)) => format!("unavailable: {why}"),
                (None, None) => "-".into(),
            },
            opt(&g.statvfs_bsize)
        );
    }
    let _ = writeln!(
        o,
        "  {:<20} {} (data on {}, / on {})",
        "shares OS device",
        match st.shares_os_device {
            Some(true) => "yes",
            Some(false) => "no",
            None => "unknown",
        },
        st.physical_devices().join(", "),
        st.os_devices.join(", ")
    );
    for h in &st.health {
        let _ = writeln!(
            o,
            "  {:<20} {}",
            format!("health {}", h.device),
            match &h.unavailable {
                Some(why) => format!("unavailable: {why}"),
                None => format!("{} ({})", h.figures(), opt(&h.source)),
            }
        );
    }
}

/// Renders a snapshot as the text `plumb host` prints: inventory, storage chain, checks.
pub fn render_text(s: &HostSnapshot) -> String {
    let mut o = String::new();
    let i = &s.inventory;
    let c = &i.cpu;
    let _ = writeln!(o, "Host");
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(o, "  {k:<20} {v}");
    };
    cpu_lines(&mut kv, c);
    system_lines(&mut kv, i);
    if let Some(st) = &s.storage {
        storage_text(&mut o, st);
    }
    let _ = writeln!(o, "\nChecks");
    for ch in &s.checks {
        let _ = writeln!(
            o,
            "  [{:<4}] {:<18} {}",
            ch.verdict.as_str(),
            ch.id,
            ch.reason
        );
        if let Some(f) = &ch.fix {
            let _ = writeln!(o, "  {:<6} {:<18} fix: {}", "", "", f);
        }
    }
    if !s.notes.is_empty() {
        let _ = writeln!(o, "\nNotes");
        for n in &s.notes {
            let _ = writeln!(o, "  {n}");
        }
    }
    o
}
