//! The bisect from start to answer: the range resolved, both ends built and measured
//! (and refused when they do not differ, saying by how much and what the floor is),
//! then one midpoint after another built, judged and saved, until the first bad commit
//! is known, only skipped commits are left, a verdict is unknown, `--max-steps` is
//! reached or Ctrl-C. Every step saves the whole state, so a resume repeats at most
//! the step that was under way.

use crate::build::{git, Build, Builder};
use crate::error::BisectError;
use crate::judge::{by_duets, duet_target, CountEnds};
use crate::measure::{self, Built, DuetAsk, OWNED};
use crate::search::{self, Next, Verdict};
use crate::state::{Asked, Commit, Ends, Metric, State, Step};
use plumb_report::history::{cause_text, causes_between, Cause};
use plumb_report::sequential::Settled;
use plumb_report::Version;
use plumb_store::Store;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The commits after `good` up to `bad`, oldest first, following first parents (a
/// merged branch is one step, as the merge that brought it in), with `good` first.
fn range(repo: &Path, good: &str, bad: &str) -> Result<Vec<Commit>, BisectError> {
    let resolve = |rev: &str, flag: &str| {
        git(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .map_err(|_| {
            BisectError::Refused(format!(
                "--{flag} {rev}: not a commit of {}",
                repo.display()
            ))
        })
    };
    let (g, b) = (resolve(good, "good")?, resolve(bad, "bad")?);
    if g == b {
        return Err(BisectError::Refused(format!(
            "--good {good} and --bad {bad} are the same commit {g}"
        )));
    }
    if git(repo, &["merge-base", "--is-ancestor", &g, &b]).is_err() {
        return Err(BisectError::Refused(format!(
            "--good {good} is not an ancestor of --bad {bad}: give a good commit older than the bad one on its history"
        )));
    }
    let log = git(
        repo,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H %s",
            &format!("{g}..{b}"),
        ],
    )?;
    let subject = git(repo, &["log", "-1", "--format=%s", &g])?;
    let mut commits = vec![Commit { hash: g, subject }];
    commits.extend(log.lines().map(|l| {
        let (hash, subject) = l.split_once(' ').unwrap_or((l, ""));
        Commit {
            hash: hash.to_string(),
            subject: subject.to_string(),
        }
    }));
    Ok(commits)
}

/// A share as a whole percent, with no "-0" for a share a hair below zero.
fn percent(x: f64) -> String {
    let p = format!("{:.0}", x * 100.0);
    if p == "-0" {
        "0".into()
    } else {
        p
    }
}

/// Checks what was asked and keeps the new bisect; returns its id and first state.
pub fn begin(store: &Store, asked: Asked, now: &str) -> Result<(i64, State), BisectError> {
    match asked.command.first().map(String::as_str) {
        Some("kv" | "sql" | "ib") => {}
        _ => {
            return Err(BisectError::Refused(
                "the command after -- must be kv, sql or ib with its arguments, e.g. -- kv \
                 --engine rocksdb --num 20000 --ops 20000 --benchmarks fillseq,compact,readrandom"
                    .into(),
            ))
        }
    }
    if let Some(w) = asked.command.iter().find(|w| {
        OWNED
            .iter()
            .any(|o| w == o || w.starts_with(&format!("{o}=")))
    }) {
        return Err(BisectError::Refused(format!(
            "{w} after --: plumb bisect gives the measured command its store, tags, JSON and \
             repeats itself; give --store to plumb bisect"
        )));
    }
    if asked.metric == Some(Metric::Instructions) && asked.command[0] != "kv" {
        return Err(BisectError::Refused(format!(
            "--metric instructions with `{}`: a server's instructions are spent in its own \
             process, which plumb icount does not see; use --metric duet",
            asked.command[0]
        )));
    }
    let repo = PathBuf::from(&asked.repo);
    let commits = range(&repo, &asked.good, &asked.bad)?;
    let state = State {
        commits,
        ends: None,
        steps: Vec::new(),
        status: "running".into(),
        result: None,
        moved: Vec::new(),
        asked,
    };
    let doc = to_doc(&state);
    let (g, b) = (
        &state.commits[0].hash,
        &state.commits[state.commits.len() - 1].hash,
    );
    let id = store.begin_bisect(&state.asked.repo, g, b, state.asked.change, &doc, now)?;
    Ok((id, state))
}

/// A kept bisect's state.
pub fn load(store: &Store, id: i64) -> Result<State, BisectError> {
    let r = store.bisect(id)?;
    serde_json::from_str(&r.state).map_err(|source| BisectError::State { id, source })
}

fn to_doc(s: &State) -> String {
    serde_json::to_string(s).expect("a bisect's state is plain data")
}

/// What a running bisect needs beside its state.
pub struct Bisect<'a> {
    /// Where the state is saved.
    pub store: &'a Store,
    /// The store's path or URL, for the measured children.
    pub store_path: &'a Path,
    /// The bisect's id.
    pub id: i64,
    /// Set by Ctrl-C: the step under way ends, the state stays saved.
    pub interrupt: &'a AtomicBool,
    /// Where progress lines go.
    pub progress: &'a mut dyn FnMut(&str),
    /// The time now, for the saved state (UTC, RFC 3339).
    pub now: fn() -> String,
}

