//! `plumb ab`: an A/B on one machine. Two sides (two plumb binaries, e.g. built against
//! two RocksDB releases, or one binary with two option sets or environments) run the
//! same command slice by slice: alternately (A B, B A, A B, … so a steady drift falls on
//! both alike) on one prepared database where the command uses one
//! (`--db DIR --use-existing-db` with read-only steps), or with `--duet` both at once,
//! each on its own half of the CPUs and its own copy of the data, so both see the same
//! moment's interference and each round is a pair. Every slice is stored as a run
//! tagged `TAG:A` or `TAG:B`; the verdict per step is plumb_report::ab's, at a fixed
//! count of slices or, with `--until`, by a sequential rule that stops adding slices
//! once every judged step is settled.

use super::StoreArg;
use anyhow::{bail, Context};
use plumb_report::ab::{AbStep, Design, Judge};
use plumb_report::sequential::{Rule, Settled};
use plumb_report::Version;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// `plumb ab [SIDES] -- kv ARGS…`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
plumb kv --db /data/ab --num 5000000 --benchmarks fillseq,compact   # prepare once\n  \
plumb ab --b-bin /var/tmp/plumb-rocksdb-releases/bin/plumb-rocksdb-8.6.7 \\\n      \
-- kv --db /data/ab --use-existing-db --benchmarks readrandom,fwdrange --duration 20\n  \
plumb ab --b-args \"--cache-size 1073741824\" -- kv --db /data/ab --use-existing-db --benchmarks readrandom\n\
  plumb ab --duet --until 2% --b-env PLUMB_TEST_MEMORY_OP_NS=20 -- kv --engine memory --benchmarks fillseq,readrandom\n\
Each slice is a run in the store (tags TAG:A and TAG:B): `plumb compare tag=TAG:A tag=TAG:B` \
shows its costs. Only read-only steps are fair to interleave on one database; a writing \
step is flagged. On a 2-vCPU VM (bench/README.md) interleaved 3-s slices of one side \
scatter by about 5%, so 5% needs ~30 slices a side; duet pairs scatter by about 1%.")]
pub struct AbArgs {
    /// Slices per side [default: 5, in a duet 6; with --until, the most it may take:
    /// 20]. The order alternates A B, B A, … (ABBA), so a linear drift cancels; in a
    /// duet the CPUs swap sides every round and the rounds are judged two by two (an
    /// even count).
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,
    /// Run A and B at the same time, each pinned to its own half of the CPUs (swapped
    /// every round) and each on its own data (a copy of --db at DIR.duet-b for B), and
    /// judge each round's pair: both see the same neighbours and the same moment, so
    /// drift and interference cancel within a pair. For kv commands whose threads fit
    /// in half the CPUs; a server (sql, ib) keeps its threads on no side, so those run
    /// interleaved.
    #[arg(long)]
    duet: bool,
    /// Add slices until every judged step's interval is at most this wide (±PCT, e.g.
    /// 2%) or excludes 1, by alpha spending over the looks (the false-positive rate
    /// holds at every look), up to --rounds; the first look is at 3 slices a side (a
    /// duet: 6 rounds, then every 2).
    #[arg(long, value_name = "PCT", value_parser = super::until::parse_pct)]
    until: Option<f64>,
    /// With --until: settle "no change" only once the A/B could see a change of PCT at
    /// 80% power (its interval about 40% narrower than ±PCT), so "no difference"
    /// means a PCT change was not there, not only that it was not seen.
    #[arg(long, requires = "until")]
    power: bool,
    /// A step to judge and, with --until, to wait for (repeatable) [default: every
    /// measured step that does not write, or every step when all write].
    #[arg(long = "step", value_name = "NAME")]
    steps: Vec<String>,
    /// Side A's plumb binary [default: this one].
    #[arg(long, value_name = "PATH")]
    a_bin: Option<PathBuf>,
    /// Side B's plumb binary [default: this one].
    #[arg(long, value_name = "PATH")]
    b_bin: Option<PathBuf>,
    /// Arguments appended to side A's command (one string, split on spaces).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    a_args: Option<String>,
    /// Arguments appended to side B's command.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    b_args: Option<String>,
    /// An environment variable for side A's processes (KEY=VALUE, repeatable).
    #[arg(long = "a-env", value_name = "KEY=VALUE")]
    a_env: Vec<String>,
    /// An environment variable for side B's processes.
    #[arg(long = "b-env", value_name = "KEY=VALUE")]
    b_env: Vec<String>,
    /// The tag prefix of the slices' runs [default: ab-UNIXTIME].
    #[arg(long)]
    tag: Option<String>,
    /// Significance: of the permutation test (interleaved) or the paired t test
    /// (duet) at a fixed count; with --until, the false-positive rate spent over all
    /// the looks together.
    #[arg(long, default_value_t = 0.05, value_name = "P")]
    alpha: f64,
    /// Print the verdict as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    store: StoreArg,
    /// The command both sides run, after `--` (kv, sql or ib with its arguments).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// One side: its binary, extra arguments and environment.
struct Side {
    label: &'static str,
    bin: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

fn env_pairs(flag: &str, v: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    v.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .with_context(|| format!("{flag} {kv:?}: give KEY=VALUE"))
        })
        .collect()
}

