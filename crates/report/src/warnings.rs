//! What makes a comparison untruthful, checked from what the store recorded: each rule
//! is a function from the versions compared to zero or more sentences.

use crate::version::Version;
use std::collections::BTreeSet;

/// Compaction debt (bytes) at a step's start above which the step is measured while
/// the previous step's work drains.
pub const PENDING_COMPACTION_BYTES: f64 = 64.0 * 1024.0 * 1024.0;

/// Share of the host's CPUs above which the load generator (in-process for embedded
/// engines) is taken to saturate the CPU.
pub const CPU_SATURATION: f64 = 0.9;

/// Steal, percent of the machine's CPU time, above which a step's figures are taken to
/// include a neighbour VM's: a quiet VM shows well under 1%, and a CPU-bound step that
/// loses 5% of its CPU time to the hypervisor loses about as much throughput as the
/// smallest change worth reporting on a shared VM (back-to-back runs swing ±5-10%).
pub const STEAL_PCT: f64 = 5.0;

/// Other processes' CPU, percent of the machine's capacity, above which a step ran
/// beside a neighbour: idle daemons and monitoring agents stay at 1-2%, while 10% is
/// a fifth of a core on a 2-CPU VM, enough to take a core from a worker or a
/// background thread (compaction, a server's writer) at the wrong moment.
pub const OUTSIDE_CPU_PCT: f64 = 10.0;

/// Difference in steal or outside load between two sides of a comparison, in
/// percentage points of the machine, above which the host may explain their
/// difference: half the single-step thresholds above, since it is the gap between the
/// sides that moves the ratio, and `/proc/stat`'s 10 ms ticks make a step's figures
/// good to about a point.
pub const NOISE_DIFF_PCT: f64 = 5.0;

/// Warnings for one step's host noise, each with its reason and its fix.
pub fn host_noise(step: &str, s: &plumb_core::StepSummary) -> Vec<String> {
    let mut w = Vec::new();
    if let Some(o) = s.outside_cpu_pct.filter(|&o| o > OUTSIDE_CPU_PCT) {
        w.push(format!(
            "{step}: another process used {o:.0}% of the machine's CPU during this step: \
             results include a neighbour; stop it (`plumb host` lists busy processes), or \
             pin plumb and it to separate CPUs with taskset (`taskset -c 1 plumb …`)"
        ));
    }
    if let Some(st) = s.steal_pct.filter(|&st| st > STEAL_PCT) {
        w.push(format!(
            "{step}: the hypervisor gave {st:.0}% of this VM's CPU time to other guests \
             during this step (steal): results include a neighbour VM; rerun when the \
             host is quieter, compare only runs with similar steal%, or use a dedicated \
             host or instance"
        ));
    }
    w
}

/// [`host_noise`] for a stored step of a run on `cpus` CPUs, when its figures can be
/// judged: never for a maintenance step (a flush or a compaction wait measures nothing
/// a neighbour could bend), nor for a window of less than
/// [`plumb_core::NOISE_MIN_CPU_SECS`] of machine time (too few of `/proc/stat`'s
/// ticks; runs stored before plumb refused to measure such windows still hold their
/// figure). Unknown CPUs count as one, the strictest reading.
pub fn step_noise(s: &plumb_store::StepRecord, cpus: Option<u32>) -> Vec<String> {
    let cpu_secs = s.summary.secs * f64::from(cpus.unwrap_or(1).max(1));
    if s.kind.is_maintenance() || cpu_secs < plumb_core::NOISE_MIN_CPU_SECS {
        return Vec::new();
    }
    host_noise(&s.name, &s.summary)
}

/// The CPUs of the host a run ran on, as its snapshot counted them.
fn cpus_of(r: &plumb_store::StoredRun) -> Option<u32> {
    r.run.host.as_ref().and_then(|h| h.inventory.cpu.threads)
}

/// Shift of a step's figure, as a fraction of it, above which its warm-up or drift is
/// worth a sentence: 5%, the smallest change worth reporting on a shared VM (see
/// [`STEAL_PCT`]). A drift smaller than that moves the figure less than back-to-back
/// runs swing, and MSER-5 alone, on a series of a minute or so, calls a stationary one
/// unsteady about one time in ten ([`crate::warmup::MIN_BATCHES`]): the two together
/// keep the warning to figures that are both unsteady and moved by it.
pub const WARMUP_SHIFT: f64 = 0.05;

/// Whether MSER-5 is asked about a step of `kind`, and then whether the step can be
/// warmed unmeasured (`--warmup`): asked only of a step whose window is set by time and
/// meant to hold one steady rate. Not of maintenance (flush, compaction, the insert
/// benchmark's debt: no rate to report), loads (a kv fill or YCSB load, a SQL load, the
/// insert benchmark's l.i0, l.x and inserts, which run a fixed amount of work whose
/// rate falls as the tree grows, by design, and take no `--warmup` or `--duration`),
/// probes (their windows are the probe family's own, with no `--duration`) or
/// durability trials (no rate at all).
fn warms(kind: plumb_workloads::Kind) -> Option<bool> {
    use plumb_workloads::{IbKind, Kind};
    match kind {
        Kind::Kv(k) if !k.is_maintenance() && !k.is_fill() => Some(true),
        Kind::Sql(q) if !q.is_load() => Some(true),
        // The insert benchmark's query steps have no unmeasured warm-up.
        Kind::Ib(IbKind::RangeQueries | IbKind::PointQueries) => Some(false),
        _ => None,
    }
}

