use super::*;
use crate::family::Family;

const GOOD: &str = r#"
name = "sweep"
repeat = 2
seed = 5

[params]
num = 1000
duration = 1

[[target]]
name = "leveled"
engine = "rocksdb"

[[target]]
name = "universal"
engine = "rocksdb"
[target.options]
compaction_style = "universal"

[[workload]]
name = "reads"
steps = ["fillseq", "readrandom"]

[sweep]
threads = [1, 2]
"#;

fn plan(raw: &str) -> Result<Plan, SuiteError> {
    parse(
        raw,
        "s.toml",
        "s",
        PlanOptions {
            shuffle: None,
            clock_seed: 99,
            scale: None,
        },
    )
}

fn err(raw: &str) -> (usize, usize, String) {
    match plan(raw).unwrap_err() {
        SuiteError::At {
            file,
            line,
            column,
            message,
        } => {
            assert_eq!(file, "s.toml");
            (line, column, message)
        }
        e => panic!("{e}"),
    }
}

#[test]
fn the_matrix_expands_and_repeats_interleave() {
    let p = plan(GOOD).unwrap();
    assert_eq!(p.name, "sweep");
    assert_eq!(p.runs.len(), 2 * 2 * 2);
    assert_eq!(p.variants(), 4);
    let order: Vec<(String, u32)> = p
        .runs
        .iter()
        .map(|r| (r.variant.clone(), r.repeat))
        .collect();
    assert_eq!(order[0], ("leveled/t1".into(), 0));
    assert_eq!(order[3], ("universal/t2".into(), 0));
    assert_eq!(order[4], ("leveled/t1".into(), 1));
    assert_eq!(p.runs[0].seed, 5);
    assert_eq!(p.runs[4].seed, 6);
    assert_eq!(p.runs[1].workload.kv_params().unwrap().threads, 2);
    match p.runs[2].target.engine_spec().unwrap() {
        EngineSpec::Rocksdb(o) => assert_eq!(
            o.compaction_style,
            plumb_targets::rocks_options::CompactionStyle::Universal
        ),
        e => panic!("{e:?}"),
    }
    // Every run of a plan is a distinct run.
    let mut hashes: Vec<String> = p.runs.iter().map(|r| r.hash()).collect();
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), p.runs.len());
}

#[test]
fn the_definition_hash_ignores_the_clock_but_not_the_file() {
    let a = plan(&GOOD.replace("seed = 5\n", "")).unwrap();
    let b = parse(
        &GOOD.replace("seed = 5\n", ""),
        "s.toml",
        "s",
        PlanOptions {
            shuffle: None,
            clock_seed: 12345,
            scale: None,
        },
    )
    .unwrap();
    assert_eq!(a.definition_hash, b.definition_hash);
    assert_ne!(a.runs[0].seed, b.runs[0].seed);
    let c = plan(&GOOD.replace("num = 1000", "num = 2000")).unwrap();
    assert_ne!(a.definition_hash, c.definition_hash);
}

#[test]
fn shuffle_keeps_rounds_whole_and_is_reproducible() {
    let o = PlanOptions {
        shuffle: Some(3),
        clock_seed: 0,
        scale: None,
    };
    let a = parse(GOOD, "s.toml", "s", o).unwrap();
    let b = parse(GOOD, "s.toml", "s", o).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.shuffle_seed, Some(3));
    for round in a.runs.chunks(4) {
        let mut v: Vec<&str> = round.iter().map(|r| r.variant.as_str()).collect();
        v.sort_unstable();
        assert_eq!(
            v,
            ["leveled/t1", "leveled/t2", "universal/t1", "universal/t2"]
        );
    }
}

#[test]
fn an_unknown_key_is_located() {
    let (line, col, m) = err(&GOOD.replace("duration = 1", "duraton = 1"));
    assert_eq!((line, col), (8, 1), "{m}");
    assert!(m.contains("duraton") && m.contains("duration"), "{m}");
}

#[test]
fn a_wrong_type_is_located() {
    let (line, _, m) = err(&GOOD.replace("num = 1000", "num = \"many\""));
    assert_eq!(line, 7, "{m}");
    assert!(m.contains("integer") || m.contains("u64"), "{m}");
}

#[test]
fn an_unknown_engine_option_is_located_with_the_valid_keys() {
    let (line, col, m) = err(&GOOD.replace("compaction_style = ", "compaction_styl = "));
    assert_eq!((line, col), (18, 1), "{m}");
    assert!(
        m.contains("compaction_styl") && m.contains("cache_size"),
        "{m}"
    );
    let (line, _, m) = err(&GOOD.replace("\"universal\"\n\n", "\"tiered\"\n\n"));
    assert_eq!(line, 18, "{m}");
    assert!(m.contains("tiered") && m.contains("leveled"), "{m}");
}

