"""Seed 001's iostat section (issue 12038): bench/seeds/001.sh, PARTS=iostat. The tables
of each of the store's newest IOSTAT_SUITES suites (one per read_ahead_kb the script
set), oldest first, each headed by the disk's read_ahead_kb and max_sectors_kb as the
runs recorded them."""
import os, sys
from runs import newest_suite, suites

plumb, store = os.environ["PLUMB"], os.environ["STORE"]
def tables(whole, suite):
    """Prints one suite's tables; returns the case/release cells it lacks."""
    secs = max(s["summary"]["secs"] for _, d in whole for s in d["steps"] if s["name"] == "overwrite")
    window = max(1, round(secs / 6))   # the seed's last 300 of 1800 s
    last = {d["run"]["id"]: d for _, d in newest_suite(plumb, store, "--window", str(window), suite=suite)}

    got = {}   # (case, release) -> figures, the median over its repeats
    reps = {}  # (case, release) -> each repeat's figures
    for parts, doc in whole:
        case, _, release = parts[0].partition("@")
        case = case.removesuffix("-lru")   # a release run with the LRU cache (8.1.1)
        release = release or doc["run"]["engine_version"].split()[0]
        steps = {s["name"]: s["summary"] for s in doc["steps"] if s["status"] == "ok"}
        if "overwrite" not in steps:
            continue
        s = steps["overwrite"]
        w = next(x["summary"] for x in last[doc["run"]["id"]]["steps"] if x["name"] == "overwrite")
        lsm = s.get("lsm") or {}
        o = doc["run"]["options"]
        devices = ((doc["run"].get("host") or {}).get("storage") or {}).get("devices", [])
        kbs = [d["queue"]["max_sectors_kb"] for d in devices if d.get("queue", {}).get("max_sectors_kb")]
        ras = [d["queue"]["read_ahead_kb"] for d in devices if d.get("queue", {}).get("read_ahead_kb") is not None]
        reps.setdefault((case, release), []).append({
            "dev": s.get("device") or {}, "ops": s["ops_sec"], "last": w["ops_sec"],
            "stall": s.get("stall_pct"), "comp": lsm.get("comp_secs"),
            "ra": o.get("rocksdb.effective.db.compaction_readahead_size"),
            "cache": o.get("rocksdb.cache_type", "lru"),
            "max_sectors_kb": min(kbs) if kbs else "n/a",
            "read_ahead_kb": min(ras) if ras else "n/a",
        })

    def median(xs):
        xs = sorted(x for x in xs if x is not None)
        return None if not xs else (xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2)

    # Repeats of a cell: the median of each figure.
    for key, rs in reps.items():
        g = dict(rs[0])
        for k in ("ops", "last", "stall", "comp"):
            g[k] = median([r[k] for r in rs])
        g["dev"] = {c: median([r["dev"].get(c) for r in rs]) for c in rs[0]["dev"]}
        g["repeats"] = len(rs)
        got[key] = g

    # The seed's iostat averages during overwrite (its "Understanding IO via iostat"), by the
    # release each of ours stands for: 8.1.1 before 8.6 (the seed's 8.5.4), 8.6.7 inside the
    # regression (the seed's own 8.6.7; 8.8.1 and 9.7.4 are inside it too), 11.8.1 after 9.9's
    # cap (9.9.3).
    SEED = {
        "iobuf": {"8.5": (6101, 352.1, 0.42, 52.4, 14878, 1391.8, 0.41, 96.1),
                  "8.6": (40471, 184.7, 0.10, 4.7, 8552, 784.1, 0.31, 93.6),
                  "9.9": (7733, 268.7, 0.29, 34.2, 12742, 1156.0, 0.30, 93.2)},
        "iodir": {"8.5": (13315, 1484.5, 0.85, 113.6, 17436, 1607.1, 0.40, 94.0),
                  "8.6": (12978, 1444.3, 0.84, 112.9, 16981, 1563.0, 0.46, 93.4),
                  "9.9": (12990, 1450.7, 0.83, 113.8, 16704, 1576.0, 0.41, 96.3)},
    }
    STANDS_FOR = {"8.1.1": "8.5", "8.6.7": "8.6", "8.8.1": "8.6", "9.9.3": "9.9", "11.8.1": "9.9"}
    COLS = ("r_s", "rmb_s", "r_await_ms", "rareq_kb", "w_s", "wmb_s", "w_await_ms", "wareq_kb")
    BASE = "8.1.1"

    def num(v, d=1):
        return "n/a" if v is None else f"{v:,.{d}f}"

    def rel(a, b):
        return "n/a" if a is None or not b else f"{a / b:.2f}"

    def order(release):
        return tuple(int(p) for p in release.split(".") if p.isdigit())

    releases = sorted({r for _, r in got}, key=order)
    ra_kb = sorted({str(g["read_ahead_kb"]) for g in got.values()})
    ra_kb = "/".join(ra_kb) or "n/a"
    ms_kb = "/".join(sorted({str(g["max_sectors_kb"]) for g in got.values()})) or "n/a"
    print(f"\n## Suite {suite}: the data disk's read_ahead_kb {ra_kb}, max_sectors_kb {ms_kb} (as its runs recorded them)")
    for case in ("iobuf", "iodir"):
        if not any((case, r) in got for r in releases):
            continue
        print(f"\n### {case}: iostat during overwrite, ours (the seed's release beside it)\n")
        print("| rocksdb | seed's | rps | rMBps | rawait | rareqsz | wps | wMBps | wawait | wareqsz "
              f"| seed rareqsz | rareqsz rel {BASE}: ours / seed's | rMBps rel: ours / seed's |")
        print("|---|---|" + "---:|" * 11)
        base = got.get((case, BASE), {}).get("dev", {})
        for r in releases:
            if (case, r) not in got:
                continue
            d, sr = got[(case, r)]["dev"], STANDS_FOR.get(r)
            seed = SEED[case].get(sr)
            cells = [num(d.get(c), 0 if c in ("r_s", "w_s") else 2 if "await" in c else 1) for c in COLS]
            seed_base = SEED[case]["8.5"]
            cells.append(num(seed[3]) if seed else "n/a")
            cells.append(f"{rel(d.get('rareq_kb'), base.get('rareq_kb'))} / {rel(seed[3], seed_base[3]) if seed else 'n/a'}")
            cells.append(f"{rel(d.get('rmb_s'), base.get('rmb_s'))} / {rel(seed[1], seed_base[1]) if seed else 'n/a'}")
            print(f"| {r} | {sr or '-'} | " + " | ".join(cells) + " |")

    print(f"\n### overwrite: ops/s over the whole step and its last {window} s, and what the LSM says\n")
    print(f"| case | rocksdb | readahead in force | max_sectors_kb | cache | ops/s | last {window} s | rel {BASE} | stall% | comp s |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for case in ("iobuf", "iodir"):
        for r in releases:
            g = got.get((case, r))
            if not g:
                continue
            b = got.get((case, BASE), {})
            ra = "n/a" if g["ra"] is None else f"{int(g['ra']) // 1024} KiB"
            print(f"| {case} | {r} | {ra} | {g['max_sectors_kb']} | {g['cache']} | {num(g['ops'], 0)} | {num(g['last'], 0)} "
                  f"| {rel(g['ops'], b.get('ops'))} | {num(g['stall'])} | {num(g['comp'], 1)} |")
    return [f"{c}/{r} (read_ahead_kb {ra_kb})" for c in ("iobuf", "iodir")
            for r in os.environ["RELEASES"].split() if (c, r) not in got]


ids = suites(plumb, store)[-int(os.environ.get("IOSTAT_SUITES") or 1):]
missing = []
for suite in ids:
    whole = newest_suite(plumb, store, suite=suite)
    missing += tables(whole, suite)
if missing:
    sys.exit(f"seed001: no figures for {', '.join(missing)} (a release not built? see the suite's error above)")
