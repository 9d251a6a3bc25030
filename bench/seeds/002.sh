#!/usr/bin/env bash
# Seed 002's perf stat study over server releases, the way the seed ran it
# (examples/seeds/002.toml: sysbench's scan, insert, point-query and update-index on a
# cached database with prepared statements, the server's perf events counted one group
# at a time after a warm-up), then the seed's reading: per release family (PostgreSQL
# 12/15/18, InnoDB and MyRocks on MariaDB 10.11.18/10.11.19), each release's QPS and CPU
# per query relative to the family's oldest, the seed's newest-vs-oldest figures beside
# (MySQL 8.0.39 vs 5.6.51, FB MyRocks 8.0.32 vs 5.6.35, its Intel Xeon tables), then one
# perf stat table per step and family as `plumb compare` computes it (each counter per
# query relative to the base, GHz, ipc, cpu/o, QPS; past 1.15 marked `+` where the extra
# events could cost at least 1% of the base's instructions or cycles per query, misses
# at a nominal price in cycles, so a tiny count's jump is not marked) with each
# release's verdict: code bloat, memory-system bloat or neither.
#
#   bash scripts/get-postgres.sh 12 && bash scripts/get-postgres.sh 18          # once
#   bash scripts/get-mariadb.sh 10.11.18 && bash scripts/get-mariadb.sh 10.11.19  # once
#   bash bench/seeds/002.sh                 # this machine's scale (~25 min)
#   SCALE=0.1 bash bench/seeds/002.sh       # a tenth of the rows and seconds
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb], STORE [a new file under /var/tmp],
# SCALE [1], SUITE [examples/seeds/002.toml], REPORT_ONLY [unset; 1: no run, the
# tables of the newest suite in STORE]. The script prints every table it can and exits
# with plumb run's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/seeds/suite.sh
seed_suite 002
PYTHONPATH=bench/seeds python3 - <<'EOF'
import json, os, subprocess
from runs import newest_suite, suite_file, differences, cpu_model

plumb, store = os.environ["PLUMB"], os.environ["STORE"]
STEPS = ["scan", "insert", "point-query", "update-index"]   # the seed's order
# The seed's newest release relative to its oldest (its Intel Xeon tables, per query):
# (QPS, cpu/o, instructions) per step.
SEED = {
    "InnoDB 8.0.39 / 5.6.51": {"scan": (0.69, 1.42, 1.51), "insert": (1.11, 0.99, 1.60),
                               "point-query": (0.83, 1.22, 1.31), "update-index": (3.61, 0.41, 0.56)},
    "MyRocks 8.0.32 / 5.6.35": {"scan": (0.70, 1.47, 1.44), "insert": (0.79, 1.44, 0.82),
                                "point-query": (0.89, 1.14, 1.18), "update-index": (0.91, 1.10, 1.28)},
}
SEED_OF = {"innodb": "InnoDB 8.0.39 / 5.6.51", "myrocks": "MyRocks 8.0.32 / 5.6.35"}

runs = newest_suite(plumb, store)
# The suite the runs came from, for plumb compare's selectors (s<ID>,target=…).
suite = max(r["suite_id"] for r in json.loads(subprocess.run(
    [plumb, "runs", "--json", "--limit", "100000", "--store", store],
    check=True, capture_output=True, text=True).stdout) if r.get("suite_id"))
def vkey(v):
    return [int(x) for x in v.split(".") if x.isdigit()]
families = {}   # family -> [versions], oldest first; families in the suite's order
failed = []     # releases with no finished run: left out of their family's comparison
for parts, doc in sorted(runs, key=lambda r: r[1]["run"]["id"]):
    fam, _, ver = parts[0].partition("@")
    families.setdefault(fam, set())
    if doc["run"]["status"] == "ok":
        families[fam].add(ver)
    else:
        failed.append(f"{fam}@{ver}")
families = {f: sorted(vs, key=vkey) for f, vs in families.items()}
for f in failed:
    print(f"\n{f}: the run did not finish (plumb show it in the store for its error); left out")

