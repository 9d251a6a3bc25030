#!/usr/bin/env bash
# SplinterDB's own benchmark beside plumb on like steps, to show what plumb's client
# costs: driver_test's `splinter_test --perf` (one insert thread loading N unique keys
# made by hashing the op number, then one lookup thread reading them back) against
# plumb's filluniquerandom and readrandom on its splinterdb engine (N unique keys in a
# random order, then N point reads), with the same key and value sizes, cache,
# memtable, background threads and disk capacity, alternating, REPEATS times.
# driver_test drives SplinterDB's internal core API; plumb goes through the public
# splinterdb.h API (what an application uses) and verifies values it reads. Also prints
# plumb's own cost per op (harness_us_op: key generation, timing, histogram, checks).
#
#   bash scripts/build-splinterdb.sh && bash bench/compare-splinter-driver.sh
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb] (built with --features splinterdb),
# TREE [/var/tmp/plumb-deps/splinterdb-build/splinterdb-d2173e0e3b] (the tree
# build-splinterdb.sh built), BASE [/var/tmp/plumb-bench/splinter-driver], NUM
# [2000000], KEY_SIZE [24], VALUE_SIZE [100], CACHE_MIB [1024], REPEATS [3].
set -euo pipefail
cd "$(dirname "$0")/.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
TREE=${TREE:-/var/tmp/plumb-deps/splinterdb-build/splinterdb-d2173e0e3b}
BASE=${BASE:-/var/tmp/plumb-bench/splinter-driver}
NUM=${NUM:-2000000}
KEY_SIZE=${KEY_SIZE:-24}
VALUE_SIZE=${VALUE_SIZE:-100}
CACHE_MIB=${CACHE_MIB:-1024}
REPEATS=${REPEATS:-3}
mkdir -p "$BASE"
[ -d "$TREE" ] || { echo "compare-splinter-driver: no SplinterDB tree at $TREE (run scripts/build-splinterdb.sh)" >&2; exit 2; }
# The same make variables build-splinterdb.sh used: the Makefile refuses others.
commit=$(basename "$TREE" | sed -n 's/^splinterdb-//p')
make -C "$TREE" -j"$(nproc)" CC=clang GIT_VERSION="\"$commit\"" build/release/bin/driver_test >"$BASE/make.log" 2>&1 ||
  { tail -20 "$BASE/make.log" >&2; exit 1; }
driver=$TREE/build/release/bin/driver_test
echo "compare-splinter-driver: $NUM keys of $KEY_SIZE + $VALUE_SIZE bytes; CPU $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}')" >&2

rate() { awk -v what="$1" '$0 ~ "splinter total " what " rate:" { print $5; exit }'; }
ins=() look=() pins=() plook=()
for r in $(seq 1 "$REPEATS"); do
  rm -f "$BASE/driver.db"
  # driver_test names its library by a path relative to the tree.
  # --max-async-inflight 0: synchronous lookups, as plumb's readrandom (driver_test
  # keeps 64 async lookups in flight by default).
  (cd "$TREE" && "$driver" splinter_test --perf --max-async-inflight 0 \
    --num-insert-threads 1 --num-lookup-threads 1 \
    --num-inserts "$NUM" --key-size "$KEY_SIZE" --data-size "$VALUE_SIZE" \
    --cache-capacity-mib "$CACHE_MIB" --memtable-capacity-mib 24 --db-capacity-gib 32 \
    --num-memtable-bg-threads 1 --num-normal-bg-threads 1 --db-location "$BASE/driver.db" \
    --seed "$r") >"$BASE/driver-$r.log" 2>&1 || { tail -20 "$BASE/driver-$r.log" >&2; exit 1; }
  ins+=("$(rate insertion <"$BASE/driver-$r.log")")
  look+=("$(rate lookup <"$BASE/driver-$r.log")")
  rm -f "$BASE/driver.db"
  rm -rf "$BASE/plumb-db"
  "$PLUMB" kv --engine splinterdb --db "$BASE/plumb-db" --num "$NUM" --key-size "$KEY_SIZE" \
    --value-size "$VALUE_SIZE" --cache-size $((CACHE_MIB << 20)) --threads 1 --seed "$r" \
    --benchmarks filluniquerandom,readrandom --ops "$NUM" --store "$BASE/store.sqlite" \
    --tag "splinter-driver/$r" --json >"$BASE/plumb-$r.json"
  read -r pi pl hi hl < <(python3 -c '
import json, sys
d = {s["name"]: s["summary"] for s in json.load(open(sys.argv[1]))["steps"]}
f, r = d["filluniquerandom"], d["readrandom"]
print(round(f["ops_sec"]), round(r["ops_sec"]), "%.3f" % f["harness_us_op"], "%.3f" % r["harness_us_op"])' "$BASE/plumb-$r.json")
  pins+=("$pi") plook+=("$pl")
  rm -rf "$BASE/plumb-db"
  echo "compare-splinter-driver: repeat $r: driver_test ${ins[-1]} inserts/s, ${look[-1]} lookups/s; plumb $pi inserts/s, $pl lookups/s (plumb's own cost $hi, $hl µs/op)" >&2
done
python3 - "${ins[*]}" "${pins[*]}" "${look[*]}" "${plook[*]}" <<'PY'
import statistics, sys
a = [[float(x) for x in s.split()] for s in sys.argv[1:]]
print("| step | driver_test ops/s (median) | plumb ops/s (median) | plumb/driver_test |")
print("|---|---:|---:|---:|")
for name, d, p in (("inserts vs filluniquerandom", a[0], a[1]), ("lookups vs readrandom", a[2], a[3])):
    md, mp = statistics.median(d), statistics.median(p)
    print(f"| {name} | {md:,.0f} | {mp:,.0f} | {mp/md:.2f} |")
PY
