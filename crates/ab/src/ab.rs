//! An A/B on one machine. Two sides (two plumb binaries, e.g. built against two RocksDB
//! releases, or one binary with two option sets or environments) run the same command
//! slice by slice: alternately (A B, B A, A B, … so a steady drift falls on both alike),
//! or as a duet, both at once, each on its own half of the CPUs and its own copy of the
//! data, so both see the same moment's interference and each round is a pair. Every
//! slice is stored as a run tagged `TAG:A` or `TAG:B`; the verdict per step is
//! plumb_report::ab's, at a fixed count of slices or, with a [`Rule`], by a sequential
//! rule that stops adding slices once every judged step is settled.

use crate::child;
use crate::ChildError;
use plumb_report::ab::{AbStep, Design, Judge};
use plumb_report::noise::Floor;
use plumb_report::sequential::{Rule, Settled};
use plumb_report::Version;
use plumb_store::Store;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One side: its binary, the arguments appended to the shared command and its
/// environment; what makes A and B differ.
#[derive(Debug, Clone)]
pub struct Side {
    /// "A" or "B": its runs' tag suffix and its name in messages.
    pub label: &'static str,
    /// The plumb binary it runs.
    pub bin: PathBuf,
    /// Arguments appended to the command.
    pub args: Vec<String>,
    /// Environment variables for its processes.
    pub env: Vec<(String, String)>,
}

impl Side {
    /// A side from the flags' words: `args` one string split on spaces, `env` KEY=VALUE
    /// items (`flag` names them in the error). The binary must exist now, not at the
    /// first slice.
    pub fn new(
        label: &'static str,
        bin: PathBuf,
        args: Option<&str>,
        env: &[String],
        flag: &str,
    ) -> Result<Side, ChildError> {
        if !bin.is_file() {
            return Err(ChildError::Refused(format!(
                "--{}-bin {}: no such file",
                label.to_lowercase(),
                bin.display()
            )));
        }
        let env = env
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .filter(|(k, _)| !k.is_empty())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| ChildError::Refused(format!("{flag} {kv:?}: give KEY=VALUE")))
            })
            .collect::<Result<_, _>>()?;
        Ok(Side {
            label,
            bin,
            args: args
                .map(|s| s.split_whitespace().map(String::from).collect())
                .unwrap_or_default(),
            env,
        })
    }
}

/// What an A/B runs and how it stops.
#[derive(Debug, Clone)]
pub struct AbPlan {
    /// A and B.
    pub sides: [Side; 2],
    /// The command both run (`kv …`, `sql …`, `ib …`).
    pub command: Vec<String>,
    /// Slices a side; `None` takes [`default_rounds`].
    pub rounds: Option<u32>,
    /// Both sides at once on the two halves of the CPUs.
    pub duet: bool,
    /// Stop once every judged step is within ±this (a fraction) or changed.
    pub until: Option<f64>,
    /// With `until`: settle "no change" only at 80% power to see it.
    pub power: bool,
    /// Significance at a fixed count, or spent over all the looks.
    pub alpha: f64,
    /// The steps judged and waited for; empty: [`watched`]'s default.
    pub steps: Vec<String>,
    /// The slices' tag prefix.
    pub tag: String,
    /// Where the slices store their runs.
    pub store: PathBuf,
}

/// Slices a side when none are given: enough for a first verdict (5 interleaved, 6 in
/// a duet, judged in pairs of rounds), or the cap a sequential rule may reach (20).
pub fn default_rounds(until: bool, duet: bool) -> u32 {
    match (until, duet) {
        (true, _) => 20,
        (false, true) => 6,
        (false, false) => 5,
    }
}

/// A step's learned floor beside its verdict: what `compare` of two separate blocks of
/// repeats would have faced instead of this A/B's own slices.
#[derive(Debug, Clone, Serialize)]
pub struct FloorNote {
    /// The step.
    pub step: String,
    /// Its floor on this host for this plan.
    pub floor: Floor,
    /// The sentence that sets the verdict's ratio against it.
    pub note: String,
}

