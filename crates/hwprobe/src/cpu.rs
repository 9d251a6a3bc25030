//! CPU probe: an in-memory, CPU-bound op rate per core at 1..N threads, and how well it
//! scales, with a note when the clock frequency moved during the run (turbo, thermal
//! throttling, a governor), since that changes every CPU-bound figure after it.

use crate::rng::Rng;
use crate::{ceiling, measured, ProbeReport};
use plumb_runner::kernel::{Lane, Timing};
use std::time::Duration;

/// Table entries touched by the op: 16 KiB, resident in L1/L2 so the op measures the core.
const TABLE: usize = 2048;

/// How the CPU probe runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CpuOptions {
    /// Thread counts, ascending.
    pub threads: Vec<usize>,
    /// Seconds per thread count.
    pub secs: f64,
}

impl CpuOptions {
    /// 1..=hardware threads, 5 s each, or 1 s with `quick`.
    pub fn new(hw_threads: usize, quick: bool) -> CpuOptions {
        CpuOptions {
            threads: (1..=hw_threads.max(1)).collect(),
            secs: if quick { 1.0 } else { 5.0 },
        }
    }
}

/// One op: hash a 64-byte key (8 multiply-xor-rotate rounds, as hash tables and
/// checksums do) and update the table slot it lands on. Integer-only, branch-free,
/// no memory beyond the small table: a stand-in for an in-memory engine's per-op work.
#[inline]
pub fn op(key: &mut [u64; 8], table: &mut [u64; TABLE]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for w in key.iter() {
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(31);
    }
    let slot = (h as usize) & (TABLE - 1);
    table[slot] = table[slot].wrapping_add(h);
    key[(h >> 61) as usize] ^= table[slot];
    h
}

/// Per-core efficiency: (ops/s per thread at N) / (ops/s at 1 thread).
pub fn efficiency(per_core_1: f64, per_core_n: f64) -> f64 {
    if per_core_1 > 0.0 {
        per_core_n / per_core_1
    } else {
        0.0
    }
}

/// Current clock of every CPU in MHz and where it came from: cpufreq's
/// `scaling_cur_freq` when present, else `cpu MHz` in /proc/cpuinfo (static in most VMs).
pub fn frequencies() -> (Vec<f64>, &'static str) {
    let mut v = Vec::new();
    for i in 0..crate::hw_threads() {
        let p = format!("/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_cur_freq");
        if let Some(khz) = std::fs::read_to_string(p)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
        {
            v.push(khz / 1000.0);
        }
    }
    if !v.is_empty() {
        return (v, "cpufreq scaling_cur_freq");
    }
    let t = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    (parse_cpuinfo_mhz(&t), "/proc/cpuinfo cpu MHz")
}

