//! Bottom-up attribution: each step's device IO read against the disk ceilings that
//! `plumb probe disk` measured on the same host and device, so a figure says how close
//! the step came to what the disk can do (DESIGN.md, "Bottom-up attribution").
//!
//! Only what was measured is compared: device reads per second against the 4 KiB
//! random-read ceiling at the nearest concurrency at or above the step's threads, and
//! device MB/s against the 1 MiB sequential ceilings, all O_DIRECT (the device's own
//! figures). The average request size is printed beside the IOPS share, because the
//! ceiling is for 4 KiB reads and an engine's may be larger.

use plumb_store::{CeilingRecord, Store, StoreError, StoredRun};

/// This host's ceilings and the device the disk ones were measured on.
#[derive(Debug, Clone, Copy)]
pub struct HostCeilings<'a> {
    /// The newest figure of each ceiling for the run's host ([`plumb_store::Store::ceilings`]).
    pub ceilings: &'a [CeilingRecord],
    /// The device of the probe run that measured the disk ceilings, when known.
    pub disk_device: Option<&'a str>,
}

/// The random-read ceiling at one concurrency (jobs × depth).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RandRead {
    jobs: usize,
    depth: usize,
    iops: f64,
}

/// Parses `disk.randread_4k_iops[.jJ].qdD` (direct IO only: buffered ones have
/// `.buffered` and are skipped).
fn randread(name: &str, value: f64) -> Option<RandRead> {
    let rest = name.strip_prefix("disk.randread_4k_iops.")?;
    let (jobs, depth) = match rest.split_once('.') {
        Some((j, qd)) => (j.strip_prefix('j')?.parse().ok()?, qd),
        None => (1, rest),
    };
    let depth = depth.strip_prefix("qd")?.parse().ok()?;
    Some(RandRead {
        jobs,
        depth,
        iops: value,
    })
}

/// The ceiling to read a step with `threads` synchronous clients against: the smallest
/// concurrency that is at least `threads` (at equal concurrency the shallowest queue,
/// since each client thread is a job with one IO in flight), else the largest measured.
fn nearest(cs: &[RandRead], threads: usize) -> Option<RandRead> {
    let conc = |c: &RandRead| c.jobs * c.depth;
    cs.iter()
        .filter(|c| conc(c) >= threads)
        .min_by_key(|c| (conc(c), c.depth))
        .or_else(|| cs.iter().max_by_key(|c| (conc(c), c.jobs)))
        .copied()
}

fn pct(used: f64, ceiling: f64) -> String {
    format!("{:.0}%", 100.0 * used / ceiling)
}

/// The O_DIRECT disk ceilings of the newest probe run that measured any: one consistent
/// set, from one device.
pub fn disk_ceilings(all: &[CeilingRecord]) -> Vec<&CeilingRecord> {
    let direct = |c: &&CeilingRecord| {
        c.ceiling.name.starts_with("disk.") && !c.ceiling.name.contains(".buffered")
    };
    let newest = all.iter().filter(direct).map(|c| c.run_id).max();
    all.iter()
        .filter(direct)
        .filter(|c| Some(c.run_id) == newest)
        .collect()
}

