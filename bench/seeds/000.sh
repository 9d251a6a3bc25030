#!/usr/bin/env bash
# Seed 000's study, "Benchmark(et)ing RocksDB vs SplinterDB", the way the seed ran it
# (examples/seeds/000.toml: fillrandom, then a fresh database with every key, compaction
# waited out, memtable and L0 flushed, point and 10-value range queries, 1 thread, WAL
# off), then the seed's tables: per size, insert, point and range ops/s and the insert's
# write-amp per engine, and the IO reads per point and per range query; beside each
# engine's figures, its ratio to RocksDB leveled, ours and the seed's (the direction and
# size of each effect: absolute numbers from a 4-core NUC do not compare); and the CPU
# per query, which the seed names as the cause of every cached difference.
#
#   bash bench/seeds/000.sh                 # this machine's scale (~25 min)
#   SCALE=0.1 bash bench/seeds/000.sh       # a tenth of the rows and seconds
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb] (built with --features splinterdb),
# STORE [a new file under /var/tmp], SCALE [1], SUITE [examples/seeds/000.toml],
# REPORT_ONLY [unset; 1: no run, the tables of the newest suite in STORE].
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/seeds/suite.sh
seed_suite 000
PYTHONPATH=bench/seeds python3 - <<'EOF'
import os, sys
from runs import newest_suite

got = {}   # (size, engine) -> figures
for (engine, workload, size), doc in newest_suite(os.environ["PLUMB"], os.environ["STORE"]):
    steps = {s["name"]: s["summary"] for s in doc["steps"] if s["status"] == "ok"}
    g = got.setdefault((size, engine), {})
    if workload == "insert" and "fillrandom" in steps:
        s = steps["fillrandom"]
        g["insert"] = s["ops_sec"]
        g["wamp"] = s.get("w_amp") or s.get("w_amp_engine")
    if workload == "query":
        for step, key in (("readrandom", "point"), ("fwdrange", "range")):
            if step in steps:
                g[key] = steps[step]["ops_sec"]
                g[key + "_io"] = steps[step].get("rd_op")
                g[key + "_cpu"] = steps[step].get("cpu_us_op")

# The seed's published figures (100-byte values; IO-bound universal at 1.5B rows, beside
# leveled at 1.5B rows), as ratios to RocksDB leveled.
SEED = {
    "cached": {"splinterdb": {"insert": 533584, "point": 246964, "range": 31236, "wamp": 1.3},
               "rocksdb-leveled": {"insert": 483519, "point": 191592, "range": 76600, "wamp": 4.5},
               "rocksdb-universal": {"insert": 488971, "point": 180769, "range": 57394, "wamp": 2.9}},
    "iobound": {"splinterdb": {"insert": 308740, "point": 6110, "range": 1060, "wamp": 3.7,
                               "point_io": 1.29, "range_io": 7.42},
                "rocksdb-leveled": {"insert": 205736, "point": 8404, "range": 3029, "wamp": 12.7,
                                    "point_io": 0.98, "range_io": 2.34},
                "rocksdb-universal": {"insert": 393873, "point": 8144, "range": 1889, "wamp": 6.0,
                                      "point_io": 1.00, "range_io": 3.24}},
}
BASE = "rocksdb-leveled"
ENGINES = ["splinterdb", "rocksdb-leveled", "rocksdb-universal"]

def num(v, d=0):
    return "n/a" if v is None else f"{v:,.{d}f}"

def ratio(a, b):
    return None if a is None or not b else a / b

def rel(v):
    return "n/a" if v is None else f"{v:.2f}"

for size in ("cached", "iobound"):
    if not any((size, e) in got for e in ENGINES):
        continue
    print(f"\n### {size}: ops/second (ours), and each engine relative to {BASE}: ours / the seed's\n")
    print("| dbms | insert | point | range | wamp | insert rel | point rel | range rel | wamp rel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base, sbase = got.get((size, BASE), {}), SEED[size][BASE]
    for e in ENGINES:
        g, s = got.get((size, e), {}), SEED[size][e]
        cells = [num(g.get("insert")), num(g.get("point")), num(g.get("range")), num(g.get("wamp"), 1)]
        for k in ("insert", "point", "range", "wamp"):
            cells.append(f"{rel(ratio(g.get(k), base.get(k)))} / {rel(ratio(s[k], sbase[k]))}")
        print(f"| {e} | " + " | ".join(cells) + " |")
    print(f"\nIO reads per query, {size} (device read requests per query; the seed's at its IO-bound size)\n")
    print("| dbms | per point query | seed | per range query | seed |")
    print("|---|---:|---:|---:|---:|")
    for e in ENGINES:
        g, s = got.get((size, e), {}), SEED[size][e]
        print(f"| {e} | {num(g.get('point_io'), 2)} | {num(s.get('point_io'), 2)} | "
              f"{num(g.get('range_io'), 2)} | {num(s.get('range_io'), 2)} |")
    print(f"\nCPU µs per query, {size} (ours: what explains a cached difference, as the seed's "
          f"\"uses less CPU/query\")\n")
    print(f"| dbms | per point query | relative to {BASE} | per range query | relative to {BASE} |")
    print("|---|---:|---:|---:|---:|")
    for e in ENGINES:
        g = got.get((size, e), {})
        print(f"| {e} | {num(g.get('point_cpu'), 2)} | {rel(ratio(g.get('point_cpu'), base.get('point_cpu')))} | "
              f"{num(g.get('range_cpu'), 2)} | {rel(ratio(g.get('range_cpu'), base.get('range_cpu')))} |")
missing = [f"{s}/{e}" for s in ("cached", "iobound") for e in ENGINES if (s, e) not in got]
if missing:
    sys.exit(f"seed000: no figures for {', '.join(missing)}")
EOF
exit "$status"
