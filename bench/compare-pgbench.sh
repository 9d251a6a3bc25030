#!/usr/bin/env bash
# plumb sql vs pgbench itself, running pgbench's built-in scripts (tpcb-like,
# simple-update, select-only) on ONE PostgreSQL server this script starts, on the same
# tables (made once by `pgbench -i -s SCALE`), same clients, same duration, the tools
# alternated ABBA. Reports per script the TPS ratio plumb/pgbench and the client CPU per
# transaction ratio plumb/pgbench, judged by bench/plumb_ratio.py (`plumb ratio`).
#
#   bench/compare-pgbench.sh                          # scale 10, 2 clients, 10 s, 3 rounds
#   SCALE=1 SECS=3 REPEATS=1 TOOLS=pgbench bench/compare-pgbench.sh   # pgbench half only
#   SCRIPTS="crates/sql/src/pgscript/builtin/tpcb-like.sql bench/pgbench/custom.sql" \
#     MODE=simple bench/compare-pgbench.sh   # script files: plumb --script F vs pgbench -f F
#
# A SCRIPTS entry ending in .sql is a script file: pgbench runs it with -f FILE -M MODE,
# plumb with --script FILE --query-mode MODE (its `script` step). Other entries are
# built-in names: pgbench -b NAME -M prepared against plumb's built-in step of that name.
#
# Client CPU per transaction is the user + system time of the tool's whole process (the
# rusage of the waited child, as `times` reports it) over the transactions it reports,
# measured alike for both; plumb's own in-window figure (cpu_us_op) is shown beside it.
# pgbench runs -M prepared -n (no vacuum between runs, as plumb does none): both tools
# prepare every statement once per connection, BEGIN and END included. The tpcb-like and
# simple-update runs grow pgbench_history and the balances; the drift falls on both
# tools alike through the ABBA order.
#
# Env (defaults): PLUMB=target/release/plumb  SCALE=10  CLIENTS=2  SECS=10  REPEATS=3
#   SCRIPTS="tpcb-like simple-update select-only"  CACHE_MB=2048 (shared_buffers)
#   MODE=simple (-M for script files; pgbench's default)
#   TOOLS="pgbench plumb" (drop plumb to check the server, init and pgbench parsing)
#   PGBIN (default: the newest /usr/lib/postgresql/*/bin)
# The server's settings are plumb's own for managed PostgreSQL
# (crates/servers/config/postgres.conf), durable: every commit flushes the WAL.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PLUMB=${PLUMB:-$REPO/target/release/plumb}
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-2}
SECS=${SECS:-10}
REPEATS=${REPEATS:-3}
SCRIPTS=${SCRIPTS:-"tpcb-like simple-update select-only"}
CACHE_MB=${CACHE_MB:-2048}
TOOLS=${TOOLS:-"pgbench plumb"}
MODE=${MODE:-simple}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PGBIN/pgbench" ] && [ -x "$PGBIN/postgres" ] || {
  echo "no PostgreSQL with pgbench under ${PGBIN:-/usr/lib/postgresql/*/bin}: apt-get install postgresql (scripts/setup.sh)" >&2
  exit 2
}
case " $TOOLS " in
  *" plumb "*) [ -x "$PLUMB" ] || { echo "$PLUMB: not built (cargo build --release), or set PLUMB" >&2; exit 2; } ;;
esac

WORK=$(mktemp -d /var/tmp/plumb-pgbench.XXXXXX)
chmod 755 "$WORK"
STORE=$WORK/store.sqlite
RESULTS=$WORK/results.tsv
DATA=$WORK/data
LOG=$WORK/server.log
AS=()
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || { echo "no postgres user: apt-get install postgresql" >&2; exit 2; }
  chown postgres: "$WORK"
  AS=(runuser -u postgres --)
fi
STARTED=""
cleanup() {
  if [ -n "$STARTED" ]; then "${AS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null 2>&1 || true; fi
  rm -rf "$DATA"
}
trap cleanup EXIT

# A free TCP port number names the socket (.s.PGSQL.PORT); the server listens on the
# unix socket in $WORK only.
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DB=bench

echo "== PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') in $WORK, port $PORT" >&2
"${AS[@]}" "$PGBIN/initdb" -D "$DATA" -U postgres -A trust -E UTF8 --locale=C.UTF-8 -N >"$WORK/initdb.log" 2>&1 \
  || { cat "$WORK/initdb.log" >&2; exit 1; }
sed "s/{cache_mb}/$CACHE_MB/g" "$REPO/crates/servers/config/postgres.conf" >"$WORK/plumb.conf"
printf "\n# compare-pgbench.sh\ninclude '%s'\n" "$WORK/plumb.conf" >>"$DATA/postgresql.conf"
"${AS[@]}" "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 300 \
  -o "-p $PORT -k $WORK -c listen_addresses=''" start >/dev/null \
  || { tail -20 "$LOG" >&2; exit 1; }
STARTED=1
PG=(-h "$WORK" -p "$PORT" -U postgres)
"$PGBIN/createdb" "${PG[@]}" "$DB"
echo "== pgbench -i -s $SCALE" >&2
"$PGBIN/pgbench" -i -q -s "$SCALE" "${PG[@]}" "$DB" >"$WORK/init.log" 2>&1 || { cat "$WORK/init.log" >&2; exit 1; }
URL="postgres://postgres@localhost:$PORT/$DB?host=$WORK"