/// One line per measured step with device counters, headed by where the ceilings come
/// from; empty when the host has no O_DIRECT disk ceilings. When they were measured on
/// another device than the run's data, says so instead of comparing.
pub fn attribution(stored: &StoredRun, host: &HostCeilings) -> Vec<String> {
    let disk = disk_ceilings(host.ceilings);
    let Some(first) = disk.first() else {
        return Vec::new();
    };
    let head = format!(
        "bottom-up, against the disk ceilings of probe run {} ({})",
        first.run_id, first.measured_at
    );
    match (stored.run.device.as_deref(), host.disk_device) {
        (Some(run), Some(probe)) if run != probe => {
            return vec![format!(
                "{head}: measured on {probe}, this run's data is on {run}; not compared"
            )]
        }
        _ => {}
    }
    let rr: Vec<RandRead> = disk
        .iter()
        .filter_map(|c| randread(&c.ceiling.name, c.ceiling.value))
        .collect();
    let named = |n: &str| {
        disk.iter()
            .find(|c| c.ceiling.name == n)
            .map(|c| c.ceiling.value)
    };
    let (seq_rd, seq_wr) = (named("disk.seqread_1m_mbs"), named("disk.seqwrite_1m_mbs"));
    let mut lines = vec![format!("{head}:")];
    for (st, _) in &stored.steps {
        let s = &st.summary;
        let maintenance = st.kind.is_maintenance();
        let (Some(rd_op), Some(rkb_op), Some(wkb_op)) = (s.rd_op, s.rkb_op, s.wkb_op) else {
            continue;
        };
        if maintenance || s.ops == 0 || s.ops_sec <= 0.0 {
            continue;
        }
        let threads = st.config["threads"].as_u64().unwrap_or(1).max(1) as usize;
        let reads = rd_op * s.ops_sec;
        let mut parts = Vec::new();
        if let Some(c) = nearest(&rr, threads) {
            let size = if rd_op > 0.0 {
                format!(", {:.1} KiB each", rkb_op / rd_op)
            } else {
                String::new()
            };
            parts.push(format!(
                "reads {:.0}/s = {} of the 4 KiB random-read ceiling at {} in flight ({:.0} IOPS, j{}×qd{}; {threads} thread(s)); {rd_op:.2} reads/op{size}",
                reads,
                pct(reads, c.iops),
                c.jobs * c.depth,
                c.iops,
                c.jobs,
                c.depth,
            ));
        }
        let mbs = |kb_op: f64| kb_op * 1024.0 * s.ops_sec / 1e6;
        if let Some(c) = seq_rd {
            let m = mbs(rkb_op);
            parts.push(format!(
                "read {m:.1} MB/s = {} of sequential read ({c:.0} MB/s)",
                pct(m, c)
            ));
        }
        if let Some(c) = seq_wr {
            let m = mbs(wkb_op);
            parts.push(format!(
                "written {m:.1} MB/s = {} of sequential write ({c:.0} MB/s)",
                pct(m, c)
            ));
        }
        if !parts.is_empty() {
            lines.push(format!("  {}: {}", st.name, parts.join("; ")));
        }
    }
    if lines.len() == 1 {
        lines.push("  no step has device counters to compare".into());
    }
    lines
}

/// One client count of a server's cached-SELECT ceiling on this host.
struct SelectCeiling<'a> {
    clients: usize,
    qps: f64,
    /// A trivial query's CPU at this client count (plumb's and the server's), µs.
    cpu_us: Option<f64>,
    record: &'a CeilingRecord,
}

/// The cached-SELECT ceilings of one server on this host by client count, from
/// `plumb_sql::ceiling`'s names (`cpu.cached_select_qps.SERVER.cN`,
/// `cpu.cached_select_cpu_us.SERVER.cN`).
fn select_ceilings<'a>(all: &'a [CeilingRecord], server: &str) -> Vec<SelectCeiling<'a>> {
    let at = |prefix: &str, c: &CeilingRecord| -> Option<usize> {
        c.ceiling.name.strip_prefix(prefix)?.parse().ok()
    };
    let (qps, cpu) = (
        format!("cpu.cached_select_qps.{server}.c"),
        format!("cpu.cached_select_cpu_us.{server}.c"),
    );
    let mut v: Vec<SelectCeiling> = all
        .iter()
        .filter_map(|c| {
            let n = at(&qps, c)?;
            Some(SelectCeiling {
                clients: n,
                qps: c.ceiling.value,
                cpu_us: all
                    .iter()
                    .find(|d| at(&cpu, d) == Some(n))
                    .map(|d| d.ceiling.value),
                record: c,
            })
        })
        .collect();
    v.sort_by_key(|c| c.clients);
    v
}

