//! How a midpoint is judged against both ends, three ways (like good, like bad,
//! unknown), as Chromium's Pinpoint does; pure functions over what was measured, so
//! their rules are tested on figures with a known answer.
//!
//! - **Instruction counts** (`plumb icount`): exact, so one count a build. The floor
//!   is the A/A difference (the good end counted twice) or 0.025% of the count, the
//!   larger, times three, and the ends must differ by more than four floors. A midpoint
//!   is judged by where its count sits between the ends: within a quarter of the way
//!   from good (either side of it) is like good, three quarters of the way to bad or
//!   beyond bad is like bad, anything else is unknown. The quarters are at least a
//!   floor wide, so noise alone does not cross one. Past the bad end is bad: the
//!   ends' change is there, with more of it that a later commit took back, as in
//!   RocksDB's history (bench/README.md: ends 13.5 instructions apart, midpoints 35
//!   past the bad end, the first bad commit 38 below good). Counting again gives the
//!   same count, so an unknown stops at once: the range holds more than one change.
//! - **Duets** (`plumb ab --duet --until`): the midpoint against the good end, then
//!   against the bad end, each stopping once it is settled or at the cap. Like good
//!   when it is within a third of the ends' change of good and changed from bad; like
//!   bad the other way round; unknown otherwise, including "not settled at the cap".

use plumb_report::sequential::Settled;
use serde::{Deserialize, Serialize};

use crate::search::Verdict;

/// The ends' counts (instructions per op of the judged step) and the floor under them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CountEnds {
    /// The good end's count.
    pub good: f64,
    /// The bad end's count.
    pub bad: f64,
    /// What two counts of one build may differ by (absolute, instructions per op).
    pub floor: f64,
}

/// The smallest floor: 0.025% of the count, three times the drift seen between counts
/// of one build taken in processes an hour apart (0.3 of memory fillseq's 3,465 an op,
/// 1.0 of RocksDB readrandom's 12,759: both under 0.01%). Back to back they agree
/// closer (0.0-0.2), so three A/A differences alone would be a floor the next hour's
/// count crosses.
const MIN_FLOOR: f64 = 0.00025;

/// How far from an end a count may sit, as a share of the way between the ends, and
/// still be like that end.
const QUARTER: f64 = 0.25;

impl CountEnds {
    /// The ends from the good end counted twice (`good`, `again`) and the bad end once,
    /// or why a count cannot tell them apart (they differ by less than four floors).
    pub fn new(good: f64, again: f64, bad: f64) -> Result<CountEnds, String> {
        let floor = (3.0 * (good - again).abs()).max(MIN_FLOOR * good.abs());
        let ends = CountEnds { good, bad, floor };
        if (bad - good).abs() <= 4.0 * floor {
            return Err(format!(
                "the ends count {good:.1} and {bad:.1} instructions per op ({:+.3}%), within four \
                 floors of each other (floor {floor:.1}: three times the good end's A/A \
                 difference {:.1}, at least {:.2}% of its count)",
                (bad / good - 1.0) * 100.0,
                (good - again).abs(),
                MIN_FLOOR * 100.0
            ));
        }
        Ok(ends)
    }

    /// Where a count sits between the ends: 0 at good, 1 at bad.
    pub fn position(&self, mid: f64) -> f64 {
        (mid - self.good) / (self.bad - self.good)
    }

    /// The midpoint's verdict from its count: like good within a quarter of the way
    /// from it, like bad from three quarters of the way on (past bad included).
    pub fn judge(&self, mid: f64) -> Verdict {
        let p = self.position(mid);
        if p.abs() <= QUARTER {
            Verdict::Good
        } else if p >= 1.0 - QUARTER {
            Verdict::Bad
        } else {
            Verdict::Unknown
        }
    }
}

/// The midpoint's verdict from its two duets' settled states: against the good end and
/// against the bad end (`None`: the duet did not settle within the cap).
pub fn by_duets(vs_good: Option<Settled>, vs_bad: Option<Settled>) -> Verdict {
    match (vs_good, vs_bad) {
        (Some(Settled::Within), Some(Settled::Changed)) => Verdict::Good,
        (Some(Settled::Changed), Some(Settled::Within)) => Verdict::Bad,
        _ => Verdict::Unknown,
    }
}

