#!/usr/bin/env bash
# Server builds side by side at one connection count, in interleaved passes (A B A B ...): each
# pass starts each build with the given thread handling on a fresh in-memory store, prepares one
# sysbench table of 10,000 rows, and runs each workload for TIME seconds. Prints one line per run:
# pass, build (a, b, c ...), thread handling, workload, connections, QPS, and the server's
# context switches per query and CPU microseconds per query during the run (`perf stat -p`).
#
# Usage: ab-sysbench-at.sh PASSES PORT THREADS HANDLING "WORKLOADS" TIME BINARY_A BINARY_B [BINARY_C ...]
#   HANDLING: pool-of-threads or one-thread-per-connection
# Run it under `flock -o /tmp/tpbed-bench.lock` with nothing else running.
set -euo pipefail
passes=$1 port=$2 threads=$3 handling=$4 workloads=$5 secs=$6
shift 6
bins=("$@")
ulimit -n 20000
sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=10000"
for pass in $(seq "$passes"); do
  for i in "${!bins[@]}"; do
    which=$(printf "\\x$(printf %x $((97 + i)))")
    "${bins[$i]}" --port="$port" --thread-handling="$handling" --max-connections=4000 >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 100); do mariadb -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
    mariadb -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
    $sb oltp_common prepare >/dev/null
    for workload in $workloads; do
      stat=$(mktemp)
      perf stat -x, -e context-switches,task-clock -p "$server" -o "$stat" &
      perf=$!
      out=$($sb "$workload" run --threads="$threads" --time="$secs" --report-interval=0 2>&1)
      kill -INT "$perf"; wait "$perf" 2>/dev/null || true
      queries=$(echo "$out" | awk '/queries:/ { print $2 }')
      qps=$(echo "$out" | awk '/queries:/ { gsub("\\(", "", $3); print $3 }')
      echo "$pass $which $handling $workload $threads $qps $(awk -F, -v q="$queries" '
        $3 == "context-switches" { cs = $1 } $3 == "task-clock" { ms = $1 }
        END { printf "%.3f %.1f", cs / q, ms * 1000 / q }' "$stat")"
      rm -f "$stat"
    done
    kill "$server"; wait "$server" 2>/dev/null || true
  done
done