/// Each server step read against the CPU ceiling that server showed on this host
/// (`plumb sql --steps cached-select`): its queries/s as a share of trivial cached
/// SELECTs' at the nearest client count at or above its threads, and its CPU per query
/// (plumb's and the server's) as a multiple of a trivial query's. Empty when the run
/// is not on a server or the host has no such ceiling for it.
pub fn cpu_attribution(stored: &StoredRun, ceilings: &[CeilingRecord]) -> Vec<String> {
    let server = stored.run.engine.as_str();
    let at = select_ceilings(ceilings, server);
    let Some(first) = at.first().map(|c| c.record) else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "bottom-up, against the cached-SELECT ceiling of {server} (run {}, {}):",
        first.run_id, first.measured_at
    )];
    for (st, _) in &stored.steps {
        let s = &st.summary;
        let Some(srv) = s.server.as_ref() else {
            continue;
        };
        let skip = match st.kind {
            plumb_workloads::Kind::Sql(k) => {
                k.is_load() || k == plumb_workloads::SqlKind::CachedSelect
            }
            k => k.is_maintenance(),
        };
        if skip || s.ops == 0 || s.ops_sec <= 0.0 || st.status != plumb_core::StepStatus::Ok {
            continue;
        }
        let threads = st.config["threads"].as_u64().unwrap_or(1).max(1) as usize;
        let Some(c) = at
            .iter()
            .find(|c| c.clients >= threads)
            .or_else(|| at.last())
        else {
            continue;
        };
        let (n, qps) = (c.clients, c.qps);
        let mut line = format!(
            "  {}: {:.0} queries/s = {} of the cached-SELECT ceiling at {n} client(s) ({qps:.0}/s)",
            st.name,
            s.ops_sec,
            pct(s.ops_sec, qps)
        );
        if let (Some(trivial), Some(ours), Some(theirs)) = (c.cpu_us, s.cpu_us_op, srv.cpu_us_query)
        {
            if trivial > 0.0 {
                line.push_str(&format!(
                    "; CPU {:.1} µs/query = {:.2}× a trivial SELECT's {trivial:.1} µs",
                    ours + theirs,
                    (ours + theirs) / trivial
                ));
            }
        }
        lines.push(line);
    }
    if lines.len() == 1 {
        return Vec::new();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_names_parse_and_buffered_ones_are_skipped() {
        assert_eq!(
            randread("disk.randread_4k_iops.qd32", 5.0),
            Some(RandRead {
                jobs: 1,
                depth: 32,
                iops: 5.0
            })
        );
        assert_eq!(
            randread("disk.randread_4k_iops.j4.qd16", 5.0).map(|c| (c.jobs, c.depth)),
            Some((4, 16))
        );
        assert_eq!(randread("disk.randread_4k_iops.buffered.qd1", 5.0), None);
        assert_eq!(randread("disk.randwrite_4k_iops.qd1", 5.0), None);
    }

    #[test]
    fn nearest_concurrency_is_at_or_above_the_threads() {
        let c = |jobs, depth| RandRead {
            jobs,
            depth,
            iops: 1.0,
        };
        let cs = [c(1, 1), c(1, 4), c(4, 1), c(2, 4), c(1, 32)];
        assert_eq!(nearest(&cs, 1), Some(c(1, 1)));
        assert_eq!(nearest(&cs, 3), Some(c(4, 1)));
        assert_eq!(nearest(&cs[..2], 3), Some(c(1, 4)));
        assert_eq!(nearest(&cs, 8), Some(c(2, 4)));
        assert_eq!(nearest(&cs, 64), Some(c(1, 32)));
        assert_eq!(nearest(&[], 1), None);
    }
}

/// Why a run's attribution lines could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BottomUpError {
    /// The host's ceilings did not read.
    #[error("reading the ceilings of host {host}")]
    Ceilings {
        /// The run's host.
        host: String,
        /// The store's error.
        source: StoreError,
    },
    /// The probe run the disk ceilings came from did not read.
    #[error("reading probe run {run}")]
    Probe {
        /// The probe run.
        run: i64,
        /// The store's error.
        source: StoreError,
    },
}

/// The attribution lines (with a blank line first) a run's text report ends with: its
/// steps against the disk ceilings `plumb probe disk` measured on its host, and a
/// server run's against the cached-SELECT ceiling; none when the run's host is unknown
/// or has neither.
pub fn bottom_up(r: &StoredRun, store: &Store) -> Result<Vec<String>, BottomUpError> {
    let Some(host) = r
        .run
        .host
        .as_ref()
        .and_then(|h| h.inventory.hostname.as_deref())
    else {
        return Ok(Vec::new());
    };
    let ceilings = store
        .ceilings(host)
        .map_err(|source| BottomUpError::Ceilings {
            host: host.to_string(),
            source,
        })?;
    let mut lines = match disk_ceilings(&ceilings).first() {
        Some(c) => {
            let probe = store.run(c.run_id).map_err(|source| BottomUpError::Probe {
                run: c.run_id,
                source,
            })?;
            attribution(
                r,
                &HostCeilings {
                    ceilings: &ceilings,
                    disk_device: probe.run.device.as_deref(),
                },
            )
        }
        None => Vec::new(),
    };
    lines.extend(cpu_attribution(r, &ceilings));
    if lines.is_empty() {
        return Ok(lines);
    }
    Ok(std::iter::once(String::new()).chain(lines).collect())
}
