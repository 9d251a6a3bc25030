#!/usr/bin/env bash
# Seed 003's insert benchmark over releases, the way the seed ran it
# (examples/seeds/003.toml: the 2022 phases l.i0, l.x, l.i1, then range queries while
# inserts run at 100, 500 and 1000 rows/s; 1 client; a cached and an IO-bound size under
# a memory limit; PostgreSQL 12 → 15 and 18, and the InnoDB/MyRocks half on MariaDB),
# then the seed's reading per family and size: each phase's rate (inserts/s for the
# loads, queries/s for the query steps) relative to the family's first release with the
# seed's finding beside, the server's CPU per operation relative to it, and reads and KB
# written per operation (the seed's rpq and wkbpi); last, what still differs from the
# seed and why.
#
#   for v in 12 13 14 18; do bash scripts/get-postgres.sh $v; done       # once
#   for r in 10.11.18 10.11.19; do bash scripts/get-mariadb.sh $r; done  # once
#   bash bench/seeds/003.sh                 # this machine's scale (~60 min)
#   SCALE=0.1 bash bench/seeds/003.sh       # a tenth of the rows, inserts and seconds
#   SUITE=examples/ibench-2023-pg-releases.toml bash bench/seeds/003.sh  # the later sequence
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb], STORE [a new file under /var/tmp],
# SCALE [1], SUITE [examples/seeds/003.toml], REPORT_ONLY [unset; 1: no run, the
# tables of the newest suite in STORE]. A step that fails (a query step whose
# inserts fell below 95% of their rate) prints as "failed"; the script still prints
# every table and exits with plumb run's status.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/seeds/suite.sh
seed_suite 003
PYTHONPATH=bench/seeds python3 - <<'EOF'
import os
from runs import newest_suite, suite_file, differences, cpu_model

FAMILY = {"pg": "PostgreSQL", "innodb": "InnoDB (MariaDB)", "myrocks": "MyRocks (MariaDB)"}
# The seed's words for its phases.
PHASE = {"l.i0": "insert-only, no secondary index", "l.x": "create 3 secondary indexes",
         "l.i1": "insert-only, 3 secondary indexes", "l.i2": "inserts, 5 rows a commit",
         "qr100": "range queries, 100 inserts/s", "qr500": "range queries, 500 inserts/s",
         "qr1000": "range queries, 1000 inserts/s", "qp100": "point queries, 100 inserts/s",
         "qp500": "point queries, 500 inserts/s", "qp1000": "point queries, 1000 inserts/s"}


def seed_said(family, size, step):
    """The seed's finding for a phase, its newest release's rate relative to its oldest
    (PostgreSQL 12 → 15, MySQL 5.6 → 8.0.31), in its own words where it gave no figure."""
    q = step.startswith("q")
    if family == "pg":
        return "~1 (no CPU regression 12 → 15)"
    if family == "innodb" and size == "cached":
        return "~0.64" if step.startswith("l.i") else "~0.75" if q else ""
    if family == "innodb":
        if step == "l.i0":
            return "< 1 (as cached)"
        return "> 1 (better in 8.0.31)" if step == "l.i1" or q else ""
    if family == "myrocks":
        if step == "l.i0":
            return "~0.64 (as InnoDB)"
        return "~0.92" if q else ""
    return ""


got, order = {}, []   # (family, size, version) -> step -> figures
for (target, size), doc in newest_suite(os.environ["PLUMB"], os.environ["STORE"]):
    family, _, version = target.partition("@")   # pg@12/cached
    steps = got.setdefault((family, size, version), {})
    for s in doc["steps"]:
        if s["name"] == "reduce-debt":
            continue
        if s["name"] not in order:
            order.append(s["name"])
        m = s["summary"]
        srv = m.get("server") or {}
        steps[s["name"]] = None if s["status"] != "ok" else {
            "rate": m["ops_sec"],
            "cpu": srv.get("cpu_us_query") or m.get("cpu_us_op"),
            "rpo": m.get("rd_op"),
            "wkbpo": m.get("wkb_op"),
        }


def vkey(v):
    return [int(x) for x in v.split(".") if x.isdigit()]


