#!/usr/bin/env bash
# Prints vectors from YCSB's own classes for plumb's Rust port of YCSB's core workload to
# match (crates/workloads/tests/ycsb_vectors.rs): compiles the few YCSB sources they need
# with plumb's driver scripts/ycsb-vectors/Vectors.java and runs it.
#
#   scripts/ycsb-vectors.sh YCSB_SRC_DIR [OUT]
#
# YCSB_SRC_DIR is a YCSB checkout (its work tree) or a bare clone of it. OUT defaults to
# crates/workloads/tests/fixtures/ycsb-vectors.txt. Needs a JDK (javac, java), 11 or later.
#
# YCSB's algorithms are compiled from its sources unchanged. Two classes are stood in
# for, because they drag in libraries outside the JDK (HTrace, HdrHistogram) and decide
# nothing the vectors show: site.ycsb.Client, of which CoreWorkload reads three property
# names and a default (copied from YCSB's Client.java here, line for line), and
# site.ycsb.measurements.Measurements, which CoreWorkload only reports timings to.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
src=${1:?usage: scripts/ycsb-vectors.sh YCSB_SRC_DIR [OUT]}
out=${2:-$root/crates/workloads/tests/fixtures/ycsb-vectors.txt}

if [ -d "$src/core/src/main/java/site/ycsb" ]; then
  read_src() { cat "$src/$1"; }
  commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "${YCSB_COMMIT:-unknown}")
  date=$(git -C "$src" log -1 --format=%cs 2>/dev/null || echo unknown)
elif git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null; then
  read_src() { git --git-dir="$src" show "HEAD:$1"; }
  commit=$(git --git-dir="$src" rev-parse HEAD)
  date=$(git --git-dir="$src" log -1 --format=%cs HEAD)
else
  echo "ycsb-vectors: $src is neither a YCSB work tree (core/src/main/java/site/ycsb) nor a git dir" >&2
  exit 2
fi
for tool in javac java; do
  command -v "$tool" >/dev/null || { echo "ycsb-vectors: $tool not found; install a JDK" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
J=core/src/main/java/site/ycsb
mkdir -p "$tmp/src/site/ycsb/generator" "$tmp/src/site/ycsb/workloads" \
  "$tmp/src/site/ycsb/measurements" "$tmp/classes"

# YCSB's sources, unchanged: what CoreWorkload and the generators refer to.
for f in Utils ByteIterator StringByteIterator RandomByteIterator Status DB DBException \
  Workload WorkloadException workloads/CoreWorkload \
  generator/Generator generator/NumberGenerator generator/ZipfianGenerator \
  generator/ScrambledZipfianGenerator generator/SkewedLatestGenerator \
  generator/CounterGenerator generator/AcknowledgedCounterGenerator \
  generator/UniformLongGenerator generator/DiscreteGenerator \
  generator/HotspotIntegerGenerator generator/ConstantIntegerGenerator \
  generator/ExponentialGenerator generator/SequentialGenerator \
  generator/HistogramGenerator; do
  read_src "$J/$f.java" >"$tmp/src/site/ycsb/$f.java"
done

# site.ycsb.Client: the constants CoreWorkload reads, taken from YCSB's own file.
{
  echo 'package site.ycsb;'
  echo '/** Stand-in for YCSB'"'"'s Client: only the constants CoreWorkload reads, copied. */'
  echo 'public final class Client {'
  echo '  private Client() {'
  echo '  }'
  read_src "$J/Client.java" |
    grep -E '^[[:space:]]*public static final String (RECORD_COUNT_PROPERTY|DEFAULT_RECORD_COUNT|OPERATION_COUNT_PROPERTY)[[:space:]]*='
  echo '}'
} >"$tmp/src/site/ycsb/Client.java"
if [ "$(grep -c 'public static final' "$tmp/src/site/ycsb/Client.java")" != 3 ]; then
  echo "ycsb-vectors: YCSB's Client.java no longer declares its count properties on one line each" >&2
  exit 1
fi

# site.ycsb.measurements.Measurements: CoreWorkload reports timings to it; nothing here
# is timed.
cat >"$tmp/src/site/ycsb/measurements/Measurements.java" <<'EOF'
package site.ycsb.measurements;

import site.ycsb.Status;

/** Stand-in for YCSB's Measurements: accepts what CoreWorkload reports, keeps nothing. */
public final class Measurements {
  private static final Measurements SINGLETON = new Measurements();

  public static Measurements getMeasurements() {
    return SINGLETON;
  }

  public void measure(String operation, int latency) {
  }

  public void measureIntended(String operation, int latency) {
  }

  public void reportStatus(String operation, Status status) {
  }

  public long getIntendedStartTimeNs() {
    return System.nanoTime();
  }
}
EOF

javac -nowarn -encoding UTF-8 -d "$tmp/classes" -sourcepath "$tmp/src" \
  "$here/ycsb-vectors/Vectors.java" 2> >(grep -v '^Note:' >&2)
java_version=$(java -version 2>&1 | head -1)

mkdir -p "$(dirname "$out")"
{
  echo "# Vectors printed by YCSB's own classes: brianfrankcooper/YCSB commit $commit ($date)."
  echo "# Made by scripts/ycsb-vectors.sh with plumb's driver scripts/ycsb-vectors/Vectors.java"
  echo "# under $java_version. One vector per line, its kind first; doubles as Java prints them."
  java -cp "$tmp/classes" Vectors
} >"$out.tmp"
mv "$out.tmp" "$out"
echo "ycsb-vectors: $(grep -vc '^#' "$out") vectors from YCSB $commit in $out"
