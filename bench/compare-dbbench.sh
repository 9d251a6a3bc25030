#!/usr/bin/env bash
# plumb vs db_bench, same RocksDB library, same options, runs alternated.
#
#   bench/build-db_bench.sh          # once
#   bench/compare-dbbench.sh         # ~25-35 min with the defaults (estimate)
#   NUM=200000 DURATION=3 REPEATS=1 bench/compare-dbbench.sh   # smoke run
#
# Env (defaults):
#   PLUMB=/var/tmp/plumb-target/release/plumb  DB_BENCH=/var/tmp/plumb-bench/db_bench
#   BASE=/var/tmp/plumb-bench/db   NUM=5000000   KEY_SIZE=20   VALUE_SIZE=400
#   DURATION=20   REPEATS=3   THREADS="1 2"
#   TESTS="fillseq fillrandom readrandom multireadrandom fwdrange revrange overwrite"
#   MODES="none sample"  plumb's --verify modes to run, each against db_bench: `none` does
#   db_bench's work (no value checked), `sample` is plumb's default (key tag on every
#   read, full checksum on 1 in 256). The report prints one ratio per mode and plumb's
#   own share of the CPU (plumb%: time outside the engine call over cpu_us_op).
#   CACHE_SIZE=4294967296   CACHE_TYPE=hyperclock|lru   COMPRESSION=none
#   BLOOM_BITS=10   BLOCK_SIZE=8192   WRITE_BUFFER_SIZE=67108864   MAX_BACKGROUND_JOBS=2
#   SEEK_NEXTS=10   BATCH_SIZE=16   SEED=42   NULL_DURATION=5   RELOAD=0 (1: rebuild the loaded DBs)
#   multireadrandom is db_bench --multiread_batched (BATCH_SIZE keys a call); revrange is
#   db_bench seekrandom --reverse_iterator. mixgraph (not in the default TESTS) runs
#   db_bench's mixgraph and plumb's (--benchmarks mixgraph) on a fresh copy of each
#   loaded DB with the parameters in MIXGRAPH (default: the mixgraph paper's, RocksDB PR
#   5953: gets 0.85, puts 0.14, seeks 0.01, key_dist_a 0.002312, key_dist_b 0.3467,
#   keyrange_num 30, value_k 0.2615, value_sigma 25.45, iter_k 2.517, iter_sigma 14.236),
#   given to db_bench as --NAME=VALUE and to plumb as --mixgraph NAME=VALUE.
#   DB_BENCH_EXTRA=""  PLUMB_EXTRA=""  (extra flags appended to every invocation)
#   UNTIL="" (e.g. 2%: after each repeat from the third, stop a test once plumb/db_bench
#   is settled, its interval excluding 1 or within ±UNTIL, by plumb ratio --until, the
#   rule plumb ab --until uses; REPEATS becomes the cap)
#   ONE_DB=0 (1: db_bench's read and overwrite tests run on plumb's loaded DB, so both
#   tools read the same bytes and a difference left is code, not data; plumb pads keys
#   with '0' as db_bench does, so db_bench finds every key)
#
#   ICOUNT=1 NUM=200000 REPEATS=1 THREADS=1 MODES=none bench/compare-dbbench.sh
# Instructions per op instead of ops/s: each measured run under valgrind's callgrind,
# counting only the benchmark loop's thread (db_bench: collection toggled on the
# benchmark's function, e.g. Benchmark::ReadRandom; plumb: plumb icount, its measured
# threads' window) over OPS ops (--reads/--writes, --ops) instead of DURATION. The
# loads run natively. Deterministic: one repeat is enough. Callgrind's dumps stay
# beside the logs for callgrind_annotate (where the two tools' instructions differ).
set -euo pipefail

PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
DB_BENCH=${DB_BENCH:-/var/tmp/plumb-bench/db_bench}
BASE=${BASE:-/var/tmp/plumb-bench/db}
NUM=${NUM:-5000000}
KEY_SIZE=${KEY_SIZE:-20}
VALUE_SIZE=${VALUE_SIZE:-400}
DURATION=${DURATION:-20}
ICOUNT=${ICOUNT:-0}
# db_bench's --reads also bounds the readseq that warms the block cache before a read
# test, so ICOUNT reads every key (OPS = NUM) for both tools' caches to be alike.
OPS=${OPS:-$NUM}
REPEATS=${REPEATS:-3}
THREADS=${THREADS:-"1 2"}
TESTS=${TESTS:-"fillseq fillrandom readrandom multireadrandom fwdrange revrange overwrite"}
MODES=${MODES:-"none sample"}
CACHE_SIZE=${CACHE_SIZE:-4294967296}
CACHE_TYPE=${CACHE_TYPE:-hyperclock}
COMPRESSION=${COMPRESSION:-none}
BLOOM_BITS=${BLOOM_BITS:-10}
BLOCK_SIZE=${BLOCK_SIZE:-8192}
WRITE_BUFFER_SIZE=${WRITE_BUFFER_SIZE:-67108864}
MAX_BACKGROUND_JOBS=${MAX_BACKGROUND_JOBS:-2}
SEEK_NEXTS=${SEEK_NEXTS:-10}
BATCH_SIZE=${BATCH_SIZE:-16}
SEED=${SEED:-42}
NULL_DURATION=${NULL_DURATION:-5}
RELOAD=${RELOAD:-0}
ONE_DB=${ONE_DB:-0}
UNTIL=${UNTIL:-}
DB_BENCH_EXTRA=${DB_BENCH_EXTRA:-}
PLUMB_EXTRA=${PLUMB_EXTRA:-}

