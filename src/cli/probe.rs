//! `plumb probe`: measure the hardware before the database (memory bandwidth, CPU op
//! rate, disk) and keep the headline figures as this host's ceilings. A probe is stored
//! as an ordinary run (engine `probe`) so `plumb show` and reports read it like any other.

use super::execute::INTERRUPTED;
use super::StoreArg;
use anyhow::Context;
use plumb_core::RunStatus;
use plumb_hwprobe::family as probe;
use plumb_plan::ProbeParams;
use plumb_runner::{Lifecycle, Subject as _};
use plumb_store::Store;
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
plumb probe disk --dir /data --bs 8k --zcav --rated pm983.toml\n  \
plumb probe disk --device /dev/nvme0n1 --quick   read-only\n  \
plumb probe mem --json"
)]
pub struct ProbeArgs {
    /// mem, cpu, disk or all.
    #[arg(value_enum)]
    pub which: Which,
    #[command(flatten)]
    pub params: ProbeParams,
    /// Directory to create the disk probe's file in (required for disk and all, unless
    /// disk is given --device); plumb must own it.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// Print the run, its ceilings and notes as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// A label stored with the run.
    #[arg(long)]
    pub tag: Option<String>,
    #[command(flatten)]
    pub store: StoreArg,
}

/// Runs `plumb probe`: its flags become a plan of one run (stored with it, so `plumb
/// rerun` repeats it); everything is checked first (a refused --dir writes nothing, not
/// even a run), then measured, each probe's steps stored as it finishes and the
/// ceilings at the end. Exit 0 when every step ran, 130 after Ctrl-C, 1 when a step
/// failed.
pub fn run(a: ProbeArgs) -> anyhow::Result<ExitCode> {
    if a.dir.is_some() && !matches!(a.which, Which::Disk | Which::All) {
        anyhow::bail!("--dir: only applies to `plumb probe disk` and `all`");
    }
    let which = a.which.name();
    let p = probe::plans(which, &a.params, a.dir.as_deref())?;
    let plan = probe::run_plan(which, &a.params, a.dir.as_deref());
    let mut store = Store::open(&a.store.path())?;
    // The process-wide flag: the running step stops, the probe file is removed on the way
    // out. set_handler fails if a handler is already installed; that one stays.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::Relaxed));
    let provenance = super::execute::provenance(a.tag.clone());
    let run = provenance.run_of(&plan, None);
    let mut out = probe::Probes::new(which, a.params.quick, p, true);
    let no_hw = Err("not read by the probes".to_string());
    let (run_id, status) = Lifecycle {
        store: &mut store,
        hw: &no_hw,
        interrupt: &INTERRUPTED,
        progress: if a.json {
            &plumb_runner::NoProgress
        } else {
            &super::progress::Quiet
        },
        observer: &mut Unannounced,
        provenance,
        profile: None,
        families: &[],
        extras: Default::default(),
        elsewhere: None,
    }
    .run_subject(&plan, &mut out, None, run, None)?;
    out.close(false)
        .map_err(|e| anyhow::anyhow!(plumb_runner::failure::chain(e.as_ref())))?;
    let stored = store.run(run_id).context("reading the run back")?;
    let all = &out.report;
    if a.json {
        let doc = out.json(&stored)?;
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!(
            "{}",
            plumb_hwprobe::text::report(all, run_id, a.params.quick)
        );
        let zcav = all
            .steps
            .iter()
            .map(|s| (s.name.as_str(), &s.config, s.summary.mb_sec));
        if let Some(t) = plumb_hwprobe::text::zcav_table(zcav) {
            print!("\n{t}");
        }
        if !out.judged.is_empty() {
            print!("\n{}", plumb_hwprobe::text::render(&out.judged));
        }
    }
    if let Some(e) = out.setup_error {
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

/// `plumb probe` on its own is one run, not a batch: nothing to announce.
struct Unannounced;

impl plumb_runner::Observer for Unannounced {}
