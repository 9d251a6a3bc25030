//! The interleaved A/B verdict on made-up slices.

mod fixtures;
use fixtures::{fig, run, version};
use plumb_report::ab::{interleaved, text};

fn side(label: &str, first_id: i64, level: f64) -> plumb_report::Version {
    let runs = (0..5)
        .map(|k| {
            let wobble = 1.0 + 0.01 * ((k * 3 % 5) as f64 - 2.0);
            run(
                first_id + k,
                label,
                &[
                    fig("fillseq", 50_000.0 * wobble, None),
                    fig("readrandom", level * wobble, None),
                ],
            )
        })
        .collect();
    version(label, runs)
}

#[test]
fn a_ten_percent_difference_across_five_slices_is_found_exactly() {
    let a = side("A", 1, 100_000.0);
    let b = side("B", 10, 90_000.0);
    let steps = interleaved(&a, &b, 0.05);
    let rr = steps.iter().find(|s| s.step == "readrandom").unwrap();
    assert!((rr.ratio.unwrap() - 0.9).abs() < 1e-9, "{rr:?}");
    // Every B slice is below every A slice: only that split and its mirror are as
    // extreme, out of C(10,5) = 252.
    assert!((rr.p.unwrap() - 2.0 / 252.0).abs() < 1e-12, "{rr:?}");
    assert!(rr.significant && !rr.writes);
    let (lo, hi) = rr.ci.unwrap();
    assert!(lo < 0.9 && hi > 0.9 && hi < 1.0);
    let fill = steps.iter().find(|s| s.step == "fillseq").unwrap();
    assert!(
        fill.writes,
        "fillseq writes: flagged as unfair to interleave"
    );
    let t = text(&steps, "A", "B");
    assert!(t.contains("B slower") && t.contains("writes"), "{t}");
}

#[test]
fn the_same_level_on_both_sides_is_no_difference() {
    let a = side("A", 1, 100_000.0);
    let b = side("B", 10, 100_000.0);
    let steps = interleaved(&a, &b, 0.05);
    let rr = steps.iter().find(|s| s.step == "readrandom").unwrap();
    assert!(!rr.significant, "{rr:?}");
    assert!(rr.p.unwrap() > 0.5, "{rr:?}");
    assert!(text(&steps, "A", "B").contains("no difference beyond the noise"));
}

#[test]
fn duet_pairs_cancel_a_drift_both_sides_share() {
    use plumb_report::ab::{judge, Design, Judge};
    use plumb_report::sequential::{Rule, Settled};
    // The machine's level swings 30% from round to round; within a round B is 3%
    // below A. Judged as two samples the swing hides it; judged in pairs it is plain.
    let levels = [
        100_000.0, 70_000.0, 130_000.0, 90_000.0, 115_000.0, 80_000.0,
    ];
    let mk = |label: &str, first: i64, f: f64| {
        let runs = levels
            .iter()
            .enumerate()
            .map(|(k, l)| {
                let wobble = 1.0 + 0.002 * ((k * 3 % 5) as f64 - 2.0);
                run(
                    first + k as i64,
                    label,
                    &[fig("readrandom", l * f * wobble, None)],
                )
            })
            .collect();
        version(label, runs)
    };
    let (a, b) = (mk("A", 1, 1.0), mk("B", 20, 0.97));
    let two = &judge(&a, &b, Design::Interleaved, Judge::Fixed(0.05))[0];
    assert!(!two.significant, "{two:?}");
    let duet = &judge(&a, &b, Design::Duet, Judge::Fixed(0.05))[0];
    assert!(duet.significant && duet.p.unwrap() < 0.001, "{duet:?}");
    assert!((duet.ratio.unwrap() - 0.97).abs() < 0.005, "{duet:?}");
    assert_eq!((duet.slices, duet.design), (6, Design::Duet));
    let t = text(std::slice::from_ref(duet), "A", "B");
    assert!(t.contains("B slower") && t.contains("duet"), "{t}");

    // A sequential look: the level is what the rule spends at 6 of 20 slices, and the
    // verdict is its interval, with no fixed-count p.
    let rule = Rule {
        alpha: 0.05,
        target: 0.02,
        min: 3,
        cap: 20,
        power: false,
    };
    let look = &judge(&a, &b, Design::Duet, Judge::Look(rule))[0];
    assert!((look.level - rule.level(3)).abs() < 1e-12 && look.level > 0.99);
    assert_eq!(look.p, None);
    assert_eq!(look.settled, Some(Settled::Changed), "{look:?}");
    let same = &judge(&a, &mk("B", 20, 1.0), Design::Duet, Judge::Look(rule))[0];
    assert_eq!(same.settled, Some(Settled::Within), "{same:?}");
    assert!(!same.significant && same.precision.unwrap() <= 0.02);
    let t = text(std::slice::from_ref(same), "A", "B");
    assert!(
        t.contains("no change beyond ±") && t.contains("last look"),
        "{t}"
    );
}

#[test]
fn a_ratio_of_outside_figures_is_judged_like_plumbs_own_and_bad_input_is_named() {
    use plumb_report::ab::ratio_of;
    use plumb_report::sequential::Settled;
    let base = [100.0, 102.0, 98.0, 101.0, 99.0];
    let other = [120.0, 123.0, 118.0, 121.0, 119.0];
    let v = ratio_of(&base, &other, false, None, 3).unwrap();
    assert!((v.ratio.value - 1.2).abs() < 1e-9, "medians 120/100: {v:?}");
    assert_eq!(v.level, 0.95);
    assert!(v.ratio.significant() && v.p.unwrap() < 0.05, "{v:?}");
    assert_eq!((v.rule, v.settled), (None, None));
    // Paired: every pair is 1.2 apart whatever the drift, so the interval is tight.
    let drift: Vec<f64> = base.iter().map(|b| b * 1.2).collect();
    let p = ratio_of(&base, &drift, true, Some((0.02, 10)), 3).unwrap();
    assert!((p.ratio.value - 1.2).abs() < 1e-9, "{p:?}");
    assert_eq!(p.settled, Some(Settled::Changed));
    // A look before the cap spends only part of alpha: its interval is wider than 95%.
    assert!(p.level > 0.95 && p.level < 1.0, "{p:?}");
    // Before the first look there is nothing to spend.
    let early = ratio_of(&base[..2], &other[..2], false, Some((0.02, 10)), 3).unwrap();
    assert_eq!((early.level, early.settled), (0.95, Some(Settled::Open)));
    let e = ratio_of(&base, &[1.0, -2.0], false, None, 3).unwrap_err();
    assert_eq!(
        e,
        "--base/--other: -2 is not a positive number; give each repeat's figure"
    );
    let e = ratio_of(&base, &other[..3], true, None, 3).unwrap_err();
    assert!(
        e.starts_with("--paired: --base has 5 values and --other 3"),
        "{e}"
    );
    let e = ratio_of(&base, &other, false, Some((0.02, 2)), 3).unwrap_err();
    assert!(e.starts_with("--cap 2: the looks run from 3"), "{e}");
}
