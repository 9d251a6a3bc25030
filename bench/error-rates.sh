#!/usr/bin/env bash
# How often `plumb compare` (and `plumb check`) is wrong, measured on this machine:
#   - false positives: the same build against itself (A/A), over ROUNDS-1 pairs;
#   - detection: a slowdown of 2%, 5% and 10% injected into the memory engine
#     (PLUMB_TEST_MEMORY_OP_NS: a fixed CPU cost per op) against the base of its round.
# Each round runs the base and the three slowdowns, REPEATS runs each (plumb kv
# --repeat), in an order rotated every round so drift falls on all alike; every
# comparison is made at 1 (the default --repeat), 3 and REPEATS repeats by taking the
# first runs of each group (selector `FIRST-LAST`). plumb kv's default durations and
# size; readrandom is judged.
#
#   bash bench/error-rates.sh [PLUMB] [ROUNDS] [REPEATS]
# Prints a Markdown table; the store is kept in $OUT (default /var/tmp/plumb-error-rates).
#
#   MODE=ab bash bench/error-rates.sh [PLUMB] [TRIALS] [SLICES]
# The same question for interleaved A/B (plumb ab --rounds SLICES): per trial, one
# plumb ab of the base against itself, or against the 5% or 10% slowdown; the verdict is
# its permutation test over the slices (p <= 0.05).
#
#   MODE=duet bash bench/error-rates.sh [PLUMB] [TRIALS] [SLICES]
# The same question for duet A/B (plumb ab --duet --rounds SLICES: A and B at the same
# time, each on its own CPUs): per trial and level one duet; its verdict at 6, 10 and
# SLICES rounds is `plumb ratio --paired` over the first rounds' blocks of two (as plumb
# ab judges them, p <= 0.05). Then, per
# trial, `plumb ab --duet --until 2%` (cap SLICES) on A/A, 2% and 5%: its verdict and
# the slices it took. DURATION (default 1) sets each slice's readrandom seconds.
# LEVELS="0 2 5 10" picks the rows (percent slower; 0 is A/A); UNTIL=0 skips the --until
# part; EXACT=1 injects exact rounds of work (PLUMB_TEST_MEMORY_OP_ROUNDS) calibrated
# in a duet instead of nanoseconds calibrated on one process alone.
#
#   MODE=floors bash bench/error-rates.sh [PLUMB] [TRIALS] [REPEATS]
# plumb check with noise floors learned from the store: first `plumb noise` (6 blocks),
# then per trial a block of REPEATS runs of the base and of 5% and 10% slowdowns (order
# rotated); the base block is checked against the previous trial's (A/A), each
# slowdown against its trial's base, at check's default 5% threshold.
#
#   MODE=power bash bench/error-rates.sh [PLUMB] [TRIALS] [SLICES]
# Whether the "could see" figure (the reach plumb ab prints beside "no difference") is
# what it says: A/A duets (plumb ab --duet --rounds SLICES) report their reach at 80%
# power; a slowdown of the median reach of AA (default 3) of them is injected into B
# (exact rounds of work, calibrated in a duet as EXACT=1 does), and TRIALS duets of it
# count how often they find it. Printed: the share found, beside
# the power each injected duet's own reported scatter predicts for the change as it ran
# (80% where that change is the reach): they should agree within ±10 points at 20
# trials. DURATION (default 1) sets each slice's readrandom seconds.
set -euo pipefail
PLUMB=${1:-target/release/plumb}
ROUNDS=${2:-21}
REPEATS=${3:-5}
OUT=${OUT:-/var/tmp/plumb-error-rates}
mkdir -p "$OUT"
STORE="$OUT/store.sqlite"
rm -f "$STORE"
export PLUMB ROUNDS REPEATS STORE
if [ "${MODE:-}" = power ]; then
python3 - <<'EOF2'
import json, math, os, statistics, subprocess, sys
plumb, store = os.environ["PLUMB"], os.environ["STORE"]
trials, slices = int(os.environ["ROUNDS"]), int(os.environ["REPEATS"])
STEP = "readrandom"
knob = "PLUMB_TEST_MEMORY_OP_ROUNDS"
kv = ["kv", "--engine", "memory", "--benchmarks", f"fillseq,{STEP}",
      "--duration", os.environ.get("DURATION", "1")]
