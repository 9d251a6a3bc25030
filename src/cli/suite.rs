//! `plumb run SUITE.toml` and `plumb plan SUITE.toml`: a matrix of targets × workloads
//! × sizes × thread counts × repeats, planned as data, checked whole before anything
//! runs, run in a fair order and resumable after an interruption.

use super::execute::{self, Job, Printer, Style};
use super::StoreArg;
use anyhow::bail;
use plumb_core::RunStatus;
use plumb_plan::estimate::{gib, human_secs, Space};
use plumb_plan::{Plan, PlanOptions};
use plumb_runner::lifecycle::now;
use plumb_store::Store;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `plumb run`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The suite format is described in docs/suite.md; examples/ holds \
quick.toml, leveled-vs-universal.toml, threads-sweep.toml and size-sweep.toml.\n\
Examples:\n  plumb plan examples/threads-sweep.toml     what would run, how long, how much disk\n  \
plumb run examples/threads-sweep.toml\n  \
plumb run examples/threads-sweep.toml --resume   after Ctrl-C or a crash: only what did not finish\n  \
plumb report s1 --format html -o sweep.html"
)]
pub struct RunArgs {
    /// The suite file (TOML).
    suite: PathBuf,
    /// Continue the newest unfinished attempt of this suite in the store: runs that
    /// finished are not run again, the rest run with the seeds first planned.
    #[arg(long)]
    resume: bool,
    /// Randomise the order of each round of the matrix with this seed (recorded).
    #[arg(long, value_name = "SEED")]
    shuffle: Option<u64>,
    /// Keep every run's data dir (their paths are printed).
    #[arg(long)]
    keep: bool,
    /// A label stored with every run.
    #[arg(long)]
    tag: Option<String>,
    /// Do not run here: put every run of the plan into this queue in the store, for
    /// `plumb worker --queue NAME` on each host of a fleet (docs/fleet.md).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["resume", "keep", "tag", "until"])]
    queue: Option<String>,
    /// Stop a variant's repeats once every measured step's ops/s is known to ±PCT (e.g.
    /// 2%): the suite's `repeat` becomes the most a variant may take, the first look is
    /// after 3, each look's interval at the level alpha spending allows it. The repeats
    /// left go unrun (a variant that stopped early is noted).
    #[arg(long, value_name = "PCT", value_parser = plumb_ab::until::parse_pct)]
    until: Option<f64>,
    /// Multiply every size (keys, rows, records) and every timed step's duration by F,
    /// to run a suite written at a study's scale at this machine's (e.g. 0.01); what
    /// changed is printed and stored with the suite. Cache sizes, memory limits and
    /// threads stay as written.
    #[arg(long, value_name = "F", value_parser = parse_scale)]
    scale: Option<f64>,
    #[command(flatten)]
    store: StoreArg,
}

fn parse_scale(s: &str) -> Result<f64, String> {
    let f: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give a factor such as 0.01"))?;
    plumb_plan::scale::check(f)
}

/// `plumb plan`.
#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// The suite file (TOML).
    suite: PathBuf,
    /// Plan with this shuffle seed, as `plumb run --shuffle` would.
    #[arg(long, value_name = "SEED")]
    shuffle: Option<u64>,
    /// Print the plan as JSON (every run's full plan).
    #[arg(long)]
    json: bool,
    /// Plan at this scale, as `plumb run --scale` would.
    #[arg(long, value_name = "F", value_parser = parse_scale)]
    scale: Option<f64>,
}

fn load(path: &Path, shuffle: Option<u64>, scale: Option<f64>) -> anyhow::Result<Plan> {
    let options = PlanOptions {
        shuffle,
        clock_seed: plumb_plan::clock_seed(),
        scale,
    };
    Ok(plumb_runner::suite::load(
        path,
        options,
        super::families::TABLE,
    )?)
}

