#!/usr/bin/env bash
# The RocksDB-vs-SplinterDB post's comparison at this machine's scale, with one client,
# one key generator and one clock for every engine: per engine, a random load
# (fillrandom), then a fresh database loaded with every key once (filluniquerandom),
# point queries (readrandom) and range queries of 10 values (fwdrange, seek + 9 nexts),
# one thread; at a cached size and an IO-bound size (cache 64 MiB and O_DIRECT reads
# where the engine has them: RocksDB, WiredTiger, SplinterDB). RocksDB runs with leveled
# and with universal compaction. Speedb and other RocksDB releases run from their own
# binaries (scripts/build-speedb.sh, scripts/build-rocksdb-release.sh) into the same
# store: name them speedb and rocksdb@RELEASE.
#
#   bash bench/compare-engines.sh                       # every engine this plumb has
#   ENGINES="rocksdb lmdb" SIZES=cached bash bench/compare-engines.sh
#   ENGINES="rocksdb rocksdb@8.1.1 speedb" bash bench/compare-engines.sh
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb] (built with --features splinterdb to
# include SplinterDB), BASE [/var/tmp/plumb-bench/engines], ENGINES [all the binary
# has], SIZES ["cached iobound"], CACHED_NUM [1000000], IOBOUND_NUM [4000000],
# DURATION [10] (seconds per query step), VALUE_SIZE [400], KEY_SIZE [20],
# SPEEDB_PLUMB [/var/tmp/plumb-speedb-target/release/plumb], RELEASES_ROOT
# [/var/tmp/plumb-rocksdb-releases] (rocksdb@R runs RELEASES_ROOT/target-R/release/plumb).
# Prints a Markdown table (and writes it under BASE with every run's JSON).
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
BASE=${BASE:-/var/tmp/plumb-bench/engines}
SIZES=${SIZES:-"cached iobound"}
CACHED_NUM=${CACHED_NUM:-1000000}
IOBOUND_NUM=${IOBOUND_NUM:-4000000}
DURATION=${DURATION:-10}
VALUE_SIZE=${VALUE_SIZE:-400}
KEY_SIZE=${KEY_SIZE:-20}
SPEEDB_PLUMB=${SPEEDB_PLUMB:-/var/tmp/plumb-speedb-target/release/plumb}
RELEASES_ROOT=${RELEASES_ROOT:-/var/tmp/plumb-rocksdb-releases}
[ -x "$PLUMB" ] || { echo "compare-engines: $PLUMB is not built (cargo build --release [--features splinterdb])" >&2; exit 2; }

# The plumb that runs ENGINE: Speedb and other RocksDB releases have binaries of their own.
binary() {
  case "$1" in
    speedb*) echo "$SPEEDB_PLUMB" ;;
    rocksdb@*) local r=${1#rocksdb@}; echo "$RELEASES_ROOT/target-${r%%-*}/release/plumb" ;;
    *) echo "$PLUMB" ;;
  esac
}
if [ -z "${ENGINES:-}" ]; then
  ENGINES="rocksdb rocksdb-universal lmdb sqlite leveldb wiredtiger"
  mkdir -p "$BASE"
  "$PLUMB" kv --engine splinterdb --num 1000 --benchmarks fillseq --store "$BASE/probe.sqlite" \
    --json >/dev/null 2>&1 && ENGINES="$ENGINES splinterdb"
  rm -f "$BASE/probe.sqlite"
  [ -x "$SPEEDB_PLUMB" ] && ENGINES="$ENGINES speedb"
  for b in "$RELEASES_ROOT"/target-*/release/plumb; do
    [ -x "$b" ] && ENGINES="$ENGINES rocksdb@$(basename "$(dirname "$(dirname "$b")")" | sed 's/^target-//')"
  done
fi
for e in $ENGINES; do
  [ -x "$(binary "$e")" ] || { echo "compare-engines: $e needs $(binary "$e") (see scripts/build-speedb.sh, scripts/build-rocksdb-release.sh)" >&2; exit 2; }
done
# The block device under BASE, for bytes written (flush and compaction included).
mkdir -p "$BASE"
dev=$(basename "$(df --output=source "$BASE" | tail -1)")
written() { awk -v d="$dev" '$3 == d { printf "%.0f\n", $10 * 512 }' /proc/diskstats; }
[ -n "$(written)" ] || { echo "compare-engines: no /proc/diskstats row for $dev (BASE=$BASE)" >&2; exit 2; }
stamp=$(date +%Y%m%d-%H%M%S)
out="$BASE/$stamp"
mkdir -p "$out"
echo "compare-engines: $PLUMB (and the binaries of speedb, rocksdb@R), engines: $ENGINES, sizes: $SIZES; results in $out" >&2
lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print "compare-engines: CPU " $2}' >&2