/// Runs one slice of `side` (on `cpus` when given) and returns the ids of the runs it
/// stored.
fn slice(
    side: &Side,
    command: &[String],
    tag: &str,
    store: &std::path::Path,
    cpus: Option<&[usize]>,
) -> anyhow::Result<Vec<i64>> {
    let mut c = Command::new(&side.bin);
    c.args(command)
        .args(&side.args)
        .args(["--tag", tag, "--json", "--store"])
        .arg(store)
        .envs(side.env.iter().map(|(k, v)| (k, v)))
        .stderr(std::process::Stdio::inherit());
    if let Some(cpus) = cpus {
        plumb_host::affinity::pin(&mut c, cpus);
    }
    let out = c
        .output()
        .with_context(|| format!("side {}: cannot start {}", side.label, side.bin.display()))?;
    if !out.status.success() {
        bail!(
            "side {}: `{} {}` failed ({}); nothing more was run",
            side.label,
            side.bin.display(),
            command.join(" "),
            out.status
        );
    }
    super::child::run_ids(&out.stdout, &format!("side {}", side.label))
}

/// The value of `flag` in a command (`--flag V` or `--flag=V`), with the index of the
/// word holding it.
fn flag_value(command: &[String], flag: &str) -> Option<(usize, String)> {
    let eq = format!("{flag}=");
    command.iter().enumerate().find_map(|(i, w)| {
        if w == flag {
            command.get(i + 1).map(|v| (i + 1, v.clone()))
        } else {
            w.strip_prefix(&eq).map(|v| (i, v.to_string()))
        }
    })
}

/// How a duet splits the machine: each side's command and the two halves of the CPUs.
struct Duet {
    /// Side B's command: side A's with B's own --db.
    b_command: Vec<String>,
    halves: [Vec<usize>; 2],
}

impl Duet {
    /// Checks that the command can run as a duet and gives side B its own data: a copy
    /// of a prepared --db (`--use-existing-db`), else its own directory.
    fn prepare(command: &[String]) -> anyhow::Result<Duet> {
        if command.first().map(String::as_str) != Some("kv") {
            bail!(
                "--duet runs kv commands (embedded engines): a server started by sql or ib \
                 keeps its threads on neither side's CPUs, and two sides against one --url \
                 server share it; run it interleaved (without --duet)"
            );
        }
        let cpus = plumb_host::affinity::allowed_cpus().context("reading this process's CPUs")?;
        if cpus.len() < 2 {
            bail!(
                "--duet needs two CPUs (one a side) and this process may use {}; run it \
                 interleaved (without --duet)",
                cpus.len()
            );
        }
        let half = cpus.len() / 2;
        for flag in ["--threads", "--fill-threads"] {
            if let Some((_, v)) = flag_value(command, flag) {
                let n: usize = v
                    .parse()
                    .with_context(|| format!("{flag} {v:?} after --: not a number"))?;
                if n > half {
                    bail!(
                        "{flag} {n} with --duet: each side gets {half} of this machine's {} \
                         CPUs, and more threads than CPUs measure the scheduler; use \
                         {flag} {half} or run it interleaved (without --duet)",
                        cpus.len()
                    );
                }
            }
        }
        let mut b_command = command.to_vec();
        if let Some((i, db)) = flag_value(command, "--db") {
            let copy = format!("{}.duet-b", db.trim_end_matches('/'));
            let existing = command.iter().any(|w| w == "--use-existing-db");
            if existing {
                let _ = std::fs::remove_dir_all(&copy);
                eprintln!("plumb ab: duet: side B reads a copy of {db} at {copy}");
                let st = Command::new("cp")
                    .args(["-a", "--reflink=auto", &db, &copy])
                    .status()
                    .context("running cp")?;
                if !st.success() {
                    bail!("--db {db}: cannot copy it to {copy} for side B ({st}); is there room beside it?");
                }
            }
            b_command[i] = if b_command[i] == db {
                copy
            } else {
                format!("--db={copy}")
            };
        }
        Ok(Duet {
            b_command,
            halves: [cpus[..half].to_vec(), cpus[half..2 * half].to_vec()],
        })
    }

