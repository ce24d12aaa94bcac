#!/usr/bin/env bash
# server_vs_mariadb.sh - real sysbench against tpbed-server and MariaDB (Debian package) on
# this machine, side by side in interleaved passes, client on the same cores as the servers.
#
# For each pass, workload and thread count it runs tpbed then MariaDB (A B A B ...), and
# records QPS, average and p95 latency, and the server's CPU time per query
# (utime+stime from /proc/PID/stat over the run / queries). Prints a Markdown table of
# medians at the end.
#
# Environment (defaults in brackets):
#   PASSES [3]  THREADS ["8 64"]  WORKLOADS ["oltp_point_select oltp_read_only"]
#   DURATION [15]  TABLES [4]  TABLE_SIZE [100000]
#   TPBED_ARGS [""] extra tpbed-server options; MARIADB_HANDLING [one-thread-per-connection]
#   SERVERS ["tpbed mariadb"]   OUT [/tmp/tpbed-vs-mariadb]
#   RUN_LOCK [""]  a file to flock around each sysbench run (e.g. /work/bench.lock), so the
#     run shares a machine's benchmark lock run by run; the 1-minute load average before each
#     run is recorded either way
# Needs: sysbench, mariadb-server, mariadb-client; a release build of tpbed-server
# (cargo build --release -p tpbed-server). Servers listen on 127.0.0.1 only.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PASSES=${PASSES:-3}
THREADS=${THREADS:-"8 64"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only"}
DURATION=${DURATION:-15}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
TPBED_ARGS=${TPBED_ARGS:-}
MARIADB_HANDLING=${MARIADB_HANDLING:-one-thread-per-connection}
SERVERS=${SERVERS:-"tpbed mariadb"}
OUT=${OUT:-/tmp/tpbed-vs-mariadb}
RUN_LOCK=${RUN_LOCK:-}
TPBED_BIN=${TPBED_BIN:-$ROOT/target/release/tpbed-server}
MDB_PORT=${MDB_PORT:-3391}
TP_PORT=${TP_PORT:-3392}

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }
ulimit -n "$(ulimit -Hn)"
mkdir -p "$OUT"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

MDB_PID=""; TP_PID=""
cleanup() {
  [ -n "$TP_PID" ] && kill "$TP_PID" 2>/dev/null
  [ -n "$MDB_PID" ] && "$HERE/mariadb.sh" stop "$OUT/mdb"
}
trap cleanup EXIT

start_mariadb() {
  # The settings of shared/tools/mariadb_bench.sh's baseline: 2G buffer pool, 4000 connections.
  MDB_PID=$(BUFFER_POOL=2G MAX_CONNECTIONS=4000 "$HERE/mariadb.sh" start "$OUT/mdb" "$MDB_PORT" "$MARIADB_HANDLING") \
    || { log "mariadbd did not start"; exit 1; }
  log "mariadbd pid $MDB_PID ($(mariadbd --version | head -1))"
}

start_tpbed() {
  # shellcheck disable=SC2086
  "$TPBED_BIN" --port=$TP_PORT --bind-address=127.0.0.1 --max-connections=4000 \
    --max-prepared-stmt-count=1048576 $TPBED_ARGS 2> "$OUT/tpbed.log" &
  TP_PID=$!
  for _ in $(seq 1 100); do grep -q "ready for connections" "$OUT/tpbed.log" && break; sleep 0.1; done
  mariadb -h127.0.0.1 -P$TP_PORT -uroot -e "CREATE DATABASE sbtest; CREATE USER 'sbtest'@'%' IDENTIFIED WITH mysql_native_password BY 'sbtest'; GRANT ALL ON *.* TO 'sbtest'@'%'"
  log "tpbed-server pid $TP_PID ($TPBED_ARGS)"
}

conn() { # $1 = server
  if [ "$1" = tpbed ]; then echo "--mysql-port=$TP_PORT"; else echo "--mysql-port=$MDB_PORT"; fi
}
pid_of() { if [ "$1" = tpbed ]; then echo "$TP_PID"; else echo "$MDB_PID"; fi; }

