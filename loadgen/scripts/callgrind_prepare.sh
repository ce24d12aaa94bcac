#!/usr/bin/env bash
# callgrind_prepare.sh - user-space instructions per row of tpbed-server under
# `sysbench oltp_common prepare`, counted by callgrind in two phases: the INSERT phase
# (CREATE TABLE and the multi-row INSERTs, run as `prepare --create_secondary=off`) and the
# CREATE INDEX phase (the `CREATE INDEX k_1 ON sbtest1(k)` that prepare sends last, sent
# alone afterwards), on 1 table of ROWS rows loaded by 1 thread.
#
# Usage: callgrind_prepare.sh [ROWS]
#   ROWS [100000] rows in sbtest1.
# Environment: TPBED_BIN [target/release/tpbed-server], PORT [3398],
#   OUT [/tmp/tpbed-callgrind-prepare], TOP [25] functions listed per phase.
# Prints: instructions and instructions per row of each phase, then each phase's top
#   functions by inclusive instructions; leaves the profiles in $OUT/insert.out and
#   $OUT/index.out for `callgrind_annotate`.
# Needs: valgrind, sysbench, mariadb-client.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ROWS=${1:-100000}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
PORT=${PORT:-3398}
OUT=${OUT:-/tmp/tpbed-callgrind-prepare}
TOP=${TOP:-25}
rm -rf "$OUT"; mkdir -p "$OUT/data"

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" --separate-threads=no \
  "$TPBED_BIN" --port="$PORT" --bind-address=127.0.0.1 --skip-log-bin \
  --datadir="$OUT/data" --max-connections=100 2> "$OUT/server.log" &
VG=$!
trap 'kill $VG 2>/dev/null' EXIT
for _ in $(seq 600); do grep -q "ready for connections" "$OUT/server.log" && break; sleep 0.2; done
SQL="mariadb -h127.0.0.1 -P$PORT -uroot -N -B"
$SQL -e "CREATE DATABASE sbtest"
SB="sysbench oltp_common --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT
  --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=$ROWS --threads=1"

# Each dump writes callgrind.out.PID.N and zeroes the counters.
dump() { # NAME
  callgrind_control -d "$VG" > /dev/null 2>&1
  local f
  for _ in $(seq 100); do
    f=$(ls -t "$OUT"/callgrind.out.*.* 2>/dev/null | head -1 || true)
    [ -n "$f" ] && [ "$f" != "${LAST:-}" ] && break
    sleep 0.2
  done
  LAST=$f
  sleep 1 # the dump is written while callgrind_control returns
  cp "$f" "$OUT/$1.out"
}

callgrind_control -z "$VG" > /dev/null 2>&1
$SB --create_secondary=off prepare > "$OUT/prepare.log"
dump insert
$SQL -e "CREATE INDEX k_1 ON sbtest.sbtest1(k)"
dump index
[ "$($SQL -e 'SELECT COUNT(*) FROM sbtest.sbtest1')" = "$ROWS" ] || { echo "row count differs" >&2; exit 1; }

total() { callgrind_annotate "$1" | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}'; }
for phase in insert index; do
  ir=$(total "$OUT/$phase.out")
  echo "$phase: rows=$ROWS instructions=$ir per_row=$((ir / ROWS))"
done
for phase in insert index; do
  echo
  echo "== $phase: top $TOP functions by inclusive instructions"
  callgrind_annotate --inclusive=yes "$OUT/$phase.out" 2>/dev/null \
    | awk '/^-+$/{n++} n>=4' | grep -v '^-' | sed '/^$/d' | head -"$TOP"
done