#[test]
fn an_unknown_engine_lists_the_known_ones() {
    let (line, _, m) = err(&GOOD.replacen("engine = \"rocksdb\"", "engine = \"rocks\"", 1));
    assert_eq!(line, 12, "{m}");
    assert!(
        m.contains(&plumb_targets::ENGINE_NAMES.join(", ")) && m.contains("speedb, lmdb"),
        "{m}"
    );
}

#[test]
fn an_empty_matrix_is_refused() {
    let (line, _, m) = err(&GOOD.replace("threads = [1, 2]", "threads = []"));
    assert_eq!(line, 25, "{m}");
    assert!(m.contains("sweep.threads") && m.contains("no runs"), "{m}");
    let no_targets: String = GOOD
        .split("[[workload]]")
        .nth(1)
        .map(|w| format!("[[workload]]{w}"))
        .unwrap();
    let (line, col, m) = err(&no_targets);
    assert_eq!((line, col), (1, 1));
    assert!(m.contains("[[target]]") && m.contains("rocksdb"), "{m}");
}

#[test]
fn two_targets_with_one_name_are_refused() {
    let (line, col, m) = err(&GOOD.replace("name = \"universal\"", "name = \"leveled\""));
    assert_eq!((line, col), (15, 8), "{m}");
    assert!(
        m.contains("\"leveled\"") && m.contains("line 11") && m.contains("twice"),
        "{m}"
    );
}

#[test]
fn bad_values_and_steps_name_their_key() {
    let (line, _, m) = err(&GOOD.replace("num = 1000", "num = 0"));
    assert_eq!(line, 7, "{m}");
    assert!(m.contains("params.num"), "{m}");
    let (line, _, m) = err(&GOOD.replace("\"readrandom\"", "\"readrandmo\""));
    assert_eq!(line, 22, "{m}");
    assert!(m.contains("readrandmo") && m.contains("fwdrange"), "{m}");
    let (_, _, m) = err(&GOOD.replace(
        "compaction_style = \"universal\"",
        "sync = true\ndisable_wal = true",
    ));
    assert!(m.contains("sync") && m.contains("universal"), "{m}");
}

#[test]
fn line_and_column_count_characters() {
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
    assert_eq!(line_col("é\nx", 3), (2, 1));
    assert_eq!(line_col("", 0), (1, 1));
}

/// Fuzzing by property: a suite file mangled anywhere (a byte changed, a span cut or
/// repeated, any text) gives a plan or an error that points inside the file, never a
/// panic. `PROPTEST_CASES=1000000 cargo test -p plumb-plan fuzz` runs a million.
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn mangled() -> impl Strategy<Value = String> {
        let n = GOOD.len();
        prop_oneof![
            any::<String>(),
            (0..n, any::<char>()).prop_map(|(i, c)| {
                let mut s: Vec<char> = GOOD.chars().collect();
                let i = i.min(s.len() - 1);
                s[i] = c;
                s.into_iter().collect()
            }),
            (0..n, 0..n).prop_map(|(a, b)| {
                let (a, b) = (a.min(b), a.max(b));
                format!("{}{}", &GOOD[..a], &GOOD[b..])
            }),
            (0..n, 0..n).prop_map(|(a, b)| {
                let (a, b) = (a.min(b), a.max(b));
                format!("{}{}", &GOOD[..b], &GOOD[a..])
            }),
            (0..n, "[a-z_=\\[\\]\"0-9., \n-]{0,20}")
                .prop_map(|(i, ins)| { format!("{}{ins}{}", &GOOD[..i], &GOOD[i..]) }),
        ]
    }

    proptest! {
        #[test]
        fn a_mangled_suite_never_panics_and_errors_point_inside_it(raw in mangled()) {
            if let Err(SuiteError::At { line, column, .. }) = plan(&raw) {
                let lines = raw.split('\n').count().max(1);
                prop_assert!(line >= 1 && line <= lines, "line {line} of {lines}");
                prop_assert!(column >= 1);
            }
        }
    }
}

const SERVERS: &str = r#"
name = "pg-series"
seed = 3

[sql]
table_size = 1000
duration = 2
read_duration = 3

[ib]
rows = 5000
inserts = 1000
duration = 2

[[target]]
name = "pg"
server = "postgres"
versions = ["15", "16"]
cache_mb = 64
memory_mb = 256

