#!/usr/bin/env bash
# A/B of plumb binaries against db_bench on one read step, alternating run by run:
# each round runs every plumb binary given, then db_bench, each on its own loaded DB
# from compare-dbbench.sh (readseq first in the same process, to warm the block cache).
#
#   bench/ab-reads.sh ROUNDS DURATION THREADS PLUMB_BIN...
#   BENCH=multireadrandom bench/ab-reads.sh 4 10 1 /var/tmp/plumb-new /var/tmp/plumb-old
#
# Env: NUM [5000000] (the loaded DBs' key count), BENCH [readrandom] (readrandom,
# multireadrandom, fwdrange or revrange: db_bench seekrandom, SEEK_NEXTS [10] steps, with
# --reverse_iterator for revrange), BASE [/var/tmp/plumb-bench/db],
# DB_BENCH [/var/tmp/plumb-bench/db_bench], PLUMB_EXTRA (more plumb flags, e.g. --verify none). Options are compare-dbbench.sh's defaults.
# Prints one line per run: round, tool, step, ops/s (and plumb's cpu_us_op).
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
N=$1; DU=$2; TH=$3; shift 3
BENCH=${BENCH:-readrandom}
NUM=${NUM:-5000000}
BASE=${BASE:-/var/tmp/plumb-bench/db}
DB_BENCH=${DB_BENCH:-/var/tmp/plumb-bench/db_bench}
SEEK_NEXTS=${SEEK_NEXTS:-10}
case "$BENCH" in
  readrandom|multireadrandom) DBB_BENCH=$BENCH; REV=false ;;
  fwdrange) DBB_BENCH=seekrandom; REV=false ;;
  revrange) DBB_BENCH=seekrandom; REV=true ;;
  *) echo "BENCH must be readrandom, multireadrandom, fwdrange or revrange" >&2; exit 2 ;;
esac
for d in "$BASE/dbbench-loaded" "$BASE/plumb-loaded"; do
  [ -d "$d" ] || { echo "$d missing: run bench/compare-dbbench.sh once to load it" >&2; exit 2; }
done
for r in $(seq 1 "$N"); do
  for B in "$@" db_bench; do
    if [ "$B" = db_bench ]; then
      "$DB_BENCH" --num="$NUM" --key_size=20 --value_size=400 --seed=42 --cache_size=4294967296 \
        --cache_type=hyper_clock_cache --compression_type=none --bloom_bits=10 --block_size=8192 \
        --write_buffer_size=67108864 --max_background_jobs=2 --compaction_style=0 --histogram=1 \
        --statistics=1 --stats_level=1 --enable_pipelined_write=false \
        --level_compaction_dynamic_level_bytes=true --delayed_write_rate=0 --table_cache_numshardbits=6 \
        --hard_pending_compaction_bytes_limit=274877906944 --dump_malloc_stats=false \
        --index_shortening_mode=1 --pin_top_level_index_and_filter=1 \
        --db="$BASE/dbbench-loaded" --use_existing_db=1 --benchmarks="readseq,$DBB_BENCH" \
        --multiread_batched=true --batch_size=16 --seek_nexts="$SEEK_NEXTS" --reverse_iterator="$REV" \
        --threads="$TH" --duration="$DU" 2>&1 |
        awk -v r="$r" -v b="$DBB_BENCH" '$1==b {for(i=1;i<=NF;i++) if($i=="ops/sec") printf "r%s db_bench %s %s\n", r, $1, $(i-1)}'
    else
      "$B" kv --engine rocksdb --num "$NUM" --key-size 20 --value-size 400 --seed 42 \
        --cache-size 4294967296 --cache-type hyperclock --compression none --bloom-bits 10 \
        --block-size 8192 --write-buffer-size 67108864 --max-background-jobs 2 \
        --compaction-style leveled --distribution uniform --db "$BASE/plumb-loaded" --use-existing-db \
        --benchmarks "readseq,$BENCH" --batch-size 16 --seek-nexts "$SEEK_NEXTS" --threads "$TH" --duration "$DU" ${PLUMB_EXTRA:-} \
        --store "$BASE/ab-reads-$(basename "$B").sqlite" --json 2>/dev/null |
        python3 -c "
import json, sys
d = json.load(sys.stdin)
s = d['steps'][-1]['summary']
print('r$r', sys.argv[1], d['steps'][-1]['name'], round(s['ops_sec']), round(s['cpu_us_op'], 3))" "$(basename "$B")"
    fi
  done
done