log() { printf '[compare] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v python3 >/dev/null 2>&1 || { apt-get install -y python3 >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y python3 >/dev/null; }; }
[ -x "$DB_BENCH" ] || die "db_bench not found at $DB_BENCH (run bench/build-db_bench.sh)"
[ -x "$PLUMB" ] || die "plumb not found at $PLUMB (cargo build --release)"
# Measure a private copy: a cargo build elsewhere must not swap the binary mid-run.
mkdir -p "$BASE"
cp "$PLUMB" "$BASE/plumb.bin"
PLUMB="$BASE/plumb.bin"
"$PLUMB" kv --help | grep -q 'rocksdb' || die "$PLUMB was built without the rocksdb feature"
"$PLUMB" kv --help >/dev/null 2>&1 || die "'$PLUMB kv --help' failed"

case "$CACHE_TYPE" in
  hyperclock) DBB_CACHE=hyper_clock_cache ;;   # auto HCC (estimated_entry_charge 0)
  lru)        DBB_CACHE=lru_cache ;;
  *) die "CACHE_TYPE must be hyperclock or lru" ;;
esac
case "$COMPRESSION" in none|lz4|zstd) ;; *) die "COMPRESSION must be none|lz4|zstd" ;; esac

mkdir -p "$BASE"
STAMP=$(date +%Y%m%d-%H%M%S)
LOGDIR="$BASE/logs-$STAMP"
mkdir -p "$LOGDIR"
CSV="$BASE/results-$STAMP.csv"
STORE="$BASE/plumb.sqlite"
echo "tool,test,threads,repeat,ops_sec,plumb_pct,wall_s,log" > "$CSV"

DBB_LOADED="$BASE/dbbench-loaded"
PL_LOADED="$BASE/plumb-loaded"
DBB_FILL="$BASE/dbbench-fill"
PL_FILL="$BASE/plumb-fill"
# The database db_bench's read and overwrite tests open (ONE_DB=1: plumb's).
DBB_READ=$DBB_LOADED
[ "$ONE_DB" = 1 ] && DBB_READ=$PL_LOADED
# A loaded DB is reused only while NUM and the key layout stay the same (k2: keys padded
# with '0' as db_bench pads them; plumb before it padded with zero bytes).
MARK=".loaded-$NUM-k2"

# ------------------------------------------------------- stats level probe --
# STATS_LEVEL=auto (default): use the level plumb's RocksDB actually runs with,
# read from the LOG of a 1000-key probe DB.  plumb sets
# StatsLevel::kExceptHistogramOrTimers (1) on its options before open, through its C++
# shim (the rocksdb crate's Rust enum, which plumb no longer uses, was off by one).
STATS_LEVEL=${STATS_LEVEL:-auto}
if [ "$STATS_LEVEL" = auto ]; then
  rm -rf "$BASE/probe"
  "$PLUMB" kv --engine rocksdb --db "$BASE/probe" --num 1000 --benchmarks fillseq --threads 1 \
    --store "$BASE/probe.sqlite" --json >/dev/null 2>&1 || true
  STATS_LEVEL=$(sed -n 's/.*Options.statistics stats level: *\([0-9]\).*/\1/p' "$BASE/probe/LOG" 2>/dev/null | head -n1)
  rm -rf "$BASE/probe" "$BASE/probe.sqlite"
  [ -n "$STATS_LEVEL" ] || { log "could not read plumb's stats level; using 1"; STATS_LEVEL=1; }
  [ "$STATS_LEVEL" = 1 ] || log "NOTE: plumb's RocksDB runs at stats level $STATS_LEVEL (not 1 = kExceptHistogramOrTimers); db_bench gets the same"
fi

