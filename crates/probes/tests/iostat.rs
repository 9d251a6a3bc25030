//! plumb's `iostat -x` figures against sysstat's own, on this machine.
//!
//! iostat's first report covers the time since boot: the counters of `/proc/diskstats`
//! over the uptime of `/proc/uptime`. Reading both just before and just after running
//! `iostat` and applying plumb's formulas ([`DiskCounters::device_io`]) to them must
//! give iostat's figures within 5% (plus half a unit of the last of the two decimals
//! iostat prints). The device is the one holding `/` (or, failing that, the temp dir),
//! which has served reads and writes since boot on any machine that got this far.
//!
//! Needs sysstat's `iostat` (`apt-get install sysstat`; scripts/setup.sh installs it):
//! without it the test fails, saying so, rather than passing unchecked.

use std::path::Path;
use std::process::Command;

use plumb_core::DeviceIo;
use plumb_probes::diskstats::{DeviceStats, DiskCounters};

/// Seconds since boot from `/proc/uptime`, as iostat reads it (centisecond resolution).
fn uptime_secs() -> f64 {
    let text = std::fs::read_to_string("/proc/uptime").expect("reading /proc/uptime");
    text.split_whitespace()
        .next()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("/proc/uptime: cannot parse {text:?}"))
}

/// The device holding `/`, else the one holding the temp dir.
fn device() -> DeviceStats {
    let tmp = std::env::temp_dir();
    DeviceStats::for_path(Path::new("/"))
        .or_else(|e| {
            eprintln!("/: {e}; trying {}", tmp.display());
            DeviceStats::for_path(&tmp)
        })
        .unwrap_or_else(|e| {
            panic!("no block device holds / or the temp dir here, nothing to compare: {e}")
        })
}

/// `iostat -x -d -k -o JSON DEV`'s one report (since boot) for `dev`, as JSON.
fn iostat_since_boot(dev: &str) -> serde_json::Value {
    let out = match Command::new("iostat")
        .args(["-x", "-d", "-k", "-o", "JSON", dev])
        .env("LC_ALL", "C")
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "iostat is not installed: `apt-get install sysstat` (scripts/setup.sh installs \
             it); this test compares plumb's figures with sysstat's and cannot run without it"
        ),
        Err(e) => panic!("running iostat: {e}"),
    };
    assert!(
        out.status.success(),
        "iostat -x -d -k -o JSON {dev} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "iostat's JSON does not parse ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let disks = &doc["sysstat"]["hosts"][0]["statistics"][0]["disk"];
    disks
        .as_array()
        .and_then(|a| a.iter().find(|d| d["disk_device"] == dev))
        .cloned()
        .unwrap_or_else(|| panic!("iostat did not report {dev}: {doc}"))
}

/// One of plumb's figures in iostat's unit, by iostat's JSON key.
type Figure = fn(&DeviceIo) -> Option<f64>;

/// Whether `ours` is `theirs` within 5%, or within the rounding of iostat's two
/// decimals.
fn close(ours: f64, theirs: f64) -> bool {
    (ours - theirs).abs() <= 0.05 * theirs.abs() + 0.005
}

#[test]
fn figures_match_iostat_since_boot() {
    let ds = device();
    let dev = ds.name().to_string();
    let (up0, c0) = (uptime_secs(), ds.read().expect("reading /proc/diskstats"));
    let theirs = iostat_since_boot(&dev);
    let (up1, c1) = (uptime_secs(), ds.read().expect("reading /proc/diskstats"));
    eprintln!("{dev}: iostat since boot: {theirs}");
    assert!(
        c1.reads > 0 && c1.writes > 0,
        "{dev} has served no reads or no writes since boot ({c1:?}): nothing to compare"
    );
    assert!(c1.times_known, "{dev}'s /proc/diskstats line has no times");
    // Since-boot counters: the delta from an all-zero reading that has times.
    let zero = DiskCounters {
        times_known: true,
        ..DiskCounters::default()
    };
    let before = c0.delta(&zero).device_io(up0).expect("uptime > 0");
    let after = c1.delta(&zero).device_io(up1).expect("uptime > 0");
    let figures: [(&str, Figure); 10] = [
        ("r/s", |d| Some(d.r_s)),
        ("rkB/s", |d| Some(d.rmb_s * 1024.0)),
        ("r_await", |d| d.r_await_ms),
        ("rareq-sz", |d| d.rareq_kb),
        ("w/s", |d| Some(d.w_s)),
        ("wkB/s", |d| Some(d.wmb_s * 1024.0)),
        ("w_await", |d| d.w_await_ms),
        ("wareq-sz", |d| d.wareq_kb),
        ("aqu-sz", |d| d.aqu_sz),
        ("util", |d| d.util_pct),
    ];
    let mut wrong = Vec::new();
    for (key, get) in figures {
        let t = theirs[key]
            .as_f64()
            .unwrap_or_else(|| panic!("iostat's report has no {key:?}: {theirs}"));
        let (b, a) = (
            get(&before).unwrap_or_else(|| panic!("plumb has no {key} for {dev}")),
            get(&after).unwrap_or_else(|| panic!("plumb has no {key} for {dev}")),
        );
        eprintln!("{key:>9}: iostat {t:>12.2}  plumb {b:>14.4} .. {a:.4}");
        if !close(b, t) && !close(a, t) {
            wrong.push(format!("{key}: iostat {t}, plumb {b} .. {a}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{dev}: plumb's figures differ from iostat's by more than 5%:\n{}",
        wrong.join("\n")
    );
}
