#!/usr/bin/env bash
# Issue 33's commit-scaling figures: durable commits per second against 1-16
# concurrent committers on RocksDB (synced writes), PostgreSQL, InnoDB and MyRocks,
# beside the disk's fsync ceiling, from examples/commit-scaling.toml; then the
# cached-SELECT CPU ceiling of PostgreSQL and InnoDB. Prints the CPU model first and
# the suite's report (text and markdown).
#
#   bench/commit-scaling.sh
#   THREADS="[1, 4, 16]" DURATION=3 bench/commit-scaling.sh   # shorter
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb  THREADS="[1, 2, 4, 8, 16]"
#   DURATION=5  DIR=/var/tmp
set -euo pipefail
cd "$(dirname "$0")/.."
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
THREADS=${THREADS:-[1, 2, 4, 8, 16]}
DURATION=${DURATION:-5}
DIR=${DIR:-/var/tmp}
WORK=$(mktemp -d /var/tmp/plumb-commits.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
STORE=$WORK/store.sqlite

echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) threads"
sed -e "s|^threads = .*|threads = $THREADS|" \
    -e "s|^duration = .*|duration = $DURATION|" \
    -e "s|^dir = .*|dir = \"$DIR\"|" examples/commit-scaling.toml > "$WORK/suite.toml"
"$PLUMB" run "$WORK/suite.toml" --store "$STORE" >/dev/null
suite=$(sqlite3 "$STORE" 'SELECT max(id) FROM suites')
"$PLUMB" report "s$suite" --store "$STORE"
"$PLUMB" report "s$suite" --store "$STORE" --format md > "$WORK/report.md"
sed -n '/^## Durable commits/,/^## Runs/p' "$WORK/report.md" | sed '$d'

for server in postgres mariadb; do
  "$PLUMB" sql --server "$server" --steps cached-select --duration "$DURATION" \
    --dir "$DIR" --store "$STORE" 2>&1 | grep -E 'cached-SELECT ceiling|^ +[0-9].*cached-select'
done