pub fn plan_cmd(a: PlanArgs) -> anyhow::Result<ExitCode> {
    let plan = load(&a.suite, a.shuffle, a.scale)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&plan)?);
        Space::of(&plan, false)
            .check()
            .map_err(anyhow::Error::msg)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut t = plumb_report::table_left(&[
        "#",
        "variant",
        "engine",
        "workload",
        "steps",
        "size",
        "threads",
        "repeat",
        "seed",
        "est. time",
        "est. disk",
    ]);
    let (rows, total) = plumb_plan::estimate::rows(&plan);
    for row in rows {
        t.add_row(row);
    }
    let space = Space::of(&plan, false);
    println!(
        "suite {}: {} runs ({} variants × {} repeats){}",
        plan.name,
        plan.runs.len(),
        plan.variants(),
        plan.runs.len() / plan.variants().max(1),
        plan.shuffle_seed
            .map(|s| format!(", shuffled with seed {s}"))
            .unwrap_or_default()
    );
    if !plan.scaled.is_empty() {
        println!("--scale {}:", a.scale.unwrap_or(1.0));
        for line in &plan.scaled {
            println!("  {line}");
        }
    }
    println!("{t}");
    println!(
        "estimated time: {} (timed steps at their duration; loads at {:.0}k keys/s per thread, \
         scans at {:.0}k entries/s, servers' loads at {:.0}k rows/s, assumed until measured)",
        human_secs(total),
        plumb_plan::estimate::ASSUMED_LOAD_OPS_SEC / 1e3,
        plumb_plan::estimate::ASSUMED_SCAN_OPS_SEC / 1e3,
        plumb_plan::estimate::ASSUMED_ROWS_SEC / 1e3,
    );
    println!(
        "disk: about {} at a time in {} (one run's data dir; each is removed after its run), {} free",
        gib(space.need),
        space.root.display(),
        space.free.map(gib).unwrap_or_else(|| "unknown".into())
    );
    space.check().map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_cmd(a: RunArgs) -> anyhow::Result<ExitCode> {
    let fresh = load(&a.suite, a.shuffle, a.scale)?;
    if !fresh.scaled.is_empty() {
        eprintln!("plumb: --scale {}:", a.scale.unwrap_or(1.0));
        for line in &fresh.scaled {
            eprintln!("  {line}");
        }
    }
    // Refused before the store is touched: a suite that cannot fit writes nothing.
    Space::of(&fresh, a.keep)
        .check()
        .map_err(anyhow::Error::msg)?;
    let until = match a.until {
        None => None,
        Some(t) => {
            let cap = fresh.most_repeats();
            if cap <= plumb_ab::until::FIRST_LOOK {
                bail!(
                    "--until: {} plans at most {cap} repeat(s) a variant and the first look is \
                     after {}; set `repeat` in the suite to the most a variant may take, e.g. 10",
                    a.suite.display(),
                    plumb_ab::until::FIRST_LOOK
                );
            }
            Some(plumb_ab::until::Precision::new(t, cap))
        }
    };
    let mut store = Store::open(&a.store.path())?;
    let (suite_id, plan, done, groups) = if a.resume {
        let Some(r) = plumb_runner::resume::resume(&store, &fresh)? else {
            bail!(
                "--resume: the store {} holds no unfinished run of suite {} as written in {}; \
                 run it without --resume (a changed file is a new suite)",
                store.shown(),
                fresh.name,
                a.suite.display()
            );
        };
        eprintln!(
            "plumb: resuming suite s{} ({}): {} of {} runs finished{}",
            r.suite_id,
            r.plan.name,
            r.finished,
            r.plan.runs.len(),
            if r.stale > 0 {
                format!(
                    ", {} left running by a stopped plumb marked interrupted",
                    r.stale
                )
            } else {
                String::new()
            }
        );
        (r.suite_id, r.plan, r.done, r.groups)
    } else {
        let id = plumb_runner::suite::begin(&store, &fresh, &a.suite)?;
        eprintln!(
            "plumb: suite s{id} ({}): {} runs, {} variants{}",
            fresh.name,
            fresh.runs.len(),
            fresh.variants(),
            if a.queue.is_some() { ", queued" } else { "" }
        );
        if let Some(q) = &a.queue {
            super::worker::enqueue(&store, q, id, &fresh)?;
            return Ok(ExitCode::SUCCESS);
        }
        (id, fresh, HashSet::new(), HashMap::new())
    };
    let mut printer = Printer::new(Style::Line);
    let job = Job {
        tag: a.tag.clone(),
        suite: Some((suite_id, done, groups)),
        grouped: plan.runs.iter().any(|r| r.repeat > 0),
        until: until.as_ref().map(|u| u as &dyn plumb_runner::StopRule),
        ..Job::new(&plan.runs, plan.dir.clone(), a.keep)
    };
    let out = execute::run_batch(&mut store, &mut printer, job)?;
    printer.finish()?;
    let status = match out.status {
        RunStatus::Interrupted | RunStatus::Running => RunStatus::Interrupted,
        s => s,
    };
    let ended = (status != RunStatus::Interrupted).then(now);
    store.finish_suite(suite_id, status, ended.as_deref())?;
    match status {
        RunStatus::Interrupted => eprintln!(
            "plumb: suite s{suite_id} interrupted; finished runs are stored. Continue with \
             `plumb run {} --resume`",
            a.suite.display()
        ),
        _ => eprintln!(
            "plumb: suite s{suite_id} done ({status}); `plumb report s{suite_id}` shows it \
             (--format html -o FILE for the curves)"
        ),
    }
    Ok(execute::exit_code(status))
}
