#!/usr/bin/env bash
# Instruction counts (plumb icount, callgrind) as a judge where wall time is noisy:
#   - A/A: PAIRS pairs of counted runs of one build, memory and RocksDB readrandom
#     (fixed --seed and --ops): the largest difference between a pair;
#   - detection: TRIALS trials of a counted run against one with ~2% more work per op
#     (PLUMB_TEST_MEMORY_OP_ROUNDS, exact rounds), one run a side, judged by
#     `plumb check --metric instructions_op --threshold 1`.
#
#   bash bench/icount.sh [PLUMB] [TRIALS] [PAIRS]
# Prints Markdown tables; the store is kept in $OUT (default /var/tmp/plumb-icount).
set -euo pipefail
PLUMB=${1:-target/release/plumb}
TRIALS=${2:-10}
PAIRS=${3:-3}
OUT=${OUT:-/var/tmp/plumb-icount}
mkdir -p "$OUT"
STORE="$OUT/store.sqlite"
rm -f "$STORE"
export PLUMB TRIALS PAIRS STORE
python3 - <<'PY'
import json, os, subprocess, time
plumb, store = os.environ["PLUMB"], os.environ["STORE"]
trials, pairs = int(os.environ["TRIALS"]), int(os.environ["PAIRS"])
env0 = {k: v for k, v in os.environ.items()
        if k not in ("PLUMB_TEST_MEMORY_OP_NS", "PLUMB_TEST_MEMORY_OP_ROUNDS")}
MEM = ["--engine", "memory", "--benchmarks", "fillseq,readrandom", "--num", "20000",
       "--ops", "50000", "--seed", "7"]
ROCKS = ["--engine", "rocksdb", "--benchmarks", "fillseq,flush,readrandom", "--num", "20000",
         "--ops", "20000", "--seed", "11"]

def counted(kv, rounds=0):
    env = dict(env0)
    if rounds:
        env["PLUMB_TEST_MEMORY_OP_ROUNDS"] = str(rounds)
    t = time.time()
    out = subprocess.run([plumb, "icount", "--json", "--", "kv", *kv, "--store", store],
                         env=env, capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    step = next(s for s in doc["steps"] if s["name"] == "readrandom")
    return doc["run"]["id"], step["summary"]["hw"]["instructions_op"], time.time() - t

def check(new, base):
    r = subprocess.run([plumb, "check", str(new), "--base", str(base), "--metric",
                        "instructions_op", "--step", "readrandom", "--threshold", "1",
                        "--json", "--store", store], capture_output=True, text=True)
    return json.loads(r.stdout)["results"][0]["verdict"]

print("| engine | pairs | readrandom instructions/op | largest A/A difference | secs per counted run |")
print("|---|---:|---:|---:|---:|")
base_mem = None
for name, kv in (("memory", MEM), ("rocksdb", ROCKS)):
    diffs, vals, secs = [], [], []
    for _ in range(pairs):
        (_, a, ta), (_, b, tb) = counted(kv), counted(kv)
        diffs.append(abs(b / a - 1)); vals.append(a); secs += [ta, tb]
    if name == "memory":
        base_mem = vals[0]
    print(f"| {name} | {pairs} | {vals[0]:.1f} | {100*max(diffs):.4f}% | {sum(secs)/len(secs):.0f} |")

# The injected work's instructions, measured: a fixed part (the call) and a part per
# round, from 1 and 21 rounds; then the rounds that add 2%.
_, with1, _ = counted(MEM, 1)
_, with21, _ = counted(MEM, 21)
per_round = (with21 - with1) / 20
fixed = (with1 - base_mem) - per_round
rounds = max(1, round((0.02 * base_mem - fixed) / per_round))
found, ratios = 0, []
for _ in range(trials):
    a_id, a, _ = counted(MEM)
    b_id, b, _ = counted(MEM, rounds)
    ratios.append(b / a)
    found += check(b_id, a_id) == "regression"
print()
print(f"| injected | rounds/op ({fixed:.0f} + {per_round:.1f} instructions each) | trials | B/A instructions (min-max) | found (check, 1% threshold, one run a side) |")
print("|---|---:|---:|---:|---:|")
print(f"| {100 * (sorted(ratios)[len(ratios) // 2] - 1):.2f}% | {rounds} | {trials} | {min(ratios):.4f}-{max(ratios):.4f} | {found}/{trials} |")
PY
