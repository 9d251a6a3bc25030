#!/usr/bin/env bash
# SQLite's own benchmark beside plumb on one like step, to show what plumb's client
# costs: speedtest1's test 510 ("N SELECTS on a TEXT PK": one prepared point lookup by
# a text key in a WITHOUT ROWID table, autocommit, N times) against plumb's readrandom
# on its SQLite engine (one prepared point lookup by a blob key in
# kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, autocommit), on the same SQLite source
# (the amalgamation rusqlite bundles), the same row count, WAL, a 1 GiB page cache, one
# thread, alternating, REPEATS times; prints each side's µs per lookup, the medians and
# plumb/speedtest1.
#
#   bash bench/compare-speedtest1.sh
#
# speedtest1.c comes from Debian's sqlite3 source (deb.debian.org; bookworm ships
# 3.40.1, its public API is all it uses). Env: PLUMB [/var/tmp/plumb-target/release/plumb],
# BASE [/var/tmp/plumb-bench/speedtest1], SIZE [300] (speedtest1 --size: test 510 looks
# up 700*SIZE keys), KEY_SIZE [40] (about the length of speedtest1's spelled-out number
# keys), REPEATS [5].
set -euo pipefail
cd "$(dirname "$0")/.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
BASE=${BASE:-/var/tmp/plumb-bench/speedtest1}
SIZE=${SIZE:-300}
KEY_SIZE=${KEY_SIZE:-40}
REPEATS=${REPEATS:-5}
n=$((700 * SIZE))
mkdir -p "$BASE"
[ -x "$PLUMB" ] || { echo "compare-speedtest1: $PLUMB is not built (cargo build --release)" >&2; exit 2; }

# The SQLite plumb links: the amalgamation in the libsqlite3-sys crate rusqlite uses.
amalg=$(cargo metadata --format-version 1 | python3 -c '
import json, os, sys
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == "libsqlite3-sys"))')/sqlite3
st1=$BASE/speedtest1
if [ ! -x "$st1" ]; then
  src=$BASE/sqlite3_3.40.1.orig.tar.xz
  [ -f "$src" ] || curl -fsSL -o "$src" http://deb.debian.org/debian/pool/main/s/sqlite3/sqlite3_3.40.1.orig.tar.xz
  tar -xJf "$src" -C "$BASE" --wildcards '*/test/speedtest1.c'
  # The compile-time options libsqlite3-sys builds the amalgamation with, at -O3 as
  # cargo's release profile does.
  cc -O3 -I"$amalg" -DSQLITE_DEFAULT_FOREIGN_KEYS=1 -DSQLITE_ENABLE_API_ARMOR \
    -DSQLITE_ENABLE_COLUMN_METADATA -DSQLITE_ENABLE_DBSTAT_VTAB -DSQLITE_ENABLE_FTS3 \
    -DSQLITE_ENABLE_FTS5 -DSQLITE_ENABLE_JSON1 -DSQLITE_ENABLE_MEMORY_MANAGEMENT \
    -DSQLITE_ENABLE_RTREE -DSQLITE_ENABLE_STAT4 -DSQLITE_THREADSAFE=1 -DSQLITE_USE_URI \
    -DHAVE_USLEEP=1 -DHAVE_ISNAN -o "$st1" "$BASE"/sqlite3-*/test/speedtest1.c "$amalg/sqlite3.c" \
    -lpthread -ldl -lm
fi
echo "compare-speedtest1: SQLite $(grep -m1 '#define SQLITE_VERSION ' "$amalg/sqlite3.h" | cut -d'"' -f2), $n lookups; CPU $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}')" >&2

ours=() theirs=()
for r in $(seq 1 "$REPEATS"); do
  rm -f "$BASE/st1.db"*
  # 250000 pages of 4 KiB: the 1 GiB cache plumb gives SQLite by default.
  t=$("$st1" --size "$SIZE" --journal wal --cachesize 250000 --testset main "$BASE/st1.db" |
    awk '$1 == "510" { sub(/s$/, "", $NF); print $NF }')
  theirs+=("$(python3 -c "print(f'{$t * 1e6 / $n:.3f}')")")
  rm -rf "$BASE/plumb-db"
  ops=$("$PLUMB" kv --engine sqlite --db "$BASE/plumb-db" --num "$n" --key-size "$KEY_SIZE" \
    --value-size 8 --threads 1 --seed "$r" --benchmarks filluniquerandom,readrandom --ops "$n" \
    --store "$BASE/store.sqlite" --tag "speedtest1-510/$r" --json |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(next(s["summary"]["ops_sec"] for s in d["steps"] if s["name"]=="readrandom"))')
  ours+=("$(python3 -c "print(f'{1e6 / $ops:.3f}')")")
  echo "compare-speedtest1: repeat $r: speedtest1 ${theirs[-1]} µs/lookup, plumb ${ours[-1]} µs/lookup" >&2
done
python3 - "${theirs[*]}" "${ours[*]}" <<'PY'
import statistics, sys
t = [float(x) for x in sys.argv[1].split()]
o = [float(x) for x in sys.argv[2].split()]
mt, mo = statistics.median(t), statistics.median(o)
print("| step | speedtest1 µs/op (median) | plumb µs/op (median) | plumb/speedtest1 |")
print("|---|---:|---:|---:|")
print(f"| 510 SELECTS on a TEXT PK vs readrandom | {mt:.3f} | {mo:.3f} | {mo/mt:.2f} |")
PY
