#!/usr/bin/env bash
# Seed 004's disk table ("Sample disk results" in the PostgreSQL performance deck), the
# way the deck measured it, with this disk as new rows under the deck's, all measured by
# `plumb probe disk` on one file under DIR:
#   Seq Rd / Seq Wr: the deck's dd of 8 KiB blocks through the page cache, the write
#     closed by fdatasync as dd's `&& sync` (--seq-bs 8k), and the same at 1 MiB;
#   Rewrite: bonnie++'s (each 8 KiB chunk read, dirtied, written back in place, front to
#     back, buffered, closed by fdatasync), which the deck ran but did not tabulate;
#   bonnie++ seeks: three readers of 8 KiB at random offsets at once; read-only seeks:
#     one reader (sysbench's rndrd); both O_DIRECT;
#   Commit Rate: one writer, an fdatasync per 4 KiB write (what a WAL commits per second),
#     judged against the device by the probe.
# The file is the probe's default, 2 × RAM (MemTotal) as the deck computes it, capped by
# the free space under DIR less what the probe keeps free (the probe says so, and so does
# the list of differences this script prints last). With a rated RPM (RATED_RPM=7200,
# SEEK_MS [the probe's 8.5 ms]) the probe prints the deck's model of a spinning disk's
# seeks, 1 / (half a rotation + seek), beside the measured read-only seeks; it also reads
# the deck's "writes faster than reads? probably low read-ahead" with each device's
# read_ahead_kb. This script prints both from the probe's JSON.
#
#   bash bench/seeds/004.sh                  # a 2 × RAM file under DIR (or what fits)
#   SIZE=4G SECS=5 bash bench/seeds/004.sh
#   SIZE=64M QUICK=1 bash bench/seeds/004.sh
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb]; STORE [a new file under /var/tmp];
# DIR [/var/tmp/plumb-seed004] the directory on the disk to measure; SIZE [unset: the
# probe's 2 × RAM] the file (the deck's seeks ran over 4-100 GB: the larger, the fewer
# seeks land in a cache); SECS [10] seconds per test; QUICK [unset; 1: plumb probe
# --quick, a 256 MiB file unless SIZE]; RATED_RPM [unset] and SEEK_MS [unset: 8.5] the
# deck's model of a spinning disk's seeks.
set -euo pipefail
cd "$(dirname "$0")/../.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
STORE=${STORE:-$(mktemp -u /var/tmp/plumb-seed004.XXXXXX.sqlite)}
DIR=${DIR:-/var/tmp/plumb-seed004}
SECS=${SECS:-10}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "store: $STORE"
mkdir -p "$DIR"
args=(probe disk --dir "$DIR" --bs 8k --seq-bs 8k,1m --jobs 1,3 --depths 1
      --tests seqwrite,seqread,rewrite,randread,commit --json --store "$STORE")
[ -z "${SIZE:-}" ] || args+=(--size "$SIZE")
if [ -n "${QUICK:-}" ]; then args+=(--quick); else args+=(--secs "$SECS"); fi
[ -z "${RATED_RPM:-}" ] || args+=(--rated-set "device.rpm=$RATED_RPM")
[ -z "${SEEK_MS:-}" ] || args+=(--rated-set "device.seek_ms=$SEEK_MS")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$PLUMB" "${args[@]}" > "$out"
python3 - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
steps = {s["name"]: s for s in d["steps"] if s.get("status", "ok") == "ok"}
opts = d["run"].get("options") or {}

def rate(name, key="ops_sec"):
    s = steps.get(name)
    return None if s is None else s["summary"].get(key)

def gb(b):
    return f"{b / 2**30:.0f}GB" if b >= 2**30 else f"{b / 2**20:.0f}MB"

size = next(iter(steps.values()))["config"]["file_size"]
host = d["run"].get("host") or {}
storage = host.get("storage") or {}
devices = storage.get("devices") or []
phys = [x for x in devices if x.get("physical")] or devices
model = ", ".join(f"{x['name']} {x.get('model') or x.get('kind', '')}".strip() for x in phys) or "?"
mem = (host.get("inventory") or {}).get("memory", {}).get("total_bytes")

# dd read its file back through the page cache, which held none of it on the deck's
# machines (files of 2× RAM); a file smaller than RAM is read with O_DIRECT instead.
cached = bool(mem and size < mem)
rd_mode = "direct" if cached else "buffered"

def num(v, d=0, unit=""):
    return "n/a" if v is None else f"{v:,.{d}f}{unit}"

def seq(p, tag, mode="buffered"):
    return num(rate(f"{p}{tag}.{mode}", "mb_sec"))