cpu_of() { # cpu_of OUT CMD...: runs CMD (stdout to OUT), its user+system seconds to OUT.cpu
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

# Each round prints: tps, transactions, client CPU µs per transaction (whole process),
# the tool's own in-window CPU µs per transaction (plumb only, else -), failed txns.
pgbench_round() { # $1 script
  local sel=(-M prepared -b "$1")
  case $1 in *.sql) sel=(-M "$MODE" -f "$1") ;; esac
  cpu_of "$WORK/g.txt" "$PGBIN/pgbench" "${sel[@]}" -n -c "$CLIENTS" -j "$CLIENTS" -T "$SECS" \
    "${PG[@]}" "$DB"
  python3 - "$WORK/g.txt" "$(cat "$WORK/g.txt.cpu")" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
tps = float(re.search(r"^tps = ([0-9.]+)", text, re.M).group(1))
n = int(re.search(r"number of transactions actually processed: (\d+)", text).group(1))
m = re.search(r"number of failed transactions: (\d+)", text)
failed = int(m.group(1)) if m else 0
cpu = float(sys.argv[2])
if n == 0:
    sys.exit("pgbench processed no transactions:\n" + text)
print(f"{tps:.1f}\t{n}\t{cpu * 1e6 / n:.2f}\t-\t{failed}")
PY
}

plumb_round() { # $1 script
  local sel=(--steps "$1")
  case $1 in *.sql) sel=(--script "$1" --query-mode "$MODE") ;; esac
  cpu_of "$WORK/p.json" "$PLUMB" sql --url "$URL" "${sel[@]}" --threads "$CLIENTS" \
    --duration "$SECS" --warmup 0 --store "$STORE" --tag "plumb-$1" --json
  python3 - "$WORK/p.json" "$(cat "$WORK/p.json.cpu")" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["steps"][0]
s = step["summary"]
if step.get("status") not in (None, "ok"):
    sys.exit(f"plumb step {step.get('name')}: {step.get('status')}: {step.get('error')}")
tps = s["server"]["tps"]
n = s["ops"]
if not n:
    sys.exit("plumb ran no transactions")
print(f"{tps:.1f}\t{n}\t{float(sys.argv[2]) * 1e6 / n:.2f}\t{s['cpu_us_op']:.2f}\t0")
PY
}

round_of() { # $1 tool $2 script $3 round
  printf '%s\t%s\t%s\t%s\n' "$(basename "$2")" "$1" "$3" "$("${1}_round" "$2")" >>"$RESULTS"
  tail -1 "$RESULTS" >&2
}

printf 'script\ttool\tround\ttps\ttxns\tclient_cpu_us_txn\town_cpu_us_txn\tfailed\n' >"$RESULTS"
read -r -a tools <<<"$TOOLS"
for s in $SCRIPTS; do
  echo "== $s: $REPEATS rounds of ${SECS}s, $CLIENTS clients, scale $SCALE" >&2
  for r in $(seq 1 "$REPEATS"); do
    # ABBA: the first tool first on odd rounds, last on even ones, so a steady drift
    # of the machine (or of the tables) falls on both alike.
    order=("${tools[@]}")
    if [ $((r % 2)) = 0 ]; then
      order=()
      for ((i = ${#tools[@]} - 1; i >= 0; i--)); do order+=("${tools[i]}"); done
    fi
    for t in "${order[@]}"; do round_of "$t" "$s" "$r"; done
  done
done

echo
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) vCPUs;" \
  "PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'), scale $SCALE, $CLIENTS clients," \
  "${SECS}s, $REPEATS rounds alternated, script files -M $MODE"
BENCH_DIR="$HERE" python3 - "$RESULTS" "$PLUMB" <<'PY'
import csv, os, statistics, sys
sys.path.insert(0, os.environ["BENCH_DIR"])
from plumb_ratio import judged
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
by = {}
for r in rows:
    by.setdefault((r["script"], r["tool"]), []).append(r)
def med(v, digits):
    return f"{statistics.median(v):.{digits}f}" if v else "-"
print(f'{"script":14} {"plumb tps":>10} {"pgbench tps":>11} {"tps ratio (95%) p":>26} '
      f'{"plumb cpu/t":>11} {"pgb cpu/t":>9} {"cpu ratio (95%) p":>26} {"plumb own":>9} {"pgb failed":>10}')
for script in dict.fromkeys(r["script"] for r in rows):
    p = by.get((script, "plumb"), [])
    g = by.get((script, "pgbench"), [])
    ptps, gtps = [float(x["tps"]) for x in p], [float(x["tps"]) for x in g]
    pcpu, gcpu = [float(x["client_cpu_us_txn"]) for x in p], [float(x["client_cpu_us_txn"]) for x in g]
    own = [float(x["own_cpu_us_txn"]) for x in p if x["own_cpu_us_txn"] != "-"]
    failed = sum(int(x["failed"]) for x in g)
    print(f"{script:14} {med(ptps, 0):>10} {med(gtps, 0):>11} {judged(sys.argv[2], gtps, ptps, 3):>26} "
          f"{med(pcpu, 2):>11} {med(gcpu, 2):>9} {judged(sys.argv[2], gcpu, pcpu, 3):>26} {med(own, 2):>9} {failed:10d}")
PY
echo "(medians; ratios plumb/pgbench; cpu/t = client CPU µs per transaction of the whole process;"
echo " plumb own = plumb's in-window cpu_us_op; results in $RESULTS)"
