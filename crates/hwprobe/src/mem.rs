//! Memory probe: STREAM triad bandwidth at 1..N threads, and dependent-load latency.
//!
//! Triad is `a[i] = b[i] + s * c[i]` over `f64` arrays; like STREAM it counts 24 bytes per
//! element (two reads, one write; the write-allocate read is not counted), takes the best
//! of several passes, and sizes each array at least 4× the last-level cache so the figure
//! is memory's, not the cache's.

use crate::{ceiling, ProbeReport, ProbeStep};
use plumb_core::{StepStatus, StepSummary};
use plumb_runner::kernel::{self, Mark};
use plumb_runner::LatencyHistogram;
use plumb_workloads::ProbeKind;
use std::sync::Barrier;
use std::time::{Instant, SystemTime};

/// Bytes STREAM counts per triad element: read b, read c, write a.
pub const TRIAD_BYTES_PER_ELEMENT: u64 = 24;

/// How the memory probe runs.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MemOptions {
    /// Thread counts to measure, ascending.
    pub threads: Vec<usize>,
    /// Passes per thread count; the best is reported.
    pub passes: usize,
    /// Elements per array.
    pub elements: usize,
    /// Dependent loads timed by the pointer chase.
    pub chase_loads: u64,
}

impl MemOptions {
    /// 1..=hardware threads, arrays 4× the LLC (at least 32 MiB each), 10 passes as STREAM
    /// does, or 4 passes with `quick`.
    pub fn new(hw_threads: usize, llc_bytes: Option<u64>, quick: bool) -> MemOptions {
        MemOptions {
            threads: (1..=hw_threads.max(1)).collect(),
            passes: if quick { 4 } else { 10 },
            elements: array_elements(llc_bytes),
            chase_loads: if quick { 5_000_000 } else { 50_000_000 },
        }
    }
}

/// Elements per `f64` array: 4× the LLC, at least 32 MiB, a multiple of 1024.
pub fn array_elements(llc_bytes: Option<u64>) -> usize {
    let bytes = (llc_bytes.unwrap_or(32 << 20) * 4).max(32 << 20);
    ((bytes / 8) as usize).div_ceil(1024) * 1024
}

/// Triad GB/s (10^9 bytes) for `elements` per array done in `secs`, as STREAM counts it.
pub fn triad_gbs(elements: usize, secs: f64) -> f64 {
    if secs <= 0.0 {
        return 0.0;
    }
    elements as f64 * TRIAD_BYTES_PER_ELEMENT as f64 / secs / 1e9
}

/// Scaling: bandwidth at each thread count divided by bandwidth at one thread.
pub fn scaling(gbs: &[f64]) -> Vec<f64> {
    match gbs.first() {
        Some(&b) if b > 0.0 => gbs.iter().map(|g| g / b).collect(),
        _ => vec![0.0; gbs.len()],
    }
}

/// Total last-level cache of the machine in bytes: the highest-level cache of CPU 0 times
/// the number of instances (online CPUs / CPUs sharing one).
pub fn llc_bytes() -> Option<u64> {
    let base = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, u64, usize)> = None;
    for e in std::fs::read_dir(base).ok()?.flatten() {
        let p = e.path();
        let rd = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let Some(level) = rd("level").and_then(|s| s.trim().parse::<u32>().ok()) else {
            continue;
        };
        if rd("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let Some(size) = rd("size").and_then(|s| parse_cache_size(&s)) else {
            continue;
        };
        let shared = rd("shared_cpu_list")
            .map(|s| count_cpu_list(&s))
            .unwrap_or(1)
            .max(1);
        if best.is_none_or(|(l, _, _)| level > l) {
            best = Some((level, size, shared));
        }
    }
    let (_, size, shared) = best?;
    let instances = crate::hw_threads().div_ceil(shared).max(1) as u64;
    Some(size * instances)
}

/// `32768K` → bytes.
pub fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, m) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1024),
        'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    n.parse::<u64>().ok().map(|n| n * m)
}

/// `0-3,8` → 5.
pub fn count_cpu_list(s: &str) -> usize {
    s.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => usize::from(p.parse::<usize>().is_ok()),
        })
        .sum()
}

#[inline(never)]
fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

