"""Seed 001's study tables (bench/seeds/001.sh, PARTS=study), from the newest
seed001-study suite in STORE: relative QPS by test for each case (the seed's charts),
throughput over time for fillseq and overwrite, and the stall sources with stall% and
compaction time for the IO-bound cases; then what still differs from the seed."""
import os
import sys

from runs import cpu_model, differences, newest_suite

plumb, store = os.environ["PLUMB"], os.environ["STORE"]
base = os.environ.get("BASE") or "speedb-udd0"
ran_releases = os.environ.get("STUDY_RELEASES", "")

# The seed's tests, by the names of x3's steps (its overwrite is x3's last write step).
TESTS = [("fillseq", "fillseq"), ("revrangeww", "revrangewhilewriting"),
         ("fwdrangeww", "fwdrangewhilewriting"), ("readww", "readwhilewriting"),
         ("overwrite", "overwriteandwait")]
CASES = ("byrx", "iobuf", "iodir")
# The seed's own findings, printed under each table (it gives charts, not numbers).
SEED_SAYS = {
    "byrx": "RocksDB is faster at fillseq; otherwise modern RocksDB and Speedb have similar "
            "average throughput",
    "iobuf": "modern RocksDB is faster at fillseq, similar on the read-while-writing tests and "
             "slower on overwrite (issue 12038, from 8.6, partly fixed in 9.9)",
    "iodir": "modern RocksDB is much faster at fillseq, then similar on the other tests",
}
CAUSES = [("l0-file-count-limit-delays", "l0_delays"), ("l0-file-count-limit-stops", "l0_stops"),
          ("memtable-limit-delays", "memtable_delays"), ("memtable-limit-stops", "memtable_stops"),
          ("pending-compaction-bytes-delays", "pending_delays"),
          ("pending-compaction-bytes-stops", "pending_stops")]

# plumb's split of stall time (plumb_core::lsm::stall_us_by_cause's names).
STALL_CAUSES = ("l0-file-count-limit", "memtable-limit", "pending-compaction-bytes", "unattributed")


def version_name(target, release):
    """The seed's names: speedb.udd0, speedb.udd1, rocksdb.8.6.7."""
    engine = target.split("-", 1)[1]
    if engine.startswith("speedb-"):
        return "speedb." + engine.removeprefix("speedb-")
    return f"{engine}.{release}"


def order(name):
    engine, _, release = name.partition(".")
    nums = tuple(int(p) for p in release.split(".") if p.isdigit())
    return (engine != "speedb", nums, release)


runs = newest_suite(plumb, store)
if not runs:
    sys.exit("seed001 study: no runs in the store")
secs = max((s["summary"]["secs"] for _, d in runs for s in d["steps"]
            if s["name"] == "overwriteandwait"), default=6)
window = max(1, round(secs / 6))   # the seed's last 300 of 1800 s
last = {d["run"]["id"]: d for _, d in newest_suite(plumb, store, "--window", str(window))}

got = {}    # (case, version) -> {step name: step}
lastw = {}  # (case, version) -> {step name: summary over the last window}
base_name = None
for parts, doc in runs:
    target, _, release = parts[0].partition("@")
    case = target.split("-", 1)[0]
    release = release or doc["run"]["engine_version"].split()[0]
    v = version_name(target, release)
    want, _, want_release = base.partition("@")
    if target.split("-", 1)[1] == want and want_release in ("", release):
        if base_name not in (None, v):
            sys.exit(f"seed001 study: BASE {base!r} is {base_name} and {v}: name the release "
                     f"(BASE={want}@{release})")
        base_name = v
    got[(case, v)] = {s["name"]: s for s in doc["steps"] if s["status"] == "ok"}
    lastw[(case, v)] = {s["name"]: s["summary"] for s in last[doc["run"]["id"]]["steps"]}
versions = sorted({v for _, v in got}, key=order)
if base_name is None:
    sys.exit(f"seed001 study: no runs of the base case {base!r} (BASE) in the suite")


def num(x, d=0):
    return "n/a" if x is None else f"{x:,.{d}f}"


def ops(case, v, step):
    s = got.get((case, v), {}).get(step)
    return s["summary"]["ops_sec"] if s else None



for case in CASES:
    if not any((case, v) in got for v in versions):
        continue
    print(f"\n### {case}: relative QPS by test (each version's ops/s / {base_name}'s)\n")
    print("| version | " + " | ".join(t for t, _ in TESTS) + " |")
    print("|---|" + "---:|" * len(TESTS))
    for v in versions:
        if (case, v) not in got:
            continue
        cells = []
        for _, step in TESTS:
            a, b = ops(case, v, step), ops(case, base_name, step)
            if v == base_name:
                cells.append(f"{num(a)} ops/s")
            else:
                cells.append("n/a" if a is None or not b else f"{a / b:.2f}")
        print(f"| {v} | " + " | ".join(cells) + " |")
    print(f"\nThe seed: {SEED_SAYS[case]}.")

print(f"\n### Throughput over time: fillseq and overwrite, per 1-second interval\n")
print(f"The seed's chart is QPS each second; its reading, the line's thickness and its drops "
      f"to near zero. Here: the median second, the 5th percentile and slowest second, the "
      f"coefficient of variation, the seconds under a tenth of the median, and the last "
      f"{window} s (the seed's last 300 of 1800 s).\n")