/// What an A/B found.
#[derive(Debug, Clone)]
pub struct AbOutcome {
    /// The slices' tag prefix.
    pub tag: String,
    /// Interleaved or duet.
    pub design: Design,
    /// The sequential rule, when one stopped it.
    pub rule: Option<Rule>,
    /// Slices a side it ran.
    pub rounds: u32,
    /// Why it stopped, as a sentence.
    pub stopped: String,
    /// A duet's two halves of the CPUs (A's first in the first round).
    pub cpus: Option<[Vec<usize>; 2]>,
    /// The stored runs of A and of B, in slice order.
    pub runs: [Vec<i64>; 2],
    /// The verdict per judged step.
    pub steps: Vec<AbStep>,
    /// The learned floors of the judged steps, where the plan has a noise history.
    pub floors: Vec<FloorNote>,
}

impl AbOutcome {
    /// The outcome as `plumb ab --json` prints it: the sides keyed by their labels, so
    /// a script reads `runs.B` rather than an index.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "tag": self.tag,
            "design": self.design,
            "rule": self.rule,
            "rounds": self.rounds,
            "stopped": self.stopped,
            "cpus": self.cpus.as_ref().map(|[a, b]| serde_json::json!({"A": a, "B": b})),
            "runs": {"A": self.runs[0], "B": self.runs[1]},
            "steps": self.steps,
            "floors": self.floors,
        })
    }

    /// The outcome as `plumb ab` prints it: the verdict per step, the floors, why it
    /// stopped, and where the slices' runs are.
    pub fn text(&self) -> String {
        let mut out = plumb_report::ab::text(&self.steps, "A", "B");
        for f in &self.floors {
            out.push_str(&format!("floor: {}\n", f.note));
        }
        out.push_str(&format!("{}.\n", self.stopped));
        out.push_str(&format!(
            "slices: A runs {:?}, B runs {:?}; costs: plumb compare tag={t}:A tag={t}:B\n",
            self.runs[0],
            self.runs[1],
            t = self.tag
        ));
        out
    }
}

