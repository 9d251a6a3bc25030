#!/usr/bin/env bash
# plumb sql --lua vs sysbench 1.0.20 running the same Lua script file, against the same
# server and tables, same threads, runs alternated (ABBA). Reports transactions/s
# plumb/sysbench with its 95% interval (plumb_ratio.judged) and the client CPU per
# transaction of each (plumb's cpu_us_op over its window; sysbench's user + system time
# over its transactions, its start included).
#
#   bench/compare-sysbench-lua.sh                                   # MariaDB InnoDB, PostgreSQL
#   SERVERS=postgres ROUNDS=1 DURATION=3 bench/compare-sysbench-lua.sh   # smoke run
#
# The tables are made once per server by sysbench's own prepare command (the script's),
# so both tools run on the same tables; every run uses --rand-type=uniform … as given in
# OPTS, passed to sysbench as --NAME=VALUE and to plumb as --lua-opt NAME=VALUE.
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb  SERVERS="innodb postgres"
#   SCRIPTS="oltp_point_select oltp_read_write oltp_update_index select_random_ranges"
#   OPTS="table-size=100000 rand-type=uniform"  THREADS=2  DURATION=10  ROUNDS=3
#   CACHE_MB=2048  WARM=1 (one unrecorded slice of each tool after prepare; 0: none)
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
SERVERS=${SERVERS:-"innodb postgres"}
SCRIPTS=${SCRIPTS:-"oltp_point_select oltp_read_write oltp_update_index select_random_ranges"}
OPTS=${OPTS:-"table-size=100000 rand-type=uniform"}
THREADS=${THREADS:-2}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
WARM=${WARM:-1}
CACHE_MB=${CACHE_MB:-2048}
LUA_DIR=${LUA_DIR:-/usr/share/sysbench}
WORK=$(mktemp -d /var/tmp/plumb-sblua.XXXXXX)
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
SB_OPTS=()
PL_OPTS=()
for o in $OPTS; do
  SB_OPTS+=("--$o")
  PL_OPTS+=(--lua-opt "$o")
done

cpu_of() { # cpu_of OUT CMD...: runs CMD (output to OUT), its user+system seconds to OUT.cpu
  local out=$1
  shift
  (
    rc=0
    "$@" >"$out" 2>"$out.err" || rc=$?
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
  # A server plumb starts and keeps (a tiny load: the directory is what is wanted),
  # then started again from that directory by this script.
  "$PLUMB" sql "${args[@]}" --steps load --table-size 10 --cache-mb "$CACHE_MB" --keep \
    --dir "$WORK/servers" --store "$STORE" --tag "server-$s" >/dev/null 2>"$WORK/load.err"
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

plumb_round() { # $1 script
  cpu_of "$WORK/p.json" "$PLUMB" sql --url "$URL" --lua "$LUA_DIR/$1.lua" "${PL_OPTS[@]}" \
    --steps lua --threads "$THREADS" --duration "$DURATION" --warmup 0 --json --store "$STORE"
  # plumb's own client CPU per transaction over the window (its cpu_us_op).
  python3 - "$WORK/p.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["steps"][0]["summary"]
print(f'{s["ops_sec"]:.1f}\t{s["cpu_us_op"]:.1f}')
PY
}

sysbench_round() { # $1 script
  cpu_of "$WORK/s.txt" sysbench "$LUA_DIR/$1.lua" "${SB[@]}" "${SB_OPTS[@]}" \
    --threads="$THREADS" --time="$DURATION" --report-interval=0 run
  python3 - "$WORK/s.txt" "$(cat "$WORK/s.txt.cpu")" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
n, tps = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", t).groups()
print(f'{float(tps):.1f}\t{float(sys.argv[2]) * 1e6 / max(int(n), 1):.1f}')
PY
}

printf 'server\tscript\ttool\tround\ttps\tclient_cpu_us_txn\n' >"$RESULTS"
for s in $SERVERS; do
  start_server "$s"
  for sc in $SCRIPTS; do
    echo "== $s $sc: sysbench prepare ($OPTS)" >&2
    sysbench "$LUA_DIR/$sc.lua" "${SB[@]}" "${SB_OPTS[@]}" --threads="$THREADS" cleanup >/dev/null 2>&1 || true
    sysbench "$LUA_DIR/$sc.lua" "${SB[@]}" "${SB_OPTS[@]}" --threads="$THREADS" prepare >/dev/null
    # One unrecorded slice of each tool first: the first slice after prepare runs while
    # the server still works off the load (InnoDB's read 67k against 90k after it), and
    # ABBA puts that slice on one tool only.
    if [ "$WARM" = 1 ]; then
      sysbench_round "$sc" >/dev/null
      plumb_round "$sc" >/dev/null
    fi
    for r in $(seq 1 "$ROUNDS"); do
      if [ $((r % 2)) = 1 ]; then
        printf '%s\t%s\tplumb\t%s\t%s\n' "$s" "$sc" "$r" "$(plumb_round "$sc")" >>"$RESULTS"
        printf '%s\t%s\tsysbench\t%s\t%s\n' "$s" "$sc" "$r" "$(sysbench_round "$sc")" >>"$RESULTS"
      else
        printf '%s\t%s\tsysbench\t%s\t%s\n' "$s" "$sc" "$r" "$(sysbench_round "$sc")" >>"$RESULTS"
        printf '%s\t%s\tplumb\t%s\t%s\n' "$s" "$sc" "$r" "$(plumb_round "$sc")" >>"$RESULTS"
      fi
      tail -n 2 "$RESULTS" >&2
    done
    sysbench "$LUA_DIR/$sc.lua" "${SB[@]}" "${SB_OPTS[@]}" --threads="$THREADS" cleanup >/dev/null 2>&1 || true
  done
  stop_server
done

echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) vCPUs;" \
  "$OPTS, $THREADS threads, ${DURATION}s, $ROUNDS rounds alternated"
BENCH_DIR="$(cd "$(dirname "$0")" && pwd)" python3 - "$RESULTS" "$PLUMB" <<'PY'
import csv, os, statistics, sys
sys.path.insert(0, os.environ["BENCH_DIR"])
from plumb_ratio import judged
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault((r["server"], r["script"], r["tool"]), []).append((float(r["tps"]), float(r["client_cpu_us_txn"])))
print(f'{"server":9} {"script":24} {"plumb tps":>10} {"sysbench tps":>12} {"ratio (95%) p":>24} {"plumb cpu/txn":>13} {"sysbench cpu/txn":>16}')
for (s, sc, tool), v in by.items():
    if tool == "plumb":
        continue
    p = by[(s, sc, "plumb")]
    pq, pc = statistics.median(x[0] for x in p), statistics.median(x[1] for x in p)
    q, c = statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)
    print(f"{s:9} {sc:24} {pq:10.0f} {q:12.0f} {judged(sys.argv[2], [x[0] for x in v], [x[0] for x in p], 2):>24} {pc:13.1f} {c:16.1f}")
PY
echo "(medians; cpu/txn = client CPU µs per transaction; results in $RESULTS)"
