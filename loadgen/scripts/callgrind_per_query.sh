#!/usr/bin/env bash
# callgrind_per_query.sh - user-space instructions per query of tpbed-server under real
# sysbench, counted by callgrind: a measure of the server's own work that does not move with
# what else the machine runs (CPU time per query does, by a third here).
#
# Usage: callgrind_per_query.sh [WORKLOAD] [EVENTS]
#   WORKLOAD [oltp_point_select]; EVENTS [2000] sysbench events after a warm-up of EVENTS/10
#   (a read-only event is a 16-query transaction: 300 is enough).
# Environment: TPBED_BIN [target/release/tpbed-server], PORT [3395], OUT [/tmp/tpbed-callgrind]
# Prints: workload, queries, instructions, instructions per query; leaves the profile in
# $OUT/callgrind.out.*.1 for `callgrind_annotate --inclusive=yes`.
# Needs: valgrind, sysbench, mariadb-client.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WL=${1:-oltp_point_select}
EVENTS=${2:-2000}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
PORT=${PORT:-3395}
OUT=${OUT:-/tmp/tpbed-callgrind}
rm -rf "$OUT"; mkdir -p "$OUT"

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" --separate-threads=no \
  "$TPBED_BIN" --port="$PORT" --bind-address=127.0.0.1 --max-connections=100 2> "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null' EXIT
for _ in $(seq 600); do grep -q "ready for connections" "$OUT/server.log" && break; sleep 0.2; done
mariadb -h127.0.0.1 -P"$PORT" -uroot -e "CREATE DATABASE sbtest; CREATE USER 'sbtest'@'%' IDENTIFIED WITH mysql_native_password BY 'sbtest'; GRANT ALL ON *.* TO 'sbtest'@'%'"
SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest --tables=1 --table-size=10000"
RUN="--threads=2 --time=0 --db-ps-mode=auto --rand-type=uniform"
# shellcheck disable=SC2086
sysbench oltp_read_only $SB --threads=1 prepare > /dev/null
# shellcheck disable=SC2086
sysbench "$WL" $SB $RUN --events=$((EVENTS / 10)) run > /dev/null
callgrind_control -z "$VG" > /dev/null 2>&1
# shellcheck disable=SC2086
sysbench "$WL" $SB $RUN --events="$EVENTS" run > "$OUT/run.log"
callgrind_control -d "$VG" > /dev/null 2>&1
sleep 1
QUERIES=$(awk '/queries:/{print $2; exit}' "$OUT/run.log")
IR=$(callgrind_annotate "$OUT"/callgrind.out.*.1 | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
echo "$WL queries=$QUERIES instructions=$IR per_query=$((IR / QUERIES))"
