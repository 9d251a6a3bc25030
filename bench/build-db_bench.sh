#!/usr/bin/env bash
# Build RocksDB's db_bench from the SAME RocksDB source, the SAME compiled
# library (librocksdb.a built by librocksdb-sys for plumb's release build) and
# the SAME compiler flags that librocksdb-sys's build.rs (via the `cc` crate)
# used for that library.  Only the few translation units db_bench needs that the
# library does not contain are compiled here; the RocksDB tree itself is never
# rebuilt (no `make`).
#
# Usage:  bench/build-db_bench.sh
# Env:
#   CARGO_TARGET_DIR  plumb's cargo target dir        (default /var/tmp/plumb-target)
#   PROFILE           cargo profile dir name          (default release)
#   DB_BENCH          output binary                   (default /var/tmp/plumb-bench/db_bench)
#   OBJ_DIR           object/work dir                 (default $(dirname $DB_BENCH)/db_bench-obj)
#   WAIT_TIMEOUT      seconds to wait for plumb's cargo build / librocksdb.a (default 3600)
#   JOBS              parallel compiles               (default 2)
#   CXX               compiler (default: c++, what the cc crate uses when CXX is unset)
#   FORCE=1           recompile everything
set -euo pipefail

CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/tmp/plumb-target}
PROFILE=${PROFILE:-release}
DB_BENCH=${DB_BENCH:-/var/tmp/plumb-bench/db_bench}
OBJ_DIR=${OBJ_DIR:-$(dirname "$DB_BENCH")/db_bench-obj}
WAIT_TIMEOUT=${WAIT_TIMEOUT:-3600}
JOBS=${JOBS:-2}
CXX=${CXX:-c++}
BUILD_ROOT="$CARGO_TARGET_DIR/$PROFILE/build"
ROOT=$(cd "$(dirname "$0")/.." && pwd)

