#!/usr/bin/env bash
# Seed 001, "Speedb vs RocksDB on a large server", in two parts (PARTS):
#
# study: the seed's study itself (examples/seeds/001-study.toml): Speedb with
# use_dynamic_delay 0 (the base case) and 1 beside RocksDB releases on x3's order at 2
# threads, cached (byrx), IO-bound buffered (iobuf) and O_DIRECT (iodir); then the
# seed's relative-QPS table by test, throughput over time for fillseq and overwrite,
# and the stall sources with stall% and compaction time (bench/seeds/001_study.py).
#
# iostat: issue 12038's iostat section (examples/seeds/001.toml: the database larger than
# memory, buffered ("iobuf") and O_DIRECT ("iodir"), compaction_readahead_size 2 MiB,
# the hyper clock cache, the disk's max_sectors_kb at 128), once per READ_AHEAD_KB value,
# then the seed's tables: iostat's columns during overwrite per release and case, ours
# beside the seed's, the read request size relative to the release before 8.6 (ours /
# the seed's: the direction and size of the effect, since absolute figures from a
# 48-core server with NVMe RAID do not compare); and overwrite's ops/s over the whole
# step and its last sixth, with the LSM's own account of stalls and compaction time
# (bench/seeds/001_iostat.py). The kernel's forced readahead caps a readahead(2) at the
# larger of max_sectors_kb and read_ahead_kb (mm/readahead.c), so the seed's collapse
# of rareq-sz is looked for with read_ahead_kb at the disk's own value and at
# max_sectors_kb.
#
#   bash scripts/build-speedb.sh                  # once each (~20-25 min), outside CI
#   bash scripts/build-rocksdb-release.sh 8.1.1
#   bash scripts/build-rocksdb-release.sh 8.6.7
#   bash scripts/build-rocksdb-release.sh 9.9.3
#   bash bench/seeds/001.sh                       # both parts, ~70 min at scale 1
#
# Env: PLUMB [/var/tmp/plumb-target/release/plumb] (links the newest release, 11.8.1);
# STORE [a new file under /var/tmp] (the iostat part's; the study's is STUDY_STORE
# [STORE with .study before .sqlite]); SCALE [1]; PARTS ["study iostat"];
# REPORT_ONLY [unset; 1: no run, the tables of the newest suites in the stores].
# study: STUDY_SUITE [examples/seeds/001-study.toml]; STUDY_RELEASES [the file's:
# "8.6.7 9.9.3 11.8.1"] the RocksDB releases to run; BASE [speedb-udd0] the target
# (less its case, @RELEASE where it has several) every ratio divides by.
# iostat: SUITE [examples/seeds/001.toml]; MAX_SECTORS_KB [128] ("" keeps the disk's
# own); READ_AHEAD_KB ["own 128"] one suite per value, "own" keeping the disk's;
# RELEASES [the suite's `versions`: "8.1.1 8.6.7 9.9.3 11.8.1"] the releases to run,
# which the tables must hold.
set -euo pipefail
cd "$(dirname "$0")/../.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
STORE=${STORE:-$(mktemp -u /var/tmp/plumb-seed001.XXXXXX.sqlite)}
STUDY_STORE=${STUDY_STORE:-${STORE%.sqlite}.study.sqlite}
SCALE=${SCALE:-1}
SUITE=${SUITE:-examples/seeds/001.toml}
STUDY_SUITE=${STUDY_SUITE:-examples/seeds/001-study.toml}
PARTS=${PARTS:-study iostat}
MAX_SECTORS_KB=${MAX_SECTORS_KB-128}
READ_AHEAD_KB=${READ_AHEAD_KB:-own 128}
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
for part in $PARTS; do
  case $part in study|iostat) ;; *) echo "001.sh: PARTS: unknown part $part (study, iostat)" >&2; exit 2 ;; esac
