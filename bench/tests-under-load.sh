#!/usr/bin/env bash
# README's test command, RUNS times in a row, while another process keeps one CPU busy
# (a shell busy loop, not pinned: the scheduler moves it as it would a neighbour): the
# suite must stay green however loaded the machine is, because no test asserts a time
# or a verdict on live noise.
#
#   bash bench/tests-under-load.sh [RUNS]        (default 5; ~12 min a run, cached build)
# Prints one line per run (its closing "tests: N passed, M failed" and its minutes) and
# exits non-zero if any run failed; each run's log is kept in $OUT (/var/tmp/plumb-load).
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
OUT=${OUT:-/var/tmp/plumb-load}
mkdir -p "$OUT"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/plumb-target}"
bash -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
echo "busy loop: pid $hog; cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x$(nproc)"
failed=0
for i in $(seq 1 "$RUNS"); do
  t0=$(date +%s)
  bash scripts/test.sh > "$OUT/run-$i.log" 2>&1
  rc=$?
  t1=$(date +%s)
  [ "$rc" = 0 ] || failed=$((failed + 1))
  echo "run $i: rc=$rc, $(grep '^tests:' "$OUT/run-$i.log" | tail -n1), $(( (t1 - t0) / 60 )) min $(( (t1 - t0) % 60 )) s"
done
echo "$((RUNS - failed)) of $RUNS runs green under a busy CPU"
[ "$failed" = 0 ]
