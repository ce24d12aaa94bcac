#!/usr/bin/env bash
# callgrind_sysbench.sh - user-space instructions per query of tpbed-server under a sysbench
# OLTP workload (prepared statements), counted by callgrind on one table of 10,000 rows.
#
# Usage: callgrind_sysbench.sh [WORKLOAD] [EVENTS] [THREADS] [HANDLING]
#   WORKLOAD [oltp_point_select]; EVENTS [20000] sysbench events counted, after a warm-up of
#   EVENTS/5; THREADS [64] connections; HANDLING [pool-of-threads] or one-thread-per-connection.
# Environment: TPBED_BIN [target/release/tpbed-server], PORT [3397],
#   OUT [/tmp/tpbed-callgrind-sysbench]
# Prints: events, queries (the server's Questions), instructions, instructions per query; leaves
# the profile in $OUT/callgrind.out.* for `callgrind_annotate`.
# Needs: valgrind, sysbench, mariadb-client.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORKLOAD=${1:-oltp_point_select}
EVENTS=${2:-20000}
THREADS=${3:-64}
HANDLING=${4:-pool-of-threads}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
PORT=${PORT:-3397}
OUT=${OUT:-/tmp/tpbed-callgrind-sysbench}
rm -rf "$OUT"; mkdir -p "$OUT"
ulimit -n 20000

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" --separate-threads=no \
  "$TPBED_BIN" --port="$PORT" --bind-address=127.0.0.1 --max-connections=1000 \
  --thread-handling="$HANDLING" 2> "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null' EXIT
for _ in $(seq 600); do grep -q "ready for connections" "$OUT/server.log" && break; sleep 0.2; done
SQL="mariadb -h127.0.0.1 -P$PORT -uroot -N -B"
$SQL -e "CREATE DATABASE sbtest"
SB="sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root \
  --mysql-db=sbtest --tables=1 --table-size=10000"
$SB oltp_common prepare > "$OUT/prepare.log"
RUN="--threads=$THREADS --time=0 --rand-seed=7 --report-interval=0"
# shellcheck disable=SC2086
$SB "$WORKLOAD" run $RUN --events=$((EVENTS / 5)) > /dev/null
questions() { $SQL -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
Q0=$(questions)
callgrind_control -z "$VG" > /dev/null 2>&1
# shellcheck disable=SC2086
$SB "$WORKLOAD" run $RUN --events="$EVENTS" > "$OUT/run.log"
callgrind_control -d "$VG" > /dev/null 2>&1
Q1=$(questions)
sleep 1
QUERIES=$((Q1 - Q0 - 1))
IR=$(callgrind_annotate "$OUT"/callgrind.out.*.1 | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
echo "events=$EVENTS queries=$QUERIES instructions=$IR per_query=$((IR / QUERIES))"
