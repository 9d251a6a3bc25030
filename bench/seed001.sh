#!/usr/bin/env bash
# Seed 001's RocksDB investigation (issue 12038: with O_DIRECT, compaction read in
# small requests once compaction_readahead_size exceeded the disk's max_sectors_kb) at
# this machine's scale: bench/seed001-readahead.toml on RocksDB 8.1.1, 8.6.7, 8.8.1 and
# the linked release, each with compaction_readahead_size at its default and 256 KiB,
# then one table per release: ops/s per step, the device's r/s, rareq-sz (KiB per read
# request) and r_await (ms) as iostat -x names them, and the compaction seconds and
# bytes the LSM's own account gives. The disk's max_sectors_kb is lowered to
# MAX_SECTORS_KB for the run (the issue's server had 512; this VM's disk has 4096, above
# 2 MiB) and restored after.
#
#   bash scripts/build-rocksdb-release.sh 8.1.1   # once each (~20 min), outside CI
#   bash scripts/build-rocksdb-release.sh 8.6.7
#   bash scripts/build-rocksdb-release.sh 8.8.1
#   bash bench/seed001.sh
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb] the plumb that links the newest
# release; STORE [a new file under /var/tmp]; DIR [/var/tmp] the data dirs' directory (the
# suite's `dir`), named with its device beside the table; MAX_SECTORS_KB [512] ("" keeps
# the disk's own).
set -euo pipefail
cd "$(dirname "$0")/.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
STORE=${STORE:-$(mktemp -u /var/tmp/plumb-seed001.XXXXXX.sqlite)}
DIR=${DIR:-/var/tmp}
SUITE=${SUITE:-bench/seed001-readahead.toml}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
MAX_SECTORS_KB=${MAX_SECTORS_KB-512}
dev=$(basename "$(readlink -f "$(df --output=source "$DIR" | tail -1)")")
# A partition's queue is its disk's.
q=/sys/class/block/$dev/queue
[ -d "$q" ] || q=/sys/class/block/$(basename "$(dirname "$(readlink -f "/sys/class/block/$dev")")")/queue
was=$(cat "$q/max_sectors_kb")
if [ -n "$MAX_SECTORS_KB" ]; then
  echo "$MAX_SECTORS_KB" > "$q/max_sectors_kb"
  trap 'echo "$was" > "$q/max_sectors_kb"' EXIT
fi
echo "data on $dev ($(findmnt -no FSTYPE -T "$DIR")); max_sectors_kb $(cat "$q/max_sectors_kb") (the disk's own: $was)"
echo "store: $STORE"
"$PLUMB" run "$SUITE" --store "$STORE"
suite=$("$PLUMB" runs --json --store "$STORE" | python3 -c 'import json,sys; print(max(r["suite_id"] for r in json.load(sys.stdin) if r.get("suite_id")))')
ids=$("$PLUMB" runs --json --store "$STORE" | python3 -c "import json,sys; print(' '.join(str(r['id']) for r in json.load(sys.stdin) if r.get('suite_id') == $suite))")
for id in $ids; do "$PLUMB" show "$id" --json --store "$STORE"; done | python3 -c '
import json, sys
dec = json.JSONDecoder()
text = sys.stdin.read()
runs, i = [], 0
while i < len(text):
    while i < len(text) and text[i].isspace():
        i += 1
    if i >= len(text):
        break
    doc, i = dec.raw_decode(text, i)
    runs.append(doc)
def f(v, d=1):
    return "-" if v is None else f"{v:.{d}f}"
rows = []
for r in runs:
    o = r["run"]["options"]
    target = o.get("target", "?")
    ra = o.get("rocksdb.effective.db.compaction_readahead_size", "?")
    for s in r["steps"]:
        m = s["summary"]
        dev = m.get("device") or {}
        lsm = m.get("lsm") or {}
        comp_read = sum(l.get("read_bytes", 0) for l in lsm.get("levels", [])) / 2**20
        rows.append((target, r["run"]["engine_version"].split()[0], ra, s["name"],
                     m["ops_sec"] if m["ops"] else None, dev.get("r_s"), dev.get("rareq_kb"),
                     dev.get("r_await_ms"), dev.get("util_pct"), lsm.get("comp_secs"),
                     comp_read if lsm else None))
hdr = ("target", "rocksdb", "readahead", "step", "ops/s", "r/s", "rareq-sz", "r_await", "%util", "comp s", "comp read MiB")
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for t in sorted(rows, key=lambda x: (tuple(int(p) for p in x[1].split(".") if p.isdigit()), x[0])):
    print("| " + " | ".join([t[0], t[1], t[2], t[3], f(t[4], 0), f(t[5]), f(t[6]), f(t[7], 2), f(t[8]), f(t[9], 2), f(t[10], 0)]) + " |")
'