    /// Round `round`'s CPUs for A and B: swapped every round, so neither side keeps
    /// the better half.
    fn cpus(&self, round: u32) -> [&[usize]; 2] {
        let [x, y] = &self.halves;
        if round.is_multiple_of(2) {
            [x, y]
        } else {
            [y, x]
        }
    }
}

/// The steps a verdict waits for: those asked for, else every measured step that does
/// not write (a fill's slices change what they measure), else every step.
fn watched<'a>(steps: &'a [AbStep], asked: &[String]) -> Vec<&'a AbStep> {
    if !asked.is_empty() {
        return steps.iter().filter(|s| asked.contains(&s.step)).collect();
    }
    let reads: Vec<&AbStep> = steps.iter().filter(|s| !s.writes).collect();
    if reads.is_empty() {
        steps.iter().collect()
    } else {
        reads
    }
}

pub fn run(a: AbArgs) -> anyhow::Result<ExitCode> {
    let rounds = a.rounds.unwrap_or(match (a.until.is_some(), a.duet) {
        (true, _) => 20,
        (false, true) => 6,
        (false, false) => 5,
    });
    if rounds < 2 {
        bail!("--rounds {rounds}: at least 2 slices a side, or there is no noise to judge against (5 is the default)");
    }
    // A duet is judged in blocks of two rounds (one on each half of the CPUs), so the
    // rule counts blocks; interleaved, it counts slices a side.
    let unit = if a.duet { 2 } else { 1 };
    if a.duet && !rounds.is_multiple_of(2) {
        bail!("--rounds {rounds} with --duet: a duet swaps the sides' CPUs every round and judges rounds two by two, so give an even count (6 is the default)");
    }
    let rule = a.until.map(|target| Rule {
        alpha: a.alpha,
        target,
        min: 3,
        cap: (rounds / unit) as usize,
        power: a.power,
    });
    if rule.is_some() && rounds < 3 * unit {
        bail!(
            "--rounds {rounds} with --until: the first look is at {} rounds; give --rounds {} or more (20 is the default)",
            3 * unit,
            3 * unit
        );
    }
    super::history::check_alpha(a.alpha)?;
    super::child::check_command(&a.command, "plumb ab", "slice")?;
    let me = std::env::current_exe().context("finding this plumb binary")?;
    let split = |s: &Option<String>| -> Vec<String> {
        s.as_deref()
            .map(|s| s.split_whitespace().map(String::from).collect())
            .unwrap_or_default()
    };
    let sides = [
        Side {
            label: "A",
            bin: a.a_bin.clone().unwrap_or_else(|| me.clone()),
            args: split(&a.a_args),
            env: env_pairs("--a-env", &a.a_env)?,
        },
        Side {
            label: "B",
            bin: a.b_bin.clone().unwrap_or_else(|| me.clone()),
            args: split(&a.b_args),
            env: env_pairs("--b-env", &a.b_env)?,
        },
    ];
    for s in &sides {
        if !s.bin.is_file() {
            bail!(
                "--{}-bin {}: no such file",
                s.label.to_lowercase(),
                s.bin.display()
            );
        }
    }
    let duet = if a.duet {
        Some(Duet::prepare(&a.command)?)
    } else {
        None
    };
    let design = if duet.is_some() {
        Design::Duet
    } else {
        Design::Interleaved
    };
    let tag = a
        .tag
        .clone()
        .unwrap_or_else(|| super::child::default_tag("ab"));
    let store = a.store.path();
    let tags = sides.each_ref().map(|s| format!("{tag}:{}", s.label));
    let mut ids: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
    let judge =
        |ids: &[Vec<i64>; 2], how: Judge| -> anyhow::Result<Vec<AbStep>> {
            let [va, vb] = sides_of(&a.store.open_existing()?, ids)?;
            let all = plumb_report::ab::judge(&va, &vb, design, how);
            for asked in &a.steps {
                if !all.iter().any(|s| &s.step == asked) {
                    bail!(
                    "--step {asked}: no measured step of that name in the slices (they ran: {})",
                    all.iter().map(|s| s.step.as_str()).collect::<Vec<_>>().join(", ")
                );
                }
            }
            Ok(all)
        };
    let mut done = rounds;
    for round in 0..rounds {
        let progress = |who: &str| {
            eprintln!(
                "plumb ab: round {}/{}{}, {who}",
                round + 1,
                rounds,
                if rule.is_some() { " at most" } else { "" }
            )
        };
        if let Some(d) = &duet {
            let cpus = d.cpus(round);
            progress(&format!(
                "A on CPUs {:?} and B on CPUs {:?} at the same time",
                cpus[0], cpus[1]
            ));
            let commands = [&a.command, &d.b_command];
            let [ra, rb] = std::thread::scope(|s| {
                let h = [0, 1].map(|i| {
                    let (side, cmd, t, store) = (&sides[i], commands[i], &tags[i], &store);
                    s.spawn(move || slice(side, cmd, t, store, Some(cpus[i])))
                });
                h.map(|h| h.join().expect("a duet side's thread"))
            });
            ids[0].extend(ra?);
            ids[1].extend(rb?);
        } else {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                progress(&format!("side {}", sides[i].label));
                ids[i].extend(slice(&sides[i], &a.command, &tags[i], &store, None)?);
            }
        }
        let done_rounds = round + 1;
        if let Some(rule) = rule
            .filter(|r| done_rounds.is_multiple_of(unit) && (done_rounds / unit) as usize >= r.min)
        {
            let steps = judge(&ids, Judge::Look(rule))?;
            let w = watched(&steps, &a.steps);
            if !w.is_empty() && w.iter().all(|s| s.settled != Some(Settled::Open)) {
                done = done_rounds;
                break;
            }
        }
    }
    let how = rule.map_or(Judge::Fixed(a.alpha), Judge::Look);
    let all = judge(&ids, how)?;
    let steps: Vec<AbStep> = if a.steps.is_empty() {
        all
    } else {
        all.into_iter()
            .filter(|s| a.steps.contains(&s.step))
            .collect()
    };
    // The step's floor for blocked repeats of this plan on this host, beside the
    // verdict: what `compare` of two separate blocks would have faced instead.
    let floors: Vec<serde_json::Value> = {
        let st = a.store.open_existing()?;
        let learned = plumb_report::base::learned_floors(&st, &sides_of(&st, &ids)?)?;
        steps
            .iter()
            .filter_map(|s| {
                let f = learned.get(&(s.step.clone(), "ops_sec".to_string()))?;
                Some(serde_json::json!({
                    "step": s.step,
                    "floor": f,
                    "note": format!(
                        "{}: {} (the floor is what blocked repeats face; this A/B's own slices judge it)",
                        s.step,
                        plumb_report::noise::beside_floor(s.ratio?, s.ci, f)
                    ),
                }))
            })
            .collect()
    };
    let stopped = match rule {
        Some(r) if done < rounds && r.power => format!(
            "stopped after {done} slices a side: every judged step settled (changed, or could see {:.1}% at 80% power)",
            100.0 * r.target
        ),
        Some(r) if done < rounds => format!(
            "stopped after {done} slices a side: every judged step settled (changed, or within ±{:.1}%)",
            100.0 * r.target
        ),
        Some(_) => format!(
            "reached the cap of {rounds} slices a side (--rounds) before every judged step settled"
        ),
        None => format!("{done} slices a side"),
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "tag": tag,
                "design": design,
                "rule": rule,
                "rounds": done,
                "stopped": stopped,
                "cpus": duet.as_ref().map(|d| serde_json::json!({"A": d.halves[0], "B": d.halves[1]})),
                "runs": {"A": ids[0], "B": ids[1]},
                "steps": steps,
                "floors": floors,
            }))?
        );
    } else {
        print!("{}", plumb_report::ab::text(&steps, "A", "B"));
        for f in &floors {
            println!("floor: {}", f["note"].as_str().unwrap_or_default());
        }
        println!("{stopped}.");
        println!(
            "slices: A runs {:?}, B runs {:?}; costs: plumb compare tag={tag}:A tag={tag}:B",
            ids[0], ids[1]
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The two sides' stored slices so far, as the versions A and B that every judgement of
/// an A/B reads.
fn sides_of(store: &plumb_store::Store, ids: &[Vec<i64>; 2]) -> anyhow::Result<[Version; 2]> {
    let load = |label: &str, ids: &[i64]| -> anyhow::Result<Version> {
        Ok(Version {
            label: label.to_string(),
            runs: ids
                .iter()
                .map(|id| store.run(*id))
                .collect::<Result<Vec<_>, _>>()?,
        })
    };
    Ok([load("A", &ids[0])?, load("B", &ids[1])?])
}

/// `plumb ratio --base V,… --other V,…`: the statistics plumb judges with, for figures
/// measured elsewhere (the parity benches set db_bench's, sysbench's and fio's runs
/// against plumb's with it).
#[derive(Debug, clap::Args)]
pub struct RatioArgs {
    /// The base's values (e.g. db_bench's ops/s of each repeat), comma-separated.
    #[arg(long, value_name = "V,V,…", value_delimiter = ',', required = true)]
    base: Vec<f64>,
    /// The other side's values, comma-separated.
    #[arg(long, value_name = "V,V,…", value_delimiter = ',', required = true)]
    other: Vec<f64>,
    /// The values are pairs measured together (base[i] beside other[i], as `plumb ab
    /// --duet` runs them): judge each pair's ratio with the paired t test.
    #[arg(long)]
    paired: bool,
    /// Judge this as one look of a sequence that adds repeats until the interval is
    /// within ±PCT or excludes 1 (as `plumb ab --until`): the interval is taken at the
    /// level alpha spending allows the look with this many values a side, and the answer
    /// says whether to stop (settled: changed or within) or add a repeat (open). The
    /// parity benches loop on it.
    #[arg(long, value_name = "PCT", value_parser = super::until::parse_pct, requires = "cap")]
    until: Option<f64>,
    /// With --until: the most values a side the sequence may reach (its last look).
    #[arg(long, value_name = "N")]
    cap: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn ratio(a: RatioArgs) -> anyhow::Result<ExitCode> {
    let n = a.base.len().min(a.other.len());
    let rule = match (a.until, a.cap) {
        (Some(target), Some(cap)) => {
            let first = super::until::FIRST_LOOK;
            if cap < first || n > cap {
                bail!(
                    "--cap {cap}: the looks run from {first} values a side to the cap, and this \
                     look has {n}; give a cap of at least {first} and at least the values given"
                );
            }
            Some(Rule {
                alpha: 0.05,
                target,
                min: first,
                cap,
                power: false,
            })
        }
        _ => None,
    };
    // Before the first look there is nothing to spend: the answer is "add a repeat".
    let level = rule.map_or(0.95, |r| if n < r.min { 0.95 } else { r.level(n) });
    if let Some(bad) = a
        .base
        .iter()
        .chain(&a.other)
        .find(|x| !(x.is_finite() && **x > 0.0))
    {
        bail!("--base/--other: {bad} is not a positive number; give each repeat's figure");
    }
    let (r, p) = if a.paired {
        if a.base.len() != a.other.len() {
            bail!(
                "--paired: --base has {} values and --other {}; give one of each per pair",
                a.base.len(),
                a.other.len()
            );
        }
        let v = plumb_report::sequential::paired(&a.base, &a.other, level)
            .context("--base/--other: no ratio of these values")?;
        (
            plumb_report::stats::Ratio {
                value: v.ratio,
                ci: v.ci,
            },
            v.p,
        )
    } else {
        (
            plumb_report::stats::ratio_at(&a.base, &a.other, level)
                .context("--base/--other: no ratio of these values")?,
            plumb_report::permtest::permutation_p(&a.base, &a.other, 9999, 0),
        )
    };
    let settled = rule.map(|rl| {
        if n < rl.min {
            Settled::Open
        } else {
            rl.settles(r.ci)
        }
    });
    let precision = r.ci.map(plumb_report::sequential::precision);
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "ratio": r.value,
                "ci": r.ci,
                "level": level,
                "precision": precision,
                "p": p,
                "significant_ci": r.significant(),
                "settled": settled,
            })
        );
    } else {
        let ci =
            r.ci.map_or("no interval: one value on a side".into(), |(lo, hi)| {
                format!("{:.1}% interval {lo:.3}-{hi:.3}", 100.0 * level)
            });
        let p = p.map_or("n/a".into(), |p| format!("{p:.4}"));
        let test = if a.paired { "paired t" } else { "permutation" };
        let look = match (settled, rule) {
            (Some(st), Some(rl)) => format!(
                "; look at {n} of at most {} a side: {}",
                rl.cap,
                match st {
                    Settled::Changed => "settled, changed".to_string(),
                    Settled::Within => format!("settled, within ±{:.1}%", 100.0 * rl.target),
                    Settled::Open => "open, add a repeat".to_string(),
                }
            ),
            _ => String::new(),
        };
        println!("ratio {:.3} ({ci}), {test} p {p}{look}", r.value);
    }
    Ok(ExitCode::SUCCESS)
}
