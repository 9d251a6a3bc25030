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
