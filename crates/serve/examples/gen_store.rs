//! Writes a generated nightly history into a store, for the page-time bench
//! (bench/serve-pages.sh) and for looking at `plumb serve` over a team-sized store:
//!
//! ```text
//! cargo run --release -p plumb-serve --example gen_store -- \
//!     --store /var/tmp/serve-bench.sqlite --plans 20 --nights 100 --repeats 5 --intervals 100
//! ```
//!
//! 20 × 100 × 5 = 10,000 runs of one `readrandom` step with 100 one-second intervals
//! each: a million interval rows. The newest night of the last plan runs at 0.8× (the
//! change `plumb check` then finds), unless `--no-change`. Prints what it wrote.

use plumb_serve::generate::{night, Change, Spec};
use plumb_store::Store;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage: gen_store --store PATH|URL [--plans N] [--nights N] [--repeats N] \
     [--intervals N] [--steps a,b] [--seed N] [--host NAME] [--tag TAG] \
     [--change PLAN:NIGHT:FACTOR | --no-change]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_store: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut store: Option<PathBuf> = None;
    let mut spec = Spec {
        plans: 20,
        groups: 100,
        repeats: 5,
        ..Spec::default()
    };
    let mut change: Option<Option<(usize, usize, f64)>> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{a}: give a value; {USAGE}"))
        };
        let count = |v: String| -> Result<usize, String> {
            v.parse()
                .map_err(|_| format!("{v:?}: not a count; {USAGE}"))
        };
        match a.as_str() {
            "--store" => store = Some(PathBuf::from(value()?)),
            "--plans" => spec.plans = count(value()?)?,
            "--nights" => spec.groups = count(value()?)?,
            "--repeats" => spec.repeats = count(value()?)?,
            "--intervals" => spec.intervals = count(value()?)?,
            "--steps" => spec.steps = value()?.split(',').map(str::to_string).collect(),
            "--seed" => spec.seed = count(value()?)? as u64,
            "--host" => spec.host = value()?,
            "--tag" => spec.tag = value()?,
            "--no-change" => change = Some(None),
            "--change" => {
                let v = value()?;
                let parts: Vec<&str> = v.split(':').collect();
                let bad = || format!("--change {v}: write PLAN:NIGHT:FACTOR, e.g. 0:90:0.8");
                let [p, n, f] = parts[..] else {
                    return Err(bad());
                };
                change = Some(Some((
                    p.parse().map_err(|_| bad())?,
                    n.parse().map_err(|_| bad())?,
                    f.parse().map_err(|_| bad())?,
                )));
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => return Err(format!("{other}: unknown argument; {USAGE}")),
        }
    }
    let store_path = store.ok_or_else(|| format!("--store is required; {USAGE}"))?;
    let change = change.unwrap_or(Some((
        spec.plans.saturating_sub(1),
        spec.groups.saturating_sub(1),
        0.8,
    )));
    spec.change = change.map(|(plan, at_group, factor)| Change {
        plan,
        at_group,
        step: spec.steps.last().cloned().unwrap_or_default(),
        factor,
    });
    let mut store = Store::open(&store_path).map_err(|e| e.to_string())?;
    let t0 = Instant::now();
    let total = spec.plans * spec.groups * spec.repeats;
    let mut written = 0usize;
    let mut first_last: Option<(i64, i64)> = None;
    let mut step = (total / 10).max(1);
    if total < 100 {
        step = total.max(1);
    }
    for g in 0..spec.groups {
        for p in 0..spec.plans {
            let factor = match &spec.change {
                Some(c) if c.plan == p && g >= c.at_group => c.factor,
                _ => 1.0,
            };
            let ids = night(&mut store, &spec, p, g, factor).map_err(|e| e.to_string())?;
            for id in &ids {
                first_last = Some(match first_last {
                    None => (*id, *id),
                    Some((a, _)) => (a, *id),
                });
            }
            let before = written;
            written += ids.len();
            if written / step != before / step {
                eprintln!(
                    "gen_store: {written}/{total} runs, {:.0} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let steps = written * spec.steps.len();
    println!("store      {}", store.shown());
    match first_last {
        Some((a, b)) => println!("runs       {written} (ids {a}..={b})"),
        None => println!("runs       0"),
    }
    println!(
        "plans      {} × {} nights × {} repeats, steps {}",
        spec.plans,
        spec.groups,
        spec.repeats,
        spec.steps.join(",")
    );
    println!("steps      {steps}");
    println!("intervals  {}", steps * spec.intervals);
    match &spec.change {
        Some(c) => println!(
            "change     plan {} night {} step {} × {}",
            c.plan, c.at_group, c.step, c.factor
        ),
        None => println!("change     none"),
    }
    println!(
        "took       {secs:.1} s ({:.0} runs/s)",
        written as f64 / secs.max(1e-9)
    );
    Ok(())
}
