//! The search alone, with no git, build or measurement in it, so its rules are tested
//! on made-up verdicts: which commit to judge next, and when the first bad one is
//! known. Commits are indexed 0 (good) to n (bad). As git bisect does, a commit that
//! does not build is skipped and the next nearest the middle is taken; when skipped
//! commits are all that is left, the first bad commit is one of them or the bad end
//! of the range, and the search says which. Unlike git bisect, a verdict may be
//! "unknown": the search stops there rather than guess, since a wrong guess sends every
//! later step into a range the change is not in.

use serde::{Deserialize, Serialize};

/// What one commit was judged to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It measures like the good end.
    Good,
    /// It measures like the bad end.
    Bad,
    /// It did not build (or its build left no binary): not judged.
    Skip,
    /// Neither: like both, like neither, or not settled within the cap.
    Unknown,
}

impl Verdict {
    /// The word printed and stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Good => "good",
            Verdict::Bad => "bad",
            Verdict::Skip => "skip",
            Verdict::Unknown => "unknown",
        }
    }
}

/// What the search does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Judge the commit at this index.
    Judge(usize),
    /// The first bad commit.
    Found(usize),
    /// The first bad commit is one of these (skipped commits, then the first bad one).
    Among(Vec<usize>),
    /// The commit at this index was judged unknown: the search stops there.
    Unknown(usize),
}

/// The range still open: the newest good index and the oldest bad one, from the
/// verdicts given so far (`judged`, index and verdict, in any order).
pub fn bounds(n: usize, judged: &[(usize, Verdict)]) -> (usize, usize) {
    let hi = judged
        .iter()
        .filter(|(_, v)| *v == Verdict::Bad)
        .map(|(i, _)| *i)
        .fold(n, usize::min);
    let lo = judged
        .iter()
        .filter(|(i, v)| *v == Verdict::Good && *i < hi)
        .map(|(i, _)| *i)
        .fold(0, usize::max);
    (lo, hi)
}

/// The next step over commits 0 (good) to `n` (bad), after the verdicts `judged`.
pub fn next(n: usize, judged: &[(usize, Verdict)]) -> Next {
    let (lo, hi) = bounds(n, judged);
    let is = |i: usize, v: Verdict| judged.iter().any(|&(j, w)| j == i && w == v);
    if let Some(&(i, _)) = judged
        .iter()
        .find(|&&(i, v)| v == Verdict::Unknown && i > lo && i < hi)
    {
        return Next::Unknown(i);
    }
    let open: Vec<usize> = (lo + 1..hi).filter(|&i| !is(i, Verdict::Skip)).collect();
    if open.is_empty() {
        let skipped: Vec<usize> = (lo + 1..hi).collect();
        return if skipped.is_empty() {
            Next::Found(hi)
        } else {
            Next::Among(skipped.into_iter().chain([hi]).collect())
        };
    }
    // Nearest the middle of the open range; on a tie the older one, as git bisect.
    let mid2 = lo + hi; // twice the middle, so the halves stay exact
    let pick = open
        .into_iter()
        .min_by_key(|&i| (2 * i).abs_diff(mid2))
        .expect("open is not empty");
    Next::Judge(pick)
}

/// About how many more commits to judge: log2 of the open range's size.
pub fn steps_left(n: usize, judged: &[(usize, Verdict)]) -> usize {
    let (lo, hi) = bounds(n, judged);
    let mut left = hi - lo;
    let mut steps = 0;
    while left > 1 {
        left = left.div_ceil(2);
        steps += 1;
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Runs the search to its end with a judge that knows the answer.
    fn search(n: usize, judge: impl Fn(usize) -> Verdict) -> (Next, usize) {
        let mut judged = Vec::new();
        loop {
            match next(n, &judged) {
                Next::Judge(i) => {
                    assert!(i > 0 && i < n, "judges only inside the range: {i}");
                    assert!(judged.iter().all(|&(j, _)| j != i), "{i} judged twice");
                    judged.push((i, judge(i)));
                }
                end => return (end, judged.len()),
            }
        }
    }

    #[test]
    fn thirty_two_commits_take_five_steps() {
        for k in 1..=32 {
            let (end, steps) = search(32, |i| if i >= k { Verdict::Bad } else { Verdict::Good });
            assert_eq!(end, Next::Found(k));
            assert!(steps <= 5, "k = {k}: {steps} steps");
        }
    }

    #[test]
    fn a_commit_that_does_not_build_is_stepped_around() {
        // The regression enters at 21; 16 (the first midpoint) does not build.
        let (end, _) = search(32, |i| match i {
            16 => Verdict::Skip,
            i if i >= 21 => Verdict::Bad,
            _ => Verdict::Good,
        });
        assert_eq!(end, Next::Found(21));
    }

    #[test]
    fn when_only_skipped_commits_are_left_it_names_them() {
        let (end, _) = search(8, |i| match i {
            4 | 5 => Verdict::Skip,
            i if i >= 5 => Verdict::Bad,
            _ => Verdict::Good,
        });
        assert_eq!(end, Next::Among(vec![4, 5, 6]));
    }

    #[test]
    fn an_unknown_verdict_stops_the_search_there() {
        let (end, steps) = search(32, |i| {
            if i == 16 {
                Verdict::Unknown
            } else {
                Verdict::Good
            }
        });
        assert_eq!((end, steps), (Next::Unknown(16), 1));
    }

    #[test]
    fn a_range_of_one_commit_needs_no_step() {
        assert_eq!(next(1, &[]), Next::Found(1));
        assert_eq!(steps_left(1, &[]), 0);
        assert_eq!(steps_left(32, &[]), 5);
    }

    proptest! {
        #[test]
        fn it_finds_the_commit_or_names_the_skipped_ones_around_it(
            n in 1usize..80,
            k_frac in 0.0f64..1.0,
            skips in proptest::collection::btree_set(1usize..80, 0..10),
        ) {
            let k = 1 + ((n - 1) as f64 * k_frac) as usize;
            let (end, steps) = search(n, |i| {
                if skips.contains(&i) { Verdict::Skip }
                else if i >= k { Verdict::Bad } else { Verdict::Good }
            });
            match end {
                Next::Found(f) => prop_assert_eq!(f, k),
                Next::Among(c) => {
                    prop_assert!(c.contains(&k), "{:?} holds {}", c, k);
                    prop_assert!(c[..c.len() - 1].iter().all(|i| skips.contains(i)));
                }
                other => prop_assert!(false, "ended {:?}", other),
            }
            prop_assert!(steps < n.max(1));
        }
    }
}