print(f"| case | version | test | ops/s | p50 s | p5 s | min s | cv | s < p50/10 | last {window} s | stall% |")
print("|---|---|---|" + "---:|" * 8)
for case in CASES:
    for v in versions:
        for test, step in (TESTS[0], TESTS[-1]):
            s = got.get((case, v), {}).get(step)
            if not s:
                continue
            sm, q = s["summary"], s["summary"].get("qos") or {}
            p50 = q.get("p50")
            ivs = [i["ops_sec"] for i in (s.get("intervals") or [])[:-1] if i.get("ops_sec") is not None]
            low = sum(1 for x in ivs if p50 and x < p50 / 10) if p50 else None
            w = lastw.get((case, v), {}).get(step) or {}
            print(f"| {case} | {v} | {test} | {num(sm['ops_sec'])} | {num(p50)} | {num(q.get('p5'))} "
                  f"| {num(q.get('min'))} | {num(q.get('cv'), 2)} | {num(low)} | {num(w.get('ops_sec'))} "
                  f"| {num(sm.get('stall_pct'), 1)} |")

for case in ("iobuf", "iodir"):
    vs = [v for v in versions if got.get((case, v), {}).get("overwriteandwait")]
    if not vs:
        continue
    print(f"\n### {case}: sources of write stalls during overwrite (counts, as db_bench "
          f"prints them), stall%, and compaction\n")
    print("| | " + " | ".join(vs) + " |")
    print("|---|" + "---:|" * len(vs))
    lsm = {v: got[(case, v)]["overwriteandwait"]["summary"].get("lsm") or {} for v in vs}
    for label, key in CAUSES:
        print(f"| {label} | " + " | ".join(num((lsm[v].get("stalls") or {}).get(key)) for v in vs) + " |")
    tot = lambda v, kind: sum((lsm[v].get("stalls") or {}).get(k, 0) for _, k in CAUSES if k.endswith(kind))
    print("| total-delays | " + " | ".join(num(tot(v, "delays")) for v in vs) + " |")
    print("| total-stops | " + " | ".join(num(tot(v, "stops")) for v in vs) + " |")
    # Attributed by plumb second by second (the engines keep the time only in total).
    by_cause = {v: lsm[v].get("stall_us_by_cause") for v in vs}
    for c in STALL_CAUSES:
        print(f"| stall s: {c} | " + " | ".join(
            "n/a" if by_cause[v] is None else num(by_cause[v].get(c, 0) / 1e6, 2)
            for v in vs) + " |")
    print("| stall s, every cause | " + " | ".join(num(lsm[v].get("stall_us", 0) / 1e6, 2) for v in vs) + " |")
    print("| stall% | " + " | ".join(
        num(got[(case, v)]["overwriteandwait"]["summary"].get("stall_pct"), 1) for v in vs) + " |")
    print("| Comp(sec) | " + " | ".join(num(lsm[v].get("comp_secs"), 1) for v in vs) + " |")
    print("| CompMergeCPU(sec) | " + " | ".join(num(lsm[v].get("comp_cpu_secs"), 1) for v in vs) + " |")
print("\nThe seed (iobuf, overwrite): stall% <= 9 for Speedb and >= 20 for modern RocksDB; "
      "total-delays 2560 (speedb.udd1) against 12870 (rocksdb 9.9.3), most of RocksDB's from "
      "pending compaction bytes; Comp(sec) 1.10x larger for RocksDB, CompMergeCPU(sec) 1.12x "
      "larger for Speedb. iodir: 27 delays against 974.")

scale = float(os.environ.get("SCALE", "1"))
rocks = sorted({v.partition(".")[2] for v in versions if v.startswith("rocksdb.")}, key=lambda r: order("x." + r))
differences([
    ("Speedb", "the crate registry's libspeedb-sys 0.0.5, Speedb 2.6.0 on RocksDB 8.1.1; the seed "
               "built Speedb's main at 8d850b6, which it says is based on RocksDB 8.6.7"),
    ("RocksDB releases", f"{', '.join(rocks) or 'none'} ran here; the seed ran 7.3.2, 7.10.2, "
                         "8.5.4, 8.6.7, 9.7.4 and 9.9.3 (no crate on the registry holds 7.3.2, "
                         "7.10.2, 8.5.4 or 9.7.4; 11.8.1 is the release plumb links)"),
    ("threads", "2 (40 of the seed's 48 cores is 1.7 of this machine's 2) against 40"),
    ("scale", f"2.5M keys x {scale:g} of 400-byte values in every case and {30 * scale:g} s per "
              "timed step; the seed: 100M keys cached (byrx), 2B IO-bound, 1800 s steps"),
    ("byrx", "the same keys as the IO-bound cases, cached by a 2 GiB block cache; the seed's "
             "byrx had 20x fewer keys than its IO-bound cases"),
    ("IO-bound", "a 384 MiB memory limit on the process, page cache included, stands for the "
                 "seed's 128 GB of RAM under 2B keys"),
    ("fillseq's WAL", "on here (plumb's WAL is a target's setting, for every step); x3 disables "
                      "the WAL for fillseq only"),
    ("stall time by cause", "RocksDB and Speedb count stalls by cause but keep their time only in "
                            "total; plumb gives each 1-second interval's stall time to the limits "
                            "past at its start or end (L0 files, immutable memtables, pending "
                            "compaction bytes; 'unattributed' when none was, as for a stall "
                            "shorter than the second), an attribution, not the engine's own split"),
    ("CPU", f"{cpu_model()}, 2 vCPUs in a VM; the seed: AMD EPYC 9454P, 48 cores, NVMe RAID 1 "
            "with ext4"),
])
