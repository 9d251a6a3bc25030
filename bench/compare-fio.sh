#!/usr/bin/env bash
# plumb probe disk vs fio: same directory, file size, pattern, block size, depth, IO engine
# and O_DIRECT. Each measurement starts from the same state: a freshly laid-out file,
# synced, then one pattern. The tools take turns pattern by pattern (who goes first flips
# every round), so a slow minute of this shared machine hits both. Prints a Markdown table
# of medians, the ratio, and each tool's own run-to-run spread (the machine's noise).
#
#   CARGO_TARGET_DIR=/var/tmp/plumb-target cargo build --release
#   cp /var/tmp/plumb-target/release/plumb /var/tmp/plumb-probe.bin
#   PLUMB=/var/tmp/plumb-probe.bin ROUNDS=4 flock /tmp/plumb-bench.lock bench/compare-fio.sh
#
# More rounds without holding a shared machine for long: run rounds 5..8 into the same
# OUT later, and the table covers rounds 1..8:
#   OUT=<dir of the first run> FROM=5 ROUNDS=8 flock /tmp/plumb-bench.lock bench/compare-fio.sh
#
# Env: PLUMB (binary), DIR (default /var/tmp/plumb-fio), SIZE (2G), SECS (10 per pattern),
#      ROUNDS (3, the last round), FROM (1, the first round to run), OUT (results dir).
#      Needs fio (Debian's package) and python3; sysbench optional (memory row).
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
DIR=${DIR:-/var/tmp/plumb-fio}
SIZE=${SIZE:-2G}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
FROM=${FROM:-1}
OUT=${OUT:-$DIR/results-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$DIR" "$OUT"
STORE="$OUT/store.sqlite"
F="$DIR/fio.dat"
trap 'rm -f "$F"' EXIT
log() { echo "[compare-fio] $*" >&2; }

# name | fio options | plumb options | plumb step | metric (iops or mbs)
# fio's psync is one pread/pwrite per IO, which is what plumb does at depth 1; at depth > 1
# both use io_uring, one submit per completion (fio's defaults, plumb's only way).
# plumb puts its 1 MiB buffer in a transparent huge page (one DMA segment per request); fio
# gets the same with $HUGE: glibc advises its buffer into huge pages and iomem_align puts
# the first buffer on a 2 MiB boundary inside a 2 MiB+ allocation (iodepth=2 only sizes
# that allocation: fio caps psync at depth 1). Without it fio's 1 MiB request is 256 4 KiB
# pages, split in two on a virtio disk, at a third of the speed (bench/README.md).
HUGE="--iomem_align=2M --iodepth=2"
PATTERNS=(
  "randread_4k_qd1|--rw=randread --bs=4k --ioengine=psync --iodepth=1|--tests randread --depths 1|randread.direct.j1.qd1|iops"
  "randread_4k_qd32|--rw=randread --bs=4k --ioengine=io_uring --iodepth=32|--tests randread --depths 32|randread.direct.j1.qd32|iops"
  "seqread_1m|--rw=read --bs=1M --ioengine=psync $HUGE|--tests seqread|seqread.direct|mbs"
  "seqwrite_1m|--rw=write --bs=1M --ioengine=psync $HUGE|--tests seqwrite|seqwrite.direct|mbs"
  "commit_4k_fdatasync|--rw=write --bs=4k --ioengine=psync --iodepth=1 --fdatasync=1|--tests commit|commit.direct.t1|iops"
)

run_fio() {
  local name=$1 opts=$2 r=$3
  log "fio $name round $r"
  # The layout plumb does: the whole file in 1 MiB direct writes, then synced (plumb also
  # syncs, untimed, before every step).
  fio --name=layout --filename="$F" --size="$SIZE" --rw=write --bs=1M --direct=1 \
      --ioengine=psync --output-format=json >/dev/null
  sync --data "$F"
  local tunables=""
  [[ $opts == *iomem_align* ]] && tunables=glibc.malloc.hugetlb=1
  # shellcheck disable=SC2086
  GLIBC_TUNABLES=$tunables \
  fio --name="$name" --filename="$F" --size="$SIZE" --direct=1 $opts \
      --time_based --runtime="$SECS" --norandommap --randrepeat=0 \
      --output-format=json --output="$OUT/fio-$name-$r.json" >/dev/null
  rm -f "$F"
}

run_plumb() {
  local name=$1 opts=$2 r=$3
  log "plumb $name round $r"
  # shellcheck disable=SC2086
  "$PLUMB" probe disk --dir "$DIR" --size "$SIZE" --io direct --jobs 1 --bs 4k,1m $opts \
      --secs "$SECS" --json --store "$STORE" >"$OUT/plumb-$name-$r.json"
}

for r in $(seq "$FROM" "$ROUNDS"); do
  i=0
  for p in "${PATTERNS[@]}"; do
    IFS='|' read -r name fopts popts _ _ <<<"$p"
    if (( (r + i) % 2 )); then
      run_fio "$name" "$fopts" "$r"; run_plumb "$name" "$popts" "$r"
    else
      run_plumb "$name" "$popts" "$r"; run_fio "$name" "$fopts" "$r"
    fi
    i=$((i + 1))
  done
done

SYSB=""
if command -v sysbench >/dev/null && [[ $FROM == 1 ]]; then
  for t in 1 2; do
    sysbench memory --threads=$t --memory-block-size=256M --memory-total-size=64G \
      --memory-oper=write --time=5 run >"$OUT/sysbench-mem-t$t.txt" 2>&1 || true
  done
  "$PLUMB" probe mem --json --store "$STORE" >"$OUT/plumb-mem.json"
  SYSB=1
fi

CMD="SIZE=$SIZE SECS=$SECS ROUNDS=$ROUNDS flock /tmp/plumb-bench.lock bench/compare-fio.sh"
[[ -f $OUT/plumb-mem.json ]] && SYSB=1
BENCH_DIR="$(cd "$(dirname "$0")" && pwd)" python3 - "$OUT" "$ROUNDS" "$CMD" "${SYSB}" "$PLUMB" "${PATTERNS[@]}" <<'PY'
import json, re, statistics, sys, glob, os
sys.path.insert(0, os.environ["BENCH_DIR"])
from plumb_ratio import judged
out, rounds, cmd, sysb, plumb_bin = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
pats = [p.split('|') for p in sys.argv[6:]]
# fio's CPU is its job thread's (getrusage); plumb's is the whole process (workers and
# sampler). Device requests per IO come from the device's counters for both (/proc/diskstats
# via fio's disk_util, plumb's rd_op + wr_op): more than 1 means the kernel split requests.
def fio(name, r):
    doc = json.load(open(f"{out}/fio-{name}-{r}.json"))
    j = doc["jobs"][0]
    rd = j["read"]["total_ios"] > 0
    d = j["read"] if rd else j["write"]
    ios = d["total_ios"]
    cpu_us = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] * 1000.0
    du = (doc.get("disk_util") or [{}])[0]
    req = du.get("read_ios" if rd else "write_ios")
    return (d["iops"], d["bw"] * 1024 / 1e6, cpu_us / max(ios, 1),
            d["clat_ns"]["percentile"].get("99.000000", 0) / 1000,
            req / ios if req is not None and ios else float("nan"))