/// The `--until` target of a midpoint's duets: a third of the ends' change (B/A as
/// measured), so "within" one end means "not the change", however large it is.
pub fn duet_target(ends_ratio: f64) -> f64 {
    (ends_ratio.ln().abs() / 3.0).exp_m1()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_judged_by_where_it_sits_between_the_ends() {
        let e = CountEnds::new(2000.0, 2000.2, 2400.0).unwrap();
        assert!((e.floor - 0.6).abs() < 1e-9, "{}", e.floor); // 3 × 0.2 beats 0.025% of 2000
        assert_eq!(e.judge(2000.5), Verdict::Good);
        assert_eq!(e.judge(2100.0), Verdict::Good); // a quarter of the way, just
        assert_eq!(e.judge(1900.0), Verdict::Good); // a quarter away from bad
        assert_eq!(e.judge(2100.5), Verdict::Unknown);
        assert_eq!(e.judge(1899.0), Verdict::Unknown);
        assert_eq!(e.judge(2300.0), Verdict::Bad);
        assert_eq!(e.judge(2399.2), Verdict::Bad);
        // Past the bad end: the ends' change and more, that a later commit took back.
        assert_eq!(e.judge(2600.0), Verdict::Bad);
        // Halfway: two changes in the range.
        assert_eq!(e.judge(2200.0), Verdict::Unknown);
        assert!((e.position(2200.0) - 0.5).abs() < 1e-12);
        // The same rules when the bad end counts fewer (a change that made it faster).
        let down = CountEnds::new(2000.0, 2000.0, 1600.0).unwrap();
        assert_eq!(down.judge(1950.0), Verdict::Good);
        assert_eq!(down.judge(1500.0), Verdict::Bad);
        assert_eq!(down.judge(1800.0), Verdict::Unknown);
        // tests/bisect.rs's two changes: fillseq on the memory engine counted 2,438.2,
        // 2,940.1 and 3,465.5 an op at value sizes 100, 1000 and 2000 (AMD EPYC).
        let t = CountEnds::new(2438.2, 2438.2, 3465.5).unwrap();
        assert_eq!(t.judge(2940.1), Verdict::Unknown);
    }

    #[test]
    fn a_wide_a_a_difference_widens_the_floor() {
        let e = CountEnds::new(1000.0, 1010.0, 1500.0).unwrap();
        assert_eq!(e.floor, 30.0);
        assert!(CountEnds::new(1000.0, 1010.0, 1110.0).is_err());
        assert!(CountEnds::new(1000.0, 1010.0, 1130.0).is_ok());
    }

    #[test]
    fn ends_that_count_alike_are_refused_with_the_floor() {
        let e = CountEnds::new(2000.0, 2000.0, 2001.5).unwrap_err();
        assert!(e.contains("within four floors"), "{e}");
        assert!(e.contains("+0.075%") && e.contains("floor 0.5"), "{e}");
        // RocksDB readrandom over 18 main-branch commits (bench/README.md): 13.5
        // instructions an op apart is a search, over a floor of 3.2; 12 would not be.
        let e = CountEnds::new(12759.3, 12759.3, 12745.8).unwrap();
        assert!((e.floor - 3.189825).abs() < 1e-6, "{}", e.floor);
        assert!(CountEnds::new(12759.3, 12759.3, 12747.3).is_err());
        // A regression that lowers the count (a faster bad end) is as good a search.
        assert!(CountEnds::new(2000.0, 2000.0, 1800.0).is_ok());
    }

    #[test]
    fn duets_say_good_or_bad_only_when_both_agree() {
        use Settled::*;
        assert_eq!(by_duets(Some(Within), Some(Changed)), Verdict::Good);
        assert_eq!(by_duets(Some(Changed), Some(Within)), Verdict::Bad);
        for (g, b) in [
            (Some(Changed), Some(Changed)),
            (Some(Within), Some(Within)),
            (Some(Open), Some(Changed)),
            (None, Some(Within)),
            (Some(Within), None),
        ] {
            assert_eq!(by_duets(g, b), Verdict::Unknown, "{g:?} {b:?}");
        }
    }

    #[test]
    fn the_duet_target_is_a_third_of_the_change_either_way() {
        let t = duet_target(1.331);
        assert!((t - 0.1).abs() < 1e-9, "{t}");
        assert!((duet_target(1.0 / 1.331) - t).abs() < 1e-9);
    }
}