/// Measures triad at one thread count: `passes` passes over arrays split into contiguous
/// chunks, one per thread; returns each pass's wall time.
fn triad_passes(a: &mut [f64], b: &[f64], c: &[f64], threads: usize, passes: usize) -> Vec<f64> {
    let n = a.len();
    let chunk = n.div_ceil(threads.max(1)).max(1);
    let workers = n.div_ceil(chunk);
    let barrier = Barrier::new(workers);
    // Each worker times its own share; a pass lasts from the first start to the last end.
    // A coordinating thread reading the clock would be a third runnable thread on a
    // machine with as many CPUs as workers: scheduled late, it starts its clock after the
    // workers began and reports bandwidth no memory has (seen: 298 GB/s on 2 vCPUs).
    let spans: Vec<Vec<(Instant, Instant)>> = std::thread::scope(|sc| {
        let handles: Vec<_> = a
            .chunks_mut(chunk)
            .zip(b.chunks(chunk))
            .zip(c.chunks(chunk))
            .map(|((ac, bc), cc)| {
                let barrier = &barrier;
                sc.spawn(move || {
                    let mut own = Vec::with_capacity(passes);
                    for _ in 0..passes {
                        barrier.wait();
                        let t0 = Instant::now();
                        triad(ac, bc, cc, 3.0);
                        own.push((t0, Instant::now()));
                    }
                    own
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("triad worker"))
            .collect()
    });
    (0..passes)
        .map(|p| {
            let start = spans.iter().map(|w| w[p].0).min().expect("a worker");
            let end = spans.iter().map(|w| w[p].1).max().expect("a worker");
            (end - start).as_secs_f64()
        })
        .collect()
}

/// The kernel's counters now (this process's CPU, the machine's by state; no device), so
/// a probe step's shared figures come from [`kernel::summary`] over two of them.
fn mark() -> Mark<()> {
    Mark::read(None, &mut ())
}

/// Runs the memory probe: one `triad.tN` step per thread count and a `chase` step.
pub fn run(o: &MemOptions, stop: &std::sync::atomic::AtomicBool) -> ProbeReport {
    let mut rep = ProbeReport::default();
    let n = o.elements;
    rep.notes.push(format!(
        "mem: 3 arrays × {} ({} f64 each; ≥ 4× the last-level cache {}), best of {} passes; \
         GB/s = 24 bytes/element as STREAM counts (no write-allocate)",
        crate::plan::human(n as u64 * 8),
        n,
        llc_bytes()
            .map(crate::plan::human)
            .unwrap_or_else(|| "unknown, assumed 32 MiB".into()),
        o.passes
    ));
    // First touch by every thread count's workers would be ideal on NUMA; arrays are
    // initialised once here (parallel first touch would need per-count reallocation).
    let mut a = vec![1.0f64; n];
    let b = vec![2.0f64; n];
    let c = vec![0.5f64; n];
    let mut curve = Vec::new();
    for &t in &o.threads {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let started = SystemTime::now();
        let first = mark();
        let times = triad_passes(&mut a, &b, &c, t, o.passes);
        let last = mark();
        // STREAM skips the first pass (page faults, warm-up) when there are more.
        let considered = if times.len() > 1 {
            &times[1..]
        } else {
            &times[..]
        };
        let best = considered.iter().copied().fold(f64::INFINITY, f64::min);
        let gbs = triad_gbs(n, best);
        curve.push(gbs);
        let mut h = LatencyHistogram::new();
        for s in &times {
            h.record_ns((s * 1e9) as u64);
        }
        let total: f64 = times.iter().sum();
        // One op is one pass; its latency is the pass's time.
        let summary = StepSummary {
            mb_sec: Some(gbs * 1000.0),
            ..kernel::summary(&first, &last, times.len() as u64, &h)
        };
        let avg = triad_gbs(n, total / times.len() as f64);
        rep.steps.push(ProbeStep {
            name: format!("triad.t{t}"),
            kind: ProbeKind::Triad,
            status: if stop.load(std::sync::atomic::Ordering::Relaxed) {
                StepStatus::Interrupted
            } else {
                StepStatus::Ok
            },
            error: None,
            started,
            ended: SystemTime::now(),
            config: serde_json::json!({
                "probe": "mem", "threads": t, "elements": n, "passes": o.passes,
                "bytes_per_element": TRIAD_BYTES_PER_ELEMENT,
                "best_gbs": gbs, "avg_gbs": avg,
                "scaling_vs_t1": curve.first().map(|b| if *b > 0.0 { gbs / b } else { 0.0 }),
            }),
            summary,
            intervals: Vec::new(),
        });
        rep.ceilings
            .push(ceiling(format!("mem.triad_gbs.t{t}"), gbs, "GB/s"));
    }
    if !curve.is_empty() {
        let sc = scaling(&curve);
        rep.notes.push(format!(
            "mem: triad scaling vs 1 thread: {}",
            sc.iter()
                .enumerate()
                .map(|(i, s)| format!("t{}={s:.2}", o.threads[i]))
                .collect::<Vec<_>>()
                .join(" ")
        ));
    }
    drop((a, b, c));
    if !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let step = chase(n, o.chase_loads);
        if let Some(ns) = step.config.get("ns_per_load").and_then(|v| v.as_f64()) {
            rep.ceilings.push(ceiling("mem.load_latency_ns", ns, "ns"));
        }
        rep.steps.push(step);
    }
    rep
}

/// A random cyclic permutation (Sattolo's algorithm): following it from any slot visits
/// every slot once, so each load depends on the previous one and prefetchers cannot help.
pub fn cyclic_permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n as u32).collect();
    let mut rng = crate::rng::Rng::new(seed);
    for i in (1..n).rev() {
        let j = rng.below(i as u64) as usize; // j < i: a single cycle
        v.swap(i, j);
    }
    v
}

