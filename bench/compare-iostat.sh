#!/usr/bin/env bash
# plumb's per-second device figures beside sysstat's `iostat -x 1`, taken at the same
# time on the same device: one plumb kv run (by default RocksDB with direct reads and an
# 8 MiB cache, so readrandom goes to the device) while `iostat -x -y -d -k DEV 1` runs
# beside it. For every second plumb stored, prints its r/s, rkB/s, r_await, rareq-sz,
# w/s, w_await, wareq-sz, aqu-sz and %util next to iostat's over the same time, then the
# median, min and max of plumb/iostat per figure over the whole seconds. Not run by CI
# (it needs a release build and ~1 minute of a quiet disk).
#
#   CARGO_TARGET_DIR=/var/tmp/plumb-target cargo build --release
#   flock /tmp/plumb-bench.lock bench/compare-iostat.sh
#
#   # another engine, more keys, longer steps:
#   ENGINE=lmdb EXTRA= NUM=2000000 SECS=30 bench/compare-iostat.sh
#
# Env: PLUMB (binary, default /var/tmp/plumb-target/release/plumb), DIR (data dir's
#      parent, default /var/tmp/plumb-iostat), ENGINE (rocksdb), BENCHMARKS
#      (fillrandom,readrandom), NUM (300000), SECS (20 per step), EXTRA (engine options,
#      default "--use-direct-reads --cache-size 8388608" for rocksdb), DEV (the device,
#      default the one holding DIR), OUT (results dir). Needs sysstat's iostat
#      (`apt-get install sysstat`; scripts/setup.sh installs it) and python3.
#
# How seconds are matched: iostat's k-th report (-y drops the since-boot one) covers
# [S + k - 1, S + k], S being when it started (its reports drift by a few ms over a
# minute); plumb's interval i covers [E - secs_i, E], E = the step's ended_at − (the
# step's window − t_i). The two tools' seconds do not start together, so iostat's
# figure for plumb's second is its two overlapping seconds weighted by their overlap
# (an await or a request size also by each second's requests, as iostat would compute
# it over their union). Both read the same /proc/diskstats counters with the same
# formulas (plumb's window is its own clock between its readings, iostat's the
# difference of two /proc/uptime readings), so a steady second should agree within a
# few percent; a second in which the load changes differs by how it changed inside
# iostat's seconds.
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
DIR=${DIR:-/var/tmp/plumb-iostat}
ENGINE=${ENGINE:-rocksdb}
BENCHMARKS=${BENCHMARKS:-fillrandom,readrandom}
NUM=${NUM:-300000}
SECS=${SECS:-20}
if [[ -z ${EXTRA+set} ]]; then
  if [[ $ENGINE == rocksdb ]]; then EXTRA="--use-direct-reads --cache-size 8388608"; else EXTRA=""; fi
fi
OUT=${OUT:-$DIR/results-$(date +%Y%m%d-%H%M%S)}
log() { echo "[compare-iostat] $*" >&2; }

command -v iostat >/dev/null || { log "iostat not found: apt-get install sysstat"; exit 1; }
command -v python3 >/dev/null || { log "python3 not found"; exit 1; }
[[ -x $PLUMB ]] || { log "no plumb binary at $PLUMB (see the header for the build)"; exit 1; }
mkdir -p "$DIR" "$OUT"
DB="$DIR/db"
rm -rf "$DB"
if [[ -z ${DEV:-} ]]; then
  src=$(findmnt -n -o SOURCE --target "$DIR")
  DEV=$(basename "$(readlink -f "$src")")
fi
grep -qw "$DEV" /proc/diskstats || { log "$DEV (holding $DIR) is not in /proc/diskstats; set DEV="; exit 1; }
log "device $DEV, results in $OUT"

IOSTAT_PID=
cleanup() {
  [[ -n $IOSTAT_PID ]] && kill "$IOSTAT_PID" 2>/dev/null || true
  rm -rf "$DB"
}
trap cleanup EXIT

# Line-buffered so nothing is lost when it is stopped; LC_ALL=C for '.' decimals.
date +%s.%N >"$OUT/iostat.start"
LC_ALL=C stdbuf -oL iostat -x -y -d -k "$DEV" 1 >"$OUT/iostat.txt" &
IOSTAT_PID=$!
sleep 1.5
log "plumb kv --engine $ENGINE --benchmarks $BENCHMARKS --num $NUM --duration $SECS $EXTRA"
# shellcheck disable=SC2086
"$PLUMB" kv --engine "$ENGINE" --db "$DB" --benchmarks "$BENCHMARKS" --num "$NUM" \
  --duration "$SECS" $EXTRA --store "$OUT/store.sqlite" --json >"$OUT/plumb.json"