# ----------------------------------------------------------- common options --
# db_bench: stats_level=1 == rocksdb::StatsLevel::kExceptHistogramOrTimers
# (include/rocksdb/statistics.h: kDisableAll=0 (=kExceptTickers),
# kExceptHistogramOrTimers=1, kExceptTimers=2, ...); see STATS_LEVEL above.
# Some db_bench defaults differ from rocksdb::Options() defaults (which plumb
# gets from rocksdb_options_create() + the options above); they are
# set back to the Options() defaults here:
#   --enable_pipelined_write      db_bench true,  Options false
#   --level_compaction_dynamic_level_bytes  db_bench false, Options true
#   --delayed_write_rate          db_bench 8 MB/s, Options 0 (-> 16 MB/s)
#   --table_cache_numshardbits    db_bench 4,     Options 6
#   --hard_pending_compaction_bytes_limit  db_bench 128 GiB, Options 256 GiB
#   --dump_malloc_stats           db_bench true,  Options false
#   --cache_high_pri_pool_ratio   db_bench 0.0,   NewLRUCache(cap) 0.5 (LRU only)
#   --index_shortening_mode       db_bench 2,     BlockBasedTableOptions 1 (kShortenSeparators)
#   --pin_top_level_index_and_filter  db_bench false, BlockBasedTableOptions true
# After the runs, options_diff compares the options both DBs were really opened
# with (from their LOG files) and puts any difference in the report.
DBB_COMMON=(
  --num="$NUM" --key_size="$KEY_SIZE" --value_size="$VALUE_SIZE" --seed="$SEED"
  --cache_size="$CACHE_SIZE" --cache_type="$DBB_CACHE"
  --compression_type="$COMPRESSION" --bloom_bits="$BLOOM_BITS" --block_size="$BLOCK_SIZE"
  --write_buffer_size="$WRITE_BUFFER_SIZE" --max_background_jobs="$MAX_BACKGROUND_JOBS"
  --compaction_style=0 --histogram=1 --statistics=1 --stats_level="$STATS_LEVEL"
  --enable_pipelined_write=false --level_compaction_dynamic_level_bytes=true
  --delayed_write_rate=0 --table_cache_numshardbits=6
  --hard_pending_compaction_bytes_limit=274877906944 --dump_malloc_stats=false
  --index_shortening_mode=1 --pin_top_level_index_and_filter=1
)
[ "$CACHE_TYPE" = lru ] && DBB_COMMON+=(--cache_high_pri_pool_ratio=0.5)
PL_COMMON=(
  --engine rocksdb --num "$NUM" --key-size "$KEY_SIZE" --value-size "$VALUE_SIZE" --seed "$SEED"
  --cache-size "$CACHE_SIZE" --cache-type "$CACHE_TYPE"
  --compression "$COMPRESSION" --bloom-bits "$BLOOM_BITS" --block-size "$BLOCK_SIZE"
  --write-buffer-size "$WRITE_BUFFER_SIZE" --max-background-jobs "$MAX_BACKGROUND_JOBS"
  --compaction-style leveled --distribution uniform --seek-nexts "$SEEK_NEXTS"
  --store "$STORE" --tag compare-dbbench --json
)
MIXGRAPH=${MIXGRAPH:-"mix_get_ratio=0.85 mix_put_ratio=0.14 mix_seek_ratio=0.01 key_dist_a=0.002312 key_dist_b=0.3467 keyrange_num=30 value_k=0.2615 value_sigma=25.45 iter_k=2.517 iter_sigma=14.236"}
MG_DBB=(); MG_PL=()
for kv in $MIXGRAPH; do MG_DBB+=("--$kv"); MG_PL+=(--mixgraph "$kv"); done
# shellcheck disable=SC2206
DBB_X=($DB_BENCH_EXTRA)
# shellcheck disable=SC2206
PL_X=($PLUMB_EXTRA)

# How long a measured run is: DURATION seconds, or (ICOUNT) exactly OPS ops.
if [ "$ICOUNT" = 1 ]; then
  command -v valgrind >/dev/null 2>&1 || die "ICOUNT=1 needs valgrind (apt-get install valgrind)"
  DBB_LEN=(--reads="$OPS" --writes="$OPS"); PL_LEN=(--ops "$OPS")
else
  DBB_LEN=(--duration="$DURATION"); PL_LEN=(--duration "$DURATION")
fi
# The db_bench function whose thread's instructions count (ICOUNT): the benchmark loop.
dbb_fn() {
  case "$1" in
    readrandom) echo 'rocksdb::Benchmark::ReadRandom(*' ;;
    seekrandom) echo 'rocksdb::Benchmark::SeekRandom(*' ;;
    multireadrandom) echo 'rocksdb::Benchmark::MultiReadRandom(*' ;;
    *) echo 'rocksdb::Benchmark::DoWrite(*' ;;
  esac
}

