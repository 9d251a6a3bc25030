#!/usr/bin/env bash
# Is a refactor free? Two plumb binaries (OLD and NEW, e.g. built from two commits in
# one CARGO_TARGET_DIR so RocksDB is shared) judged by `plumb ab` on the steps that
# every family's hot path runs: kv null and memory readrandom (plumb's own cost per
# op), RocksDB readrandom on one prepared database and fillseq, as duets (both at once,
# each on its own half of the CPUs); PostgreSQL point-query and the insert benchmark's
# qp100, interleaved (a managed server keeps its threads on neither half).
#
#   bench/old-vs-new.sh OLD NEW
#
# Env: STORE [/var/tmp/old-vs-new.sqlite], DIR [/var/tmp/old-vs-new] (RocksDB's prepared
# database), ROUNDS [10] (duet rounds), SQL_ROUNDS [4] (interleaved slices a side),
# ONLY (a space-separated subset of: null memory rocksdb-read rocksdb-fill postgres ib).
# Prints each A/B's verdict table (A = OLD, B = NEW: ratio B/A with its interval).
set -euo pipefail
[ $# -eq 2 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
OLD=$1; NEW=$2
STORE=${STORE:-/var/tmp/old-vs-new.sqlite}
DIR=${DIR:-/var/tmp/old-vs-new}
ROUNDS=${ROUNDS:-10}
SQL_ROUNDS=${SQL_ROUNDS:-4}
ONLY=${ONLY:-null memory rocksdb-read rocksdb-fill postgres ib}
grep -m1 "model name" /proc/cpuinfo
ab() { echo "== $1"; shift; "$NEW" ab --a-bin "$OLD" --b-bin "$NEW" --store "$STORE" "$@"; }
for what in $ONLY; do
  case $what in
    null|memory)
      ab "$what readrandom" --duet --rounds "$ROUNDS" -- kv --engine "$what" \
        --benchmarks readrandom --num 100000 --duration 3 ;;
    rocksdb-read)
      if [ ! -d "$DIR/rocks" ]; then
        mkdir -p "$DIR"
        "$NEW" kv --db "$DIR/rocks" --num 1000000 --benchmarks fillseq,compact \
          --store "$STORE" >/dev/null
      fi
      ab "rocksdb readrandom" --duet --rounds "$ROUNDS" -- kv --engine rocksdb \
        --db "$DIR/rocks" --use-existing-db --num 1000000 --benchmarks readrandom --duration 3 ;;
    rocksdb-fill)
      ab "rocksdb fillseq" --duet --rounds "$ROUNDS" -- kv --engine rocksdb \
        --benchmarks fillseq --num 300000 ;;
    postgres)
      ab "postgres point-query" --rounds "$SQL_ROUNDS" -- sql --server postgres \
        --steps load,point-query --duration 10 ;;
    ib)
      ab "ib qp100 (postgres)" --step qp100 --rounds "$SQL_ROUNDS" -- ib --server postgres \
        --rows 200000 --steps l.i0,l.x,qp100 --duration 10 ;;
    *) echo "unknown: $what" >&2; exit 2 ;;
  esac
done
