//! plumb's YCSB core workload against values YCSB's own classes printed
//! (`fixtures/ycsb-vectors.txt`, made by `scripts/ycsb-vectors.sh`): hashes and key
//! names exactly, generator constants to 1e-12 relative. A port that drifts from YCSB
//! here loads other keys or skews differently, and its results stop being YCSB's.

use plumb_workloads::ycsb::{
    build_key_name, fnvhash64, zeta, CoreParams, Hotspot, ScrambledZipfian, SkewedLatest, Zipfian,
};
use rand::rngs::SmallRng;
use rand::SeedableRng;
use std::collections::HashMap;

const FIXTURE: &str = include_str!("fixtures/ycsb-vectors.txt");

/// The fixture's vectors of one kind, each as its positional fields and its `k=v` ones.
fn vectors(kind: &str) -> Vec<(Vec<&'static str>, HashMap<&'static str, &'static str>)> {
    let v: Vec<_> = FIXTURE
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut it = l.split(' ');
            (it.next() == Some(kind)).then(|| {
                let (mut pos, mut named) = (Vec::new(), HashMap::new());
                for f in it {
                    match f.split_once('=') {
                        Some((k, v)) => {
                            named.insert(k, v);
                        }
                        None => pos.push(f),
                    }
                }
                (pos, named)
            })
        })
        .collect();
    assert!(!v.is_empty(), "the fixture has no {kind} vectors");
    v
}

fn int(s: &str) -> i64 {
    s.parse().unwrap_or_else(|_| panic!("not an integer: {s}"))
}

fn float(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
}

/// Equal to 1e-12 relative, NaN matching NaN (YCSB's eta is 0/0 for two items).
fn close(what: &str, got: f64, want: f64) {
    if want.is_nan() {
        assert!(got.is_nan(), "{what}: {got}, YCSB has NaN");
        return;
    }
    let tol = 1e-12 * want.abs().max(f64::MIN_POSITIVE);
    assert!(
        (got - want).abs() <= tol,
        "{what}: plumb {got}, YCSB {want}"
    );
}

/// A zipfian's state against YCSB's fields.
fn same_zipfian(what: &str, z: &Zipfian, want: &HashMap<&str, &str>) {
    assert_eq!(z.items(), int(want["items"]), "{what}: items");
    assert_eq!(z.base(), int(want["base"]), "{what}: base");
    assert_eq!(
        z.count_for_zeta(),
        int(want["countforzeta"]),
        "{what}: countforzeta"
    );
    close(&format!("{what}: theta"), z.theta(), float(want["theta"]));
    close(
        &format!("{what}: zeta2theta"),
        z.zeta2theta(),
        float(want["zeta2theta"]),
    );
    close(&format!("{what}: alpha"), z.alpha(), float(want["alpha"]));
    close(&format!("{what}: zetan"), z.zetan(), float(want["zetan"]));
    close(&format!("{what}: eta"), z.eta(), float(want["eta"]));
}

#[test]
fn fixture_names_the_ycsb_commit_it_came_from() {
    let first = FIXTURE.lines().next().unwrap();
    let sha = first
        .split_whitespace()
        .find(|w| w.len() == 40 && w.chars().all(|c| c.is_ascii_hexdigit()));
    assert!(sha.is_some(), "header without a YCSB commit: {first}");
}

#[test]
fn fnvhash64_matches_ycsb() {
    let v = vectors("fnv");
    assert!(v.len() >= 200);
    for (p, _) in v {
        assert_eq!(fnvhash64(int(p[0])), int(p[1]), "fnvhash64({})", p[0]);
    }
}

#[test]
fn key_names_match_ycsb() {
    let v = vectors("key");
    assert!(v.len() > 4000);
    for (p, _) in v {
        let (k, pad) = (int(p[0]), int(p[1]) as u32);
        let ordered = match p[2] {
            "ordered" => true,
            "hashed" => false,
            o => panic!("insert order {o}"),
        };
        assert_eq!(build_key_name(k, pad, ordered), p[3], "{p:?}");
    }
}

#[test]
fn zeta_matches_ycsb() {
    for (p, _) in vectors("zetastatic") {
        let (n, theta) = (int(p[0]), float(p[1]));
        close(&format!("zeta({n}, {theta})"), zeta(n, theta), float(p[2]));
    }
}

#[test]
fn zipfian_constants_match_ycsb() {
    for (p, named) in vectors("zipf") {
        let (min, max, theta) = (int(p[0]), int(p[1]), float(p[2]));
        same_zipfian(
            &format!("zipfian {min}..={max} θ {theta}"),
            &Zipfian::new(min, max, theta),
            &named,
        );
    }
}

#[test]
fn incremental_zeta_matches_ycsb() {
    let mut rng = SmallRng::seed_from_u64(1);
    for (p, named) in vectors("zipfgrow") {
        let (items, grown) = (int(p[0]), int(p[1]));
        let mut z = Zipfian::new(0, items - 1, 0.99);
        let v = z.next_of(&mut rng, grown);
        assert!((0..grown).contains(&v));
        same_zipfian(&format!("zipfian {items} grown to {grown}"), &z, &named);
    }
}

#[test]
fn scrambled_zipfian_matches_ycsb() {
    for (p, named) in vectors("scrambledgen") {
        let s = ScrambledZipfian::new(int(p[0]), int(p[1]), 0.99);
        same_zipfian(&format!("scrambled {}..={}", p[0], p[1]), s.ranks(), &named);
    }
    for (p, _) in vectors("scrambled") {
        let s = ScrambledZipfian::new(int(p[0]), int(p[1]), 0.99);
        assert_eq!(s.scatter(int(p[2])), int(p[3]), "{p:?}");
    }
}

#[test]
fn skewed_latest_matches_ycsb() {
    for (p, named) in vectors("latest") {
        // YCSB builds it on an acknowledged counter starting at `start`: its newest
        // acknowledged key is start - 1.
        let last = int(p[0]) - 1;
        let l = SkewedLatest::with_zetan(last, 0.99, zeta(last, 0.99));
        same_zipfian(&format!("latest from {}", p[0]), l.zipfian(), &named);
    }
}

#[test]
fn hotspot_sets_match_ycsb() {
    for (p, named) in vectors("hotspot") {
        let h = Hotspot::new(int(p[0]), int(p[1]), float(p[2]), float(p[3])).unwrap();
        assert_eq!(h.hot_len(), int(named["hot"]), "{p:?}");
        assert_eq!(h.cold_len(), int(named["cold"]), "{p:?}");
    }
}

#[test]
fn core_workload_zipfian_key_space_matches_ycsb() {
    for (p, named) in vectors("corezipf") {
        let mut c = CoreParams::default();
        c.set("recordcount", p[0]).unwrap();
        c.set("operationcount", p[1]).unwrap();
        c.set("insertproportion", p[2]).unwrap();
        c.set("requestdistribution", "zipfian").unwrap();
        if int(p[3]) > 0 {
            c.set("insertstart", p[3]).unwrap();
            c.set("insertcount", &(int(p[0]) - int(p[3])).to_string())
                .unwrap();
        }
        c.validate().unwrap();
        let (min, max) = c.zipfian_key_space();
        assert_eq!(min, int(named["min"]), "{p:?}");
        assert_eq!(max, int(named["max"]), "{p:?}");
        assert_eq!(max - min + 1, int(named["itemcount"]), "{p:?}");
    }
}
