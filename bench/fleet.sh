#!/usr/bin/env bash
# What the team store and the fleet machinery cost, on one throwaway PostgreSQL:
#  1. a suite of tiny runs (null engine) run here with a SQLite store, run here with
#     the PostgreSQL store, and queued then run by one `plumb worker`, alternating, REPS
#     times: the per-run cost of PostgreSQL and of the queue (claim, heartbeat, finish);
#  2. three `plumb sql --client-group` clients started 0.5 s apart: how far apart their
#     steps start after the barrier (max - min of the stored step starts);
#  3. the size of a stored HDR histogram (V2 compressed, base64).
#
#   bench/fleet.sh                  REPS=3 RUNS=12 (runs per suite: RUNS/2 repeats × 2)
#
# Env (defaults): PLUMB=/var/tmp/plumb-target/release/plumb  REPS=3  RUNS=12
set -euo pipefail
PLUMB=${PLUMB:-/var/tmp/plumb-target/release/plumb}
REPS=${REPS:-3}
RUNS=${RUNS:-12}
echo "host CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
work=$(mktemp -d /var/tmp/plumb-fleet.XXXXXX)
chmod 755 "$work"
mkdir "$work/pg" && chown postgres "$work/pg"
port=$((20000 + RANDOM % 20000))
runuser -u postgres -- "$PGBIN/initdb" -D "$work/pg/data" -U postgres -A trust -E UTF8 \
  --locale=C.UTF-8 >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$work/pg/data" -l "$work/pg/log" -w \
  -o "-p $port -k $work/pg -c listen_addresses=127.0.0.1" start >/dev/null
stop() {
  runuser -u postgres -- "$PGBIN/pg_ctl" -D "$work/pg/data" -m fast -w stop >/dev/null || true
  rm -rf "$work"
}
trap stop EXIT
psql() { command psql -X -q -h 127.0.0.1 -p "$port" -U postgres "$@"; }
psql -c 'CREATE DATABASE plumb' -c 'CREATE DATABASE sb'
PG="postgres://postgres@127.0.0.1:$port/plumb"
TARGET="postgres://postgres@127.0.0.1:$port/sb"
cat > "$work/tiny.toml" <<TOML
name = "tiny"
repeat = $((RUNS / 2))
[params]
num = 1000
duration = 0.2
[[target]]
name = "nul"
engine = "null"
[[workload]]
name = "r"
steps = ["fillseq", "readrandom"]
[sweep]
threads = [1, 2]
TOML

secs() { python3 -c 'import sys,time; print(f"{time.time():.3f}")'; }
declare -a T_SQ T_PG T_Q
for rep in $(seq 1 "$REPS"); do
  a=$(secs); "$PLUMB" run "$work/tiny.toml" --store "$work/s.sqlite" >/dev/null 2>&1; b=$(secs)
  "$PLUMB" run "$work/tiny.toml" --store "$PG" >/dev/null 2>&1; c=$(secs)
  "$PLUMB" run "$work/tiny.toml" --store "$PG" --queue "q$rep" >/dev/null 2>&1
  "$PLUMB" worker --queue "q$rep" --store "$PG" >/dev/null 2>&1; d=$(secs)
  T_SQ+=("$(python3 -c "print($b-$a)")"); T_PG+=("$(python3 -c "print($c-$b)")"); T_Q+=("$(python3 -c "print($d-$c)")")
  echo "rep $rep: $RUNS runs: sqlite store $(printf %.2f "${T_SQ[-1]}") s, postgres store $(printf %.2f "${T_PG[-1]}") s, queue + 1 worker $(printf %.2f "${T_Q[-1]}") s"
done
python3 - "$RUNS" "${T_SQ[*]}" "${T_PG[*]}" "${T_Q[*]}" <<'PY'
import statistics as st, sys
n = int(sys.argv[1]); sq, pg, q = ([float(x) for x in a.split()] for a in sys.argv[2:5])
m = st.median
print(f"median per run: sqlite {m(sq)/n*1000:.0f} ms, postgres {m(pg)/n*1000:.0f} ms "
      f"(x{m(pg)/m(sq):.2f}), queue+worker {m(q)/n*1000:.0f} ms (x{m(q)/m(pg):.2f} of postgres direct)")
PY

"$PLUMB" sql --url "$TARGET" --steps load --table-size 20000 --store "$PG" >/dev/null 2>&1
for rep in $(seq 1 "$REPS"); do
  for i in 1 2 3; do
    "$PLUMB" sql --url "$TARGET" --table-size 20000 --steps point-query,read-only-10,update-index \
      --duration 2 --warmup 0.5 --client-group "b$rep" --clients 3 --store "$PG" >/dev/null 2>&1 &
    sleep 0.5
  done
  wait
done
echo "barrier: spread of one step's start across its 3 clients (ms), per group and step:"
psql -d plumb -At -F ' ' -c "
  SELECT r.clients, s.seq, s.name,
         round(extract(epoch FROM max(s.started_at::timestamptz) - min(s.started_at::timestamptz)) * 1000)
  FROM runs r JOIN steps s ON s.run_id = r.id WHERE r.clients IS NOT NULL
  GROUP BY r.clients, s.seq, s.name ORDER BY r.clients, s.seq"
psql -d plumb -At -c "
  SELECT 'median spread ' || percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) || ' ms, max ' || max(ms) || ' ms'
  FROM (SELECT extract(epoch FROM max(s.started_at::timestamptz) - min(s.started_at::timestamptz)) * 1000 AS ms
        FROM runs r JOIN steps s ON s.run_id = r.id WHERE r.clients IS NOT NULL
        GROUP BY r.clients, s.seq) x"
psql -d plumb -At -c "
  SELECT 'histograms: ' || count(*) || ' stored, ' || round(avg(length(hdr))) || ' bytes each on average (whole step '
         || round(avg(length(hdr)) FILTER (WHERE idx = -1)) || ', one second '
         || round(avg(length(hdr)) FILTER (WHERE idx >= 0)) || ')' FROM histograms"
"$PLUMB" clients b1 --store "$PG"