env = {k: v for k, v in os.environ.items() if k not in ("PLUMB_TEST_MEMORY_OP_NS", knob)}

def duet(rounds, b_rounds=0):
    extra = ["--b-env", f"{knob}={b_rounds}"] if b_rounds else []
    out = subprocess.run([plumb, "ab", "--duet", "--rounds", str(rounds), "--step", STEP, "--json",
                          "--store", store, *extra, "--", *kv], env=env, check=True,
                         capture_output=True, text=True).stdout
    return next(s for s in json.loads(out)["steps"] if s["step"] == STEP)

def t_cdf(x, df):
    # Student's t CDF by Simpson's rule on its density (no scipy here).
    c = math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
    f = lambda u: c * (1 + u * u / df) ** (-(df + 1) / 2)
    n, a = 2000, min(x, 0.0)
    h = (abs(x)) / n if x else 0
    if x == 0:
        return 0.5
    s = f(0) + f(abs(x)) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
    half = s * h / 3
    return 0.5 + half if x > 0 else 0.5 - half

def t_inv(p, df):
    lo, hi = -50.0, 50.0
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2

def predicted(reach, effect):
    # The chance this duet finds a change of `effect` (ln B/A), from the scatter it
    # reported: se = ln(1 + mde) / (t_a + t_power) at its degrees of freedom.
    df = reach["n"] - 1
    ta, tb = t_inv(1 - reach["alpha"] / 2, df), t_inv(reach["power"], df)
    se = math.log(1 + reach["mde"]) / (ta + tb)
    return 1 - t_cdf(ta - abs(effect) / se, df)

# The size to inject: the median reach of a few A/A duets, in rounds of work calibrated
# in a duet (EXACT=1's way).
probe = 200
s = duet(8, probe)
per_round = (1 / s["ratio"] - 1) / probe
first = [duet(slices)["reach"]["mde"] for _ in range(int(os.environ.get("AA", "3")))]
mde = statistics.median(first)
inject = max(1, round(mde / per_round))   # B/A = 1/(1 + mde): ln B/A = -ln(1 + mde)
print(f"calibration in a duet: {probe} rounds made B/A {s['ratio']:.4f}; A/A reaches "
      f"{', '.join(f'{100*r:.1f}%' for r in first)}: injecting {inject} rounds/op", file=sys.stderr)
aa, hit = first, []
for t in range(trials):
    b = duet(slices, inject)
    hit.append((bool(b["significant"]), b["ratio"], b["reach"]))
    print(f"trial {t+1}/{trials}: injected ratio {b['ratio']:.4f} "
          f"{'found' if b['significant'] else 'not found'}, could see {100*b['reach']['mde']:.1f}%", file=sys.stderr)
effect = statistics.median(math.log(x[1]) for x in hit)   # the injected change as it ran
found = sum(x[0] for x in hit)
pred = statistics.mean(predicted(x[2], effect) for x in hit)
reach_med = statistics.median(aa)
print(f"\n| plumb ab --duet --rounds {slices} | trials | A/A reach (median, range) | injected change as it ran | found | power predicted from each duet's own scatter | stated at the reach |")
print("|---|---:|---:|---:|---:|---:|---:|")
print(f"| readrandom, {inject} rounds/op into B | {trials} | {100*reach_med:.1f}% ({100*min(aa):.1f}-{100*max(aa):.1f}%) | "
      f"{100*(math.exp(-effect)-1):.1f}% | {found}/{trials} ({100*found/trials:.0f}%) | {100*pred:.0f}% | 80% |")
EOF2
exit 0
fi
if [ "${MODE:-}" = floors ]; then
python3 - <<'EOF'
import json, os, statistics, subprocess, sys
plumb, store = os.environ["PLUMB"], os.environ["STORE"]
trials, repeats = int(os.environ["ROUNDS"]), int(os.environ["REPEATS"])
STEP = "readrandom"
kv = ["kv", "--engine", "memory", "--benchmarks", f"fillseq,{STEP}"]
env = {k: v for k, v in os.environ.items() if k != "PLUMB_TEST_MEMORY_OP_NS"}