# ------------------------------------------------------------- run helpers --
# run_dbb LOG NAME ARGS... : runs db_bench, prints ops/s of the NAME line
run_dbb() {
  local logf=$1 name=$2 measured=${MEASURED:-1}; shift 2
  local pre=()
  # Loads (fillseq with flush and compact) run natively, measured runs under callgrind.
  if [ "$ICOUNT" = 1 ] && [ "$measured" = 1 ]; then
    rm -f "$logf.cg"
    pre=(valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=$(dbb_fn "$name")"
         --dump-instr=no "--callgrind-out-file=$logf.cg" "--log-file=$logf.valgrind")
  fi
  echo "+ ${pre[*]} $DB_BENCH ${DBB_COMMON[*]} $* ${DBB_X[*]}" > "$logf"
  "${pre[@]}" "$DB_BENCH" "${DBB_COMMON[@]}" "$@" "${DBB_X[@]}" >> "$logf" 2>&1 || { log "db_bench failed, see $logf"; tail -n 20 "$logf" >&2; return 1; }
  if [ "${#pre[@]}" -gt 0 ]; then
    # The ops of the NAME line, and the instructions of the toggled loop.
    local ops ir
    ops=$(awk -v n="$name" '$1==n && $2==":" { for (i=3;i<=NF;i++) if ($i=="operations;") last=$(i-1) } END { print last }' "$logf")
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$logf.cg")
    [ -n "$ops" ] && [ -n "$ir" ] || { log "no ops or instruction count in $logf(.cg)"; return 1; }
    python3 -c "print(round($ir / $ops, 1))"
    return
  fi
  # A point read that finds fewer keys than it looked up read another database than
  # plumb's (db_bench prints "(N of M found)"): with ONE_DB that is an error, not a figure.
  if [ "$ONE_DB" = 1 ] && [ "$measured" = 1 ]; then
    local miss
    miss=$(sed -n 's/.*(\([0-9]*\) of \([0-9]*\) found).*/\1 \2/p' "$logf" | awk '$1 != $2 { print $1 " of " $2 }' | head -n1)
    [ -z "$miss" ] || { log "db_bench read only $miss on plumb's DB (key layout differs?), see $logf"; return 1; }
  fi
  # The LAST line of that name (read tests first run readseq in the same process to warm the block cache).
  awk -v n="$name" '$1==n && $2==":" { for (i=3;i<=NF;i++) if ($i=="ops/sec") last=$(i-1) } END { if (last != "") print last }' "$logf"
}
# run_pl LOG NAME ARGS... : runs plumb kv, prints "ops_sec plumb%" of .steps[name==NAME]
run_pl() {
  local logf=$1 name=$2; shift 2
  local pre=()
  if [ "$ICOUNT" = 1 ] && [ "${MEASURED:-1}" = 1 ]; then
    pre=(icount --json --keep "$logf.cg.d" --)
  fi
  echo "+ $PLUMB ${pre[*]} kv ${PL_COMMON[*]} $* ${PL_X[*]}" > "$logf.cmd"
  "$PLUMB" "${pre[@]}" kv "${PL_COMMON[@]}" "$@" "${PL_X[@]}" > "$logf" 2> "$logf.err" || { log "plumb failed, see $logf(.err)"; tail -n 20 "$logf.err" >&2; return 1; }
  python3 - "$logf" "$name" "${#pre[@]}" <<'EOF'
import json, sys
txt = open(sys.argv[1]).read()
try:
    doc = json.loads(txt)
except ValueError:
    doc = json.loads(txt[txt.index('{'):])   # tolerate leading non-JSON noise
# The LAST step of that name (read tests first run readseq to warm the block cache).
found = [s for s in doc.get("steps", []) if s.get("name") == sys.argv[2]]
if not found:
    sys.exit("step %s not in plumb JSON" % sys.argv[2])
s = found[-1]["summary"]
h, c = s.get("harness_us_op"), s.get("cpu_us_op")
if sys.argv[3] != "0":   # ICOUNT: instructions per op (plumb icount)
    print(round(s["hw"]["instructions_op"], 1), "")
else:
    print(s["ops_sec"], "%.2f" % (100 * h / c) if h is not None and c else "")
EOF
}

record() {  # tool test threads repeat ops plumb_pct wall log
  echo "$1,$2,$3,$4,$5,$6,$7,$8" >> "$CSV"
  log "$(printf '%-12s %-15s t=%s r=%s  %12s ops/s  plumb%% %5s  (%ss)' "$1" "$2" "$3" "$4" "$5" "$6" "$7")"
}

