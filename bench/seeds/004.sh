#!/usr/bin/env bash
# Seed 004's disk table ("Sample disk results" in the PostgreSQL performance deck), the
# way the deck measured it, with this disk as a new row under the deck's: sequential read
# and write (the deck's dd of 8 KiB blocks through the page cache, then sync; here 1 MiB
# requests buffered, the write closed by fdatasync as dd's sync), bonnie++'s seeks
# (three processes reading 8 KiB at random offsets at once), read-only seeks (one
# reader), and the commit rate (one writer, an fdatasync per 4 KiB write: what a
# database's WAL can commit per second), with the drive's model from the host snapshot.
# The deck's rows are its disks of 2008-2012; ours is set beside them as the same
# columns, not as ratios (they are different classes of device). A rated RPM
# (RATED_RPM=7200, the deck's rotational model) prints the deck's seek ceiling for a
# spinning disk beside the measured seeks; the commit rate is judged against the device
# (a rate above what the medium can flush means a volatile write cache acknowledged it:
# the deck's "1048/s with unsafe volatile write cache").
#
#   bash bench/seeds/004.sh                  # an 8 GiB file under DIR (~3 min)
#   SIZE=256M QUICK=1 bash bench/seeds/004.sh
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb]; STORE [a new file under /var/tmp];
# DIR [/var/tmp/plumb-seed004] the directory on the disk to measure; SIZE [8G] the file
# (the deck's seeks ran over 4-100 GB: the larger, the fewer seeks land in a cache);
# SECS [10] seconds per test; QUICK [unset; 1: plumb probe --quick]; RATED_RPM [unset]
# and SEEK_MS [8.5] the deck's model of a spinning disk's seeks.
set -euo pipefail
cd "$(dirname "$0")/../.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
STORE=${STORE:-$(mktemp -u /var/tmp/plumb-seed004.XXXXXX.sqlite)}
DIR=${DIR:-/var/tmp/plumb-seed004}
SIZE=${SIZE:-8G}
SECS=${SECS:-10}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "store: $STORE"
mkdir -p "$DIR"
args=(probe disk --dir "$DIR" --size "$SIZE" --bs 8k,1m --jobs 1,3 --depths 1
      --tests seqwrite,seqread,randread,commit --json --store "$STORE")
if [ -n "${QUICK:-}" ]; then args+=(--quick); else args+=(--secs "$SECS"); fi
[ -z "${RATED_RPM:-}" ] || args+=(--rated-set "device.rpm=$RATED_RPM")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$PLUMB" "${args[@]}" > "$out"
export SEEK_MS=${SEEK_MS:-8.5} RATED_RPM=${RATED_RPM:-}
python3 - "$out" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
steps = {s["name"]: s for s in d["steps"] if s.get("status", "ok") == "ok"}

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
seqrd = "seqread.direct" if cached else "seqread.buffered"

def num(v, d=0, unit=""):
    return "n/a" if v is None else f"{v:,.{d}f}{unit}"

print("\n### Sample disk results: the deck's disks, then this one\n")
print("| Disk Count | Seq Rd | Seq Wr | bonnie++ seeks | Read-only seeks | Commit Rate | Drive Model |")
print("|---:|---:|---:|---:|---:|---:|---|")
for row in (("1", "71", "58", "232 @ 4GB", "194 @ 4GB", "105/s", "7200.4"),
            ("1", "59", "54", "177 @ 16GB", "56 @ 100GB", "10212/s", "WD160"),
            ("3", "125", "119", "371 @ 16GB", "60 @ 100GB", "10855/s", "RAID0"),
            ("1", "254", "147", "3935@ 32GB", "3417@100GB", "5005/s", "SSD")):
    print("| " + " | ".join(row) + " |")
ours = (str(len(phys) or 1),
        num(rate(seqrd, "mb_sec")), num(rate("seqwrite.buffered", "mb_sec")),
        f"{num(rate('randread8k.direct.j3.qd1'))} @ {gb(size)}",
        f"{num(rate('randread8k.direct.j1.qd1'))} @ {gb(size)}",
        f"{num(rate('commit.direct.t1'))}/s", f"this machine: {model}")
print("| " + " | ".join(ours) + " |")
print(f"\nSeq Rd / Seq Wr: MB/s of 1 MiB requests through the page cache (the write closed by "
      f"fdatasync, as the deck's dd … && sync); seeks: 8 KiB random reads per second with "
      f"O_DIRECT, three readers at once (bonnie++'s seeks) and one (read-only seeks), over a "
      f"{gb(size)} file" + (f" on a host of {gb(mem)} RAM" if mem else "") +
      "; Commit Rate: 4 KiB writes each followed by fdatasync, one writer.")
buffered = rate("randread8k.buffered.j1.qd1")
direct = rate("randread8k.direct.j1.qd1")
if cached:
    print(f"The file is smaller than RAM, so buffered reads may be served from the page "
          f"cache rather than the disk ({num(rate('seqread.buffered', 'mb_sec'))} MB/s "
          f"sequential, {num(buffered)} seeks/s buffered): the table's Seq Rd is O_DIRECT, "
          f"as its seeks are.")
# The deck: "Writes faster than reads? Probably low read-ahead settings somewhere." The
# buffered figures, as its dd ran (its reads through the page cache, which read-ahead
# feeds), with the read-ahead of each device under the file.
rd_buf, wr_buf = rate("seqread.buffered", "mb_sec"), rate("seqwrite.buffered", "mb_sec")
ra = ", ".join(f"{x['name']} read_ahead_kb {(x.get('queue') or {}).get('read_ahead_kb', '?')}"
               for x in devices) or "read_ahead_kb unknown"
if rd_buf and wr_buf and wr_buf > rd_buf:
    print(f"Writes faster than reads ({wr_buf:,.0f} MB/s written, {rd_buf:,.0f} MB/s read "
          f"buffered): the deck's \"probably low read-ahead settings somewhere\" ({ra}).")
elif rd_buf and wr_buf:
    print(f"Reads at least as fast as writes buffered ({rd_buf:,.0f} against {wr_buf:,.0f} "
          f"MB/s): read-ahead is not holding reads back ({ra}).")
rpm, seek = os.environ.get("RATED_RPM"), float(os.environ["SEEK_MS"])
if rpm:
    model_iops = 1 / ((60 / float(rpm)) / 2 + seek / 1000)
    print(f"The deck's model of a {rpm} RPM disk with {seek} ms seeks: IOPS = 1 / (half a "
          f"rotation + seek) = {model_iops:.0f}; measured read-only seeks are "
          f"{direct / model_iops:.2f}× that." if direct else "")
c = d.get("commit_durability")
if c:
    print(f"Commit rate judged against the device ({c['level']}): {c['message']}")
if not all(rate(n) for n in (seqrd, "seqwrite.buffered", "randread8k.direct.j3.qd1",
                             "randread8k.direct.j1.qd1", "commit.direct.t1")):
    sys.exit("seed004: a test of the deck's table did not run (see the probe's notes above)")
EOF