log() { printf '[build-db_bench] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ---------------------------------------------------------------- packages ---
need_pkgs=()
[ -f /usr/include/gflags/gflags.h ] || need_pkgs+=(libgflags-dev)
command -v "$CXX" >/dev/null 2>&1 || need_pkgs+=(g++)
command -v readelf >/dev/null 2>&1 || need_pkgs+=(binutils)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends "${need_pkgs[@]}" >/dev/null 2>&1 || {
    apt-get update >/dev/null && apt-get install -y --no-install-recommends "${need_pkgs[@]}" >/dev/null; }
fi

# ------------------------------------------- wait for plumb's release build ---
# librocksdb.a must exist and its cargo build must be over.  Compiling (not
# linking) additionally waits until no `cargo build` runs at all (2 cores: never
# two C++ builds at once); see wait_cargo below.
newest() { ls -t "$@" 2>/dev/null | head -n1; }
cargo_busy() { pgrep -f 'cargo build' | tr '\n' ' ' || true; }
wait_cargo() {  # $1 = what for; $2 = 1: also require librocksdb.a
  local waited=0 busy
  while :; do
    LIB=$(newest "$BUILD_ROOT"/librocksdb-sys-*/out/librocksdb.a || true)
    busy=$(cargo_busy)
    if [ "$2" = 1 ] && [ -n "$LIB" ] && [ -z "$busy" ]; then return; fi
    if [ "$2" = 0 ] && [ -z "$busy" ]; then return; fi
    # The .a exists and is not being written (cc writes it last, then moves on):
    if [ "$2" = 1 ] && [ -n "$LIB" ] && [ $(( $(date +%s) - $(stat -c %Y "$LIB") )) -gt 120 ] \
       && ! pgrep -f "librocksdb-sys-0.19.0" >/dev/null; then return; fi
    [ "$waited" -ge "$WAIT_TIMEOUT" ] && die "timed out after ${WAIT_TIMEOUT}s waiting for $1 (librocksdb.a: '${LIB:-none}', cargo pids: ${busy:-none})"
    [ $((waited % 60)) -eq 0 ] && log "waiting for $1 (librocksdb.a: ${LIB:-not yet}; cargo pids: ${busy:-none})"
    sleep 10; waited=$((waited + 10))
  done
}
wait_cargo "librocksdb.a from plumb's release build" 1
LIB_OUT=$(dirname "$LIB")
LIB_BUILD=$(dirname "$LIB_OUT")
log "librocksdb.a: $LIB"

# The crate's source dir (build.rs prints it as cargo:cargo_manifest_dir=...).
SYS_DIR=$(sed -n 's/^cargo:cargo_manifest_dir=//p' "$LIB_BUILD/output" 2>/dev/null | tail -n1)
if [ -z "$SYS_DIR" ] || [ ! -d "$SYS_DIR/rocksdb" ]; then
  SYS_DIR=$(ls -d "$HOME"/.cargo/registry/src/*/librocksdb-sys-0.19.0+11.8.1 2>/dev/null | head -n1)
fi
[ -d "$SYS_DIR/rocksdb" ] || die "librocksdb-sys source dir not found"
SRC="$SYS_DIR/rocksdb"
log "RocksDB source: $SRC"

# lz4 / zstd: librocksdb-sys links the static libs built by lz4-sys / zstd-sys
# (bundled sources), so db_bench links the very same archives.
LZ4_A=$(newest "$BUILD_ROOT"/lz4-sys-*/out/liblz4.a) || true
ZSTD_A=$(newest "$BUILD_ROOT"/zstd-sys-*/out/libzstd.a) || true
[ -n "$LZ4_A" ] && [ -n "$ZSTD_A" ] || die "liblz4.a / libzstd.a not found under $BUILD_ROOT"
LZ4_INC=$(sed -n 's/^cargo:include=//p' "$(dirname "$(dirname "$LZ4_A")")/output" | tail -n1)
ZSTD_INC=$(sed -n 's/^cargo:include=//p' "$(dirname "$(dirname "$ZSTD_A")")/output" | tail -n1)
LZ4_INC=${LZ4_INC:-$(dirname "$LZ4_A")/include}

# ------------------------------------------------------------------ flags ---
# Reproduces librocksdb-sys 0.19.0 build.rs + cc crate defaults for a Linux
# x86_64 release build with `-C target-cpu=$CPU` and debug=line-tables-only
# (cc: -O3 -ffunction-sections -fdata-sections -fPIC -g -gdwarf-4
#  -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -m64; build.rs: the rest),
# then -g0 last, as .cargo/config.toml's CXXFLAGS_x86_64_unknown_linux_gnu adds it
# (no debug info; frame pointers kept, code unchanged).
# The -m<feature> flags follow build.rs: only those whose rustc target_feature
# is on for that target-cpu.
# The CPU level plumb is built for (.cargo/config.toml), so both tools run the same
# instructions.
CPU=$(sed -n 's/.*target-cpu=\([A-Za-z0-9_-]*\).*/\1/p' "$ROOT/.cargo/config.toml" | head -n1)
CPU=${CPU:-native}
RUST_CFG=$(rustc --print cfg -C target-cpu="$CPU" 2>/dev/null || true)
has_feat() { grep -qx "target_feature=\"$1\"" <<<"$RUST_CFG"; }
ARCH_FLAGS=(-march="$CPU")
has_feat sse2      && ARCH_FLAGS+=(-msse2)
has_feat sse4.1    && ARCH_FLAGS+=(-msse4.1)
has_feat sse4.2    && ARCH_FLAGS+=(-msse4.2)
has_feat avx2      && ARCH_FLAGS+=(-mavx2)
has_feat bmi1      && ARCH_FLAGS+=(-mbmi)
has_feat lzcnt     && ARCH_FLAGS+=(-mlzcnt)
has_feat pclmulqdq && ARCH_FLAGS+=(-mpclmul)

CXXFLAGS=(
  -O3 -ffunction-sections -fdata-sections -fPIC -g -gdwarf-4
  -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -m64
  -I "$SRC/include/" -I "$SRC/" -I "$SRC/third-party/gtest-1.8.1/fused-src/"
  -I "$LZ4_INC" -I "$ZSTD_INC" -I "$SYS_DIR"
  -Wall -Wextra
  "${ARCH_FLAGS[@]}"
  -std=c++20 -Wsign-compare -Wshadow -Wno-unused-parameter -Wno-unused-variable
  -Woverloaded-virtual -Wnon-virtual-dtor -Wno-missing-field-initializers
  -Wno-strict-aliasing -Wno-invalid-offsetof
  -include cstdint
  -DLZ4=1 -DZSTD=1 -DNDEBUG=1 -DHAVE_ALIGNED_NEW -DHAVE_UINT128_EXTENSION
  -DOS_LINUX -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX
  -DROCKSDB_SCHED_GETCPU_PRESENT -DROCKSDB_AUXV_GETAUXVAL_PRESENT
  -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_RANGESYNC_PRESENT
  -g0
)
# Only for the tool sources (what build_detect_platform adds when gflags >= 2.1
# is installed); the library does not use gflags.
TOOL_FLAGS=(-DGFLAGS=1 -DGFLAGS_NAMESPACE=gflags)
LDLIBS=("$LIB" "$LZ4_A" "$ZSTD_A" -lgflags -lpthread -ldl)

# db_bench target in the Makefile: tools/db_bench.o + BENCH_LIB_SOURCES
# (src.mk) + TESTUTIL (test_util/testutil.cc) + the library.
SOURCES=(
  tools/db_bench.cc
  tools/db_bench_tool.cc
  tools/tool_hooks.cc
  tools/simulated_hybrid_file_system.cc
  test_util/testutil.cc
)
# Anything from these lists already in the library is skipped (nothing today).
LIB_SOURCES_TXT="$SYS_DIR/rocksdb_lib_sources.txt"

mkdir -p "$OBJ_DIR" "$(dirname "$DB_BENCH")"
FLAGS_STAMP="$OBJ_DIR/flags.txt"
printf '%s\n' "$CXX" "${CXXFLAGS[@]}" "${TOOL_FLAGS[@]}" "$LIB" > "$FLAGS_STAMP.new"
if [ "${FORCE:-0}" = 1 ] || ! cmp -s "$FLAGS_STAMP.new" "$FLAGS_STAMP"; then
  rm -f "$OBJ_DIR"/*.o
fi
mv "$FLAGS_STAMP.new" "$FLAGS_STAMP"

echo "== db_bench build flags (same as librocksdb-sys used for librocksdb.a) =="
echo "CXX      = $CXX ($("$CXX" --version | head -n1))"
echo "CXXFLAGS = ${CXXFLAGS[*]}"
echo "TOOLS    = ${TOOL_FLAGS[*]}"
echo "LINK     = ${LDLIBS[*]}"

objs=()
pids=()
waited_for_cargo=0
for s in "${SOURCES[@]}"; do
  if [ -f "$LIB_SOURCES_TXT" ] && grep -qx "$s" "$LIB_SOURCES_TXT"; then
    log "skip $s (already in librocksdb.a)"; continue
  fi
  o="$OBJ_DIR/$(echo "$s" | tr / _ | sed 's/\.cc$/.o/')"
  objs+=("$o")
  if [ -f "$o" ] && [ "$o" -nt "$SRC/$s" ]; then continue; fi
  if [ "$waited_for_cargo" = 0 ]; then wait_cargo "all cargo builds to finish before compiling" 0; waited_for_cargo=1; fi
  log "compile $s"
  "$CXX" "${CXXFLAGS[@]}" "${TOOL_FLAGS[@]}" -c "$SRC/$s" -o "$o.tmp" && mv "$o.tmp" "$o" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$JOBS" ]; then wait "${pids[0]}" || die "compile failed"; pids=("${pids[@]:1}"); fi
done
for p in "${pids[@]}"; do wait "$p" || die "compile failed"; done

# librocksdb-sys's generated build_version.cc (in librocksdb.a) defines
# `extern "C" bool RocksDbIOUringEnable()` (returns true); db_bench_tool.cc
# defines it too (returns FLAGS_io_uring_enabled, default true) -> duplicate
# symbol at link time.  Make db_bench's copy weak so the library's wins.  It
# changes nothing: io_uring is not compiled into this library
# (no ROCKSDB_IOURING_PRESENT), so the function is never consulted.
objcopy --weaken-symbol=RocksDbIOUringEnable "$OBJ_DIR/tools_db_bench_tool.o"

log "link $DB_BENCH"
"$CXX" -O3 -m64 -fPIC -o "$DB_BENCH.tmp" "${objs[@]}" "${LDLIBS[@]}" 2> "$OBJ_DIR/link.log" || {
  grep -o "undefined reference to \`[^']*'" "$OBJ_DIR/link.log" | sort -u | head -50 >&2
  die "link failed (full log: $OBJ_DIR/link.log)"; }
mv "$DB_BENCH.tmp" "$DB_BENCH"

# ---------------------------------------------------- verify flag identity ---
# GCC records the codegen switches (-march expansion, -O, -std, -f...) in
# DW_AT_producer; compare the library's with ours.
producer() { readelf --debug-dump=info "$1" 2>/dev/null | grep -m1 'DW_AT_producer' | sed 's/.*: GNU/GNU/' || true; }
tmpd=$(mktemp -d); trap 'rm -rf "$tmpd"' EXIT
member=$(ar t "$LIB" | grep -m1 -- '-status\.o$' || ar t "$LIB" | head -n1)
(cd "$tmpd" && ar x "$LIB" "$member")
P_LIB=$(producer "$tmpd/$member")
P_OURS=$(producer "$OBJ_DIR/tools_db_bench_tool.o")
echo "producer(librocksdb.a:$member) = $P_LIB"
echo "producer(db_bench_tool.o)       = $P_OURS"
if [ -n "$P_LIB" ] && [ "$P_LIB" = "$P_OURS" ]; then
  echo "flags check: IDENTICAL codegen switches"
else
  echo "flags check: WARNING codegen switches differ (see above)"
fi

# ------------------------------------------------------------------ smoke ---
smoke=$(mktemp -d)
"$DB_BENCH" --benchmarks=fillseq,readrandom --num=1000 --db="$smoke/db" \
  --compression_type=none >"$smoke/out" 2>&1 || { cat "$smoke/out" >&2; die "db_bench smoke run failed"; }
grep -E '^RocksDB:|^(fillseq|readrandom) ' "$smoke/out"
rm -rf "$smoke"
echo "built: $DB_BENCH"