# plumb compare per family: the oldest release the base.
tables = {}   # (family, step) -> perf table (compare --json's `perf`)
for fam, vers in families.items():
    if len(vers) < 2:
        continue
    sel = [f"s{suite},target={fam}@{v}" for v in vers]
    out = subprocess.run([plumb, "compare", *sel, "--json", "--store", store],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(f"\n{fam}: plumb compare failed: {out.stderr.strip()}")
        continue
    for t in json.loads(out.stdout)["perf"]:
        tables[(fam, t["step"])] = t

def row_of(t, name):
    return next((r for r in t["rows"] if r["name"] == name), None) if t else None

def interval(r, i):
    """ " (lo–hi)", the ratio's 95% interval from the repeats, or "" without one."""
    ci = r.get("ci") or []
    c = ci[i] if i < len(ci) else None
    return "" if c is None else f" ({c[0]:.2f}–{c[1]:.2f})"

def rel(t, name, i):
    r = row_of(t, name)
    v = r["rel"][i] if r and i < len(r["rel"]) else None
    return "n/a" if v is None else f"{v:.2f}{interval(r, i)}"

cols = [(f, i, v) for f, vs in families.items() for i, v in enumerate(vs) if i > 0]
for what, name, k in (("QPS", "QPS", 0), ("server CPU per query (cpu/o)", "cpu/o", 1)):
    print(f"\n### {what}: each release relative to its family's oldest (its 95% interval from the repeats), the seed's newest relative to its oldest beside\n")
    heads = [f"{f} {v} / {families[f][0]}" for f, _, v in cols] + [f"seed: {s}" for s in SEED]
    print("| step | " + " | ".join(heads) + " |")
    print("|---|" + "---:|" * len(heads))
    for step in STEPS:
        cells = [rel(tables.get((f, step)), name, i) for f, i, _ in cols]
        cells += [f"{SEED[s][step][k]:.2f}" for s in SEED]
        print(f"| {step} | " + " | ".join(cells) + " |")

for fam, vers in families.items():
    for step in STEPS:
        t = tables.get((fam, step))
        if t is None:
            continue
        seed = SEED_OF.get(fam)
        how = "each counted in turn, exact over its own seconds" if t["in_turn"] else "multiplexed by perf over the window"
        print(f"\n### {step}: perf stat per query, {fam} ({t['whose']}), relative to {vers[0]} ({how})\n")
        heads = [f"{vers[0]} per query"] + vers[1:] + ([f"seed: {seed}"] if seed else [])
        print("| counter | " + " | ".join(heads) + " |")
        print("|---|" + "---:|" * len(heads))
        for r in t["rows"]:
            base = "n/a" if r["base"] is None else f"{r['base']:,.3g}"
            cells = [base]
            for i in range(1, len(vers)):
                v = r["rel"][i] if i < len(r["rel"]) else None
                mark = "+" if i < len(r["marked"]) and r["marked"][i] else ""
                cells.append("n/a" if v is None else f"{v:.2f}{mark}{interval(r, i)}")
            if seed:
                s = SEED[seed][step]
                known = {"QPS": s[0], "cpu/o": s[1], "instructions": s[2]}
                cells.append(f"{known[r['name']]:.2f}" if r["name"] in known else "")
            print(f"| {r['name']} | " + " | ".join(cells) + " |")
        print("\n`+`: more than 1.15× the base per query where the extra events could cost at least 1% "
              "of the base's instructions or cycles per query (misses at a nominal price in cycles; "
              "`plumb compare` states the rule and notes each exception).")
        if t["no_pmu"]:
            print("\nNo hardware counters on this host (no PMU): software events and CPU per query only.")
        # One reading per release after the base, in the selectors' order.
        for v, rd in zip(vers[1:], t["readings"]):
            why = "" if rd["explanation"] in rd["verdict"] else f": {rd['explanation']}"
            print(f"\n{fam} {v}: {rd['verdict']}{why}")
missing = [f"{f}/{s}" for f in families for s in STEPS if (f, s) not in tables and len(families[f]) > 1]
if missing:
    print(f"\nno perf table (no counts, or the step failed): {', '.join(missing)}")

# What this run still does otherwise than the seed, from the suite file at its scale.
suite, scale = suite_file(os.environ["SUITE"]), float(os.environ["SCALE"])
sql = suite.get("sql", {})
def secs(k):
    v = sql.get(k, sql.get("duration", 5))
    return f"{v * scale:g} s"
counted = {r["name"] for t in tables.values() for r in t["rows"]}
no_pmu = any(t["no_pmu"] for t in tables.values())
items = [
    ("servers", "the seed's MySQL 5.6.51 → 8.0.39 (InnoDB) and FB MyRocks 5.6.35 → 8.0.32 have "
     "no binary on any registry reachable here; PostgreSQL "
     + " → ".join(families.get("pg", [])) + " (majors from npm and Debian) and MariaDB "
     + " → ".join(families.get("innodb", [])) + " (a point release, InnoDB and MyRocks) stand in: "
     "their ratios compare with the seed's in direction only"),
    ("scale", f"{sql.get('threads', 1)} clients on 1 table of {int(sql.get('table_size', 0) * scale):,} "
     f"rows, reads {secs('read_duration')} and writes {secs('write_duration')} after a "
     f"{sql.get('warmup', 1) * scale:g} s warm-up, {suite.get('repeat', 1)} runs a release, on "
     f"{os.cpu_count()} CPUs; the seed: 16 clients on 8 tables of 10M rows, reads 330 s and "
     "writes 630 s after 30 s, one run a release, on 24 cores (rows and seconds scaled by "
     "this machine's cores and memory, the read:write split kept)"),
    ("perf groups", f"{max(1, sql.get('perf_groups', 0) * scale):g} s a group in turn (the "
     "seed's 10 s), so each event is counted more than once in every step at this scale"),
    ("the CPU", "the seed's Intel Xeon; here " + cpu_model()
     + (", with no PMU in this VM: no hardware counters, so no code- or memory-system-bloat "
        "verdict from cycles and misses, software events and CPU per query only" if no_pmu else "")),
]
if not no_pmu and "L1-dcache-stores" not in counted:
    items.append(("L1-dcache-stores", "the seed's table has it; this CPU's PMU has no such "
                  "event (perf: <not supported>)"))
differences(items)
EOF
exit "$status"
