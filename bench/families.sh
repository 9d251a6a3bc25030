#!/usr/bin/env bash
# Issue 29's figures: one plan for every family.
#   1. plumb's own cost per op on the null and memory engines (plumb_us_op, cpu_us_op)
#      for this binary and, when OLD is set, an older plumb, alternated ROUNDS times:
#      the one plan must not move the hot path.
#   2. PostgreSQL read-only size scaling with and without a memory limit
#      (bench/pg-size-sweep.toml), reported as markdown.
#
#   bench/families.sh                          # both
#   OLD=/var/tmp/plumb-old/release/plumb ROUNDS=5 SKIP_SWEEP=1 bench/families.sh
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb  OLD=""  ROUNDS=3
#   NUM=200000  DURATION=5  SKIP_SWEEP=0
set -euo pipefail
cd "$(dirname "$0")/.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
OLD=${OLD:-}
ROUNDS=${ROUNDS:-3}
NUM=${NUM:-200000}
DURATION=${DURATION:-5}
SKIP_SWEEP=${SKIP_SWEEP:-0}
WORK=$(mktemp -d /var/tmp/plumb-families.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"

# One figure of one step of a run printed as JSON.
fig() { python3 -c '
import json, sys
d = json.load(sys.stdin)
s = [s for s in d["steps"] if s["name"] == sys.argv[1]][0]["summary"]
print(s.get(sys.argv[2]))' "$1" "$2"; }

bins=("new:$PLUMB")
[ -n "$OLD" ] && bins+=("old:$OLD")
for engine in null memory; do
  for r in $(seq "$ROUNDS"); do
    for b in "${bins[@]}"; do
      name=${b%%:*}; bin=${b#*:}
      out=$("$bin" kv --engine "$engine" --num "$NUM" --benchmarks fillseq,readrandom \
        --duration "$DURATION" --seed 7 --json --store "$WORK/s-$name.sqlite")
      printf '%s %s round %s readrandom: ops/s %s cpu_us_op %s plumb_us_op %s\n' "$engine" "$name" "$r" \
        "$(fig readrandom ops_sec <<<"$out")" "$(fig readrandom cpu_us_op <<<"$out")" \
        "$(fig readrandom harness_us_op <<<"$out")"
    done
  done
done

if [ "$SKIP_SWEEP" != 1 ]; then
  "$PLUMB" run bench/pg-size-sweep.toml --store "$WORK/sweep.sqlite" >/dev/null
  "$PLUMB" report s1 --format md --store "$WORK/sweep.sqlite"
fi
