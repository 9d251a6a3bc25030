//! How a midpoint is judged against both ends, three ways (like good, like bad,
//! unknown), as Chromium's Pinpoint does; pure functions over what was measured, so
//! their rules are tested on figures with a known answer.
//!
//! - **Instruction counts** (`plumb icount`): exact, so one count a build. The floor
//!   is the A/A difference (the good end counted twice) or 0.05% of the count, the
//!   larger, times three. A midpoint within the floor of one end and beyond it from
//!   the other is like that end; anything else is unknown. Counting again gives the
//!   same count, so an unknown stops at once: the range holds more than one change, or
//!   the count moved for a reason the ends do not share.
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

/// The smallest floor: 0.05% of the count. Two counts of one build back to back agree
/// closer than that (0.0-0.2 instructions), but counts in other processes an hour apart
/// moved by up to 0.3 (memory fillseq, 3,465 an op) and 1.0 (RocksDB readrandom,
/// 12,759): a floor of three A/A differences alone (0.24) called a midpoint 0.3 from
/// the bad end unknown.
const MIN_FLOOR: f64 = 0.0005;

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

    /// The midpoint's verdict from its count.
    pub fn judge(&self, mid: f64) -> Verdict {
        let near_good = (mid - self.good).abs() <= self.floor;
        let near_bad = (mid - self.bad).abs() <= self.floor;
        match (near_good, near_bad) {
            (true, false) => Verdict::Good,
            (false, true) => Verdict::Bad,
            _ => Verdict::Unknown,
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
    fn a_count_near_one_end_is_like_it() {
        let e = CountEnds::new(2000.0, 2000.2, 2400.0).unwrap();
        assert_eq!(e.floor, 1.0); // 0.05% of 2000 beats 3 × 0.2
        assert_eq!(e.judge(2000.5), Verdict::Good);
        assert_eq!(e.judge(2399.2), Verdict::Bad);
        assert_eq!(e.judge(2398.5), Verdict::Unknown);
        // Halfway: two changes in the range, or one that is not the ends'.
        assert_eq!(e.judge(2200.0), Verdict::Unknown);
        assert!((e.position(2200.0) - 0.5).abs() < 1e-12);
        // Beyond both ends is not like either.
        assert_eq!(e.judge(2600.0), Verdict::Unknown);
    }

    #[test]
    fn a_wide_a_a_difference_widens_the_floor() {
        let e = CountEnds::new(1000.0, 1010.0, 1500.0).unwrap();
        assert_eq!(e.floor, 30.0);
        assert_eq!(e.judge(1025.0), Verdict::Good);
        assert_eq!(e.judge(1035.0), Verdict::Unknown);
    }

    #[test]
    fn ends_that_count_alike_are_refused_with_the_floor() {
        let e = CountEnds::new(2000.0, 2000.0, 2003.0).unwrap_err();
        assert!(e.contains("within four floors"), "{e}");
        assert!(e.contains("+0.150%"), "{e}");
        // RocksDB readrandom across afc922bf5f (bench/README.md): 38.4 instructions an op
        // fewer is a search; the 13.5 of a range holding two changes is not.
        let e = CountEnds::new(12759.3, 12759.2, 12720.9).unwrap();
        assert!((e.floor - 6.37965).abs() < 1e-6, "{}", e.floor);
        assert!(CountEnds::new(12759.3, 12759.3, 12745.8).is_err());
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