impl Bisect<'_> {
    fn save(&self, s: &State) -> Result<(), BisectError> {
        Ok(self
            .store
            .save_bisect(self.id, &s.status, &to_doc(s), &(self.now)())?)
    }

    fn builder(s: &State) -> Builder {
        Builder {
            repo: PathBuf::from(&s.asked.repo),
            work: PathBuf::from(&s.asked.work),
            cache: PathBuf::from(&s.asked.cache),
            command: s.asked.build.clone(),
            jobs: s.asked.jobs,
        }
    }

    /// Builds a commit, saying so.
    fn build(&mut self, s: &State, i: usize) -> Result<Build, BisectError> {
        let c = &s.commits[i];
        let builder = Self::builder(s);
        if !builder.is_kept(&c.hash) {
            (self.progress)(&format!(
                "building {} {} (log: {})",
                c.short(),
                c.subject,
                builder.log_while_building(&c.hash).display()
            ));
        }
        let b = builder.build(&c.hash)?;
        match &b {
            Build::Built { secs, reused, .. } => (self.progress)(&format!(
                "built {} in {secs:.1} s{}",
                c.short(),
                if *reused { " (kept from before)" } else { "" }
            )),
            Build::Failed { secs, .. } => (self.progress)(&format!(
                "{} did not build ({secs:.1} s): skipped",
                c.short()
            )),
        }
        Ok(b)
    }

    /// Runs the bisect from where `s` stands until it has an answer, stops, or is
    /// interrupted; at most `max_steps` midpoints are judged this time.
    pub fn run(&mut self, s: &mut State, max_steps: Option<usize>) -> Result<(), BisectError> {
        let n = s.commits.len() - 1;
        let ends_builds = match self.end(s, 0).and_then(|g| Ok([g, self.end(s, n)?])) {
            Ok(b) => b,
            // Ctrl-C reaches the build too: its stop is the interrupt.
            Err(e) if e.is_interrupt() || self.interrupt.load(Ordering::Relaxed) => {
                self.save(s)?;
                return Err(BisectError::Interrupted(self.id));
            }
            Err(e) => return Err(e),
        };
        if s.ends.is_none() {
            match self.measure_ends(s, &ends_builds) {
                Ok(e) => s.ends = Some(e),
                Err(BisectError::Refused(why)) => {
                    s.status = "refused".into();
                    s.result = Some(why.clone());
                    self.save(s)?;
                    return Err(BisectError::Refused(why));
                }
                Err(e) if e.is_interrupt() || self.interrupt.load(Ordering::Relaxed) => {
                    self.save(s)?;
                    return Err(BisectError::Interrupted(self.id));
                }
                Err(e) => return Err(e),
            }
            self.save(s)?;
        }
        let mut judged_now = 0;
        loop {
            if self.interrupt.load(Ordering::Relaxed) {
                self.save(s)?;
                return Err(BisectError::Interrupted(self.id));
            }
            let i = match search::next(n, &s.judged()) {
                Next::Judge(i) => i,
                end => {
                    self.finish(s, end);
                    return self.save(s);
                }
            };
            if max_steps.is_some_and(|m| judged_now >= m) {
                s.status = "stopped".into();
                s.result = Some(format!(
                    "stopped after {judged_now} steps as asked (--max-steps); about {} left: \
                     `plumb bisect --resume {}` continues",
                    search::steps_left(n, &s.judged()),
                    self.id
                ));
                return self.save(s);
            }
            let step = match self.judge(s, i, &ends_builds) {
                Ok(step) => step,
                // Ctrl-C reaches the build and the measured children too: their
                // failure is the stop.
                Err(e) if e.is_interrupt() || self.interrupt.load(Ordering::Relaxed) => {
                    self.save(s)?;
                    return Err(BisectError::Interrupted(self.id));
                }
                Err(e) => return Err(e),
            };
            (self.progress)(&format!(
                "{} is {}: {}",
                s.commits[i].short(),
                step.verdict.as_str(),
                step.note
            ));
            s.steps.push(step);
            judged_now += 1;
            self.save(s)?;
        }
    }

    /// An end's build, which must succeed.
    fn end(&mut self, s: &State, i: usize) -> Result<(PathBuf, Vec<String>, f64), BisectError> {
        match self.build(s, i)? {
            Build::Built {
                bin, args, secs, ..
            } => Ok((bin, args, secs)),
            Build::Failed { log, .. } => Err(BisectError::EndBuild {
                end: if i == 0 { "good" } else { "bad" },
                commit: s.commits[i].hash.clone(),
                log,
            }),
        }
    }

    fn tag(&self, c: &Commit) -> String {
        format!("bisect-{}-{}", self.id, c.short())
    }

    /// Measures both ends and chooses the metric; refused when they do not differ.
    fn measure_ends(
        &mut self,
        s: &State,
        b: &[(PathBuf, Vec<String>, f64); 2],
    ) -> Result<Ends, BisectError> {
        let n = s.commits.len() - 1;
        let built = |i: usize, k: usize| Built {
            commit: &s.commits[i].hash,
            bin: &b[k].0,
            args: &b[k].1,
        };
        let (good, bad) = (built(0, 0), built(n, 1));
        let a = &s.asked;
        let valgrind = PathBuf::from(&a.valgrind);
        let countable = a.command[0] == "kv"
            && std::process::Command::new(&valgrind)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
        let mut why_duet = match (a.metric, countable) {
            (Some(Metric::Duet), _) => "asked (--metric duet)".to_string(),
            (_, false) if a.command[0] != "kv" => format!(
                "a `{}` command's instructions are spent in the server, which plumb icount does \
                 not see (and its A/B is interleaved: a server cannot be held to half the CPUs)",
                a.command[0]
            ),
            (_, false) => format!("{} does not run: nothing counts instructions", a.valgrind),
            (_, true) => String::new(),
        };
        if why_duet.is_empty() {
            (self.progress)("counting the ends' instructions per op (good twice, bad once)");
            let step = a.step.as_deref();
            let store = self.store_path;
            let (name, g1, r1) = measure::count(
                &good,
                &a.command,
                step,
                &valgrind,
                store,
                &self.tag(&s.commits[0]),
            )?;
            let (_, g2, r2) = measure::count(
                &good,
                &a.command,
                Some(&name),
                &valgrind,
                store,
                &self.tag(&s.commits[0]),
            )?;
            let (_, bv, r3) = measure::count(
                &bad,
                &a.command,
                Some(&name),
                &valgrind,
                store,
                &self.tag(&s.commits[n]),
            )?;
            match CountEnds::new(g1, g2, bv) {
                Ok(c) => {
                    return Ok(Ends {
                        metric: Metric::Instructions,
                        why: format!(
                            "the ends count {g1:.1} and {bv:.1} instructions per op \
                             ({:+.2}%), floor {:.1} (good's A/A difference {:.1})",
                            (bv / g1 - 1.0) * 100.0,
                            c.floor,
                            (g1 - g2).abs()
                        ),
                        step: name,
                        count: Some(c),
                        ratio: None,
                        ci: None,
                        target: None,
                        build_secs: [b[0].2, b[1].2],
                        runs: vec![r1, r2, r3],
                    })
                }
                Err(why) if a.metric == Some(Metric::Instructions) => {
                    return Err(BisectError::Refused(format!("{name}: {why}")))
                }
                Err(why) => why_duet = format!("{name}: {why}"),
            }
        }
        (self.progress)(&format!("judging by duet: {why_duet}; the ends first"));
        let ask = DuetAsk {
            command: &a.command,
            step: a.step.as_deref(),
            rounds: a.rounds,
            until: None,
            store: self.store_path,
            tag: format!("bisect-{}-ends", self.id),
        };
        let (st, runs) = measure::duet(&good, &bad, &ask, self.progress)?;
        let ratio = st.ratio.unwrap_or(1.0);
        if !st.significant {
            return Err(BisectError::Refused(format!(
                "the ends do not differ: {} bad/good {ratio:.3} ({}) in {} rounds of {}, \
                 p {}{}; nothing to search. More --rounds, a step where the change shows \
                 (--step), or another range",
                st.step,
                st.ci
                    .map_or("no interval".into(), |(l, h)| format!("{l:.3}-{h:.3}")),
                st.slices,
                if measure::is_duet(&a.command) {
                    "a duet"
                } else {
                    "an interleaved A/B"
                },
                st.p.map_or("n/a".into(), |p| format!("{p:.3}")),
                st.reach.as_ref().map_or(String::new(), |r| format!(
                    "; it could see {:.1}% or more",
                    r.mde * 100.0
                )),
            )));
        }
        Ok(Ends {
            metric: Metric::Duet,
            step: st.step.clone(),
            count: None,
            ratio: Some(ratio),
            ci: st.ci,
            target: Some(duet_target(ratio)),
            build_secs: [b[0].2, b[1].2],
            runs,
            why: why_duet,
        })
    }

    /// Builds and judges the commit at `i`.
    fn judge(
        &mut self,
        s: &State,
        i: usize,
        ends: &[(PathBuf, Vec<String>, f64); 2],
    ) -> Result<Step, BisectError> {
        let (bin, args, secs, reused) = match self.build(s, i)? {
            Build::Built {
                bin,
                args,
                secs,
                reused,
            } => (bin, args, secs, reused),
            Build::Failed { secs, log } => {
                return Ok(Step {
                    index: i,
                    verdict: Verdict::Skip,
                    build_secs: secs,
                    reused: false,
                    count: None,
                    vs_good: None,
                    vs_bad: None,
                    runs: Vec::new(),
                    note: format!("it did not build; log {log}"),
                })
            }
        };
        let e = s.ends.as_ref().expect("ends measured first");
        let a = &s.asked;
        let c = &s.commits[i];
        let mid = Built {
            commit: &c.hash,
            bin: &bin,
            args: &args,
        };
        let mut step = Step {
            index: i,
            verdict: Verdict::Unknown,
            build_secs: secs,
            reused,
            count: None,
            vs_good: None,
            vs_bad: None,
            runs: Vec::new(),
            note: String::new(),
        };
        if let Some(ce) = &e.count {
            let (_, v, run) = measure::count(
                &mid,
                &a.command,
                Some(&e.step),
                Path::new(&a.valgrind),
                self.store_path,
                &self.tag(c),
            )?;
            step.verdict = ce.judge(v);
            step.count = Some(v);
            step.vs_good = Some((v / ce.good, None));
            step.vs_bad = Some((ce.bad / v, None));
            step.runs = vec![run];
            step.note = format!(
                "{v:.1} instructions per op, {}% of the way from good ({:.1}) to bad ({:.1}); floor {:.1}",
                percent(ce.position(v)),
                ce.good,
                ce.bad,
                ce.floor
            );
            return Ok(step);
        }
        let n = s.commits.len() - 1;
        let good = Built {
            commit: &s.commits[0].hash,
            bin: &ends[0].0,
            args: &ends[0].1,
        };
        let bad = Built {
            commit: &s.commits[n].hash,
            bin: &ends[1].0,
            args: &ends[1].1,
        };
        let ask = |tag: String| DuetAsk {
            command: &a.command,
            step: Some(&e.step),
            rounds: a.rounds,
            until: e.target,
            store: self.store_path,
            tag,
        };
        let (g, gr) = measure::duet(
            &good,
            &mid,
            &ask(format!("{}-vs-good", self.tag(c))),
            self.progress,
        )?;
        let (b, br) = measure::duet(
            &mid,
            &bad,
            &ask(format!("{}-vs-bad", self.tag(c))),
            self.progress,
        )?;
        let word = |x: Option<Settled>| match x {
            Some(Settled::Changed) => "changed",
            Some(Settled::Within) => "within",
            _ => "not settled",
        };
        step.verdict = by_duets(g.settled, b.settled);
        step.vs_good = g.ratio.map(|r| (r, g.ci));
        step.vs_bad = b.ratio.map(|r| (r, b.ci));
        step.runs = gr.into_iter().chain(br).collect();
        step.note = format!(
            "against good {} ({}, {} rounds), bad against it {} ({}, {} rounds); target ±{:.1}%",
            g.ratio.map_or("n/a".into(), |r| format!("{r:.3}")),
            word(g.settled),
            g.slices,
            b.ratio.map_or("n/a".into(), |r| format!("{r:.3}")),
            word(b.settled),
            b.slices,
            e.target.unwrap_or(0.0) * 100.0
        );
        Ok(step)
    }

    /// The per-op costs that moved between the ends, as `plumb check` names a change's
    /// cost: counted, the count itself (exact, so no interval to judge it by; the
    /// times of a run under valgrind are valgrind's); by A/B, the costs of the good
    /// end's slices against the bad end's that differ significantly. None when a run
    /// no longer reads back.
    fn moved(&self, s: &State) -> Vec<String> {
        let Some(e) = &s.ends else {
            return Vec::new();
        };
        if let Some(c) = &e.count {
            return vec![cause_text(&Cause {
                cost: "instructions_op".into(),
                before: c.good,
                after: c.bad,
                ratio: c.bad / c.good,
                ci: None,
                share: None,
            })];
        }
        let (good, bad) = e.runs.split_at(e.runs.len() / 2);
        let version = |label: &str, ids: &[i64]| {
            Some(Version {
                label: label.into(),
                runs: ids
                    .iter()
                    .map(|id| self.store.run(*id).ok())
                    .collect::<Option<Vec<_>>>()?,
            })
        };
        let (Some(g), Some(b)) = (version("good", good), version("bad", bad)) else {
            return Vec::new();
        };
        causes_between(&g, &b, &e.step)
            .iter()
            .take(4)
            .map(cause_text)
            .collect()
    }

    /// The answer, from where the search ended.
    fn finish(&self, s: &mut State, end: Next) {
        s.moved = self.moved(s);
        let line = |c: &Commit| format!("{} {}", c.hash, c.subject);
        let (status, result) = match end {
            Next::Found(i) => ("found", format!("first bad commit: {}", line(&s.commits[i]))),
            Next::Among(v) => (
                "among",
                format!(
                    "the first bad commit is one of these (the ones before the last did not build): {}",
                    v.iter().map(|&i| s.commits[i].short().to_string()).collect::<Vec<_>>().join(", ")
                ),
            ),
            Next::Unknown(i) => (
                "unknown",
                format!(
                    "stopped at {}: it measures like neither end, so the range holds more than one \
                     change, or one too small to settle ({})",
                    line(&s.commits[i]),
                    s.steps.iter().rev().find(|x| x.index == i).map_or("", |x| x.note.as_str())
                ),
            ),
            Next::Judge(_) => unreachable!("finish is called on an end"),
        };
        s.status = status.into();
        s.result = Some(result);
    }
}