# ---------------------------------------------------------------- load DBs --
load_db() {
  local t0 t1
  if [ "$RELOAD" != 1 ] && [ -f "$DBB_LOADED/$MARK" ] && [ -f "$PL_LOADED/$MARK" ]; then
    log "reusing loaded DBs in $BASE (RELOAD=1 to rebuild)"; return
  fi
  rm -rf "$DBB_LOADED" "$PL_LOADED"
  log "loading $NUM keys with db_bench (fillseq, WAL off, then flush+compact)"
  t0=$(date +%s.%N)
  MEASURED=0 run_dbb "$LOGDIR/load-dbbench.log" fillseq --db="$DBB_LOADED" --use_existing_db=0 \
    --benchmarks=fillseq,flush,compact,waitforcompaction --disable_wal=1 --threads=1 >/dev/null
  t1=$(date +%s.%N)
  log "  db_bench load: $(python3 -c "print(round($t1-$t0,1))") s, $(du -sh "$DBB_LOADED" | cut -f1)"
  log "loading $NUM keys with plumb (fillseq, WAL off, then flush+compact)"
  t0=$(date +%s.%N)
  MEASURED=0 run_pl "$LOGDIR/load-plumb.json" fillseq --db "$PL_LOADED" \
    --benchmarks fillseq,flush,compact,waitforcompaction --disable-wal --threads 1 >/dev/null
  t1=$(date +%s.%N)
  log "  plumb load: $(python3 -c "print(round($t1-$t0,1))") s, $(du -sh "$PL_LOADED" | cut -f1)"
  touch "$DBB_LOADED/$MARK" "$PL_LOADED/$MARK"
}

# Compare the options each tool's RocksDB really opened with (from the LOGs).
# A LOG describes the latest open; with ONE_DB both tools open one DB, so the LOG each
# tool's last read run left is kept aside (snap_log) and compared instead.
snap_log() {  # snap_log TOOL DBDIR
  [ "$ONE_DB" = 1 ] && [ -f "$2/LOG" ] && { cp "$2/LOG" "$LOGDIR/LOG.$1"; echo "$2" > "$LOGDIR/LOG.$1.dir"; }
  return 0
}
options_diff() {
  local a=$DBB_LOADED/LOG ad=$DBB_LOADED b=$PL_LOADED/LOG bd=$PL_LOADED
  if [ "$ONE_DB" = 1 ] && [ -f "$LOGDIR/LOG.db_bench" ] && [ -f "$LOGDIR/LOG.plumb" ]; then
    a=$LOGDIR/LOG.db_bench ad=$(cat "$LOGDIR/LOG.db_bench.dir") b=$LOGDIR/LOG.plumb bd=$(cat "$LOGDIR/LOG.plumb.dir")
  fi
  python3 - "$a" "$ad" "$b" "$bd" <<'PY'
import re, sys
IGNORE = ("compaction_options_fifo", "create_missing_column_families", "db_log_dir", "wal_dir",
          "db_host_id", "Options.statistics:", "hash_seed", "seed")
def opts(path, dbdir):
    out, on = {}, False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        m = re.match(r"^\d{4}/\S+ \S+ (.*)$", line)
        body = m.group(1) if m else line   # table options lines carry no timestamp
        if "Options.error_if_exists" in body: on = True
        if not on: continue
        if "Recovered from manifest" in body or "EVENT_LOG_v1" in body: break
        if body.startswith("[") or ":" not in body: continue
        body = re.sub(r"0x[0-9a-f]+", "0x?", body.replace(dbdir, "<db>"))
        k, v = (x.strip() for x in body.split(":", 1))
        while k in out: k += "'"
        out[k] = v
    return out
a, b = opts(sys.argv[1], sys.argv[2]), opts(sys.argv[3], sys.argv[4])
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k) and not any(i in k for i in IGNORE)]
if not diff:
    print("RocksDB options (from both LOGs): identical (%d options compared)" % len(a))
else:
    print("RocksDB options that DIFFER between the two DBs (from their LOGs):\n")
    print("| option | db_bench | plumb |\n|---|---|---|")
    for k in diff:
        print(f"| {k} | {a.get(k)} | {b.get(k)} |")
PY
}

