#!/usr/bin/env bash
# compare_sysbench.sh - tpbed-load vs sysbench 1.0 against the same MariaDB, interleaved
# passes (A B A B ...), server and client pinned to disjoint cores with taskset.
#
#   compare_sysbench.sh [OUT_DIR]
# Environment: PASSES [3]  DURATION [10]  THREADS ["8 64"]  WORKLOADS ["oltp_point_select oltp_read_only"]
#   SERVER_CPU [0]  CLIENT_CPU [1]  PORT [3601]  LOAD [target/release/tpbed-load]  RATE [""]
#   NICE [-10]: nice value of the server and of the clients (the same for all), so that other
#   work on a shared machine disturbs the comparison less; applied to each one's process and to
#   its session's autogroup (/proc/self/autogroup), which is what counts between sessions
#   LOAD_ARGS [""]: extra tpbed-load options (e.g. --client-threads=4)
#   LOAD2 [""]: a second tpbed-load binary (e.g. an older build) run as a third client per cell
#   LOAD2_ARGS [LOAD_ARGS]: its extra options (LOAD2=$LOAD LOAD2_ARGS=--io=uring: the same binary
#   with another option as the third client)
#   FIRST_PASS [1]: number of the first pass; above 1 the results already in OUT_DIR are kept and
#   the table covers passes 1 .. FIRST_PASS+PASSES-1 (a long series in batches, each with a
#   fresh server, so the shared benchmark lock is not held for the whole series)
# Starts its own MariaDB (scripts/mariadb.sh) on 127.0.0.1:PORT pinned to SERVER_CPU, prepares
# 4 x 100000 rows with tpbed-load, runs the matrix, stops the server, prints a Markdown table.
# Client CPU = user+sys of the whole client process (/usr/bin/time), per 1,000 queries; server
# CPU = the server's user+sys (/proc/PID/stat) over the same client run, per 1,000 queries.
# The server and every client run in a session of their own (setsid): with the kernel's
# autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled) a session is one scheduling
# group whose CPU share is split over the cores its threads run on, so a client started in the
# server's session gets a share proportional to its runnable threads against the server's
# (a one-thread event loop against 64 server threads got ~12% of its core, sysbench's 64
# threads ~70%); in sessions of their own every client gets its core on the same terms.
# With RATE set both run at --rate=RATE and the table also gives p50 (sysbench's from its
# --histogram, tpbed-load's from its percentile table), the p95 of every pass, tpbed-load's
# service time (from the event's actual start; sysbench's --rate latency starts when its event
# generator thread woke up and queued the event, so the generator's own lateness and any stall
# of the client machine are left out of it, which the intended-start latency counts) and the
# events-per-connection stddev from the threads-fairness line.
# WIRE=1: every client run is also recorded with `perf record -a -e sock:sock_send_length,
# sock:sock_recv_length` and scripts/wire_latency.py adds each client's event latency as the
# kernel saw it on the wire (first send of an event to the end of its last reply's receive), the
# same yardstick for both clients, plus the median client time per statement between a reply and
# the next send ("think"); tracing costs client and server CPU, so take CPU figures from runs
# without WIRE.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/tpbed-load-compare}
PASSES=${PASSES:-3}; FIRST_PASS=${FIRST_PASS:-1}; DURATION=${DURATION:-10}; THREADS=${THREADS:-"8 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
NICE=${NICE:--10}; export NICE
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}; PORT=${PORT:-3601}; RATE=${RATE:-}
LOAD=${LOAD:-$HERE/../../target/release/tpbed-load}; LOAD_ARGS=${LOAD_ARGS:-}; LOAD2=${LOAD2:-}
LOAD2_ARGS=${LOAD2_ARGS:-$LOAD_ARGS}
WIRE=${WIRE:-}
BASE=/tmp/tpbed-load-compare-mdb
mkdir -p "$OUT"
[ "$FIRST_PASS" = 1 ] && rm -f "$OUT"/*.out "$OUT"/*.time "$OUT"/*.load "$OUT"/*.server "$OUT"/*.wire
trap '"$HERE/mariadb.sh" stop "$BASE"' EXIT
in_session() { # in_session COMMAND...: run in a new session whose autogroup has nice NICE
  setsid -w sh -c 'echo "$NICE" > /proc/self/autogroup 2>/dev/null; exec "$@"' sh "$@"
}
in_session "$HERE/mariadb.sh" start "$BASE" "$PORT" one-thread-per-connection "$SERVER_CPU" > "$OUT/server.pid"
CONN="--mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest"
DATA="--tables=4 --table-size=100000"
"$LOAD" prepare $CONN $DATA --threads=4 > "$OUT/prepare.log"
sysbench oltp_read_only --db-driver=mysql $CONN $DATA prewarm > "$OUT/prewarm.log" 2>&1 || true
RUNOPT="--time=$DURATION --report-interval=0 --percentile=95 --db-ps-mode=auto --rand-type=uniform"
[ -n "$RATE" ] && RUNOPT="$RUNOPT --rate=$RATE"
SERVER_PID=$(cat "$OUT/server.pid")
server_ticks() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }
client() { # client FILE_PREFIX WORKLOAD COMMAND...: one pinned client run in a session of its own
  local f=$1 w=$2 t0 perf=; shift 2
  if [ -n "$WIRE" ]; then
    perf record -q -a -e sock:sock_send_length,sock:sock_recv_length -o "$f.perf" 2> /dev/null &
    perf=$!
    sleep 0.5
  fi
  t0=$(server_ticks)
  in_session /usr/bin/time -f "%U %S %e" -o "$f.time" nice -n "$NICE" taskset -c "$CLIENT_CPU" "$@" > "$f.out" 2>&1 \
    || echo "client failed: see $f.out" >&2
  cut -d' ' -f1 /proc/loadavg > "$f.load"
  echo "$(( $(server_ticks) - t0 )) $(getconf CLK_TCK)" > "$f.server"
  if [ -n "$perf" ]; then
    kill -INT "$perf"; wait "$perf" || true
    python3 "$HERE/wire_latency.py" "$f.perf" "$SERVER_PID" "$w" > "$f.wire" || true
    rm -f "$f.perf"
  fi
}
LAST_PASS=$((FIRST_PASS + PASSES - 1))
for p in $(seq "$FIRST_PASS" "$LAST_PASS"); do
  for w in $WORKLOADS; do
    for t in $THREADS; do
      f="$OUT/$w-$t-p$p"
      client "$f-sysbench" "$w" sysbench "$w" --db-driver=mysql $CONN $DATA --threads="$t" $RUNOPT --histogram=on run
      client "$f-tpbed" "$w" "$LOAD" run --workload="$w" $CONN $DATA --threads="$t" $RUNOPT --no-gauges $LOAD_ARGS
      [ -n "$LOAD2" ] && client "$f-tpbed2" "$w" "$LOAD2" run --workload="$w" $CONN $DATA --threads="$t" $RUNOPT --no-gauges $LOAD2_ARGS
      echo "pass $p $w $t: sysbench $(grep -m1 'queries:' "$f-sysbench.out" | awk '{print $2, $3}') tpbed-load $(grep -m1 'queries:' "$f-tpbed.out" | awk '{print $2, $3}') load $(cat "$f-tpbed.load")" >&2
    done
  done
done
python3 - "$OUT" "$LAST_PASS" "$THREADS" "$WORKLOADS" "$LOAD2" "$LOAD2_ARGS" <<'PY'
import sys, re, statistics as st
out, passes, threads, workloads, load2, load2_args = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5], sys.argv[6]
def p50_sysbench(t):
    # --histogram=on: "value |*** count" lines; the median is the first value whose
    # cumulative count reaches half the total
    rows = [(float(v), int(c)) for v, c in re.findall(r'^\s*([\d.]+)\s+\|\**\s+(\d+)\s*$', t, re.M)]
    total = sum(c for _, c in rows)
    acc = 0
    for v, c in rows:
        acc += c
        if acc * 2 >= total:
            return v
    return float('nan')
def parse(path):
    t = open(path).read()
    q = int(re.search(r'queries:\s+(\d+)', t).group(1))
    qps = float(re.search(r'queries:\s+\d+\s+\(([\d.]+) per sec', t).group(1))
    p95 = float(re.search(r'95th percentile:\s+([\d.]+)', t).group(1))
    m = re.search(r'^\s+event\s+([\d.]+)\s', t, re.M)
    p50 = float(m.group(1)) if m else p50_sysbench(t)
    m = re.search(r'^\s+event service\s+([\d.]+)\s+([\d.]+)\s', t, re.M)
    svc = (float(m.group(1)), float(m.group(2))) if m else (float('nan'), float('nan'))
    fair = float(re.search(r'events \(avg/stddev\):\s+[\d.]+/([\d.]+)', t).group(1))
    return q, qps, p50, p95, svc, fair
def wire(path):
    # scripts/wire_latency.py's line, or NaNs without WIRE
    try:
        v = open(path).read().split()
        return float(v[3]), float(v[5]), float(v[9])
    except (FileNotFoundError, IndexError, ValueError):
        return float('nan'), float('nan'), float('nan')
def cpu(path):
    u, s, e = open(path).read().split()[-3:]
    return float(u) + float(s)
tools = [('sysbench', 'sysbench'), ('tpbed', 'tpbed-load')] + ([('tpbed2', f'tpbed-load (LOAD2 {load2_args})'.replace(' )', ')'))] if load2 else [])
print('| workload | threads | client | QPS (median) | QPS vs sysbench | p50 ms | p95 ms | p50, p95 vs sysbench | service p50 / p95 ms | wire p50 / p95 ms | wire vs sysbench | think us | client CPU s / 1k queries | CPU vs sysbench | server CPU s / 1k queries | QPS per pass | p50 per pass | p95 per pass | events/conn stddev | load avg (median) |')
print('|---|---:|---|---:|---:|---:|---:|---|---|---|---|---:|---:|---:|---:|---|---|---|---:|---:|')
for w in workloads:
    for t in threads:
        rows = {k: [] for k, _ in tools}
        for p in range(1, passes + 1):
            for tool in rows:
                f = f'{out}/{w}-{t}-p{p}-{tool}'
                try:
                    q, qps, p50, p95, svc, fair = parse(f + '.out')
                except (AttributeError, FileNotFoundError, ValueError):
                    continue
                load = float(open(f + '.load').read())
                ticks, hz = open(f + '.server').read().split()
                rows[tool].append((qps, p50, p95, cpu(f + '.time') / q * 1000, load, int(ticks) / int(hz) / q * 1000, svc[0], svc[1], fair) + wire(f + '.wire'))
        if not all(rows.values()):
            print(f'| {w} | {t} | (a client failed in every pass) |')
            continue
        med = {k: [st.median(x[i] for x in v) for i in range(12)] for k, v in rows.items()}
        s = med['sysbench']
        for k, label in tools:
            m = med[k]
            per = ' / '.join(f"{x[0]:.0f}" for x in rows[k])
            per50 = ' / '.join(f"{x[1]:.3f}" for x in rows[k])
            per95 = ' / '.join(f"{x[2]:.2f}" for x in rows[k])
            svc = '-' if m[6] != m[6] else f"{m[6]:.3f} / {m[7]:.2f}"
            wl = '-' if m[9] != m[9] else f"{m[9]:.3f} / {m[10]:.2f}"
            wr = '-' if m[9] != m[9] else f"{m[9]/s[9]:.2f}, {m[10]/s[10]:.2f}"
            th = '-' if m[11] != m[11] else f"{m[11]:.1f}"
            print(f"| {w} | {t} | {label} | {m[0]:.0f} | {m[0]/s[0]:.3f} | {m[1]:.3f} | {m[2]:.2f} | {m[1]/s[1]:.2f}, {m[2]/s[2]:.2f} | {svc} | {wl} | {wr} | {th} | {m[3]:.4f} | {m[3]/s[3]:.2f} | {m[5]:.4f} | {per} | {per50} | {per95} | {m[8]:.2f} | {m[4]:.1f} |")
PY