done
tmp=$(mktemp -d)
# Puts the disk's queue settings back however the script ends.
restore=()
cleanup() {
  for r in "${restore[@]}"; do eval "$r"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
worst=0

if [[ " $PARTS " == *" study "* ]]; then
  echo "study store: $STUDY_STORE"
  study=$STUDY_SUITE
  if [ -n "${STUDY_RELEASES:-}" ]; then
    # The suite with the RocksDB targets' releases replaced by those asked for.
    study=$tmp/001-study.toml
    python3 - "$STUDY_SUITE" "$STUDY_RELEASES" > "$study" <<'PY'
import re, sys
text, releases = open(sys.argv[1]).read(), sys.argv[2].split()
vs = "[" + ", ".join(f'"{r}"' for r in releases) + "]"
out, n = re.subn(r'(?m)^(engine = "rocksdb"\nversions = )\[[^\]]*\]', lambda m: m.group(1) + vs, text)
if not n:
    sys.exit(f"001.sh: no rocksdb target with versions in {sys.argv[1]}")
print(out, end="")
PY
  fi
  status=0
  [ -n "${REPORT_ONLY:-}" ] || "$PLUMB" run "$study" --scale "$SCALE" --store "$STUDY_STORE" >&2 || status=$?
  STORE=$STUDY_STORE PLUMB=$PLUMB SCALE=$SCALE BASE=${BASE:-} PYTHONPATH=bench/seeds \
    python3 bench/seeds/001_study.py || status=$?
  [ "$status" -eq 0 ] || worst=$status
fi

if [[ " $PARTS " == *" iostat "* ]]; then
  echo "store: $STORE"
  # The suite's releases, or those of RELEASES only: each target keeps the releases
  # asked, a target left with none is dropped.
  iostat=$tmp/001.toml
  RELEASES=$(python3 - "$SUITE" "${RELEASES:-}" "$iostat" <<'PY'
import re, sys
text, asked, out = open(sys.argv[1]).read(), sys.argv[2].split(), sys.argv[3]
head, *blocks = text.split("[[target]]")
tail = ""
if blocks and "[[workload]]" in blocks[-1]:
    blocks[-1], tail = blocks[-1].split("[[workload]]", 1)
    tail = "[[workload]]" + tail
kept, ran = [], []
for b in blocks:
    m = re.search(r'(?m)^versions = \[([^\]]*)\]', b)
    vs = re.findall(r'"([^"]+)"', m.group(1)) if m else []
    keep = [v for v in vs if not asked or v in asked]
    if not keep:
        continue
    ran += keep
    kept.append(b[:m.start()] + "versions = [" + ", ".join(f'"{v}"' for v in keep) + "]" + b[m.end():])
missing = [r for r in asked if r not in ran]
if missing:
    sys.exit(f"001.sh: RELEASES {' '.join(missing)}: no target of {sys.argv[1]} runs them")
open(out, "w").write(head + "".join("[[target]]" + b for b in kept) + tail)
print(" ".join(dict.fromkeys(ran)))
PY
)
  dir=$(awk -F' *= *' '$1 == "dir" { gsub(/"/, "", $2); print $2 }' "$SUITE")
  dir=${dir:-/var/tmp}
  dev=$(basename "$(readlink -f "$(df --output=source "$dir" | tail -1)")")
  # A partition's queue is its disk's.
  q=/sys/class/block/$dev/queue
  [ -d "$q" ] || q=/sys/class/block/$(basename "$(dirname "$(readlink -f "/sys/class/block/$dev")")")/queue
  was=$(cat "$q/max_sectors_kb")
  ra_was=$(cat "$q/read_ahead_kb")
  if [ -z "${REPORT_ONLY:-}" ] && [ -n "$MAX_SECTORS_KB" ]; then
    restore+=("echo $was > $q/max_sectors_kb")
    echo "$MAX_SECTORS_KB" > "$q/max_sectors_kb"
  fi
  n=0
  for ra in $READ_AHEAD_KB; do
    n=$((n + 1))
    [ -z "${REPORT_ONLY:-}" ] || continue
    if [ "$ra" != own ]; then
      restore+=("echo $ra_was > $q/read_ahead_kb")
      echo "$ra" > "$q/read_ahead_kb"
    fi
    echo "data on $dev ($(findmnt -no FSTYPE -T "$dir")); max_sectors_kb $(cat "$q/max_sectors_kb") (the disk's own: $was); read_ahead_kb $(cat "$q/read_ahead_kb") (the disk's own: $ra_was)"
    status=0
    "$PLUMB" run "$iostat" --scale "$SCALE" --store "$STORE" >&2 || status=$?
    [ "$ra" = own ] || echo "$ra_was" > "$q/read_ahead_kb"
    [ "$status" -eq 0 ] || worst=$status
  done
  status=0
  PLUMB=$PLUMB STORE=$STORE RELEASES=$RELEASES IOSTAT_SUITES=$n PYTHONPATH=bench/seeds \
    python3 bench/seeds/001_iostat.py || status=$?
  [ "$status" -eq 0 ] || worst=$status
  # The runs' own warnings (readahead past max_sectors_kb among them), once per run.
  for id in $("$PLUMB" runs --json --limit 100000 --store "$STORE" | N=$n python3 -c 'import json,os,sys; r=json.load(sys.stdin); s=sorted({x["suite_id"] for x in r if x.get("suite_id")})[-int(os.environ["N"]):]; print(" ".join(str(x["id"]) for x in r if x.get("suite_id") in s))'); do
    "$PLUMB" show "$id" --store "$STORE" | grep -F "while compaction read its input" || true
  done
fi
exit $worst