/// `cpu MHz : 2449.998` lines of /proc/cpuinfo.
pub fn parse_cpuinfo_mhz(t: &str) -> Vec<f64> {
    t.lines()
        .filter(|l| l.starts_with("cpu MHz"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
        .collect()
}

/// Whether frequency samples moved by more than 5% (max / min).
pub fn frequency_changed(samples: &[f64]) -> bool {
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(0.0, f64::max);
    min > 0.0 && max / min > 1.05
}

/// Runs the CPU probe: one `cpuops.tN` step per thread count.
pub fn run(o: &CpuOptions, stop: &std::sync::atomic::AtomicBool) -> ProbeReport {
    let mut rep = ProbeReport::default();
    let mut freq_samples = Vec::new();
    let (f, source) = frequencies();
    freq_samples.extend(f);
    let mut per_core_1 = None;
    for &t in &o.threads {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        // An op of the kernel is a block of 1024 hashes, not timed one by one.
        let m = measured::run(
            t,
            Duration::from_secs_f64(o.secs),
            None,
            stop,
            |lane: &Lane<'_>| {
                let mut rng = Rng::new(lane.index() as u64);
                let mut key: [u64; 8] = std::array::from_fn(|_| rng.next_u64());
                let mut table = Box::new([0u64; TABLE]);
                let mut acc = 0u64;
                let r = lane.drive_timed(Timing::Untimed, u64::MAX, None, |_| {
                    for _ in 0..1024 {
                        acc ^= op(&mut key, &mut table);
                    }
                    Ok::<_, String>((1024, 0))
                });
                std::hint::black_box(acc);
                r
            },
        );
        let (f, _) = frequencies();
        freq_samples.extend(f);
        let per_core = m.summary.ops_sec / t as f64;
        let base = *per_core_1.get_or_insert(per_core);
        let eff = efficiency(base, per_core);
        let mut step = m.into_step(
            format!("cpuops.t{t}"),
            plumb_workloads::ProbeKind::CpuOps,
            serde_json::json!({
                "probe": "cpu", "threads": t, "secs": o.secs,
                "op": "hash a 64-byte key (8 mul-xor-rotate rounds) + update a 16 KiB table",
                "ops_sec_per_core": per_core, "efficiency_vs_t1": eff,
            }),
        );
        step.summary.cpu_us_op = step.summary.cpu_us_op.filter(|x| x.is_finite());
        rep.ceilings.push(ceiling(
            format!("cpu.ops_sec_per_core.t{t}"),
            per_core,
            "ops/s",
        ));
        rep.steps.push(step);
    }
    if let Some(last) = rep.steps.last() {
        let eff = last.config["efficiency_vs_t1"].as_f64().unwrap_or(0.0);
        rep.notes.push(format!(
            "cpu: scaling efficiency at {} threads: {:.0}% of 1-thread per-core rate",
            last.config["threads"],
            eff * 100.0
        ));
    }
    let min = freq_samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = freq_samples.iter().copied().fold(0.0, f64::max);
    if freq_samples.is_empty() {
        rep.notes
            .push("cpu: clock frequency not readable; changes would go unnoticed".into());
    } else if frequency_changed(&freq_samples) {
        rep.notes.push(format!(
            "cpu: WARNING frequency changed during the run ({min:.0}..{max:.0} MHz, {source}): \
             turbo, throttling or a governor moved the clock; CPU figures vary with it"
        ));
    } else {
        rep.notes.push(format!(
            "cpu: frequency steady at {max:.0} MHz ({source}{})",
            if source.starts_with("/proc") {
                "; without cpufreq a VM reports a fixed figure"
            } else {
                ""
            }
        ));
    }
    rep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_is_deterministic_and_mixes() {
        let mut k1 = [1u64; 8];
        let mut k2 = [1u64; 8];
        let (mut t1, mut t2) = (Box::new([0u64; TABLE]), Box::new([0u64; TABLE]));
        let a = op(&mut k1, &mut t1);
        assert_eq!(a, op(&mut k2, &mut t2));
        // The key changes, so the next op differs.
        assert_ne!(op(&mut k1, &mut t1), a);
    }

    #[test]
    fn efficiency_and_frequency_rules() {
        assert_eq!(efficiency(100.0, 90.0), 0.9);
        assert_eq!(efficiency(0.0, 90.0), 0.0);
        assert!(!frequency_changed(&[2400.0, 2410.0, 2450.0]));
        assert!(frequency_changed(&[2400.0, 3500.0]));
        assert!(!frequency_changed(&[]));
        assert_eq!(
            parse_cpuinfo_mhz("processor : 0\ncpu MHz\t\t: 2449.998\ncpu MHz : x\n"),
            vec![2449.998]
        );
    }

    #[test]
    fn quick_probe_measures_each_thread_count() {
        let r = run(
            &CpuOptions {
                threads: vec![1, 2],
                secs: 0.3,
            },
            &std::sync::atomic::AtomicBool::new(false),
        );
        assert_eq!(r.steps.len(), 2);
        assert!(r.steps.iter().all(|s| s.summary.ops > 0));
        // Each step and second says what the host did beside the probe, over a window
        // long enough to count (plumb_core::NOISE_MIN_CPU_SECS of machine time), and
        // nothing over a shorter one.
        let cpus = f64::from(plumb_probes::cpustat::read().unwrap().cpus);
        let expected = |secs: f64| {
            let m = secs * cpus / plumb_core::NOISE_MIN_CPU_SECS;
            (m >= 1.05).then_some(true).or((m < 0.95).then_some(false))
        };
        let in_range = |x: Option<f64>| x.is_some_and(|x| (0.0..=100.0).contains(&x));
        for s in &r.steps {
            let (st, out) = (s.summary.steal_pct, s.summary.outside_cpu_pct);
            match expected(s.summary.secs) {
                Some(true) => assert!(in_range(st) && in_range(out), "{st:?} {out:?}"),
                Some(false) => assert!(st.is_none() && out.is_none(), "{st:?} {out:?}"),
                None => {}
            }
            for i in &s.intervals {
                if let Some(e) = expected(i.secs) {
                    assert_eq!(i.outside_cpu_pct.is_some(), e, "{i:?}");
                }
            }
        }
        assert_eq!(r.ceilings.len(), 2);
        assert!(r.ceilings[0].value > 1e5, "{:?}", r.ceilings);
        assert!(r.notes.iter().any(|n| n.contains("frequency")));
    }
}
