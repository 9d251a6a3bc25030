//! What makes a comparison untruthful, checked from what the store recorded: each rule
//! is a function from the versions compared to zero or more sentences.

use crate::compare::Version;
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

/// [`step_noise`] for every step of a run.
pub fn run_noise(r: &plumb_store::StoredRun) -> Vec<String> {
    r.steps
        .iter()
        .flat_map(|(s, _)| step_noise(s, cpus_of(r)))
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
    // Repeats of one side that share a seed replay one key sequence: not independent
    // samples, and they warm any cache they share. Across sides the same seed is what
    // makes engines comparable (one key sequence for all), so that is not warned.
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
    for (label, r) in all_runs(versions) {
        for (s, _) in &r.steps {
            for n in step_noise(s, cpus_of(r)) {
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