[[target]]
name = "innodb"
server = "mariadb"
engine = "innodb"

[[target]]
name = "lmdb"
engine = "lmdb"

[[workload]]
name = "micro"
sql = ["load", "point-query", "update-index"]

[[workload]]
name = "ib"
ib = ["l.i0", "l.x", "qp100"]

[[size]]
name = "small"
num = 1000

[[size]]
name = "large"
num = 4000

[sweep]
clients = [1, 2]
"#;

#[test]
fn servers_and_every_family_expand_into_one_matrix() {
    let p = plan(SERVERS).unwrap();
    // pg@15, pg@16, innodb: micro and ib; lmdb: ib only. × 2 sizes × 2 clients.
    assert_eq!(
        p.runs.len(),
        (3 * 2 + 1) * 2 * 2,
        "{:#?}",
        p.runs.iter().map(|r| &r.variant).collect::<Vec<_>>()
    );
    let names: Vec<&str> = p.runs.iter().map(|r| r.variant.as_str()).collect();
    assert_eq!(names[0], "pg@15/micro/small/t1");
    assert!(names.contains(&"pg@16/ib/large/t2"), "{names:?}");
    assert!(names.contains(&"lmdb/ib/small/t1"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("lmdb/micro")),
        "{names:?}"
    );
    let r = p
        .runs
        .iter()
        .find(|r| r.variant == "pg@16/micro/large/t2")
        .unwrap();
    let s = r.target.server_spec().unwrap();
    assert_eq!((s.server.as_str(), s.cache_mb), ("postgres@16", 64));
    assert_eq!(r.target.memory_mb, Some(256));
    match &r.workload.family {
        Family::Sql(w) => {
            assert_eq!((w.params.table_size, w.params.threads), (4000, 2));
            assert_eq!(w.params.duration_of(&w.steps[1]), 3.0);
            assert_eq!(w.params.duration_of(&w.steps[2]), 2.0);
        }
        f => panic!("{f:?}"),
    }
    let r = p
        .runs
        .iter()
        .find(|r| r.variant == "innodb/ib/small/t2")
        .unwrap();
    assert_eq!(
        r.target.server_spec().unwrap().engine.as_deref(),
        Some("innodb")
    );
    match &r.workload.family {
        Family::Ib(w) => assert_eq!(
            (w.params.rows, w.params.clients, w.params.inserts),
            (1000, 2, 1000)
        ),
        f => panic!("{f:?}"),
    }
    // The same file plans the same runs (resume knows them by hash).
    let again = plan(SERVERS).unwrap();
    assert_eq!(again.definition_hash, p.definition_hash);
    assert_eq!(again.runs[5].hash(), p.runs[5].hash());
}

#[test]
fn server_mistakes_name_their_line_and_key() {
    let base = "[[workload]]\nname = \"m\"\nsql = [\"point-query\"]\n";
    let (line, _, m) = err(&format!(
        "[[target]]\nname = \"x\"\nserver = \"oracle\"\n{base}"
    ));
    assert_eq!(line, 3, "{m}");
    assert!(m.contains("server") && m.contains("postgres"), "{m}");
    let (line, _, m) = err(&format!(
        "[[target]]\nname = \"x\"\nserver = \"postgres\"\nengine = \"rocksdb\"\n{base}"
    ));
    assert_eq!(line, 4, "{m}");
    assert!(m.contains("heap"), "{m}");
    let (_, _, m) = err(&format!(
        "[[target]]\nname = \"x\"\nserver = \"postgres\"\nurl = \"postgres://u:pw@h/db\"\n{base}"
    ));
    assert!(m.contains("password") && !m.contains("pw@"), "{m}");
    let (line, _, m) = err(&format!(
        "[[target]]\nname = \"x\"\nengine = \"lmdb\"\n{base}"
    ));
    assert_eq!(line, 5, "{m}");
    assert!(
        m.contains("runs on no target") && m.contains("server"),
        "{m}"
    );
    let (line, _, m) = err(&format!(
        "[sql]\nthreads = 0\n[[target]]\nname = \"x\"\nserver = \"postgres\"\n{base}"
    ));
    assert_eq!(line, 2, "{m}");
    assert!(m.contains("sql.threads"), "{m}");
    let (_, _, m) = err(
        "[[target]]\nname = \"x\"\nserver = \"postgres\"\n[[workload]]\nname = \"i\"\nib = [\"qp100\"]\n",
    );
    assert!(m.contains("l.i0"), "{m}");
    let (line, _, m) = err(
        "[[target]]\nname = \"x\"\nengine = \"rocksdb\"\ncache_mb = 5\n[[workload]]\nname = \"w\"\nsteps = [\"fillseq\"]\n",
    );
    assert!(
        m.contains("cache_mb") && m.contains("server"),
        "{line}: {m}"
    );
}

