#!/usr/bin/env python3
"""Pools several compare-dbbench.sh result CSVs into one table.

On a machine whose single runs vary by +-10%, one 5-run batch can put a ratio of
medians a few percent either way. Pooling batches of the same binaries gives
tighter medians. The paired column is the median of run-by-run ratios (plumb run r
over the db_bench run right after it), which cancels slow drifts of the machine.

    bench/pool.py /var/tmp/plumb-bench/db/results-A.csv /var/tmp/plumb-bench/db/results-B.csv
"""
import csv
import statistics
import sys


def main(paths):
    if not paths:
        sys.exit(__doc__)
    runs = {}  # (test, threads) -> {"plumb": [...], "db_bench": [...]} in run order
    for path in paths:
        try:
            rows = list(csv.DictReader(open(path)))
        except OSError as e:
            sys.exit(f"{path}: {e.strerror}")
        for n, r in enumerate(rows, start=2):
            try:
                key = (r["test"], int(r["threads"]))
                runs.setdefault(key, {"plumb": [], "db_bench": []})[r["tool"]].append(float(r["ops_sec"]))
            except (KeyError, ValueError) as e:
                sys.exit(f"{path}:{n}: not a compare-dbbench.sh result row ({e})")
    print("| test | threads | runs | db_bench median | plumb median | ratio | paired median |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (test, th), r in sorted(runs.items()):
        d, p = r["db_bench"], r["plumb"]
        if not d or not p:
            continue
        dm, pm = statistics.median(d), statistics.median(p)
        paired = statistics.median(b / a for a, b in zip(d, p))
        print(f"| {test} | {th} | {min(len(d), len(p))} | {dm:,.0f} | {pm:,.0f} | {pm / dm:.3f} | {paired:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
