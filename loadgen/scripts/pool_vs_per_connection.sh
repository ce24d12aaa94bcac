#!/usr/bin/env bash
# pool_vs_per_connection.sh - real sysbench against two tpbed-servers, one per connection
# handling model, side by side in interleaved passes (A B A B ...), the study's setting:
# --max-connections=4000 --max-prepared-stmt-count=1048576.
#
# Environment (defaults in brackets):
#   PASSES [3]  THREADS ["1024"]  WORKLOADS ["oltp_read_only"]  DURATION [15]
#   TABLES [4]  TABLE_SIZE [100000]
#   CONFIGS ["per-conn=--thread-handling=one-thread-per-connection pool-512=--thread-handling=pool-of-threads --thread-pool-max-transactions-limit=512"]
#     space-separated NAME=OPTIONS entries; OPTIONS use commas for spaces
#   TPBED_BIN [target/release/tpbed-server]  OUT [/tmp/tpbed-pool-vs-conn]
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PASSES=${PASSES:-3}
THREADS=${THREADS:-1024}
WORKLOADS=${WORKLOADS:-oltp_read_only}
DURATION=${DURATION:-15}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
CONFIGS=${CONFIGS:-"per-conn=--thread-handling=one-thread-per-connection pool-512=--thread-handling=pool-of-threads,--thread-pool-max-transactions-limit=512"}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
OUT=${OUT:-/tmp/tpbed-pool-vs-conn}
BASE_PORT=${BASE_PORT:-3400}
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT"
HZ=$(getconf CLK_TCK)
declare -A PORT PID
i=0
for c in $CONFIGS; do
  name=${c%%=*}; opts=${c#*=}; opts=${opts//,/ }
  port=$((BASE_PORT + i)); i=$((i + 1))
  # shellcheck disable=SC2086
  "$TPBED_BIN" --port=$port --bind-address=127.0.0.1 --max-connections=4000 --max-prepared-stmt-count=1048576 $opts 2> "$OUT/$name.log" &
  PID[$name]=$!; PORT[$name]=$port
  for _ in $(seq 1 100); do grep -q "ready for connections" "$OUT/$name.log" && break; sleep 0.1; done
  mariadb -h127.0.0.1 -P$port -uroot -e "CREATE DATABASE sbtest"
  sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root --mysql-db=sbtest \
    --tables=$TABLES --table-size=$TABLE_SIZE --threads=4 prepare > "$OUT/prepare-$name.log" 2>&1
  log "$name: pid ${PID[$name]} port $port ($opts)"
done
trap 'for p in "${PID[@]}"; do kill "$p" 2>/dev/null; done' EXIT
R=$OUT/results.tsv
echo -e "pass\tworkload\tthreads\tconfig\tqps\tavg_ms\tp95_ms\tmax_ms\tthreads_running_max\tcpu_us_per_query" > "$R"
for pass in $(seq 1 "$PASSES"); do
  for w in $WORKLOADS; do
    for t in $THREADS; do
      for c in $CONFIGS; do
        name=${c%%=*}; port=${PORT[$name]}; pid=${PID[$name]}
        c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        f="$OUT/run-$pass-$w-$t-$name.out"
        ( maxr=0; end=$((SECONDS + DURATION + 5)); while [ $SECONDS -lt $end ]; do
            r=$(mariadb -h127.0.0.1 -P$port -uroot -N -e "SHOW GLOBAL STATUS LIKE 'Threads_running'" 2>/dev/null | awk '{print $2}')
            [ -n "$r" ] && [ "$r" -gt "$maxr" ] && maxr=$r; echo "$maxr" > "$f.running"; sleep 1; done ) &
        sampler=$!
        sysbench "$w" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root --mysql-db=sbtest \
          --tables=$TABLES --table-size=$TABLE_SIZE --threads="$t" --time="$DURATION" --report-interval=0 \
          --percentile=95 --histogram=off --db-ps-mode=auto --rand-type=uniform run > "$f" 2>&1
        kill $sampler 2>/dev/null; wait $sampler 2>/dev/null
        c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
        q=$(awk '/queries:/ {print $2; exit}' "$f")
        qps=$(awk -F'[(]' '/queries:/ {split($2,a," "); print a[1]; exit}' "$f")
        avg=$(awk '/avg:/ {print $2; exit}' "$f"); p95=$(awk '/95th percentile:/ {print $3; exit}' "$f")
        max=$(awk '/max:/ {print $2; exit}' "$f"); run=$(cat "$f.running" 2>/dev/null || echo 0)
        cpu=$(awk -v a="$c0" -v b="$c1" -v q="${q:-0}" -v hz="$HZ" 'BEGIN { if (q > 0) printf "%.2f", (b - a) / hz * 1e6 / q; else print "nan" }')
        echo -e "$pass\t$w\t$t\t$name\t$qps\t$avg\t$p95\t$max\t$run\t$cpu" >> "$R"
        log "pass $pass $w t=$t $name: qps=$qps avg=$avg p95=$p95 max=$max Threads_running<=$run cpu/q=${cpu}us"
      done
    done
  done
done
python3 - "$R" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
cfgs = list(dict.fromkeys(r["config"] for r in rows))
keys = sorted({(r["workload"], int(r["threads"])) for r in rows})
med = lambda w, t, c, k: statistics.median(float(r[k]) for r in rows if r["workload"] == w and int(r["threads"]) == t and r["config"] == c)
print("| workload | threads | config | QPS | avg ms | p95 ms | max ms | Threads_running max | CPU µs/query | QPS / first | max / first |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for w, t in keys:
    for c in cfgs:
        print(f"| {w} | {t} | {c} | {med(w,t,c,'qps'):.0f} | {med(w,t,c,'avg_ms'):.2f} | {med(w,t,c,'p95_ms'):.2f} | {med(w,t,c,'max_ms'):.2f} | {med(w,t,c,'threads_running_max'):.0f} | {med(w,t,c,'cpu_us_per_query'):.1f} | {med(w,t,c,'qps')/med(w,t,cfgs[0],'qps'):.2f} | {med(w,t,c,'max_ms')/med(w,t,cfgs[0],'max_ms'):.2f} |")
PY
