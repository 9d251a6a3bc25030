#!/usr/bin/env bash
# plumb probe disk vs fio, same directory, file size, pattern, block size, depth and IO
# engine, in the same order, taking turns round by round; prints a Markdown table of
# medians and of each tool's own run-to-run spread (the machine's noise).
#
#   CARGO_TARGET_DIR=/var/tmp/plumb-target cargo build --release
#   flock /tmp/plumb-bench.lock bench/compare-fio.sh
#
# Env: PLUMB (binary), DIR (default /var/tmp/plumb-fio), SIZE (2G), SECS (10 per pattern),
#      ROUNDS (3). Needs fio (Debian's package) and python3; sysbench optional (memory row).
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
DIR=${DIR:-/var/tmp/plumb-fio}
SIZE=${SIZE:-2G}
SECS=${SECS:-10}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$DIR/results-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$DIR" "$OUT"
STORE="$OUT/store.sqlite"
F="$DIR/fio.dat"
trap 'rm -f "$F"' EXIT
log() { echo "[compare-fio] $*" >&2; }

# pattern name | fio options | plumb step name | metric (iops or mbs)
# Both tools run these in this order (plumb's --tests below follows it): a step's figure
# depends on what ran before it on a disk with a write-back cache, so the order must match.
# fio's psync is pread/pwrite, one IO per syscall, which is what plumb does at depth 1;
# at depth > 1 both use io_uring with one submit per completion (fio's defaults).
PATTERNS=(
  "randread_4k_qd1|--rw=randread --bs=4k --ioengine=psync --iodepth=1|randread.direct.j1.qd1|iops"
  "randread_4k_qd32|--rw=randread --bs=4k --ioengine=io_uring --iodepth=32|randread.direct.j1.qd32|iops"
  "seqread_1m|--rw=read --bs=1M --ioengine=psync --iodepth=1|seqread.direct|mbs"
  "seqwrite_1m|--rw=write --bs=1M --ioengine=psync --iodepth=1|seqwrite.direct|mbs"
  "commit_4k_fdatasync|--rw=write --bs=4k --ioengine=psync --iodepth=1 --fdatasync=1|commit.direct.t1|iops"
)

run_fio() {
  local r=$1
  log "fio layout $SIZE"
  fio --name=layout --filename="$F" --size="$SIZE" --rw=write --bs=1M --direct=1 \
      --ioengine=psync --output-format=json >/dev/null
  for p in "${PATTERNS[@]}"; do
    IFS='|' read -r name opts _ _ <<<"$p"
    log "fio $name round $r"
    # What plumb does untimed before each step: flush the previous step's write-back, so
    # it is not billed to this one (a commit step after GBs of writes would measure that).
    sync --data "$F"
    # shellcheck disable=SC2086
    fio --name="$name" --filename="$F" --size="$SIZE" --direct=1 $opts \
        --time_based --runtime="$SECS" --norandommap --randrepeat=0 \
        --output-format=json >"$OUT/fio-$name-$r.json"
  done
  rm -f "$F"
}

run_plumb() {
  local r=$1
  log "plumb round $r"
  "$PLUMB" probe disk --dir "$DIR" --size "$SIZE" --io direct --jobs 1 --depths 1,32 \
      --tests randread,seqread,seqwrite,commit --secs "$SECS" --json --store "$STORE" \
      >"$OUT/plumb-$r.json"
}

for r in $(seq 1 "$ROUNDS"); do
  if (( r % 2 )); then run_fio "$r"; run_plumb "$r"; else run_plumb "$r"; run_fio "$r"; fi
done

SYSB=""
if command -v sysbench >/dev/null; then
  for t in 1 2; do
    sysbench memory --threads=$t --memory-block-size=256M --memory-total-size=64G \
      --memory-oper=write --time=5 run >"$OUT/sysbench-mem-t$t.txt" 2>&1 || true
  done
  "$PLUMB" probe mem --json --store "$STORE" >"$OUT/plumb-mem.json"
  SYSB=1
fi

CMD="SIZE=$SIZE SECS=$SECS ROUNDS=$ROUNDS flock /tmp/plumb-bench.lock bench/compare-fio.sh"
python3 - "$OUT" "$ROUNDS" "$CMD" "${SYSB}" "${PATTERNS[@]}" <<'PY'
import json, re, statistics, sys, glob, os
out, rounds, cmd, sysb = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
pats = [p.split('|') for p in sys.argv[5:]]
def fio(name, r):
    j = json.load(open(f"{out}/fio-{name}-{r}.json"))["jobs"][0]
    d = j["read"] if j["read"]["total_ios"] > 0 else j["write"]
    ios = d["total_ios"]
    cpu_us = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] * 1000.0
    return d["iops"], d["bw"] * 1024 / 1e6, cpu_us / max(ios, 1), d["clat_ns"]["percentile"].get("99.000000", 0) / 1000
def plumb(step, r):
    doc = json.load(open(f"{out}/plumb-{r}.json"))
    s = next(s for s in doc["steps"] if s["name"] == step)["summary"]
    return s["ops_sec"], s["mb_sec"], s["cpu_us_op"], s["p99_us"]
print(f"Command: `{cmd}`\n")
print("| pattern | metric | fio (median) | plumb (median) | plumb/fio | fio spread | plumb spread | fio CPU µs/IO | plumb CPU µs/IO | fio p99 µs | plumb p99 µs |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def spread(v):
    # (max - min) / median over the rounds: the run-to-run noise of that tool alone.
    m = statistics.median(v)
    return f"{(max(v) - min(v)) / m * 100:.0f}%" if m else "-"
for name, _, step, metric in pats:
    F = [fio(name, r) for r in range(1, rounds + 1)]
    P = [plumb(step, r) for r in range(1, rounds + 1)]
    i = 0 if metric == "iops" else 1
    f, p = statistics.median(x[i] for x in F), statistics.median(x[i] for x in P)
    fc, pc = statistics.median(x[2] for x in F), statistics.median(x[2] for x in P)
    fl, pl = statistics.median(x[3] for x in F), statistics.median(x[3] for x in P)
    unit = "IOPS" if metric == "iops" else "MB/s"
    fs, ps = spread([x[i] for x in F]), spread([x[i] for x in P])
    print(f"| {name} | {unit} | {f:,.0f} | {p:,.0f} | {p/f:.3f} | {fs} | {ps} | {fc:.2f} | {pc:.2f} | {fl:.0f} | {pl:.0f} |")
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