def run(args, cost=0, check=True):
    e = dict(env)
    if cost:
        e["PLUMB_TEST_MEMORY_OP_NS"] = str(cost)
    return subprocess.run([plumb, *args], env=e, check=check, capture_output=True, text=True)

def block(tag, cost):
    out = json.loads(run([*kv, "--repeat", str(repeats), "--tag", tag, "--json", "--store", store], cost).stdout)
    return [r["run"]["id"] for r in out], [next(s["summary"]["ops_sec"] for s in r["steps"] if s["name"] == STEP) for r in out]

def check(new, base):
    p = run(["check", f"tag={new}", "--base", f"tag={base}", "--step", STEP, "--json", "--store", store], check=False)
    j = json.loads(p.stdout)["results"][0]
    return j["verdict"], j["ratio"], (j["floor"] or {}).get("floor")

# The floor, measured on purpose first: plumb noise's blocks are history for check.
noise = json.loads(run(["noise", "--blocks", "6", "--repeat", str(repeats), "--json", "--store", store, "--", *kv]).stdout)
print(f"plumb noise: {noise['floors']}", file=sys.stderr)
_, ops = block("calibration", 0)
t_ns = 1e9 / statistics.median(ops)
levels = {"A/A (same build)": 0}
for p in (0.05, 0.10):
    levels[f"{int(p*100)}% slower"] = max(1, round(t_ns * p / (1 - p)))
print(f"calibration: {STEP} {statistics.median(ops):.0f} ops/s; injected ns: {levels}", file=sys.stderr)
rows = {k: [] for k in levels}
prev = "calibration"
for t in range(trials):
    base = f"t{t}-base"
    order = list(levels)[t % 3:] + list(levels)[:t % 3]
    for name in order:
        cost = levels[name]
        tag = base if cost == 0 else f"t{t}-{cost}"
        block(tag, cost)
    for name, cost in levels.items():
        rows[name].append(check(base, prev) if cost == 0 else check(f"t{t}-{cost}", base))
    prev = base
    print(f"trial {t+1}/{trials}: " + ", ".join(f"{k} {v[-1][0]} {v[-1][1]:.3f} floor {v[-1][2]}" for k, v in rows.items()), file=sys.stderr)
