#!/usr/bin/env bash
# The shape of redb's published lmdb_benchmark table (benches/lmdb_benchmark.rs: random
# 24-byte keys, 150-byte values, synchronous commits) run by plumb on every engine named,
# at this machine's scale, each cell with what it cost per op: CPU µs, device writes and
# KiB written, and device flushes (fsyncs reaching the disk) per op.
#
#   bash bench/redb-table.sh                       # redb lmdb rocksdb sqlite (+ fjall if built)
#   ENGINES="redb lmdb" NUM=200000 bash bench/redb-table.sh
#
# Rows, and how plumb runs them (one client thread, as redb's single-threaded rows):
#   bulk load          filluniquerandom (every key once, in random order), unsynced, one
#                      commit per key (redb's: all keys in one transaction; plumb has no
#                      one-transaction load)
#   individual writes  overwrite --sync: one key per synchronous commit
#   random reads       readrandom over the loaded keys
#   random range reads fwdrange --seek-nexts 9: a seek and 10 entries, as redb's
#   removals           deleterandom, unsynced (redb's: half the keys in one transaction)
# redb's "batch writes" row (1000 keys per synchronous commit) has no plumb step yet.
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb], BASE [/var/tmp/plumb-bench/redb],
# ENGINES [redb lmdb rocksdb sqlite, and fjall when the binary has it], NUM [1000000],
# DURATION [10] (seconds per timed step), SYNC_DURATION [5].
# Prints a Markdown table (time per op relative to LMDB, as redb's table reads) and the
# per-op costs, and writes both under BASE beside every run's JSON.
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
BASE=${BASE:-/var/tmp/plumb-bench/redb}
NUM=${NUM:-1000000}
DURATION=${DURATION:-10}
SYNC_DURATION=${SYNC_DURATION:-5}
[ -x "$PLUMB" ] || { echo "redb-table: $PLUMB is not built (cargo build --release)" >&2; exit 2; }
mkdir -p "$BASE"
if [ -z "${ENGINES:-}" ]; then
  ENGINES="redb lmdb rocksdb sqlite"
  "$PLUMB" kv --help | tr -s ' \n' ' ' | grep -q 'This build runs:.*fjall' && ENGINES="$ENGINES fjall"
fi
store="$BASE/redb-table.sqlite"
rm -f "$store"
common=(--key-size 24 --value-size 150 --num "$NUM" --threads 1 --store "$store" --json)

for e in $ENGINES; do
  db="$BASE/db-$e"
  rm -rf "$db"
  echo "redb-table: $e" >&2
  # Load and read on one database; the synced overwrite and the removals follow on it.
  "$PLUMB" kv --engine "$e" --db "$db" "${common[@]}" --duration "$DURATION" \
    --benchmarks filluniquerandom,readrandom,fwdrange --seek-nexts 9 --tag "redb-table:$e" \
    >"$BASE/$e-load.json"
  "$PLUMB" kv --engine "$e" --db "$db" --use-existing-db --sync "${common[@]}" \
    --duration "$SYNC_DURATION" --benchmarks overwrite --tag "redb-table:$e" \
    >"$BASE/$e-sync.json"
  "$PLUMB" kv --engine "$e" --db "$db" --use-existing-db "${common[@]}" \
    --duration "$DURATION" --benchmarks deleterandom --tag "redb-table:$e" \
    >"$BASE/$e-remove.json"
  rm -rf "$db"
done

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
python3 - "$BASE" "$cpu" "$NUM" $ENGINES <<'EOF' | tee "$BASE/table.md"
import json, sys
base, cpu, num, engines = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [("bulk load", "load", "filluniquerandom"), ("individual writes", "sync", "overwrite"),
        ("random reads", "load", "readrandom"), ("random range reads", "load", "fwdrange"),
        ("removals", "remove", "deleterandom")]
# redb's README (lmdb_benchmark, Ryzen 5900X, Samsung 980 PRO): ms for a fixed op count.
published = {"bulk load": {"redb": 2689, "lmdb": 1247, "rocksdb": 5330},
             "individual writes": {"redb": 226, "lmdb": 419, "rocksdb": 703},
             "random reads": {"redb": 860, "lmdb": 624, "rocksdb": 2432},
             "random range reads": {"redb": 2347, "lmdb": 1179, "rocksdb": 4436},
             "removals": {"redb": 1889, "lmdb": 803, "rocksdb": 2038}}
step = {}
for e in engines:
    for part in ("load", "sync", "remove"):
        for s in json.load(open(f"{base}/{e}-{part}.json"))["steps"]:
            step[(e, part, s["name"])] = s["summary"]
def fmt(x, d=2):
    return "n/a" if x is None else f"{x:.{d}f}"
def flush_op(s):
    dev = s.get("device") or {}
    f = dev.get("f_s")
    return None if f is None or not s.get("ops") else f * s["secs"] / s["ops"]
print(f"plumb, {num} keys of 24 B + 150 B values, one thread, on {cpu}.\n")
print("Time per op relative to LMDB (lower is faster); in brackets redb's published ratio.\n")
print("| row | " + " | ".join(engines) + " |")
print("|---|" + "---|" * len(engines))
for label, part, name in rows:
    lm = step.get(("lmdb", part, name))
    cells = []
    for e in engines:
        s = step.get((e, part, name))
        r = None if not (s and lm and s["ops_sec"]) else lm["ops_sec"] / s["ops_sec"]
        pub = published.get(label, {})
        p = f" ({pub[e] / pub['lmdb']:.2f})" if e in pub and "lmdb" in pub else ""
        cells.append(fmt(r) + p)
    print(f"| {label} | " + " | ".join(cells) + " |")
print("\nWhat each op cost: ops/s; CPU µs/op; device writes/op; KiB written/op; device flushes/op.\n")
print("| row | engine | ops/s | cpu µs/op | wr/op | wKiB/op | flushes/op |")
print("|---|---|---|---|---|---|---|")
for label, part, name in rows:
    for e in engines:
        s = step.get((e, part, name))
        if not s:
            continue
        print(f"| {label} | {e} | {s['ops_sec']:,.0f} | {fmt(s.get('cpu_us_op'), 1)} | "
              f"{fmt(s.get('wr_op'), 3)} | {fmt(s.get('wkb_op'), 2)} | {fmt(flush_op(s), 3)} |")
EOF
