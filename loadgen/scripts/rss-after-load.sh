#!/usr/bin/env bash
# rss-after-load.sh - tpbed-server's resident memory after a sysbench `oltp_common prepare` of
# 4 tables, once purge has settled, and again after the tables are dropped, on a fresh server
# without a binary log. Prints one line:
#   handling rows prepare_seconds loaded_rss loaded_anon loaded_file data_bytes index_bytes
#   dropped_anon
# (RSS figures in KiB from /proc/PID/status; data and index bytes are the sums of
# information_schema.TABLES' DATA_LENGTH and INDEX_LENGTH over the sbtest tables).
#
# Usage: rss-after-load.sh TPBED_SERVER_BINARY [TABLE_SIZE (250000)] [HANDLING
#   (one-thread-per-connection)] [PORT (3438)]
# Environment: SETTLE seconds between `prepare` returning and the reading (default 15).
# Run it under `flock -o /tmp/tpbed-bench.lock` with nothing else running.
set -euo pipefail
bin=$1 size=${2:-250000} handling=${3:-one-thread-per-connection} port=${4:-3438}
settle=${SETTLE:-15}
ulimit -n 20000
datadir=$(mktemp -d /tmp/rss-after-load.XXXXXX)
"$bin" --port="$port" --skip-log-bin --datadir="$datadir" --max-connections=1000 \
  --thread-handling="$handling" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$datadir"' EXIT
sql() { mariadb -h127.0.0.1 -P"$port" -uroot -N -e "$1"; }
for _ in $(seq 100); do sql 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
status() { awk -v k="$1" '$1 == k ":" { print $2 }' "/proc/$server/status"; }
sql 'CREATE DATABASE sbtest'
start=$(date +%s.%N)
sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" \
  --mysql-user=root --mysql-db=sbtest --tables=4 --table-size="$size" --threads=4 \
  prepare >/dev/null
end=$(date +%s.%N)
sleep "$settle"
loaded="$(status VmRSS) $(status RssAnon) $(status RssFile)"
read -r data index < <(sql "SELECT SUM(DATA_LENGTH), SUM(INDEX_LENGTH) FROM
  information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'")
sql 'DROP DATABASE sbtest'
sleep "$settle"
printf '%s %d %.2f %s %s %s %s\n' "$handling" $((4 * size)) "$(echo "$end - $start" | bc)" \
  "$loaded" "$data" "$index" "$(status RssAnon)"