/// A step whose measured window was not a steady state, as MSER-5 finds it in the
/// step's 1-second series ([`crate::warmup::step_warmup`]), in one sentence with the
/// figure it rests on and what to do; `None` for a steady step. The figure is the
/// rate averaged over the window, so a series still moving at its end (no steady
/// state in its first half) mixes warm-up and steady state, and a long warm-up before
/// a steady state pulls the figure away from it. Either is said only when it moves the
/// figure by more than [`WARMUP_SHIFT`]; never for a step MSER-5 is not asked about
/// (maintenance, loads, probes: see `warms`), a failed step (its failure is the
/// warning) or a series too short to judge.
pub fn step_unsteady(
    s: &plumb_store::StepRecord,
    intervals: &[plumb_core::Interval],
) -> Option<String> {
    use crate::warmup::{step_warmup, Warmup};
    let warms = warms(s.kind)?;
    if s.status == plumb_core::StepStatus::Failed {
        return None;
    }
    let way = |shift: f64| if shift < 0.0 { "below" } else { "above" };
    match step_warmup(intervals) {
        Warmup::NotSteady { n, shift } if shift.abs() > WARMUP_SHIFT => Some(format!(
            "{}: throughput was still moving at the end of the step (MSER-5 finds no \
             steady state in its {n} one-second intervals, and their second half ran \
             {:.0}% {} the step's average rate): the figure mixes warm-up and steady \
             state; run it longer (--duration){}",
            s.name,
            shift.abs() * 100.0,
            way(shift),
            if warms {
                " or warm it first (--warmup)"
            } else {
                ""
            },
        )),
        Warmup::Steady {
            warmup_secs,
            n,
            shift,
            ..
        } if shift.abs() > WARMUP_SHIFT => {
            let secs = warmup_secs.round();
            Some(format!(
                "{}: its first {secs:.0} s were warm-up (MSER-5 over its {n} one-second \
                 intervals), and after them it ran {:.0}% {} the step's average rate: \
                 the figure includes the warm-up; {}run it longer (--duration) so the \
                 warm-up weighs less",
                s.name,
                shift.abs() * 100.0,
                way(shift),
                if warms {
                    format!("warm it first (--warmup {secs:.0}) or ")
                } else {
                    String::new()
                },
            ))
        }
        _ => None,
    }
}

/// [`step_noise`] and [`step_unsteady`] for every step of a run: what each step's
/// figure may be bent by, from its host and from its own series.
pub fn run_noise(r: &plumb_store::StoredRun) -> Vec<String> {
    r.steps
        .iter()
        .flat_map(|(s, ivs)| {
            step_noise(s, cpus_of(r))
                .into_iter()
                .chain(step_unsteady(s, ivs))
        })
        .collect()
}

fn all_runs(versions: &[Version]) -> impl Iterator<Item = (&str, &plumb_store::StoredRun)> {
    versions
        .iter()
        .flat_map(|v| v.runs.iter().map(move |r| (v.label.as_str(), r)))
}

/// Option values across all runs, when they are not all the same.
fn differing_option(versions: &[Version], key: &str) -> Option<String> {
    let vals: BTreeSet<String> = all_runs(versions)
        .map(|(_, r)| {
            r.run
                .options
                .get(key)
                .cloned()
                .unwrap_or_else(|| "unset".into())
        })
        .collect();
    (vals.len() > 1).then(|| {
        format!(
            "{key}: {}",
            vals.into_iter().collect::<Vec<_>>().join(" vs ")
        )
    })
}

/// What an acknowledged write of this run survives (`plumb_targets::Durability`'s
/// names). Runs stored before plumb recorded it are read from RocksDB's own options.
fn durability_of(r: &plumb_store::StoredRun) -> String {
    if let Some(d) = r.run.options.get("durability") {
        return d.clone();
    }
    let opt = |k: &str| r.run.options.get(k).map(String::as_str);
    match (
        r.run.engine.as_str(),
        opt("rocksdb.disable_wal"),
        opt("rocksdb.sync"),
    ) {
        ("rocksdb", Some("true"), _) => "unlogged",
        ("rocksdb", _, Some("true")) => "synced",
        ("rocksdb", _, _) => "os-buffered",
        ("memory" | "null", _, _) => "volatile",
        _ => "unknown",
    }
    .to_string()
}

/// A skewed key distribution beside a background writer: the writer rewrites the hot
/// keys, so the readers find them in the memtable and a *whilewriting step measures
/// memtable reads, not the tree (seed 003). `None` when the run has no such step.
pub fn skew_with_writer(r: &plumb_store::StoredRun) -> Option<String> {
    let dist = r.run.options.get("distribution")?;
    if dist == "uniform" {
        return None;
    }
    let steps: Vec<&str> = r
        .steps
        .iter()
        .map(|(s, _)| s.name.as_str())
        .filter(|n| n.contains("whilewriting"))
        .collect();
    (!steps.is_empty()).then(|| {
        format!(
            "run {}: {} with distribution {dist}: the writer rewrites the hot keys, so the readers find them in the memtable and measure memtable reads, not the tree; run it with --distribution uniform, or compare it only with runs of the same skew",
            r.run.id,
            steps.join(", ")
        )
    })
}

