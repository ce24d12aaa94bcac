#!/usr/bin/env bash
# prepare-scaling.sh - sysbench `oltp_common prepare` of 4 tables at growing sizes on
# tpbed-server and on a private MariaDB, one after the other per size (tpbed, MariaDB), each
# on a fresh server without a binary log. Prints one line per run:
#   server rows seconds rss_bytes_after_settle data_bytes index_bytes
# where data and index bytes are the sums of information_schema.TABLES' DATA_LENGTH and
# INDEX_LENGTH over the sbtest tables, and RSS is read SETTLE seconds (default 15) after
# `prepare` returned, once purge has had time to give memory back.
#
# Usage: prepare-scaling.sh TPBED_SERVER_BINARY [TABLE_SIZES (default "250000 1000000 4000000")] [PORT (default 3437)]
# Run it under `flock -o /tmp/tpbed-bench.lock` with nothing else running; MariaDB gets
# BUFFER_POOL (default 8G) so the largest size fits in memory, as tpbed's does.
set -euo pipefail
bin=$1 sizes=${2:-"250000 1000000 4000000"} port=${3:-3437}
settle=${SETTLE:-15}
here=$(cd "$(dirname "$0")" && pwd)
mdb_base=/tmp/prepare-scaling-mdb
ulimit -n 20000

sizes_of() { # PORT USER PASSWORD -> "data index"
  mariadb -h127.0.0.1 -P"$1" -u"$2" ${3:+-p"$3"} -N -e \
    "SELECT SUM(DATA_LENGTH), SUM(INDEX_LENGTH) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'"
}

prepare() { # PORT USER PASSWORD SIZE -> seconds
  local start end
  start=$(date +%s.%N)
  sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" \
    --mysql-user="$2" ${3:+--mysql-password="$3"} --mysql-db=sbtest \
    --tables=4 --table-size="$4" --threads=4 prepare >/dev/null
  end=$(date +%s.%N)
  printf "%.2f" "$(echo "$end - $start" | bc)"
}

rss_of() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }

for size in $sizes; do
  rows=$((4 * size))
  datadir=$(mktemp -d /tmp/prepare-scaling-tpbed.XXXXXX)
  "$bin" --port="$port" --skip-log-bin --datadir="$datadir" --max-connections=1000 >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 100); do mariadb -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
  secs=$(prepare "$port" root "" "$size")
  sleep "$settle"
  read -r data index < <(sizes_of "$port" root "")
  echo "tpbed $rows $secs $(rss_of "$server") $data $index"
  kill "$server"; wait "$server" 2>/dev/null || true
  rm -rf "$datadir"

  BUFFER_POOL=${BUFFER_POOL:-8G} "$here/mariadb.sh" start "$mdb_base" $((port + 1)) >/dev/null
  mpid=$(cat "$mdb_base/started.pid")
  secs=$(prepare $((port + 1)) sbtest sbtest "$size")
  sleep "$settle"
  read -r data index < <(sizes_of $((port + 1)) sbtest sbtest)
  echo "mariadb $rows $secs $(rss_of "$mpid") $data $index"
  "$here/mariadb.sh" stop "$mdb_base" >/dev/null
done