/// Runs one slice of `side` (on `cpus` when given) and returns the ids of the runs it
/// stored.
fn slice(
    side: &Side,
    command: &[String],
    tag: &str,
    store: &Path,
    cpus: Option<&[usize]>,
) -> Result<Vec<i64>, ChildError> {
    let who = format!("side {}", side.label);
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
    child::run(
        c,
        &who,
        &side.bin.display().to_string(),
        command,
        "nothing more was run",
    )
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
    /// Checks that the command can run as a duet on `cpus` and gives side B its own
    /// data: a copy of a prepared --db (`--use-existing-db`), else its own directory.
    fn prepare(
        command: &[String],
        cpus: &[usize],
        progress: &mut dyn FnMut(&str),
    ) -> Result<Duet, ChildError> {
        let refuse = |s: String| Err(ChildError::Refused(s));
        if command.first().map(String::as_str) != Some("kv") {
            return refuse(
                "--duet runs kv commands (embedded engines): a server started by sql or ib \
                 keeps its threads on neither side's CPUs, and two sides against one --url \
                 server share it; run it interleaved (without --duet)"
                    .into(),
            );
        }
        if cpus.len() < 2 {
            return refuse(format!(
                "--duet needs two CPUs (one a side) and this process may use {}; run it \
                 interleaved (without --duet)",
                cpus.len()
            ));
        }
        let half = cpus.len() / 2;
        for flag in ["--threads", "--fill-threads"] {
            if let Some((_, v)) = flag_value(command, flag) {
                let Ok(n) = v.parse::<usize>() else {
                    return refuse(format!("{flag} {v:?} after --: not a number"));
                };
                if n > half {
                    return refuse(format!(
                        "{flag} {n} with --duet: each side gets {half} of this machine's {} \
                         CPUs, and more threads than CPUs measure the scheduler; use \
                         {flag} {half} or run it interleaved (without --duet)",
                        cpus.len()
                    ));
                }
            }
        }
        let mut b_command = command.to_vec();
        if let Some((i, db)) = flag_value(command, "--db") {
            let copy = format!("{}.duet-b", db.trim_end_matches('/'));
            if command.iter().any(|w| w == "--use-existing-db") {
                let _ = std::fs::remove_dir_all(&copy);
                progress(&format!("duet: side B reads a copy of {db} at {copy}"));
                let io = |source| ChildError::Io {
                    what: format!("--db {db}: copying it to {copy} for side B"),
                    source,
                };
                let st = Command::new("cp")
                    .args(["-a", "--reflink=auto", &db, &copy])
                    .status()
                    .map_err(io)?;
                if !st.success() {
                    return refuse(format!(
                        "--db {db}: cannot copy it to {copy} for side B ({st}); is there room beside it?"
                    ));
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
pub fn watched<'a>(steps: &'a [AbStep], asked: &[String]) -> Vec<&'a AbStep> {
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

/// The rounds, the unit a rule counts (2 in a duet: a round on each half) and the rule
/// a plan asks for, refused with what to give when they do not fit together.
fn schedule(p: &AbPlan) -> Result<(u32, u32, Option<Rule>), ChildError> {
    let refuse = |s: String| Err(ChildError::Refused(s));
    let rounds = p
        .rounds
        .unwrap_or_else(|| default_rounds(p.until.is_some(), p.duet));
    if rounds < 2 {
        return refuse(format!("--rounds {rounds}: at least 2 slices a side, or there is no noise to judge against (5 is the default)"));
    }
    // A duet is judged in blocks of two rounds (one on each half of the CPUs), so the
    // rule counts blocks; interleaved, it counts slices a side.
    let unit = if p.duet { 2 } else { 1 };
    if p.duet && !rounds.is_multiple_of(2) {
        return refuse(format!("--rounds {rounds} with --duet: a duet swaps the sides' CPUs every round and judges rounds two by two, so give an even count (6 is the default)"));
    }
    if !(p.alpha > 0.0 && p.alpha < 1.0) {
        return refuse(format!(
            "--alpha {}: give a significance between 0 and 1, e.g. 0.05",
            p.alpha
        ));
    }
    let rule = p.until.map(|target| Rule {
        alpha: p.alpha,
        target,
        min: 3,
        cap: (rounds / unit) as usize,
        power: p.power,
    });
    if rule.is_some() && rounds < 3 * unit {
        return refuse(format!(
            "--rounds {rounds} with --until: the first look is at {} rounds; give --rounds {} or more (20 is the default)",
            3 * unit,
            3 * unit
        ));
    }
    Ok((rounds, unit, rule))
}

/// The two sides' stored slices so far, as the versions A and B that every judgement of
/// an A/B reads.
fn sides_of(store: &Store, ids: &[Vec<i64>; 2]) -> Result<[Version; 2], ChildError> {
    let load = |label: &str, ids: &[i64]| -> Result<Version, ChildError> {
        Ok(Version {
            label: label.to_string(),
            runs: ids
                .iter()
                .map(|id| store.run(*id))
                .collect::<Result<_, _>>()?,
        })
    };
    Ok([load("A", &ids[0])?, load("B", &ids[1])?])
}

/// The verdict on the slices so far; a `--step` that names no measured step is refused
/// with the steps that ran.
fn judge(
    p: &AbPlan,
    design: Design,
    ids: &[Vec<i64>; 2],
    how: Judge,
) -> Result<Vec<AbStep>, ChildError> {
    let [va, vb] = sides_of(&Store::open(&p.store)?, ids)?;
    let all = plumb_report::ab::judge(&va, &vb, design, how);
    if let Some(asked) = p.steps.iter().find(|a| !all.iter().any(|s| &s.step == *a)) {
        return Err(ChildError::Refused(format!(
            "--step {asked}: no measured step of that name in the slices (they ran: {})",
            all.iter()
                .map(|s| s.step.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(all)
}

/// The learned floors of `steps`' ops/s for the plan the slices ran.
fn floors(p: &AbPlan, ids: &[Vec<i64>; 2], steps: &[AbStep]) -> Result<Vec<FloorNote>, ChildError> {
    let st = Store::open(&p.store)?;
    let learned = plumb_report::base::learned_floors(&st, &sides_of(&st, ids)?)?;
    Ok(steps
        .iter()
        .filter_map(|s| {
            let f = *learned.get(&(s.step.clone(), "ops_sec".to_string()))?;
            Some(FloorNote {
                step: s.step.clone(),
                floor: f,
                note: format!(
                    "{}: {} (the floor is what blocked repeats face; this A/B's own slices judge it)",
                    s.step,
                    plumb_report::noise::beside_floor(s.ratio?, s.ci, &f)
                ),
            })
        })
        .collect())
}

/// Runs the A/B: checks the plan, then slice after slice (`progress` hears each round),
/// judging after each look when a rule may stop it, and returns the verdict of every
/// judged step with its floor. A failed slice stops it; the slices before are stored.
pub fn run(p: &AbPlan, progress: &mut dyn FnMut(&str)) -> Result<AbOutcome, ChildError> {
    let (rounds, unit, rule) = schedule(p)?;
    child::check_command(&p.command, "plumb ab", "slice")?;
    let duet = if p.duet {
        let cpus = plumb_host::affinity::allowed_cpus().map_err(|source| ChildError::Io {
            what: "reading this process's CPUs".into(),
            source,
        })?;
        Some(Duet::prepare(&p.command, &cpus, progress)?)
    } else {
        None
    };
    let design = if duet.is_some() {
        Design::Duet
    } else {
        Design::Interleaved
    };
    let tags = p.sides.each_ref().map(|s| format!("{}:{}", p.tag, s.label));
    let mut ids: [Vec<i64>; 2] = [Vec::new(), Vec::new()];
    let mut done = rounds;
    for round in 0..rounds {
        let at_most = if rule.is_some() { " at most" } else { "" };
        let mut say =
            |who: &str| progress(&format!("round {}/{rounds}{at_most}, {who}", round + 1));
        if let Some(d) = &duet {
            let cpus = d.cpus(round);
            say(&format!(
                "A on CPUs {:?} and B on CPUs {:?} at the same time",
                cpus[0], cpus[1]
            ));
            let commands = [&p.command, &d.b_command];
            let [ra, rb] = std::thread::scope(|s| {
                let h = [0, 1].map(|i| {
                    let (side, cmd, t, store) = (&p.sides[i], commands[i], &tags[i], &p.store);
                    s.spawn(move || slice(side, cmd, t, store, Some(cpus[i])))
                });
                h.map(|h| h.join().expect("a duet side's thread"))
            });
            ids[0].extend(ra?);
            ids[1].extend(rb?);
        } else {
            let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
            for i in order {
                say(&format!("side {}", p.sides[i].label));
                ids[i].extend(slice(&p.sides[i], &p.command, &tags[i], &p.store, None)?);
            }
        }
        let done_rounds = round + 1;
        if let Some(rule) = rule
            .filter(|r| done_rounds.is_multiple_of(unit) && (done_rounds / unit) as usize >= r.min)
        {
            let steps = judge(p, design, &ids, Judge::Look(rule))?;
            let w = watched(&steps, &p.steps);
            if !w.is_empty() && w.iter().all(|s| s.settled != Some(Settled::Open)) {
                done = done_rounds;
                break;
            }
        }
    }
    let how = rule.map_or(Judge::Fixed(p.alpha), Judge::Look);
    let mut steps = judge(p, design, &ids, how)?;
    if !p.steps.is_empty() {
        steps.retain(|s| p.steps.contains(&s.step));
    }
    let floors = floors(p, &ids, &steps)?;
    Ok(AbOutcome {
        tag: p.tag.clone(),
        design,
        rule,
        rounds: done,
        stopped: stopped(rule, done, rounds),
        cpus: duet.map(|d| d.halves),
        runs: ids,
        steps,
        floors,
    })
}

/// Why the A/B stopped where it did, as the sentence the output ends with.
fn stopped(rule: Option<Rule>, done: u32, rounds: u32) -> String {
    match rule {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn plan(rounds: Option<u32>, duet: bool, until: Option<f64>) -> AbPlan {
        let side = |label| Side {
            label,
            bin: PathBuf::from("/bin/true"),
            args: vec![],
            env: vec![],
        };
        AbPlan {
            sides: [side("A"), side("B")],
            command: words("kv --engine null"),
            rounds,
            duet,
            until,
            power: false,
            alpha: 0.05,
            steps: vec![],
            tag: "t".into(),
            store: PathBuf::from("/nonexistent/store.sqlite"),
        }
    }

    #[test]
    fn the_schedule_defaults_by_design_and_refuses_what_cannot_be_judged() {
        assert_eq!(schedule(&plan(None, false, None)).unwrap().0, 5);
        assert_eq!(schedule(&plan(None, true, None)).unwrap().0, 6);
        let (rounds, unit, rule) = schedule(&plan(None, true, Some(0.02))).unwrap();
        assert_eq!((rounds, unit, rule.unwrap().cap), (20, 2, 10));
        let e = schedule(&plan(Some(5), true, None))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--rounds 5 with --duet"), "{e}");
        let e = schedule(&plan(Some(4), true, Some(0.02)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("give --rounds 6 or more"), "{e}");
        let e = schedule(&plan(Some(1), false, None))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--rounds 1: at least 2"), "{e}");
        let mut bad = plan(None, false, None);
        bad.alpha = 1.5;
        assert!(schedule(&bad)
            .unwrap_err()
            .to_string()
            .starts_with("--alpha 1.5"));
    }

    #[test]
    fn a_duet_splits_the_cpus_swaps_them_and_gives_b_its_own_db() {
        let mut heard = Vec::new();
        let d = Duet::prepare(
            &words("kv --db=/d/x/ --threads 2"),
            &[0, 1, 2, 3, 4],
            &mut |s| heard.push(s.to_string()),
        )
        .unwrap();
        assert_eq!(d.halves, [vec![0, 1], vec![2, 3]]);
        assert_eq!(d.cpus(0), [&[0, 1][..], &[2, 3][..]]);
        assert_eq!(d.cpus(1), [&[2, 3][..], &[0, 1][..]]);
        assert_eq!(d.b_command, words("kv --db=/d/x.duet-b --threads 2"));
        assert!(
            heard.is_empty(),
            "no copy without --use-existing-db: {heard:?}"
        );
        let d = Duet::prepare(&words("kv --db /d/y"), &[0, 1], &mut |_| {}).unwrap();
        assert_eq!(d.b_command, words("kv --db /d/y.duet-b"));
    }

    #[test]
    fn a_duet_refuses_servers_one_cpu_and_more_threads_than_its_half() {
        let e = |c: &str, cpus: &[usize]| {
            Duet::prepare(&words(c), cpus, &mut |_| {})
                .err()
                .expect("refused")
                .to_string()
        };
        assert!(e("sql --server postgres", &[0, 1]).starts_with("--duet runs kv commands"));
        assert!(e("kv", &[0]).contains("this process may use 1"));
        assert!(e("kv --threads 2", &[0, 1]).starts_with("--threads 2 with --duet"));
        assert!(e("kv --fill-threads=x", &[0, 1]).contains("not a number"));
    }

    #[test]
    fn a_side_needs_its_binary_and_key_value_pairs() {
        let s = Side::new(
            "B",
            "/bin/true".into(),
            Some("--cache-size 8  --x"),
            &["K=v=w".into()],
            "--b-env",
        )
        .unwrap();
        assert_eq!(s.args, words("--cache-size 8 --x"));
        assert_eq!(s.env, vec![("K".to_string(), "v=w".to_string())]);
        let e = Side::new("B", "/bin/true".into(), None, &["=v".into()], "--b-env").unwrap_err();
        assert_eq!(e.to_string(), "--b-env \"=v\": give KEY=VALUE");
        let e = Side::new("A", "/no/such/plumb".into(), None, &[], "--a-env").unwrap_err();
        assert_eq!(e.to_string(), "--a-bin /no/such/plumb: no such file");
    }

    #[test]
    fn the_stop_sentence_says_which_rule_ended_it() {
        let r = Rule {
            alpha: 0.05,
            target: 0.02,
            min: 3,
            cap: 10,
            power: false,
        };
        assert_eq!(stopped(None, 5, 5), "5 slices a side");
        assert!(stopped(Some(r), 4, 20).contains("within ±2.0%"));
        assert!(stopped(Some(Rule { power: true, ..r }), 4, 20).contains("80% power"));
        assert!(stopped(Some(r), 20, 20).starts_with("reached the cap of 20"));
    }
}