# settled TEST THREADS TOOL: plumb ratio's look at TOOL's runs against db_bench's so
# far ("open", "changed" or "within", and the interval), for UNTIL.
settled() {
  python3 - "$CSV" "$1" "$2" "$3" "$PLUMB" "$UNTIL" "$REPEATS" <<'PY'
import csv, json, subprocess, sys
path, test, th, tool, plumb, until, cap = sys.argv[1:]
rows = [r for r in csv.DictReader(open(path)) if r["test"] == test and r["threads"] == th]
side = lambda t: [float(r["ops_sec"]) for r in rows if r["tool"] == t]
j = json.loads(subprocess.run([plumb, "ratio", "--json", "--until", until, "--cap", cap,
                               "--base", ",".join(map(str, side("db_bench"))),
                               "--other", ",".join(map(str, side(tool)))],
                              check=True, capture_output=True, text=True).stdout)
ci = j["ci"] or [float("nan")] * 2
print(f"{j['settled']}: {j['ratio']:.3f} ({ci[0]:.3f}-{ci[1]:.3f} at {100 * j['level']:.1f}%)")
PY
}

# one_run TOOL TEST THREADS REPEAT   (TOOL: db_bench or plumb-MODE)
one_run() {
  local tool=$1 test=$2 th=$3 r=$4 logf ops pct="" t0 t1 out
  logf="$LOGDIR/$test-t$th-r$r-$tool"
  # A write test must not pay for the kernel's writeback of the previous run's data.
  case "$test" in fill*|overwrite) sync ;; esac
  t0=$(date +%s.%N)
  if [ "$tool" = db_bench ]; then
    logf="$logf.log"
    case "$test" in
      fillseq)
        rm -rf "$DBB_FILL"
        ops=$(run_dbb "$logf" fillseq --db="$DBB_FILL" --use_existing_db=0 --benchmarks=fillseq \
              --disable_wal=1 --threads="$th")
        rm -rf "$DBB_FILL" ;;
      fillrandom)
        rm -rf "$DBB_FILL"
        # No --duration: db_bench would then ignore --num and keep writing, while plumb's
        # fillrandom writes --num keys split among threads; --writes is per db_bench thread.
        ops=$(run_dbb "$logf" fillrandom --db="$DBB_FILL" --use_existing_db=0 --benchmarks=fillrandom \
              --writes=$((NUM / th)) --threads="$th")
        rm -rf "$DBB_FILL" ;;
      readrandom)
        ops=$(run_dbb "$logf" readrandom --db="$DBB_READ" --use_existing_db=1 --benchmarks=readseq,readrandom \
              --threads="$th" "${DBB_LEN[@]}")
        snap_log db_bench "$DBB_READ" ;;
      fwdrange|revrange)
        local rev=false; [ "$test" = revrange ] && rev=true
        ops=$(run_dbb "$logf" seekrandom --db="$DBB_READ" --use_existing_db=1 --benchmarks=readseq,seekrandom \
              --seek_nexts="$SEEK_NEXTS" --reverse_iterator="$rev" --threads="$th" "${DBB_LEN[@]}") ;;
      multireadrandom)   # the batched MultiGet API, as plumb uses
        ops=$(run_dbb "$logf" multireadrandom --db="$DBB_READ" --use_existing_db=1 \
              --benchmarks=readseq,multireadrandom --multiread_batched=true --batch_size="$BATCH_SIZE" \
              --threads="$th" "${DBB_LEN[@]}") ;;
      overwrite)   # on a fresh copy of the loaded DB, so every run starts from the same LSM
        rm -rf "$BASE/work"; cp -a "$DBB_READ" "$BASE/work"
        ops=$(run_dbb "$logf" overwrite --db="$BASE/work" --use_existing_db=1 --benchmarks=overwrite \
              --threads="$th" "${DBB_LEN[@]}") ;;
      mixgraph)   # writes too: on a fresh copy of the loaded DB
        rm -rf "$BASE/work"; cp -a "$DBB_READ" "$BASE/work"
        ops=$(run_dbb "$logf" mixgraph --db="$BASE/work" --use_existing_db=1 --benchmarks=mixgraph \
              --threads="$th" "${DBB_LEN[@]}" "${MG_DBB[@]}") ;;
      *) die "unknown test $test" ;;
    esac
  else
    logf="$logf.json"
    local v=(--verify "${tool#plumb-}")
    case "$test" in
      fillseq)
        rm -rf "$PL_FILL"
        out=$(run_pl "$logf" fillseq --db "$PL_FILL" --benchmarks fillseq --disable-wal \
              --threads "$th" "${v[@]}")
        rm -rf "$PL_FILL" ;;
      fillrandom)
        rm -rf "$PL_FILL"
        out=$(run_pl "$logf" fillrandom --db "$PL_FILL" --benchmarks fillrandom \
              --threads "$th" "${v[@]}")
        rm -rf "$PL_FILL" ;;
      readrandom|fwdrange|revrange|multireadrandom)
        out=$(run_pl "$logf" "$test" --db "$PL_LOADED" --use-existing-db --benchmarks "readseq,$test" \
              --batch-size "$BATCH_SIZE" --threads "$th" "${PL_LEN[@]}" "${v[@]}")
        snap_log plumb "$PL_LOADED" ;;
      overwrite)   # on a fresh copy of the loaded DB, so every run starts from the same LSM
        rm -rf "$BASE/work"; cp -a "$PL_LOADED" "$BASE/work"
        out=$(run_pl "$logf" overwrite --db "$BASE/work" --use-existing-db --benchmarks overwrite \
              --threads "$th" "${PL_LEN[@]}" "${v[@]}") ;;
      mixgraph)
        rm -rf "$BASE/work"; cp -a "$PL_LOADED" "$BASE/work"
        out=$(run_pl "$logf" mixgraph --db "$BASE/work" --use-existing-db --benchmarks mixgraph \
              --threads "$th" "${PL_LEN[@]}" "${v[@]}" "${MG_PL[@]}") ;;
      *) die "unknown test $test" ;;
    esac
    ops=${out%% *}; pct=${out#* }
  fi
  t1=$(date +%s.%N)
  [ -n "$ops" ] || die "no ops/s parsed for $tool $test t=$th r=$r (log: $logf)"
  record "$tool" "$test" "$th" "$r" "$ops" "$pct" "$(python3 -c "print(round($t1-$t0,1))")" "$logf"
}

