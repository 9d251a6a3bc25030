#!/usr/bin/env bash
# The insert benchmark's whole sequence (l.i0 … qp1000) on PostgreSQL, MariaDB InnoDB,
# MariaDB MyRocks and embedded RocksDB, one after another with the same sizes, each
# stored under its own tag; prints each run's summary table, then compares them.
#
#   bench/ibench.sh                                   # 1M rows, 200k inserts, 30 s query steps
#   TARGETS=rocksdb ROWS=100000 DURATION=3 bench/ibench.sh   # smoke run
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb
#   TARGETS="postgres innodb myrocks rocksdb"  ROWS=1000000  INSERTS=200000
#   DURATION=30  CLIENTS=1  CACHE_MB=2048  STORE=/var/tmp/plumb-ibench.sqlite
#   EXTRA="--delete-per-insert"
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
TARGETS=${TARGETS:-"postgres innodb myrocks rocksdb"}
ROWS=${ROWS:-1000000}
INSERTS=${INSERTS:-200000}
DURATION=${DURATION:-30}
CLIENTS=${CLIENTS:-1}
CACHE_MB=${CACHE_MB:-2048}
STORE=${STORE:-/var/tmp/plumb-ibench.sqlite}
EXTRA=${EXTRA:---delete-per-insert}
echo "host CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
ids=()
for t in $TARGETS; do
  case $t in
    postgres) target=(--server postgres) ;;
    innodb) target=(--server mariadb --engine innodb) ;;
    myrocks) target=(--server mariadb --engine rocksdb) ;;
    *) target=(--kv "$t") ;;
  esac
  echo "== $t: plumb ib ${target[*]} --rows $ROWS --inserts $INSERTS --duration $DURATION --clients $CLIENTS --cache-mb $CACHE_MB $EXTRA"
  # shellcheck disable=SC2086
  "$PLUMB" ib "${target[@]}" --rows "$ROWS" --inserts "$INSERTS" --duration "$DURATION" \
    --clients "$CLIENTS" --cache-mb "$CACHE_MB" --tag "ib-$t" --store "$STORE" $EXTRA || true
  ids+=("$("$PLUMB" runs --store "$STORE" --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')")
done
if [ "${#ids[@]}" -gt 1 ]; then
  echo "== plumb compare ${ids[*]}"
  "$PLUMB" compare "${ids[@]}" --store "$STORE" || true
fi
