#!/usr/bin/env bash
# The long forms of plumb's fault tests: SIGKILL at KILLS random points of a run and of a
# suite (tests/faults.rs with PLUMB_TORTURE_KILLS), and the durability check on every
# engine and server with KILLS kills per engine and mode. CI runs the short forms.
#
#   bash scripts/torture.sh            # KILLS=20
#   KILLS=100 bash scripts/torture.sh
set -euo pipefail
cd "$(dirname "$0")/.."
KILLS=${KILLS:-20}
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/plumb-target}"
PLUMB_TORTURE_KILLS=$KILLS cargo test --release --features splinterdb --test faults -- --nocapture
cargo build --release --features splinterdb
"$CARGO_TARGET_DIR/release/plumb" durability --kv all --modes sync,nosync,unlogged --kills "$KILLS"
"$CARGO_TARGET_DIR/release/plumb" durability --kv none --server postgres,innodb,myrocks --kills "$KILLS"