# Flags for ENGINE at SIZE: the engine, its cache, and O_DIRECT where it has it.
flags() {
  local engine=$1 size=$2 cache=1073741824 direct=""
  [ "$size" = iobound ] && cache=67108864
  case "$engine" in
    # RocksDB of this build or another release (rocksdb@R), and Speedb: the same flags.
    rocksdb* | speedb*)
      [ "$size" = iobound ] && direct=--use-direct-reads
      local style=leveled name=rocksdb
      case "$engine" in *-universal) style=universal ;; esac
      case "$engine" in speedb*) name=speedb ;; esac
      echo "--engine $name --compaction-style $style --cache-size $cache $direct" ;;
    # LMDB has no cache of its own and no O_DIRECT: it reads through the page cache.
    lmdb) echo "--engine lmdb" ;;
    splinterdb | wiredtiger)
      [ "$size" = iobound ] && direct=--$engine-direct-io
      echo "--engine $engine --cache-size $cache $direct" ;;
    *) echo "--engine $engine --cache-size $cache" ;;
  esac
}

for size in $SIZES; do
  num=$CACHED_NUM
  [ "$size" = iobound ] && num=$IOBOUND_NUM
  for engine in $ENGINES; do
    common="--num $num --key-size $KEY_SIZE --value-size $VALUE_SIZE --seed 42 --threads 1 --store $out/store.sqlite"
    for phase in load query; do
      db="$BASE/db-$engine-$size-$phase"
      rm -rf "$db"
      if [ "$phase" = load ]; then
        steps=fillrandom,flush,waitforcompaction
      else
        steps=filluniquerandom,flush,waitforcompaction,readrandom,fwdrange
        [ "$size" = iobound ] && sync && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true
      fi
      echo "compare-engines: $engine $size $phase" >&2
      sync
      before=$(written)
      # shellcheck disable=SC2046
      "$(binary "$engine")" kv $(flags "$engine" "$size") $common --db "$db" --benchmarks "$steps" \
        --duration "$DURATION" --seek-nexts 9 --tag "$engine/$size/$phase" --json \
        >"$out/$engine-$size-$phase.json" 2>"$out/$engine-$size-$phase.log" ||
        echo "compare-engines: $engine $size $phase failed, see $out/$engine-$size-$phase.log" >&2
      sync
      echo $(( $(written) - before )) >"$out/$engine-$size-$phase.written"
      du -s -B1 "$db" | cut -f1 >"$out/$engine-$size-$phase.bytes"  # allocated, not apparent
      rm -rf "$db"
    done
  done
done

python3 - "$out" "$SIZES" "$ENGINES" "$KEY_SIZE" "$VALUE_SIZE" <<'EOF' | tee "$out/report.md"
import json, os, sys
out, sizes, engines = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
key_size, value_size = int(sys.argv[4]), int(sys.argv[5])

def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except Exception:
        return None

def step(doc, name):
    for s in (doc or {}).get("steps", []):
        if s["name"] == name:
            return s["summary"]
    return None

def fmt(x, nd=0):
    return "n/a" if x is None else f"{x:,.{nd}f}"

print("| size | engine | version | durability | inserts/s | point/s | range/s | w_amp (device) | w_amp_eng | cpu µs/insert | cpu µs/point | cpu µs/range | rkb/point | rkb/range | wkb/insert | db GB |")
print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for size in sizes:
    for e in engines:
        ld, q = load(f"{e}-{size}-load"), load(f"{e}-{size}-query")
        fill, pt, rg = step(ld, "fillrandom"), step(q, "readrandom"), step(q, "fwdrange")
        # Write amplification of the load, flush and compaction included: bytes the
        # device took from the start of the run to a sync after it / bytes inserted.
        wa = None
        try:
            dev_bytes = int(open(os.path.join(out, f"{e}-{size}-load.written")).read())
            if fill and fill.get("ops"):
                wa = dev_bytes / (fill["ops"] * (key_size + value_size))
        except Exception:
            pass
        dur = (ld or {}).get("run", {}).get("options", {}).get("durability", "n/a")
        ver = (ld or {}).get("run", {}).get("engine_version", "n/a")
        db = None
        try:
            db = int(open(os.path.join(out, f"{e}-{size}-query.bytes")).read()) / 2**30
        except Exception:
            pass
        g = lambda s, k: None if s is None else s.get(k)
        print(f"| {size} | {e} | {ver} | {dur} | {fmt(g(fill,'ops_sec'))} | {fmt(g(pt,'ops_sec'))} | {fmt(g(rg,'ops_sec'))} "
              f"| {fmt(wa,2)} | {fmt(g(fill,'w_amp_engine'),2)} | {fmt(g(fill,'cpu_us_op'),2)} | {fmt(g(pt,'cpu_us_op'),2)} "
              f"| {fmt(g(rg,'cpu_us_op'),2)} | {fmt(g(pt,'rkb_op'),2)} | {fmt(g(rg,'rkb_op'),2)} | {fmt(g(fill,'wkb_op'),2)} | {fmt(db,2)} |")
EOF