/// Dependent-load latency over a `bytes_like`-element chase (4-byte slots).
fn chase(elements: usize, loads: u64) -> ProbeStep {
    // Same footprint as one triad array: ≥ 4× the LLC.
    let slots = (elements * 2).max(1024);
    let perm = cyclic_permutation(slots, 7);
    let started = SystemTime::now();
    let first = mark();
    let t = Instant::now();
    let mut i = 0u32;
    for _ in 0..loads {
        // Indexes are < slots by construction; a bounds check is cheap next to a miss.
        i = perm[i as usize];
    }
    // The loads alone, without the marks' reads: the latency ceiling is theirs.
    let secs = t.elapsed().as_secs_f64();
    std::hint::black_box(i);
    let last = mark();
    let ns = secs * 1e9 / loads.max(1) as f64;
    ProbeStep {
        name: "chase".into(),
        kind: ProbeKind::Chase,
        status: StepStatus::Ok,
        error: None,
        started,
        ended: SystemTime::now(),
        config: serde_json::json!({
            "probe": "mem", "slots": slots, "bytes": slots * 4, "loads": loads,
            "ns_per_load": ns,
            "note": "4 KiB pages: includes TLB misses, as a database's random reads do",
        }),
        // Loads are not timed one by one: the mean load stands as the median.
        summary: StepSummary {
            p50_us: Some(ns / 1000.0),
            ..kernel::summary(&first, &last, loads, &LatencyHistogram::new())
        },
        intervals: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triad_bandwidth_counts_24_bytes_per_element() {
        // 1e9 elements in 1 s = 24 GB/s.
        assert!((triad_gbs(1_000_000_000, 1.0) - 24.0).abs() < 1e-9);
        assert!((triad_gbs(10_000_000, 0.01) - 24.0).abs() < 1e-9);
        assert_eq!(triad_gbs(10, 0.0), 0.0);
    }

    #[test]
    fn scaling_is_relative_to_one_thread() {
        assert_eq!(scaling(&[10.0, 18.0, 20.0]), vec![1.0, 1.8, 2.0]);
        assert_eq!(scaling(&[0.0, 1.0]), vec![0.0, 0.0]);
        assert!(scaling(&[]).is_empty());
    }

    #[test]
    fn arrays_are_four_times_the_llc() {
        assert_eq!(array_elements(Some(32 << 20)) * 8, 128 << 20);
        assert_eq!(array_elements(Some(1 << 20)) * 8, 32 << 20); // floor
        assert_eq!(array_elements(None) * 8, 128 << 20);
        assert_eq!(array_elements(Some(1000)) % 1024, 0);
    }

    #[test]
    fn cache_sizes_and_cpu_lists_parse() {
        assert_eq!(parse_cache_size("32768K\n"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(count_cpu_list("0-3,8\n"), 5);
        assert_eq!(count_cpu_list("0"), 1);
        assert_eq!(count_cpu_list("3-1"), 0);
    }

    #[test]
    fn triad_computes_and_passes_are_timed() {
        let (mut a, b, c) = (vec![0.0; 10_000], vec![1.0; 10_000], vec![2.0; 10_000]);
        let t = triad_passes(&mut a, &b, &c, 3, 2);
        assert_eq!(t.len(), 2);
        assert!(a.iter().all(|&x| x == 7.0));
        // More threads than elements still completes.
        let (mut a, b, c) = (vec![0.0; 2], vec![1.0; 2], vec![1.0; 2]);
        assert_eq!(triad_passes(&mut a, &b, &c, 4, 3).len(), 3);
        assert_eq!(a, vec![4.0, 4.0]);
    }

    #[test]
    fn permutation_is_one_cycle() {
        let p = cyclic_permutation(1000, 3);
        let (mut i, mut seen) = (0u32, 0);
        loop {
            i = p[i as usize];
            seen += 1;
            if i == 0 {
                break;
            }
        }
        assert_eq!(seen, 1000);
    }
}