print(f"\n| plumb check (5%), blocks of {repeats} repeats, learned floors | injected | trials | regression | unstable | pass | median floor | median ratio |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for name, cost in levels.items():
    r = rows[name]
    c = lambda w: sum(x[0] == w for x in r)
    floors = [x[2] for x in r if x[2] is not None]
    fl = f"{100*statistics.median(floors):.1f}%" if floors else "n/a"
    print(f"| {name} | {cost} ns/op | {len(r)} | {c('regression')} | {c('unstable')} | {c('pass') + c('improved')} | {fl} | {statistics.median(x[1] for x in r):.3f} |")
EOF
exit 0
fi
if [ "${MODE:-}" = duet ]; then
python3 - <<'EOF'
import json, math, os, statistics, subprocess, sys
plumb, store = os.environ["PLUMB"], os.environ["STORE"]
trials, slices = int(os.environ["ROUNDS"]), int(os.environ["REPEATS"])
STEP = "readrandom"
kv = ["kv", "--engine", "memory", "--benchmarks", f"fillseq,{STEP}",
      "--duration", os.environ.get("DURATION", "1")]
env = {k: v for k, v in os.environ.items() if k != "PLUMB_TEST_MEMORY_OP_NS"}

def run(args):
    return subprocess.run([plumb, *args], env=env, check=True, capture_output=True,
                          text=True).stdout

def duet(cost_ns, until=None):
    extra = ["--b-env", f"{knob}={cost_ns}"] if cost_ns else []
    if until:
        extra += ["--until", until]
    j = json.loads(run(["ab", "--duet", "--rounds", str(slices), "--step", STEP, "--json",
                        "--store", store, *extra, "--", *kv]))
    return next(s for s in j["steps"] if s["step"] == STEP), j["rounds"]

def paired(a, b):
    # plumb ab judges a duet's rounds two by two (they swapped CPUs): each block's
    # geometric means, paired.
    blk = lambda v: [math.sqrt(v[i] * v[i + 1]) for i in range(0, len(v) - 1, 2)]
    j = json.loads(run(["ratio", "--paired", "--json", "--base", ",".join(map(str, blk(a))),
                        "--other", ",".join(map(str, blk(b)))]))
    return j["p"] is not None and j["p"] <= 0.05, j["ratio"]

# The injected cost: nanoseconds calibrated on one process alone (as the other modes
# do), or with EXACT=1 rounds of work (PLUMB_TEST_MEMORY_OP_ROUNDS) calibrated in a duet
# itself: a spin loop timed alone lands smaller with both vCPUs busy (the first table
# in bench/README.md: "5%" ran as 3.2%), rounds do not depend on the clock.
# LEVELS picks the rows, e.g. LEVELS="0 5" for A/A and 5%.
exact = os.environ.get("EXACT") == "1"
want = [float(x) for x in os.environ.get("LEVELS", "0 2 5 10").split()]
knob = "PLUMB_TEST_MEMORY_OP_ROUNDS" if exact else "PLUMB_TEST_MEMORY_OP_NS"
if exact:
    probe = 200   # rounds large enough that their effect (~15%) stands well clear of a duet's noise
    j = json.loads(run(["ab", "--duet", "--rounds", "8", "--step", STEP, "--json", "--store", store,
                        "--b-env", f"{knob}={probe}", "--", *kv]))
    s = next(s for s in j["steps"] if s["step"] == STEP)
    per_round = (1 / s["ratio"] - 1) / probe   # the slowdown (time) one round adds
    levels = {("A/A (same build)" if p == 0 else f"{p:g}% slower"):
              (0 if p == 0 else max(1, round((1 / (1 - p / 100) - 1) / per_round))) for p in want}
    print(f"calibration in a duet: {probe} rounds made B/A {s['ratio']:.4f}; rounds: {levels}", file=sys.stderr)
else:
    out = run([*kv, "--repeat", "3", "--json", "--store", store])
    ops = [next(s["summary"]["ops_sec"] for s in r["steps"] if s["name"] == STEP) for r in json.loads(out)]
    t_ns = 1e9 / statistics.median(ops)
    levels = {("A/A (same build)" if p == 0 else f"{p:g}% slower"):
              (0 if p == 0 else max(1, round(t_ns * p / 100 / (1 - p / 100)))) for p in want}
    print(f"calibration: {STEP} {statistics.median(ops):.0f} ops/s, {t_ns:.0f} ns/op; injected ns: {levels}", file=sys.stderr)
unit = "rounds/op" if exact else "ns/op"
looks = sorted({n for n in (6, 10, slices) if n <= slices})
fixed = {k: {n: [] for n in looks} for k in levels}
sds = []
for t in range(trials):
    for name, cost in levels.items():
        s, _ = duet(cost)
        for n in looks:
            fixed[name][n].append(paired(s["a"][:n], s["b"][:n]))
        if cost == 0:
            d = [math.log(b / a) for a, b in zip(s["a"], s["b"])]
            sds.append((statistics.stdev(d), statistics.stdev((d[i] + d[i + 1]) / 2 for i in range(0, len(d) - 1, 2))))
    print(f"trial {t+1}/{trials}: " + ", ".join(f"{k} {'sig' if v[slices][-1][0] else 'ns'} {v[slices][-1][1]:.3f}" for k, v in fixed.items()), file=sys.stderr)
print(f"\nsd of ln(B/A) in an A/A duet: per round median {statistics.median(x[0] for x in sds):.4f} (max {max(x[0] for x in sds):.4f}), per block of two rounds median {statistics.median(x[1] for x in sds):.4f} (max {max(x[1] for x in sds):.4f}), {len(sds)} duets of {slices} rounds")
print(f"\n| plumb ab --duet | injected | trials | " + " | ".join(f"significant at {n} pairs" for n in looks) + " | median ratio (all pairs) |")
print("|---|---:|---:|" + "---:|" * len(looks) + "---:|")
for name, cost in levels.items():
    cells = []
    for n in looks:
        r = fixed[name][n]
        sig = sum(x[0] for x in r)
        cells.append(f"{sig}/{len(r)} ({100*sig/len(r):.0f}%)")
    med = statistics.median(x[1] for x in fixed[name][slices])
    print(f"| {name} | {cost} {unit} | {trials} | " + " | ".join(cells) + f" | {med:.3f} |")
if os.environ.get("UNTIL", "1") == "0":
    sys.exit(0)
seq = {k: [] for k in list(levels)[:3]}
for t in range(trials):
    for name in seq:
        s, rounds = duet(levels[name], until="2%")
        seq[name].append((s["significant"], rounds, s["settled"], s["precision"]))
    print(f"until trial {t+1}/{trials}: " + ", ".join(f"{k} {v[-1][2]} in {v[-1][1]}" for k, v in seq.items()), file=sys.stderr)
print(f"\n| plumb ab --duet --until 2% (cap {slices}) | trials | significant | within ±2% | open at the cap | median slices (max) |")
print("|---|---:|---:|---:|---:|---:|")
for name, r in seq.items():
    c = lambda w: sum(x[2] == w for x in r)
    sig = sum(x[0] for x in r)
    ns = [x[1] for x in r]
    print(f"| {name} | {len(r)} | {sig}/{len(r)} ({100*sig/len(r):.0f}%) | {c('within')} | {c('open')} | {statistics.median(ns):.0f} ({max(ns)}) |")
EOF
exit 0
fi
if [ "${MODE:-}" = ab ]; then
python3 - <<'EOF'
import json, os, statistics, subprocess, sys
plumb, store = os.environ["PLUMB"], os.environ["STORE"]
trials, slices = int(os.environ["ROUNDS"]), int(os.environ["REPEATS"])
STEP = "readrandom"
kv = ["kv", "--engine", "memory", "--benchmarks", f"fillseq,{STEP}"]
env = {k: v for k, v in os.environ.items() if k != "PLUMB_TEST_MEMORY_OP_NS"}

def ab(cost_ns):
    extra = ["--b-env", f"PLUMB_TEST_MEMORY_OP_NS={cost_ns}"] if cost_ns else []
    out = subprocess.run([plumb, "ab", "--rounds", str(slices), "--json", "--store", store,
                          *extra, "--", *kv], env=env, check=True, capture_output=True,
                         text=True).stdout
    s = next(s for s in json.loads(out)["steps"] if s["step"] == STEP)
    return s["significant"], s["ratio"], s["a"], s["b"]

# Calibrate as the blocked mode does: the base op's time from three runs.
out = subprocess.run([plumb, *kv, "--repeat", "3", "--json", "--store", store], env=env,
                     check=True, capture_output=True, text=True).stdout
ops = [next(s["summary"]["ops_sec"] for s in r["steps"] if s["name"] == STEP) for r in json.loads(out)]
t_ns = 1e9 / statistics.median(ops)
levels = {"A/A (same build)": 0}
for p in (0.05, 0.10):
    levels[f"{int(p*100)}% slower"] = max(1, round(t_ns * p / (1 - p)))
print(f"calibration: {STEP} {statistics.median(ops):.0f} ops/s, {t_ns:.0f} ns/op; injected ns: {levels}", file=sys.stderr)
rows = {k: [] for k in levels}
for t in range(trials):
    for name, cost in levels.items():
        rows[name].append(ab(cost))
    print(f"trial {t+1}/{trials}: " + ", ".join(f"{k} {'sig' if v[-1][0] else 'ns'} {v[-1][1]:.3f}" for k, v in rows.items()), file=sys.stderr)
print(f"\n| plumb ab, {slices} slices a side | injected | trials | significant (p <= 0.05) | median ratio |")
print("|---|---:|---:|---:|---:|")
for name, cost in levels.items():
    r = rows[name]
    sig = sum(x[0] for x in r)
    print(f"| {name} | {cost} ns/op | {len(r)} | {sig}/{len(r)} ({100*sig/len(r):.0f}%) | {statistics.median(x[1] for x in r):.3f} |")
EOF
exit 0
fi
python3 - <<'EOF'
import json, os, subprocess, statistics, sys

plumb, store = os.environ["PLUMB"], os.environ["STORE"]
rounds, repeats = int(os.environ["ROUNDS"]), int(os.environ["REPEATS"])
STEP = "readrandom"

def kv(tag, cost_ns, n):
    env = dict(os.environ)
    env.pop("PLUMB_TEST_MEMORY_OP_NS", None)
    if cost_ns:
        env["PLUMB_TEST_MEMORY_OP_NS"] = str(cost_ns)
    out = subprocess.run(
        [plumb, "kv", "--engine", "memory", "--benchmarks", f"fillseq,{STEP}",
         "--repeat", str(n), "--tag", tag, "--json", "--store", store],
        env=env, check=True, capture_output=True, text=True).stdout
    runs = json.loads(out)
    runs = runs if isinstance(runs, list) else [runs]
    ids = [r["run"]["id"] for r in runs]
    ops = [next(s["summary"]["ops_sec"] for s in r["steps"] if s["name"] == STEP) for r in runs]
    return ids, ops

# Calibrate: the base op's time, from three runs not counted.
_, ops = kv("calibration", 0, 3)
t_ns = 1e9 / statistics.median(ops)
levels = {"base": 0}
for p in (0.02, 0.05, 0.10):
    levels[f"{int(p*100)}%"] = max(1, round(t_ns * p / (1 - p)))
print(f"calibration: {STEP} {statistics.median(ops):.0f} ops/s, {t_ns:.0f} ns/op; "
      f"injected ns: {levels}", file=sys.stderr)

groups = []  # per round: {cond: (ids, ops)}
names = list(levels)
for r in range(rounds):
    g = {}
    order = names[r % len(names):] + names[:r % len(names)]
    for cond in order:
        g[cond] = kv(f"r{r}-{cond}", levels[cond], repeats)
    groups.append(g)
    print(f"round {r+1}/{rounds}: " + ", ".join(
        f"{c} {statistics.median(g[c][1]):.0f}" for c in names), file=sys.stderr)

def sel(ids, n):
    return f"{ids[0]}-{ids[n-1]}" if n > 1 else str(ids[0])

def compare(a, b):
    out = subprocess.run([plumb, "compare", a, b, "--json", "--store", store],
                         check=True, capture_output=True, text=True).stdout
    c = json.loads(out)
    i = c["steps"].index(STEP)
    cell = c["ops_sec"]["rows"][i][1]
    return cell["significant"], cell["ratio"]

def check(a, b):
    p = subprocess.run([plumb, "check", b, "--base", a, "--step", STEP, "--json",
                        "--store", store], capture_output=True, text=True)
    return json.loads(p.stdout)["results"][0]["verdict"]

print("\n| comparison | repeats | trials | compare: significant | check (5%): regression / unstable / pass | median ratio |")
print("|---|---:|---:|---:|---:|---:|")
for n in sorted({1, min(3, repeats), repeats}):
    for cond in names:
        pairs = ([(groups[r]["base"], groups[r + 1]["base"]) for r in range(rounds - 1)]
                 if cond == "base" else [(groups[r]["base"], groups[r][cond]) for r in range(rounds)])
        sig, ratios, verdicts = 0, [], []
        for a, b in pairs:
            s, ratio = compare(sel(a[0], n), sel(b[0], n))
            sig += bool(s)
            ratios.append(ratio)
            verdicts.append(check(sel(a[0], n), sel(b[0], n)))
        label = "A/A (same build)" if cond == "base" else f"{cond} slower (+{levels[cond]} ns/op)"
        v = lambda w: sum(x == w for x in verdicts)
        print(f"| {label} | {n} | {len(pairs)} | {sig}/{len(pairs)} ({100*sig/len(pairs):.0f}%) | "
              f"{v('regression')} / {v('unstable')} / {v('pass') + v('improved')} | "
              f"{statistics.median(ratios):.3f} |")
EOF