print("\n### Sample disk results: the deck's disks, then this one\n")
print("| Disk Count | Seq Rd | Seq Wr | Rewrite | bonnie++ seeks | Read-only seeks | Commit Rate | Drive Model |")
print("|---:|---:|---:|---:|---:|---:|---:|---|")
for row in (("1", "71", "58", "–", "232 @ 4GB", "194 @ 4GB", "105/s", "7200.4"),
            ("1", "59", "54", "–", "177 @ 16GB", "56 @ 100GB", "10212/s", "WD160"),
            ("3", "125", "119", "–", "371 @ 16GB", "60 @ 100GB", "10855/s", "RAID0"),
            ("1", "254", "147", "–", "3935@ 32GB", "3417@100GB", "5005/s", "SSD")):
    print("| " + " | ".join(row) + " |")
count = str(len(phys) or 1)
ours = (count, seq("seqread", "8k", rd_mode), seq("seqwrite", "8k"), seq("rewrite", "8k"),
        f"{num(rate('randread8k.direct.j3.qd1'))} @ {gb(size)}",
        f"{num(rate('randread8k.direct.j1.qd1'))} @ {gb(size)}",
        f"{num(rate('commit.direct.t1'))}/s", f"this machine: {model}")
print("| " + " | ".join(ours) + " |")
mib = (count, seq("seqread", "", rd_mode), seq("seqwrite", ""), seq("rewrite", ""),
       "–", "–", "–", f"this machine, 1 MiB requests: {model}")
print("| " + " | ".join(mib) + " |")
print(f"\nSeq Rd / Seq Wr: MB/s of 8 KiB requests (the deck's dd bs=8k; the second row 1 MiB) "
      f"through the page cache, the write closed by fdatasync (the deck's dd … && sync); "
      f"Rewrite: bonnie++'s, MB/s of the file read, dirtied and written back in place, "
      f"closed by fdatasync; seeks: 8 KiB random reads per second with O_DIRECT, three "
      f"readers at once (bonnie++'s seeks) and one (read-only seeks), over a {gb(size)} file"
      + (f" on a host of {gb(mem)} RAM" if mem else "") +
      "; Commit Rate: 4 KiB writes each followed by fdatasync, one writer.")
for r in d.get("read_ahead") or []:
    print(f"Read-ahead, {r['message']}")
m = d.get("seek_model")
if m:
    print(f"Seek model: {m['message']}")
c = d.get("commit_durability")
if c:
    print(f"Commit rate judged against the device ({c['level']}): {c['message']}")

print("\nDifferences from the deck:")
diffs = [
    "The deck's rows are its own machines and disks of 2008-2012 (a 7200 rpm laptop "
    "drive, WD 160 GB and 3-disk RAID0 behind a battery-backed cache, an early SSD); this "
    "machine is set beside them in the same columns, not as ratios: they are other "
    "classes of device.",
    "bonnie++'s seeks read through the page cache (O_DIRECT only with its -D) and write "
    "10% of the blocks back, 8000 seeks in all; here the three readers use O_DIRECT, so "
    "no seek is served from memory whatever the file size, read only, for "
    f"{opts.get('disk.secs', '?')} s. Read-only seeks were sysbench's rndrd through the "
    "page cache; here one O_DIRECT reader.",
    "dd and bonnie++ make one pass over the file; each test here runs for a fixed time "
    f"({opts.get('disk.secs', '?')} s), wrapping at the end of the file, and writes "
    "pseudo-random bytes where dd wrote zeros.",
    "bonnie++'s rewrite seeks back with lseek(2) and writes with write(2); here pwrite "
    "at the chunk's offset, the same IO to the device.",
    "The deck's commit rate was sysbench's rndwr with an fsync per write (16 KiB random "
    "writes by default); here 4 KiB writes, each followed by fdatasync, one after another "
    "in the writer's region, as a WAL writes.",
]
if mem and size < 2 * mem:
    why = opts.get("disk.size_why", "")
    diffs.append(f"The file is {gb(size)}, not 2 × RAM ({gb(2 * mem)}) as the deck's dd "
                 f"and bonnie++ used: {why}.")
if cached:
    diffs.append(f"The file is smaller than RAM, so buffered reads may be served from the "
                 f"page cache ({seq('seqread', '8k')} MB/s buffered at 8 KiB, "
                 f"{seq('seqread', '')} at 1 MiB): the table's Seq Rd is O_DIRECT, as its "
                 f"seeks are.")
if opts.get("quick") == "true":
    diffs.append("Run with --quick: a small file and 1 s tests, figures indicative only.")
for x in diffs:
    print(f"- {x}")
need = (f"seqread8k.{rd_mode}", "seqwrite8k.buffered", "rewrite8k.buffered",
        "randread8k.direct.j3.qd1", "randread8k.direct.j1.qd1", "commit.direct.t1")
if not all(rate(n) for n in need):
    sys.exit("seed004: a test of the deck's table did not run (see the probe's notes above)")
PY
