//! A bisect's whole state, kept in the store as one JSON document after every step:
//! what was asked (so a resume needs nothing but the id), the range, the ends as
//! measured, and each judged commit with its build, its figures and its runs.

use crate::judge::CountEnds;
use crate::search::Verdict;
use serde::{Deserialize, Serialize};

/// One commit of the range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// Its full hash.
    pub hash: String,
    /// Its subject line.
    pub subject: String,
}

impl Commit {
    /// The short hash printed.
    pub fn short(&self) -> &str {
        &self.hash[..self.hash.len().min(10)]
    }
}

/// What a midpoint is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Instructions per op of the judged step, counted by `plumb icount`.
    Instructions,
    /// ops/s of the judged step, by `plumb ab --duet --until` against each end
    /// (interleaved rather than a duet for a server's `sql` or `ib`).
    Duet,
}

impl Metric {
    /// The word typed and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Instructions => "instructions",
            Metric::Duet => "duet",
        }
    }
}

/// What was asked, as given (revisions resolved to hashes in `State::commits`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The repository searched.
    pub repo: String,
    /// The good and bad revisions as typed.
    pub good: String,
    /// See `good`.
    pub bad: String,
    /// The measured command (`kv …`, `sql …`, `ib …`).
    pub command: Vec<String>,
    /// The build command (`sh -c` in the worktree).
    pub build: String,
    /// The judged step [default: the last measured one].
    pub step: Option<String>,
    /// The metric asked for; `None` chooses (instructions where the ends differ in them).
    pub metric: Option<Metric>,
    /// The most rounds a duet may take.
    pub rounds: u32,
    /// Where builds are kept by commit.
    pub cache: String,
    /// The worktree builds are made in.
    pub work: String,
    /// Parallel jobs a build may use.
    pub jobs: usize,
    /// The valgrind `plumb icount` runs.
    pub valgrind: String,
    /// The kept change it searches for (`--change`: `plumb check`'s, on the Changes
    /// page, which links to the bisect).
    #[serde(default)]
    pub change: Option<i64>,
}

/// The ends as measured: what every midpoint is judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ends {
    /// The metric chosen.
    pub metric: Metric,
    /// The step judged.
    pub step: String,
    /// The counts, for [`Metric::Instructions`].
    pub count: Option<CountEnds>,
    /// The ends' duet, bad/good, and its interval.
    pub ratio: Option<f64>,
    /// See `ratio`.
    pub ci: Option<(f64, f64)>,
    /// The midpoints' `--until` target (a fraction).
    pub target: Option<f64>,
    /// Seconds each end's build took.
    pub build_secs: [f64; 2],
    /// The runs the ends' figures rest on.
    pub runs: Vec<i64>,
    /// Why the metric was chosen, as a sentence.
    pub why: String,
}

/// One judged commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Its index in the range (0 good, n bad).
    pub index: usize,
    /// Its verdict.
    pub verdict: Verdict,
    /// Seconds its build took, and whether it was a kept one.
    pub build_secs: f64,
    /// See `build_secs`.
    pub reused: bool,
    /// Its instructions per op.
    pub count: Option<f64>,
    /// Against the good end: B/A (this commit over good) and the interval.
    pub vs_good: Option<(f64, Option<(f64, f64)>)>,
    /// Against the bad end: bad over this commit.
    pub vs_bad: Option<(f64, Option<(f64, f64)>)>,
    /// The runs its figures rest on.
    pub runs: Vec<i64>,
    /// What decided it, as a sentence.
    pub note: String,
}

/// Where a bisect stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// What was asked.
    pub asked: Asked,
    /// The range: 0 is the good end, the last the bad end.
    pub commits: Vec<Commit>,
    /// The ends as measured, once they are.
    pub ends: Option<Ends>,
    /// The commits judged, in order.
    pub steps: Vec<Step>,
    /// running, found, among, unknown, stopped or refused.
    pub status: String,
    /// The answer or why it stopped, as a sentence.
    pub result: Option<String>,
    /// The per-op costs that moved between the ends' runs, largest first, one line
    /// each (`usr_us_op 1.02 → 1.24 (×1.22 …)`): what the first bad commit changed,
    /// when the range holds one change.
    #[serde(default)]
    pub moved: Vec<String>,
}

