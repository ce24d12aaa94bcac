#!/usr/bin/env bash
# ab-prepare.sh - wall time and RSS of `sysbench oltp_common prepare` (4 tables, 4 threads)
# on two tpbed-server builds, interleaved A B A B ..., each run on a fresh server without a
# binary log; with MARIADB=1 a private MariaDB (loadgen/scripts/mariadb.sh) runs after each
# pair. Prints one line per run:
#   pass server seconds rss_bytes_after_settle rss_per_row
# where RSS is the server's VmRSS SETTLE seconds (default 10) after `prepare` returned.
#
# Usage: ab-prepare.sh A_BINARY B_BINARY [TABLE_SIZE (default 250000)] [PORT (default 3439)] [PASSES (default 2)]
# Run it under `flock -o /tmp/tpbed-bench.lock` with nothing else running.
set -euo pipefail
a=$1 b=$2 size=${3:-250000} port=${4:-3439} passes=${5:-2}
settle=${SETTLE:-10}
here=$(cd "$(dirname "$0")" && pwd)
mdb_base=/tmp/ab-prepare-mdb
rows=$((4 * size))
ulimit -n 20000

prepare() { # PORT USER PASSWORD -> seconds
  local start end
  start=$(date +%s.%N)
  sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" \
    --mysql-user="$2" ${3:+--mysql-password="$3"} --mysql-db=sbtest \
    --tables=4 --table-size="$size" --threads=4 prepare >/dev/null
  end=$(date +%s.%N)
  printf "%.2f" "$(echo "$end - $start" | bc)"
}

rss_of() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }

run_tpbed() { # PASS NAME BINARY
  local datadir server secs rss
  datadir=$(mktemp -d /tmp/ab-prepare-tpbed.XXXXXX)
  "$3" --port="$port" --bind-address=127.0.0.1 --skip-log-bin --datadir="$datadir" \
    --max-connections=1000 >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 100); do mariadb -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
  secs=$(prepare "$port" root "")
  sleep "$settle"
  rss=$(rss_of "$server")
  echo "$1 $2 $secs $rss $((rss / rows))"
  kill "$server"; wait "$server" 2>/dev/null || true
  rm -rf "$datadir"
}

for pass in $(seq "$passes"); do
  run_tpbed "$pass" A "$a"
  run_tpbed "$pass" B "$b"
  if [ "${MARIADB:-0}" = 1 ]; then
    "$here/mariadb.sh" start "$mdb_base" $((port + 1)) >/dev/null
    mpid=$(cat "$mdb_base/started.pid")
    for _ in $(seq 100); do mariadb -h127.0.0.1 -P$((port + 1)) -usbtest -psbtest -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
    secs=$(prepare $((port + 1)) sbtest sbtest)
    sleep "$settle"
    rss=$(rss_of "$mpid")
    echo "$pass mariadb $secs $rss $((rss / rows))"
    "$here/mariadb.sh" stop "$mdb_base" >/dev/null
  fi
done