def plumb(name, step, r):
    doc = json.load(open(f"{out}/plumb-{name}-{r}.json"))
    s = next(s for s in doc["steps"] if s["name"] == step)["summary"]
    req = (s.get("rd_op") or 0) + (s.get("wr_op") or 0)
    return s["ops_sec"], s["mb_sec"], s["cpu_us_op"], s["p99_us"], req
print(f"Command: `{cmd}`\n")
print("| pattern | metric | fio (median) | plumb (median) | plumb/fio (95% interval), p | paired plumb/fio | fio spread | plumb spread | fio CPU µs/IO | plumb CPU µs/IO | fio p99 µs | plumb p99 µs | fio dev req/IO | plumb dev req/IO |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def spread(v):
    # (max - min) / median over the rounds: the run-to-run noise of that tool alone.
    m = statistics.median(v)
    return f"{(max(v) - min(v)) / m * 100:.0f}%" if m else "-"
for name, _, _, step, metric in pats:
    F = [fio(name, r) for r in range(1, rounds + 1)]
    P = [plumb(name, step, r) for r in range(1, rounds + 1)]
    i = 0 if metric == "iops" else 1
    f, p = statistics.median(x[i] for x in F), statistics.median(x[i] for x in P)
    fc, pc = statistics.median(x[2] for x in F), statistics.median(x[2] for x in P)
    fl, pl = statistics.median(x[3] for x in F), statistics.median(x[3] for x in P)
    unit = "IOPS" if metric == "iops" else "MB/s"
    fs, ps = spread([x[i] for x in F]), spread([x[i] for x in P])
    # Median of each round's ratio: the two runs of a round are back to back.
    pr = statistics.median(b[i] / a[i] for a, b in zip(F, P))
    fq, pq = statistics.median(x[4] for x in F), statistics.median(x[4] for x in P)
    print(f"| {name} | {unit} | {f:,.0f} | {p:,.0f} | {judged(plumb_bin, [x[i] for x in F], [x[i] for x in P])} | {pr:.3f} | {fs} | {ps} | {fc:.2f} | {pc:.2f} | {fl:.0f} | {pl:.0f} | {fq:.2f} | {pq:.2f} |")
if sysb:
    doc = json.load(open(f"{out}/plumb-mem.json"))
    print("\n| memory | sysbench write (MiB/s→GB/s) | plumb triad GB/s |\n|---|---:|---:|")
    for t in (1, 2):
        txt = open(f"{out}/sysbench-mem-t{t}.txt").read()
        m = re.search(r"\(([\d.]+) MiB/sec\)", txt)
        sb = float(m.group(1)) * 1048576 / 1e9 if m else float("nan")
        pl = next((c["value"] for c in doc["ceilings"] if c["name"] == f"mem.triad_gbs.t{t}"), float("nan"))
        print(f"| {t} thread(s) | {sb:.1f} | {pl:.1f} |")
PY
