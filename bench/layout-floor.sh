#!/usr/bin/env bash
# How far does code placement alone move a step? One source tree linked N+1 times: as
# the linker lays it out, then with its functions in N shuffled orders (lld's
# --shuffle-sections over .text*, one seed each). Same instructions, other addresses.
# Each shuffled binary is then judged against the plain one by bench/old-vs-new.sh's
# duets. A difference between two builds of two commits that is inside this spread is
# not shown to be the commits' code (see bench/README.md, "Code placement alone").
#
#   bench/layout-floor.sh [N]
#
# Run from the source tree to measure, with CARGO_TARGET_DIR set as for any build (only
# the binary crate is relinked; RocksDB and the libraries are not rebuilt).
# Env: OUT [/var/tmp/layout-bins] (the binaries), ONLY [rocksdb-read] and ROUNDS [20]
# (passed to bench/old-vs-new.sh), PAIRS [plain] (plain: plain against each shuffled;
# all: every pair). Prints one verdict line per pair.
set -euo pipefail
N=${1:-2}
OUT=${OUT:-/var/tmp/layout-bins}
export ONLY=${ONLY:-rocksdb-read} ROUNDS=${ROUNDS:-20}
PAIRS=${PAIRS:-plain}
here=$(cd "$(dirname "$0")" && pwd)
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$OUT"
grep -m1 "model name" /proc/cpuinfo
relink() {
  touch src/main.rs
  cargo rustc --quiet --release --bin plumb -- "$@"
  cp "$target/release/plumb" "$OUT/$name"
}
name=plumb-plain relink
for s in $(seq 1 "$N"); do
  name=plumb-shuf$s relink -C "link-arg=-Wl,--shuffle-sections=.text*=$s"
done
# Leave the target dir's binary as a plain build links it.
touch src/main.rs && cargo build --quiet --release --bin plumb
bins=(plumb-plain)
for s in $(seq 1 "$N"); do bins+=("plumb-shuf$s"); done
for ((i = 0; i < ${#bins[@]}; i++)); do
  for ((j = i + 1; j < ${#bins[@]}; j++)); do
    [ "$PAIRS" = all ] || [ "$i" -eq 0 ] || continue
    a=${bins[$i]} b=${bins[$j]}
    "$here/old-vs-new.sh" "$OUT/$a" "$OUT/$b" 2>/dev/null |
      awk -v p="$a vs $b" '/ [0-9]\.[0-9][0-9][0-9] \(/ {print p": "$0}'
  done
done