SB="--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=sbtest --mysql-password=sbtest --mysql-db=sbtest --tables=$TABLES --table-size=$TABLE_SIZE"
for s in $SERVERS; do
  [ "$s" = tpbed ] && start_tpbed
  [ "$s" = mariadb ] && start_mariadb
  log "prepare $s"
  # shellcheck disable=SC2046
  sysbench oltp_read_only $SB $(conn "$s") --threads=4 prepare > "$OUT/prepare-$s.log" 2>&1 || { log "prepare failed on $s"; tail "$OUT/prepare-$s.log"; exit 1; }
  # shellcheck disable=SC2046
  sysbench oltp_read_only $SB $(conn "$s") --threads=4 prewarm > "$OUT/prewarm-$s.log" 2>&1 || log "prewarm failed on $s"
done

RESULTS=$OUT/results.tsv
echo -e "pass\tworkload\tthreads\tserver\tqps\tavg_ms\tp95_ms\tcpu_us_per_query\terrors\tload1" > "$RESULTS"
for pass in $(seq 1 "$PASSES"); do
  for w in $WORKLOADS; do
    for t in $THREADS; do
      for s in $SERVERS; do
        pid=$(pid_of "$s")
        if [ -n "$RUN_LOCK" ]; then exec 9>>"$RUN_LOCK"; flock 9; fi
        load1=$(cut -d' ' -f1 /proc/loadavg)
        c0=$(cpu_ticks "$pid")
        f="$OUT/run-$pass-$w-$t-$s.out"
        # shellcheck disable=SC2046
        sysbench "$w" $SB $(conn "$s") --threads="$t" --time="$DURATION" --report-interval=0 \
          --percentile=95 --histogram=off --db-ps-mode=auto --rand-type=uniform run > "$f" 2>&1
        c1=$(cpu_ticks "$pid")
        if [ -n "$RUN_LOCK" ]; then flock -u 9; exec 9>&-; fi
        q=$(awk '/queries:/ {print $2; exit}' "$f")
        qps=$(awk -F'[(]' '/queries:/ {split($2,a," "); print a[1]; exit}' "$f")
        avg=$(awk '/avg:/ {print $2; exit}' "$f")
        p95=$(awk '/95th percentile:/ {print $3; exit}' "$f")
        err=$(awk '/ignored errors:/ {print $3; exit}' "$f")
        cpu=$(awk -v a="$c0" -v b="$c1" -v q="${q:-0}" -v hz="$HZ" 'BEGIN { if (q > 0) printf "%.2f", (b - a) / hz * 1e6 / q; else print "nan" }')
        echo -e "$pass\t$w\t$t\t$s\t$qps\t$avg\t$p95\t$cpu\t$err\t$load1" >> "$RESULTS"
        log "pass $pass $w t=$t $s: qps=$qps avg=${avg}ms p95=${p95}ms cpu/query=${cpu}us load1=$load1"
      done
    done
  done
done

python3 - "$RESULTS" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
keys = sorted({(r["workload"], int(r["threads"])) for r in rows})
servers = sorted({r["server"] for r in rows}, key=lambda s: s != "tpbed")
def med(w, t, s, col):
    v = [float(r[col]) for r in rows if r["workload"] == w and int(r["threads"]) == t and r["server"] == s and r[col] not in ("", "nan")]
    return statistics.median(v) if v else float("nan")
hdr = "| workload | threads | " + " | ".join(f"{s} QPS | {s} avg ms | {s} p95 ms | {s} CPU µs/query" for s in servers)
if len(servers) == 2: hdr += " | QPS ratio | ratio per pass"
hdr += " | load1 |"
print(hdr); print("|" + "---|" * (hdr.count("|") - 1))
for w, t in keys:
    cells = []
    for s in servers:
        cells += [f"{med(w,t,s,'qps'):.0f}", f"{med(w,t,s,'avg_ms'):.2f}", f"{med(w,t,s,'p95_ms'):.2f}", f"{med(w,t,s,'cpu_us_per_query'):.1f}"]
    line = f"| {w} | {t} | " + " | ".join(cells)
    if len(servers) == 2:
        line += f" | {med(w,t,servers[0],'qps')/med(w,t,servers[1],'qps'):.2f} | "
        per = {}
        for r in rows:
            if r["workload"] == w and int(r["threads"]) == t and r["qps"]:
                per.setdefault(r["pass"], {})[r["server"]] = float(r["qps"])
        line += ", ".join(f"{p[servers[0]]/p[servers[1]]:.2f}" for _, p in sorted(per.items(), key=lambda kv: int(kv[0])) if len(p) == 2)
    loads = [float(r["load1"]) for r in rows if r["workload"] == w and int(r["threads"]) == t and r["load1"]]
    line += f" | {min(loads):.0f}–{max(loads):.0f} |" if loads else " | – |"
    print(line)
PY