families = {}
for f, _, v in got:
    families.setdefault(f, set()).add(v)
families = {f: sorted(vs, key=vkey) for f, vs in families.items()}


def cell(figs, key, rel_to=None, d=2):
    if figs is None:
        return "failed"
    v = figs.get(key)
    if v is None:
        return "n/a"
    if rel_to is None:
        return f"{v:,.{d}f}"
    b = rel_to.get(key) if rel_to else None
    return f"{v / b:.2f}" if b else "n/a"


for family, versions in families.items():
    base, name = versions[0], FAMILY.get(family, family)
    for size in ("cached", "iobound"):
        if not any((family, size, v) in got for v in versions):
            continue
        for title, key, rel in (("rate (inserts/s for l.*, queries/s for q*)", "rate", True),
                                ("server CPU µs per operation", "cpu", True),
                                ("device reads per operation (rpq)", "rpo", False),
                                ("device KB written per operation (wkbpi)", "wkbpo", False)):
            what = f"relative to {base} ({base}'s own figure first)" if rel else "as measured"
            seed = rel and key == "rate"
            print(f"\n### {size}: {name} {title}, {what}\n")
            heads = ["step", "phase"] + versions + (["the seed: newest / oldest"] if seed else [])
            print("| " + " | ".join(heads) + " |")
            print("|---|---|" + "---:|" * len(versions) + ("---|" if seed else ""))
            for step in order:
                b = got.get((family, size, base), {}).get(step)
                cells = [step, PHASE.get(step, "")]
                for v in versions:
                    figs = got.get((family, size, v), {}).get(step, {})
                    if rel and v != base:
                        cells.append(cell(figs, key, b or {}))
                    else:
                        cells.append(cell(figs, key, None, 0 if key == "rate" else 2))
                if seed:
                    cells.append(seed_said(family, size, step))
                print("| " + " | ".join(cells) + " |")

# What this run still does otherwise than the seed, from the suite file at its scale.
suite, scale = suite_file(os.environ["SUITE"]), float(os.environ["SCALE"])
ib = suite.get("ib", {})
sizes = {z["name"]: int(z["num"] * scale) for z in suite.get("size", [])}
steps = next((w.get("ib") for w in suite.get("workload", []) if w.get("ib")), None)
cpu = cpu_model()
items = []
if "innodb" in families or "myrocks" in families:
    items.append(("MySQL", "the seed's InnoDB and MyRocks ran on MySQL 5.6 → 8.0.31 and FB "
                  "MyRocks 5.6 → 8.0; none has a binary on any registry reachable here, so "
                  "MariaDB " + " → ".join(families.get("innodb") or families.get("myrocks"))
                  + " (a point release) stands in with its InnoDB and its MyRocks: direction "
                  "only, not the seed's 5.6 → 8.0 regressions"))
if "pg" in families:
    items.append(("PostgreSQL", "releases " + ", ".join(families["pg"]) + " as npm's builds "
                  "(Debian's for 15), where the seed built 12 → 15 from source"))
items += [
    ("scale", ", ".join(f"{k} {v:,} rows" for k, v in sizes.items())
     + f", l.i1 {int(ib.get('inserts', 0) * scale):,} inserts, query steps "
     f"{ib.get('duration', 0) * scale:g} s, 1 client, on {os.cpu_count()} CPUs, each server "
     "under a memory limit; the seed: 20M rows cached and 800M IO-bound on 4-core servers "
     "with 16 GB (rows scaled to the limit: cached fits the buffer pool, IO-bound is about "
     "twice the limit)"),
    ("the CPU", f"the seed's small servers (Intel NUCs); here {cpu}"),
]
if steps is None or "l.i2" in steps or ib.get("delete_per_insert"):
    items.append(("the sequence", "the insert benchmark as run since 2023 (l.i2, point "
                  "queries, a delete per insert), not the seed's 2022 phases"))
else:
    items.append(("l.i1's commits", "50 rows a commit, as the insert benchmark's l.i1 has "
                  "since 2023; the seed's post does not give its 2022 batch size"))
differences(items)
EOF
exit "$status"