# -------------------------------------------------------------------- main --
START=$(date +%s)
{
  echo "# plumb vs db_bench"
  echo
  echo "- date: $(date -Is)  host: $(hostname)  cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x$(nproc)  kernel: $(uname -r)"
  echo "- plumb: $PLUMB ($(cd "$(dirname "$0")" && git rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "- db_bench: $DB_BENCH ($("$DB_BENCH" --version 2>&1 | head -n1 || true))"
  echo "- num=$NUM key=$KEY_SIZE value=$VALUE_SIZE duration=${DURATION}s repeats=$REPEATS${UNTIL:+ (at most; until ±$UNTIL)} one_db=$ONE_DB cache=$CACHE_TYPE/$CACHE_SIZE compression=$COMPRESSION bloom=$BLOOM_BITS block=$BLOCK_SIZE wbs=$WRITE_BUFFER_SIZE bg_jobs=$MAX_BACKGROUND_JOBS seek_nexts=$SEEK_NEXTS batch_size=$BATCH_SIZE seed=$SEED stats_level=$STATS_LEVEL"
  echo
} > "$LOGDIR/header.md"

need_load=0
for t in $TESTS; do [ "$t" != fillrandom ] && need_load=1; done
[ "$need_load" = 1 ] && load_db

for t in $TESTS; do
  for th in $THREADS; do
    # db_bench's fillseq gives every thread all --num keys; plumb splits them: compare
    # one thread only.
    if [ "$t" = fillseq ] && [ "$th" != 1 ]; then log "fillseq: 1 thread only"; continue; fi
    # Alternated in ABBA order (plumb first on odd repeats, db_bench first on even
    # ones), so a steady drift of the machine falls on both tools alike.
    for r in $(seq 1 "$REPEATS"); do
      if [ $((r % 2)) = 1 ]; then
        for m in $MODES; do one_run "plumb-$m" "$t" "$th" "$r"; done
        one_run db_bench "$t" "$th" "$r"
      else
        one_run db_bench "$t" "$th" "$r"
        for m in $MODES; do one_run "plumb-$m" "$t" "$th" "$r"; done
      fi
      # UNTIL: stop once plumb/db_bench (the first mode) is settled, by the rule
      # plumb ab --until uses (alpha spent over the looks; REPEATS is the cap).
      if [ -n "$UNTIL" ] && [ "$r" -ge 3 ] && [ "$r" -lt "$REPEATS" ]; then
        look=$(settled "$t" "$th" "plumb-${MODES%% *}")
        log "$t t=$th after $r repeats: $look"
        case "$look" in open*) ;; *) break ;; esac
      fi
    done
  done
done

# Compare the options of the loaded DBs as the last runs above opened them (a LOG
# describes the latest open, so this checks the runs, not only the load).
if [ "$need_load" = 1 ]; then
  options_diff > "$LOGDIR/options-diff.md" || echo "options diff failed" > "$LOGDIR/options-diff.md"
  grep -q DIFFER "$LOGDIR/options-diff.md" && { log "WARNING: the two tools' RocksDB options differ:"; cat "$LOGDIR/options-diff.md" >&2; }
fi