/// A RocksDB run whose compaction read through the page cache in block-sized requests
/// with a compaction_readahead_size in force above the data device's max_sectors_kb, in
/// a release that prefetches compaction input with readahead(2) (8.6 up to 9.9, which
/// caps it at max_sectors_kb): seed 001's RocksDB issue 12038, where rareq-sz fell from
/// 52 KiB in 8.5 to 4.7 KiB in 8.6. The kernel caps a readahead(2) at the larger of
/// max_sectors_kb and read_ahead_kb (mm/readahead.c), so with read_ahead_kb above the
/// readahead it goes through whole (this VM's 8192: ~106 KiB requests) and at 128 it
/// collapses (5.2 KiB here, bench/README.md); the warning rests on the device's own
/// figure: a step whose compactions read data while the device's mean read request was
/// at most two blocks. Before 8.6, under O_DIRECT, within the limit, or with large
/// requests, it is silent; `None` too when a figure it needs was not recorded.
pub fn readahead_over_max_sectors(r: &plumb_store::StoredRun) -> Option<String> {
    let o = &r.run.options;
    let opt = |k: &str| {
        o.get(&format!("rocksdb.effective.db.{k}"))
            .map(String::as_str)
    };
    let readahead: u64 = opt("compaction_readahead_size")?.parse().ok()?;
    let direct = opt("use_direct_io_for_flush_and_compaction") == Some("true")
        || opt("use_direct_io_for_compaction_reads") == Some("true");
    let release: Vec<u32> = r
        .run
        .engine_version
        .split_whitespace()
        .next()?
        .split('.')
        .map_while(|p| p.parse().ok())
        .collect();
    let prefetches_by_syscall = release.len() >= 2
        && (8, 6) <= (release[0], release[1])
        && (release[0], release[1]) < (9, 9);
    let (dev, kb, ra) = r
        .run
        .host
        .as_ref()?
        .storage
        .as_ref()?
        .devices
        .iter()
        .filter_map(|d| {
            Some((
                d.name.as_str(),
                d.queue.max_sectors_kb?,
                d.queue.read_ahead_kb,
            ))
        })
        .min_by_key(|(_, kb, _)| *kb)?;
    let ra = ra.map_or_else(String::new, |ra| format!(", read_ahead_kb={ra}"));
    if !(r.run.engine == "rocksdb" && !direct && prefetches_by_syscall && readahead > kb * 1024) {
        return None;
    }
    let block_kb = o
        .get("rocksdb.block_size")
        .and_then(|b| b.parse::<f64>().ok())
        .unwrap_or(4096.0)
        / 1024.0;
    let (step, rareq) = r.steps.iter().find_map(|(s, _)| {
        let comp_read: u64 = s
            .summary
            .lsm
            .as_ref()?
            .levels
            .iter()
            .map(|l| l.read_bytes)
            .sum();
        let rareq = s.summary.device.as_ref()?.rareq_kb?;
        (comp_read > 0 && rareq <= 2.0 * block_kb).then_some((s.name.as_str(), rareq))
    })?;
    Some(format!(
        "run {}: {step} read {rareq:.1} KiB per device request while compaction read its input, with compaction_readahead_size {} KiB in force, above {dev}'s max_sectors_kb={kb}{ra}: RocksDB {} prefetches compaction input with readahead(2), which the kernel cuts at the larger of max_sectors_kb and read_ahead_kb, so compaction read block by block (RocksDB issue 12038, seed 001; 9.9 caps it); set compaction_readahead_size to {kb} KiB or less, or raise read_ahead_kb or max_sectors_kb above it",
        r.run.id,
        readahead / 1024,
        r.run.engine_version.split_whitespace().next().unwrap_or("?"),
    ))
}

/// Sides whose runs were made in separate blocks of time rather than interleaved. The
/// interval then holds only the noise within each block, not the machine's drift from
/// one block to the next: on a shared VM an A/A pair of blocked groups of 3-5 repeats
/// was called significant in 6 of 20 trials (bench/README.md, "compare's error
/// rates").
pub fn blocked(versions: &[Version]) -> Vec<String> {
    let span = |v: &Version| -> Option<(String, String)> {
        let start = v.runs.iter().map(|r| r.run.started_at.clone()).min()?;
        let end = v
            .runs
            .iter()
            .map(|r| {
                r.run
                    .ended_at
                    .clone()
                    .unwrap_or_else(|| r.run.started_at.clone())
            })
            .max()?;
        Some((start, end))
    };
    let Some(base) = versions.first().and_then(span) else {
        return Vec::new();
    };
    versions
        .iter()
        .skip(1)
        .filter(|v| v.runs.len() >= 2 && versions[0].runs.len() >= 2)
        .filter_map(|v| {
            let (s, e) = span(v)?;
            // RFC 3339 in one zone sorts as time.
            (e < base.0 || s > base.1).then(|| {
                format!(
                    "{} and {} ran in separate blocks of time, not interleaved: the interval \
                     holds the noise within each block but not the drift between them, so \
                     it is too narrow (an A/A pair of such blocks was significant 30% of the \
                     time on a shared VM); interleave the sides (plumb ab, or a suite's \
                     rounds) before trusting a small difference",
                    versions[0].label, v.label
                )
            })
        })
        .collect()
}

/// Whether `r` was counted by callgrind (`plumb icount`: its plan is marked
/// `under: callgrind`).
pub fn counted(r: &plumb_store::StoredRun) -> bool {
    r.run
        .plan
        .as_ref()
        .and_then(|p| p.get("under"))
        .and_then(|u| u.as_str())
        == Some("callgrind")
}