sleep 1.5
kill "$IOSTAT_PID" 2>/dev/null || true
wait "$IOSTAT_PID" 2>/dev/null || true
IOSTAT_PID=

python3 - "$OUT" "$DEV" <<'PY'
import json, statistics, sys
from datetime import datetime

out, dev = sys.argv[1], sys.argv[2]
start = float(open(f"{out}/iostat.start").read())

# iostat -x text: a header line naming the columns, then one line per device.
reports, cols = [], None
for line in open(f"{out}/iostat.txt"):
    f = line.split()
    if not f:
        continue
    if f[0].startswith("Device"):
        cols = f
    elif cols and f[0] == dev and len(f) == len(cols):
        reports.append({c: float(v) for c, v in zip(cols[1:], f[1:])})
io_win = [(start + k, start + k + 1, r) for k, r in enumerate(reports)]

doc = json.loads(open(f"{out}/plumb.json").read())
if isinstance(doc, list):
    doc = doc[0]
if doc["run"].get("device") not in (None, dev):
    print(f"warning: plumb measured {doc['run']['device']}, iostat {dev}")

def ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

# (header, plumb's device key, iostat's column, decimals, weight): a rate is averaged
# over iostat's seconds by their overlap with plumb's; an await or a request size by
# overlap × that direction's requests (what iostat itself would compute over the union).
FIG = [("r/s", "r_s", "r/s", 0, None), ("rkB/s", "rmb_s", "rkB/s", 0, None),
       ("r_await", "r_await_ms", "r_await", 2, "r/s"),
       ("rareq-sz", "rareq_kb", "rareq-sz", 1, "r/s"), ("w/s", "w_s", "w/s", 0, None),
       ("w_await", "w_await_ms", "w_await", 2, "w/s"),
       ("wareq-sz", "wareq_kb", "wareq-sz", 1, "w/s"),
       ("aqu-sz", "aqu_sz", "aqu-sz", 2, None), ("%util", "util_pct", "%util", 1, None)]

def cell(v, d):
    return "n/a" if v is None else f"{v:.{d}f}"

def plumb_fig(d, key):
    v = d.get(key)
    return v * 1024 if key == "rmb_s" and v is not None else v

def iostat_fig(parts, col, weight):
    """iostat's figure over plumb's second: its seconds weighted by overlap."""
    num = den = 0.0
    for ov, r in parts:
        w = ov * (r.get(weight, 0.0) if weight else 1.0)
        num += w * r.get(col, 0.0)
        den += w
    return num / den if den > 0 else None

ratios = {f[0]: [] for f in FIG}
for step in doc["steps"]:
    ivs = step.get("intervals") or []
    if not ivs:
        continue
    window = step["summary"]["secs"]
    end = ts(step["ended_at"])
    print(f"\n### {step['name']} on {dev}: plumb's second, then iostat's over the same time\n")
    head = ["t", "secs", "covered"]
    for h, *_ in FIG:
        head += [h, "iostat"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for iv in ivs:
        e = end - (window - iv["t"])
        b = e - iv["secs"]
        parts = []
        for lo, hi, r in io_win:
            ov = min(e, hi) - max(b, lo)
            if ov > 0:
                parts.append((ov, r))
        covered = sum(ov for ov, _ in parts) / max(iv["secs"], 1e-9)
        d = iv.get("device") or {}
        row = [f"{iv['t']:.1f}", f"{iv['secs']:.2f}", f"{covered:.0%}"]
        for h, pk, ik, dec, wt in FIG:
            p, i = plumb_fig(d, pk), iostat_fig(parts, ik, wt)
            row += [cell(p, dec), cell(i, dec)]
            # Whole seconds that iostat covered; awaits and sizes need requests on both
            # sides (iostat prints 0.00 where there were none, plumb n/a).
            if covered >= 0.99 and iv["secs"] >= 0.9 and p is not None and i:
                ratios[h].append(p / i)
        print("| " + " | ".join(row) + " |")

print("\n### plumb / iostat over whole seconds iostat covered\n")
print("| figure | seconds | median ratio | min | max |")
print("| --- | --- | --- | --- | --- |")
for h, *_ in FIG:
    r = ratios[h]
    if r:
        print(f"| {h} | {len(r)} | {statistics.median(r):.3f} | {min(r):.3f} | {max(r):.3f} |")
    else:
        print(f"| {h} | 0 | n/a | n/a | n/a |")
PY
log "raw: $OUT/plumb.json, $OUT/iostat.txt"
