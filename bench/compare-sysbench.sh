#!/usr/bin/env bash
# plumb sql vs sysbench 1.0.20 (and pgbench -S on PostgreSQL), against the same server,
# same table, same threads, runs alternated. Reports the QPS ratio plumb/peer and the
# client CPU per query of each (plumb: its cpu_us_op; the peers: user + system time of
# the process over the queries it reports).
#
#   bench/compare-sysbench.sh                        # PostgreSQL 15, InnoDB, MyRocks
#   SERVERS=postgres ROUNDS=1 DURATION=3 bench/compare-sysbench.sh   # smoke run
#
# sysbench runs with --rand-type=uniform, plumb's default: sysbench's own default
# ("special") sends 75% of queries to 1% of the rows, a hotter working set than plumb's.
# pgbench -S reads an INTEGER column of pgbench_accounts (its own table, same row count),
# plumb's point-query the CHAR(120) c of sbtest1: close, not the same statement.
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb  SERVERS="postgres innodb myrocks"
#   TABLE_SIZE=1000000  THREADS=2  DURATION=10  ROUNDS=3  CACHE_MB=2048
#   TESTS="point-query read-only-100" (sysbench oltp_point_select, oltp_read_only)
# The server is loaded once by plumb (`--steps load --keep`), then started again from
# that directory by this script, and every tool connects to it over its unix socket.
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
SERVERS=${SERVERS:-"postgres innodb myrocks"}
TABLE_SIZE=${TABLE_SIZE:-1000000}
THREADS=${THREADS:-2}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CACHE_MB=${CACHE_MB:-2048}
TESTS=${TESTS:-"point-query read-only-100"}
WORK=$(mktemp -d /var/tmp/plumb-sysbench.XXXXXX)
chmod 755 "$WORK"
STORE=$WORK/store.sqlite
RESULTS=$WORK/results.tsv
ROOT=""
STOP=""
cleanup() {
  if [ -n "$STOP" ]; then eval "$STOP" >/dev/null 2>&1 || true; fi
  rm -rf "$WORK/servers"
}
trap cleanup EXIT
command -v sysbench >/dev/null || { echo "sysbench missing: bash scripts/setup.sh" >&2; exit 2; }

cpu_of() { # cpu_of OUT CMD...: runs CMD (output to OUT), its user+system seconds to OUT.cpu
  local out=$1
  shift
  # In a subshell, `times` counts only the children of that subshell: CMD.
  (
    rc=0
    "$@" >"$out" 2>"$out.err" || rc=$?
    # Not `times | awk`: a pipeline's `times` runs in yet another subshell.
    times >"$out.times"
    awk 'NR == 2 { n = split($1 " " $2, f, " "); s = 0
      for (i = 1; i <= n; i++) { split(f[i], p, "m"); sub("s", "", p[2]); s += p[1] * 60 + p[2] }
      print s }' "$out.times" >"$out.cpu"
    [ $rc -eq 0 ] || cat "$out.err" >&2
    exit $rc
  )
}

