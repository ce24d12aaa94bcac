#!/usr/bin/env bash
# pool_vs_per_connection.sh - real sysbench against several tpbed-servers, one per connection
# handling configuration, all running side by side, in interleaved passes (for every pass,
# workload and thread count, each configuration in turn: A B C A B C ...). The study's server
# settings: --max-connections=4000 --max-prepared-stmt-count=1048576.
#
# Environment (defaults in brackets):
#   PASSES [5]  THREADS ["64 256 1024"]  WORKLOADS ["oltp_point_select oltp_read_only"]
#   DURATION [10]  TABLES [4]  TABLE_SIZE [100000]
#   CONFIGS [per-conn, pool-512-epoll, pool-512-uring, pool-0-epoll, pool-default-epoll]
#     space-separated NAME=OPTIONS entries, run at every thread count; OPTIONS use commas
#     for spaces. The first entry is the baseline of the ratio columns.
#   EXTRA_CONFIGS [""]  more NAME=OPTIONS entries, run only at EXTRA_THREADS (used for the
#     non-MySQL tpbed_thread_pool_pin/steal runs and their baseline)
#   EXTRA_THREADS [1024]
#   CLIENT [sysbench]  sysbench, or a tpbed-load binary (same options and report; its
#     event-driven client keeps the client's own threads from competing with the server's)
#   TPBED_BIN [target/release/tpbed-server]  OUT [/tmp/tpbed-pool-vs-conn]  BASE_PORT [3500]
#     a configuration whose OPTIONS start with @PATH runs the server binary PATH instead
#     (e.g. "main-pool=@/tmp/main/tpbed-server,--thread-handling=pool-of-threads": builds
#     side by side in one interleaved run)
#   SESSIONS [0]  1: every server and every client run starts in a session of its own
#     (setsid), so each is its own autogroup (sched_autogroup_enabled=1) and CPU is shared
#     between server and client per session instead of per runnable thread. 0: everything in
#     the script's session (as every run in BENCHMARKS.md).
#   RUN_LOCK [""]  a file to flock around each client run (e.g. /work/bench.lock), so a long
#     matrix shares the machine's benchmark lock run by run instead of holding it throughout
#   SERVER_CPUS [""]  CLIENT_CPUS [""]  CPU lists for taskset -c: the servers and the client
#     runs are pinned to them (e.g. SERVER_CPUS=0 CLIENT_CPUS=1); empty: not pinned
#   SYSBENCH_JIT [on]  off: sysbench runs each workload through a wrapper script that calls
#     jit.off() and then the stock script from SYSBENCH_LUA_DIR [/usr/share/sysbench], so
#     LuaJIT interprets (no trace recording, no trace aborts); sysbench only
#
# Per run it records QPS, avg/p95/p99/max latency (p99 from sysbench's --percentile=99, p95
# from its latency histogram, or from tpbed-load's percentile line), the maximum of Threads_running and of the server's OS threads
# sampled once a second, server CPU per query (utime+stime from /proc/PID/stat), client CPU
# per query (the client run's user+system time, bash's `time`) and the 1-minute load average
# before the run. With client and server on the same cores, QPS is bounded by the cores over
# the sum of the two per-query costs, so the client's column says which side a QPS gap is on.
# results.tsv keeps every run; summary.md the medians.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PASSES=${PASSES:-5}
THREADS=${THREADS:-"64 256 1024"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
DURATION=${DURATION:-10}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
POOL=--thread-handling=pool-of-threads
CONFIGS=${CONFIGS:-"per-conn=--thread-handling=one-thread-per-connection
  pool-512-epoll=$POOL,--thread-pool-max-transactions-limit=512
  pool-512-uring=$POOL,--thread-pool-max-transactions-limit=512,--tpbed-thread-pool-poller=io-uring
  pool-0-epoll=$POOL,--thread-pool-max-transactions-limit=0
  pool-default-epoll=$POOL"}
EXTRA_CONFIGS=${EXTRA_CONFIGS:-}
EXTRA_THREADS=${EXTRA_THREADS:-1024}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
CLIENT=${CLIENT:-sysbench}
OUT=${OUT:-/tmp/tpbed-pool-vs-conn}
BASE_PORT=${BASE_PORT:-3500}
SESSIONS=${SESSIONS:-0}
RUN_LOCK=${RUN_LOCK:-}
SERVER_CPUS=${SERVER_CPUS:-}
CLIENT_CPUS=${CLIENT_CPUS:-}
SYSBENCH_JIT=${SYSBENCH_JIT:-on}
SYSBENCH_LUA_DIR=${SYSBENCH_LUA_DIR:-/usr/share/sysbench}
PIN_SERVER=(); [ -z "$SERVER_CPUS" ] || PIN_SERVER=(taskset -c "$SERVER_CPUS")
PIN_CLIENT=(); [ -z "$CLIENT_CPUS" ] || PIN_CLIENT=(taskset -c "$CLIENT_CPUS")
# in_session COMMAND...: for a background subshell: becomes COMMAND (so $! is its pid), in a
# session of its own when SESSIONS=1.
in_session() { if [ "$SESSIONS" = 1 ]; then exec setsid "$@"; else exec "$@"; fi; }
in_session_wait() { if [ "$SESSIONS" = 1 ]; then setsid -w "$@"; else "$@"; fi; }
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT"
HZ=$(getconf CLK_TCK)
declare -A PORT PID
i=0
for c in $CONFIGS $EXTRA_CONFIGS; do
  name=${c%%=*}; opts=${c#*=}; opts=${opts//,/ }
  bin=$TPBED_BIN
  if [ "${opts#@}" != "$opts" ]; then bin=${opts%% *}; bin=${bin#@}; opts=${opts#* }; [ "${opts#@}" = "$opts" ] || opts=; fi
  port=$((BASE_PORT + i)); i=$((i + 1))
  # shellcheck disable=SC2086
  in_session "${PIN_SERVER[@]}" "$bin" --port=$port --bind-address=127.0.0.1 --max-connections=4000 --max-prepared-stmt-count=1048576 $opts 2> "$OUT/$name.log" &
  PID[$name]=$!; PORT[$name]=$port
  for _ in $(seq 1 100); do grep -q "ready for connections" "$OUT/$name.log" && break; sleep 0.1; done
  mariadb -h127.0.0.1 -P$port -uroot -e "CREATE DATABASE sbtest"
  sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root --mysql-db=sbtest \
    --tables=$TABLES --table-size=$TABLE_SIZE --threads=4 prepare > "$OUT/prepare-$name.log" 2>&1
  log "$name: pid ${PID[$name]} port $port ($bin $opts)"
done
trap 'for p in "${PID[@]}"; do kill "$p" 2>/dev/null; done' EXIT
R=$OUT/results.tsv
TIMEFORMAT='%U %S'
echo -e "pass\tworkload\tthreads\tconfig\tqps\tavg_ms\tp95_ms\tp99_ms\tmax_ms\tthreads_running_max\tos_threads_max\tcpu_us_per_query\tload1\terrors\tclient_cpu_us_per_query" > "$R"
log "start: $(uptime)"
for pass in $(seq 1 "$PASSES"); do
  for w in $WORKLOADS; do
    for t in $THREADS; do
      cfgs=$CONFIGS
      for x in $EXTRA_THREADS; do [ "$x" = "$t" ] && cfgs="$CONFIGS $EXTRA_CONFIGS"; done
      for c in $cfgs; do
        name=${c%%=*}; port=${PORT[$name]}; pid=${PID[$name]}
        if [ -n "$RUN_LOCK" ]; then exec 9>>"$RUN_LOCK"; flock 9; fi
        load1=$(cut -d' ' -f1 /proc/loadavg)
        c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        f="$OUT/run-$pass-$w-$t-$name.out"
        ( maxr=0; maxt=0; end=$((SECONDS + DURATION + 10)); while [ $SECONDS -lt $end ]; do
            r=$(mariadb -h127.0.0.1 -P$port -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Threads_running'" 2>/dev/null | awk '{print $2}')
            [ -n "$r" ] && [ "$r" -gt "$maxr" ] && maxr=$r
            n=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
            [ -n "$n" ] && [ "$n" -gt "$maxt" ] && maxt=$n
            echo "$maxr $maxt" > "$f.running"; sleep 1; done ) &
        sampler=$!
        common=(--mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root --mysql-db=sbtest
          --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$t" --time="$DURATION" --report-interval=0
          --percentile=99 --db-ps-mode=auto --rand-type=uniform)
        if [ "$(basename "$CLIENT")" = sysbench ]; then
          script=$w
          if [ "$SYSBENCH_JIT" = off ]; then
            script=$OUT/$w-jit-off.lua
            printf 'jit.off()\ndofile("%s/%s.lua")\n' "$SYSBENCH_LUA_DIR" "$w" > "$script"
          fi
          { time in_session_wait "${PIN_CLIENT[@]}" "$CLIENT" "$script" --db-driver=mysql --histogram=on "${common[@]}" run > "$f" 2>&1; } 2> "$f.time"
        else
          { time in_session_wait "${PIN_CLIENT[@]}" "$CLIENT" run "$w" "${common[@]}" > "$f" 2>&1; } 2> "$f.time"
        fi
        kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
        c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        if [ -n "$RUN_LOCK" ]; then flock -u 9; exec 9>&-; fi
        q=$(awk '/queries:/ {print $2; exit}' "$f")
        qps=$(awk -F'[(]' '/queries:/ {split($2,a," "); print a[1]; exit}' "$f")
        avg=$(awk '/avg:/ {print $2; exit}' "$f"); p99=$(awk '/99th percentile:/ {print $3; exit}' "$f")
        max=$(awk '/max:/ {print $2; exit}' "$f")
        errs=$(awk '/ignored errors:/ {print $3; exit}' "$f")
        p95=$(awk '/distribution/ {h = 1; next} h && /\|/ {v[n] = $1; c[n] = $NF; tot += $NF; n++}
                   h && !/\|/ && n > 0 {h = 0}
                   $1 == "event" && NF == 6 {ev = $3}
                   END { s = 0; for (i = 0; i < n; i++) { s += c[i]; if (s >= 0.95 * tot) { print v[i]; exit } }
                         if (ev != "") print ev; else print "nan" }' "$f")
        read -r run ost < "$f.running" 2>/dev/null || { run=0; ost=0; }
        cpu=$(awk -v a="$c0" -v b="$c1" -v q="${q:-0}" -v hz="$HZ" 'BEGIN { if (q > 0) printf "%.2f", (b - a) / hz * 1e6 / q; else print "nan" }')
        ccpu=$(awk -v q="${q:-0}" 'NF == 2 { if (q > 0) printf "%.2f", ($1 + $2) * 1e6 / q; else print "nan"; exit }' "$f.time")
        [ -n "$qps" ] || { qps=nan; avg=nan; p95=nan; p99=nan; max=nan; log "FAILED: $f"; }
        echo -e "$pass\t$w\t$t\t$name\t$qps\t$avg\t$p95\t$p99\t$max\t$run\t$ost\t$cpu\t$load1\t${errs:-0}\t${ccpu:-nan}" >> "$R"
        log "pass $pass $w t=$t $name: qps=$qps avg=$avg p95=$p95 p99=$p99 max=$max Threads_running<=$run threads<=$ost cpu/q=${cpu}us client cpu/q=${ccpu}us load1=$load1"
      done
    done
  done
done
log "end: $(uptime)"
python3 - "$R" <<'PY' | tee "$OUT/summary.md"
import csv, math, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1]), delimiter="\t")]
cfgs = list(dict.fromkeys(r["config"] for r in rows))
keys = sorted({(r["workload"], int(r["threads"])) for r in rows})
def vals(w, t, c, k):
    return [float(r[k]) for r in rows if r["workload"] == w and int(r["threads"]) == t
            and r["config"] == c and not math.isnan(float(r[k]))]
def med(w, t, c, k):
    v = vals(w, t, c, k)
    return statistics.median(v) if v else float("nan")
print("| workload | threads | config | QPS | avg ms | p95 ms | p99 ms | max ms | Threads_running max | OS threads max | server CPU µs/query | client CPU µs/query | QPS / per-conn | max / per-conn | load1 | passes |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for w, t in keys:
    for c in cfgs:
        n = len(vals(w, t, c, "qps"))
        if n == 0 and not any(r["config"] == c and r["workload"] == w and int(r["threads"]) == t for r in rows):
            continue
        base = cfgs[0]
        print(f"| {w} | {t} | {c} | {med(w,t,c,'qps'):,.0f} | {med(w,t,c,'avg_ms'):.2f} | {med(w,t,c,'p95_ms'):.2f} | "
              f"{med(w,t,c,'p99_ms'):.2f} | {med(w,t,c,'max_ms'):.1f} | {med(w,t,c,'threads_running_max'):.0f} | "
              f"{med(w,t,c,'os_threads_max'):.0f} | {med(w,t,c,'cpu_us_per_query'):.1f} | {med(w,t,c,'client_cpu_us_per_query'):.1f} | "
              f"{med(w,t,c,'qps')/med(w,t,base,'qps'):.2f} | {med(w,t,c,'max_ms')/med(w,t,base,'max_ms'):.2f} | "
              f"{med(w,t,c,'load1'):.1f} | {n} |")
PY