/// One row of a bisect's table: an end or a judged commit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The commit's hash.
    pub hash: String,
    /// Its subject line.
    pub subject: String,
    /// Its build's seconds, "kept" when a kept build was used.
    pub build: String,
    /// "good end", "bad end" or the verdict.
    pub verdict: String,
    /// What was measured, as printed.
    pub figure: String,
    /// What decided it (empty for the ends).
    pub note: String,
    /// The runs its figure rests on.
    pub runs: Vec<i64>,
}

impl State {
    /// The rows of the bisect's table, ends first, each judged commit in the order it
    /// was judged: what the terminal prints and the served bisect page shows.
    pub fn rows(&self) -> Vec<Row> {
        let s = self;
        let mut rows = Vec::new();
        let row = |i: usize, build: String, verdict: &str, figure: String| Row {
            hash: s.commits[i].hash.clone(),
            subject: s.commits[i].subject.clone(),
            build,
            verdict: verdict.to_string(),
            figure,
            note: String::new(),
            runs: Vec::new(),
        };
        if let Some(e) = &s.ends {
            let n = s.commits.len() - 1;
            let fig = |i: usize| match (&e.count, e.ratio) {
                (Some(c), _) => format!("{:.1} instr/op", if i == 0 { c.good } else { c.bad }),
                (None, Some(r)) if i == n => format!("bad/good {r:.3}"),
                _ => String::new(),
            };
            for (i, k, word) in [(0, 0, "good end"), (n, 1, "bad end")] {
                let mut r = row(i, format!("{:.1}", e.build_secs[k]), word, fig(i));
                if k == 0 {
                    r.note = e.why.clone();
                    r.runs = e.runs.clone();
                }
                rows.push(r);
            }
        }
        for st in &s.steps {
            let ci = |x: &Option<(f64, Option<(f64, f64)>)>| {
                x.map_or(String::new(), |(r, ci)| match ci {
                    Some((l, h)) => format!("{r:.3} ({l:.3}-{h:.3})"),
                    None => format!("{r:.4}"),
                })
            };
            let fig = match st.count {
                Some(v) => format!("{v:.1} instr/op"),
                None if st.vs_good.is_some() => {
                    format!("vs good {}, bad vs it {}", ci(&st.vs_good), ci(&st.vs_bad))
                }
                None => String::new(),
            };
            let build = format!(
                "{:.1}{}",
                st.build_secs,
                if st.reused { " kept" } else { "" }
            );
            let mut r = row(st.index, build, st.verdict.as_str(), fig);
            r.note = st.note.clone();
            r.runs = st.runs.clone();
            rows.push(r);
        }
        rows
    }

    /// The bisect's table: each judged commit with its build time, verdict and figures,
    /// then where it ended.
    pub fn text(&self) -> String {
        let s = self;
        let mut t =
            plumb_report::table_left(&["commit", "build s", "verdict", "figure", "subject"]);
        for r in self.rows() {
            t.add_row(vec![
                r.hash.chars().take(10).collect(),
                r.build,
                r.verdict,
                r.figure,
                r.subject.chars().take(60).collect(),
            ]);
        }
        let mut out = format!("{t}\n");
        if let Some(e) = &s.ends {
            out.push_str(&format!(
                "judged by {} on {}: {}\n",
                e.metric.as_str(),
                e.step,
                e.why
            ));
        }
        out.push_str(&format!(
            "{}: {}\n",
            s.status,
            s.result.as_deref().unwrap_or("under way")
        ));
        if !s.moved.is_empty() {
            out.push_str("per-op costs that moved between the ends:\n");
            for m in &s.moved {
                out.push_str(&format!("  {m}\n"));
            }
        }
        out
    }

    /// The verdicts so far, as the search takes them.
    pub fn judged(&self) -> Vec<(usize, Verdict)> {
        self.steps.iter().map(|s| (s.index, s.verdict)).collect()
    }
}