start_server() { # $1: postgres|innodb|myrocks; sets ROOT, STOP, URL, SB
  local s=$1 args=(--server postgres)
  case $s in
    innodb) args=(--server mariadb --engine innodb) ;;
    myrocks) args=(--server mariadb --engine rocksdb) ;;
  esac
  mkdir -p "$WORK/servers"
  "$PLUMB" sql "${args[@]}" --steps load --table-size "$TABLE_SIZE" --threads "$THREADS" \
    --cache-mb "$CACHE_MB" --keep --dir "$WORK/servers" --store "$STORE" --tag "load-$s" >/dev/null 2>"$WORK/load.err"
  ROOT=$(ls -d "$WORK"/servers/plumb-* | tail -1)
  if [ "$s" = postgres ]; then
    local port bin
    port=$(grep -o 'PGSQL\.[0-9]*' "$ROOT/server.log" | head -1 | cut -d. -f2)
    bin=$(ls -d /usr/lib/postgresql/*/bin | tail -1)
    runuser -u postgres -- "$bin/pg_ctl" -D "$ROOT/data" -l "$ROOT/server.log" -w \
      -o "-p $port -k $ROOT -c listen_addresses=127.0.0.1" start >/dev/null
    STOP="runuser -u postgres -- $bin/pg_ctl -D $ROOT/data -m fast -w stop"
    URL="postgres://postgres@localhost:$port/plumb?host=$ROOT"
    SB=(--db-driver=pgsql --pgsql-host="$ROOT" --pgsql-port="$port" --pgsql-user=postgres --pgsql-db=plumb)
    PGB=(-h "$ROOT" -p "$port" -U postgres)
  else
    setsid /usr/sbin/mariadbd --defaults-file="$ROOT/my.cnf" >>"$ROOT/server.log" 2>&1 &
    for _ in $(seq 1 300); do
      mariadb-admin --defaults-file="$ROOT/my.cnf" -u root ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    STOP="mariadb-admin --defaults-file=$ROOT/my.cnf -u root shutdown"
    URL="mysql://root@localhost/plumb?socket=$ROOT/mysqld.sock"
    SB=(--db-driver=mysql --mysql-socket="$ROOT/mysqld.sock" --mysql-user=root --mysql-db=plumb)
  fi
}

stop_server() {
  eval "$STOP" >/dev/null 2>&1 || true
  STOP=""
  rm -rf "$ROOT"
}

plumb_round() { # $1 server $2 test
  local engine=()
  [ "$1" = myrocks ] && engine=(--engine rocksdb)
  cpu_of "$WORK/p.json" "$PLUMB" sql --url "$URL" "${engine[@]}" --steps "$2" --table-size "$TABLE_SIZE" \
    --threads "$THREADS" --duration "$DURATION" --warmup 0 --json --store "$STORE" --tag "plumb-$1"
  python3 - "$WORK/p.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]["summary"]
print(f'{s["ops_sec"]:.0f}\t{s["cpu_us_op"]:.2f}')
PY
}

sysbench_round() { # $1 test
  local lua=oltp_point_select
  [ "$1" = read-only-100 ] && lua=oltp_read_only
  cpu_of "$WORK/s.txt" sysbench "$lua" "${SB[@]}" --tables=1 --table-size="$TABLE_SIZE" \
    --threads="$THREADS" --time="$DURATION" --report-interval=0 --rand-type=uniform run
  local q cpu
  q=$(awk '/queries:/ { gsub("[(]", "", $3); print $2, $3; exit }' "$WORK/s.txt")
  cpu=$(cat "$WORK/s.txt.cpu")
  python3 -c "import sys; total, qps = map(float, '$q'.split()); print(f'{qps:.0f}\t{float($cpu) * 1e6 / total:.2f}')"
}

pgbench_round() {
  cpu_of "$WORK/g.txt" pgbench -S -M prepared -c "$THREADS" -j "$THREADS" -T "$DURATION" "${PGB[@]}" plumb
  local tps n cpu
  tps=$(awk '/^tps = / { print $3; exit }' "$WORK/g.txt")
  n=$(awk '/number of transactions actually processed/ { print $NF; exit }' "$WORK/g.txt" | cut -d/ -f1)
  cpu=$(cat "$WORK/g.txt.cpu")
  python3 -c "print(f'{float($tps):.0f}\t{float($cpu) * 1e6 / float($n):.2f}')"
}

printf 'server\ttest\ttool\tround\tqps\tclient_cpu_us_q\n' >"$RESULTS"
for s in $SERVERS; do
  echo "== $s: loading $TABLE_SIZE rows" >&2
  start_server "$s"
  if [ "$s" = postgres ]; then
    pgbench -i -q -s $(( (TABLE_SIZE + 99999) / 100000 )) "${PGB[@]}" plumb >/dev/null 2>&1
  fi
  for t in $TESTS; do
    for r in $(seq 1 "$ROUNDS"); do
      # ABBA: plumb first on odd rounds, sysbench first on even ones, so a steady drift
      # of the machine falls on both alike.
      if [ $((r % 2)) = 1 ]; then
        printf '%s\t%s\tplumb\t%s\t%s\n' "$s" "$t" "$r" "$(plumb_round "$s" "$t")" >>"$RESULTS"
        printf '%s\t%s\tsysbench\t%s\t%s\n' "$s" "$t" "$r" "$(sysbench_round "$t")" >>"$RESULTS"
      else
        printf '%s\t%s\tsysbench\t%s\t%s\n' "$s" "$t" "$r" "$(sysbench_round "$t")" >>"$RESULTS"
        printf '%s\t%s\tplumb\t%s\t%s\n' "$s" "$t" "$r" "$(plumb_round "$s" "$t")" >>"$RESULTS"
      fi
      if [ "$s" = postgres ] && [ "$t" = point-query ]; then
        printf '%s\t%s\tpgbench-S\t%s\t%s\n' "$s" "$t" "$r" "$(pgbench_round)" >>"$RESULTS"
      fi
      tail -n +2 "$RESULTS" | tail -3 >&2
    done
  done
  stop_server
done

echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) vCPUs;" \
  "$TABLE_SIZE rows, $THREADS threads, ${DURATION}s, $ROUNDS rounds alternated"
BENCH_DIR="$(cd "$(dirname "$0")" && pwd)" python3 - "$RESULTS" "$PLUMB" <<'PY'
import csv, os, statistics, sys
sys.path.insert(0, os.environ["BENCH_DIR"])
from plumb_ratio import judged
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault((r["server"], r["test"], r["tool"]), []).append((float(r["qps"]), float(r["client_cpu_us_q"])))
print(f'{"server":9} {"test":15} {"peer":10} {"plumb qps":>10} {"peer qps":>10} {"ratio (95%) p":>24} {"plumb cpu/q":>11} {"peer cpu/q":>10}')
for (s, t, tool), v in by.items():
    if tool == "plumb":
        continue
    p = by[(s, t, "plumb")]
    pq, pc = statistics.median(x[0] for x in p), statistics.median(x[1] for x in p)
    q, c = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
    print(f"{s:9} {t:15} {tool:10} {pq:10.0f} {q:10.0f} {judged(sys.argv[2], [x[0] for x in v], [x[0] for x in p], 2):>24} {pc:11.2f} {c:10.2f}")
PY
echo "(medians; cpu/q = client CPU µs per query; results in $RESULTS)"
