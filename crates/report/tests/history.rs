//! `plumb history` on made-up series: a step change with a known cause at a known
//! point, a flat series, and the reports of both.

mod fixtures;
use fixtures::{fig, run, version};
use plumb_report::changepoint::Options;
use plumb_report::history::{history, html, markdown, text};

/// Deterministic ±2% noise.
fn noise(i: usize) -> f64 {
    1.0 + 0.02 * (((i * 7919) % 13) as f64 / 6.0 - 1.0)
}

/// `points` points of 3 repeats; from `change_at` on, each op costs 2.5 µs more user
/// CPU (10 µs → 12.5 µs per op, so 100k → 80k ops/s on one thread) and reads 4 KB more.
fn series(points: usize, change_at: usize) -> Vec<plumb_report::Version> {
    let mut id = 0;
    (0..points)
        .map(|p| {
            let runs = (0..3)
                .map(|_| {
                    id += 1;
                    let n = noise(id as usize);
                    let slow = p >= change_at;
                    let usr = if slow { 12.5 } else { 10.0 } * n;
                    let mut r = run(
                        id,
                        &format!("p{p}"),
                        &[fig("readrandom", 1e6 / usr, Some(usr + 0.5))],
                    );
                    let s = &mut r.steps[0].0.summary;
                    s.usr_us_op = Some(usr);
                    s.sys_us_op = Some(0.5 * noise(id as usize + 3));
                    s.rkb_op = Some(if slow { 8.0 } else { 4.0 } * noise(id as usize + 5));
                    r.steps[0].0.config = serde_json::json!({"threads": 1});
                    r
                })
                .collect();
            version(&format!("v{p}"), runs)
        })
        .collect()
}

#[test]
fn a_step_change_is_found_where_it_is_and_explained_by_the_cost_that_moved() {
    let h = history(&series(9, 5), &Options::default());
    let s = &h.steps[0];
    assert_eq!(s.step, "readrandom");
    assert_eq!(s.changes.len(), 1, "{:#?}", s.changes);
    let c = &s.changes[0];
    assert_eq!(c.point.index, 5);
    assert!(c.regression);
    assert!((c.point.ratio - 0.8).abs() < 0.03, "{}", c.point.ratio);
    assert_eq!(c.between, ("v4".to_string(), "v5".to_string()));
    // usr_us_op accounts for all of the 2.5 µs: named first, share ≈ 1.
    assert_eq!(c.causes[0].cost, "usr_us_op", "{:#?}", c.causes);
    let share = c.causes[0].share.unwrap();
    assert!((share - 1.0).abs() < 0.1, "{share}");
    // rkb_op doubled: named, as a count, after the time costs.
    let rkb = c
        .causes
        .iter()
        .find(|x| x.cost == "rkb_op")
        .expect("rkb_op moved");
    assert!(rkb.share.is_none() && (rkb.ratio - 2.0).abs() < 0.1);
    // sys_us_op did not move: not a cause.
    assert!(
        c.causes.iter().all(|x| x.cost != "sys_us_op"),
        "{:#?}",
        c.causes
    );
    // No PMU in the fixtures: the counters say so rather than explain.
    assert!(c.counters.starts_with("unsupported"), "{}", c.counters);

    let t = text(&h);
    assert!(t.contains("change at [5]: slower between v4 and v5"), "{t}");
    assert!(
        t.contains("usr_us_op") && t.contains("of the change in time/op"),
        "{t}"
    );
    let md = markdown(&h);
    assert!(md.contains("| readrandom |") && md.contains("▲"), "{md}");
    let page = html(&h, &[], &Default::default());
    assert!(page.contains("class=\"change\"") && page.contains("usr_us_op"));
}

#[test]
fn a_flat_series_has_no_change_point() {
    let h = history(&series(9, 99), &Options::default());
    assert!(h.steps[0].changes.is_empty(), "{:#?}", h.steps[0].changes);
    assert!(text(&h).contains("no change point"));
    assert!(markdown(&h).contains("None: no step changed"));
}

#[test]
fn two_changes_each_get_their_own_segments() {
    // Slower from 4, back to the old speed from 8.
    let mut v = series(12, 4);
    let fast = series(12, 99);
    for p in 8..12 {
        v[p] = fast[p].clone();
        v[p].label = format!("v{p}");
    }
    let h = history(&v, &Options::default());
    let idx: Vec<usize> = h.steps[0].changes.iter().map(|c| c.point.index).collect();
    assert_eq!(idx, vec![4, 8]);
    assert!(h.steps[0].changes[0].regression && !h.steps[0].changes[1].regression);
    // The second change's cause is the first's, undone: usr_us_op fell.
    let back = &h.steps[0].changes[1].causes[0];
    assert_eq!(back.cost, "usr_us_op");
    assert!(back.ratio < 0.85, "{back:?}");
}
