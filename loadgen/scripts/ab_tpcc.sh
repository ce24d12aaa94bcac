#!/usr/bin/env bash
# ab_tpcc.sh - `tpbed-load tpcc run` against two tpbed-server builds (A, B) and MariaDB in
# the same run, passes interleaved A B MariaDB, for each thread handling mode of tpbed.
#
# Usage: ab_tpcc.sh A_BIN B_BIN [PASSES] [SECONDS]
#   PASSES [2] per server and mode; SECONDS [20] measured per pass after a 5 s warm-up.
# Environment: LOAD_BIN [target/release/tpbed-load], PORT_A [46001], PORT_B [46002],
#   MDB_PORT [46307] (MariaDB from mariadb.sh under MDB_BASE [/tmp/mdb-ab-tpcc]),
#   MODES ["one-thread-per-connection pool-of-threads"], THREADS [8], OUT [/tmp/ab-tpcc],
#   SIZE [""] extra prepare/run options (e.g. "--test-items=2000 --test-customers=100")
# Prints one line per pass: mode, pass, server, TPS, and per pass B/MariaDB and A/MariaDB.
# Needs: mariadb-server, mariadb-client.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
A_BIN=$1; B_BIN=$2; PASSES=${3:-2}; SECONDS_PER_PASS=${4:-20}
LOAD_BIN=${LOAD_BIN:-$ROOT/target/release/tpbed-load}
PORT_A=${PORT_A:-46001}; PORT_B=${PORT_B:-46002}; MDB_PORT=${MDB_PORT:-46307}
MDB_BASE=${MDB_BASE:-/tmp/mdb-ab-tpcc}
MODES=${MODES:-"one-thread-per-connection pool-of-threads"}
THREADS=${THREADS:-8}
SIZE=${SIZE:-}
OUT=${OUT:-/tmp/ab-tpcc}
rm -rf "$OUT"; mkdir -p "$OUT"

PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null || true; done
  "$HERE/mariadb.sh" stop "$MDB_BASE" > /dev/null 2>&1 || true
}
trap cleanup EXIT

start_tpbed() { # BIN PORT MODE LOG -> pid
  "$1" --port="$2" --bind-address=127.0.0.1 --max-connections=200 --thread-handling="$3" \
    > /dev/null 2> "$4" &
  local pid=$!
  for _ in $(seq 300); do grep -q "ready for connections" "$4" && break; sleep 0.2; done
  mariadb -h127.0.0.1 -P"$2" -uroot -e \
    "CREATE DATABASE sbtest; CREATE USER 'sbtest'@'%' IDENTIFIED BY 'sbtest'; GRANT ALL ON *.* TO 'sbtest'@'%'" >&2
  echo "$pid"
}
prepare() { # PORT
  # shellcheck disable=SC2086
  "$LOAD_BIN" tpcc prepare --warehouses=1 $SIZE --threads=2 --mysql-port="$1" \
    --mysql-password=sbtest > "$OUT/prepare.$1.log"
}
run_pass() { # PORT LOG -> TPS
  # shellcheck disable=SC2086
  "$LOAD_BIN" tpcc run --warehouses=1 $SIZE --threads="$THREADS" --time="$SECONDS_PER_PASS" \
    --warmup-time=5 --mysql-port="$1" --mysql-password=sbtest > "$2"
  awk '/transactions:/{gsub(/[()]/, "", $3); print $3; exit}' "$2"
}

"$HERE/mariadb.sh" start "$MDB_BASE" "$MDB_PORT" > /dev/null
for _ in $(seq 300); do mariadb -h127.0.0.1 -P"$MDB_PORT" -usbtest -psbtest -e "SELECT 1" \
  > /dev/null 2>&1 && break; sleep 0.2; done
prepare "$MDB_PORT"
for mode in $MODES; do
  PA=$(start_tpbed "$A_BIN" "$PORT_A" "$mode" "$OUT/a.$mode.log")
  PB=$(start_tpbed "$B_BIN" "$PORT_B" "$mode" "$OUT/b.$mode.log")
  PIDS="$PA $PB"
  prepare "$PORT_A"; prepare "$PORT_B"
  for pass in $(seq "$PASSES"); do
    ta=$(run_pass "$PORT_A" "$OUT/run.a.$mode.$pass.log")
    tb=$(run_pass "$PORT_B" "$OUT/run.b.$mode.$pass.log")
    tm=$(run_pass "$MDB_PORT" "$OUT/run.m.$mode.$pass.log")
    echo "$mode pass=$pass A=$ta B=$tb MariaDB=$tm" \
      "A/MariaDB=$(echo "scale=3; $ta / $tm" | bc) B/MariaDB=$(echo "scale=3; $tb / $tm" | bc)"
  done
  kill "$PA" "$PB"; wait "$PA" "$PB" 2>/dev/null || true
  PIDS=""
done
