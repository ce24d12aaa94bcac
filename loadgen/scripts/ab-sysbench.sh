#!/usr/bin/env bash
# Two tpbed-server builds side by side in interleaved passes (A B A B ...): each pass starts
# each build in the pool (pool-of-threads) on a fresh in-memory store, prepares one sysbench
# table of 10,000 rows, and runs oltp_point_select and oltp_read_only for 15 s at 8, 256 and
# 1,024 connections. Prints one line per run: pass, build (a or b), workload, connections, QPS.
#
# Usage: ab-sysbench.sh A_SERVER_BINARY B_SERVER_BINARY [PASSES (default 2)] [PORT (default 3417)]
# Run it under `flock -o /tmp/tpbed-bench.lock` with nothing else running.
set -euo pipefail
a=$1 b=$2 passes=${3:-2} port=${4:-3417}
ulimit -n 20000
sb="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$port --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=10000"
for pass in $(seq "$passes"); do
  for which in a b; do
    bin=$a; [ "$which" = b ] && bin=$b
    "$bin" --port="$port" --thread-handling=pool-of-threads --max-connections=4000 >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 100); do mariadb -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
    mariadb -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
    $sb oltp_common prepare >/dev/null
    for conns in 8 256 1024; do
      for workload in oltp_point_select oltp_read_only; do
        qps=$($sb "$workload" run --threads="$conns" --time=15 --report-interval=0 2>&1 \
          | awk '/queries:/ { gsub("\\(", "", $3); print $3 }')
        echo "$pass $which $workload $conns $qps"
      done
    done
    kill "$server"; wait "$server" 2>/dev/null || true
  done
done
