//! `plumb probe`: measure the hardware before the database (memory bandwidth, CPU op
//! rate, disk) and keep the headline figures as this host's ceilings. A probe is stored
//! as an ordinary run (engine `probe`) so `plumb show` and reports read it like any other.

use super::provenance::{command_line, now, rfc3339};
use super::StoreArg;
use anyhow::Context;
use comfy_table::Table;
use plumb_core::RunStatus;
use plumb_hwprobe::{cpu, disk, mem, plan, ProbeReport, INTERRUPTED};
use plumb_report::{fixed, sig};
use plumb_runner::Recording;
use plumb_store::{NewRun, StepRecord, Store};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// Which probe to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Which {
    /// Triad bandwidth at 1..N threads and dependent-load latency.
    Mem,
    /// CPU-bound op rate per core at 1..N threads and scaling efficiency.
    Cpu,
    /// Sequential, random (jobs × depth grid) and commit-rate IO on a file under --dir.
    Disk,
    /// mem, cpu, then disk.
    All,
}

impl Which {
    fn name(self) -> &'static str {
        match self {
            Which::Mem => "mem",
            Which::Cpu => "cpu",
            Which::Disk => "disk",
            Which::All => "all",
        }
    }
}

/// Measure memory, CPU and disk ceilings bottom-up, stored as a run and as this host's
/// ceilings.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  plumb probe all --quick --dir /data      about a minute, indicative figures\n  \
plumb probe disk --dir /data --size 8G --jobs 1,4 --depths 1,32\n  \
plumb probe mem --json"
)]
pub struct ProbeArgs {
    /// mem, cpu, disk or all.
    #[arg(value_enum)]
    pub which: Which,
    /// Finish in about a minute: fewer passes, 1 s steps, a 256 MiB file, a reduced grid;
    /// figures are indicative.
    #[arg(long)]
    pub quick: bool,
    /// Directory to create the disk probe's file in (required for disk and all); plumb
    /// must own it.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// Disk probe file size, e.g. 8G [default: 2 × RAM; 256M with --quick].
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
    /// Job counts of the random-IO grid [default: 1,2,4; 1 with --quick].
    #[arg(long, value_name = "LIST")]
    pub jobs: Option<String>,
    /// Queue depths of the random-IO grid [default: 1,4,16,32; 1,32 with --quick].
    #[arg(long, value_name = "LIST")]
    pub depths: Option<String>,
    /// Seconds per disk and CPU step [default: 5; 1 with --quick].
    #[arg(long, value_name = "SECS")]
    pub secs: Option<f64>,
    /// Disk IO modes: direct, buffered or both.
    #[arg(long, default_value = "both")]
    pub io: String,
    /// Disk patterns, comma-separated: seqwrite,seqread,randread,randwrite,commit [default: all].
    #[arg(long, value_name = "LIST")]
    pub tests: Option<String>,
    /// Print the run, its ceilings and notes as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// A label stored with the run.
    #[arg(long)]
    pub tag: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Everything checked before the store is touched or a byte is written.
struct Plans {
    mem: Option<mem::MemOptions>,
    cpu: Option<cpu::CpuOptions>,
    disk: Option<disk::DiskPlan>,
}

fn plans(a: &ProbeArgs) -> anyhow::Result<Plans> {
    let hw = plumb_hwprobe::hw_threads();
    let want = |w: Which| a.which == w || a.which == Which::All;
    let mut cpu = want(Which::Cpu).then(|| cpu::CpuOptions::new(hw, a.quick));
    if let (Some(c), Some(s)) = (cpu.as_mut(), a.secs) {
        if !(s > 0.0 && s.is_finite()) {
            anyhow::bail!("--secs {s}: must be a number of seconds > 0");
        }
        c.secs = s;
    }
    let disk = if want(Which::Disk) {
        let Some(dir) = &a.dir else {
            anyhow::bail!(
                "--dir: required for `plumb probe {}`; give a directory you own on the \
                 filesystem to measure",
                a.which.name()
            );
        };
        let mut o = disk::DiskOptions::new(dir.clone(), a.quick);
        o.size = a
            .size
            .as_deref()
            .map(|s| plan::parse_size("--size", s))
            .transpose()?;
        o.grid = plan::Grid::from_options(a.jobs.as_deref(), a.depths.as_deref(), &o.grid.clone())?;
        o.secs = a.secs;
        o.modes = disk::parse_modes(&a.io)?;
        if let Some(t) = &a.tests {
            o.patterns = disk::parse_patterns(t)?;
        }
        Some(disk::prepare(o)?)
    } else {
        for (opt, set) in [
            ("--dir", a.dir.is_some()),
            ("--size", a.size.is_some()),
            ("--jobs", a.jobs.is_some()),
            ("--depths", a.depths.is_some()),
            ("--tests", a.tests.is_some()),
        ] {
            if set {
                anyhow::bail!("{opt}: only applies to `plumb probe disk` and `all`");
            }
        }
        None
    };
    Ok(Plans {
        mem: want(Which::Mem).then(|| mem::MemOptions::new(hw, mem::llc_bytes(), a.quick)),
        cpu,
        disk,
    })
}

fn options(a: &ProbeArgs, p: &Plans) -> BTreeMap<String, String> {
    let mut o = BTreeMap::new();
    o.insert("probe".into(), a.which.name().into());
    o.insert("quick".into(), a.quick.to_string());
    if let Some(m) = &p.mem {
        o.insert("mem.elements".into(), m.elements.to_string());
        o.insert("mem.passes".into(), m.passes.to_string());
        o.insert("mem.threads".into(), join(&m.threads));
    }
    if let Some(c) = &p.cpu {
        o.insert("cpu.secs".into(), c.secs.to_string());
        o.insert("cpu.threads".into(), join(&c.threads));
    }
    if let Some(d) = &p.disk {
        o.insert("disk.dir".into(), d.opts.dir.display().to_string());
        o.insert("disk.size".into(), d.size.to_string());
        o.insert("disk.size_why".into(), d.size_why.clone());
        o.insert("disk.secs".into(), d.secs.to_string());
        o.insert("disk.jobs".into(), join(&d.opts.grid.jobs));
        o.insert("disk.depths".into(), join(&d.opts.grid.depths));
        o.insert("disk.commit_threads".into(), join(&d.commit_threads));
        o.insert(
            "disk.io".into(),
            d.opts
                .modes
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(","),
        );
        o.insert(
            "disk.tests".into(),
            d.opts
                .patterns
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    o
}

fn join(v: &[usize]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs `plumb probe`: checks everything first (a refused --dir writes nothing, not even a
/// run), then measures, storing each probe's steps as it finishes and the ceilings at
/// the end. Exit 0 when every step ran, 130 after Ctrl-C, 1 when a step failed.
pub fn run(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    let p = plans(&a)?;
    let mut store = Store::open(&a.store.path())?;
    let store_shown = store.shown().to_string();
    // The process-wide flag: the running step stops, the probe file is removed on the way
    // out. set_handler fails if a handler is already installed; that one stays.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let dir = p
        .disk
        .as_ref()
        .map(|d| d.opts.dir.clone())
        .unwrap_or_else(std::env::temp_dir);
    let host = plumb_host::snapshot(&plumb_host::Options {
        data_bytes: p.disk.as_ref().map(|d| d.size),
        io_size_kb: p.disk.as_ref().map(|_| 1024),
        ..plumb_host::Options::for_dir(dir.clone())
    });
    let hostname = host
        .inventory
        .hostname
        .clone()
        .unwrap_or_else(|| "unknown".into());
    let device = p.disk.as_ref().and_then(|d| {
        plumb_probes::diskstats::DeviceStats::for_path(&d.opts.dir)
            .ok()
            .map(|s| s.name().to_string())
    });
    let mut rec = Recording::begin(
        &mut store,
        &NewRun {
            tag: a.tag.clone(),
            command: command_line(),
            workload: format!("probe {}", a.which.name()),
            engine: "probe".into(),
            engine_version: env!("CARGO_PKG_VERSION").into(),
            plumb_version: env!("CARGO_PKG_VERSION").into(),
            git_hash: Some(env!("PLUMB_GIT_HASH").to_string()).filter(|h| !h.is_empty()),
            options: options(&a, &p),
            seed: 0,
            started_at: now(),
            data_dir: p.disk.as_ref().map(|d| d.opts.dir.display().to_string()),
            device,
            host: Some(host.clone()),
            ..NewRun::default()
        },
    )?;
    let run_id = rec.id();
    if !a.json {
        eprintln!(
            "plumb run {run_id}: probe {}{} on {hostname} (store {})",
            a.which.name(),
            if a.quick {
                " --quick (indicative figures)"
            } else {
                ""
            },
            store_shown
        );
    }
    let mut all = ProbeReport::default();
    let store_report =
        |rec: &mut Recording, r: ProbeReport, all: &mut ProbeReport| -> anyhow::Result<()> {
            for s in &r.steps {
                rec.step(
                    StepRecord {
                        seq: 0, // given by the recording
                        name: s.name.clone(),
                        kind: s.kind.into(),
                        status: s.status,
                        error: s.error.clone(),
                        started_at: rfc3339(s.started),
                        ended_at: rfc3339(s.ended),
                        config: s.config.clone(),
                        summary: s.summary.clone(),
                    },
                    &s.intervals,
                )?;
            }
            all.extend(r);
            Ok(())
        };
    let mut setup_error = None;
    if let Some(m) = &p.mem {
        if !a.json {
            eprintln!("plumb: probe mem ({} thread counts)", m.threads.len());
        }
        store_report(&mut rec, mem::run(m), &mut all)?;
    }
    if let Some(c) = p
        .cpu
        .as_ref()
        .filter(|_| !INTERRUPTED.load(Ordering::Relaxed))
    {
        if !a.json {
            eprintln!(
                "plumb: probe cpu ({} thread counts × {} s)",
                c.threads.len(),
                c.secs
            );
        }
        store_report(&mut rec, cpu::run(c), &mut all)?;
    }
    if let Some(d) = p
        .disk
        .as_ref()
        .filter(|_| !INTERRUPTED.load(Ordering::Relaxed))
    {
        if !a.json {
            eprintln!("plumb: probe disk: {}", d.size_why);
        }
        match disk::run(d) {
            Ok(r) => store_report(&mut rec, r, &mut all)?,
            Err(e) => setup_error = Some(e),
        }
    }
    if !all.ceilings.is_empty() {
        rec.store()
            .add_ceilings(run_id, &hostname, &now(), &all.ceilings)?;
    }
    if setup_error.is_some() {
        rec.fail();
    }
    let status = rec.finish(INTERRUPTED.load(Ordering::Relaxed))?;
    let stored = store.run(run_id).context("reading the run back")?;
    if a.json {
        let mut doc = plumb_report::json::run(&stored);
        doc["ceilings"] = serde_json::to_value(&all.ceilings)?;
        doc["host"] = serde_json::Value::String(hostname.clone());
        doc["notes"] = serde_json::to_value(&all.notes)?;
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{}", render(&all, run_id, a.quick));
    }
    if let Some(e) = setup_error {
        return Err(anyhow::Error::new(e).context(format!("run {run_id}: disk probe")));
    }
    Ok(match status {
        RunStatus::Ok | RunStatus::Running => ExitCode::SUCCESS,
        RunStatus::Interrupted => {
            eprintln!(
                "plumb: run {run_id} interrupted; finished steps are stored, probe file removed"
            );
            ExitCode::from(130)
        }
        RunStatus::Failed => {
            for s in all.steps.iter().filter(|s| s.error.is_some()) {
                eprintln!(
                    "plumb: run {run_id} step {} failed: {}",
                    s.name,
                    s.error.as_deref().unwrap_or("")
                );
            }
            ExitCode::from(1)
        }
    })
}

fn table(header: &[&str]) -> Table {
    plumb_report::table_left(header)
}

/// The terminal report: one row per step, the ceilings kept, and the notes.
fn render(r: &ProbeReport, run_id: i64, quick: bool) -> String {
    let mut t = table(&[
        "step",
        "ops/s",
        "MB/s",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        "max µs",
        "CPU µs/op",
        "engine",
        "status",
    ]);
    for s in &r.steps {
        let m = &s.summary;
        t.add_row(vec![
            s.name.clone(),
            sig(Some(m.ops_sec), 4),
            sig(m.mb_sec, 4),
            sig(m.p50_us, 3),
            sig(m.p99_us, 3),
            sig(m.p999_us, 3),
            sig(m.pmax_us, 3),
            fixed(m.cpu_us_op, 2),
            s.config
                .get("engine")
                .and_then(|v| v.as_str())
                .unwrap_or("-")
                .to_string(),
            s.status.as_str().to_string(),
        ]);
    }
    let mut c = table(&["ceiling", "value", "unit"]);
    for x in &r.ceilings {
        c.add_row(vec![x.name.clone(), sig(Some(x.value), 4), x.unit.clone()]);
    }
    let mut out = format!("run {run_id}: probe steps\n{t}\n\nceilings kept for this host\n{c}\n");
    for n in &r.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    if quick {
        out.push_str(
            "note: --quick figures are indicative; run without --quick for ceilings to rely on\n",
        );
    }
    out
}