#[test]
fn sequences_name_every_family() {
    let p = plan(
        "[[target]]\nname = \"pg\"\nserver = \"postgres\"\n[[workload]]\nname = \"all\"\nsequence = \"sysbench\"\n[[workload]]\nname = \"ib\"\nsequence = \"ibench\"\n",
    )
    .unwrap();
    assert_eq!(p.runs.len(), 2);
    assert_eq!(p.runs[0].workload.family.name(), "sql");
    assert_eq!(p.runs[1].workload.family.step_names()[0], "l.i0");
}

#[test]
fn every_example_suite_plans() {
    // The crate's directory as cargo gives it at run time: a test binary reused from a
    // build in another clone of the repository (one shared target dir) reads this
    // clone's examples, not a path that may be gone.
    let root = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string());
    let dir = format!("{root}/../../examples");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "toml") {
            let plan =
                load(&p, PlanOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!plan.runs.is_empty(), "{}", p.display());
            n += 1;
        }
    }
    assert!(n >= 8, "examples found: {n}");
}

#[test]
fn the_probes_run_on_the_host_target_beside_servers() {
    let p = plan(
        "[probe]\nquick = true\n[sweep]\nclients = [1, 2]\n[[size]]\nname = \"a\"\nnum = 1000\n[[target]]\nname = \"box\"\nhost = true\n[[target]]\nname = \"pg\"\nserver = \"postgres\"\n[[workload]]\nname = \"ceilings\"\nprobe = \"mem\"\n[[workload]]\nname = \"m\"\nsql = [\"load\", \"point-query\"]\n",
    )
    .unwrap();
    let v: Vec<&str> = p.runs.iter().map(|r| r.variant.as_str()).collect();
    // The probe runs once, not once per size and client count.
    assert_eq!(v, ["box/ceilings", "pg/m/a/t1", "pg/m/a/t2"]);
    match &p.runs[0].workload.family {
        Family::Probe(w) => assert!(w.which == "mem" && w.params.quick),
        f => panic!("{f:?}"),
    }
    let (line, _, m) = err(
        "[[target]]\nname = \"box\"\nhost = true\n[[workload]]\nname = \"c\"\nprobe = \"gpu\"\n",
    );
    assert_eq!(line, 6, "{m}");
    assert!(m.contains("mem, cpu, disk, all"), "{m}");
    let (_, _, m) = err(
        "[[target]]\nname = \"x\"\nengine = \"memory\"\n[[workload]]\nname = \"c\"\nprobe = \"cpu\"\n",
    );
    assert!(m.contains("host = true"), "{m}");
}

const DURABILITY: &str = r#"
name = "crash"
seed = 4

[durability]
kills = 3
max_ms = 100
cut = "both"

[[target]]
name = "lmdb"
engine = "lmdb"

[[target]]
name = "mem"
engine = "memory"

[[target]]
name = "pg"
server = "postgres"

[[target]]
name = "theirs"
url = "postgres://bench@db1/sbtest"

[[workload]]
name = "crash"
durability = ["sync", "nosync"]

[[size]]
name = "small"
num = 1000

[sweep]
threads = [1, 2]
"#;

#[test]
fn durability_runs_once_on_engines_that_keep_files_and_on_servers_plumb_starts() {
    let p = plan(DURABILITY).unwrap();
    let v: Vec<&str> = p.runs.iter().map(|r| r.variant.as_str()).collect();
    // Not the memory engine (nothing to reopen), not a URL (plumb cannot crash it);
    // once per target whatever the sizes and thread counts.
    assert_eq!(v, ["lmdb", "pg"]);
    match &p.runs[1].workload.family {
        Family::Durability(w) => {
            assert_eq!(
                w.modes,
                [crate::DurabilityMode::Sync, crate::DurabilityMode::NoSync]
            );
            assert_eq!((w.params.kills, w.params.max_ms), (3, 100));
            assert_eq!(
                p.runs[1].workload.family.step_names(),
                ["sync.kill", "sync.power", "nosync.kill", "nosync.power"]
            );
        }
        f => panic!("{f:?}"),
    }
    assert_eq!(p.runs[0].seed, 4);
    // A stored durability plan reads back and hashes the same.
    let back: RunPlan = serde_json::from_value(serde_json::to_value(&p.runs[0]).unwrap()).unwrap();
    assert_eq!(back.hash(), p.runs[0].hash());
    let e = crate::estimate(&p.runs[1]);
    assert!(e.secs > 12.0 && e.bytes > 0, "{e:?}");
}

