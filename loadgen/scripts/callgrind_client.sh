#!/usr/bin/env bash
# callgrind_client.sh - user-space instructions per query of the client itself (tpbed-load, and
# sysbench for reference) against a private MariaDB, counted by callgrind: the client's own
# work, which CPU time per query (mostly the kernel's send, receive and wake-ups, and moved by
# whatever else the machine runs) does not resolve.
#
# Usage: callgrind_client.sh [OUT_DIR]
# Environment: WORKLOADS ["oltp_point_select oltp_read_only"]  THREADS [8]
#   EVENTS ["2000 6000"]: two runs per client and workload; instructions per query is the
#   difference of their totals over the difference of their queries, so connecting,
#   preparing, start-up and exit cancel out
#   LOAD [target/release/tpbed-load]  LOAD2 [""]: a second tpbed-load build, counted the same way
#   SYSBENCH [1]: 0 leaves sysbench out   PORT [3397]
# Prints one line per client and workload: queries and instructions of each run, and
# instructions per query. Work done per second rather than per query (tpbed-load merges its
# interval histograms once a second) is counted too, and valgrind's slowdown (~50x) inflates
# it: compare builds by function with `callgrind_annotate` on the two profiles left in OUT_DIR.
# Needs valgrind, sysbench, mariadbd (Debian's package).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/tpbed-load-callgrind}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}; THREADS=${THREADS:-8}
EVENTS=${EVENTS:-"2000 6000"}; PORT=${PORT:-3397}; SYSBENCH=${SYSBENCH:-1}
LOAD=${LOAD:-$HERE/../../target/release/tpbed-load}; LOAD2=${LOAD2:-}
BASE=/tmp/tpbed-load-callgrind-mdb
rm -rf "$OUT"; mkdir -p "$OUT"
trap '"$HERE/mariadb.sh" stop "$BASE"' EXIT
"$HERE/mariadb.sh" start "$BASE" "$PORT" > /dev/null
CONN="--mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest"
DATA="--tables=4 --table-size=10000"
"$LOAD" prepare $CONN $DATA --threads=4 > "$OUT/prepare.log"
RUN="--threads=$THREADS --time=0 --report-interval=0 --db-ps-mode=auto --rand-type=uniform"
count() { # count FILE_PREFIX COMMAND...: prints "queries instructions"
  local f=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$f.cg" "$@" > "$f.out" 2> "$f.vg"
  echo "$(awk '/queries:/{print $2; exit}' "$f.out") $(callgrind_annotate "$f.cg" | awk '/PROGRAM TOTALS/{gsub(",", "", $1); print $1}')"
}
clients=("tpbed-load|$LOAD run --no-gauges")
[ -n "$LOAD2" ] && clients+=("tpbed-load (LOAD2)|$LOAD2 run --no-gauges")
[ "$SYSBENCH" = 1 ] && clients+=("sysbench|sysbench --db-driver=mysql")
for w in $WORKLOADS; do
  for c in "${clients[@]}"; do
    name=${c%%|*}; cmd=${c#*|}; line="$w $name:"; q0=; i0=
    for n in $EVENTS; do
      f="$OUT/$w-$(echo "$name" | tr -c 'a-zA-Z0-9\n' _)-$n"
      if [ "$name" = sysbench ]; then
        # shellcheck disable=SC2086
        read -r q i < <(count "$f" $cmd "$w" $CONN $DATA $RUN --events="$n" run)
      else
        # shellcheck disable=SC2086
        read -r q i < <(count "$f" $cmd --workload="$w" $CONN $DATA $RUN --events="$n")
      fi
      line="$line queries=$q instructions=$i"
      if [ -n "$q0" ]; then line="$line per_query=$(( (i - i0) / (q - q0) ))"; fi
      q0=$q; i0=$i
    done
    echo "$line"
  done
done