# ------------------------------------------------------------- null target --
log "null target: plumb kv --engine null --benchmarks readrandom --threads 1 --duration $NULL_DURATION"
NULL_JSON="$LOGDIR/null-readrandom.json"
"$PLUMB" kv --engine null --benchmarks readrandom --threads 1 --duration "$NULL_DURATION" \
  --num "$NUM" --key-size "$KEY_SIZE" --value-size "$VALUE_SIZE" --seed "$SEED" \
  --store "$STORE" --tag compare-dbbench-null --json > "$NULL_JSON" 2> "$NULL_JSON.err" \
  || { log "null run failed"; tail -n 20 "$NULL_JSON.err" >&2; }

# ------------------------------------------------------------------ report --
ICOUNT=$ICOUNT BENCH_DIR="$(cd "$(dirname "$0")" && pwd)" python3 - "$CSV" "$NULL_JSON" "$LOGDIR/header.md" "$TESTS" "$THREADS" "$(( $(date +%s) - START ))" "$MODES" "$PLUMB" > "$LOGDIR/report.md" <<'EOF'
import csv, json, os, statistics, sys
csv_path, null_path, header, tests, threads, elapsed, modes, plumb = sys.argv[1:9]
sys.path.insert(0, os.environ["BENCH_DIR"])
from plumb_ratio import judged
modes = modes.split()
rows = list(csv.DictReader(open(csv_path)))
print(open(header).read(), end="")
if os.environ.get("ICOUNT") == "1":
    print("instructions per op (callgrind: the benchmark loop's thread only; plumb icount)\n")
    print("| test | threads | db_bench instructions/op | " + " | ".join(f"plumb --verify {m}" for m in modes)
          + " | " + " | ".join(f"plumb/db_bench ({m})" for m in modes) + " |")
    print("|---|---:|---:|" + "---:|" * (2 * len(modes)))
    for t in tests.split():
        for th in threads.split():
            d = [float(r["ops_sec"]) for r in rows if r["tool"] == "db_bench" and r["test"] == t and r["threads"] == th]
            if not d:
                continue
            ps = [[float(r["ops_sec"]) for r in rows if r["tool"] == f"plumb-{m}" and r["test"] == t and r["threads"] == th] for m in modes]
            print(f"| {t} | {th} | {d[0]:,.0f} | " + " | ".join(f"{p[0]:,.0f}" if p else "n/a" for p in ps)
                  + " | " + " | ".join(f"{p[0] / d[0]:.3f}" if p else "n/a" for p in ps) + " |")
    sys.exit(0)
cols = ["test", "threads", "db_bench median ops/s"]
for m in modes:
    cols += [f"plumb --verify {m}", f"ratio ({m}): 95% interval, p", f"plumb% ({m})"]
cols += ["runs: db_bench; " + "; ".join(f"plumb {m}" for m in modes)]
print("| " + " | ".join(cols) + " |")
print("|---|---:|---:|" + "---:|---:|---:|" * len(modes) + "---|")
def col(tool, t, th, k):
    return [float(r[k]) for r in rows if r["tool"] == tool and r["test"] == t and r["threads"] == th and r[k]]
med = lambda xs: statistics.median(xs) if xs else float("nan")
fmt = lambda xs: ", ".join("%.0f" % x for x in xs)
for t in tests.split():
    for th in threads.split():
        d = col("db_bench", t, th, "ops_sec")
        if not d:
            continue
        name = t + {"fwdrange": " (seekrandom)", "revrange": " (seekrandom reverse)"}.get(t, "")
        cells = [name, th, f"{med(d):,.0f}"]
        runs = [fmt(d)]
        for m in modes:
            p = col(f"plumb-{m}", t, th, "ops_sec")
            cells += [f"{med(p):,.0f}", judged(plumb, d, p), f"{med(col(f'plumb-{m}', t, th, 'plumb_pct')):.1f}"]
            runs.append(fmt(p))
        print("| " + " | ".join(cells) + " | " + "; ".join(runs) + " |")
print()
import os
od = os.path.join(os.path.dirname(header), "options-diff.md")
if os.path.exists(od):
    print(open(od).read())
print("## null target (plumb kv --engine null --benchmarks readrandom --threads 1)")
print()
try:
    txt = open(null_path).read()
    doc = json.loads(txt[txt.index('{'):])
    ops = next(s["summary"]["ops_sec"] for s in doc["steps"] if s["name"] == "readrandom")
    verdict = "PASS" if ops >= 5e6 else "FAIL"
    print(f"ops/s/thread: {ops:,.0f}  (requirement >= 5,000,000: {verdict})")
except Exception as e:
    print(f"null target: no result ({e!r}); see {null_path}.err")
print()
print(f"raw results: {csv_path}  (elapsed {int(elapsed)//60} min {int(elapsed)%60} s)")
EOF
cat "$LOGDIR/report.md"
log "report: $LOGDIR/report.md   csv: $CSV   logs: $LOGDIR"