/// Counted runs (`plumb icount`) whose LSM had different shapes when a measured step
/// started, one sentence per such step, in the order the new runs hold their steps:
/// an exact count per op is exact about the tree the reads passed through, so runs
/// that started from different trees (an L0 file more, a memtable not yet flushed,
/// as background flushes and compactions left them) differ by it as well as by their
/// code.
/// Steps are taken in the order the runs hold them.
/// Every counted run of either side is compared with every other: a side that
/// disagrees with itself is as suspect as two sides that disagree. Shapes are the same
/// tree within [`plumb_core::lsm::SHAPE_BYTES_TOLERANCE`] of each level's bytes.
/// Silent for native runs (their noise is judged as noise), for a step no two counted
/// runs stored a shape for (engines without an LSM account, runs stored before
/// `lsm_start` existed), and when every shape agrees. [`fairness`] gives it for each
/// version against the base.
pub fn counted_shapes_differ(base: &Version, new: &Version) -> Vec<String> {
    let runs: Vec<(&str, &plumb_store::StoredRun)> = [base, new]
        .into_iter()
        .flat_map(|v| v.runs.iter().map(move |r| (v.label.as_str(), r)))
        .filter(|(_, r)| counted(r))
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for (_, r) in &runs {
        for (s, _) in &r.steps {
            let shaped = s.summary.lsm_start.is_some() && s.summary.ops > 0;
            if shaped && !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
    }
    let mut out = Vec::new();
    for name in names {
        // Each distinct shape with the runs (label, id) that started the step from it.
        let mut shapes: Vec<(&plumb_core::LsmShape, Vec<(&str, i64)>)> = Vec::new();
        for (label, r) in &runs {
            let Some(shape) = r
                .steps
                .iter()
                .find(|(s, _)| s.name == name && s.summary.ops > 0)
                .and_then(|(s, _)| s.summary.lsm_start.as_ref())
            else {
                continue;
            };
            match shapes.iter_mut().find(|(s, _)| s.same_as(shape)) {
                Some((_, ids)) => ids.push((label, r.run.id)),
                None => shapes.push((shape, vec![(label, r.run.id)])),
            }
        }
        if shapes.len() < 2 {
            continue;
        }
        let each: Vec<String> = shapes
            .iter()
            .map(|(shape, ids)| {
                let who: Vec<String> = ids
                    .iter()
                    // A side selected by its run's id is named once.
                    .map(|(label, id)| {
                        if *label == id.to_string() {
                            format!("run {id}")
                        } else {
                            format!("{label} run {id}")
                        }
                    })
                    .collect();
                format!("{}: {}", who.join(", "), shape.describe())
            })
            .collect();
        out.push(format!(
            "step {name}: the counted runs started it from different LSM shapes ({}): their \
             reads passed through different trees, so their instructions per op differ by \
             the shape as well as by the code; count both sides with the engine settled \
             before the step (plumb icount settles it unless --no-settle; \
             flush,waitforcompaction before the step does too)",
            each.join("; ")
        ));
    }
    out
}

/// Repeats of one side that share a seed replay one key sequence: not independent
/// samples, and they warm any cache they share. Across sides the same seed is what
/// makes engines comparable (one key sequence for all), so that is not warned.
fn shared_seeds(versions: &[Version], w: &mut Vec<String>) {
    for v in versions {
        let mut seeds: std::collections::BTreeMap<&str, Vec<i64>> = Default::default();
        for r in &v.runs {
            seeds.entry(r.run.seed.as_str()).or_default().push(r.run.id);
        }
        for (seed, ids) in seeds.into_iter().filter(|(_, ids)| ids.len() > 1) {
            w.push(format!(
                "{}: runs {} used the same seed {seed}: repeats replay one key sequence, so they are not independent samples (and warm any cache they share)",
                v.label,
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
    }
}

/// Each step's own warnings: the host's noise and an unsteady series, compaction debt
/// left by the step before, and a load generator that saturated the CPUs it shares.
fn step_warnings(versions: &[Version], w: &mut Vec<String>) {
    for (label, r) in all_runs(versions) {
        for (s, ivs) in &r.steps {
            for n in step_noise(s, cpus_of(r))
                .into_iter()
                .chain(step_unsteady(s, ivs))
            {
                w.push(format!("{label} run {} step {n}", r.run.id));
            }
            if let Some(p) = s.summary.pending_compaction_gb_start {
                if p * (1u64 << 30) as f64 > PENDING_COMPACTION_BYTES && s.summary.ops > 0 {
                    w.push(format!(
                        "{label} run {} step {}: started with {p:.2} GB of compaction pending from the previous step (add waitforcompaction before it)",
                        r.run.id, s.name
                    ));
                }
            }
            let cpus = r
                .run
                .host
                .as_ref()
                .and_then(|h| h.inventory.cpu.threads)
                .map(f64::from);
            if let (Some(cpus), Some(cpu_op)) = (cpus, s.summary.cpu_us_op) {
                let used = cpu_op * s.summary.ops_sec / 1e6;
                if used >= CPU_SATURATION * cpus {
                    w.push(format!(
                        "{label} run {} step {}: the process used {used:.2} of {cpus} CPUs; the load generator shares a saturated CPU with the engine",
                        r.run.id, s.name
                    ));
                }
            }
        }
    }
}

/// Every fairness warning that applies.
pub fn fairness(versions: &[Version]) -> Vec<String> {
    let mut w: Vec<String> = all_runs(versions)
        .filter_map(|(_, r)| skew_with_writer(r))
        .collect();
    let durability: BTreeSet<String> = all_runs(versions)
        .map(|(label, r)| format!("{label}: {} {}", r.run.engine, durability_of(r)))
        .collect();
    let kinds: BTreeSet<String> = all_runs(versions).map(|(_, r)| durability_of(r)).collect();
    if kinds.len() > 1 {
        w.push(format!(
            "durability differs ({}): a write that is not synced, or not logged, costs less, so \
             the engine that does less shows higher write rates and lower write amplification; \
             compare write figures at the same durability (--sync)",
            durability.into_iter().collect::<Vec<_>>().join("; ")
        ));
    }
    let verify: BTreeSet<&str> = all_runs(versions)
        .map(|(_, r)| {
            // plumb before --verify checked every value in full.
            r.run.options.get("verify").map_or("all", String::as_str)
        })
        .collect();
    if verify.len() > 1 {
        w.push(format!(
            "verification differs (verify: {}): plumb's checks are part of each op's cost, \
             so compare runs made with the same --verify",
            verify.into_iter().collect::<Vec<_>>().join(" vs ")
        ));
    }
    let sizes: Vec<String> = [
        "num",
        "key_size",
        "value_size",
        "duration",
        "ops",
        "warmup",
        "threads",
        "tables",
        "table_size",
        "rows",
        "clients",
    ]
    .iter()
    .filter_map(|k| differing_option(versions, k))
    .collect();
    if !sizes.is_empty() {
        w.push(format!("sizes or durations differ ({})", sizes.join("; ")));
    }
    if let Some(d) = differing_option(versions, "memory_limit_mb") {
        w.push(format!(
            "memory limits differ ({d}): a target held to less memory reads from the device \
             what the other reads from memory (compare rd_op); compare at the same limit"
        ));
    }
    // In the order the sides were given (base first), each engine and release once.
    let mut engines: Vec<String> = Vec::new();
    for (_, r) in all_runs(versions) {
        let e = format!("{} {}", r.run.engine, r.run.engine_version);
        if !engines.contains(&e) {
            engines.push(e);
        }
    }
    let hosts: BTreeSet<String> = all_runs(versions)
        .map(|(_, r)| {
            r.run
                .host
                .as_ref()
                .and_then(|h| h.inventory.hostname.clone())
                .unwrap_or_else(|| "unknown host".into())
        })
        .collect();
    if hosts.len() > 1 {
        w.push(format!(
            "runs come from different hosts ({}): hardware differs as well as software",
            hosts.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    w.extend(host_check_changes(versions));
    for v in versions {
        if v.runs.len() < 2 {
            w.push(format!(
                "{}: only one run, so no confidence interval (use --repeat 3 or more)",
                v.label
            ));
        }
    }
    w.extend(blocked(versions));
    shared_seeds(versions, &mut w);
    step_warnings(versions, &mut w);
    // Counted runs whose trees differed: each other version against the base, every
    // sentence once (the base's own disagreement is found against each).
    for v in versions.iter().skip(1) {
        for s in counted_shapes_differ(&versions[0], v) {
            if !w.contains(&s) {
                w.push(s);
            }
        }
    }
    if engines.len() > 1 {
        // Not unfair in itself (it is often the point), but say what is compared.
        w.push(format!("engines compared: {}", engines.join(" vs ")));
    }
    w
}

/// Host checks whose verdict differs from the base's first run.
fn host_check_changes(versions: &[Version]) -> Vec<String> {
    let Some(base) = versions.first().and_then(|v| v.runs.first()) else {
        return Vec::new();
    };
    let verdicts = |r: &plumb_store::StoredRun| -> std::collections::BTreeMap<String, String> {
        r.run
            .host
            .as_ref()
            .into_iter()
            .flat_map(|h| &h.checks)
            .map(|c| (c.id.clone(), c.verdict.as_str().to_string()))
            .collect()
    };
    let b = verdicts(base);
    let mut out = Vec::new();
    for (label, r) in all_runs(versions).skip(1) {
        let o = verdicts(r);
        let changed: Vec<String> = b
            .iter()
            .filter(|(id, v)| o.get(*id).is_some_and(|ov| ov != *v))
            .map(|(id, v)| format!("{id} {v}→{}", o[id]))
            .collect();
        if !changed.is_empty() {
            out.push(format!(
                "{label} run {}: host checks differ from the base ({})",
                r.run.id,
                changed.join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use plumb_core::{Interval, StepStatus, StepSummary};
    use plumb_store::{RunRecord, StepRecord, StoredRun};
    use plumb_workloads::{IbKind, Kind, SqlKind, StepKind};
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// `n` seconds at `level` ops/s, ±2% of seeded noise, each scaled by `shape(i)`.
    fn series(n: usize, level: f64, shape: impl Fn(usize) -> f64) -> Vec<Interval> {
        let mut rng = StdRng::seed_from_u64(5);
        (0..n)
            .map(|i| {
                let r = level * shape(i) * (1.0 + 0.02 * (2.0 * rng.random::<f64>() - 1.0));
                Interval {
                    t: i as f64 + 1.0,
                    secs: 1.0,
                    ops: r as u64,
                    ops_sec: r,
                    ..Interval::default()
                }
            })
            .collect()
    }

    fn flat(n: usize) -> Vec<Interval> {
        series(n, 100_000.0, |_| 1.0)
    }

    /// Falling linearly from 100% to 70% of the rate over the window.
    fn declining(n: usize) -> Vec<Interval> {
        series(n, 100_000.0, |i| 1.0 - 0.3 * i as f64 / n as f64)
    }

    /// Climbing from a fifth of the rate to all of it over the first fifth.
    fn ramp(n: usize) -> Vec<Interval> {
        let r = n / 5;
        series(n, 100_000.0, |i| {
            if i < r {
                0.2 + 0.8 * i as f64 / r as f64
            } else {
                1.0
            }
        })
    }

    /// A stored step of `kind` over `ivs`, its summary their mean, as the store holds it.
    fn step(name: &str, kind: Kind, ivs: &[Interval]) -> StepRecord {
        let secs: f64 = ivs.iter().map(|i| i.secs).sum();
        let ops: u64 = ivs.iter().map(|i| i.ops).sum();
        StepRecord {
            seq: 0,
            name: name.into(),
            kind,
            status: StepStatus::Ok,
            error: None,
            started_at: "2026-11-22T00:00:00.000Z".into(),
            ended_at: "2026-11-22T00:02:00.000Z".into(),
            config: serde_json::json!({}),
            summary: StepSummary {
                ops,
                secs,
                ops_sec: ops as f64 / secs.max(1e-9),
                ..StepSummary::default()
            },
        }
    }

    fn readrandom(ivs: &[Interval]) -> StepRecord {
        step("readrandom", StepKind::ReadRandom.into(), ivs)
    }

    fn run(steps: Vec<(StepRecord, Vec<Interval>)>) -> StoredRun {
        StoredRun {
            run: serde_json::from_value::<RunRecord>(serde_json::json!({
                "id": 1, "status": "ok", "tag": null, "command": "plumb kv",
                "workload": "readrandom", "engine": "rocksdb", "engine_version": "11.8.1",
                "plumb_version": "0.1.0", "git_hash": null, "options": {}, "seed": "1",
                "started_at": "a", "ended_at": "b", "data_dir": "/d", "device": "nvme0n1",
                "host": {"inventory": {"cpu": {"threads": 2}}}
            }))
            .expect("a run record"),
            steps,
        }
    }

    /// One line of prose: no line break, no run of more than two spaces.
    fn one_line(w: &str) {
        assert!(!w.contains('\n') && !w.contains("   "), "{w:?}");
    }

    /// A RocksDB run of `release` whose compaction reads are buffered or direct, with
    /// this compaction_readahead_size in force, on a disk of this max_sectors_kb.
    fn readahead_run(
        release: &str,
        direct: bool,
        readahead: u64,
        max_sectors_kb: u64,
    ) -> StoredRun {
        readahead_run_reading(release, direct, readahead, max_sectors_kb, 4.7, 1 << 30)
    }

    /// The same, its overwrite step's compactions reading `comp_read` bytes while the
    /// device's reads averaged `rareq_kb`; 8 KiB blocks.
    fn readahead_run_reading(
        release: &str,
        direct: bool,
        readahead: u64,
        max_sectors_kb: u64,
        rareq_kb: f64,
        comp_read: u64,
    ) -> StoredRun {
        let mut ow = step("overwrite", StepKind::Overwrite.into(), &declining(10));
        ow.summary.device = Some(plumb_core::DeviceIo {
            r_s: 1000.0,
            rareq_kb: Some(rareq_kb),
            ..Default::default()
        });
        ow.summary.lsm = Some(plumb_core::LsmAccount {
            levels: vec![plumb_core::LevelAccount {
                level: 1,
                read_bytes: comp_read,
                ..Default::default()
            }],
            ..Default::default()
        });
        let mut r = run(vec![(ow, Vec::new())]);
        r.run
            .options
            .insert("rocksdb.block_size".into(), "8192".into());
        r.run.engine_version = format!("{release} (librocksdb-sys)");
        for (k, v) in [
            ("compaction_readahead_size", readahead.to_string()),
            ("use_direct_io_for_flush_and_compaction", direct.to_string()),
        ] {
            r.run.options.insert(format!("rocksdb.effective.db.{k}"), v);
        }
        r.run.host = Some(
            serde_json::from_value(serde_json::json!({
                "inventory": {"cpu": {"threads": 2}},
                "storage": {"devices": [
                    {"name": "md2", "queue": {"max_sectors_kb": max_sectors_kb + 4}},
                    {"name": "nvme0n1", "queue": {"max_sectors_kb": max_sectors_kb, "read_ahead_kb": 128}}
                ]}
            }))
            .expect("a host snapshot"),
        );
        r
    }

    #[test]
    fn readahead_past_max_sectors_is_warned_only_where_the_kernel_ignores_it() {
        let w = readahead_over_max_sectors(&readahead_run("8.8.1", false, 2 << 20, 128))
            .expect("8.8.1, buffered, 2 MiB over 128 KiB is warned");
        one_line(&w);
        assert!(
            w.contains("2048 KiB")
                && w.contains("nvme0n1's max_sectors_kb=128, read_ahead_kb=128:"),
            "{w}"
        );
        assert!(w.contains("12038") && w.contains("128 KiB or less"), "{w}");
        assert!(
            w.contains("overwrite read 4.7 KiB per device request"),
            "{w}"
        );
        assert!(readahead_over_max_sectors(&readahead_run("8.6.7", false, 2 << 20, 512)).is_some());
        // Silent: before 8.6 and from 9.9 (which caps it), under O_DIRECT, within the
        // limit, and where the device's queue was not read.
        for (release, direct, ra, kb) in [
            ("8.1.1", false, 2 << 20, 128),
            ("9.9.3", false, 2 << 20, 128),
            ("11.8.1", false, 2 << 20, 128),
            ("8.8.1", true, 2 << 20, 128),
            ("8.8.1", false, 128 << 10, 128),
        ] {
            let r = readahead_run(release, direct, ra, kb);
            assert_eq!(
                readahead_over_max_sectors(&r),
                None,
                "{release} {direct} {ra} {kb}"
            );
        }
        let mut r = readahead_run("8.8.1", false, 2 << 20, 128);
        r.run.host = None;
        assert_eq!(readahead_over_max_sectors(&r), None);
        // A kernel that split the readahead into max_sectors_kb requests (this VM's:
        // 118 KiB per request from 8.8.1), and a step whose compactions read nothing,
        // are silent: the figure the warning rests on is not there.
        for (rareq, comp_read) in [(117.7, 1 << 30), (4.7, 0), (16.1, 1 << 30)] {
            let r = readahead_run_reading("8.8.1", false, 2 << 20, 128, rareq, comp_read);
            assert_eq!(readahead_over_max_sectors(&r), None, "{rareq} {comp_read}");
        }
    }

    #[test]
    fn a_step_still_moving_at_its_end_is_warned_once_with_reason_and_fix() {
        let ivs = declining(120);
        let w = step_unsteady(&readrandom(&ivs), &ivs).expect("a declining step is warned");
        one_line(&w);
        assert!(
            w.starts_with("readrandom: throughput was still moving"),
            "{w}"
        );
        assert!(w.contains("MSER-5 finds no steady state in its 120 one-second intervals"));
        // Second half 77.5% of the rate, the whole 85%: 9% below.
        assert!(w.contains("9% below the step's average rate)"), "{w}");
        assert!(w.contains("--duration") && w.contains("--warmup"), "{w}");
        // Folded into what show, report and the insert benchmark's report print: once.
        let r = run(vec![(readrandom(&ivs), ivs.clone())]);
        assert_eq!(run_noise(&r), vec![w.clone()]);
        // And into a comparison's warnings, with the run it came from.
        let v = Version {
            label: "a".into(),
            runs: vec![r],
        };
        let f = fairness(std::slice::from_ref(&v));
        assert_eq!(
            f.iter().filter(|x| x.contains("still moving")).count(),
            1,
            "{f:?}"
        );
        assert!(f.contains(&format!("a run 1 step {w}")), "{f:?}");
    }

    #[test]
    fn a_query_step_of_the_insert_benchmark_is_told_only_what_it_can_do() {
        let ivs = declining(120);
        let s = step("qr100", Kind::Ib(IbKind::RangeQueries), &ivs);
        let w = step_unsteady(&s, &ivs).expect("warned");
        one_line(&w);
        assert!(w.ends_with("run it longer (--duration)"), "{w}");
        let q = step("point-query", SqlKind::PointQuery.into(), &ivs);
        assert!(step_unsteady(&q, &ivs).unwrap().contains("--warmup"));
    }

    #[test]
    fn no_unsteady_warning_on_a_flat_step() {
        let ivs = flat(120);
        assert_eq!(step_unsteady(&readrandom(&ivs), &ivs), None);
        assert!(run_noise(&run(vec![(readrandom(&ivs), ivs.clone())])).is_empty());
    }

    #[test]
    fn no_unsteady_warning_on_a_maintenance_step_a_load_or_a_failed_step() {
        let ivs = declining(120);
        for kind in [
            Kind::Kv(StepKind::WaitForCompaction),
            Kind::Kv(StepKind::Compact),
            Kind::Kv(StepKind::Flush),
            Kind::Ib(IbKind::Debt),
            // Loads run a fixed amount of work and slow as the tree grows, by design.
            Kind::Kv(StepKind::FillRandom),
            Kind::Kv(StepKind::YcsbLoad),
            Kind::Sql(SqlKind::Load),
            Kind::Ib(IbKind::Insert),
        ] {
            assert_eq!(step_unsteady(&step("x", kind, &ivs), &ivs), None, "{kind}");
        }
        let mut failed = readrandom(&ivs);
        failed.status = StepStatus::Failed;
        assert_eq!(step_unsteady(&failed, &ivs), None);
        let mut stopped = readrandom(&ivs);
        stopped.status = StepStatus::Interrupted;
        assert!(step_unsteady(&stopped, &ivs).is_some());
    }

    #[test]
    fn no_unsteady_warning_on_a_step_too_short_to_judge() {
        // 54 full seconds falling by 30%: fewer than MSER-5's 11 batches.
        let ivs = declining(54);
        assert_eq!(step_unsteady(&readrandom(&ivs), &ivs), None);
        let ivs = declining(12);
        assert_eq!(step_unsteady(&readrandom(&ivs), &ivs), None);
    }

    #[test]
    fn no_unsteady_warning_on_a_drift_that_barely_moves_the_figure() {
        // 120 s falling by 6%: MSER-5 finds no steady state, but the second half runs
        // 1.5% below the average, less than back-to-back runs swing.
        let ivs = series(120, 100_000.0, |i| 1.0 - 0.06 * i as f64 / 120.0);
        assert!(matches!(
            crate::warmup::step_warmup(&ivs),
            crate::warmup::Warmup::NotSteady { .. }
        ));
        assert_eq!(step_unsteady(&readrandom(&ivs), &ivs), None);
    }

    #[test]
    fn a_long_warm_up_that_moves_the_figure_is_noted() {
        let ivs = ramp(200);
        let w = step_unsteady(&readrandom(&ivs), &ivs).expect("noted");
        one_line(&w);
        assert!(w.starts_with("readrandom: its first "), "{w}");
        assert!(w.contains(" s were warm-up (MSER-5 over its 200 one-second intervals)"));
        assert!(w.contains("% above the step's average rate:"), "{w}");
        let crate::warmup::Warmup::Steady { warmup_secs, .. } = crate::warmup::step_warmup(&ivs)
        else {
            panic!("the ramp settles");
        };
        assert!(
            w.contains(&format!("--warmup {warmup_secs:.0})")),
            "{w} after {warmup_secs} s"
        );
        assert!(!w.contains("still moving"), "{w}");
    }

    #[test]
    fn a_warm_up_that_barely_moves_the_figure_is_not_noted() {
        // 10 s at 90% of the rate, then flat: MSER-5 truncates it, but it pulls the
        // average of 200 s down by half a percent.
        let ivs = series(200, 100_000.0, |i| if i < 10 { 0.9 } else { 1.0 });
        assert!(matches!(
            crate::warmup::step_warmup(&ivs),
            crate::warmup::Warmup::Steady { truncated, .. } if truncated > 0
        ));
        assert_eq!(step_unsteady(&readrandom(&ivs), &ivs), None);
    }
    /// A run counted by callgrind (plumb icount), its readrandom started from a tree of
    /// `memtable` entries and `l0` L0 files of `bytes` each.
    fn counted_run(id: i64, memtable: u64, l0: u64, bytes: u64) -> StoredRun {
        let mut rr = readrandom(&flat(2));
        rr.summary.lsm_start = Some(plumb_core::LsmShape {
            memtable_entries: Some(memtable),
            levels: (l0 > 0)
                .then_some(plumb_core::LevelShape {
                    level: 0,
                    files: l0,
                    bytes: l0 * bytes,
                })
                .into_iter()
                .collect(),
        });
        let mut fill = step("fillseq", StepKind::FillSeq.into(), &flat(2));
        fill.summary.lsm_start = Some(plumb_core::LsmShape::default());
        let mut r = run(vec![(fill, Vec::new()), (rr, Vec::new())]);
        r.run.id = id;
        r.run.plan = Some(serde_json::json!({"suite": "kv", "under": "callgrind"}));
        r
    }

    fn side(label: &str, runs: Vec<StoredRun>) -> Version {
        Version {
            label: label.into(),
            runs,
        }
    }

    #[test]
    fn counted_runs_started_from_different_trees_are_said_to_differ() {
        // One run's fill left its memtable unflushed; the other's had flushed to L0.
        let base = side("base", vec![counted_run(3, 20000, 0, 0)]);
        let new = side("new", vec![counted_run(5, 0, 1, 2_300_000)]);
        let w = counted_shapes_differ(&base, &new);
        assert_eq!(w.len(), 1, "{w:?}");
        one_line(&w[0]);
        assert!(w[0].starts_with("step readrandom: "), "{}", w[0]);
        assert!(
            w[0].contains("base run 3: memtable 20000 entries, no files")
                && w[0].contains("new run 5: memtable 0 entries, L0 1 file 2.2 MiB"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("--no-settle"), "{}", w[0]);
        // Sides selected by run id are not named twice.
        let by_id = counted_shapes_differ(
            &side("3", vec![counted_run(3, 20000, 0, 0)]),
            &side("5", vec![counted_run(5, 0, 1, 2_300_000)]),
        );
        assert!(
            by_id[0].contains("(run 3: memtable 20000 entries, no files; run 5: "),
            "{}",
            by_id[0]
        );
        // Among the comparison's warnings, once.
        let vs = [base.clone(), new];
        assert_eq!(fairness(&vs).iter().filter(|s| **s == w[0]).count(), 1);
        // A side that disagrees with itself is said so too; runs of one shape share a
        // clause.
        let mixed = side(
            "new",
            vec![counted_run(5, 20000, 0, 0), counted_run(6, 0, 2, 1_000_000)],
        );
        let w = counted_shapes_differ(&base, &mixed);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("base run 3, new run 5: memtable 20000 entries")
                && w[0].contains("new run 6: memtable 0 entries, L0 2 files"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn counted_runs_of_one_tree_native_runs_and_runs_without_a_shape_are_silent() {
        // Settled runs: the same L0 file, a few bytes of SST properties apart.
        let base = side("base", vec![counted_run(3, 0, 1, 2_300_000)]);
        let new = side("new", vec![counted_run(5, 0, 1, 2_300_031)]);
        assert!(counted_shapes_differ(&base, &new).is_empty());
        assert!(!fairness(&[base.clone(), new])
            .iter()
            .any(|w| w.contains("LSM shapes")));
        // Native runs whose trees differ: their noise is judged as noise.
        let native = |id, memtable, l0| {
            let mut r = counted_run(id, memtable, l0, 2_300_000);
            r.run.plan = Some(serde_json::json!({"suite": "kv"}));
            r
        };
        let (a, b) = (
            side("a", vec![native(1, 20000, 0)]),
            side("b", vec![native(2, 0, 1)]),
        );
        assert!(counted_shapes_differ(&a, &b).is_empty());
        // A counted run stored before plumb kept the shape (or an engine without an LSM
        // account) gives nothing to compare.
        let mut old = counted_run(7, 20000, 0, 0);
        for (s, _) in &mut old.steps {
            s.summary.lsm_start = None;
        }
        assert!(counted_shapes_differ(&base, &side("old", vec![old])).is_empty());
    }
}
