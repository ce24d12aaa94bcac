#!/usr/bin/env bash
# callgrind_tpcc.sh - user-space instructions per statement of tpbed-server under
# `tpbed-load tpcc run` (text statements), counted by callgrind on a small TPC-C database
# (1 warehouse, 2,000 items, 100 customers per district: the same statements as a full one).
#
# Usage: callgrind_tpcc.sh [EVENTS] [THREADS]
#   EVENTS [600] transactions counted, after a warm-up of EVENTS/5; THREADS [8] connections.
# Environment: TPBED_BIN [target/release/tpbed-server], LOAD_BIN [target/release/tpbed-load],
#   PORT [3396], OUT [/tmp/tpbed-callgrind-tpcc]
# Prints: transactions, statements (the server's Questions), instructions, instructions per
# statement; leaves the profile in $OUT/callgrind.out.* for `callgrind_annotate`.
# Needs: valgrind, mariadb-client.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
EVENTS=${1:-600}
THREADS=${2:-8}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
LOAD_BIN=${LOAD_BIN:-$ROOT/target/release/tpbed-load}
PORT=${PORT:-3396}
OUT=${OUT:-/tmp/tpbed-callgrind-tpcc}
rm -rf "$OUT"; mkdir -p "$OUT"

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" --separate-threads=no \
  "$TPBED_BIN" --port="$PORT" --bind-address=127.0.0.1 --max-connections=100 2> "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null' EXIT
for _ in $(seq 600); do grep -q "ready for connections" "$OUT/server.log" && break; sleep 0.2; done
SQL="mariadb -h127.0.0.1 -P$PORT -uroot -N -B"
$SQL -e "CREATE DATABASE sbtest; CREATE USER 'sbtest'@'%'; GRANT ALL ON *.* TO 'sbtest'@'%'"
SMALL="--warehouses=1 --test-items=2000 --test-customers=100 --mysql-port=$PORT"
# shellcheck disable=SC2086
"$LOAD_BIN" tpcc prepare $SMALL --threads=2 > "$OUT/prepare.log"
RUN="--threads=$THREADS --time=0 --rand-seed=7"
# shellcheck disable=SC2086
"$LOAD_BIN" tpcc run $SMALL $RUN --events=$((EVENTS / 5)) > /dev/null
questions() { $SQL -e "SHOW GLOBAL STATUS LIKE 'Questions'" | awk '{print $2}'; }
Q0=$(questions)
callgrind_control -z "$VG" > /dev/null 2>&1
# shellcheck disable=SC2086
"$LOAD_BIN" tpcc run $SMALL $RUN --events="$EVENTS" > "$OUT/run.log"
callgrind_control -d "$VG" > /dev/null 2>&1
Q1=$(questions)
sleep 1
STMTS=$((Q1 - Q0 - 1))
IR=$(callgrind_annotate "$OUT"/callgrind.out.*.1 | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')
echo "transactions=$EVENTS statements=$STMTS instructions=$IR per_statement=$((IR / STMTS))"