#[test]
fn durability_mistakes_name_their_line_and_key() {
    let (line, _, m) = err(&DURABILITY.replace("\"nosync\"]", "\"fast\"]"));
    assert_eq!(line, 28, "{m}");
    assert!(m.contains("fast") && m.contains("unlogged"), "{m}");
    let (line, _, m) = err(&DURABILITY.replace("kills = 3", "kills = 0"));
    assert_eq!(line, 6, "{m}");
    assert!(m.contains("durability.kills"), "{m}");
    let (line, _, m) = err(&DURABILITY.replace("cut = \"both\"", "cut = \"flood\""));
    assert_eq!(line, 8, "{m}");
    assert!(m.contains("durability.cut") && m.contains("torn"), "{m}");
    let (_, _, m) = err(&DURABILITY.replace("\"nosync\"]", "\"unlogged\"]"));
    assert!(
        m.contains("\"lmdb\"") && m.contains("no write-ahead log"),
        "{m}"
    );
    let (_, _, m) = err(
        "[[target]]\nname = \"m\"\nengine = \"memory\"\n[[workload]]\nname = \"c\"\ndurability = [\"sync\"]\n",
    );
    assert!(
        m.contains("runs on no target") && m.contains("keeps files"),
        "{m}"
    );
}

#[test]
fn the_other_families_plans_keep_the_hashes_they_were_stored_with() {
    // Computed by the plumb before the durability family joined the plan: a suite of
    // every other family plans the same runs, so stored runs rerun and resume.
    let probe = "[probe]\nquick = true\n[[target]]\nname = \"box\"\nhost = true\n[[workload]]\nname = \"ceilings\"\nprobe = \"mem\"\n";
    let want = [
        (
            GOOD,
            "770d701387dfc7a2",
            "6dbdc5253cd82e00",
            "4814c728ea3bbd5b",
        ),
        (
            SERVERS,
            "885d481d1097c33a",
            "49720251c4104664",
            "030a92c67962f469",
        ),
        (
            probe,
            "fefca5968130cfaf",
            "67dc2ca2e22dcb70",
            "67dc2ca2e22dcb70",
        ),
    ];
    for (raw, definition, first, last) in want {
        let p = plan(raw).unwrap();
        assert_eq!(p.definition_hash, definition);
        assert_eq!(p.runs.first().unwrap().hash(), first);
        assert_eq!(p.runs.last().unwrap().hash(), last);
    }
    let p = plan(SERVERS).unwrap();
    assert_eq!(p.runs[13].hash(), "ac34626204d86ea6");
}

#[test]
fn universal_compaction_is_planned_room_for_its_transient_copy() {
    let p = plan(GOOD).unwrap();
    let bytes = |name: &str| {
        let r = p.runs.iter().find(|r| r.target.name == name).unwrap();
        crate::estimate(r).bytes as f64
    };
    let (leveled, universal) = (bytes("leveled"), bytes("universal"));
    assert!(leveled > 0.0);
    // 3× the live data against 2×: a full compaction writes a new copy beside the old.
    assert!(
        (universal / leveled - 1.5).abs() < 1e-3,
        "leveled {leveled}, universal {universal}"
    );
}

#[test]
fn scale_multiplies_sizes_and_durations_says_so_and_is_part_of_the_definition() {
    let at = |scale| {
        parse(
            &GOOD.replace("num = 1000", "num = 2000000"),
            "s.toml",
            "s",
            PlanOptions {
                shuffle: None,
                clock_seed: 99,
                scale,
            },
        )
        .unwrap()
    };
    let (full, small) = (at(None), at(Some(0.01)));
    for r in &small.runs {
        match &r.workload.family {
            Family::Kv(w) => {
                assert_eq!(w.params.num, 20_000);
                assert_eq!(w.params.duration, Some(crate::scale::MIN_SECS));
            }
            f => panic!("{f:?}"),
        }
    }
    assert_eq!(small.scaled[0], "kv num 2000000 → 20000");
    assert_eq!(small.scaled[1], "kv duration 1 s → 0.5 s");
    assert!(small
        .scaled
        .last()
        .unwrap()
        .contains("cache sizes, memory limits"));
    assert!(full.scaled.is_empty());
    assert_ne!(full.definition_hash, small.definition_hash);
    assert_eq!(at(Some(1.0)), full, "a scale of 1 is the suite as written");
}
