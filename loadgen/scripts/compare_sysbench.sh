#!/usr/bin/env bash
# compare_sysbench.sh - tpbed-load vs sysbench 1.0 against the same MariaDB, interleaved
# passes (A B A B ...), server and client pinned to disjoint cores with taskset.
#
#   compare_sysbench.sh [OUT_DIR]
# Environment: PASSES [3]  DURATION [10]  THREADS ["8 64"]  WORKLOADS ["oltp_point_select oltp_read_only"]
#   SERVER_CPU [0]  CLIENT_CPU [1]  PORT [3317]  LOAD [target/release/tpbed-load]  RATE [""]
#   NICE [-10]: nice value of the server and of both clients (the same for all three), so that
#   other work on a shared machine disturbs the comparison less
# Starts its own MariaDB (scripts/mariadb.sh) on 127.0.0.1:PORT pinned to SERVER_CPU, prepares
# 4 x 100000 rows with tpbed-load, runs the matrix, stops the server, prints a Markdown table.
# Client CPU = user+sys of the whole client process (/usr/bin/time), per 1,000 queries.
# Three clients per cell, in this order: sysbench, tpbed-load --client-threads=1 (one event
# loop), tpbed-load --client-threads=min(threads,16) ("mt", the default).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/tpbed-load-compare}
PASSES=${PASSES:-3}; DURATION=${DURATION:-10}; THREADS=${THREADS:-"8 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
NICE=${NICE:--10}; export NICE
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}; PORT=${PORT:-3317}; RATE=${RATE:-}
LOAD=${LOAD:-$HERE/../../target/release/tpbed-load}
BASE=/tmp/tpbed-load-compare-mdb
mkdir -p "$OUT"; rm -f "$OUT"/*.out "$OUT"/*.time
trap '"$HERE/mariadb.sh" stop "$BASE"' EXIT
"$HERE/mariadb.sh" start "$BASE" "$PORT" one-thread-per-connection "$SERVER_CPU" > "$OUT/server.pid"
CONN="--mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest"
DATA="--tables=4 --table-size=100000"
"$LOAD" prepare $CONN $DATA --threads=4 > "$OUT/prepare.log"
sysbench oltp_read_only --db-driver=mysql $CONN $DATA prewarm > "$OUT/prewarm.log" 2>&1 || true
RUNOPT="--time=$DURATION --report-interval=0 --percentile=95 --db-ps-mode=auto --rand-type=uniform"
[ -n "$RATE" ] && RUNOPT="$RUNOPT --rate=$RATE"
for p in $(seq 1 "$PASSES"); do
  for w in $WORKLOADS; do
    for t in $THREADS; do
      f="$OUT/$w-$t-p$p"
      /usr/bin/time -f "%U %S %e" -o "$f-sysbench.time" nice -n "$NICE" taskset -c "$CLIENT_CPU" \
        sysbench "$w" --db-driver=mysql $CONN $DATA --threads="$t" $RUNOPT --histogram=off run > "$f-sysbench.out" 2>&1 || echo "sysbench failed: see $f-sysbench.out" >&2
      /usr/bin/time -f "%U %S %e" -o "$f-tpbed.time" nice -n "$NICE" taskset -c "$CLIENT_CPU" \
        "$LOAD" run --workload="$w" $CONN $DATA --threads="$t" --client-threads=1 $RUNOPT --no-gauges > "$f-tpbed.out" 2>&1 || echo "tpbed-load failed: see $f-tpbed.out" >&2
      ct=$(( t < 16 ? t : 16 ))
      /usr/bin/time -f "%U %S %e" -o "$f-tpbedmt.time" nice -n "$NICE" taskset -c "$CLIENT_CPU" \
        "$LOAD" run --workload="$w" $CONN $DATA --threads="$t" --client-threads="$ct" $RUNOPT --no-gauges > "$f-tpbedmt.out" 2>&1 || echo "tpbed-load failed: see $f-tpbedmt.out" >&2
      echo "pass $p $w $t: sysbench $(grep -m1 'queries:' "$f-sysbench.out" | awk '{print $2, $3}') tpbed-load $(grep -m1 'queries:' "$f-tpbed.out" | awk '{print $2, $3}') tpbed-load-mt $(grep -m1 'queries:' "$f-tpbedmt.out" | awk '{print $2, $3}') load $(cut -d' ' -f1 /proc/loadavg)" >&2
    done
  done
done
python3 - "$OUT" "$PASSES" "$THREADS" "$WORKLOADS" <<'PY'
import sys, re, statistics as st
out, passes, threads, workloads = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
def parse(path):
    t = open(path).read()
    q = int(re.search(r'queries:\s+(\d+)', t).group(1))
    qps = float(re.search(r'queries:\s+\d+\s+\(([\d.]+) per sec', t).group(1))
    p95 = float(re.search(r'95th percentile:\s+([\d.]+)', t).group(1))
    avg = float(re.search(r'avg:\s+([\d.]+)', t).group(1))
    return q, qps, p95, avg
def cpu(path):
    u, s, e = open(path).read().split()[-3:]
    return float(u) + float(s)
tools = [('sysbench', 'sysbench'), ('tpbed', 'tpbed-load --client-threads=1'), ('tpbedmt', 'tpbed-load (default: --client-threads=min(T,16))')]
print('| workload | threads | client | QPS (median) | QPS vs sysbench | p95 ms (median) | client CPU s / 1k queries (median) | CPU vs sysbench | QPS per pass |')
print('|---|---:|---|---:|---:|---:|---:|---:|---|')
for w in workloads:
    for t in threads:
        rows = {k: [] for k, _ in tools}
        for p in range(1, passes + 1):
            for tool in rows:
                f = f'{out}/{w}-{t}-p{p}-{tool}'
                q, qps, p95, avg = parse(f + '.out')
                rows[tool].append((qps, p95, cpu(f + '.time') / q * 1000))
        med = {k: [st.median(x[i] for x in v) for i in range(3)] for k, v in rows.items()}
        s = med['sysbench']
        for k, label in tools:
            m = med[k]
            per = ' / '.join(f"{x[0]:.0f}" for x in rows[k])
            print(f"| {w} | {t} | {label} | {m[0]:.0f} | {m[0]/s[0]:.3f} | {m[1]:.2f} | {m[2]:.4f} | {m[2]/s[2]:.2f} | {per} |")
PY
