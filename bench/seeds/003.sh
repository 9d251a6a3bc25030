#!/usr/bin/env bash
# Seed 003's insert benchmark over PostgreSQL releases, the way the seed ran it
# (examples/seeds/003.toml: the published sequence l.i0 … qp1000, 1 client, a cached and
# an IO-bound size under a memory limit), then the seed's reading per size: each step's
# rate (inserts/s for the loads, queries/s for qr/qp) relative to the first release,
# the server's CPU per operation relative to it, and reads and KB written per operation
# (the seed's rpq and wkbpi). The seed's finding for this span: "Postgres is boring: no
# CPU regressions from version 12 to 15 for cached and IO-bound workloads" (its query
# and insert rates within a few percent of 12's).
#
#   bash scripts/get-postgres.sh 12 && bash scripts/get-postgres.sh 18   # once
#   bash bench/seeds/003.sh                 # this machine's scale (~40 min)
#   SCALE=0.1 bash bench/seeds/003.sh       # a tenth of the rows, inserts and seconds
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
from runs import newest_suite

got, order = {}, []   # (size, version) -> step -> figures
for (target, size), doc in newest_suite(os.environ["PLUMB"], os.environ["STORE"]):
    version = target.split("@")[-1]   # pg@12/cached
    steps = got.setdefault((size, version), {})
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
versions = sorted({v for _, v in got}, key=lambda v: [int(x) for x in v.split(".") if x.isdigit()])
base = versions[0]

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

for size in ("cached", "iobound"):
    if not any((size, v) in got for v in versions):
        continue
    for title, key, rel in (("rate (inserts/s for l.*, queries/s for q*)", "rate", True),
                            ("server CPU µs per operation", "cpu", True),
                            ("device reads per operation (rpq)", "rpo", False),
                            ("device KB written per operation (wkbpi)", "wkbpo", False)):
        what = f"relative to PostgreSQL {base} ({base}'s own figure first)" if rel else "as measured"
        print(f"\n### {size}: {title}, {what}\n")
        print("| step | " + " | ".join(versions) + " |")
        print("|---|" + "---:|" * len(versions))
        for step in order:
            b = got.get((size, base), {}).get(step)
            cells = []
            for v in versions:
                figs = got.get((size, v), {}).get(step, {})
                if rel and v != base:
                    cells.append(cell(figs, key, b or {}))
                else:
                    cells.append(cell(figs, key, None, 0 if key == "rate" else 2))
            print(f"| {step} | " + " | ".join(cells) + " |")
print(f"\nThe seed (PostgreSQL 12 to 15, small servers): no CPU regressions, cached or IO-bound; "
      f"ours: each release's rate and CPU per operation against {base} above.")
EOF
exit "$status"
